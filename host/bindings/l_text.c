/* evalua._text: Lua bindings of the answer-text metrics (metrics/text.c).
 * Single forms take one prediction and a gold answer or a list of them;
 * batch forms take whole columns and return a list of scores that agree
 * exactly with the single forms. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "evalua/text.h"
#include "l_lists.h"
#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define WS_MT "evalua.text.workspace"

/* Under --sandbox, the largest ROUGE-L or edit-distance table (cells: tokens
 * x tokens or code points x code points): about a second of CPU, so a long
 * input fails with a message instead of running past the CPU limit in C,
 * where the limit's hook cannot fire. */
#define SANDBOX_MAX_CELLS ((size_t)1 << 30)

/* Scratch memory shared by the calls of one state. busy guards against
 * re-entry (a finalizer calling ev.text during a call gets its own); its
 * __close only releases it, __gc frees it (ws NULL: closed). */
struct box {
  evtext_ws *ws;
  evtext_str *golds;
  size_t golds_cap;
  int busy;
};

static int box_gc(lua_State *L) {
  struct box *b = luaL_checkudata(L, 1, WS_MT);
  struct evm_alloc a = evalua_allocator(L);
  evtext_ws_free(b->ws);
  evm_free(&a, b->golds, b->golds_cap, sizeof *b->golds);
  b->ws = NULL;
  b->golds = NULL;
  return 0;
}

static int box_close(lua_State *L) {
  struct box *b = luaL_checkudata(L, 1, WS_MT);
  b->busy = 0;
  return 0;
}

/* The workspace allocates through the state's counted allocator, so its
 * buffers count against --mem-limit like any Lua value. */
static struct box *new_box(lua_State *L) {
  struct box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, WS_MT);
  struct evm_alloc a = evalua_allocator(L);
  if (!(b->ws = evtext_ws_new_alloc(a.fn, a.ud))) evalua_nomem(L);
  if (evalua_runtime(L)->sandbox) evtext_ws_set_max_cells(b->ws, SANDBOX_MAX_CELLS);
  return b;
}

/* The state's workspace, pushed as a to-be-closed value so that it is
 * released when the call returns or raises. */
static struct box *acquire(lua_State *L) {
  struct box *b = lua_touserdata(L, lua_upvalueindex(1));
  if (b->busy || !b->ws) b = new_box(L);
  else lua_pushvalue(L, lua_upvalueindex(1));
  b->busy = 1;
  lua_toclose(L, -1);
  return b;
}

static const char *check_text(lua_State *L, int arg, size_t *len) {
  if (lua_type(L, arg) != LUA_TSTRING) luaL_typeerror(L, arg, "string");
  return lua_tolstring(L, arg, len);
}

/* Where a gold list came from, for error messages. */
struct origin {
  int pred_arg, gold_arg;
  lua_Integer item; /* batch row, 0 for the single forms */
  int gold_list;    /* golds given as a list (not a lone string) */
};

static void type_error(lua_State *L, int arg, const char *label, lua_Integer i, lua_Integer j,
                       const char *expected) {
  const char *got = lists_a_typename(L, -1);
  if (j) luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I][%I] is %s, expected %s", label, i, j, got, expected));
  luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] is %s, expected %s", label, i, got, expected));
}

/* Reads the gold answer or list at stack index idx into b->golds. */
static size_t gather_golds(lua_State *L, struct box *b, int idx, struct origin *o) {
  int t = lua_type(L, idx);
  o->gold_list = t == LUA_TTABLE;
  size_t n = t == LUA_TTABLE ? (size_t)lua_rawlen(L, idx) : 1;
  if (t != LUA_TSTRING && t != LUA_TTABLE) {
    if (!o->item) luaL_typeerror(L, o->gold_arg, "string or list of strings");
    type_error(L, o->gold_arg, "golds", o->item, 0, "a string or a list of strings");
  }
  if (n > b->golds_cap) {
    struct evm_alloc a = evalua_allocator(L);
    evtext_str *g = evm_resize(&a, b->golds, b->golds_cap, n, sizeof *g);
    if (!g) evalua_nomem(L);
    b->golds = g;
    b->golds_cap = n;
  }
  if (t == LUA_TSTRING) {
    b->golds[0].s = lua_tolstring(L, idx, &b->golds[0].len);
    return 1;
  }
  idx = lua_absindex(L, idx);
  for (size_t j = 0; j < n; j++) {
    if (lua_rawgeti(L, idx, (lua_Integer)j + 1) != LUA_TSTRING) {
      if (o->item) type_error(L, o->gold_arg, "golds", o->item, (lua_Integer)j + 1, "a string");
      type_error(L, o->gold_arg, "golds", (lua_Integer)j + 1, 0, "a string");
    }
    b->golds[j].s = lua_tolstring(L, -1, &b->golds[j].len); /* the table keeps it alive */
    lua_pop(L, 1);
  }
  return n;
}

