/* require() for the evalua library: from the binary, or from --lua-dir /
 * $EVALUA_LUA_DIR when set so edits run without a rebuild. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "embed.h"
#include "runtime.h"

#define LIBENV_KEY "evalua.libenv" /* registry: env for library chunks (sandbox) */

static const struct evalua_embedded *find_embedded(const char *name) {
  for (const struct evalua_embedded *e = evalua_embedded; e->module; e++)
    if (strcmp(e->module, name) == 0) return e;
  return NULL;
}

/* "evalua.report.html" -> "DIR/evalua/report/html.lua", or with init
 * "evalua.report" -> "DIR/evalua/report/init.lua" (as cmake/embed_lua.cmake
 * names the embedded ones). */
static void disk_path(luaL_Buffer *b, const char *dir, const char *name, int init) {
  luaL_addstring(b, dir);
  luaL_addchar(b, '/');
  for (const char *p = name; *p; p++) luaL_addchar(b, *p == '.' ? '/' : *p);
  luaL_addstring(b, init ? "/init.lua" : ".lua");
}

static int readable(const char *path) {
  FILE *f = fopen(path, "r");
  if (f) fclose(f);
  return f != NULL;
}

/* Library chunks of a sandboxed state see a locked copy of the globals, so a
 * script that rebinds a global cannot change what library code calls, and
 * they keep the real require (the script's finds public modules only). */
void evalua_library_env(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBENV_KEY) == LUA_TTABLE) {
    if (!lua_setupvalue(L, idx, 1)) lua_pop(L, 1);
  } else {
    lua_pop(L, 1);
  }
}

static int load_or_raise(lua_State *L, int status, const char *name, const char *where) {
  if (status != LUA_OK)
    return luaL_error(L, "error loading module '%s' from '%s':\n\t%s", name, where,
                      lua_tostring(L, -1));
  evalua_library_env(L, -1);
  lua_pushstring(L, where);
  return 2;
}

/* The library's require: under --sandbox its own globals' (the script's
 * require finds public modules only), else the state's. */
static void push_library_require(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBENV_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  }
  lua_getfield(L, -1, "require");
  lua_remove(L, -2);
}

/* The loader of an old module name: warns once (require then keeps the
 * result under the old name) and gives the module under its new name, so
 * both names share one table. */
static int load_moved(lua_State *L) {
  const char *to = lua_tostring(L, lua_upvalueindex(1));
  fprintf(stderr, "evalua: warning: module '%s' is now '%s'; the old name goes in the next release\n",
          luaL_checkstring(L, 1), to);
  push_library_require(L);
  lua_pushstring(L, to);
  lua_call(L, 1, 1);
  return 1;
}

/* A name the library no longer has: an old name of a moved module
 * (lua/evalua/core/moved.lua) gets load_moved, anything else a message. */
static int search_moved(lua_State *L, const char *name) {
  push_library_require(L);
  lua_pushliteral(L, "evalua.core.moved");
  lua_call(L, 1, 1);
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, name) == LUA_TSTRING) {
    lua_pushcclosure(L, load_moved, 1);
    lua_pushstring(L, name);
    return 2;
  }
  lua_pushfstring(L, "no module '%s' in the evalua library", name);
  return 1;
}

static int search_library(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (strcmp(name, "evalua") != 0 && strncmp(name, "evalua.", 7) != 0) {
    lua_pushfstring(L, "no module '%s' in the evalua library", name);
    return 1;
  }
  const char *dir = evalua_runtime(L)->lua_dir;
  for (int init = 0; dir && init <= 1; init++) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    disk_path(&b, dir, name, init);
    luaL_pushresult(&b);
    const char *path = lua_tostring(L, -1);
    if (readable(path)) return load_or_raise(L, luaL_loadfilex(L, path, "t"), name, path);
    lua_pop(L, 1);
  }
  const struct evalua_embedded *e = find_embedded(name);
  if (!e) return search_moved(L, name);
  int status = luaL_loadbufferx(L, e->source, e->length, e->chunkname, "t");
  return load_or_raise(L, status, name, e->chunkname + 1);
}

void evalua_install_searcher(lua_State *L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  /* Position 2: after package.preload, before the path searchers. */
  for (lua_Integer i = luaL_len(L, -1); i >= 2; i--) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushcfunction(L, search_library);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}
