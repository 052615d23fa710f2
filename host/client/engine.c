/* The client's HTTP engine (see engine.h). A request lives on exactly one
 * list: queued (new), delayed (waiting out a backoff, sorted by time),
 * flight (a curl easy handle in the multi), done (waiting for poll). */
#define _GNU_SOURCE /* memmem, timegm */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sys/epoll.h>
#include <unistd.h>

#include "curl_load.h"

#include "engine.h"
#include "redact.h"
#include "url.h"

enum { QREQ, QTOK }; /* the two quotas of OpenAI's x-ratelimit-* headers */

/* What a delayed request waits for: a server's Retry-After, a 429's
 * backoff (both kept as drawn), or another fault's backoff, which the end
 * of a run may shorten (tail_redraw), and one so drawn or redrawn. */
enum { WAIT_FIXED, WAIT_BACKOFF, WAIT_TAIL };

struct jreq {
  struct jreq *prev, *next;
  struct client_engine *engine;
  uint64_t id;
  char *url, *body;
  size_t len;
  struct curl_slist *headers; /* the engine's plus the operation's; NULL: the engine's */
  double est_tokens;
  int attempts;
  double not_before;        /* monotonic ms, for the delayed list */
  double wait_from;         /* when its backoff was drawn (monotonic ms) */
  int wait_kind;            /* WAIT_FIXED, WAIT_BACKOFF or WAIT_TAIL: what set not_before */
  double started;           /* monotonic ms of the current attempt */
  double wait_ms;
  double retry_after_ms;    /* from the last response; < 0 when absent */
  double rl_left[2], rl_reset_ms[2], rl_limit[2]; /* x-ratelimit-* of the last response; < 0 absent */
  double mark[2];           /* requests / tokens started before this attempt */
  size_t max_resp;
  CURL *easy;
  char *resp;
  size_t resp_len, resp_cap;
  int too_big;
  int nomem;                /* the meter refused the answer's bytes */
  size_t charged;           /* bytes charged to the engine's meter for this request */
  long status;
  const char *error;        /* NULL, or msg */
  char msg[320];
  char curlerr[CURL_ERROR_SIZE];
  int retryable;
  double latency_ms;
};

struct list { struct jreq *head, *tail; int n; };

/* A server's quota as its x-ratelimit-* headers last told it: left until
 * reset_at (monotonic ms; < 0 unknown), next start not before next; limit
 * (< 0 unknown) and span, the longest reset seen, start the next period. */
struct quota { double left, reset_at, next, limit, span; };

struct client_engine {
  struct client_config c;
  char *base_url, *api_key, *ca_file;
  char **secrets;           /* scrubbed from answers, NULL-terminated (see add_secrets) */
  struct curl_slist *headers;
  CURLM *multi;
  CURL **pool;
  int pool_n;
  struct list queued, delayed, flight, done;
  uint64_t next_id, rng;
  double window;
  double last_decrease;     /* when the window was last cut (monotonic ms) */
  double alpha;             /* moving share of 429s among the answers */
  struct quota quota[2];
  uint64_t *parked;         /* requests that began waiting out a Retry-After since the last client_engine_parked */
  int parked_n, parked_cap;
  double started[2];        /* requests / estimated tokens started so far */
  double rpm_next, tpm_level, tpm_time;
  int refusals;             /* consecutive connections refused */
  int epfd;                 /* the sockets curl asked us to watch */
  double timer_at;          /* when curl wants its timeout call; < 0: never */
  struct client_stats st;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- lists ----------------------------------------------------------- */

static void list_remove(struct list *l, struct jreq *r) {
  if (r->prev) r->prev->next = r->next; else l->head = r->next;
  if (r->next) r->next->prev = r->prev; else l->tail = r->prev;
  r->prev = r->next = NULL;
  l->n--;
}

static void list_push(struct list *l, struct jreq *r) {
  r->next = NULL;
  r->prev = l->tail;
  if (l->tail) l->tail->next = r; else l->head = r;
  l->tail = r;
  l->n++;
}

/* Keeps the delayed list sorted by not_before (usually short). */
static void list_insert_sorted(struct list *l, struct jreq *r) {
  struct jreq *at = l->tail;
  while (at && at->not_before > r->not_before) at = at->prev;
  r->prev = at;
  r->next = at ? at->next : l->head;
  if (r->next) r->next->prev = r; else l->tail = r;
  if (at) at->next = r; else l->head = r;
  l->n++;
}

static int charge(struct client_engine *e, struct jreq *r, size_t n) {
  if (e->c.meter.charge && e->c.meter.charge(e->c.meter.ud, n)) return -1;
  r->charged += n;
  return 0;
}

static void req_free(struct client_engine *e, struct jreq *r) {
  if (r->charged && e->c.meter.uncharge) e->c.meter.uncharge(e->c.meter.ud, r->charged);
  curl_api()->slist_free_all(r->headers);
  free(r->url);
  free(r->body);
  free(r->resp);
  free(r);
}

/* ---- configuration ----------------------------------------------------- */

void client_config_defaults(struct client_config *c) {
  memset(c, 0, sizeof *c);
  c->concurrency = 16;
  c->timeout_ms = 60000;
  c->connect_timeout_ms = 10000;
  c->max_retries = 5;
  c->backoff_ms = 250;       /* docs/judge.md "Backoff": why these two */
  c->max_backoff_ms = 8000;
  c->max_wait_ms = 60000;
  c->max_response_bytes = (size_t)8 << 20;
}

static char *dupstr(const char *s) { return s ? strdup(s) : NULL; }

static int build_headers(struct client_engine *e, const struct client_config *c) {
  struct curl_slist *h = NULL, *t;
  const char *fixed[] = {"Content-Type: application/json", "Accept: application/json",
                         "Expect:" /* no 100-continue round trip for large bodies */};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
    if (!(t = curl_api()->slist_append(h, fixed[i]))) goto fail;
    h = t;
  }
  if (e->api_key) {
    size_t n = strlen(e->api_key) + 32;
    char *line = malloc(n);
    if (!line) goto fail;
    snprintf(line, n, "Authorization: Bearer %s", e->api_key);
    t = curl_api()->slist_append(h, line);
    memset(line, 0, n);
    free(line);
    if (!t) goto fail;
    h = t;
  }
  for (const char *const *p = c->headers; p && *p; p++) {
    if (!(t = curl_api()->slist_append(h, *p))) goto fail;
    h = t;
  }
  e->headers = h;
  return 0;
fail:
  curl_api()->slist_free_all(h);
  return -1;
}

