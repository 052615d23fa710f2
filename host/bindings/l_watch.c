/* evalua._watch: waits for files to change, with inotify, for --watch modes.
 *
 *   local w = watch.open{ "prompts", "data/rows.jsonl" }   -- folders or files
 *   local changed = w:wait(timeout_ms)   -- list of paths, {} on timeout
 *
 * A file is watched through its folder, so an editor that saves by writing a
 * new file and renaming it over the old one is seen too. Events that arrive
 * within the settle time of the first are reported together. */
#define _GNU_SOURCE
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define WATCH_MT "evalua.Watch"
#define SETTLE_MS 100
#define MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM)

struct watch {
  int fd;
};

static struct watch *check_watch(lua_State *L) {
  struct watch *w = luaL_checkudata(L, 1, WATCH_MT);
  if (w->fd < 0) evalua_closed(L, 1);
  return w;
}

/* The folder and the name within it of a path; a folder is its own folder. */
static void split(const char *path, char *dir, size_t n, const char **name) {
  const char *slash = strrchr(path, '/');
  *name = NULL;
  if (slash && slash[1] == '\0') {
    snprintf(dir, n, "%s", path);
    return;
  }
  if (!slash) snprintf(dir, n, ".");
  else if (slash == path) snprintf(dir, n, "/");
  else snprintf(dir, n, "%.*s", (int)(slash - path), path);
  *name = slash ? slash + 1 : path;
}

/* Registers path; the uservalue table maps watch descriptor -> {dir=, names={}}. */
static void add_path(lua_State *L, struct watch *w, const char *path, int uv) {
  char dir[PATH_MAX];
  const char *name;
  evalua_check_path(L, path, 0);
  int wd = inotify_add_watch(w->fd, path, MASK | IN_ONLYDIR);
  if (wd >= 0) name = NULL, snprintf(dir, sizeof dir, "%s", path);
  else {
    split(path, dir, sizeof dir, &name);
    wd = inotify_add_watch(w->fd, dir, MASK | IN_ONLYDIR);
  }
  if (wd < 0) luaL_error(L, "watch: cannot watch '%s': %s", path, strerror(errno));
  if (lua_rawgeti(L, uv, wd) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, dir);
    lua_setfield(L, -2, "dir");
    lua_newtable(L);
    lua_setfield(L, -2, "names");
    lua_pushvalue(L, -1);
    lua_rawseti(L, uv, wd);
  }
  lua_getfield(L, -1, "names");
  if (name) lua_pushstring(L, name); else lua_pushliteral(L, "*");
  lua_pushboolean(L, 1);
  lua_settable(L, -3);
  lua_pop(L, 2);
}

/* A watch of nothing yet, its table of watched folders beside it. */
static struct watch *new_watch(lua_State *L) {
  struct watch *w = lua_newuserdatauv(L, sizeof *w, 1);
  w->fd = -1;
  luaL_setmetatable(L, WATCH_MT);
  lua_newtable(L);
  w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (w->fd < 0) luaL_error(L, "watch: inotify: %s", strerror(errno));
  return w;
}

static int make_watch(lua_State *L) {
  new_watch(L);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int l_open(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  struct watch *w = new_watch(L);
  int uv = lua_gettop(L);
  for (lua_Integer i = 1; lua_rawgeti(L, 1, i) != LUA_TNIL; i++) {
    const char *path = luaL_checkstring(L, -1);
    add_path(L, w, path, uv);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* Appends the paths of the events in buf[0..len) that name a watched file. */
static void collect(lua_State *L, const char *buf, ssize_t len, int uv, int out, int seen) {
  for (const char *p = buf; p < buf + len;) {
    const struct inotify_event *ev = (const struct inotify_event *)p;
    p += sizeof *ev + ev->len;
    if (ev->len == 0 || lua_rawgeti(L, uv, ev->wd) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    lua_getfield(L, -1, "names");
    lua_getfield(L, -1, "*");
    int whole = lua_toboolean(L, -1);
    lua_getfield(L, -2, ev->name);
    int named = lua_toboolean(L, -1);
    lua_pop(L, 3);
    if (whole || named) {
      lua_getfield(L, -1, "dir");
      const char *dir = lua_tostring(L, -1);
      size_t n = strlen(dir);
      lua_pushfstring(L, n && dir[n - 1] == '/' ? "%s%s" : "%s/%s", dir, ev->name);
      lua_pushvalue(L, -1);
      if (lua_rawget(L, seen) == LUA_TNIL) { /* first time: into the list */
        lua_pushvalue(L, -2);
        lua_rawseti(L, out, (lua_Integer)lua_rawlen(L, out) + 1);
        lua_pushvalue(L, -2);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
      }
      lua_pop(L, 3);
    }
    lua_pop(L, 1);
  }
}

/* w:wait(timeout_ms) -> {path...}: blocks until a watched file changes (then
 * settles for SETTLE_MS), or the timeout passes (-1: no timeout). */
static int l_wait(lua_State *L) {
  struct watch *w = check_watch(L);
  lua_Integer ms = luaL_optinteger(L, 2, -1);
  int timeout = ms < 0 ? -1 : ms > INT_MAX ? INT_MAX : (int)ms; /* -1: no timeout */
  lua_getiuservalue(L, 1, 1);
  int uv = lua_gettop(L);
  lua_newtable(L);
  int out = lua_gettop(L);
  lua_newtable(L);
  int seen = lua_gettop(L);
  union {
    struct inotify_event ev; /* for its alignment */
    char buf[8192];
  } u;
  struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
  while (poll(&pfd, 1, lua_rawlen(L, out) ? SETTLE_MS : timeout) > 0) {
    ssize_t len;
    while ((len = read(w->fd, u.buf, sizeof u.buf)) > 0) collect(L, u.buf, len, uv, out, seen);
  }
  lua_pop(L, 1);
  return 1;
}

static int l_close(lua_State *L) {
  struct watch *w = luaL_checkudata(L, 1, WATCH_MT);
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
  return 0;
}

int luaopen_evalua_watch(lua_State *L) {
  static const luaL_Reg methods[] = {{"wait", l_wait}, {"close", l_close}, {NULL, NULL}};
  if (evalua_newclass(L, WATCH_MT, make_watch)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"open", l_open}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
