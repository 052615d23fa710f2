/* evalua._table.scores: score columns with an unmeasured mask and reasons;
 * the built-in metrics run over a data set's columns on two threads;
 * grouped statistics and bottom-k run over the columns (metrics/group.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "evalua/group.h"
#include "evalua/measures.h"
#include "evalua/stats.h"
#include "evalua/table_eval.h"
#include "l_lists.h"
#include "l_table.h"
#include "parallel.h"
#include "runtime.h"
#include "udata.h"

#define SCORES_MT "evalua.scores"

/* A closed (or never completed) column set has no val. */
struct lscores *lscores_check(lua_State *L, int arg) {
  struct lscores *s = luaL_checkudata(L, arg, SCORES_MT);
  if (!s->val) evalua_closed(L, arg);
  return s;
}

static int scores_gc(lua_State *L) {
  struct lscores *s = luaL_checkudata(L, 1, SCORES_MT);
  struct evm_alloc a = evalua_allocator(L);
  size_t n = s->n + 1, m = s->m + 1;
  for (size_t j = 0; j < s->m && s->val && s->miss && s->why; j++) {
    evm_free(&a, s->val[j], n, sizeof **s->val);
    evm_free(&a, s->miss[j], n, 1);
    evm_free(&a, s->why[j], n, sizeof **s->why);
  }
  evm_free(&a, s->val, m, sizeof *s->val), evm_free(&a, s->miss, m, sizeof *s->miss);
  evm_free(&a, s->why, m, sizeof *s->why);
  for (size_t r = 0; r < s->nreasons; r++) evm_free(&a, s->reasons[r], s->reason_len[r] + 1, 1);
  evm_free(&a, s->reasons, s->capreasons, sizeof *s->reasons);
  evm_free(&a, s->reason_len, s->caplens, sizeof *s->reason_len);
  evr_idtab_free(&s->seen);
  memset(s, 0, sizeof *s);
  return 0;
}

/* n zeroed items of size bytes from a; NULL when out of memory. */
static void *new_zeroed(const struct evm_alloc *a, size_t n, size_t size) {
  void *p = evm_new(a, n, size);
  if (p) memset(p, 0, n * size);
  return p;
}

/* new(n, m) -> scores, every value unmeasured with no reason yet. The
 * columns count against --mem-limit (evalua_allocator). */
static int l_new(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1), m = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0 && (uint64_t)n < SIZE_MAX / 16, 1, "a size from 0 to 2^59");
  luaL_argcheck(L, m >= 0 && (uint64_t)m < SIZE_MAX / 16, 2, "a size from 0 to 2^59");
  struct lscores *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  struct evm_alloc a = evalua_allocator(L);
  evr_idtab_init_alloc(&s->seen, &a);
  luaL_setmetatable(L, SCORES_MT);
  double cells = ((double)n + 1) * ((double)m + 1) * (sizeof **s->val + 1 + sizeof **s->why);
  evalua_make_room(L, cells < (double)SIZE_MAX ? (size_t)cells : SIZE_MAX);
  s->n = (size_t)n, s->m = (size_t)m; /* the sizes scores_gc frees with, whatever fails below */
  s->val = new_zeroed(&a, s->m + 1, sizeof *s->val);
  s->miss = new_zeroed(&a, s->m + 1, sizeof *s->miss);
  s->why = new_zeroed(&a, s->m + 1, sizeof *s->why);
  if (!s->val || !s->miss || !s->why) return evalua_nomem(L);
  for (size_t j = 0; j < s->m; j++) {
    s->val[j] = new_zeroed(&a, s->n + 1, sizeof **s->val);
    s->miss[j] = evm_new(&a, s->n + 1, 1);
    s->why[j] = new_zeroed(&a, s->n + 1, sizeof **s->why);
    if (!s->val[j] || !s->miss[j] || !s->why[j]) return evalua_nomem(L);
    memset(s->miss[j], 1, s->n);
  }
  lscores_reason(L, s, "", 0); /* index 0: no reason */
  return 1;
}

