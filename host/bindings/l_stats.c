/* evalua._stats: Lua bindings of the statistics (metrics/stats.h). Lists
 * are read whole into C arrays; a NaN, an infinity or a non-number is an
 * argument error naming the list and index. A statistic that is undefined
 * for its input returns nil and the reason, never NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "evalua/stats.h"
#include "l_lists.h"
#include "modules.h"

/* ---- helpers ------------------------------------------------------------- */

static double *check_sample(lua_State *L, int arg, const char *label, size_t *n) {
  double *x = lists_check_numbers(L, arg, label, n);
  if (*n == 0) luaL_argerror(L, arg, lua_pushfstring(L, "%s is empty", label));
  return x;
}

/* Two lists of the same length (pairs). */
static size_t check_pairs(lua_State *L, const char *la, const char *lb, double **a, double **b) {
  size_t na, nb;
  *a = lists_check_numbers(L, 1, la, &na);
  *b = lists_check_numbers(L, 2, lb, &nb);
  if (na != nb)
    luaL_argerror(L, 2, lua_pushfstring(L, "#%s is %I but #%s is %I", lb, (lua_Integer)nb, la, (lua_Integer)na));
  if (na == 0) luaL_argerror(L, 1, lua_pushfstring(L, "%s is empty", la));
  return na;
}

static int undefined(lua_State *L, const char *why) {
  luaL_pushfail(L);
  lua_pushstring(L, why);
  return 2;
}

static void check_rc(lua_State *L, int rc) {
  if (rc == EVSTATS_ENOMEM) luaL_error(L, "not enough memory");
}

static void set_number(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void set_integer(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static lua_Integer opt_resamples(lua_State *L, int arg, lua_Integer def) {
  lua_Integer v = lists_opt_integer(L, arg, "resamples", def);
  if (v < 1 || v > EVSTATS_MAX_RESAMPLES)
    luaL_argerror(L, arg, lua_pushfstring(L, "option 'resamples' must be from 1 to %d, got %I",
                                          EVSTATS_MAX_RESAMPLES, v));
  return v;
}

/* ---- descriptive ---------------------------------------------------------- */

static int l_sum(lua_State *L) {
  lua_settop(L, 1); /* results pushed later must not pass for arguments */
  size_t n;
  double *x = lists_check_numbers(L, 1, "xs", &n), sum = evstats_sum(x, n);
  if (!isfinite(sum)) return undefined(L, "the sum is beyond the range of a double");
  lua_pushnumber(L, sum);
  return 1;
}

static int l_mean(lua_State *L) {
  lua_settop(L, 1);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n);
  lua_pushnumber(L, evstats_mean(x, n));
  return 1;
}

static const char *const variance_options[] = {"population", NULL};

/* variance(xs [, {population = true}]): divisor n - 1, or n */
static int variance(lua_State *L, int root) {
  lua_settop(L, 2);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n), v = 0;
  lists_check_options(L, 2, variance_options);
  size_t ddof = lists_opt_boolean(L, 2, "population", 0) ? 0 : 1;
  int rc = root ? evstats_sd(x, n, ddof, &v) : evstats_variance(x, n, ddof, &v);
  if (rc == EVSTATS_UNDEFINED) return undefined(L, "needs at least 2 values");
  if (rc == EVSTATS_RANGE)
    return undefined(L, root ? "the sd is beyond the range of a double"
                             : "the variance is outside the range of a double (sd gives its square root)");
  lua_pushnumber(L, v);
  return 1;
}

static int l_variance(lua_State *L) { return variance(L, 0); }
static int l_sd(lua_State *L) { return variance(L, 1); }

/* min(xs) / max(xs) -> value, index of its first occurrence */
static int extreme(lua_State *L, int want_max) {
  lua_settop(L, 1);
  size_t n, best = 0;
  double *x = check_sample(L, 1, "xs", &n);
  for (size_t i = 1; i < n; i++)
    if (want_max ? x[i] > x[best] : x[i] < x[best]) best = i;
  lua_pushnumber(L, x[best]);
  lua_pushinteger(L, (lua_Integer)best + 1);
  return 2;
}

