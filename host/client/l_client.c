/* evalua._client: the thin binding of the client engine and cache. Lua gets
 * submit/poll/cancel primitives and never a curl callback; the API key is
 * read from the environment here and never pushed to Lua. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "cache_writer.h"
#include "cache.h"
#include "files.h"
#include "engine.h"
#include "modules.h"
#include "runtime.h"
#include "udata.h"
#include "url.h"

#define ENGINE_MT "evalua.JudgeEngine"
#define BOX_MT "evalua.JudgeBox"
#define FAILURES_MT "evalua.JudgeCacheFailures"
#define STORE_MT "evalua.JudgeCacheStore"
#define POLL_MAX 128
#define SANDBOX_MAX_RESPONSE ((size_t)64 << 20)

/* The engine userdata keeps the buffer poll fills, so a poll allocates
 * nothing in C and a memory error midway leaks nothing. */
struct engine_ud {
  struct client_engine *e;
  int n, next;  /* batch[next..n) are results not yet handed to Lua */
  struct client_result batch[POLL_MAX];
};

/* ---- options ----------------------------------------------------------- */

/* t[field], a finite number from min to max (default dflt); with integral,
 * a whole number, as it becomes a count or an integer type. */
static double opt_range(lua_State *L, int t, const char *field, double dflt, double min, double max, int integral) {
  int type = lua_getfield(L, t, field);
  double v = dflt;
  if (type != LUA_TNIL) {
    int ok;
    v = lua_tonumberx(L, -1, &ok);
    if (!ok || !(v >= min && v <= max) || (integral && v != floor(v))) {
      char lo[32], hi[32];
      snprintf(lo, sizeof lo, "%.15g", min), snprintf(hi, sizeof hi, "%.15g", max);
      luaL_error(L, "judge option '%s' must be %s from %s to %s (got %s)", field, integral ? "an integer" : "a number",
                 lo, hi, ok ? lua_tostring(L, -1) : luaL_typename(L, -1));
    }
  }
  lua_pop(L, 1);
  return v;
}

#define MAX_MS 2147483647.0 /* 24 days: curl's timeouts are longs */
static double opt_number(lua_State *L, int t, const char *field, double dflt, double min) {
  return opt_range(L, t, field, dflt, min, 1e15, 0);
}

static const char *opt_string(lua_State *L, int t, const char *field, const char *dflt) {
  int type = lua_getfield(L, t, field);
  const char *v = dflt;
  if (type == LUA_TSTRING) v = lua_tostring(L, -1);
  else if (type != LUA_TNIL) luaL_error(L, "judge option '%s' must be a string", field);
  lua_pop(L, 1); /* the string stays reachable from the options table */
  return v;
}

/* A header value: a string, or {env = "NAME"} read here so that a secret
 * header (Azure's api-key, say) never passes through Lua either; *secret
 * says which it was. */
static const char *header_value(lua_State *L, const char *name, int *secret) {
  *secret = 0;
  if (lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  if (lua_type(L, -1) == LUA_TTABLE && evalua_runtime(L)->sandbox)
    luaL_error(L, "judge header '%s': values from the environment are not available in --sandbox mode", name);
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "env") == LUA_TSTRING) {
    const char *v = getenv(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (!v) luaL_error(L, "judge header '%s': environment variable is not set", name);
    *secret = 1;
    return v;
  }
  luaL_error(L, "judge header '%s' must be a string or {env = \"NAME\"}", name);
  return NULL;
}

/* A NULL-terminated array of the strings in the list at index t, as a
 * userdata pushed on the stack; the strings stay in the list. */
static const char *const *string_array(lua_State *L, int t) {
  lua_Integer n = luaL_len(L, t);
  const char **lines = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, t, i + 1);
    lines[i] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  lines[n] = NULL;
  return lines;
}

/* The "Name: value" lines of option headers and the values read from the
 * environment (secrets to scrub from answers), as arrays that live as long
 * as the two lists this leaves on the stack with them. */