/* *p (*cap items of size bytes) grown to hold need, doubling; 0 or -1. */
static int grow_array(const struct evm_alloc *a, void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *q = c > *cap ? evm_resize(a, *p, *cap, c, size) : NULL;
  if (!q) return -1;
  *p = q, *cap = c;
  return 0;
}

uint32_t lscores_reason(lua_State *L, struct lscores *s, const char *text, size_t len) {
  uint32_t *v = evr_idtab_get(&s->seen, text, len);
  if (v) return *v;
  struct evm_alloc a = evalua_allocator(L);
  if (grow_array(&a, (void **)&s->reasons, &s->capreasons, s->nreasons + 1, sizeof *s->reasons) ||
      grow_array(&a, (void **)&s->reason_len, &s->caplens, s->nreasons + 1, sizeof *s->reason_len))
    evalua_nomem(L);
  char *copy = len < SIZE_MAX ? evm_new(&a, len + 1, 1) : NULL;
  if (!copy) evalua_nomem(L);
  memcpy(copy, text, len);
  copy[len] = '\0';
  int found;
  v = evr_idtab_put(&s->seen, copy, len, (uint32_t)s->nreasons, &found);
  if (!v) evm_free(&a, copy, len + 1, 1), evalua_nomem(L);
  s->reasons[s->nreasons] = copy, s->reason_len[s->nreasons] = len;
  return (uint32_t)s->nreasons++;
}

static void check_cell(lua_State *L, struct lscores *s, size_t *i, size_t *j) {
  lua_Integer a = luaL_checkinteger(L, 2), b = luaL_checkinteger(L, 3);
  luaL_argcheck(L, a >= 1 && (size_t)a <= s->n, 2, "row out of range");
  luaL_argcheck(L, b >= 1 && (size_t)b <= s->m, 3, "metric out of range");
  *i = (size_t)a - 1, *j = (size_t)b - 1;
}

/* s:set(i, j, value|nil, reason|nil): nil value = unmeasured for reason.
 * A value must be finite: NaN and infinities are refused here, so they
 * can never reach a mean. */
static int s_set(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  size_t i, j;
  check_cell(L, s, &i, &j);
  size_t len = 0;
  const char *why = luaL_optlstring(L, 5, NULL, &len);
  if (lua_isnoneornil(L, 4)) {
    s->miss[j][i] = 1;
  } else {
    double v = luaL_checknumber(L, 4);
    luaL_argcheck(L, isfinite(v), 4, "a score must be finite");
    s->val[j][i] = v, s->miss[j][i] = 0;
  }
  s->why[j][i] = why ? lscores_reason(L, s, why, len) : 0;
  return 0;
}

/* s:get(i, j) -> value (nil if unmeasured), reason (nil if none) */
static int s_get(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  size_t i, j;
  check_cell(L, s, &i, &j);
  if (s->miss[j][i]) lua_pushnil(L);
  else lua_pushnumber(L, s->val[j][i]);
  if (s->why[j][i]) lua_pushstring(L, s->reasons[s->why[j][i]]);
  else lua_pushnil(L);
  return 2;
}

/* s:column(j [, codes, v]) -> measured values of metric j in row order
 * (only of rows whose code is v, 1-based, when codes are given) */
static int s_column(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  lua_Integer j = luaL_checkinteger(L, 2);
  luaL_argcheck(L, j >= 1 && (size_t)j <= s->m, 2, "metric out of range");
  struct lcodes *c = lua_isnoneornil(L, 3) ? NULL : lcodes_check(L, 3);
  luaL_argcheck(L, !c || c->n == s->n, 3, "codes and scores differ in rows");
  lua_Integer v = c ? luaL_checkinteger(L, 4) : 1;
  luaL_argcheck(L, v >= 1 && (uint64_t)v <= (c ? c->nvalues : 1), 4, "a value of the codes");
  uint32_t want = (uint32_t)(v - 1);
  lua_newtable(L);
  lua_Integer k = 0;
  for (size_t i = 0; i < s->n; i++)
    if (!s->miss[j - 1][i] && (!c || c->code[i] == want)) lua_pushnumber(L, s->val[j - 1][i]), lua_rawseti(L, -2, ++k);
  return 1;
}