static int l_min(lua_State *L) { return extreme(L, 0); }
static int l_max(lua_State *L) { return extreme(L, 1); }

static double check_percent(lua_State *L, int arg, double p) {
  if (!(p >= 0 && p <= 100))
    luaL_argerror(L, arg, lua_pushfstring(L, "a percentile must be between 0 and 100, got %f", p));
  return p / 100;
}

/* percentile(xs, p) with p in [0, 100], or a list of them -> list */
static int l_percentile(lua_State *L) {
  lua_settop(L, 2);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n);
  evstats_sort(x, n);
  if (lua_type(L, 2) != LUA_TTABLE) {
    double q = check_percent(L, 2, luaL_checknumber(L, 2));
    lua_pushnumber(L, evstats_quantile_sorted(x, n, q));
    return 1;
  }
  size_t k;
  double *p = lists_check_numbers(L, 2, "p", &k);
  lua_createtable(L, (int)k, 0);
  for (size_t i = 0; i < k; i++) {
    lua_pushnumber(L, evstats_quantile_sorted(x, n, check_percent(L, 2, p[i])));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int l_median(lua_State *L) {
  lua_settop(L, 1);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n);
  evstats_sort(x, n);
  lua_pushnumber(L, evstats_quantile_sorted(x, n, 0.5));
  return 1;
}

/* bottom_k(values, ids, k) / top_k: the k lowest (highest) as
 * {index=, id=, value=}, ties in input order; ids may be nil. */
static int extremes_k(lua_State *L, int top) {
  lua_settop(L, 3);
  size_t n;
  double *x = lists_check_numbers(L, 1, "values", &n);
  if (!lua_isnoneornil(L, 2)) {
    size_t nid = lists_check_list(L, 2);
    if (nid != n)
      luaL_argerror(L, 2, lua_pushfstring(L, "#ids is %I but #values is %I", (lua_Integer)nid, (lua_Integer)n));
  }
  lua_Integer k = luaL_checkinteger(L, 3);
  luaL_argcheck(L, k >= 0, 3, "k must not be negative");
  if ((size_t)k > n) k = (lua_Integer)n;
  size_t *idx = lists_scratch(L, n, sizeof *idx);
  check_rc(L, evstats_order(x, n, top, idx));
  lua_createtable(L, (int)k, 0);
  for (lua_Integer i = 0; i < k; i++) {
    lua_Integer at = (lua_Integer)idx[i] + 1;
    lua_createtable(L, 0, 3);
    set_integer(L, "index", at);
    set_number(L, "value", x[idx[i]]);
    if (lua_isnoneornil(L, 2)) lua_pushinteger(L, at);
    else lua_rawgeti(L, 2, at);
    lua_setfield(L, -2, "id");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int l_bottom_k(lua_State *L) { return extremes_k(L, 0); }
static int l_top_k(lua_State *L) { return extremes_k(L, 1); }

/* ---- resampling and tests -------------------------------------------------- */

static const char *const bootstrap_options[] = {"resamples", "level", "seed", NULL};

/* bootstrap_ci(xs [, {resamples = 1000, level = 0.95, seed = 1}]) */
static int l_bootstrap_ci(lua_State *L) {
  lua_settop(L, 2);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n), lo = 0, hi = 0;
  lists_check_options(L, 2, bootstrap_options);
  lua_Integer resamples = opt_resamples(L, 2, 1000);
  double level = lists_opt_number(L, 2, "level", 0.95);
  lua_Integer seed = lists_opt_integer(L, 2, "seed", 1);
  if (!(level > 0 && level < 1))
    luaL_argerror(L, 2, lua_pushfstring(L, "option 'level' must be between 0 and 1, got %f", level));
  check_rc(L, evstats_bootstrap_mean_ci(x, n, (size_t)resamples, level, (uint64_t)seed, &lo, &hi));
  lua_createtable(L, 0, 6);
  set_number(L, "lo", lo);
  set_number(L, "hi", hi);
  set_number(L, "mean", evstats_mean(x, n));
  set_number(L, "level", level);
  set_integer(L, "resamples", resamples);
  set_integer(L, "seed", seed);
  return 1;
}

#define MEAN_DIFF_RANGE "the mean difference is beyond the range of a double"

static const char *const ci_options[] = {"level", "resamples", "seed", "bounded", NULL};

struct ci_opts {
  double level;
  lua_Integer resamples, seed;
  int bounded; /* -1: decided by the values */
};

static void check_ci_options(lua_State *L, int arg, struct ci_opts *o) {
  lists_check_options(L, arg, ci_options);
  o->level = lists_opt_number(L, arg, "level", 0.95);
  o->resamples = opt_resamples(L, arg, 1000);
  o->seed = lists_opt_integer(L, arg, "seed", 1);
  o->bounded = lists_opt_boolean(L, arg, "bounded", -1);
  if (!(o->level > 0 && o->level < 1))
    luaL_argerror(L, arg, lua_pushfstring(L, "option 'level' must be between 0 and 1, got %f", o->level));
}

static int in_unit_range(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(x[i] >= 0 && x[i] <= 1)) return 0;
  return 1;
}

