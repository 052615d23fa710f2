/* evalua._retrieval: Lua bindings of the retrieval measures (metrics/
 * retrieval.h, ranking.h, measures.h, trec.h). Rankings and gold labels are
 * read from Lua tables straight into C scratch space; a whole data set is
 * one call. lua/evalua/eval/metrics.lua is the documented face of this module. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "evalua/measures.h"
#include "evalua/ranking.h"
#include "evalua/trec.h"
#include "evalua/trec_eval.h"
#include "l_lists.h"
#include "modules.h"
#include "parallel.h"
#include "runtime.h"
#include "udata.h"

#define SCRATCH_MT "evalua.retrieval.scratch"
#define TREC_MT "evalua.TrecData"
#define FILES_MT "evalua.TrecFiles"

/* TREC data: the mapped files and record arrays of metrics/trec.c, which
 * count against --mem-limit at a charge of twice the files' size. */
struct ltrec {
  struct evr_trec *t;
  size_t charge;
};

/* C memory of one call; freed by __close when the call ends or raises.
 * The ranker, accumulators and values count against --mem-limit; so does
 * a report of TREC data, charged at its size while it is held. */
struct scratch {
  struct evm_alloc a;
  struct evr_ranker *rk;
  struct evr_measures ms;
  struct evr_acc *acc;
  double *values;
  size_t nvalues;      /* of acc and values */
  struct evr_trec_report rep;
  size_t rep_charge;
};

static int scratch_close(lua_State *L) {
  struct scratch *s = luaL_checkudata(L, 1, SCRATCH_MT);
  evr_ranker_free(s->rk);
  evr_measures_free(&s->ms);
  evm_free(&s->a, s->acc, s->nvalues, sizeof *s->acc), evm_free(&s->a, s->values, s->nvalues, sizeof *s->values);
  evr_trec_report_free(&s->rep);
  evalua_uncharge(evalua_runtime(L), s->rep_charge);
  memset(s, 0, sizeof *s);
  return 0;
}

static struct scratch *push_scratch(lua_State *L) {
  struct scratch *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  s->a = evalua_allocator(L);
  luaL_setmetatable(L, SCRATCH_MT);
  if (!(s->rk = evr_ranker_new_alloc(&s->a))) evalua_nomem(L);
  return s;
}

/* Room for a value and an accumulator per measure. */
static void alloc_values(lua_State *L, struct scratch *s) {
  s->nvalues = s->ms.n + 1;
  s->acc = evm_new(&s->a, s->nvalues, sizeof *s->acc);
  s->values = evm_new(&s->a, s->nvalues, sizeof *s->values);
  if (!s->acc || !s->values) evalua_nomem(L);
  memset(s->acc, 0, s->nvalues * sizeof *s->acc);
}

static int make_scratch(lua_State *L) {
  push_scratch(L);
  return 1;
}

/* Scratch for this call, closed when the call returns or raises. */
static struct scratch *new_scratch(lua_State *L) {
  struct scratch *s = push_scratch(L);
  lua_toclose(L, -1);
  return s;
}

/* ---- options and measures ------------------------------------------------ */

struct opts {
  double level;
  size_t depth;
  int complete;
};

/* gain is read by ev.metrics.ndcg in Lua and passed along with the rest. */
static const char *const retrieval_options[] = {"level", "depth", "complete", "gain", NULL};

static struct opts check_opts(lua_State *L, int arg) {
  struct opts o = {1.0, 0, 0};
  if (lua_isnoneornil(L, arg)) return o;
  lists_check_options(L, arg, retrieval_options);
  if (lua_getfield(L, arg, "level") != LUA_TNIL) {
    if (!lua_isnumber(L, -1)) luaL_argerror(L, arg, "'level' must be a number");
    o.level = lua_tonumber(L, -1);
  }
  if (lua_getfield(L, arg, "depth") != LUA_TNIL) {
    lua_Integer d = lua_tointeger(L, -1);
    if (!lua_isinteger(L, -1) || d < 1) luaL_argerror(L, arg, "'depth' must be a positive integer");
    o.depth = (size_t)d;
  }
  o.complete = lua_getfield(L, arg, "complete") != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 3);
  return o;
}

static void add_measure(lua_State *L, int arg, struct evr_measures *ms, const char *spec) {
  struct evr_error err;
  if (evr_measures_add(ms, spec, &err)) luaL_argerror(L, arg, err.msg);
}