static void collect_headers(lua_State *L, int t, const char *const **lines, const char *const **secrets) {
  *lines = *secrets = NULL;
  if (lua_getfield(L, t, "headers") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1)) luaL_error(L, "judge option 'headers' must be a table of name = value");
  int h = lua_gettop(L), n = 0, k = 0;
  lua_newtable(L); /* h + 1: the lines */
  lua_newtable(L); /* h + 2: the secrets */
  for (lua_pushnil(L); lua_next(L, h); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) luaL_error(L, "judge header names must be strings");
    int secret;
    const char *name = lua_tostring(L, -2), *value = header_value(L, name, &secret);
    if (strpbrk(name, "\r\n:") || !*name || strpbrk(value, "\r\n"))
      luaL_error(L, "judge header '%s': names and values cannot contain line breaks", name);
    lua_pushfstring(L, "%s: %s", name, value);
    lua_rawseti(L, h + 1, ++n);
    if (secret) {
      lua_pushstring(L, value);
      lua_rawseti(L, h + 2, ++k);
    }
  }
  *lines = string_array(L, h + 1);
  *secrets = string_array(L, h + 2);
}

/* $OPENAI_BASE_URL, else OpenAI's: the operator's judge server. */
static const char *home_url(void) {
  const char *home = getenv("OPENAI_BASE_URL");
  return home && *home ? home : "https://api.openai.com/v1";
}

/* Under --sandbox a script may reach only what the operator named in the
 * environment: $OPENAI_BASE_URL (else OpenAI's) and the URLs listed,
 * separated by spaces, in $EVALUA_JUDGE_URLS, each with every path below
 * it (url_under: a prefix at a '/' boundary, not a host). Otherwise any
 * request body a script builds (a file it may read, say) could be posted
 * anywhere. */
static int allowed_url(const char *url) {
  const char *list = getenv("EVALUA_JUDGE_URLS");
  if (url_under(url, home_url())) return 1;
  for (const char *p = list; p && *p;) {
    p += strspn(p, " \t\n");
    size_t n = strcspn(p, " \t\n");
    char one[1024];
    if (n > 0 && n < sizeof one) {
      memcpy(one, p, n);
      one[n] = '\0';
      if (url_under(url, one)) return 1;
    }
    p += n;
  }
  return 0;
}

/* The key to send. Under --sandbox a script cannot pick which secret to
 * read, and the key goes only to the server the operator configured
 * ($OPENAI_BASE_URL, else OpenAI's): elsewhere no key is sent. */
static const char *api_key(lua_State *L, int t, const char *base_url) {
  if (lua_getfield(L, t, "api_key") != LUA_TNIL)
    luaL_error(L, "judge option 'api_key' is not accepted: name the environment variable "
                  "that holds the key with api_key_env (default OPENAI_API_KEY)");
  lua_pop(L, 1);
  if (lua_getfield(L, t, "api_key_env") == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    return NULL; /* api_key_env = false: send no key */
  }
  lua_pop(L, 1);
  const char *var = opt_string(L, t, "api_key_env", "OPENAI_API_KEY");
  if (evalua_runtime(L)->sandbox) {
    if (strcmp(var, "OPENAI_API_KEY"))
      luaL_error(L, "judge option 'api_key_env' is not available in --sandbox mode");
    if (!url_same(base_url, home_url())) return NULL;
  }
  return getenv(var);
}

/* ---- the engine ---------------------------------------------------------- */

static struct engine_ud *check_engine(lua_State *L) {
  struct engine_ud *u = luaL_checkudata(L, 1, ENGINE_MT);
  if (!u->e) evalua_closed(L, 1);
  return u;
}

/* A misspelt option would otherwise be ignored without a word. */
static void check_engine_options(lua_State *L, int t) {
  static const char *const known[] = {
    "base_url", "api_key_env", "api_key", "headers", "ca_file", "concurrency", "timeout_ms",
    "connect_timeout_ms", "max_retries", "backoff_ms", "max_backoff_ms", "max_wait_ms", "rpm", "tpm",
    "seed", "max_response_bytes", NULL};
  for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    int i = 0;
    while (k && known[i] && strcmp(k, known[i])) i++;
    if (!k || !known[i]) luaL_error(L, "judge engine: unknown option '%s'", k ? k : luaL_typename(L, -2));
  }
}

/* The base URL to send to: option base_url, else $OPENAI_BASE_URL (else
 * OpenAI's). Lua sees $OPENAI_BASE_URL without its credentials (env()), so
 * a base_url that is that URL without userinfo means it, credentials
 * included: they never pass through Lua. */