/* bounded = true asks for the [0, 1] methods: the values must be there */
static int decide_bounded(lua_State *L, const struct ci_opts *o, const double *x, size_t n, const char *label) {
  int in = in_unit_range(x, n);
  if (o->bounded == 1 && !in)
    luaL_error(L, "option 'bounded' is true but a value of %s is outside [0, 1]", label);
  return o->bounded == -1 ? in : o->bounded;
}

static void push_ci(lua_State *L, const evstats_ci *c, const struct ci_opts *o, size_t n) {
  set_number(L, "lo", c->lo);
  set_number(L, "hi", c->hi);
  lua_pushstring(L, evstats_ci_name(c->method));
  lua_setfield(L, -2, "method");
  set_number(L, "level", o->level);
  set_integer(L, "n", (lua_Integer)n);
}

/* mean_ci(xs [, {level = 0.95, resamples = 1000, seed = 1, bounded =}]):
 * the interval ev.evaluate reports for a group with these values */
static int l_mean_ci(lua_State *L) {
  lua_settop(L, 2);
  size_t n;
  double *x = check_sample(L, 1, "xs", &n);
  struct ci_opts o;
  check_ci_options(L, 2, &o);
  if (n < 2) return undefined(L, "needs at least 2 values");
  evstats_ci c;
  check_rc(L, evstats_mean_ci(x, n, decide_bounded(L, &o, x, n, "xs"), (size_t)o.resamples, o.level,
                              (uint64_t)o.seed, &c));
  lua_createtable(L, 0, 6);
  set_number(L, "mean", evstats_mean(x, n));
  push_ci(L, &c, &o, n);
  return 1;
}

/* paired_ci(a, b [, options of mean_ci]): the interval of mean(b - a) */
static int l_paired_ci(lua_State *L) {
  lua_settop(L, 3);
  double *a, *b;
  size_t n = check_pairs(L, "a", "b", &a, &b);
  struct ci_opts o;
  check_ci_options(L, 3, &o);
  if (n < 2) return undefined(L, "needs at least 2 pairs");
  int bounded = decide_bounded(L, &o, a, n, "a") & decide_bounded(L, &o, b, n, "b");
  evstats_ci c;
  check_rc(L, evstats_paired_ci(a, b, n, bounded, (size_t)o.resamples, o.level, (uint64_t)o.seed, &c));
  lua_createtable(L, 0, 6);
  set_number(L, "delta", evstats_mean(b, n) - evstats_mean(a, n));
  push_ci(L, &c, &o, n);
  return 1;
}