/* A measure name or a list of them. */
static void check_measures(lua_State *L, int arg, struct evr_measures *ms) {
  if (lua_type(L, arg) == LUA_TSTRING) {
    add_measure(L, arg, ms, lua_tostring(L, arg));
    return;
  }
  luaL_argexpected(L, lua_type(L, arg) == LUA_TTABLE, arg, "measure name or list of names");
  lua_Integer n = luaL_len(L, arg);
  if (n == 0) luaL_argerror(L, arg, "no measure given");
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, arg, i) != LUA_TSTRING)
      luaL_argerror(L, arg, lua_pushfstring(L, "measure %I is a %s, not a name", i, luaL_typename(L, -1)));
    add_measure(L, arg, ms, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
}

static void push_names(lua_State *L, const struct evr_measures *ms) {
  lua_createtable(L, (int)ms->n, 0);
  for (size_t c = 0; c < ms->n; c++) {
    lua_pushstring(L, ms->cols[c].name);
    lua_rawseti(L, -2, (lua_Integer)c + 1);
  }
}

/* ---- rankings and gold labels from Lua tables ------------------------------ */

/* Errors name where the value came from: "row 3 (qid q17): retrieved[2]". */
static int fail(lua_State *L, int arg, const char *where, const char *what) {
  return luaL_argerror(L, arg, lua_pushfstring(L, "%s%s", where, what));
}

/* The id at the top of the stack (a string or a number), copied into the
 * ranker; pops it. */
static const char *take_id(lua_State *L, struct evr_ranker *rk, size_t *len) {
  int t = lua_type(L, -1);
  if (t != LUA_TSTRING && t != LUA_TNUMBER) return NULL;
  const char *s = lua_tolstring(L, -1, len);
  const char *id = evr_ranker_copy(rk, s, *len);
  if (!id) evalua_nomem(L);
  lua_pop(L, 1);
  return id;
}

/* A list of ids in rank order, or of {id =, score =}; returns whether the
 * ranking is to be ordered by score. */
static int read_ranking(lua_State *L, int arg, int t, struct evr_ranker *rk, const char *where) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, t);
  int scored = -1; /* unknown until the first entry */
  for (lua_Integer i = 1; i <= n; i++) {
    size_t len;
    double score = 0;
    int ty = lua_rawgeti(L, t, i);
    if (ty == LUA_TTABLE) {
      int e = lua_gettop(L);
      lua_getfield(L, e, "id");
      int has = lua_getfield(L, e, "score") != LUA_TNIL;
      if (has && !lua_isnumber(L, -1))
        fail(L, arg, where, lua_pushfstring(L, "[%I].score is not a number", i));
      score = lua_tonumber(L, -1);
      if (isnan(score)) fail(L, arg, where, lua_pushfstring(L, "[%I].score is NaN", i));
      lua_pop(L, 1);
      if (scored >= 0 && scored != has)
        fail(L, arg, where, lua_pushfstring(L, "[%I] %s a score while [1] %s", i, has ? "has" : "lacks",
                                            scored ? "has one" : "does not"));
      scored = has;
      const char *id = take_id(L, rk, &len);
      if (!id) fail(L, arg, where, lua_pushfstring(L, "[%I].id is missing or not a string", i));
      if (evr_ranker_add(rk, id, len, score)) evalua_nomem(L);
      lua_pop(L, 1);
    } else {
      if (scored == 1) fail(L, arg, where, lua_pushfstring(L, "[%I] is a plain id among {id=, score=} entries", i));
      scored = 0;
      const char *id = take_id(L, rk, &len);
      if (!id) fail(L, arg, where, lua_pushfstring(L, "[%I] is a %s, not an id", i, lua_typename(L, ty)));
      if (evr_ranker_add(rk, id, len, 0)) evalua_nomem(L);
    }
  }
  return scored == 1;
}

static void judge(lua_State *L, struct evr_ranker *rk, const char *id, size_t len, double grade) {
  if (evr_ranker_judge(rk, id, len, grade) < 0) evalua_nomem(L);
}

