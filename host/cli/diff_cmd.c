/* evalua diff A.json B.json: two saved JSON reports compared as a nightly
 * comparison does. The work is Lua (lua/evalua/history/diff.lua), run by
 * evalua_lua_main. */
#include <stddef.h>

#include "commands.h"

int evalua_diff_main(int argc, char **argv) { return evalua_lua_main("evalua.history.diff", NULL, argc, argv); }
