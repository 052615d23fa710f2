/* Lua lists and option tables for the metric bindings; see l_lists.h. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "l_lists.h"

const char *lists_a_typename(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
  case LUA_TNONE: case LUA_TNIL: return "nil";
  case LUA_TBOOLEAN: return "a boolean";
  case LUA_TNUMBER: return "a number";
  case LUA_TSTRING: return "a string";
  case LUA_TTABLE: return "a table";
  case LUA_TFUNCTION: return "a function";
  case LUA_TTHREAD: return "a thread";
  default: return "a userdata";
  }
}

size_t lists_check_list(lua_State *L, int arg) {
  luaL_checktype(L, arg, LUA_TTABLE);
  return (size_t)lua_rawlen(L, arg);
}

static int element_error(lua_State *L, int arg, const char *label, lua_Integer outer,
                         lua_Integer i, const char *what) {
  if (outer > 0)
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I][%I] %s", label, outer, i, what));
  return luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] %s", label, i, what));
}

void lists_copy_numbers(lua_State *L, int idx, int arg, const char *label, lua_Integer outer,
                        double *out, size_t n) {
  idx = lua_absindex(L, idx);
  for (size_t i = 0; i < n; i++) {
    int t = lua_rawgeti(L, idx, (lua_Integer)i + 1);
    if (t != LUA_TNUMBER) {
      const char *what = lua_pushfstring(L, "is %s, expected a number", lists_a_typename(L, -1));
      element_error(L, arg, label, outer, (lua_Integer)i + 1, what);
    }
    double x = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (isnan(x)) element_error(L, arg, label, outer, (lua_Integer)i + 1, "is NaN");
    if (isinf(x))
      element_error(L, arg, label, outer, (lua_Integer)i + 1, x > 0 ? "is inf" : "is -inf");
    out[i] = x;
  }
}

void *lists_scratch(lua_State *L, size_t n, size_t size) {
  if (n > (SIZE_MAX >> 2) / size) luaL_error(L, "not enough memory");
  return lua_newuserdatauv(L, (n ? n : 1) * size, 0);
}

double *lists_new_array(lua_State *L, size_t n) { return lists_scratch(L, n, sizeof(double)); }

double *lists_check_numbers(lua_State *L, int arg, const char *label, size_t *n) {
  *n = lists_check_list(L, arg);
  double *x = lists_new_array(L, *n);
  lists_copy_numbers(L, arg, arg, label, 0, x, *n);
  return x;
}

void lists_check_options(lua_State *L, int arg, const char *const names[]) {
  if (lua_isnoneornil(L, arg)) return;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int known = 0;
    for (size_t i = 0; key && names[i]; i++) known |= strcmp(key, names[i]) == 0;
    if (!known) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (size_t i = 0; names[i]; i++) {
        luaL_addstring(&b, i ? ", " : "");
        luaL_addstring(&b, names[i]);
      }
      luaL_pushresult(&b);
      luaL_argerror(L, arg, lua_pushfstring(L, "unknown option '%s' (known: %s)",
                                            key ? key : luaL_tolstring(L, -2, NULL),
                                            lua_tostring(L, -1)));
    }
  }
}

/* Pushes option name (nil when arg is absent). */
static int get_option(lua_State *L, int arg, const char *name) {
  if (lua_isnoneornil(L, arg)) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lua_getfield(L, arg, name);
}

static int option_error(lua_State *L, int arg, const char *name, const char *expected) {
  return luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be %s, got %s", name,
                                               expected, lists_a_typename(L, -1)));
}

int lists_opt_boolean(lua_State *L, int arg, const char *name, int def) {
  int t = get_option(L, arg, name);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN) option_error(L, arg, name, "a boolean");
  int v = t == LUA_TNIL ? def : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

lua_Integer lists_opt_integer(lua_State *L, int arg, const char *name, lua_Integer def) {
  int t = get_option(L, arg, name);
  int ok = 0;
  lua_Integer v = t == LUA_TNIL ? (ok = 1, def) : lua_tointegerx(L, -1, &ok);
  if (!ok) option_error(L, arg, name, "an integer");
  lua_pop(L, 1);
  return v;
}

double lists_opt_number(lua_State *L, int arg, const char *name, double def) {
  int t = get_option(L, arg, name);
  if (t != LUA_TNIL && t != LUA_TNUMBER) option_error(L, arg, name, "a number");
  double v = t == LUA_TNIL ? def : lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (isnan(v)) luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' is NaN", name));
  return v;
}

const char *lists_opt_string(lua_State *L, int arg, const char *name, const char *def) {
  int t = get_option(L, arg, name);
  if (t != LUA_TNIL && t != LUA_TSTRING) option_error(L, arg, name, "a string");
  const char *v = t == LUA_TNIL ? def : lua_tostring(L, -1);
  lua_pop(L, 1);
  return v;
}
