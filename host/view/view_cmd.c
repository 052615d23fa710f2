/* evalua view [HISTORY_DIR | REPORT.json]: the viewer. The work is Lua
 * (lua/evalua/view/main.lua) in a trusted state, with evalua._view (the
 * server, l_view.c) preloaded for it alone; arg is set as for a script
 * ("view" at arg[0]). */
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>

#include "commands.h"
#include "runtime.h"

int luaopen_evalua_view(lua_State *L);

static int pview(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  evalua_state_open(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_evalua_view);
  lua_setfield(L, -2, "evalua._view");
  lua_pop(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "evalua.view.main");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_call(L, 1, 1);
  return 1;
}

int evalua_view_main(int argc, char **argv) {
  struct evalua_runtime rt = {0};
  rt.lua_dir = getenv("EVALUA_LUA_DIR");
  if (rt.lua_dir && !*rt.lua_dir) rt.lua_dir = NULL;
  lua_State *L = evalua_state_new(&rt);
  if (!L) {
    fputs("evalua: cannot create a Lua state: not enough memory\n", stderr);
    return 3;
  }
  lua_pushcfunction(L, pview);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int code;
  if (rt.exit_requested) {
    code = rt.exit_code; /* usage errors and --help, through ev.cli */
  } else if (status == LUA_OK) {
    code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
  } else {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
    code = 3;
  }
  lua_close(L);
  evalua_runtime_free(&rt);
  return code;
}
