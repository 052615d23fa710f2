/* Reading Lua lists and option tables for the metric bindings (ev.text,
 * ev.stats, ev.vector), with argument errors that name the list and index:
 * "bad argument #1 to 'mean' (xs[3] is NaN)". */
#ifndef EVALUA_L_LISTS_H
#define EVALUA_L_LISTS_H

#include <stddef.h>

#include <lua.h>

/* "nil", "a number", "a table" ...: the type of the value at idx, for messages. */
const char *lists_a_typename(lua_State *L, int idx);

/* The length of the list argument arg (an argument error unless a table). */
size_t lists_check_list(lua_State *L, int arg);

/* Copies the list at stack index idx into out[0..n): every element must be a
 * finite number. Errors name argument arg and the element as label[i], or
 * label[outer][i] when outer > 0. */
void lists_copy_numbers(lua_State *L, int idx, int arg, const char *label, lua_Integer outer,
                        double *out, size_t n);

/* The numbers of list argument arg in a new userdata left on the stack
 * (freed by the collector, so an error cannot leak it). */
double *lists_check_numbers(lua_State *L, int arg, const char *label, size_t *n);

/* An array of n doubles in a new userdata left on the stack. */
double *lists_new_array(lua_State *L, size_t n);
/* n items of size bytes (at least one) in a Lua userdata on the stack:
 * scratch of one call, counted against --mem-limit and collected like any
 * Lua value, so an error cannot leak it. Raises when the product overflows. */
void *lists_scratch(lua_State *L, size_t n, size_t size);

/* Checks that argument arg is nil or a table whose keys are all among
 * names (NULL-terminated), so a misspelt option is an error. */
void lists_check_options(lua_State *L, int arg, const char *const names[]);

/* Option getters on argument arg (nil or a checked options table). */
int lists_opt_boolean(lua_State *L, int arg, const char *name, int def);
lua_Integer lists_opt_integer(lua_State *L, int arg, const char *name, lua_Integer def);
double lists_opt_number(lua_State *L, int arg, const char *name, double def);
/* A string option, or def when absent; the pointer lives in the table. */
const char *lists_opt_string(lua_State *L, int arg, const char *name, const char *def);

#endif