static const char *check_config(const struct client_config *c) {
  struct url u;
  if (!c->base_url || (strncmp(c->base_url, "http://", 7) && strncmp(c->base_url, "https://", 8)))
    return "base_url must start with http:// or https://";
  if (url_split(c->base_url, &u)) return "base_url has no host";
  if (c->concurrency < 1) return "concurrency must be at least 1";
  if (c->timeout_ms < 1) return "timeout_ms must be positive";
  if (c->max_retries < 0) return "max_retries must not be negative";
  if (c->backoff_ms < 0 || c->max_backoff_ms < 0 || c->max_wait_ms < 0) return "backoff times must not be negative";
  if (c->rpm < 0 || c->tpm < 0) return "rpm and tpm must not be negative";
  return NULL;
}

/* curl tells which sockets to watch for what (CURLMOPT_SOCKETFUNCTION);
 * epoll then wakes us for the active ones only. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *ud, void *socketp) {
  (void)easy, (void)socketp;
  struct client_engine *e = ud;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(e->epfd, EPOLL_CTL_DEL, s, NULL); /* may be closed already: fine */
    return 0;
  }
  struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
                           .data.fd = s};
  if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, s, &ev) && errno == ENOENT) epoll_ctl(e->epfd, EPOLL_CTL_ADD, s, &ev);
  return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *ud) {
  (void)multi;
  struct client_engine *e = ud;
  e->timer_at = timeout_ms < 0 ? -1 : now_ms() + (double)timeout_ms;
  return 0;
}

/* The strings answers are scrubbed of: the key as sent and as a server
 * reading headers as Latin-1 echoes it; the base URL's credentials
 * (user:password as written, decoded, and base64 as in Basic
 * authentication) and its password alone; the caller's secrets. */
static int add_secrets(struct client_engine *e, const struct client_config *c) {
  char *found[8] = {NULL};
  int n = 0;
  char *info = url_userinfo(c->base_url);
  if (e->api_key) found[n++] = dupstr(e->api_key), found[n++] = redact_latin1_form(e->api_key);
  if (info) {
    struct url u;
    url_split(c->base_url, &u);
    found[n++] = strndup(u.userinfo, u.userinfo_len);
    found[n++] = redact_base64(info);
    char *colon = strchr(info, ':');
    if (colon) found[n++] = dupstr(colon + 1);
    found[n++] = info;
  }
  size_t extra = 0;
  while (c->secrets && c->secrets[extra]) extra++;
  e->secrets = calloc((size_t)n + extra + 1, sizeof *e->secrets);
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (found[i] && e->secrets) e->secrets[k++] = found[i];
    else free(found[i]);
  }
  for (size_t i = 0; e->secrets && i < extra; i++)
    if (!(e->secrets[k++] = dupstr(c->secrets[i]))) return -1;
  return e->secrets ? 0 : -1;
}

struct client_engine *client_engine_new(const struct client_config *c, const char **err) {
  if ((*err = check_config(c))) return NULL;
  if (!curl_load(err)) return NULL;
  *err = "out of memory";
  if (curl_api()->global_init(CURL_GLOBAL_DEFAULT)) return NULL;
  struct client_engine *e = calloc(1, sizeof *e);
  if (!e) { curl_api()->global_cleanup(); return NULL; }
  e->c = *c;
  e->base_url = dupstr(c->base_url);
  e->api_key = c->api_key && *c->api_key ? dupstr(c->api_key) : NULL;
  e->ca_file = dupstr(c->ca_file);
  e->c.base_url = e->c.api_key = e->c.ca_file = NULL;
  e->c.headers = NULL;
  e->c.secrets = NULL;
  e->multi = curl_api()->multi_init();
  e->pool = calloc((size_t)c->concurrency, sizeof *e->pool);
  e->epfd = epoll_create1(EPOLL_CLOEXEC);
  e->timer_at = -1;
  if (!e->base_url || !e->multi || !e->pool || e->epfd < 0 || build_headers(e, c) || add_secrets(e, c)) {
    client_engine_free(e);
    return NULL;
  }
  curl_api()->multi_setopt(e->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->concurrency);
  curl_api()->multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, (long)c->concurrency + 4);
  curl_api()->multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_api()->multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
  curl_api()->multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
  curl_api()->multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
  e->window = c->concurrency;
  e->last_decrease = -1e300;
  e->alpha = 1; /* a first 429 halves the window */
  for (int k = QREQ; k <= QTOK; k++) e->quota[k] = (struct quota){.reset_at = -1, .limit = -1};
  e->rng = c->seed ? c->seed : (uint64_t)(now_ms() * 1000) ^ (uint64_t)(uintptr_t)e;
  e->tpm_level = c->tpm;
  e->tpm_time = now_ms();
  e->next_id = 1;
  *err = NULL;
  return e;
}

static void free_list(struct client_engine *e, struct list *l) {
  for (struct jreq *r = l->head, *n; r; r = n) {
    n = r->next;
    if (r->easy) {
      curl_api()->multi_remove_handle(e->multi, r->easy);
      curl_api()->easy_cleanup(r->easy);
    }
    req_free(e, r);
  }
  l->head = l->tail = NULL;
  l->n = 0;
}