/* A list of relevant ids (grade 1). */
static void read_gold_list(lua_State *L, int arg, int t, struct evr_ranker *rk, const char *where) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, t);
  for (lua_Integer i = 1; i <= n; i++) {
    size_t len;
    int ty = lua_rawgeti(L, t, i);
    const char *id = take_id(L, rk, &len);
    if (!id) fail(L, arg, where, lua_pushfstring(L, "[%I] is a %s, not an id", i, lua_typename(L, ty)));
    judge(L, rk, id, len, 1.0);
  }
}

/* A set {id = true} or a map {id = grade}; false leaves an id out. */
static void read_gold_map(lua_State *L, int arg, int t, struct evr_ranker *rk, const char *where) {
  lua_pushnil(L);
  while (lua_next(L, t)) {
    int vt = lua_type(L, -1);
    if (vt != LUA_TBOOLEAN && !lua_isnumber(L, -1)) {
      const char *type = luaL_typename(L, -1), *key = luaL_tolstring(L, -2, NULL);
      fail(L, arg, where, lua_pushfstring(L, "[%s] is a %s, not a grade or true", key, type));
    }
    double grade = vt == LUA_TBOOLEAN ? lua_toboolean(L, -1) : lua_tonumber(L, -1);
    if (isnan(grade)) fail(L, arg, where, lua_pushfstring(L, "[%s] is NaN", luaL_tolstring(L, -2, NULL)));
    lua_pop(L, 1);
    if (vt == LUA_TBOOLEAN && grade == 0) continue;
    size_t len;
    lua_pushvalue(L, -1);
    const char *id = take_id(L, rk, &len);
    if (!id) fail(L, arg, where, "has a key that is not an id");
    judge(L, rk, id, len, grade);
  }
}

/* Gold labels: a list of ids, a set, or a map id -> grade. A table with
 * both list entries and other keys is refused. */
static void read_gold(lua_State *L, int arg, int t, struct evr_ranker *rk, const char *where) {
  size_t n = lua_rawlen(L, t), keys = 0;
  if (n == 0) {
    read_gold_map(L, arg, t, rk, where);
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, t)) lua_pop(L, 1), keys++;
  if (keys != n) fail(L, arg, where, " mixes a list of ids with other keys");
  read_gold_list(L, arg, t, rk, where);
}

/* ---- one query -------------------------------------------------------------- */

/* score(ranking, gold, measures [, opts]) -> {name = value}, names */
static int l_score(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  struct opts o = check_opts(L, 4);
  struct scratch *s = new_scratch(L);
  check_measures(L, 3, &s->ms);
  alloc_values(L, s);
  read_gold(L, 2, 2, s->rk, "gold");
  int by_score = read_ranking(L, 1, 1, s->rk, "ranking");
  struct evr_ranking r;
  if (evr_ranker_finish(s->rk, by_score, o.depth, &r)) evalua_nomem(L);
  evr_eval(s->ms.cols, s->ms.n, &r, o.level, s->values);
  lua_createtable(L, 0, (int)s->ms.n);
  for (size_t c = 0; c < s->ms.n; c++) {
    if (isnan(s->values[c])) continue;
    lua_pushnumber(L, s->values[c]);
    lua_setfield(L, -2, s->ms.cols[c].name);
  }
  push_names(L, &s->ms);
  return 2;
}

/* columns(measures) -> names: checks names without computing anything. */
static int l_columns(lua_State *L) {
  struct scratch *s = new_scratch(L);
  check_measures(L, 1, &s->ms);
  push_names(L, &s->ms);
  return 1;
}

/* ---- whole data sets ---------------------------------------------------------- */

struct batch {
  struct scratch *s;
  int res;      /* stack index of the result table */
  int per_query, skipped;
  lua_Integer n_per_query, n_skipped;
};

static void start_result(lua_State *L, struct batch *b, struct scratch *s) {
  b->s = s;
  alloc_values(L, s);
  lua_createtable(L, 0, 6);
  b->res = lua_gettop(L);
  push_names(L, &s->ms);
  lua_setfield(L, b->res, "columns");
  lua_newtable(L);
  b->per_query = lua_gettop(L);
  lua_newtable(L);
  b->skipped = lua_gettop(L);
  b->n_per_query = b->n_skipped = 0;
}