static int score_error(lua_State *L, int rc, const evtext_error *e, const struct origin *o) {
  if (rc == EVTEXT_ENOMEM) return evalua_nomem(L);
  if (rc == EVTEXT_EBUDGET) {
    const char *what = o->item ? lua_pushfstring(L, "preds[%I]: ", o->item) : "";
    return luaL_argerror(L, o->pred_arg,
                         lua_pushfstring(L, "%sinputs too long: the comparison needs over %I table cells, "
                                         "the limit under --sandbox", what, (lua_Integer)SANDBOX_MAX_CELLS));
  }
  lua_Integer byte = (lua_Integer)e->byte + 1, k = (lua_Integer)e->which + 1;
  if (e->which < 0) {
    if (o->item)
      return luaL_argerror(L, o->pred_arg,
                           lua_pushfstring(L, "preds[%I]: invalid UTF-8 at byte %I", o->item, byte));
    return luaL_argerror(L, o->pred_arg, lua_pushfstring(L, "invalid UTF-8 at byte %I", byte));
  }
  const char *where = o->item ? (o->gold_list ? lua_pushfstring(L, "golds[%I][%I]: ", o->item, k)
                                              : lua_pushfstring(L, "golds[%I]: ", o->item))
                              : (o->gold_list ? lua_pushfstring(L, "golds[%I]: ", k) : "");
  return luaL_argerror(L, o->gold_arg, lua_pushfstring(L, "%sinvalid UTF-8 at byte %I", where, byte));
}

static void push_score(lua_State *L, enum evtext_metric m, double s) {
  if (m == EVTEXT_EXACT || m == EVTEXT_EXACT_NORM) lua_pushinteger(L, (lua_Integer)s);
  else lua_pushnumber(L, s);
}

static const char *const normalize_option[] = {"normalize", NULL};

/* The metric selected by an optional {normalize = bool} argument. */
static enum evtext_metric with_options(lua_State *L, enum evtext_metric plain, int arg) {
  if (plain != EVTEXT_EXACT && plain != EVTEXT_EDIT) {
    if (!lua_isnoneornil(L, arg)) luaL_argerror(L, arg, "this metric takes no options");
    return plain;
  }
  lists_check_options(L, arg, normalize_option);
  if (!lists_opt_boolean(L, arg, "normalize", 0)) return plain;
  return plain == EVTEXT_EXACT ? EVTEXT_EXACT_NORM : EVTEXT_EDIT_NORM;
}

/* metric(pred, gold_or_golds [, opts]) */
static int single(lua_State *L, enum evtext_metric metric) {
  lua_settop(L, 3); /* results pushed later must not pass for arguments */
  size_t plen;
  const char *pred = check_text(L, 1, &plen);
  luaL_checkany(L, 2);
  metric = with_options(L, metric, 3);
  struct box *b = acquire(L);
  struct origin o = {1, 2, 0, 0};
  size_t n = gather_golds(L, b, 2, &o);
  double s = 0;
  evtext_error e;
  int rc = evtext_score(b->ws, metric, (evtext_str){pred, plen}, b->golds, n, &s, &e);
  if (rc) return score_error(L, rc, &e, &o);
  push_score(L, metric, s);
  return 1;
}

/* metric_batch(preds, golds [, opts]) -> list of scores */
static int batch(lua_State *L, enum evtext_metric metric) {
  lua_settop(L, 3);
  size_t n = lists_check_list(L, 1), ng = lists_check_list(L, 2);
  if (ng != n)
    luaL_argerror(L, 2, lua_pushfstring(L, "#golds is %I but #preds is %I", (lua_Integer)ng, (lua_Integer)n));
  metric = with_options(L, metric, 3);
  struct box *b = acquire(L);
  lua_createtable(L, (int)(n < (size_t)1 << 30 ? n : 0), 0);
  int out = lua_gettop(L);
  for (size_t i = 1; i <= n; i++) {
    struct origin o = {1, 2, (lua_Integer)i, 0};
    if (lua_rawgeti(L, 1, (lua_Integer)i) != LUA_TSTRING) type_error(L, 1, "preds", o.item, 0, "a string");
    size_t plen;
    const char *pred = lua_tolstring(L, -1, &plen);
    lua_rawgeti(L, 2, (lua_Integer)i);
    size_t k = gather_golds(L, b, -1, &o);
    double s = 0;
    evtext_error e;
    int rc = evtext_score(b->ws, metric, (evtext_str){pred, plen}, b->golds, k, &s, &e);
    if (rc) return score_error(L, rc, &e, &o);
    lua_pop(L, 2);
    push_score(L, metric, s);
    lua_rawseti(L, out, (lua_Integer)i);
  }
  return 1;
}

