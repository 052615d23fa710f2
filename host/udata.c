/* The userdata rule's shared parts (udata.h). */
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