void client_engine_free(struct client_engine *e) {
  if (!e) return;
  free_list(e, &e->queued);
  free_list(e, &e->delayed);
  free_list(e, &e->flight);
  free_list(e, &e->done);
  for (int i = 0; i < e->pool_n; i++) curl_api()->easy_cleanup(e->pool[i]);
  free(e->pool);
  free(e->parked);
  if (e->multi) curl_api()->multi_cleanup(e->multi);
  if (e->epfd > 0) close(e->epfd);
  curl_api()->slist_free_all(e->headers);
  if (e->api_key) memset(e->api_key, 0, strlen(e->api_key));
  free(e->api_key);
  for (char **k = e->secrets; k && *k; k++) {
    memset(*k, 0, strlen(*k));
    free(*k);
  }
  free(e->secrets);
  free(e->base_url);
  free(e->ca_file);
  free(e);
  curl_api()->global_cleanup();
}

/* ---- submitting ---------------------------------------------------------- */

static double retry_backoff(struct client_engine *e, struct jreq *r, double now, int rate_limited);
static void tail_redraw(struct client_engine *e);
static void start_eligible(struct client_engine *e);
static void fire_timer(struct client_engine *e);
static int wait_events(struct client_engine *e, double wait_ms);

/* The engine's headers plus one naming the operation (proxies and logs can
 * tell requests apart; the test server answers by it); 0 when out of memory. */
static int operation_headers(struct client_engine *e, struct jreq *r, const char *operation) {
  if (!operation) return 0;
  for (struct curl_slist *h = e->headers; h; h = h->next) {
    struct curl_slist *n = curl_api()->slist_append(r->headers, h->data);
    if (!n) return -1;
    r->headers = n;
  }
  char line[160];
  snprintf(line, sizeof line, "X-Evalua-Operation: %.120s", operation);
  struct curl_slist *n = curl_api()->slist_append(r->headers, line);
  if (!n) return -1;
  r->headers = n;
  return 0;
}

/* A request for path with body, its attempts so far `attempts`: a new one
 * (0) goes out at once; a retry waits its backoff first. */
static uint64_t enqueue(struct client_engine *e, const char *path, const char *body, size_t len,
                        double est_tokens, int attempts, const char *operation) {
  struct jreq *r = calloc(1, sizeof *r);
  if (!r) return errno = ENOMEM, 0;
  r->engine = e;
  if (charge(e, r, sizeof *r + len + 1)) { free(r); return errno = ENOMEM, 0; }
  if (operation_headers(e, r, operation)) { req_free(e, r); return errno = ENOMEM, 0; }
  r->url = url_request(e->base_url, path);
  r->body = r->url ? malloc(len + 1) : NULL;
  if (!r->body) {
    int err = r->url ? ENOMEM : errno;
    req_free(e, r);
    errno = err;
    return 0;
  }
  memcpy(r->body, body, len);
  r->body[len] = '\0';
  r->len = len;
  r->est_tokens = est_tokens > 0 ? est_tokens : 0;
  r->attempts = attempts;
  r->retry_after_ms = -1;
  r->id = e->next_id++;
  e->st.submitted++;
  if (r->attempts > 0) { /* backs off as any retry does */
    double now = now_ms(), wait = retry_backoff(e, r, now, 0);
    r->not_before = now + wait;
    r->wait_ms = wait;
    e->st.retries++;
    list_insert_sorted(&e->delayed, r);
  } else {
    list_push(&e->queued, r);
    /* on the wire now, not at the next poll: a caller that reads answers
     * between submissions would otherwise hold every new request back;
     * a new connection needs its socket's news before it can send */
    start_eligible(e);
    fire_timer(e);
    wait_events(e, 0);
    fire_timer(e);
  }
  return r->id;
}

uint64_t client_engine_submit(struct client_engine *e, const char *path, const char *body,
                              size_t len, double est_tokens, const char *operation) {
  return enqueue(e, path, body, len, est_tokens, 0, operation);
}

uint64_t client_engine_retry(struct client_engine *e, const struct client_result *prev, const char *path,
                             const char *body, size_t len, double est_tokens, const char *operation) {
  if (prev->attempts < 1 || prev->attempts > e->c.max_retries) return errno = ERANGE, 0;
  return enqueue(e, path, body, len, est_tokens, prev->attempts, operation);
}

int client_engine_waiting(const struct client_engine *e) { return e->delayed.n; }

/* ---- transfers ---------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t n, void *ud) {
  struct jreq *r = ud;
  size_t add = size * n;
  if (r->resp_len + add > r->max_resp) { r->too_big = 1; return 0; }
  if (r->resp_len + add + 1 > r->resp_cap) {
    size_t cap = r->resp_cap ? r->resp_cap : 4096;
    while (cap < r->resp_len + add + 1) cap *= 2;
    if (charge(r->engine, r, cap - r->resp_cap)) { r->nomem = 1; return 0; }
    char *p = realloc(r->resp, cap);
    if (!p) return 0;
    r->resp = p, r->resp_cap = cap;
  }
  memcpy(r->resp + r->resp_len, data, add);
  r->resp_len += add;
  r->resp[r->resp_len] = '\0';
  return add;
}

/* A duration as OpenAI writes x-ratelimit-reset-*: "1s", "6m0s", "20ms",
 * "1h2m3.5s", or plain seconds; milliseconds, or -1 when unreadable. */
static double duration_ms(const char *v) {
  double total = 0;
  char *end;
  int parts = 0;
  while (*v) {
    double x = strtod(v, &end);
    if (end == v || x < 0) return -1;
    v = end;
    if (!strncmp(v, "ms", 2)) total += x, v += 2;
    else if (*v == 's' || *v == '\0') total += x * 1e3, v += *v == 's';
    else if (*v == 'm') total += x * 6e4, v++;
    else if (*v == 'h') total += x * 3.6e6, v++;
    else return -1;
    parts++;
  }
  return parts ? total : -1;
}

/* The value of header line if it is named name (case-insensitive), else NULL. */
static const char *header_value(const char *line, const char *name) {
  size_t k = strlen(name);
  if (strncasecmp(line, name, k) || line[k] != ':') return NULL;
  line += k + 1;
  while (*line == ' ' || *line == '\t') line++;
  return line;
}

