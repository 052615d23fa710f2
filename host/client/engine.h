/* The client's HTTP engine, shared by judges, providers and webhooks:
 * libcurl multi driving POST requests to an OpenAI-compatible server, with
 * a concurrency cap that backs off on 429 and recovers (AIMD), retries with
 * full-jitter exponential backoff honouring Retry-After, and requests-/
 * tokens-per-minute limits. Plain C, no Lua: the caller submits request
 * bodies and polls for finished ones. The API key is held here only;
 * answers are scrubbed of it (and of the base URL's credentials) before
 * they are handed back (redact.h). */
#ifndef EVALUA_CLIENT_ENGINE_H
#define EVALUA_CLIENT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* Counts the engine's memory that grows with what its caller sends and
 * its servers answer (each request with its body, each answer's buffer)
 * against a cap: charge returns 0, or -1 when the cap refuses the bytes;
 * uncharge gives them back. evalua charges --mem-limit (l_client.c). */
struct client_meter {
  int (*charge)(void *ud, size_t bytes);
  void (*uncharge)(void *ud, size_t bytes);
  void *ud;
};

struct client_config {
  const char *base_url;        /* "http://host:port/v1"; request paths stay below its path (url.h) */
  const char *api_key;         /* NULL or "": no Authorization header */
  const char *const *headers;  /* extra "Name: value" lines, NULL-terminated, or NULL */
  const char *ca_file;         /* NULL: the system's CA store */
  int concurrency;             /* requests in flight at most, >= 1 */
  long timeout_ms;             /* per attempt, whole transfer */
  long connect_timeout_ms;
  int max_retries;             /* attempts = 1 + retries at most */
  double backoff_ms;           /* base of the exponential backoff */
  double max_backoff_ms;       /* cap of the exponential part */
  double max_wait_ms;          /* a Retry-After longer than this fails at once */
  double rpm, tpm;             /* requests / tokens per minute; 0 = no limit */
  size_t max_response_bytes;   /* a larger answer fails (not retried) */
  uint64_t seed;               /* of the jitter; 0 = from the clock */
  const char *const *secrets;  /* more strings to scrub from answers, NULL-terminated, or NULL */
  struct client_meter meter;   /* charge NULL: nothing counted */
};

/* Defaults for every field but base_url / api_key / headers / ca_file. */
void client_config_defaults(struct client_config *c);

/* A finished request, owned by the caller after client_engine_poll. */
struct client_result {
  uint64_t id;
  long status;          /* HTTP status of the last attempt; 0 if none arrived */
  char *body;           /* response body of the last attempt, NUL-terminated */
  size_t body_len;
  const char *error;    /* NULL on 2xx; else why it failed (static or in errbuf) */
  char errbuf[320];
  int attempts;
  int retryable;        /* the failure was of a kind retried (retries ran out) */
  double latency_ms;    /* of the last attempt */
  double wait_ms;       /* total time spent in backoff */
  int nomem;            /* the answer did not fit: the meter refused its bytes */
  size_t charged;       /* bytes of the meter this result holds until client_result_free */
  struct client_meter meter;
};
void client_result_free(struct client_result *r);

struct client_stats {
  long submitted, attempts, retries, done, rate_limited, cancelled;
  int in_flight, queued, peak_in_flight;
  long waits;           /* times the engine slept (epoll_wait calls) */
  double window;        /* current AIMD concurrency window */
};

struct client_engine;

/* NULL with *err set (static text) when the configuration is unusable. */
struct client_engine *client_engine_new(const struct client_config *c, const char **err);
void client_engine_free(struct client_engine *e);

/* Queues a POST of body (a request and its body are charged to the meter:
 * 0 with errno = ENOMEM when it refuses them) to base_url's path joined with path ("" for
 * base_url itself; url_request), on the wire at once when a place is free.
 * est_tokens feeds the tokens-per-minute limit. operation (or NULL) is sent
 * as the header X-Evalua-Operation. Returns an id > 0, or 0 with errno =
 * EACCES (path leaves base_url's path), EINVAL (path cannot be sent) or
 * ENOMEM. */
uint64_t client_engine_submit(struct client_engine *e, const char *path, const char *body,
                              size_t len, double est_tokens, const char *operation);

/* The retry policy has one owner, this engine (docs/judge.md "Retries"):
 * it retries the faults it can see itself (429, 5xx, timeouts, dropped
 * connections) and, through this call, an answer that arrived whole but
 * that its caller could not use (a 2xx whose body is not the JSON asked
 * for). prev is that finished request's result; the retry continues its
 * attempts, so it shares the budget of max_retries and waits the backoff
 * of its next attempt. Returns the new id as submit does, or 0 with errno
 * = ERANGE when prev already made every attempt allowed. */
uint64_t client_engine_retry(struct client_engine *e, const struct client_result *prev, const char *path,
                             const char *body, size_t len, double est_tokens, const char *operation);

/* Requests waiting out a backoff or a server's Retry-After. */
int client_engine_waiting(const struct client_engine *e);

/* Moves into out (up to max) the ids of requests that began waiting out a
 * server's Retry-After since the last call, oldest first; returns how
 * many. Their waiters may step aside meanwhile: ev.map lets the item's
 * place go to another item (docs/judge.md "ev.map"). */
int client_engine_parked(struct client_engine *e, uint64_t *out, int max);

/* Drives transfers for up to timeout_ms or until a request finishes, reads
 * every other answer already arrived and gives each freed place to a
 * waiting request, then moves up to max finished requests into out;
 * returns how many. */
int client_engine_poll(struct client_engine *e, long timeout_ms, struct client_result *out, int max);

/* For waiting on several engines at once (poll() on their descriptors):
 * the descriptor that becomes readable when a transfer has news, and the
 * milliseconds until the engine needs a poll anyway (0: now; -1: only on
 * news). */
int client_engine_fd(const struct client_engine *e);
long client_engine_timeout(struct client_engine *e);

/* Forgets a queued or in-flight request; 1 if it was found. */
int client_engine_cancel(struct client_engine *e, uint64_t id);

/* Requests queued, in flight or finished but not yet polled. */
int client_engine_pending(const struct client_engine *e);

/* Corrects the tokens-per-minute account once actual usage is known
 * (delta = actual - estimated). */
void client_engine_adjust_tokens(struct client_engine *e, double delta);

void client_engine_stats(const struct client_engine *e, struct client_stats *s);
int client_engine_has_key(const struct client_engine *e);

#endif
