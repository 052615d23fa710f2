/* evalua's userdata types and the rule they all follow (docs/internals.md,
 * "Userdata"): a finaliser (__gc, __close, or a method that closes, such
 * as close or unlock) may run any number of times, a script can call one
 * by hand; the first marks the object closed (a NULL pointer or a -1
 * descriptor inside it), and every method of a closed object then raises
 * "closed object" instead of touching freed memory. */
#ifndef EVALUA_UDATA_H
#define EVALUA_UDATA_H

#include <lua.h>

/* Registry table: type name -> a function returning a new object of the
 * type, for tests that walk every type (tests/lua/test_closed.lua). */
#define EVALUA_UDATA_TYPES "evalua.udata_types"

/* luaL_newmetatable for an evalua type, recording make (a C function
 * returning a new, empty object of the type) in EVALUA_UDATA_TYPES. The
 * metatable is left on the stack; 0 when it existed already. */
int evalua_newclass(lua_State *L, const char *tname, lua_CFunction make);

/* Raises "bad argument #arg to 'f' (closed object)". */
int evalua_closed(lua_State *L, int arg);

/* Scratch of one call that error paths must free (lauxlib's box idiom): a
 * zeroed block of size bytes in a userdata pushed as a to-be-closed value,
 * so that done(block) runs once when the call returns or raises. */
void *evalua_scratch(lua_State *L, size_t size, void (*done)(void *));

/* Registers the types of udata.c itself (evalua_state_open). */
void evalua_udata_open(lua_State *L);

#endif