/* Appends {qid =, <column> = value...}; the qid is at the top of the stack. */
static void add_query(lua_State *L, struct batch *b, const struct evr_ranking *r, double level) {
  struct scratch *s = b->s;
  evr_eval(s->ms.cols, s->ms.n, r, level, s->values);
  lua_createtable(L, 0, (int)s->ms.n + 1);
  lua_insert(L, -2);
  lua_setfield(L, -2, "qid");
  for (size_t c = 0; c < s->ms.n; c++) {
    evr_acc_add(&s->acc[c], &s->ms.cols[c], s->values[c]);
    if (isnan(s->values[c])) continue; /* unmeasured: no value */
    lua_pushnumber(L, s->values[c]);
    lua_setfield(L, -2, s->ms.cols[c].name);
  }
  lua_rawseti(L, b->per_query, ++b->n_per_query);
}

/* Records a query that was not evaluated; qid at the top of the stack. */
static void add_skipped(lua_State *L, struct batch *b, lua_Integer index, const char *reason, int aligned) {
  lua_createtable(L, 0, 3);
  lua_insert(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "qid");
  lua_pushstring(L, reason);
  lua_setfield(L, -3, "reason");
  if (index) {
    lua_pushinteger(L, index);
    lua_setfield(L, -3, "index");
  }
  if (aligned) { /* per_query stays aligned with the rows */
    lua_createtable(L, 0, 2);
    lua_insert(L, -2);
    lua_setfield(L, -2, "qid");
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "skipped");
    lua_rawseti(L, b->per_query, ++b->n_per_query);
  } else {
    lua_pop(L, 1);
  }
  lua_rawseti(L, b->skipped, ++b->n_skipped);
}

/* Summaries: of TREC data as metrics/trec_eval.c made them, else of the rows. */
static void finish_result(lua_State *L, struct batch *b) {
  struct scratch *s = b->s;
  const struct evr_trec_report *rep = s->rep.summary ? &s->rep : NULL;
  lua_setfield(L, b->res, "skipped");
  lua_setfield(L, b->res, "per_query");
  lua_createtable(L, 0, (int)s->ms.n);
  lua_createtable(L, 0, (int)s->ms.n);
  for (size_t c = 0; c < s->ms.n; c++) {
    double v = rep ? rep->summary[c] : evr_acc_value(&s->acc[c], &s->ms.cols[c]);
    if (!isnan(v)) {
      lua_pushnumber(L, v);
      lua_setfield(L, -3, s->ms.cols[c].name);
    }
    lua_pushinteger(L, (lua_Integer)(rep ? rep->measured[c] : s->acc[c].n));
    lua_setfield(L, -2, s->ms.cols[c].name);
  }
  lua_setfield(L, b->res, "n");
  lua_setfield(L, b->res, "summary");
}