/* s:unmeasured(j) -> count, the most frequent reason (ties: first seen),
 * how many items have it, how many distinct reasons there are (no reason
 * counts as one) */
static int s_unmeasured(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  lua_Integer jj = luaL_checkinteger(L, 2);
  luaL_argcheck(L, jj >= 1 && (size_t)jj <= s->m, 2, "metric out of range");
  size_t j = (size_t)jj - 1, count = 0, best = 0, kinds = 0;
  size_t *freq = lists_scratch(L, s->nreasons + 1, sizeof *freq);
  size_t *first = lists_scratch(L, s->nreasons + 1, sizeof *first);
  memset(freq, 0, (s->nreasons + 1) * sizeof *freq);
  memset(first, 0, (s->nreasons + 1) * sizeof *first);
  for (size_t i = 0; i < s->n; i++) {
    if (!s->miss[j][i]) continue;
    uint32_t w = s->why[j][i];
    if (!freq[w]++) first[w] = i, kinds++;
    count++;
    if (freq[w] > freq[best] || (freq[w] == freq[best] && first[w] < first[best])) best = w;
  }
  lua_pushinteger(L, (lua_Integer)count);
  if (count && best) lua_pushstring(L, s->reasons[best]);
  else lua_pushnil(L);
  lua_pushinteger(L, (lua_Integer)freq[best]);
  lua_pushinteger(L, (lua_Integer)kinds);
  return 4;
}

/* s:reasoned(j) -> whether any row of metric j has a reason or is unmeasured */
static int s_reasoned(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  lua_Integer j = luaL_checkinteger(L, 2);
  luaL_argcheck(L, j >= 1 && (size_t)j <= s->m, 2, "metric out of range");
  int any = 0;
  for (size_t i = 0; i < s->n && !any; i++) any = s->miss[j - 1][i] || s->why[j - 1][i];
  lua_pushboolean(L, any);
  return 1;
}

/* s:histograms(j, sys_codes, bins, top) -> {[s] = {count per bin}}: bins
 * equal parts of [0, top]; values outside go to the first or last bin. */
static int s_histograms(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  lua_Integer j = luaL_checkinteger(L, 2);
  struct lcodes *c = lcodes_check(L, 3);
  lua_Integer nb = luaL_checkinteger(L, 4);
  double top = luaL_checknumber(L, 5);
  luaL_argcheck(L, j >= 1 && (size_t)j <= s->m, 2, "metric out of range");
  luaL_argcheck(L, c->n == s->n, 3, "codes and scores differ in rows");
  luaL_argcheck(L, nb >= 1 && nb <= 1000, 4, "1 to 1000 bins");
  luaL_argcheck(L, top > 0, 5, "a positive top");
  if (c->nvalues > (SIZE_MAX >> 4) / (size_t)nb) return luaL_error(L, "not enough memory");
  size_t *count = lists_scratch(L, c->nvalues * (size_t)nb + 1, sizeof *count);
  memset(count, 0, (c->nvalues * (size_t)nb + 1) * sizeof *count);
  for (size_t i = 0; i < s->n; i++) {
    if (s->miss[j - 1][i]) continue;
    double b = floor(s->val[j - 1][i] / top * (double)nb);
    size_t k = b < 0 ? 0 : b >= (double)nb ? (size_t)nb - 1 : (size_t)b;
    count[c->code[i] * (size_t)nb + k]++;
  }
  lua_createtable(L, (int)c->nvalues, 0);
  for (size_t a = 0; a < c->nvalues; a++) {
    lua_createtable(L, (int)nb, 0);
    for (lua_Integer k = 0; k < nb; k++)
      lua_pushinteger(L, (lua_Integer)count[a * (size_t)nb + (size_t)k]), lua_rawseti(L, -2, k + 1);
    lua_rawseti(L, -2, (lua_Integer)a + 1);
  }
  return 1;
}

/* ---- built-in metrics over a data set --------------------------------------- */

