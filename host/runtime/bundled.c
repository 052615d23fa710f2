/* `evalua run rag_report` from any folder: a script name that is not a file
 * there is looked up among the scripts installed with the binary, in
 * <folder of the binary>/EVALUA_BUNDLED_SCRIPTS, so an installed tree works
 * wherever its prefix is (/usr, /usr/local, a staging folder). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundled.h"

#ifndef EVALUA_BUNDLED_SCRIPTS
#define EVALUA_BUNDLED_SCRIPTS "../share/evalua/scripts" /* relative to the binary's folder */
#endif

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void evalua_push_bundled_dir(lua_State *L) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) exe[n] = '\0';
  char *slash = n > 0 ? strrchr(exe, '/') : NULL;
  if (!slash) {
    lua_pushnil(L);
    return;
  }
  *slash = '\0'; /* the binary's folder */
  lua_pushfstring(L, "%s/%s", exe, EVALUA_BUNDLED_SCRIPTS);
  char *real = realpath(lua_tostring(L, -1), NULL);
  lua_pop(L, 1);
  if (real) lua_pushstring(L, real);
  else lua_pushnil(L);
  free(real);
}

const char *evalua_push_script_path(lua_State *L, const char *script) {
  if (is_file(script) || strchr(script, '/') || !*script) return lua_pushstring(L, script);
  evalua_push_bundled_dir(L);
  if (lua_isstring(L, -1)) {
    size_t len = strlen(script);
    int has_ext = len > 4 && strcmp(script + len - 4, ".lua") == 0;
    const char *path = lua_pushfstring(L, "%s/%s%s", lua_tostring(L, -1), script, has_ext ? "" : ".lua");
    if (is_file(path)) {
      lua_remove(L, -2);
      return path;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return lua_pushstring(L, script);
}