/* The number spelled by the n digits at p (n > 0), or -1 if one is not a digit. */
static double digits(const char *p, size_t n) {
  double x = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    x = x * 10 + (p[i] - '0');
  }
  return n ? x : -1;
}

/* Index of the three letters at p in list (names of three letters, in
 * order, case-sensitive as RFC 9110 wants), or -1. */
static int name3(const char *p, const char *list) {
  for (int i = 0; list[3 * i]; i++)
    if (!strncmp(p, list + 3 * i, 3)) return i;
  return -1;
}

static const char MONTHS[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
static const char DAYS[] = "MonTueWedThuFriSatSun";

/* Whether the n characters at p are a day's full name ("Sunday"). */
static int long_day(const char *p, size_t n) {
  static const char *const names[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strlen(names[i]) == n && !strncmp(p, names[i], n)) return 1;
  return 0;
}

/* "HH:MM:SS" at p into tm; 0, or -1 when it is not one. */
static int time_of_day(const char *p, struct tm *tm) {
  if (p[2] != ':' || p[5] != ':') return -1;
  double h = digits(p, 2), m = digits(p + 3, 2), s = digits(p + 6, 2);
  if (h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 60) return -1;
  tm->tm_hour = (int)h, tm->tm_min = (int)m, tm->tm_sec = (int)s;
  return 0;
}

/* An HTTP-date (RFC 9110 section 5.6.7) as seconds since the epoch, or -1:
 * IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", and the obsolete forms a
 * recipient must accept, "Sunday, 06-Nov-94 08:49:37 GMT" and
 * "Sun Nov  6 08:49:37 1994". Nothing else: no other zone, no extra space. */
static double http_date(const char *v, time_t now) {
  struct tm tm = {0};
  double day, year;
  size_t n = strlen(v);
  const char *comma = strchr(v, ',');
  if (n == 29 && comma == v + 3 && name3(v, DAYS) >= 0 && v[4] == ' ' && v[7] == ' ' && v[11] == ' '
      && v[16] == ' ' && v[25] == ' ' && !strcmp(v + 26, "GMT")) { /* IMF-fixdate */
    day = digits(v + 5, 2), tm.tm_mon = name3(v + 8, MONTHS), year = digits(v + 12, 4);
    if (time_of_day(v + 17, &tm)) return -1;
  } else if (comma && comma > v + 5 && n == (size_t)(comma - v) + 24) { /* rfc850-date */
    const char *d = comma + 2;
    if (!long_day(v, (size_t)(comma - v)) || comma[1] != ' ' || d[2] != '-' || d[6] != '-' || d[9] != ' ' || d[18] != ' ' || strcmp(d + 19, "GMT"))
      return -1;
    day = digits(d, 2), tm.tm_mon = name3(d + 3, MONTHS), year = digits(d + 7, 2);
    if (time_of_day(d + 10, &tm) || year < 0) return -1;
    /* a year more than 50 years ahead is the latest past one with those digits */
    struct tm today;
    gmtime_r(&now, &today);
    int century = (today.tm_year + 1900) / 100 * 100;
    year += century;
    if (year > today.tm_year + 1900 + 50) year -= 100;
  } else if (n == 24 && name3(v, DAYS) >= 0 && v[3] == ' ' && v[7] == ' ' && v[10] == ' ' && v[19] == ' ') {
    tm.tm_mon = name3(v + 4, MONTHS); /* asctime-date; a day below 10 is " 6" */
    day = v[8] == ' ' ? digits(v + 9, 1) : digits(v + 8, 2), year = digits(v + 20, 4);
    if (time_of_day(v + 11, &tm)) return -1;
  } else {
    return -1;
  }
  if (tm.tm_mon < 0 || day < 1 || day > 31 || year < 1900) return -1;
  tm.tm_mday = (int)day, tm.tm_year = (int)year - 1900;
  time_t t = timegm(&tm);
  return t == (time_t)-1 ? -1 : (double)t;
}

/* Retry-After is delay-seconds (1*DIGIT) or an HTTP-date, RFC 9110
 * section 10.2.3; anything else ("0x3", "3.5", "-1") is ignored and the
 * request backs off as if none came. retry-after-ms (OpenAI's, Azure's)
 * is digits with an optional fraction. Leading and trailing spaces and
 * tabs are the header's optional whitespace, not part of the value. */
static void read_retry_after(struct jreq *r, const char *v, int ms) {
  size_t n = strlen(v), int_len = strspn(v, "0123456789");
  double x = digits(v, int_len);
  if (ms && x >= 0 && v[int_len] == '.' && int_len + 1 < n && strspn(v + int_len + 1, "0123456789") == n - int_len - 1)
    x += strtod(v + int_len, NULL); /* the fraction, only digits checked above */
  else if (int_len != n) x = -1;
  if (x >= 0) {
    r->retry_after_ms = ms ? x : x * 1000;
  } else if (!ms) {
    time_t now = time(NULL);
    double when = http_date(v, now);
    if (when >= 0) r->retry_after_ms = fmax(0, (when - (double)now) * 1000);
  }
}

/* Retry-After (seconds or an HTTP date), retry-after-ms, and the quota
 * headers x-ratelimit-remaining-* / x-ratelimit-reset-*. */
static size_t on_header(char *data, size_t size, size_t n, void *ud) {
  static const char *const names[2][3] = {
    {"x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "x-ratelimit-limit-requests"},
    {"x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", "x-ratelimit-limit-tokens"}};
  struct jreq *r = ud;
  size_t len = size * n;
  char line[256];
  const char *v;
  if (len >= sizeof line || len < 12) return len;
  memcpy(line, data, len);
  line[len] = '\0';
  for (char *p = line + len - 1; p >= line && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p--) *p = '\0';
  if ((v = header_value(line, "retry-after-ms"))) read_retry_after(r, v, 1);
  else if ((v = header_value(line, "retry-after"))) read_retry_after(r, v, 0);
  for (int k = QREQ; k <= QTOK; k++) {
    char *end;
    if ((v = header_value(line, names[k][0]))) {
      double x = strtod(v, &end);
      if (end != v && x >= 0) r->rl_left[k] = x;
    } else if ((v = header_value(line, names[k][1]))) {
      r->rl_reset_ms[k] = duration_ms(v);
    } else if ((v = header_value(line, names[k][2]))) {
      double x = strtod(v, &end);
      if (end != v && x > 0) r->rl_limit[k] = x;
    }
  }
  return len;
}

static CURL *easy_get(struct client_engine *e) {
  if (e->pool_n > 0) {
    CURL *h = e->pool[--e->pool_n];
    curl_api()->easy_reset(h);
    return h;
  }
  return curl_api()->easy_init();
}

static void easy_put(struct client_engine *e, CURL *h) {
  if (e->pool_n < e->c.concurrency) e->pool[e->pool_n++] = h;
  else curl_api()->easy_cleanup(h);
}

static int start(struct client_engine *e, struct jreq *r) {
  CURL *h = easy_get(e);
  if (!h) return -1;
  r->easy = h;
  r->resp_len = 0;
  r->too_big = r->nomem = 0;
  r->retry_after_ms = -1;
  r->rl_left[QREQ] = r->rl_left[QTOK] = r->rl_reset_ms[QREQ] = r->rl_reset_ms[QTOK] = -1;
  r->rl_limit[QREQ] = r->rl_limit[QTOK] = -1;
  r->mark[QREQ] = e->started[QREQ];
  r->mark[QTOK] = e->started[QTOK];
  r->max_resp = e->c.max_response_bytes;
  r->curlerr[0] = '\0';
  curl_api()->easy_setopt(h, CURLOPT_URL, r->url);
  curl_api()->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_api()->easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
  curl_api()->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
  curl_api()->easy_setopt(h, CURLOPT_HTTPHEADER, r->headers ? r->headers : e->headers);
  curl_api()->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_api()->easy_setopt(h, CURLOPT_WRITEDATA, r);
  curl_api()->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_api()->easy_setopt(h, CURLOPT_HEADERDATA, r);
  curl_api()->easy_setopt(h, CURLOPT_TIMEOUT_MS, e->c.timeout_ms);
  curl_api()->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, e->c.connect_timeout_ms);
  curl_api()->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_api()->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_api()->easy_setopt(h, CURLOPT_ERRORBUFFER, r->curlerr);
  curl_api()->easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_resp);
  curl_api()->easy_setopt(h, CURLOPT_PRIVATE, r);
  if (e->ca_file) curl_api()->easy_setopt(h, CURLOPT_CAINFO, e->ca_file);
  if (curl_api()->multi_add_handle(e->multi, h) != CURLM_OK) {
    easy_put(e, h);
    r->easy = NULL;
    return -1;
  }
  r->attempts++;
  r->started = now_ms();
  e->st.attempts++;
  list_push(&e->flight, r);
  if (e->flight.n > e->st.peak_in_flight) e->st.peak_in_flight = e->flight.n;
  return 0;
}

