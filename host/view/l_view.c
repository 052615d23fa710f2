/* evalua._view: serve{port=, handler=, on_ready=, on_idle=} runs the viewer's server
 * until SIGINT or SIGTERM; assets() gives the embedded app's files (for
 * --export). Only `evalua view` preloads it (view_cmd.c): a script run by
 * `evalua run` cannot open a listening socket through it. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <microhttpd.h>

#include "app_assets.h"
#include "fts_build.h"
#include "server.h"

static volatile sig_atomic_t stop_requested;

/* The first SIGINT or SIGTERM stops the server after the request at hand;
 * a second one, while a long request keeps it busy, ends the process. */
static void on_signal(int sig) {
  if (stop_requested) _exit(128 + sig);
  stop_requested = 1;
}

struct lua_api {
  lua_State *L;
  int handler; /* stack index of the handler */
};

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  lua_State *L = cls;
  lua_pushstring(L, value ? value : "");
  lua_setfield(L, -2, key);
  return MHD_YES;
}

/* Calls handler(method, path, args, body) -> status, body [, type]. A Lua
 * error answers 500 with its message, also written to stderr. The reply's
 * body stays on the stack until the server copied it (the next call pops). */
static void call_lua(void *ctx, const struct view_request *req, struct view_reply *rep) {
  struct lua_api *api = ctx;
  lua_State *L = api->L;
  lua_settop(L, api->handler);
  lua_pushvalue(L, api->handler);
  lua_pushstring(L, req->method);
  lua_pushstring(L, req->url);
  lua_newtable(L);
  MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, add_arg, L);
  if (req->body) lua_pushlstring(L, req->body, req->body_len);
  else lua_pushnil(L);
  if (lua_pcall(L, 4, 3, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    lua_writestringerror("evalua view: %s\n", msg ? msg : "(error object is not a string)");
    rep->status = 500;
    rep->type = "text/plain; charset=utf-8";
    rep->body = msg ? msg : "500: error\n";
    rep->len = strlen(rep->body);
    return;
  }
  lua_Integer status = lua_tointeger(L, -3);
  rep->status = status >= 100 && status <= 599 ? (int)status : 500;
  rep->body = lua_tolstring(L, -2, &rep->len);
  if (!rep->body) rep->body = "", rep->len = 0;
  rep->type = lua_isstring(L, -1) ? lua_tostring(L, -1) : "application/json; charset=utf-8";
}

/* Calls on_idle() -> true while it has more to do. An error is written to stderr and ends the idle
 * work (a request that needs it meets the same error and answers it). */
static int call_idle(void *ctx) {
  struct lua_api *api = ctx;
  lua_State *L = api->L;
  lua_settop(L, api->handler);
  lua_pushvalue(L, api->handler - 1);
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    lua_writestringerror("evalua view: %s\n", msg ? msg : "(error object is not a string)");
    return 0;
  }
  return lua_toboolean(L, -1);
}

static unsigned opt_port(lua_State *L) {
  lua_getfield(L, 1, "port");
  lua_Integer port = luaL_optinteger(L, -1, 0);
  luaL_argcheck(L, port >= 0 && port <= 65535, 1, "port: expected 0 (a free port) to 65535");
  lua_pop(L, 1);
  return (unsigned)port;
}

static int l_serve(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  unsigned port = opt_port(L);
  lua_settop(L, 1);
  lua_getfield(L, 1, "on_ready"); /* 2 */
  lua_getfield(L, 1, "on_idle");  /* 3 */
  lua_getfield(L, 1, "handler");  /* 4 */
  luaL_argcheck(L, lua_isfunction(L, 4), 1, "handler: expected a function");
  struct lua_api api = {L, 4};
  struct view_server s = {0};
  s.api = call_lua;
  if (lua_isfunction(L, 3)) s.idle = call_idle;
  s.ctx = &api;
  if (view_token_new(s.token) != 0) return luaL_error(L, "evalua view: the system gives no random bytes for a token");
  if (view_server_start(&s, port) != 0)
    return luaL_error(L, "evalua view: cannot listen on 127.0.0.1:%d: %s", (int)port, strerror(errno));
  if (lua_isfunction(L, 2)) {
    lua_pushvalue(L, 2);
    lua_pushfstring(L, "http://127.0.0.1:%d/?token=%s", (int)s.port, s.token);
    lua_pushinteger(L, s.port);
    lua_pushstring(L, s.token);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
      view_server_stop(&s);
      return lua_error(L);
    }
  }
  struct sigaction sa = {0}, old_int, old_term;
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  stop_requested = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  signal(SIGPIPE, SIG_IGN); /* a browser closing a connection mid-answer */
  view_server_run(&s, &stop_requested);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  view_server_stop(&s);
  return 0;
}

static int l_assets(lua_State *L) {
  lua_newtable(L);
  for (const struct evalua_view_asset *a = evalua_view_assets; a->path; a++) {
    lua_pushlstring(L, (const char *)a->data, a->len);
    lua_setfield(L, -2, a->path + 1); /* "index.html" */
  }
  return 1;
}

/* exe() -> the path of this binary, to run a bundled script with it. */
static int l_exe(lua_State *L) {
  char *real = realpath("/proc/self/exe", NULL);
  if (!real) return luaL_error(L, "evalua view: cannot find its own binary: %s", strerror(errno));
  lua_pushstring(L, real);
  free(real);
  return 1;
}

