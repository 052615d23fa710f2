/* Entry points of the C modules compiled into evalua (see modules.c). */
#ifndef EVALUA_MODULES_H
#define EVALUA_MODULES_H

#include <lua.h>

int luaopen_evalua_sys(lua_State *L);
int luaopen_evalua_stats(lua_State *L);
int luaopen_evalua_vector(lua_State *L);
int luaopen_evalua_text(lua_State *L);
int luaopen_evalua_retrieval(lua_State *L);
int luaopen_evalua_client(lua_State *L);
int luaopen_evalua_table(lua_State *L);
int luaopen_evalua_report(lua_State *L);
int luaopen_evalua_json(lua_State *L);
int luaopen_evalua_watch(lua_State *L);
int luaopen_evalua_embed(lua_State *L);
int luaopen_evalua_regex(lua_State *L);
int luaopen_evalua_xml(lua_State *L);
int luaopen_evalua_sqlparse(lua_State *L);
int luaopen_evalua_sqlite(lua_State *L);
int luaopen_evalua_yaml(lua_State *L);
int luaopen_evalua_textscan(lua_State *L);

#endif