static void finish_failed(struct client_engine *e, struct jreq *r, const char *msg) {
  snprintf(r->msg, sizeof r->msg, "%s", msg);
  r->error = r->msg;
  list_push(&e->done, r);
}

static void refill_tokens(struct client_engine *e, double now) {
  if (e->c.tpm <= 0) return;
  e->tpm_level = fmin(e->c.tpm, e->tpm_level + (now - e->tpm_time) * e->c.tpm / 60000.0);
  e->tpm_time = now;
}

static int window_cap(const struct client_engine *e) {
  return e->window < 1 ? 1 : (int)e->window;
}

/* The request to start next: a retry that is due, else the oldest new one. */
static struct jreq *candidate(const struct client_engine *e, double now) {
  return e->delayed.head && e->delayed.head->not_before <= now ? e->delayed.head : e->queued.head;
}

/* What the requests in flight that started before `mark` (HUGE_VAL: all
 * of them) need of quota k. A server may count them later than requests
 * started after them, or in its next period. */
static double in_flight_need(const struct client_engine *e, int k, double mark) {
  double sum = 0;
  for (const struct jreq *f = e->flight.head; f; f = f->next)
    if (f->mark[k] < mark) sum += k == QREQ ? 1 : f->est_tokens;
  return sum;
}

/* Milliseconds quota k holds back a start needing `need`. Once its reset
 * time has passed, a new period allows the server's stated limit, less what
 * is in flight (not a burst of every waiting request), until its answers
 * say more; without a stated limit the quota is unknown again. */
static double quota_delay(struct client_engine *e, int k, double need, double now) {
  struct quota *q = &e->quota[k];
  if (q->reset_at < 0) return 0;
  if (now >= q->reset_at) {
    if (q->limit < 0) {
      q->reset_at = -1;
      return 0;
    }
    q->left = q->limit - in_flight_need(e, k, HUGE_VAL);
    q->reset_at = now + q->span;
    q->next = now;
  }
  if (q->left < need) return q->reset_at - now;
  return fmax(0, q->next - now);
}

/* Milliseconds until r may start by rpm, tpm and the server's quotas. */
static double start_delay(struct client_engine *e, const struct jreq *r, double now) {
  double t = 0;
  if (e->c.rpm > 0) t = fmax(t, e->rpm_next - now);
  if (e->c.tpm > 0 && e->tpm_level < r->est_tokens && e->tpm_level < e->c.tpm)
    t = fmax(t, (fmin(r->est_tokens, e->c.tpm) - e->tpm_level) * 60000.0 / e->c.tpm);
  t = fmax(t, quota_delay(e, QREQ, 1, now));
  return fmax(t, quota_delay(e, QTOK, fmin(r->est_tokens, 1e300), now));
}

