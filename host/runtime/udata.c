/* The userdata rule's shared parts, and the scratch box (udata.h). */
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>

#include "udata.h"

int evalua_newclass(lua_State *L, const char *tname, lua_CFunction make) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, EVALUA_UDATA_TYPES);
  lua_pushcfunction(L, make);
  lua_setfield(L, -2, tname);
  lua_pop(L, 1);
  return luaL_newmetatable(L, tname);
}

int evalua_closed(lua_State *L, int arg) { return luaL_argerror(L, arg, "closed object"); }

#define SCRATCH_MT "evalua.scratch"

struct box {
  void (*done)(void *);
  max_align_t data[];
};

static int box_close(lua_State *L) {
  struct box *b = luaL_checkudata(L, 1, SCRATCH_MT);
  void (*done)(void *) = b->done;
  b->done = NULL;
  if (done) done(b->data);
  return 0;
}

static struct box *new_box(lua_State *L, size_t size) {
  if (size > (size_t)-1 / 2) luaL_error(L, "scratch of %zu bytes: too large", size);
  struct box *b = lua_newuserdatauv(L, sizeof *b + size, 0);
  memset(b, 0, sizeof *b + size);
  luaL_setmetatable(L, SCRATCH_MT);
  return b;
}

static int make_box(lua_State *L) {
  new_box(L, 0);
  return 1;
}

void *evalua_scratch(lua_State *L, size_t size, void (*done)(void *)) {
  struct box *b = new_box(L, size);
  lua_toclose(L, -1);
  b->done = done; /* only once it is sure to be closed */
  return b->data;
}

void evalua_udata_open(lua_State *L) {
  if (evalua_newclass(L, SCRATCH_MT, make_box)) {
    lua_pushcfunction(L, box_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, box_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}