struct job {
  const struct evt_table *t;
  struct lscores *s;
  size_t r0, r1;
  const struct evr_measures *ms;
  const size_t *rcol;            /* score column of each measure */
  size_t nans;
  const enum evtext_metric *akind;
  const size_t *acol;
  double level;
  size_t depth;
  uint8_t *why;                  /* per row scratch */
  uint32_t (*ids)[EVT_NWHY + 1]; /* reason ids of each column, fixed before the threads start */
  const struct evm_alloc *a;     /* the state's counted allocator: any thread may call it */
  int nomem;
};

static void reasons_of(struct job *jb, size_t j, const uint32_t *code_id) {
  for (size_t r = jb->r0; r < jb->r1; r++) {
    double v = jb->s->val[j][r];
    if (jb->why[r]) jb->s->miss[j][r] = 1, jb->s->why[j][r] = code_id[jb->why[r]];
    else if (v != v) jb->s->miss[j][r] = 1, jb->s->why[j][r] = code_id[EVT_NWHY];
    else jb->s->miss[j][r] = 0, jb->s->why[j][r] = 0;
  }
}

static void run_job(void *p) {
  struct job *jb = p;
  if (jb->ms && jb->ms->n) {
    struct evr_ranker *rk = evr_ranker_new_alloc(jb->a);
    double **out = evm_new(jb->a, jb->ms->n, sizeof *out);
    if (!rk || !out) { jb->nomem = 1; evr_ranker_free(rk); evm_free(jb->a, out, jb->ms->n, sizeof *out); return; }
    for (size_t c = 0; c < jb->ms->n; c++) out[c] = jb->s->val[jb->rcol[c]];
    evt_eval_retrieval(jb->t, jb->r0, jb->r1, jb->ms->cols, jb->ms->n, jb->level, jb->depth, rk, out, jb->why);
    for (size_t c = 0; c < jb->ms->n; c++) reasons_of(jb, jb->rcol[c], jb->ids[c]);
    evr_ranker_free(rk), evm_free(jb->a, out, jb->ms->n, sizeof *out);
  }
  evtext_ws *ws = jb->nans ? evtext_ws_new_alloc(jb->a->fn, jb->a->ud) : NULL;
  if (jb->nans && !ws) { jb->nomem = 1; return; }
  for (size_t a = 0; a < jb->nans; a++) {
    size_t j = jb->acol[a];
    evt_eval_answers(jb->t, jb->r0, jb->r1, jb->akind[a], ws, jb->s->val[j], jb->why);
    reasons_of(jb, j, jb->ids[jb->ms->n + a]);
  }
  evtext_ws_free(ws);
}

static enum evtext_metric answer_kind(lua_State *L, const char *name) {
  static const char *const names[] = {"exact_match", "exact_match_norm", "token_f1", "rouge_l", "edit_similarity", NULL};
  static const enum evtext_metric kinds[] = {EVTEXT_EXACT, EVTEXT_EXACT_NORM, EVTEXT_F1, EVTEXT_ROUGE_L, EVTEXT_EDIT};
  for (int i = 0; names[i]; i++)
    if (strcmp(name, names[i]) == 0) return kinds[i];
  return (enum evtext_metric)luaL_error(L, "'%s' is not a built-in answer metric", name);
}

/* The reason ids of one metric column: one per evt_why, then "undefined". */
static void column_reasons(lua_State *L, struct lscores *s, const char *name, uint32_t *ids) {
  for (int w = 1; w < EVT_NWHY; w++) ids[w] = lscores_reason(L, s, evt_why_text[w], strlen(evt_why_text[w]));
  lua_pushfstring(L, "%s is undefined for this row", name);
  size_t len;
  const char *u = lua_tolstring(L, -1, &len);
  ids[EVT_NWHY] = lscores_reason(L, s, u, len);
  lua_pop(L, 1);
}

/* Reads specs {{j =, name =, kind = "retrieval"|"answer"}...} into the
 * job's arrays; the plan is scratch (evalua_scratch), freed whatever
 * happens, so a bad spec leaks nothing. */