static const char *base_url(lua_State *L, int t) {
  const char *url = opt_string(L, t, "base_url", NULL), *home = home_url();
  struct url u;
  if (!url || (!url_split(url, &u) && !u.userinfo && url_same(url, home))) return home;
  return url;
}

/* engine{base_url=, api_key_env=, headers=, concurrency=, ...} */
/* The engine's meter: its requests and answers count against --mem-limit
 * with the Lua state's bytes (host/runtime/state.c, evalua_charge). */
static int meter_charge(void *ud, size_t bytes) { return evalua_charge(ud, bytes); }
static void meter_uncharge(void *ud, size_t bytes) { evalua_uncharge(ud, bytes); }

static int l_engine(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_engine_options(L, 1);
  struct client_config c;
  client_config_defaults(&c);
  c.base_url = base_url(L, 1);
  if (evalua_runtime(L)->sandbox && !allowed_url(c.base_url))
    luaL_error(L, "judge: base_url '%s' is not allowed in --sandbox mode (only $OPENAI_BASE_URL "
                  "and the URLs in $EVALUA_JUDGE_URLS, with the paths below them)", c.base_url);
  c.ca_file = opt_string(L, 1, "ca_file", NULL);
  if (c.ca_file) evalua_check_path(L, c.ca_file, 0); /* the sandbox's read rule */
  c.concurrency = (int)opt_range(L, 1, "concurrency", c.concurrency, 1, 10000, 1);
  c.timeout_ms = (long)opt_range(L, 1, "timeout_ms", (double)c.timeout_ms, 1, MAX_MS, 0);
  c.connect_timeout_ms = (long)opt_range(L, 1, "connect_timeout_ms", (double)c.connect_timeout_ms, 1, MAX_MS, 0);
  c.max_retries = (int)opt_range(L, 1, "max_retries", c.max_retries, 0, 1000, 1);
  c.backoff_ms = opt_number(L, 1, "backoff_ms", c.backoff_ms, 0);
  c.max_backoff_ms = opt_number(L, 1, "max_backoff_ms", c.max_backoff_ms, 0);
  c.max_wait_ms = opt_number(L, 1, "max_wait_ms", c.max_wait_ms, 0);
  c.rpm = opt_number(L, 1, "rpm", 0, 0);
  c.tpm = opt_number(L, 1, "tpm", 0, 0);
  c.seed = (uint64_t)opt_range(L, 1, "seed", 0, 0, 9007199254740992.0, 1);
  c.max_response_bytes = (size_t)opt_range(L, 1, "max_response_bytes", (double)c.max_response_bytes, 1024, 1e12, 1);
  /* one answer at most this large under --sandbox, besides --mem-limit, which counts it */
  if (evalua_runtime(L)->sandbox && c.max_response_bytes > SANDBOX_MAX_RESPONSE)
    luaL_error(L, "judge option 'max_response_bytes' above %d is not available in --sandbox mode",
               (int)SANDBOX_MAX_RESPONSE);
  collect_headers(L, 1, &c.headers, &c.secrets);
  c.api_key = api_key(L, 1, c.base_url);
  c.meter = (struct client_meter){meter_charge, meter_uncharge, evalua_runtime(L)};
  struct engine_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->e = NULL;
  u->n = u->next = 0;
  luaL_setmetatable(L, ENGINE_MT);
  const char *err;
  u->e = client_engine_new(&c, &err);
  if (!u->e) luaL_error(L, "judge: %s", err);
  return 1;
}

/* Letters, digits and _ only: the name goes into a header line. */
static int operation_name_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if (!(isalnum((unsigned char)s[n]) || s[n] == '_')) return 0;
  return n > 0 && n <= 100;
}

/* The arguments submit and retry share from index i: path, body, est,
 * operation. */
struct submission { const char *path, *body, *operation; size_t len; double est; };

