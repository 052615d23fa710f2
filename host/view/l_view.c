/* evalua._view: serve{port=, handler=, on_ready=, on_idle=} runs the viewer's server
 * until SIGINT or SIGTERM; assets() gives the embedded app's files (for
 * --export). Only `evalua view` preloads it (view_cmd.c): a script run by
 * `evalua run` cannot open a listening socket through it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <microhttpd.h>

#include "app_assets.h"
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

int luaopen_evalua_view(lua_State *L);
int luaopen_evalua_view(lua_State *L) {
  static const luaL_Reg fns[] = {{"serve", l_serve}, {"assets", l_assets}, {"exe", l_exe}, {"realpath", l_realpath},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