/* realpath(path) -> the canonical path, or nil and why (the cache's name for a store). */
static int l_realpath(lua_State *L) {
  char *real = realpath(luaL_checkstring(L, 1), NULL);
  if (!real) {
    luaL_pushfail(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushstring(L, real);
  free(real);
  return 1;
}

/* read_report(path) -> the file's bytes, their SHA-256 (hex); or nil and why. The file is mapped and
 * hashed on a second thread while this one copies it into the Lua string (244 MB: 0.2 s in place of
 * 0.5 s for Lua's read("a") and the hash after it: most of it is the kernel's zeroing of new pages).
 * evalua writes its reports by rename, which leaves a mapped file whole. */
struct hash_job {
  const void *p;
  size_t n;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len;
  int ok;
};

static void *hash_main(void *arg) {
  struct hash_job *j = arg;
  j->ok = EVP_Digest(j->p, j->n, j->md, &j->len, EVP_sha256(), NULL);
  return NULL;
}

static int push_bytes(lua_State *L) {
  lua_pushlstring(L, lua_touserdata(L, 1), (size_t)lua_tointeger(L, 2));
  return 1;
}

static int l_read_report(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = fd < 0 || !S_ISREG(st.st_mode) ? (fd < 0 ? errno : EISDIR) : errno;
    if (fd >= 0) close(fd);
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(err));
    return 2;
  }
  struct hash_job j = {.n = (size_t)st.st_size, .p = ""};
  if (j.n > 0) j.p = mmap(NULL, j.n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);
  if (j.p == MAP_FAILED) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(err));
    return 2;
  }
  pthread_t th;
  int threaded = pthread_create(&th, NULL, hash_main, &j) == 0;
  lua_pushcfunction(L, push_bytes); /* protected: a memory error must not leave the thread running */
  lua_pushlightuserdata(L, (void *)j.p);
  lua_pushinteger(L, (lua_Integer)j.n);
  int rc = lua_pcall(L, 2, 1, 0);
  if (threaded) pthread_join(th, NULL);
  else hash_main(&j);
  if (j.n > 0) munmap((void *)j.p, j.n);
  if (rc != LUA_OK) return lua_error(L);
  if (!j.ok) return luaL_error(L, "evalua view: SHA-256 is not available");
  char hex[2 * EVP_MAX_MD_SIZE + 1];
  for (unsigned i = 0; i < j.len; i++) snprintf(hex + 2 * i, 3, "%02x", j.md[i]);
  lua_pushlstring(L, hex, 2 * j.len);
  return 2;
}

/* index_texts{db =, report =, resume =, setup =, rows =, insert =, progress =, finish =} -> a builder of a run's full-text
 * index on a thread of its own (fts_build.h); builder:state() -> "building" | "built" | "failed",
 * seconds, why. Collected (or closed), it stops a build still running and waits for its thread. */
#define FTS_MT "evalua.view.fts_build"

static const char *field(lua_State *L, const char *name, int optional) {
  lua_getfield(L, 1, name);
  const char *s = lua_tostring(L, -1);
  if (!s && !optional) luaL_error(L, "index_texts: %s: expected a string", name);
  lua_pop(L, 1); /* the table keeps it */
  return s;
}

static int l_index_texts(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  struct fts_build_sql sql = {field(L, "resume", 0), field(L, "setup", 0),    field(L, "rows", 0),
                             field(L, "insert", 0), field(L, "progress", 0), field(L, "finish", 0)};
  const char *db = field(L, "db", 0), *report = field(L, "report", 1);
  struct fts_build **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = NULL;
  luaL_setmetatable(L, FTS_MT);
  char err[300];
  *ud = fts_build_start(db, report, &sql, err, sizeof err);
  if (!*ud) return luaL_error(L, "evalua view: the search index cannot be built in the background: %s", err);
  return 1;
}

static int fts_state(lua_State *L) {
  struct fts_build **ud = luaL_checkudata(L, 1, FTS_MT);
  if (!*ud) return luaL_error(L, "index_texts: the builder is closed");
  const char *why;
  double secs;
  int state = fts_build_state(*ud, &why, &secs);
  lua_pushstring(L, state == 0 ? "building" : state > 0 ? "built" : "failed");
  lua_pushnumber(L, secs);
  if (state < 0) lua_pushstring(L, why);
  return state < 0 ? 3 : 2;
}

static int fts_close(lua_State *L) {
  struct fts_build **ud = luaL_checkudata(L, 1, FTS_MT);
  fts_build_free(*ud);
  *ud = NULL;
  return 0;
}

int luaopen_evalua_view(lua_State *L);
int luaopen_evalua_view(lua_State *L) {
  static const luaL_Reg fns[] = {{"serve", l_serve}, {"assets", l_assets}, {"exe", l_exe}, {"realpath", l_realpath},
                                 {"read_report", l_read_report}, {"index_texts", l_index_texts}, {NULL, NULL}};
  static const luaL_Reg builder[] = {{"state", fts_state}, {"close", fts_close}, {"__gc", fts_close}, {NULL, NULL}};
  if (luaL_newmetatable(L, FTS_MT)) {
    luaL_setfuncs(L, builder, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
