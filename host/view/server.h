/* The viewer's HTTP server (libmicrohttpd) on 127.0.0.1: the token, the
 * Host check, the security headers and the embedded app; /api/ requests go
 * to a handler (the Lua one, l_view.c). Every callback runs on the thread
 * that calls view_server_run: the Lua state is never entered twice. */
#ifndef EVALUA_VIEW_SERVER_H
#define EVALUA_VIEW_SERVER_H

#include <signal.h>
#include <stddef.h>

#include "guard.h"

struct MHD_Connection;
struct MHD_Daemon;

struct view_request {
  struct MHD_Connection *conn;
  const char *method; /* "GET", "HEAD" or "POST" */
  const char *url;    /* the path, without the query */
  const char *body;   /* POST body (not NUL-terminated), else NULL */
  size_t body_len;
};

struct view_reply {
  int status;
  const char *type; /* Content-Type */
  const char *body; /* copied by the server */
  size_t len;
};

typedef void (*view_api_fn)(void *ctx, const struct view_request *req, struct view_reply *rep);
/* Work left for when no request came for VIEW_IDLE_MS, or at the latest VIEW_IDLE_MAX_MS after the first
 * request was answered (a page that keeps asking does not put it off for ever); returns nonzero while there is more
 * (called again at the next turn), else it is called again after the next request. */
typedef int (*view_idle_fn)(void *ctx);
#define VIEW_IDLE_MS 1000
#define VIEW_IDLE_MAX_MS 5000

struct view_server {
  struct MHD_Daemon *daemon;
  unsigned port;
  char token[VIEW_TOKEN_LEN + 1];
  view_api_fn api;
  view_idle_fn idle; /* NULL: none */
  void *ctx;
  unsigned long answered; /* API requests answered, to tell a quiet second */
};

/* Starts listening on 127.0.0.1:port (0: a free port, then s->port says
 * which). s->token, s->api and s->ctx are set by the caller. -1 with errno
 * when the port cannot be bound. */
int view_server_start(struct view_server *s, unsigned port);

/* Serves until *stop becomes non-zero (checked every 200 ms). */
void view_server_run(struct view_server *s, volatile sig_atomic_t *stop);

void view_server_stop(struct view_server *s);

/* The value of a query argument of the request being handled, or NULL. */
const char *view_request_arg(const struct view_request *req, const char *name);

#endif