/* The row's qid (or its number) and a prefix for error messages. */
static const char *row_label(lua_State *L, int row, lua_Integer i) {
  int t = lua_getfield(L, row, "qid");
  if (t == LUA_TSTRING || t == LUA_TNUMBER) {
    lua_pushfstring(L, "row %I (qid %s): ", i, lua_tostring(L, -1));
    return lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  lua_pushinteger(L, i);
  return lua_pushfstring(L, "row %I: ", i);
}

/* Judgments of a row: graded_relevance (a map) and/or gold_doc_ids (a
 * list); with both, every gold id must have a grade. 0 when it has none. */
static int row_gold(lua_State *L, int row, struct evr_ranker *rk, const char *where) {
  int graded = lua_getfield(L, row, "graded_relevance");
  int ids = lua_getfield(L, row, "gold_doc_ids");
  int top = lua_gettop(L);
  if (graded == LUA_TNIL && ids == LUA_TNIL) return lua_pop(L, 2), 0;
  if (graded != LUA_TNIL && graded != LUA_TTABLE) fail(L, 1, where, "graded_relevance is not a table");
  if (ids != LUA_TNIL && ids != LUA_TTABLE) fail(L, 1, where, "gold_doc_ids is not a list");
  if (graded == LUA_TTABLE) {
    lua_pushfstring(L, "%sgraded_relevance", where);
    read_gold_map(L, 1, top - 1, rk, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  if (ids == LUA_TTABLE && graded != LUA_TTABLE) {
    lua_pushfstring(L, "%sgold_doc_ids", where);
    read_gold(L, 1, top, rk, lua_tostring(L, -1));
    lua_pop(L, 1);
  } else if (ids == LUA_TTABLE) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, top);
    for (lua_Integer i = 1; i <= n; i++) {
      size_t len;
      lua_rawgeti(L, top, i);
      const char *id = take_id(L, rk, &len);
      if (!id) fail(L, 1, where, lua_pushfstring(L, "gold_doc_ids[%I] is not an id", i));
      if (!evr_ranker_is_judged(rk, id, len))
        fail(L, 1, where, lua_pushfstring(L, "gold_doc_ids has '%s', which graded_relevance lacks "
                                             "(mixed graded and ungraded relevance)", lua_pushlstring(L, id, len)));
    }
  }
  lua_pop(L, 2);
  return 1;
}

static void evaluate_rows(lua_State *L, struct batch *b, const struct opts *o) {
  lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    int top = lua_gettop(L);
    if (lua_geti(L, 1, i) != LUA_TTABLE)
      luaL_argerror(L, 1, lua_pushfstring(L, "row %I is a %s, not a table", i, luaL_typename(L, -1)));
    int row = lua_gettop(L);
    const char *where = row_label(L, row, i); /* pushes qid and label */
    evr_ranker_reset(b->s->rk);
    if (!row_gold(L, row, b->s->rk, where)) {
      lua_pushvalue(L, row + 1);
      add_skipped(L, b, i, "no gold labels", 1);
      lua_settop(L, top);
      continue;
    }
    int rt = lua_getfield(L, row, "retrieved");
    if (rt == LUA_TNIL) {
      lua_pushvalue(L, row + 1);
      add_skipped(L, b, i, "no retrieved list", 1);
      lua_settop(L, top);
      continue;
    }
    if (rt != LUA_TTABLE) fail(L, 1, where, "field 'retrieved' is not a list");
    lua_pushfstring(L, "%sretrieved", where);
    int by_score = read_ranking(L, 1, lua_gettop(L) - 1, b->s->rk, lua_tostring(L, -1));
    struct evr_ranking r;
    if (evr_ranker_finish(b->s->rk, by_score, o->depth, &r)) evalua_nomem(L);
    lua_pushvalue(L, row + 1);
    add_query(L, b, &r, o->level);
    lua_settop(L, top);
  }
}

/* A row of per_query from values that metrics/trec_eval.c computed. */
static void add_values(lua_State *L, struct batch *b, const struct evr_trec_row *row, const double *v) {
  const struct evr_measures *ms = &b->s->ms;
  lua_createtable(L, 0, (int)ms->n + 1);
  lua_pushlstring(L, row->qid, row->len);
  lua_setfield(L, -2, "qid");
  for (size_t c = 0; c < ms->n; c++) {
    if (isnan(v[c])) continue; /* unmeasured: no value */
    lua_pushnumber(L, v[c]);
    lua_setfield(L, -2, ms->cols[c].name);
  }
  lua_rawseti(L, b->per_query, ++b->n_per_query);
}

/* TREC data: the queries, values and summaries as `evalua trec` has them. */
static void evaluate_trec(lua_State *L, struct batch *b, const struct evr_trec *t, const struct opts *o) {
  struct scratch *s = b->s;
  struct evr_trec_opts how = {o->level, o->depth, o->complete, 0, 0, 0, NULL, 0};
  struct evr_error err;
  /* its rows, values and summaries: about a row and a value per query and measure */
  double need = ((double)evr_trec_count(t) + 1) * ((double)s->ms.n * sizeof(double) + 64);
  size_t bytes = need < (double)(SIZE_MAX / 2) ? (size_t)need : SIZE_MAX / 2;
  evalua_make_room(L, bytes);
  if (evalua_charge(evalua_runtime(L), bytes)) evalua_nomem(L);
  s->rep_charge = bytes;
  if (evr_trec_evaluate(t, s->ms.cols, s->ms.n, &how, &s->rep, &err)) luaL_error(L, "%s", err.msg);
  for (size_t k = 0; k < s->rep.n; k++) {
    const struct evr_trec_row *row = &s->rep.rows[k];
    if (!row->skipped) {
      add_values(L, b, row, s->rep.values + k * s->ms.n);
    } else {
      lua_pushlstring(L, row->qid, row->len);
      add_skipped(L, b, 0, row->skipped, 0);
    }
  }
}