struct plan {
  struct evr_measures ms;
  size_t *rcol, *acol, nans, n;
  enum evtext_metric *akind;
  uint32_t (*ids)[EVT_NWHY + 1];
  uint8_t *why;                  /* per row, size rows + 1 */
  size_t rows;
  struct evm_alloc a;
};

static void plan_done(void *ud) {
  struct plan *p = ud;
  evr_measures_free(&p->ms);
  evm_free(&p->a, p->rcol, p->n + 1, sizeof *p->rcol), evm_free(&p->a, p->acol, p->n + 1, sizeof *p->acol);
  evm_free(&p->a, p->akind, p->n + 1, sizeof *p->akind), evm_free(&p->a, p->ids, p->n + 1, sizeof *p->ids);
  evm_free(&p->a, p->why, p->rows + 1, 1);
}

static struct plan *new_plan(lua_State *L, int specs, size_t rows) {
  struct plan *p = evalua_scratch(L, sizeof *p, plan_done);
  evr_measures_init(&p->ms);
  p->a = evalua_allocator(L);
  p->n = lua_rawlen(L, specs), p->rows = rows;
  p->rcol = evm_new(&p->a, p->n + 1, sizeof *p->rcol), p->acol = evm_new(&p->a, p->n + 1, sizeof *p->acol);
  p->akind = evm_new(&p->a, p->n + 1, sizeof *p->akind), p->ids = evm_new(&p->a, p->n + 1, sizeof *p->ids);
  p->why = evm_new(&p->a, rows + 1, 1);
  if (!p->rcol || !p->acol || !p->akind || !p->ids || !p->why) evalua_nomem(L);
  return p;
}

static void read_plan(lua_State *L, struct lscores *s, int specs, struct plan *p) {
  size_t nret = 0;
  for (int pass = 0; pass < 2; pass++) /* retrieval first: their reason ids come first */
    for (size_t k = 1; k <= p->n; k++) {
      lua_rawgeti(L, specs, (lua_Integer)k);
      lua_getfield(L, -1, "j"), lua_getfield(L, -2, "name"), lua_getfield(L, -3, "kind");
      lua_Integer j = luaL_checkinteger(L, -3) - 1;
      const char *name = luaL_checkstring(L, -2);
      int retrieval = strcmp(luaL_checkstring(L, -1), "retrieval") == 0;
      luaL_argcheck(L, j >= 0 && (size_t)j < s->m, 3, "metric column out of range");
      if (pass == 0 && retrieval) {
        struct evr_error err;
        size_t before = p->ms.n;
        if (evr_measures_add(&p->ms, name, &err)) luaL_error(L, "%s", err.msg);
        if (p->ms.n != before + 1) luaL_error(L, "'%s' names several measures", name);
        p->rcol[nret] = (size_t)j;
        column_reasons(L, s, name, p->ids[nret++]);
      } else if (pass == 1 && !retrieval) {
        p->acol[p->nans] = (size_t)j;
        p->akind[p->nans] = answer_kind(L, name);
        column_reasons(L, s, name, p->ids[nret + p->nans++]);
      }
      lua_pop(L, 4);
    }
}

/* s:eval(table, specs [, {level =, depth =}]): the built-in metrics of
 * specs, each into its column j, over both halves of the rows at once. */
