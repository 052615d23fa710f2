/* The bundled scripts installed beside the binary, found by name. */
#ifndef EVALUA_BUNDLED_H
#define EVALUA_BUNDLED_H

#include <lua.h>

/* Pushes the path to load for SCRIPT and returns it: SCRIPT itself when it
 * names a file or contains a '/', else the bundled script of that name
 * (NAME or NAME.lua in the installed scripts folder) when there is one, else
 * SCRIPT. */
const char *evalua_push_script_path(lua_State *L, const char *script);

/* Pushes the installed scripts folder (canonical), or nil when it does not
 * exist (a binary run from its build tree). */
void evalua_push_bundled_dir(lua_State *L);

#endif