/* evaluate(rows | trec data, measures [, opts]) -> result (metrics.lua) */
static int l_evaluate(lua_State *L) {
  struct ltrec *t = luaL_testudata(L, 1, TREC_MT);
  if (t && !t->t) evalua_closed(L, 1);
  if (!t) luaL_argexpected(L, lua_type(L, 1) == LUA_TTABLE, 1, "list of rows or TREC data");
  struct opts o = check_opts(L, 3);
  struct scratch *s = new_scratch(L);
  check_measures(L, 2, &s->ms);
  struct batch b;
  start_result(L, &b, s);
  if (t) evaluate_trec(L, &b, t->t, &o);
  else evaluate_rows(L, &b, &o);
  finish_result(L, &b);
  return 1;
}

/* ---- TREC files -------------------------------------------------------------- */

static int trec_gc(lua_State *L) {
  struct ltrec *u = luaL_checkudata(L, 1, TREC_MT);
  evr_trec_free(u->t);
  evalua_uncharge(evalua_runtime(L), u->charge);
  u->t = NULL, u->charge = 0;
  return 0;
}

/* Charges the TREC data u about to be read from the files open at fd
 * (twice their size) against --mem-limit; under --sandbox they must be
 * regular files, whose size says what they need. */
static void charge_trec(lua_State *L, struct ltrec *u, const int fd[2]) {
  struct evalua_runtime *rt = evalua_runtime(L);
  struct stat a, b;
  if (fstat(fd[0], &a) || fstat(fd[1], &b)) return;
  int regular = S_ISREG(a.st_mode) && S_ISREG(b.st_mode);
  if (rt->sandbox && !regular) luaL_error(L, "TREC files must be regular files under --sandbox");
  if (!regular) return;
  double need = 2.0 * ((double)a.st_size + (double)b.st_size);
  size_t bytes = need < (double)(SIZE_MAX / 2) ? (size_t)need : SIZE_MAX / 2;
  evalua_make_room(L, bytes);
  if (evalua_charge(rt, bytes)) {
    if (!rt->mem_exceeded) evalua_nomem(L); /* no limit refused it */
    size_t used = evalua_mem_used(rt);
    double left = rt->mem_limit > used ? (double)(rt->mem_limit - used) / 1048576.0 : 0;
    luaL_error(L, "TREC files need about %d MB, more than the %d MB --mem-limit leaves", (int)ceil(need / 1048576.0),
               (int)left);
  }
  u->charge = bytes;
}

/* path opened for reading in one step with the sandbox's check ("-":
 * standard input, outside the sandbox); -1 with errno when it cannot be. */
static int open_trec(lua_State *L, const char *path) {
  if (!strcmp(path, "-") && !evalua_runtime(L)->sandbox) return dup(0);
  struct evalua_at at;
  if (evalua_at(L, path, 0, 0, &at)) lua_error(L); /* the sandbox's refusal */
  int fd = openat(at.dirfd, at.name, O_RDONLY | O_CLOEXEC | evalua_at_flags(&at));
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  return fd;
}

/* The two files being read, closed by __gc even on an error. */
struct trec_files {
  int fd[2];
};

static int trec_files_close(lua_State *L) {
  struct trec_files *f = luaL_checkudata(L, 1, FILES_MT);
  for (int i = 0; i < 2; i++)
    if (f->fd[i] >= 0) close(f->fd[i]), f->fd[i] = -1;
  return 0;
}

static int make_files(lua_State *L) {
  struct trec_files *f = lua_newuserdatauv(L, sizeof *f, 0);
  f->fd[0] = f->fd[1] = -1;
  luaL_setmetatable(L, FILES_MT);
  return 1;
}

/* An empty TREC data object (no files read). */
static struct ltrec *new_trec(lua_State *L) {
  struct ltrec *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = NULL, u->charge = 0;
  luaL_setmetatable(L, TREC_MT);
  if (!(u->t = evr_trec_new())) evalua_nomem(L);
  evr_trec_set_parallel(u->t, evalua_run_two);
  return u;
}

static int make_trec(lua_State *L) {
  new_trec(L);
  return 1;
}