/* Spends need from a known quota and spaces the next start so that what is
 * left lasts until the reset: the server's budget spread evenly, not spent
 * in a burst that ends in 429s. */
static void quota_spend(struct quota *q, double need, double now) {
  if (q->reset_at < 0) return;
  double share = q->left > 0 ? need / q->left : 1;
  q->left -= need;
  q->next = now + (q->reset_at - now) * fmin(1, share);
}

static void start_eligible(struct client_engine *e) {
  double now = now_ms();
  refill_tokens(e, now);
  tail_redraw(e);
  struct jreq *r;
  while (e->flight.n < window_cap(e) && (r = candidate(e, now)) && start_delay(e, r, now) <= 0) {
    list_remove(r == e->delayed.head ? &e->delayed : &e->queued, r);
    if (start(e, r)) {
      finish_failed(e, r, "cannot start a transfer: out of memory");
      continue;
    }
    if (e->c.rpm > 0) e->rpm_next = fmax(now, e->rpm_next) + 60000.0 / e->c.rpm;
    if (e->c.tpm > 0) e->tpm_level -= r->est_tokens;
    quota_spend(&e->quota[QREQ], 1, now);
    quota_spend(&e->quota[QTOK], r->est_tokens, now);
    e->started[QREQ] += 1;
    e->started[QTOK] += r->est_tokens;
  }
}

/* Milliseconds until a waiting request may start; -1 when none can start
 * before a transfer finishes (the window is full, or nothing waits): then
 * only a socket event or curl's own timer wakes the engine. */
static double next_timer(struct client_engine *e, double now) {
  if (e->flight.n >= window_cap(e)) return -1;
  tail_redraw(e);
  double t = -1;
  if (e->delayed.head) t = fmax(0, e->delayed.head->not_before - now);
  struct jreq *r = candidate(e, now);
  if (r) {
    double q = start_delay(e, r, now);
    t = t < 0 ? q : fmin(t, q);
  }
  return t;
}

/* ---- finishing ---------------------------------------------------------- */