static struct submission check_submission(lua_State *L, int i) {
  struct submission s;
  s.path = luaL_checkstring(L, i);
  s.body = luaL_checklstring(L, i + 1, &s.len);
  s.est = luaL_optnumber(L, i + 2, 0);
  s.operation = luaL_optstring(L, i + 3, NULL);
  luaL_argcheck(L, !*s.path || s.path[0] == '/', i, "path must be empty or start with '/'");
  luaL_argcheck(L, s.est >= 0 && s.est <= 1e15, i + 2, "an estimate of tokens from 0 to 1e15");
  luaL_argcheck(L, !s.operation || operation_name_ok(s.operation), i + 3,
                "operation must be a word of at most 100 characters");
  return s;
}

static int push_id(lua_State *L, uint64_t id, int path_arg) {
  if (!id && errno == EACCES) luaL_argerror(L, path_arg, "the path leaves the base URL's path");
  if (!id && errno == EINVAL)
    luaL_argerror(L, path_arg, "the path holds an encoded slash or backslash, a backslash, '#', a space or a control character");
  if (!id) return evalua_nomem(L); /* the --mem-limit message when the cap refused it */
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* engine:submit(path, body [, est_tokens [, operation]]) -> id */
static int l_submit(lua_State *L) {
  struct engine_ud *u = check_engine(L);
  struct submission s = check_submission(L, 2);
  return push_id(L, client_engine_submit(u->e, s.path, s.body, s.len, s.est, s.operation), 2);
}

/* engine:retry(result, path, body [, est_tokens [, operation]]) -> id, or
 * nil when result's request made every attempt allowed: the engine decides
 * (client_engine_retry), for an answer the caller could not use. */
static int l_retry(lua_State *L) {
  struct engine_ud *u = check_engine(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  struct submission s = check_submission(L, 3);
  lua_getfield(L, 2, "attempts");
  int isnum;
  lua_Integer attempts = lua_tointegerx(L, -1, &isnum);
  luaL_argcheck(L, isnum && attempts >= 1 && attempts <= INT_MAX, 2, "a finished request's result (attempts >= 1)");
  lua_pop(L, 1);
  struct client_result prev = {.attempts = (int)attempts};
  uint64_t id = client_engine_retry(u->e, &prev, s.path, s.body, s.len, s.est, s.operation);
  if (!id && errno == ERANGE) return lua_pushnil(L), 1;
  return push_id(L, id, 3);
}

/* engine:waiting() -> requests waiting out a backoff or Retry-After */
static int l_waiting(lua_State *L) {
  lua_pushinteger(L, client_engine_waiting(check_engine(L)->e));
  return 1;
}

static void push_result(lua_State *L, struct client_result *r) {
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, (lua_Integer)r->id);
  lua_setfield(L, -2, "id");
  lua_pushinteger(L, r->status);
  lua_setfield(L, -2, "status");
  lua_pushlstring(L, r->body ? r->body : "", r->body ? r->body_len : 0);
  lua_setfield(L, -2, "body");
  if (r->error) {
    lua_pushstring(L, r->error);
    lua_setfield(L, -2, "error");
  }
  lua_pushinteger(L, r->attempts);
  lua_setfield(L, -2, "attempts");
  lua_pushboolean(L, r->retryable);
  lua_setfield(L, -2, "retryable");
  lua_pushnumber(L, r->latency_ms);
  lua_setfield(L, -2, "latency_ms");
  lua_pushnumber(L, r->wait_ms);
  lua_setfield(L, -2, "wait_ms");
}

/* Frees results a memory error interrupted before they reached Lua. */
static void drop_batch(struct engine_ud *u) {
  for (int i = u->next; i < u->n; i++) client_result_free(&u->batch[i]);
  u->n = u->next = 0;
}

/* Pushes the ids of requests that began waiting out a Retry-After since
 * the last poll (client_engine_parked) as a list, or nothing; returns how
 * many values it pushed. */
static int push_parked(lua_State *L, struct client_engine *e) {
  uint64_t ids[64];
  int n = client_engine_parked(e, ids, 64);
  if (n == 0) return 0;
  lua_createtable(L, n, 0);
  for (int k = 0; n > 0; n = client_engine_parked(e, ids, 64))
    for (int i = 0; i < n; i++) {
      lua_pushinteger(L, (lua_Integer)ids[i]);
      lua_rawseti(L, -2, ++k);
    }
  return 1;
}

/* poll(timeout_ms) -> {result...} [, {id...}]: waits up to timeout_ms for
 * one to finish; the second list, when there is one, names the requests
 * that began waiting out a server's Retry-After since the last poll. */
static int l_poll(lua_State *L) {
  struct engine_ud *u = check_engine(L);
  lua_Integer timeout = luaL_optinteger(L, 2, 0);
  timeout = timeout < 0 ? 0 : timeout > 86400000 ? 86400000 : timeout; /* at most a day */
  drop_batch(u);
  u->n = client_engine_poll(u->e, (long)timeout, u->batch, POLL_MAX);
  for (int i = 0; i < u->n; i++)
    if (u->batch[i].nomem) { /* an answer refused by the cap ends the run, as a Lua allocation would */
      drop_batch(u);
      return evalua_nomem(L);
    }
  lua_createtable(L, u->n, 0);
  while (u->next < u->n) {
    struct client_result *r = &u->batch[u->next];
    push_result(L, r);
    client_result_free(r);
    u->next++;
    lua_rawseti(L, -2, u->next);
  }
  u->n = u->next = 0;
  return 1 + push_parked(L, u->e);
}

/* wait_any({engine...}, max_ms): sleeps until one of the engines has news
 * or needs a poll, at most max_ms; a map over several judges waits here
 * instead of polling each in turn. */
static int l_wait_any(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer max = luaL_checkinteger(L, 2);
  struct pollfd fds[32];
  int n = 0;
  long timeout = max < 0 ? 0 : max > 86400000 ? 86400000 : (long)max;
  for (lua_Integer i = 1; n < 32 && lua_rawgeti(L, 1, i) != LUA_TNIL; i++, lua_pop(L, 1)) {
    struct engine_ud *u = luaL_checkudata(L, -1, ENGINE_MT);
    if (!u->e) continue;
    long t = client_engine_timeout(u->e);
    if (t >= 0 && t < timeout) timeout = t;
    fds[n++] = (struct pollfd){.fd = client_engine_fd(u->e), .events = POLLIN};
  }
  lua_pop(L, 1);
  if (n > 0 && timeout > 0) poll(fds, (nfds_t)n, (int)timeout);
  return 0;
}

static int l_cancel(lua_State *L) {
  struct engine_ud *u = check_engine(L);
  lua_pushboolean(L, client_engine_cancel(u->e, (uint64_t)luaL_checkinteger(L, 2)));
  return 1;
}

static int l_pending(lua_State *L) {
  lua_pushinteger(L, client_engine_pending(check_engine(L)->e));
  return 1;
}

static int l_adjust_tokens(lua_State *L) {
  client_engine_adjust_tokens(check_engine(L)->e, luaL_checknumber(L, 2));
  return 0;
}

static int l_has_key(lua_State *L) {
  lua_pushboolean(L, client_engine_has_key(check_engine(L)->e));
  return 1;
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static int l_stats(lua_State *L) {
  struct client_stats s;
  client_engine_stats(check_engine(L)->e, &s);
  lua_createtable(L, 0, 10);
  set_int(L, "submitted", s.submitted);
  set_int(L, "attempts", s.attempts);
  set_int(L, "retries", s.retries);
  set_int(L, "done", s.done);
  set_int(L, "rate_limited", s.rate_limited);
  set_int(L, "cancelled", s.cancelled);
  set_int(L, "in_flight", s.in_flight);
  set_int(L, "queued", s.queued);
  set_int(L, "peak_in_flight", s.peak_in_flight);
  set_int(L, "waits", s.waits);
  lua_pushnumber(L, s.window);
  lua_setfield(L, -2, "window");
  return 1;
}

static int l_close(lua_State *L) {
  struct engine_ud *u = luaL_checkudata(L, 1, ENGINE_MT);
  drop_batch(u);
  client_engine_free(u->e);
  u->e = NULL;
  return 0;
}

static int l_tostring(lua_State *L) {
  struct engine_ud *u = luaL_checkudata(L, 1, ENGINE_MT);
  lua_pushfstring(L, "judge engine (%s)", u->e ? "open" : "closed");
  return 1;
}

/* ---- the cache ------------------------------------------------------------ */

static int l_cache_key(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  char hex[65];
  if (client_cache_key(s, n, hex)) return luaL_error(L, "sha256 failed");
  lua_pushlstring(L, hex, 64);
  return 1;
}

/* A malloc'd block freed by __gc, so a memory error cannot leak it. */
static int box_gc(lua_State *L) {
  void **p = luaL_checkudata(L, 1, BOX_MT);
  free(*p);
  *p = NULL;
  return 0;
}

/* A cache store (cache_writer.h) as a userdata: the folder opened once,
 * beneath --out under the sandbox, which entries are read and written
 * relative to. */
struct store_ud {
  struct cache_store *s;
  const char *dir; /* in the user value */
};

static struct store_ud *check_store(lua_State *L) {
  struct store_ud *u = luaL_checkudata(L, 1, STORE_MT);
  if (!u->s) evalua_closed(L, 1);
  return u;
}

/* store:get(key) -> data | nil (absent) | nil, message */
static int l_store_get(lua_State *L) {
  struct store_ud *u = check_store(L);
  const char *key = luaL_checkstring(L, 2);
  void **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  luaL_setmetatable(L, BOX_MT);
  size_t len = 0;
  int not_regular = 0;
  *box = cache_store_get(u->s, key, &len, &not_regular);
  if (!*box) {
    if (!not_regular && (errno == ENOENT || errno == ENOTDIR)) return 0;
    luaL_pushfail(L);
    lua_pushfstring(L, "cannot read judge cache entry %s in '%s': %s", key, u->dir,
                    not_regular ? "not a regular file"
                    : errno == ELOOP ? "a symbolic link on the way (not followed under --sandbox)" : strerror(errno));
    return 2;
  }
  lua_pushlstring(L, *box, len);
  free(*box);
  *box = NULL;
  return 1;
}

/* store:put(key, data [, sink]) -> true | nil, message. The entry is
 * journaled and written behind (cache_writer.h); a later failure is
 * reported by cache_failures with sink, a number naming whoever accounts
 * for it. */
static int l_store_put(lua_State *L) {
  struct store_ud *u = check_store(L);
  const char *key = luaL_checkstring(L, 2);
  size_t n;
  const char *data = luaL_checklstring(L, 3, &n);
  lua_Integer sink = luaL_optinteger(L, 4, 0);
  luaL_argcheck(L, sink >= 0 && sink <= INT_MAX, 4, "a sink from cache_sink");
  int r = cache_writer_put(u->s, key, data, n, (int)sink);
  if (r) {
    luaL_pushfail(L);
    lua_pushfstring(L, r == -2 ? "cannot journal judge cache entry in '%s': %s (not safe from a kill)"
                               : "cannot write judge cache entry in '%s': %s", u->dir, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* store:recovered() -> what the replay of killed runs' journals found when
 * the store opened, {journals=, entries=, torn=, failed=, error=}, once; nil
 * after, or when there was nothing. */
static int l_store_recovered(lua_State *L) {
  struct journal_replay r;
  if (!cache_store_take_replay(check_store(L)->s, &r) || !(r.journals || r.entries || r.torn || r.failed)) return 0;
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, r.journals);
  lua_setfield(L, -2, "journals");
  lua_pushinteger(L, r.entries);
  lua_setfield(L, -2, "entries");
  lua_pushinteger(L, r.torn);
  lua_setfield(L, -2, "torn");
  lua_pushinteger(L, r.failed);
  lua_setfield(L, -2, "failed");
  if (r.err) {
    lua_pushstring(L, strerror(r.err));
    lua_setfield(L, -2, "error");
  }
  return 1;
}

static int l_store_close(lua_State *L) {
  struct store_ud *u = luaL_checkudata(L, 1, STORE_MT);
  cache_store_release(u->s);
  u->s = NULL;
  return 0;
}

/* cache_sink() -> a number for store:put that no other writer in the
 * process has. */
static int l_cache_sink(lua_State *L) {
  lua_pushinteger(L, cache_writer_new_sink());
  return 1;
}

/* The failures not yet handed to Lua, freed by __gc if a memory error
 * stops the hand-over. */
static int failures_gc(lua_State *L) {
  struct cache_failure **p = luaL_checkudata(L, 1, FAILURES_MT);
  while (*p) {
    struct cache_failure *next = (*p)->next;
    free(*p);
    *p = next;
  }
  return 0;
}

/* cache_failures([settle]) -> {{sink=, error=}...}: the failed writes
 * since the last call, after every queued entry is written when settle. */
static int l_cache_failures(lua_State *L) {
  if (lua_toboolean(L, 1)) cache_writer_settle();
  struct cache_failure **left = lua_newuserdatauv(L, sizeof *left, 0);
  *left = NULL;
  luaL_setmetatable(L, FAILURES_MT);
  *left = cache_writer_failures();
  lua_newtable(L);
  for (int i = 1; *left; i++) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (*left)->sink);
    lua_setfield(L, -2, "sink");
    lua_pushstring(L, (*left)->message);
    lua_setfield(L, -2, "error");
    lua_rawseti(L, -2, i);
    struct cache_failure *next = (*left)->next;
    free(*left);
    *left = next;
  }
  return 1;
}

/* The judge cache folder dir as a descriptor, created (with its parents)
 * for writing. Under the sandbox it is opened beneath --out (or --read)
 * with no symbolic link on the way, as every other file is (evalua_at); in
 * the trusted profile links are followed, as io.open follows them. -1 with
 * errno = ENOENT for a folder to read that does not exist; raises on
 * anything else. */
static int open_cache_dir(lua_State *L, const char *dir, int write) {
  struct evalua_at at;
  if (!evalua_runtime(L)->sandbox && write && evalua_make_dir(dir))
    luaL_error(L, "cannot create the judge cache folder '%s': %s", dir, strerror(errno));
  if (evalua_at(L, dir, write, write, &at)) {
    if (!write && errno == ENOENT) { /* nothing to read yet */
      lua_pop(L, 1);
      return errno = ENOENT, -1;
    }
    lua_error(L); /* the sandbox's message */
  }
  if (write && evalua_at_flags(&at) && mkdirat(at.dirfd, at.name, 0777) && errno != EEXIST) {
    int e = errno;
    evalua_at_release(&at);
    luaL_error(L, "cannot create the judge cache folder '%s': %s", dir, strerror(e));
  }
  int fd = openat(at.dirfd, at.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | evalua_at_flags(&at)), e = errno;
  struct stat st;
  int link = fd < 0 && evalua_at_flags(&at) && !fstatat(at.dirfd, at.name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
  evalua_at_release(&at);
  if (fd >= 0 || (e == ENOENT && !write)) return errno = e, fd;
  if (link || e == ELOOP)
    luaL_error(L, "sandbox: %s access to '%s' is not allowed (no symbolic links under --sandbox)",
               write ? "write" : "read", dir);
  if (e == ENOTDIR) luaL_error(L, "the judge cache '%s' is not a folder", dir);
  luaL_error(L, "cannot open the judge cache folder '%s': %s", dir, strerror(e));
  return -1;
}

/* cache_open(dir, write) -> store, or nil for a folder to read that does
 * not exist. For writing, creates dir and replays the journals of killed
 * runs into entries (store:recovered() says what that found). Raises when
 * not allowed. */
static int l_cache_open(lua_State *L) {
  size_t n;
  const char *dir = luaL_checklstring(L, 1, &n);
  int write = lua_toboolean(L, 2);
  luaL_argcheck(L, n > 0, 1, "empty folder name");
  struct store_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->s = NULL;
  u->dir = dir;
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1); /* keeps dir alive */
  luaL_setmetatable(L, STORE_MT);
  int fd = open_cache_dir(L, dir, write);
  if (fd < 0) return 0;
  u->s = cache_store_open(fd, dir, evalua_runtime(L)->sandbox, write);
  if (!u->s) return luaL_error(L, "cannot open the judge cache folder '%s': %s", dir, strerror(errno));
  return 1;
}

/* ---- environment ------------------------------------------------------------ */

static void set_env(lua_State *L, const char *field, const char *var) {
  const char *v = getenv(var);
  if (v && *v) {
    lua_pushstring(L, v);
    lua_setfield(L, -2, field);
  }
}

/* env() -> the judge's non-secret settings from the environment, readable
 * even in --sandbox where os.getenv is gone; $OPENAI_BASE_URL without its
 * credentials (user:password@). */
static int l_env(lua_State *L) {
  lua_newtable(L);
  const char *home = getenv("OPENAI_BASE_URL");
  struct url u;
  if (home && *home && !url_split(home, &u) && u.userinfo) {
    lua_pushlstring(L, home, (size_t)(u.userinfo - home));
    lua_pushstring(L, u.host);
    lua_concat(L, 2);
    lua_setfield(L, -2, "base_url");
  } else {
    set_env(L, "base_url", "OPENAI_BASE_URL");
  }
  set_env(L, "model", "EVALUA_MODEL");
  set_env(L, "dry_run", "EVALUA_DRY_RUN");
  set_env(L, "cache_dir", "EVALUA_CACHE_DIR");
  return 1;
}

/* default_cache_dir() -> path | nil: $EVALUA_CACHE_DIR, $XDG_CACHE_HOME/evalua/judge,
 * ~/.cache/evalua/judge; under --sandbox, OUT/.evalua-cache/judge. */
static int l_default_cache_dir(lua_State *L) {
  struct evalua_runtime *rt = evalua_runtime(L);
  const char *v;
  if (rt->sandbox) {
    if (!rt->out_dir) return 0;
    lua_pushfstring(L, "%s/.evalua-cache/judge", rt->out_dir);
  } else if ((v = getenv("EVALUA_CACHE_DIR")) && *v) {
    lua_pushstring(L, v);
  } else if ((v = getenv("XDG_CACHE_HOME")) && *v == '/') {
    lua_pushfstring(L, "%s/evalua/judge", v);
  } else if ((v = getenv("HOME")) && *v) {
    lua_pushfstring(L, "%s/.cache/evalua/judge", v);
  } else {
    return 0;
  }
  return 1;
}

static const luaL_Reg engine_methods[] = {
  {"submit", l_submit}, {"retry", l_retry},     {"poll", l_poll},   {"cancel", l_cancel},
  {"pending", l_pending}, {"waiting", l_waiting}, {"stats", l_stats}, {"has_key", l_has_key},
  {"adjust_tokens", l_adjust_tokens}, {"close", l_close}, {NULL, NULL},
};

static const luaL_Reg engine_meta[] = {
  {"__gc", l_close}, {"__close", l_close}, {"__tostring", l_tostring}, {NULL, NULL},
};

static const luaL_Reg store_methods[] = {
  {"get", l_store_get}, {"put", l_store_put}, {"recovered", l_store_recovered}, {"close", l_store_close},
  {NULL, NULL},
};

static const luaL_Reg store_meta[] = {{"__gc", l_store_close}, {"__close", l_store_close}, {NULL, NULL}};

static const luaL_Reg client_funcs[] = {
  {"engine", l_engine},       {"cache_key", l_cache_key},   {"cache_open", l_cache_open},
  {"cache_failures", l_cache_failures},
  {"cache_sink", l_cache_sink}, {"wait_any", l_wait_any},   {"env", l_env},
  {"default_cache_dir", l_default_cache_dir},
  {NULL, NULL},
};

/* Empty objects of each type, for tests that walk every type (udata.h). */
static int make_engine(lua_State *L) {
  lua_settop(L, 0);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "http://127.0.0.1:9/v1");
  lua_setfield(L, 1, "base_url");
  return l_engine(L);
}

static int make_box(lua_State *L) {
  *(void **)lua_newuserdatauv(L, sizeof(void *), 0) = NULL;
  luaL_setmetatable(L, BOX_MT);
  return 1;
}

static int make_store(lua_State *L) {
  struct store_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->s = NULL, u->dir = "";
  luaL_setmetatable(L, STORE_MT);
  return 1;
}

static int make_failures(lua_State *L) {
  *(struct cache_failure **)lua_newuserdatauv(L, sizeof(struct cache_failure *), 0) = NULL;
  luaL_setmetatable(L, FAILURES_MT);
  return 1;
}

int luaopen_evalua_client(lua_State *L) {
  if (evalua_newclass(L, ENGINE_MT, make_engine)) {
    luaL_setfuncs(L, engine_meta, 0);
    luaL_newlib(L, engine_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (evalua_newclass(L, BOX_MT, make_box)) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (evalua_newclass(L, STORE_MT, make_store)) {
    luaL_setfuncs(L, store_meta, 0);
    luaL_newlib(L, store_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (evalua_newclass(L, FAILURES_MT, make_failures)) {
    lua_pushcfunction(L, failures_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_newlib(L, client_funcs);
  return 1;
}
