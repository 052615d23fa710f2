/* evalua._embed: the offline embedder (metrics/embed.c). Texts embedded in
 * one call share the IDF learnt from all of them.
 *   similarity(queries, candidates [, {char_weight =}]) -> {{cos...}...}
 *     candidates[i] is a string or a list of strings for queries[i]
 *   embed(texts [, {char_weight =, dimensions =}]) -> {{x...}...} (unit vectors) */
#include <stdlib.h>

#include <lauxlib.h>

#include "evalua/embed.h"
#include "l_lists.h"
#include "modules.h"
#include "parallel.h"
#include "runtime.h"
#include "udata.h"

#define EMB_MT "evalua.embedder"

/* Its memory counts against --mem-limit (evalua_allocator). ws[1] is the
 * second thread's workspace. */
struct emb { evembed *e; evtext_ws *ws[2]; size_t *first, nfirst; struct evm_alloc a; };

static int emb_gc(lua_State *L) {
  struct emb *u = luaL_checkudata(L, 1, EMB_MT);
  evembed_free(u->e);
  evtext_ws_free(u->ws[0]);
  evtext_ws_free(u->ws[1]);
  evm_free(&u->a, u->first, u->nfirst, sizeof *u->first);
  u->e = NULL, u->ws[0] = u->ws[1] = NULL, u->first = NULL;
  return 0;
}

/* An embedder in a userdata on the stack, freed by the collector, so an
 * argument error cannot leak it. */
static struct emb *new_emb(lua_State *L, int opts) {
  evembed_opts o;
  evembed_defaults(&o);
  o.char_weight = lists_opt_number(L, opts, "char_weight", o.char_weight);
  luaL_argcheck(L, o.char_weight >= 0 && o.char_weight <= 1, opts, "char_weight must be from 0 to 1");
  struct emb *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->e = NULL, u->ws[0] = u->ws[1] = NULL, u->first = NULL, u->nfirst = 0;
  u->a = evalua_allocator(L);
  luaL_setmetatable(L, EMB_MT);
  if (!(u->e = evembed_new_alloc(&o, &u->a)) || !(u->ws[0] = evtext_ws_new_alloc(u->a.fn, u->a.ud)) ||
      !(u->ws[1] = evtext_ws_new_alloc(u->a.fn, u->a.ud)))
    evalua_nomem(L);
  return u;
}

/* The string at the top of the stack (label[i], or label[i][j]) into *t,
 * popped; it stays alive in its list, which is an argument of the call. */
static void take(lua_State *L, evtext_str *t, int arg, const char *label, lua_Integer i, lua_Integer j) {
  if (lua_type(L, -1) != LUA_TSTRING) {
    const char *got = lists_a_typename(L, -1);
    if (j) luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I][%I] is %s, expected a string", label, i, j, got));
    luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] is %s, expected a string", label, i, got));
  }
  t->s = lua_tolstring(L, -1, &t->len);
  lua_pop(L, 1);
}

/* Embeds texts[0..n) on both cores and learns the IDF; an invalid text
 * raises naming it (where names it: label and indices, by its number). */
static void add_all(lua_State *L, struct emb *u, const evtext_str *texts, size_t n,
                    void (*where)(lua_State *L, size_t k, int *arg, const char **label, lua_Integer *i, lua_Integer *j)) {
  size_t failed = 0;
  evtext_error err;
  int rc = evembed_add_batch(u->e, u->ws, texts, n, evalua_run_two, &failed, &err);
  if (rc == EVTEXT_EUTF8) {
    int arg;
    const char *label;
    lua_Integer i, j;
    where(L, failed, &arg, &label, &i, &j);
    const char *at = j ? lua_pushfstring(L, "%s[%I][%I]", label, i, j) : lua_pushfstring(L, "%s[%I]", label, i);
    luaL_argerror(L, arg, lua_pushfstring(L, "%s is not valid UTF-8 (byte %I)", at, (lua_Integer)err.byte + 1));
  }
  if (rc != EVTEXT_OK || evembed_fit(u->e) != EVTEXT_OK) evalua_nomem(L);
}

/* Text k of similarity(): queries[k + 1], or a candidate found by first[]. */
static void where_similarity(lua_State *L, size_t k, int *arg, const char **label, lua_Integer *i, lua_Integer *j) {
  struct emb *u = lua_touserdata(L, 4);
  size_t m = u->first[0];
  *j = 0;
  if (k < m) {
    *arg = 1, *label = "queries", *i = (lua_Integer)k + 1;
    return;
  }
  size_t q = 1;
  while (u->first[q] <= k) q++;
  *arg = 2, *label = "candidates", *i = (lua_Integer)q;
  if (lua_rawgeti(L, 2, (lua_Integer)q) == LUA_TTABLE) *j = (lua_Integer)(k - u->first[q - 1]) + 1;
  lua_pop(L, 1);
}