static const char *const permutation_options[] = {"resamples", "seed", "exact", NULL};

/* paired_permutation(a, b [, {resamples = 10000, seed = 1, exact = true}]) */
static int l_paired_permutation(lua_State *L) {
  lua_settop(L, 3);
  double *a, *b;
  size_t n = check_pairs(L, "a", "b", &a, &b);
  lists_check_options(L, 3, permutation_options);
  lua_Integer resamples = opt_resamples(L, 3, 10000);
  lua_Integer seed = lists_opt_integer(L, 3, "seed", 1);
  int exact = lists_opt_boolean(L, 3, "exact", 1);
  evstats_permutation r;
  int rc = evstats_paired_permutation(a, b, n, (size_t)resamples, (uint64_t)seed, exact ? 20 : 0, &r);
  check_rc(L, rc);
  if (rc == EVSTATS_RANGE) return undefined(L, MEAN_DIFF_RANGE);
  lua_createtable(L, 0, 5);
  set_number(L, "p", r.p);
  set_number(L, "mean_diff", r.mean_diff);
  lua_pushboolean(L, r.exact);
  lua_setfield(L, -2, "exact");
  set_integer(L, "patterns", (lua_Integer)r.patterns);
  set_integer(L, "n", (lua_Integer)n);
  return 1;
}

/* paired_ttest(a, b) -> {t=, df=, p=, mean_diff=, n=} */
static int l_paired_ttest(lua_State *L) {
  lua_settop(L, 2);
  double *a, *b;
  size_t n = check_pairs(L, "a", "b", &a, &b);
  evstats_ttest r;
  int rc = evstats_paired_ttest(a, b, n, &r);
  check_rc(L, rc);
  if (rc == EVSTATS_RANGE) return undefined(L, MEAN_DIFF_RANGE);
  if (rc) return undefined(L, "needs at least 2 pairs");
  lua_createtable(L, 0, 5);
  set_number(L, "t", r.t);
  set_number(L, "df", r.df);
  set_number(L, "p", r.p);
  set_number(L, "mean_diff", r.mean_diff);
  set_integer(L, "n", (lua_Integer)n);
  return 1;
}

/* ---- correlation and agreement --------------------------------------------- */

static int is_constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

static int correlation(lua_State *L, int (*f)(const double *, const double *, size_t, double *)) {
  lua_settop(L, 2);
  double *x, *y, r = 0;
  size_t n = check_pairs(L, "x", "y", &x, &y);
  int rc = f(x, y, n, &r);
  check_rc(L, rc);
  if (rc)
    return undefined(L, n < 2 ? "needs at least 2 pairs" : is_constant(x, n) ? "x is constant" : "y is constant");
  lua_pushnumber(L, r);
  return 1;
}

static int l_pearson(lua_State *L) { return correlation(L, evstats_pearson); }
static int l_spearman(lua_State *L) { return correlation(L, evstats_spearman); }
static int l_kendall(lua_State *L) { return correlation(L, evstats_kendall); }

/* Codes of any labels (strings, numbers, booleans) through a Lua table. */
static size_t label_codes(lua_State *L, int arg, const char *label, size_t n, int map, size_t *codes, size_t k) {
  for (size_t i = 0; i < n; i++) {
    int t = lua_rawgeti(L, arg, (lua_Integer)i + 1);
    if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
      luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] is %s, expected a category (string, number or boolean)",
                                            label, (lua_Integer)i + 1, lists_a_typename(L, -1)));
    if (t == LUA_TNUMBER && isnan(lua_tonumber(L, -1)))
      luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I] is NaN", label, (lua_Integer)i + 1));
    lua_pushvalue(L, -1);
    if (lua_rawget(L, map) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushinteger(L, (lua_Integer)k++);
      lua_rawset(L, map); /* label -> code */
      lua_rawgeti(L, arg, (lua_Integer)i + 1);
      lua_rawget(L, map);
    } else {
      lua_remove(L, -2);
    }
    codes[i] = (size_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  return k;
}