static int s_eval(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  const struct evt_table *t = ltable_check(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_argcheck(L, t->n == s->n, 2, "the data set and the scores differ in rows");
  double level = 1;
  lua_Integer depth = 0;
  if (lua_istable(L, 4)) {
    lua_getfield(L, 4, "level"), lua_getfield(L, 4, "depth");
    level = luaL_optnumber(L, -2, 1), depth = luaL_optinteger(L, -1, 0);
    luaL_argcheck(L, isfinite(level), 4, "a finite relevance level");
    lua_pop(L, 2);
  }
  struct plan *p = new_plan(L, 3, t->n);
  read_plan(L, s, 3, p);
  struct job half[2];
  for (int h = 0; h < 2; h++)
    half[h] = (struct job){t, s, h ? t->n / 2 : 0, h ? t->n : t->n / 2, &p->ms, p->rcol, p->nans,
                           p->akind, p->acol, level, (size_t)(depth > 0 ? depth : 0), p->why, p->ids, &p->a, 0};
  evalua_run_two(run_job, (void *[]){&half[0], &half[1]});
  if (half[0].nomem || half[1].nomem) return evalua_nomem(L);
  return 0;
}

/* ---- aggregates ------------------------------------------------------------- */

static void view(struct lscores *s, struct evg_scores *v) {
  v->n = s->n, v->m = s->m;
  v->val = (const double *const *)s->val;
  v->miss = (const uint8_t *const *)s->miss;
}

static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void push_stat(lua_State *L, const struct evg_stat *st) {
  lua_createtable(L, 0, 9);
  lua_pushinteger(L, (lua_Integer)st->n), lua_setfield(L, -2, "n");
  lua_pushinteger(L, (lua_Integer)st->measured), lua_setfield(L, -2, "measured");
  if (!st->measured) return;
  set_num(L, "mean", st->mean), set_num(L, "sd", st->sd), set_num(L, "min", st->min), set_num(L, "max", st->max);
  if (st->method == EVSTATS_CI_NONE) return; /* no interval: one value, or ci = false */
  set_num(L, "lo", st->lo), set_num(L, "hi", st->hi);
  lua_pushstring(L, evstats_ci_name(st->method)), lua_setfield(L, -2, "ci_method");
}

static void result_done(void *p) { evg_result_free(p); }

/* s:aggregate(sys_codes, systems, metric_names, dim_codes|nil, values, ci|false)
 * -> {[system] = {[value] = {[metric] = stat}}}, {[system] = {value...}}
 * for one dimension (nil codes: every row in the single value); only
 * groups with rows appear, the values of each system in code order. */
static int s_aggregate(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  struct lcodes *sys = lcodes_check(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE), luaL_checktype(L, 4, LUA_TTABLE), luaL_checktype(L, 6, LUA_TTABLE);
  struct lcodes *dc = lua_isnil(L, 5) ? NULL : lcodes_check(L, 5);
  struct evg_dim dim = {dc ? dc->code : NULL, dc ? dc->nvalues : 1};
  luaL_argcheck(L, lua_rawlen(L, 6) == dim.nvalues, 6, "one name per value");
  luaL_argcheck(L, sys->n == s->n && (!dc || dc->n == s->n), 2, "codes and scores differ in rows");
  struct evg_ci ci = {0, 1000, 0.95, 1, 2000, 2e7, evalua_run_two};
  if (lua_istable(L, 7)) {
    ci.on = 1;
    lua_getfield(L, 7, "resamples"), lua_getfield(L, 7, "level"), lua_getfield(L, 7, "seed");
    lua_getfield(L, 7, "bootstrap_max"), lua_getfield(L, 7, "draw_budget");
    lua_Integer resamples = luaL_optinteger(L, -5, 1000), most = luaL_optinteger(L, -2, 2000);
    ci.level = luaL_optnumber(L, -4, 0.95), ci.seed = (uint64_t)luaL_optinteger(L, -3, 1);
    ci.draw_budget = luaL_optnumber(L, -1, 2e7);
    luaL_argcheck(L, resamples >= 1 && resamples <= EVSTATS_MAX_RESAMPLES, 7, "resamples from 1 to 1e7");
    luaL_argcheck(L, ci.level > 0 && ci.level < 1, 7, "a level between 0 and 1");
    luaL_argcheck(L, most >= 0 && ci.draw_budget >= 0, 7, "bootstrap_max and draw_budget at least 0");
    ci.resamples = (size_t)resamples, ci.bootstrap_max = (size_t)most;
    lua_pop(L, 5);
  }
  struct evg_scores v;
  view(s, &v);
  struct evg_result *res = evalua_scratch(L, sizeof *res, result_done);
  if (evg_aggregate(&v, sys->code, sys->nvalues, &dim, &ci, res)) return luaL_error(L, "not enough memory");
  const struct evg_result r = *res; /* a view: res is freed when the call ends */
  lua_newtable(L); /* aggregates */
  lua_newtable(L); /* values present per system */
  int agg = lua_gettop(L) - 1, present = agg + 1;
  for (size_t k = 0; k < r.ngroups; k++) {
    lua_rawgeti(L, 3, (lua_Integer)r.sys[k] + 1); /* system name */
    if (lua_rawget(L, agg) == LUA_TNIL) { /* first group of this system */
      lua_pop(L, 1);
      lua_newtable(L);
      lua_rawgeti(L, 3, (lua_Integer)r.sys[k] + 1), lua_pushvalue(L, -2), lua_rawset(L, agg);
      lua_rawgeti(L, 3, (lua_Integer)r.sys[k] + 1), lua_newtable(L), lua_rawset(L, present);
    }
    lua_rawgeti(L, 6, (lua_Integer)r.value[k] + 1);  /* value name */
    lua_createtable(L, 0, (int)s->m);
    for (size_t j = 0; j < s->m; j++) {
      lua_rawgeti(L, 4, (lua_Integer)j + 1);
      push_stat(L, &r.stat[k * s->m + j]);
      lua_rawset(L, -3);
    }
    lua_rawset(L, -3); /* cells[value] = stats */
    lua_pop(L, 1);
    lua_rawgeti(L, 3, (lua_Integer)r.sys[k] + 1);
    lua_rawget(L, present);
    lua_rawgeti(L, 6, (lua_Integer)r.value[k] + 1);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
  }
  return 2;
}

/* s:bottom(j, sys_codes, k, lower_is_better) -> {[s] = {row, ...}} (1-based) */
static int s_bottom(lua_State *L) {
  struct lscores *s = lscores_check(L, 1);
  lua_Integer j = luaL_checkinteger(L, 2);
  struct lcodes *sys = lcodes_check(L, 3);
  lua_Integer k = luaL_checkinteger(L, 4);
  luaL_argcheck(L, j >= 1 && (size_t)j <= s->m, 2, "metric out of range");
  luaL_argcheck(L, k >= 0, 4, "negative k");
  luaL_argcheck(L, sys->n == s->n, 3, "codes and scores differ in rows");
  if ((uint64_t)k > s->n) k = (lua_Integer)s->n; /* no system has more rows than that */
  if (k && sys->nvalues > (SIZE_MAX >> 4) / (size_t)k) return luaL_error(L, "not enough memory");
  size_t *out = lists_scratch(L, sys->nvalues * (size_t)k + 1, sizeof *out);
  size_t *count = lists_scratch(L, sys->nvalues + 1, sizeof *count);
  struct evg_scores v;
  view(s, &v);
  evg_bottom(&v, (size_t)j - 1, sys->code, sys->nvalues, (size_t)k, lua_toboolean(L, 5), out, count);
  lua_createtable(L, (int)sys->nvalues, 0);
  for (size_t a = 0; a < sys->nvalues; a++) {
    lua_createtable(L, (int)count[a], 0);
    for (size_t i = 0; i < count[a]; i++)
      lua_pushinteger(L, (lua_Integer)out[a * (size_t)k + i] + 1), lua_rawseti(L, -2, (lua_Integer)i + 1);
    lua_rawseti(L, -2, (lua_Integer)a + 1);
  }
  return 1;
}

static int make_scores(lua_State *L) {
  lua_settop(L, 0);
  lua_pushinteger(L, 0), lua_pushinteger(L, 0);
  return l_new(L);
}

int luaopen_evalua_scores(lua_State *L) {
  static const luaL_Reg meth[] = {
    {"set", s_set}, {"get", s_get}, {"column", s_column}, {"unmeasured", s_unmeasured}, {"reasoned", s_reasoned}, {"histograms", s_histograms}, {"eval", s_eval},
    {"aggregate", s_aggregate}, {"bottom", s_bottom}, {NULL, NULL},
  };
  evalua_newclass(L, SCORES_MT, make_scores);
  luaL_newlib(L, meth);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, scores_gc), lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_new);
  return 1;
}