static int l_exact_match(lua_State *L) { return single(L, EVTEXT_EXACT); }
static int l_token_f1(lua_State *L) { return single(L, EVTEXT_F1); }
static int l_rouge_l(lua_State *L) { return single(L, EVTEXT_ROUGE_L); }
static int l_edit_similarity(lua_State *L) { return single(L, EVTEXT_EDIT); }
static int l_exact_match_batch(lua_State *L) { return batch(L, EVTEXT_EXACT); }
static int l_token_f1_batch(lua_State *L) { return batch(L, EVTEXT_F1); }
static int l_rouge_l_batch(lua_State *L) { return batch(L, EVTEXT_ROUGE_L); }
static int l_edit_similarity_batch(lua_State *L) { return batch(L, EVTEXT_EDIT); }

/* edit_distance(a, b [, bound]) -> the Levenshtein distance in code points,
 * or nil when it is larger than bound (a whole number >= 0) */
static int l_edit_distance(lua_State *L) {
  lua_settop(L, 3);
  size_t la, lb, d = 0, bound = SIZE_MAX;
  const char *a = check_text(L, 1, &la), *b = check_text(L, 2, &lb);
  if (!lua_isnil(L, 3)) {
    lua_Integer k = luaL_checkinteger(L, 3);
    luaL_argcheck(L, k >= 0, 3, "a bound is a whole number >= 0");
    if ((lua_Unsigned)k < SIZE_MAX) bound = (size_t)k;
  }
  struct box *box = acquire(L);
  evtext_error e;
  struct origin o = {1, 2, 0, 0};
  int rc = evtext_edit_distance(box->ws, (evtext_str){a, la}, (evtext_str){b, lb}, bound, &d, &e);
  if (rc) return score_error(L, rc, &e, &o);
  if (d > bound) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)d);
  return 1;
}

/* normalize(s) -> the tokens joined by single spaces */
static int l_normalize(lua_State *L) {
  lua_settop(L, 1);
  size_t len;
  const char *s = check_text(L, 1, &len);
  struct box *b = acquire(L);
  evtext_str out;
  evtext_error e;
  struct origin o = {1, 2, 0, 0};
  int rc = evtext_normalize(b->ws, (evtext_str){s, len}, &out, &e);
  if (rc) return score_error(L, rc, &e, &o);
  lua_pushlstring(L, out.s, out.len);
  return 1;
}

/* tokens(s) -> list of the normalised tokens */
static int l_tokens(lua_State *L) {
  lua_settop(L, 1);
  size_t len, n = 0;
  const char *s = check_text(L, 1, &len);
  struct box *b = acquire(L);
  evtext_error e;
  struct origin o = {1, 2, 0, 0};
  int rc = evtext_tokenize(b->ws, (evtext_str){s, len}, &n, &e);
  if (rc) return score_error(L, rc, &e, &o);
  lua_createtable(L, (int)(n < (size_t)1 << 30 ? n : 0), 0);
  for (size_t i = 0; i < n; i++) {
    evtext_str t = evtext_token(b->ws, i);
    lua_pushlstring(L, t.s, t.len);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static const luaL_Reg text_funcs[] = {
  {"exact_match", l_exact_match},
  {"token_f1", l_token_f1},
  {"rouge_l", l_rouge_l},
  {"edit_similarity", l_edit_similarity},
  {"exact_match_batch", l_exact_match_batch},
  {"token_f1_batch", l_token_f1_batch},
  {"rouge_l_batch", l_rouge_l_batch},
  {"edit_similarity_batch", l_edit_similarity_batch},
  {"edit_distance", l_edit_distance},
  {"normalize", l_normalize},
  {"tokens", l_tokens},
  {NULL, NULL},
};

static const luaL_Reg box_methods[] = {{"__gc", box_gc}, {"__close", box_close}, {NULL, NULL}};

static int make_box(lua_State *L) {
  new_box(L);
  return 1;
}

int luaopen_evalua_text(lua_State *L) {
  if (evalua_newclass(L, WS_MT, make_box)) luaL_setfuncs(L, box_methods, 0);
  lua_pop(L, 1);
  luaL_newlibtable(L, text_funcs);
  new_box(L);
  luaL_setfuncs(L, text_funcs, 1);
  return 1;
}
