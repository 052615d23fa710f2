/* The C modules every state can require without any file installed. */
#include <lauxlib.h>
#include <lua-cjson.h>

#include "modules.h"
#include "runtime.h"

int luaopen_cjson_safe(lua_State *L); /* in Debian's liblua5.4-cjson, not in its header */

static const luaL_Reg preloads[] = {
  {"cjson", luaopen_cjson},
  {"cjson.safe", luaopen_cjson_safe},
  {"evalua._sys", luaopen_evalua_sys},
  {"evalua._stats", luaopen_evalua_stats},
  {"evalua._vector", luaopen_evalua_vector},
  {"evalua._text", luaopen_evalua_text},
  {"evalua._retrieval", luaopen_evalua_retrieval},
  {"evalua._client", luaopen_evalua_client},
  {"evalua._table", luaopen_evalua_table},
  {"evalua._report", luaopen_evalua_report},
  {"evalua._json", luaopen_evalua_json},
  {"evalua._watch", luaopen_evalua_watch},
  {"evalua._embed", luaopen_evalua_embed},
  {"evalua._regex", luaopen_evalua_regex},
  {"evalua._sqlite", luaopen_evalua_sqlite},
  {"evalua._xml", luaopen_evalua_xml},
  {"evalua._sqlparse", luaopen_evalua_sqlparse},
  {"evalua._yaml", luaopen_evalua_yaml},
  {"evalua._textscan", luaopen_evalua_textscan},
  {NULL, NULL},
};

void evalua_preload_modules(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (const luaL_Reg *m = preloads; m->name; m++) {
    lua_pushcfunction(L, m->func);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 1);
}