static const char *const kappa_options[] = {"weights", NULL};

/* cohen_kappa(a, b [, {weights = "linear" | "quadratic"}]) */
static int l_cohen_kappa(lua_State *L) {
  lua_settop(L, 3);
  size_t n = lists_check_list(L, 1), nb = lists_check_list(L, 2), k = 0;
  if (nb != n) luaL_argerror(L, 2, lua_pushfstring(L, "#b is %I but #a is %I", (lua_Integer)nb, (lua_Integer)n));
  luaL_argcheck(L, n > 0, 1, "a is empty");
  lists_check_options(L, 3, kappa_options);
  const char *w = lists_opt_string(L, 3, "weights", NULL);
  enum evstats_weights weights = EVSTATS_UNWEIGHTED;
  if (w && strcmp(w, "linear") == 0) weights = EVSTATS_LINEAR;
  else if (w && strcmp(w, "quadratic") == 0) weights = EVSTATS_QUADRATIC;
  else if (w)
    luaL_argerror(L, 3, lua_pushfstring(L, "option 'weights' must be \"linear\" or \"quadratic\", got \"%s\"", w));
  size_t *codes = lists_scratch(L, 2 * n, sizeof *codes);
  double *values = NULL;
  if (weights == EVSTATS_UNWEIGHTED) {
    lua_newtable(L);
    int map = lua_gettop(L);
    k = label_codes(L, 1, "a", n, map, codes, 0);
    k = label_codes(L, 2, "b", n, map, codes + n, k);
  } else { /* weights need numbers: categories are the distinct values, ascending */
    double *ab = lists_new_array(L, 2 * n);
    values = lists_new_array(L, 2 * n);
    lists_copy_numbers(L, 1, 1, "a", 0, ab, n);
    lists_copy_numbers(L, 2, 2, "b", 0, ab + n, n);
    evstats_categories(ab, ab + n, n, codes, codes + n, values, &k);
    if (k > 1000) /* weighing costs k^2: this is a rating scale or a mistake */
      luaL_argerror(L, 3, lua_pushfstring(L, "weighted kappa needs a rating scale, got %I distinct values",
                                          (lua_Integer)k));
  }
  double kappa = 0;
  int rc = evstats_cohen_kappa(codes, codes + n, n, k, values, weights, &kappa);
  check_rc(L, rc);
  if (rc) return undefined(L, "no disagreement is possible by chance: both raters used one and the same category");
  lua_pushnumber(L, kappa);
  return 1;
}

static const luaL_Reg stats_funcs[] = {
  {"sum", l_sum},
  {"mean", l_mean},
  {"variance", l_variance},
  {"sd", l_sd},
  {"min", l_min},
  {"max", l_max},
  {"percentile", l_percentile},
  {"median", l_median},
  {"bottom_k", l_bottom_k},
  {"top_k", l_top_k},
  {"bootstrap_ci", l_bootstrap_ci},
  {"mean_ci", l_mean_ci},
  {"paired_ci", l_paired_ci},
  {"paired_permutation", l_paired_permutation},
  {"paired_ttest", l_paired_ttest},
  {"pearson", l_pearson},
  {"spearman", l_spearman},
  {"kendall", l_kendall},
  {"cohen_kappa", l_cohen_kappa},
  {NULL, NULL},
};

int luaopen_evalua_stats(lua_State *L) {
  luaL_newlib(L, stats_funcs);
  lua_pushinteger(L, EVSTATS_MAX_RESAMPLES); /* the bound of every 'resamples' */
  lua_setfield(L, -2, "max_resamples");
  return 1;
}
