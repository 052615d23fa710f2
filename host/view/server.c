/* The viewer's HTTP server: libmicrohttpd in its external-polling mode, so
 * every request is handled on the caller's thread, one at a time. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "app_assets.h"
#include "server.h"

#define MAX_BODY (1u << 20) /* a POST larger than 1 MB is refused: labels are small */

/* Every answer forbids what the app never needs: scripts, styles, images
 * and requests come from this server only; no frame, form or base URL. */
static const char CSP[] =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct upload {
  char *buf;
  size_t len, cap;
  int too_big;
};

static void add_headers(struct MHD_Response *r, const char *type) {
  MHD_add_response_header(r, "Content-Type", type);
  MHD_add_response_header(r, "Content-Security-Policy", CSP);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(r, "X-Frame-Options", "DENY");
  MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
  MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result reply_with(struct MHD_Connection *c, unsigned status, const char *type, const void *body,
                            size_t len, const char *cookie) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  add_headers(r, type);
  if (cookie) MHD_add_response_header(r, "Set-Cookie", cookie);
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text) {
  return reply_with(c, status, "text/plain; charset=utf-8", text, strlen(text), NULL);
}

/* Appends a chunk of a POST body; past MAX_BODY the rest is dropped and the
 * request refused when it ends. */
static void take_chunk(struct upload *u, const char *data, size_t n) {
  if (u->too_big || n > MAX_BODY - u->len) {
    u->too_big = 1;
    return;
  }
  if (u->len + n > u->cap) {
    size_t cap = u->cap ? u->cap : 4096;
    while (cap < u->len + n) cap *= 2;
    char *b = realloc(u->buf, cap);
    if (!b) {
      u->too_big = 1;
      return;
    }
    u->buf = b;
    u->cap = cap;
  }
  memcpy(u->buf + u->len, data, n);
  u->len += n;
}

/* The token this request carries: in its URL (?token=), in the header the
 * app sends, or in the cookie a first visit with the token set. A POST
 * counts only the header, which no page of another site can set. */
static int has_token(const struct view_server *s, struct MHD_Connection *c, int post, int *from_url) {
  *from_url = 0;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Evalua-Token");
  if (view_token_equal(s->token, h)) return 1;
  if (post) return 0;
  if (view_token_equal(s->token, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"))) {
    *from_url = 1;
    return 1;
  }
  char cookie[VIEW_TOKEN_LEN + 1];
  return view_cookie_token(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Cookie"), s->port, cookie) &&
         view_token_equal(s->token, cookie);
}

static enum MHD_Result serve_asset(const struct view_server *s, struct MHD_Connection *c, const char *url,
                                   int from_url) {
  const struct evalua_view_asset *a = evalua_view_asset(url);
  if (!a) return send_text(c, MHD_HTTP_NOT_FOUND, "404: no such page\n");
  char cookie[128];
  if (from_url)
    snprintf(cookie, sizeof cookie, "evalua_token_%u=%s; Path=/; HttpOnly; SameSite=Strict", s->port, s->token);
  return reply_with(c, MHD_HTTP_OK, a->type, a->data, a->len, from_url ? cookie : NULL);
}

static enum MHD_Result answer(struct view_server *s, struct MHD_Connection *c, const char *url,
                              const char *method, struct upload *u) {
  if (!view_host_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"), s->port))
    return send_text(c, MHD_HTTP_FORBIDDEN, "403: this server answers to 127.0.0.1 only\n");
  int post = strcmp(method, "POST") == 0;
  if (!post && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405: GET and POST only\n");
  int from_url;
  if (!has_token(s, c, post, &from_url))
    return send_text(c, MHD_HTTP_FORBIDDEN, post ? "403: a POST needs the viewer's token in X-Evalua-Token\n"
                                                 : "403: open the URL with the token that evalua view printed\n");
  if (u->too_big) return send_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "413: a request body is at most 1 MB\n");
  if (strncmp(url, "/api/", 5) != 0) {
    if (post) return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405: POST goes to /api/ only\n");
    return serve_asset(s, c, url, from_url);
  }
  struct view_request req = {c, method, url, post ? (u->buf ? u->buf : "") : NULL, u->len};
  struct view_reply rep = {500, "text/plain; charset=utf-8", "500: no answer\n", 15};
  s->api(s->ctx, &req, &rep);
  s->answered++;
  return reply_with(c, (unsigned)rep.status, rep.type, rep.body, rep.len, NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *data, size_t *data_size, void **con_cls) {
  (void)version;
  struct upload *u = *con_cls;
  if (!u) { /* the headers: the body, if any, comes in later calls */
    u = calloc(1, sizeof *u);
    if (!u) return MHD_NO;
    *con_cls = u;
    return MHD_YES;
  }
  if (*data_size) {
    take_chunk(u, data, *data_size);
    *data_size = 0;
    return MHD_YES;
  }
  return answer(cls, c, url, method, u);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
  (void)cls, (void)c, (void)why;
  struct upload *u = *con_cls;
  if (u) free(u->buf);
  free(u);
  *con_cls = NULL;
}

int view_server_start(struct view_server *s, unsigned port) {
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  s->daemon = MHD_start_daemon(MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL, on_request, s,
                               MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                               MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
                               MHD_OPTION_CONNECTION_LIMIT, 64u,
                               MHD_OPTION_CONNECTION_TIMEOUT, 60u,
                               MHD_OPTION_END);
  if (!s->daemon) {
    if (!errno) errno = EADDRINUSE;
    return -1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
  s->port = info ? info->port : port;
  return 0;
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Serves until *stop; the idle work runs once no request came for VIEW_IDLE_MS (the app's first
 * page is a burst of requests: they are answered before it), or VIEW_IDLE_MAX_MS after the first
 * request was answered (a first request may build a run's table for seconds); again every turn
 * while it says it has more, and once it has none, again only after another request (which may
 * have opened a run that has work left). */
void view_server_run(struct view_server *s, volatile sig_atomic_t *stop) {
  unsigned long seen = s->answered, idle_at = (unsigned long)-1; /* idle_at: answered when idle had none */
  long long first = -1, quiet_since = now_ms(); /* first: when the first request was answered */
  int more = 0; /* the idle work has more at once: look for requests without waiting */
  while (!*stop) {
    MHD_run_wait(s->daemon, more ? 0 : 200);
    long long t = now_ms();
    if (s->answered != seen) {
      seen = s->answered, quiet_since = t;
      if (first < 0) first = t;
    }
    int due = s->idle && idle_at != s->answered &&
              (t - quiet_since >= VIEW_IDLE_MS || (first >= 0 && t - first >= VIEW_IDLE_MAX_MS));
    more = due && s->idle(s->ctx);
    if (due && !more) idle_at = s->answered;
  }
}

void view_server_stop(struct view_server *s) {
  if (s->daemon) MHD_stop_daemon(s->daemon);
  s->daemon = NULL;
}

const char *view_request_arg(const struct view_request *req, const char *name) {
  return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}