static double uniform01(struct client_engine *e) {
  e->rng ^= e->rng >> 12, e->rng ^= e->rng << 25, e->rng ^= e->rng >> 27;
  return (double)((e->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* The ceiling of the backoff before the retry after `attempt` attempts. */
static double backoff_ceiling(const struct client_engine *e, int attempt) {
  return fmin(e->c.max_backoff_ms, e->c.backoff_ms * ldexp(1.0, attempt - 1 < 30 ? attempt - 1 : 30));
}

/* The end of a run, as the engine can see it: nothing queued for a place,
 * and a place free for every request waiting to retry (`extra` more
 * besides those delayed), so a retry sent early crowds out no one and the
 * server sees no more requests than the window allows. A long backoff then
 * only stretches the run: one request whose 500s drew waits of several
 * seconds set its end. */
static int run_tail(const struct client_engine *e, int extra) {
  return e->queued.n == 0 && e->flight.n + e->delayed.n + extra <= window_cap(e);
}

/* Full jitter: uniform in [0, min(max_backoff_ms, backoff_ms * 2^(n-1)))]
 * before retry n; at the end of a run (run_tail) a fault other than a 429
 * draws from [0, min(that, backoff_ms)), the first retry's range, instead
 * (docs/judge.md "Backoff"). A 429 asks the client to send less: its
 * backoff is never shortened, nor is a Retry-After (schedule_retry). */
static double retry_backoff(struct client_engine *e, struct jreq *r, double now, int rate_limited) {
  double ceiling = backoff_ceiling(e, r->attempts);
  r->wait_from = now;
  r->wait_kind = rate_limited ? WAIT_FIXED : WAIT_BACKOFF;
  if (!rate_limited && run_tail(e, 1)) {
    ceiling = fmin(ceiling, e->c.backoff_ms);
    r->wait_kind = WAIT_TAIL;
  }
  return uniform01(e) * ceiling;
}

/* When the end of a run comes while requests wait out backoffs drawn
 * before it, each is drawn once more from the tail's range, counted from
 * when its wait began, and keeps the earlier of the two times. */
static void tail_redraw(struct client_engine *e) {
  if (!e->delayed.n || !run_tail(e, 0)) return;
  for (struct jreq *r = e->delayed.head, *next; r; r = next) {
    next = r->next;
    if (r->wait_kind != WAIT_BACKOFF) continue;
    r->wait_kind = WAIT_TAIL;
    double at = r->wait_from + uniform01(e) * fmin(backoff_ceiling(e, r->attempts), e->c.backoff_ms);
    if (at >= r->not_before) continue;
    r->wait_ms -= r->not_before - at;
    r->not_before = at;
    list_remove(&e->delayed, r);
    list_insert_sorted(&e->delayed, r);
  }
}

static int retryable_transport(CURLcode rc) {
  switch (rc) {
  case CURLE_OPERATION_TIMEDOUT: case CURLE_COULDNT_CONNECT: case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR: case CURLE_GOT_NOTHING: case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2: case CURLE_HTTP2_STREAM: case CURLE_SSL_CONNECT_ERROR:
    return 1;
  default:
    return 0;
  }
}

static int retryable_status(const struct jreq *r) {
  if (r->status == 429) return !(r->resp && strstr(r->resp, "insufficient_quota"));
  return r->status == 408 || r->status == 409 || r->status >= 500;
}

/* Fills r->status/error/retryable from the transfer's outcome. */
static void classify(struct client_engine *e, struct jreq *r, CURLcode rc) {
  curl_api()->easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
  r->error = NULL;
  r->retryable = 0;
  if (rc == CURLE_OK && r->status >= 200 && r->status < 300) {
    e->refusals = 0;
    return;
  }
  char *why = r->msg;
  size_t n = sizeof r->msg;
  if (rc == CURLE_OK) {
    snprintf(why, n, "HTTP %ld", r->status);
    r->retryable = retryable_status(r);
    e->refusals = 0;
  } else if (r->nomem) {
    snprintf(why, n, "out of memory: the server's answer does not fit in the memory cap");
  } else if (r->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
    snprintf(why, n, "the server's answer is larger than max_response_bytes (%zu bytes)", r->max_resp);
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    snprintf(why, n, "timed out after %ld ms", e->c.timeout_ms);
    r->retryable = 1;
  } else {
    int refused = rc == CURLE_COULDNT_CONNECT;
    e->refusals = refused ? e->refusals + 1 : 0;
    snprintf(why, n, "%s: %.250s", refused ? "connection failed" : "connection error",
             r->curlerr[0] ? r->curlerr : curl_api()->easy_strerror(rc));
    /* A server that refuses connection after connection is down: stop retrying. */
    r->retryable = retryable_transport(rc) && !(refused && e->refusals > 2 * (e->c.max_retries + 1));
    r->status = 0;
  }
  r->error = r->msg;
}

/* The concurrency window (docs/judge.md, "The window"): each success adds
 * 1/window (one request per round trip). A retryable 429 for a request sent
 * after the last cut cuts it, at most once per round trip as TCP does, to
 * window x (1 - alpha/2), where alpha is the moving share of 429s among the
 * answers (weight 1/16, starting at 1), as DCTCP does with congestion
 * marks. A 429 that says when to come back (Retry-After) is waited out as
 * asked and cuts only while alpha >= 1/2, a server refusing most of what is
 * sent: stray 429s at a server's limit would otherwise hold the window near
 * a few requests while it has room for more. */
static void adjust_window(struct client_engine *e, struct jreq *r, double now) {
  int limited = r->status == 429 && r->retryable;
  e->st.rate_limited += limited;
  e->alpha += (limited - e->alpha) / 16;
  if (!r->error) {
    e->window = fmin(e->c.concurrency, e->window + 1.0 / e->window);
  } else if (limited && r->started >= e->last_decrease && (r->retry_after_ms < 0 || e->alpha >= 0.5)) {
    e->window = fmax(1, e->window * (1 - e->alpha / 2));
    e->last_decrease = now;
  }
}

/* Folds an answer's x-ratelimit-* into the quotas. What started since r
 * (r included, to err safe) and what is in flight from before it are taken
 * as spent. Answers of one period come back in any order, so within a
 * period the lowest count left wins; an answer of a period already over
 * is ignored. Periods are told apart by their reset times, half a period
 * (at least 20 ms) apart. */
static void update_quotas(struct client_engine *e, const struct jreq *r, double now) {
  for (int k = QREQ; k <= QTOK; k++) {
    if (r->rl_left[k] < 0 || r->rl_reset_ms[k] < 0) continue;
    struct quota *q = &e->quota[k];
    double wait = fmin(r->rl_reset_ms[k], e->c.max_wait_ms) + 1, reset_at = now + wait;
    double left = r->rl_left[k] - (e->started[k] - r->mark[k]) - in_flight_need(e, k, r->mark[k]);
    q->span = fmax(q->span, wait);
    q->limit = r->rl_limit[k];
    double apart = fmax(q->span / 2, 20);
    int known = q->reset_at >= 0 && now < q->reset_at;
    if (known && reset_at <= q->reset_at - apart) continue;
    int same = known && reset_at < q->reset_at + apart;
    q->left = same ? fmin(q->left, left) : left;
    q->reset_at = same ? fmax(q->reset_at, reset_at) : reset_at;
    q->next = now;
  }
}

/* Notes that request id began waiting out a Retry-After: a caller may let
 * its waiter step aside (ev.map parks it; client_engine_parked). */
static void note_parked(struct client_engine *e, uint64_t id) {
  if (e->parked_n == e->parked_cap) {
    int cap = e->parked_cap ? 2 * e->parked_cap : 64;
    uint64_t *p = realloc(e->parked, (size_t)cap * sizeof *p);
    if (!p) return; /* a waiter not told only keeps its place */
    e->parked = p, e->parked_cap = cap;
  }
  e->parked[e->parked_n++] = id;
}

int client_engine_parked(struct client_engine *e, uint64_t *out, int max) {
  int n = e->parked_n < max ? e->parked_n : max;
  if (n <= 0) return 0; /* nothing parked yet: e->parked may be NULL */
  memcpy(out, e->parked, (size_t)n * sizeof *out);
  memmove(e->parked, e->parked + n, (size_t)(e->parked_n - n) * sizeof *out);
  e->parked_n -= n;
  return n;
}

/* Schedules a retry; 0, or -1 when the server's wait is too long. A server
 * that says when to come back (Retry-After) is taken at its word: the wait
 * is what it asked, not the larger of that and the exponential backoff,
 * which is for faults that say nothing and grows with every attempt. */
static int schedule_retry(struct client_engine *e, struct jreq *r, double now) {
  double wait;
  if (r->retry_after_ms < 0) {
    wait = retry_backoff(e, r, now, r->status == 429);
  } else {
    if (r->retry_after_ms > e->c.max_wait_ms) {
      char status[32];
      snprintf(status, sizeof status, "%.31s", r->msg);
      snprintf(r->msg, sizeof r->msg, "%s; the server asked to wait %.0f s, more than max_wait_ms (%.0f)",
               status, r->retry_after_ms / 1000, e->c.max_wait_ms);
      return -1;
    }
    wait = r->retry_after_ms;
    r->wait_kind = WAIT_FIXED;
    note_parked(e, r->id);
  }
  r->not_before = now + wait;
  r->wait_ms += wait;
  e->st.retries++;
  list_insert_sorted(&e->delayed, r);
  return 0;
}

static void finish(struct client_engine *e, struct jreq *r, CURLcode rc) {
  double now = now_ms();
  list_remove(&e->flight, r);
  r->latency_ms = now - r->started;
  classify(e, r, rc);
  curl_api()->multi_remove_handle(e->multi, r->easy);
  easy_put(e, r->easy);
  r->easy = NULL;
  adjust_window(e, r, now);
  update_quotas(e, r, now);
  if (r->error && r->retryable && r->attempts <= e->c.max_retries && schedule_retry(e, r, now) == 0) return;
  if (r->resp && e->secrets[0] && !(r->resp = redact(r->resp, &r->resp_len, (const char *const *)e->secrets))) {
    r->resp_len = r->resp_cap = 0;
    snprintf(r->msg, sizeof r->msg, "out of memory while scrubbing the key from the answer");
    r->error = r->msg, r->retryable = 0;
  }
  e->st.done++;
  list_push(&e->done, r);
}

static void drain_messages(struct client_engine *e) {
  CURLMsg *m;
  int left;
  while ((m = curl_api()->multi_info_read(e->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    struct jreq *r = NULL;
    curl_api()->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
    if (r) finish(e, r, m->data.result);
  }
}

/* Runs curl's timeout processing when it is due (it starts new transfers too). */
static void fire_timer(struct client_engine *e) {
  if (e->timer_at < 0 || now_ms() < e->timer_at) return;
  e->timer_at = -1;
  int running;
  curl_api()->multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

/* Waits up to wait_ms for socket activity and hands it to curl; returns
 * how many sockets had news. Only a wait that may sleep counts as one. */
static int wait_events(struct client_engine *e, double wait_ms) {
  struct epoll_event ev[64];
  if (wait_ms > 0) e->st.waits++;
  int n = epoll_wait(e->epfd, ev, 64, (int)ceil(fmin(wait_ms, 86400000.0)));
  for (int i = 0; i < n; i++) {
    int mask = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0)
             | (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
    int running;
    curl_api()->multi_socket_action(e->multi, ev[i].data.fd, mask, &running);
  }
  return n;
}

/* Reads every answer already arrived, up to max finished, refilling the
 * places each frees with a waiting request as it goes: a wave of answers
 * that arrive together sends the next wave at once, before the caller
 * reads any of them. */
static void sweep(struct client_engine *e, int max) {
  for (;;) {
    start_eligible(e);
    fire_timer(e);
    if (e->done.n >= max || wait_events(e, 0) == 0) return;
    fire_timer(e);
    drain_messages(e);
  }
}

/* ---- polling --------------------------------------------------------------- */

static void hand_over(struct jreq *r, struct client_result *out) {
  memset(out, 0, sizeof *out);
  out->id = r->id;
  out->status = r->status;
  out->body = r->resp ? r->resp : calloc(1, 1);
  out->body_len = r->resp ? r->resp_len : 0;
  r->resp = NULL;
  if (r->error) {
    snprintf(out->errbuf, sizeof out->errbuf, "%s", r->error);
    out->error = out->errbuf;
  }
  out->attempts = r->attempts;
  out->retryable = r->retryable;
  out->latency_ms = r->latency_ms;
  out->wait_ms = r->wait_ms;
  out->nomem = r->nomem;
  out->charged = r->charged; /* the answer's buffer goes with them */
  out->meter = r->engine->c.meter;
  r->charged = 0;
}

int client_engine_poll(struct client_engine *e, long timeout_ms, struct client_result *out, int max) {
  double deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  for (;;) {
    start_eligible(e);
    fire_timer(e);
    drain_messages(e);
    double now = now_ms();
    if (e->done.n) break;
    double wait = fmax(0, deadline - now), t = next_timer(e, now);
    if (!e->flight.n && t < 0) break; /* nothing pending */
    if (t >= 0) wait = fmin(wait, t);
    if (e->timer_at >= 0) wait = fmin(wait, fmax(0, e->timer_at - now));
    wait_events(e, wait); /* with timeout 0: what is ready, without sleeping */
    fire_timer(e);
    drain_messages(e);
    if (e->done.n || now_ms() >= deadline) break;
  }
  sweep(e, max);
  int n = 0;
  for (struct jreq *r; n < max && (r = e->done.head); n++) {
    list_remove(&e->done, r);
    hand_over(r, &out[n]);
    req_free(e, r);
  }
  return n;
}

int client_engine_fd(const struct client_engine *e) { return e->epfd; }

long client_engine_timeout(struct client_engine *e) {
  drain_messages(e); /* a transfer curl finished outside a poll counts as news */
  if (e->done.n) return 0;
  double now = now_ms(), t = next_timer(e, now);
  if (e->timer_at >= 0) t = t < 0 ? fmax(0, e->timer_at - now) : fmin(t, fmax(0, e->timer_at - now));
  return t < 0 ? -1 : (long)ceil(t);
}

void client_result_free(struct client_result *r) {
  free(r->body);
  r->body = NULL;
  if (r->charged && r->meter.uncharge) r->meter.uncharge(r->meter.ud, r->charged);
  r->charged = 0;
}

static struct jreq *find(struct list *l, uint64_t id) {
  for (struct jreq *r = l->head; r; r = r->next)
    if (r->id == id) return r;
  return NULL;
}

int client_engine_cancel(struct client_engine *e, uint64_t id) {
  struct list *lists[] = {&e->queued, &e->delayed, &e->flight, &e->done};
  for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
    struct jreq *r = find(lists[i], id);
    if (!r) continue;
    list_remove(lists[i], r);
    if (r->easy) {
      curl_api()->multi_remove_handle(e->multi, r->easy);
      easy_put(e, r->easy);
    }
    req_free(e, r);
    e->st.cancelled++;
    return 1;
  }
  return 0;
}

int client_engine_pending(const struct client_engine *e) {
  return e->queued.n + e->delayed.n + e->flight.n + e->done.n;
}

void client_engine_adjust_tokens(struct client_engine *e, double delta) {
  if (e->c.tpm > 0) e->tpm_level -= delta;
}

void client_engine_stats(const struct client_engine *e, struct client_stats *s) {
  *s = e->st;
  s->in_flight = e->flight.n;
  s->queued = e->queued.n + e->delayed.n;
  s->window = e->window;
}

int client_engine_has_key(const struct client_engine *e) { return e->api_key != NULL; }