/* load_trec(qrels_path, run_path) -> TREC data | nil, message */
static int l_load_trec(lua_State *L) {
  const char *path[2] = {luaL_checkstring(L, 1), luaL_checkstring(L, 2)};
  make_files(L);
  struct trec_files *f = lua_touserdata(L, -1);
  for (int i = 0; i < 2; i++)
    if ((f->fd[i] = open_trec(L, path[i])) < 0) {
      luaL_pushfail(L);
      lua_pushfstring(L, "%s: cannot open (%s)", path[i], strerror(errno));
      return 2;
    }
  struct ltrec *u = new_trec(L);
  charge_trec(L, u, f->fd);
  struct evr_error err;
  int bad = evr_trec_read_qrels_fd(u->t, f->fd[0], path[0], &err) || evr_trec_read_run_fd(u->t, f->fd[1], path[1], &err);
  lua_pushcfunction(L, trec_files_close), lua_pushvalue(L, -3), lua_call(L, 1, 0);
  if (bad) {
    luaL_pushfail(L);
    lua_pushstring(L, err.msg);
    return 2;
  }
  return 1;
}

static struct evr_trec *check_trec(lua_State *L) {
  struct ltrec *u = luaL_checkudata(L, 1, TREC_MT);
  if (!u->t) evalua_closed(L, 1);
  return u->t;
}

static int trec_runid(lua_State *L) {
  size_t len;
  const char *id = evr_trec_runid(check_trec(L), &len);
  lua_pushlstring(L, id, len);
  return 1;
}

/* The retrieved list of query q in rank order: {{id =, score =}...}. */
static void push_retrieved(lua_State *L, const struct evr_trec_query *q, struct evr_ranker *rk) {
  evr_ranker_reset(rk);
  for (size_t j = 0; j < q->n_results; j++)
    if (evr_ranker_add(rk, q->results[j].doc, q->results[j].len, q->results[j].score))
      evalua_nomem(L);
  struct evr_ranking r;
  if (evr_ranker_finish(rk, 1, 0, &r)) evalua_nomem(L);
  lua_createtable(L, (int)q->n_results, 0);
  for (size_t j = 0; j < q->n_results; j++) {
    size_t len;
    double score;
    const char *id = evr_ranker_item(rk, j, &len, &score);
    lua_createtable(L, 0, 2);
    lua_pushlstring(L, id, len);
    lua_setfield(L, -2, "id");
    lua_pushnumber(L, score);
    lua_setfield(L, -2, "score");
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
}

static void push_judged(lua_State *L, const struct evr_trec_query *q) {
  lua_createtable(L, 0, (int)q->n_judged);
  lua_newtable(L);
  lua_Integer n = 0;
  for (size_t j = 0; j < q->n_judged; j++) {
    lua_pushlstring(L, q->judged[j].doc, evr_trec_doc_len(&q->judged[j]));
    lua_pushinteger(L, q->judged[j].grade);
    lua_setfield(L, -4, lua_tostring(L, -2));
    if (q->judged[j].grade >= 1) lua_rawseti(L, -2, ++n);
    else lua_pop(L, 1);
  }
}

/* rows([{complete = true}]) -> the queries as data-set rows, in qid order */
static int trec_rows(lua_State *L) {
  struct evr_trec *t = check_trec(L);
  struct opts o = check_opts(L, 2);
  struct scratch *s = new_scratch(L);
  lua_newtable(L);
  lua_Integer n = 0;
  for (size_t i = 0; i < evr_trec_count(t); i++) {
    struct evr_trec_query q;
    evr_trec_query(t, i, &q);
    if (!q.in_qrels || (!q.in_run && !o.complete)) continue;
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, q.qid, q.qid_len);
    lua_setfield(L, -2, "qid");
    push_retrieved(L, &q, s->rk);
    lua_setfield(L, -2, "retrieved");
    push_judged(L, &q);
    lua_setfield(L, -3, "gold_doc_ids");
    lua_setfield(L, -2, "graded_relevance");
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

static const luaL_Reg funcs[] = {
  {"score", l_score}, {"columns", l_columns}, {"evaluate", l_evaluate}, {"load_trec", l_load_trec},
  {NULL, NULL},
};

static const luaL_Reg trec_methods[] = {
  {"rows", trec_rows}, {"runid", trec_runid}, {NULL, NULL},
};

int luaopen_evalua_retrieval(lua_State *L) {
  if (evalua_newclass(L, SCRATCH_MT, make_scratch)) {
    lua_pushcfunction(L, scratch_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, scratch_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (evalua_newclass(L, TREC_MT, make_trec)) {
    lua_pushcfunction(L, trec_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, trec_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (evalua_newclass(L, FILES_MT, make_files)) {
    lua_pushcfunction(L, trec_files_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