static int l_similarity(lua_State *L) {
  static const char *const names[] = {"char_weight", NULL};
  lua_settop(L, 3);
  size_t m = lists_check_list(L, 1), mc = lists_check_list(L, 2);
  if (mc != m) luaL_argerror(L, 2, lua_pushfstring(L, "#candidates is %I but #queries is %I", (lua_Integer)mc, (lua_Integer)m));
  lists_check_options(L, 3, names);
  struct emb *u = new_emb(L, 3); /* index 4 */
  if (m > SIZE_MAX - 1 || !(u->first = evm_new(&u->a, m + 1, sizeof *u->first))) evalua_nomem(L);
  u->nfirst = m + 1;
  size_t n = m;
  for (size_t i = 1; i <= m; i++) {
    size_t k = lua_rawgeti(L, 2, (lua_Integer)i) == LUA_TTABLE ? (size_t)lua_rawlen(L, -1) : 1;
    lua_pop(L, 1);
    if (k > SIZE_MAX - n) evalua_nomem(L);
    n += k;
  }
  evtext_str *texts = lists_scratch(L, n, sizeof *texts); /* index 5 */
  for (size_t i = 1; i <= m; i++) {
    lua_rawgeti(L, 1, (lua_Integer)i);
    take(L, &texts[i - 1], 1, "queries", (lua_Integer)i, 0);
  }
  size_t at = m;
  u->first[0] = m;
  for (size_t i = 1; i <= m; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i);
    if (lua_istable(L, -1)) {
      size_t k = (size_t)lua_rawlen(L, -1);
      for (size_t j = 1; j <= k; j++) {
        lua_rawgeti(L, -1, (lua_Integer)j);
        take(L, &texts[at++], 2, "candidates", (lua_Integer)i, (lua_Integer)j);
      }
      lua_pop(L, 1);
    } else {
      take(L, &texts[at++], 2, "candidates", (lua_Integer)i, 0);
    }
    u->first[i] = at;
  }
  add_all(L, u, texts, n, where_similarity);
  double *cos = lists_new_array(L, n - m > 0 ? n - m : 1);
  if (evembed_similarity(u->e, u->first, m, cos, evalua_run_two) != EVTEXT_OK) evalua_nomem(L);
  lua_createtable(L, (int)m, 0);
  for (size_t i = 0; i < m; i++) {
    size_t a = u->first[i], b = u->first[i + 1];
    lua_createtable(L, (int)(b - a), 0);
    for (size_t k = a; k < b; k++) {
      lua_pushnumber(L, cos[k - m]);
      lua_rawseti(L, -2, (lua_Integer)(k - a + 1));
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static void where_embed(lua_State *L, size_t k, int *arg, const char **label, lua_Integer *i, lua_Integer *j) {
  (void)L;
  *arg = 1, *label = "texts", *i = (lua_Integer)k + 1, *j = 0;
}

static int l_embed(lua_State *L) {
  static const char *const names[] = {"char_weight", "dimensions", NULL};
  lua_settop(L, 2);
  size_t n = lists_check_list(L, 1);
  lists_check_options(L, 2, names);
  lua_Integer dim = lists_opt_integer(L, 2, "dimensions", 512);
  luaL_argcheck(L, dim >= 1 && dim <= 65536, 2, "dimensions must be from 1 to 65536");
  struct emb *u = new_emb(L, 2);
  evtext_str *texts = lists_scratch(L, n, sizeof *texts);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, (lua_Integer)i);
    take(L, &texts[i - 1], 1, "texts", (lua_Integer)i, 0);
  }
  add_all(L, u, texts, n, where_embed);
  double *v = lists_new_array(L, (size_t)dim);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    evembed_dense(u->e, i, v, (size_t)dim);
    lua_createtable(L, (int)dim, 0);
    for (lua_Integer d = 0; d < dim; d++) {
      lua_pushnumber(L, v[d]);
      lua_rawseti(L, -2, d + 1);
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static const luaL_Reg embed_funcs[] = {
  {"similarity", l_similarity},
  {"embed", l_embed},
  {NULL, NULL},
};

static int make_emb(lua_State *L) {
  lua_settop(L, 0);
  new_emb(L, 1);
  return 1;
}

int luaopen_evalua_embed(lua_State *L) {
  evalua_newclass(L, EMB_MT, make_emb);
  lua_pushcfunction(L, emb_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, embed_funcs);
  return 1;
}
