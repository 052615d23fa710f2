/* evalua._vector: dot product and cosine similarity over Lua lists of
 * numbers (metrics/vector.c), one pair at a time, one query against many
 * vectors, or pairwise over two lists. Different lengths, empty vectors and
 * non-finite elements are argument errors naming the vector and index. */
#include <lauxlib.h>

#include "evalua/vector.h"
#include "l_lists.h"
#include "modules.h"

typedef double (*vector_fn)(const double *, const double *, size_t);

static double *check_vector(lua_State *L, int arg, const char *label, size_t *n) {
  double *v = lists_check_numbers(L, arg, label, n);
  if (*n == 0) luaL_argerror(L, arg, lua_pushfstring(L, "%s is empty", label));
  return v;
}

/* f(a, b) */
static int one(lua_State *L, vector_fn f) {
  lua_settop(L, 2); /* results pushed later must not pass for arguments */
  size_t na, nb;
  double *a = check_vector(L, 1, "a", &na), *b = check_vector(L, 2, "b", &nb);
  if (na != nb) luaL_argerror(L, 2, lua_pushfstring(L, "#b is %I but #a is %I", (lua_Integer)nb, (lua_Integer)na));
  lua_pushnumber(L, f(a, b, na));
  return 1;
}

/* The inner list list[i] (at the top of the stack) must be a table. */
static size_t inner_length(lua_State *L, int arg, const char *label, lua_Integer i) {
  if (!lua_istable(L, -1))
    luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] is %s, expected a list of numbers", label, i,
                                          lists_a_typename(L, -1)));
  return (size_t)lua_rawlen(L, -1);
}

/* f_many(query, vectors) -> { f(query, vectors[1]), ... } */
static int many(lua_State *L, vector_fn f) {
  lua_settop(L, 2);
  size_t d, m = lists_check_list(L, 2);
  double *q = check_vector(L, 1, "query", &d);
  double *v = lists_new_array(L, d);
  lua_createtable(L, (int)m, 0);
  for (size_t i = 1; i <= m; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i);
    size_t n = inner_length(L, 2, "vectors", (lua_Integer)i);
    if (n != d)
      luaL_argerror(L, 2, lua_pushfstring(L, "#vectors[%I] is %I but #query is %I", (lua_Integer)i,
                                          (lua_Integer)n, (lua_Integer)d));
    lists_copy_numbers(L, -1, 2, "vectors", (lua_Integer)i, v, d);
    lua_pop(L, 1);
    lua_pushnumber(L, f(q, v, d));
    lua_rawseti(L, -2, (lua_Integer)i);
  }
  return 1;
}

/* f_paired(as, bs) -> { f(as[1], bs[1]), ... } */
static int paired(lua_State *L, vector_fn f) {
  lua_settop(L, 2);
  size_t m = lists_check_list(L, 1), mb = lists_check_list(L, 2), cap = 0;
  if (mb != m) luaL_argerror(L, 2, lua_pushfstring(L, "#b is %I but #a is %I", (lua_Integer)mb, (lua_Integer)m));
  lua_pushnil(L); /* slot 3: the scratch array, replaced when a longer pair comes */
  double *buf = NULL;
  lua_createtable(L, (int)m, 0);
  for (size_t i = 1; i <= m; i++) {
    lua_Integer li = (lua_Integer)i;
    lua_rawgeti(L, 1, li);
    size_t na = inner_length(L, 1, "a", li);
    lua_rawgeti(L, 2, li);
    size_t nb = inner_length(L, 2, "b", li);
    if (na != nb)
      luaL_argerror(L, 2, lua_pushfstring(L, "#b[%I] is %I but #a[%I] is %I", li, (lua_Integer)nb, li,
                                          (lua_Integer)na));
    if (na == 0) luaL_argerror(L, 1, lua_pushfstring(L, "a[%I] is empty", li));
    if (na > cap) {
      buf = lists_new_array(L, 2 * na);
      lua_replace(L, 3);
      cap = na;
    }
    lists_copy_numbers(L, -2, 1, "a", li, buf, na);
    lists_copy_numbers(L, -1, 2, "b", li, buf + na, na);
    lua_pop(L, 2);
    lua_pushnumber(L, f(buf, buf + na, na));
    lua_rawseti(L, -2, li);
  }
  return 1;
}

static int l_dot(lua_State *L) { return one(L, evvec_dot); }
static int l_cosine(lua_State *L) { return one(L, evvec_cosine); }
static int l_dot_many(lua_State *L) { return many(L, evvec_dot); }
static int l_cosine_many(lua_State *L) { return many(L, evvec_cosine); }
static int l_dot_paired(lua_State *L) { return paired(L, evvec_dot); }
static int l_cosine_paired(lua_State *L) { return paired(L, evvec_cosine); }

static const luaL_Reg vector_funcs[] = {
  {"dot", l_dot},
  {"cosine", l_cosine},
  {"dot_many", l_dot_many},
  {"cosine_many", l_cosine_many},
  {"dot_paired", l_dot_paired},
  {"cosine_paired", l_cosine_paired},
  {NULL, NULL},
};

int luaopen_evalua_vector(lua_State *L) {
  luaL_newlib(L, vector_funcs);
  return 1;
}
