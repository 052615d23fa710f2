/* A subcommand whose work is a Lua module's main(arg) in a trusted state,
 * with arg set as for a script (the command's name at arg[0]). */
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>

#include "commands.h"
#include "runtime.h"

struct lua_main {
  const char *module;
  void (*prepare)(lua_State *L);
  int argc;
  char **argv;
};

static int pmain(lua_State *L) {
  const struct lua_main *m = lua_touserdata(L, 1);
  evalua_state_open(L);
  if (m->prepare) m->prepare(L);
  lua_getglobal(L, "require");
  lua_pushstring(L, m->module);
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_createtable(L, m->argc, 1);
  for (int i = 0; i < m->argc; i++) {
    lua_pushstring(L, m->argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_call(L, 1, 1);
  return 1;
}

int evalua_lua_main(const char *module, void (*prepare)(lua_State *L), int argc, char **argv) {
  struct evalua_runtime rt = {0};
  rt.lua_dir = getenv("EVALUA_LUA_DIR");
  if (rt.lua_dir && !*rt.lua_dir) rt.lua_dir = NULL;
  lua_State *L = evalua_state_new(&rt);
  if (!L) {
    fputs("evalua: cannot create a Lua state: not enough memory\n", stderr);
    return 3;
  }
  struct lua_main m = {module, prepare, argc, argv};
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &m);
  int status = lua_pcall(L, 1, 1, 0);
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
