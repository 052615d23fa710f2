/* evalua view [HISTORY_DIR | REPORT.json]: the viewer. The work is Lua
 * (lua/evalua/view/main.lua), run by evalua_lua_main, with evalua._view
 * (the server, l_view.c) preloaded for it alone. */
#include <lauxlib.h>
#include <lua.h>

#include "commands.h"

int luaopen_evalua_view(lua_State *L);

static void preload_view(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_evalua_view);
  lua_setfield(L, -2, "evalua._view");
  lua_pop(L, 1);
}

int evalua_view_main(int argc, char **argv) { return evalua_lua_main("evalua.view.main", preload_view, argc, argv); }
