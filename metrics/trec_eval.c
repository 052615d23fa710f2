/* trec_eval's evaluation of TREC files (trec_eval.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "evalua/idtab.h"
#include "evalua/ranking.h"
#include "evalua/trec_eval.h"

static const char not_in_run[] = "not in the run", not_in_qrels[] = "not in the qrels";

/* What evaluating one query needs. */
struct ctx {
  const struct evr_trec *t;
  const struct evr_column *cols;
  size_t nc;
  const struct evr_trec_opts *o;
  struct evr_trec_report *rep;
  size_t *positive;       /* per row: judged documents of grade > 0 (-c's num_rel) */
  unsigned char *met;     /* per row: streamed and evaluated */
  struct evr_ranker *rk;
  struct evr_trec_result *kept; /* with drop_query_id: the results kept, room for cap */
  size_t cap;
};

/* The results of query i whose document is not the query's id, in c->kept
 * (grown as needed); their number, or (size_t)-1 when out of memory. */
static size_t drop_query_id(struct ctx *c, size_t i, const struct evr_trec_result **res, size_t n) {
  struct evr_trec_query q;
  evr_trec_query(c->t, i, &q);
  if (n > c->cap) {
    struct evr_trec_result *p = realloc(c->kept, n * sizeof *p);
    if (!p) return (size_t)-1;
    c->kept = p, c->cap = n;
  }
  size_t m = 0;
  for (size_t j = 0; j < n; j++) {
    const struct evr_trec_result *r = &(*res)[j];
    if (r->len == q.qid_len && !memcmp(r->doc, q.qid, q.qid_len)) continue;
    c->kept[m++] = *r;
  }
  *res = c->kept;
  return m;
}

/* trec_eval's relstring of the first len ranks. */
static void relstring(char *s, size_t len, const struct evr_ranking *r) {
  size_t i = 0;
  for (; i < len && i < r->n_ret; i++) {
    double g = r->rel[i];
    s[i] = g > 9 ? '>' : g >= 0 ? (char)('0' + (int)g) : g == EVR_UNJUDGED ? '-' : g == EVR_POOL_UNJUDGED ? '.' : '<';
  }
  s[i] = '\0';
}

/* Row k is query i of t with the given results. */
static int eval_query(struct ctx *c, size_t k, size_t i, const struct evr_trec_result *res, size_t n,
                      struct evr_error *err) {
  struct evr_ranking r;
  if (!c->rk) return evr_error_set(err, "out of memory"), -1;
  if (c->o->drop_query_id && n && (n = drop_query_id(c, i, &res, n)) == (size_t)-1)
    return evr_error_set(err, "out of memory"), -1;
  if (evr_trec_rank_results(c->t, i, res, n, c->rk, c->o->depth, &r, err)) return -1;
  if (c->o->judged_only) evr_ranker_keep_judged(c->rk, &r);
  evr_eval(c->cols, c->nc, &r, c->o->level, c->rep->values + k * c->nc);
  if (c->o->relstring) relstring(c->rep->relstrings + k * (c->o->relstring + 1), c->o->relstring, &r);
  size_t p = 0;
  while (p < r.n_judged && r.judged[p] > 0) p++;
  c->positive[k] = p;
  return 0;
}

static int start(struct evr_trec_report *rep, size_t n, size_t nc, size_t relstring, size_t **positive,
                 struct evr_error *err) {
  memset(rep, 0, sizeof *rep);
  if (relstring && !(rep->relstrings = calloc(n + 1, relstring + 1))) return evr_error_set(err, "out of memory"), -1;
  rep->nc = nc, rep->n = n;
  rep->rows = calloc(n + 1, sizeof *rep->rows);
  rep->values = malloc((n * nc + 1) * sizeof *rep->values);
  rep->summary = malloc((nc + 1) * sizeof *rep->summary);
  rep->measured = calloc(nc + 1, sizeof *rep->measured);
  *positive = calloc(n + 1, sizeof **positive);
  if (!rep->rows || !rep->values || !rep->summary || !rep->measured || !*positive)
    return evr_error_set(err, "out of memory"), -1;
  return 0;
}

/* Row k is left out: no values. */
static void skip(struct evr_trec_report *rep, size_t k, const char *why) {
  rep->rows[k].skipped = why;
  for (size_t c = 0; c < rep->nc; c++) rep->values[k * rep->nc + c] = NAN;
}

/* ---- z-scores (-Z) ------------------------------------------------------------ */

#define MISSING_Z (-1000000.0) /* trec_eval's */

/* Keys are "QID\0MEASURE" in one arena the size of the file. */
struct evr_zscores {
  struct evr_idtab tab;
  char *keys;
  double (*stats)[2]; /* mean, standard deviation */
  size_t n;
};

void evr_zscores_free(struct evr_zscores *z) {
  if (!z) return;
  evr_idtab_free(&z->tab);
  free(z->keys), free(z->stats), free(z);
}

static int z_line(struct evr_zscores *z, char *line, size_t *used, const char *path, size_t no, struct evr_error *err) {
  char *f[5], *save = NULL, *end1, *end2;
  int n = 0;
  for (char *tok = strtok_r(line, " \t\r", &save); tok && n < 5; tok = strtok_r(NULL, " \t\r", &save)) f[n++] = tok;
  if (!n) return 0;
  if (n != 4) return evr_error_set(err, "%s:%zu: expected 4 fields (QID MEASURE MEAN STDDEV)", path, no), -1;
  double mean = strtod(f[2], &end1), sd = strtod(f[3], &end2);
  if (*end1 || *end2 || end1 == f[2] || end2 == f[3] || mean != mean || sd != sd)
    return evr_error_set(err, "%s:%zu: MEAN and STDDEV must be numbers", path, no), -1;
  size_t lq = strlen(f[0]), lm = strlen(f[1]), len = lq + 1 + lm;
  char *key = z->keys + *used;
  memcpy(key, f[0], lq + 1), memcpy(key + lq + 1, f[1], lm);
  int found;
  uint32_t *v = evr_idtab_put(&z->tab, key, len, (uint32_t)z->n, &found);
  if (!v) return evr_error_set(err, "out of memory"), -1;
  if (found) return evr_error_set(err, "%s:%zu: query %s and measure %s given twice", path, no, f[0], f[1]), -1;
  *used += len;
  z->stats[z->n][0] = mean, z->stats[z->n][1] = sd, z->n++;
  return 0;
}

struct evr_zscores *evr_zscores_read(const char *path, struct evr_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return evr_error_set(err, "%s: cannot open (%s)", path, strerror(errno)), NULL;
  struct evr_zscores *z = calloc(1, sizeof *z);
  char *line = NULL;
  size_t cap = 0, used = 0, no = 0, size = 0;
  int bad = !z;
  if (!bad) evr_idtab_init(&z->tab);
  long at = bad || fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  if (!bad && at < 0) bad = 1, evr_error_set(err, "%s: cannot read (not a regular file)", path);
  if (!bad) size = (size_t)at, rewind(f);
  if (!bad && (!(z->keys = malloc(size + 1)) || !(z->stats = malloc((size / 8 + 1) * sizeof *z->stats))))
    bad = 1, evr_error_set(err, "out of memory");
  for (ssize_t len; !bad && (len = getline(&line, &cap, f)) >= 0;) {
    no++;
    if (len && line[len - 1] == '\n') line[len - 1] = '\0';
    bad = z_line(z, line, &used, path, no, err) != 0;
  }
  free(line);
  fclose(f);
  if (bad) evr_zscores_free(z), z = NULL;
  return z;
}

/* Value v of column name for query qid, as a z-score. */
static double z_value(const struct evr_zscores *z, const struct evr_trec_row *row, const char *name, double v,
                      char *key) {
  size_t lm = strlen(name);
  memcpy(key, row->qid, row->len), key[row->len] = '\0', memcpy(key + row->len + 1, name, lm);
  const uint32_t *i = evr_idtab_get(&z->tab, key, row->len + 1 + lm);
  if (!i) return MISSING_Z;
  double mean = z->stats[*i][0], sd = z->stats[*i][1];
  if (sd != 0) return (v - mean) / sd;
  return v == mean ? 0.0 : MISSING_Z;
}

static int to_z(struct ctx *c, size_t k, struct evr_error *err) {
  const struct evr_trec_row *row = &c->rep->rows[k];
  char *key = malloc(row->len + 1 + sizeof c->cols->name);
  if (!key) return evr_error_set(err, "out of memory"), -1;
  double *v = c->rep->values + k * c->nc;
  for (size_t j = 0; j < c->nc; j++) v[j] = z_value(c->o->z, row, c->cols[j].name, v[j], key);
  free(key);
  return 0;
}

/* ---- summaries ------------------------------------------------------------------- */

/* The "all" values: every evaluated row added in row (qid) order. */
static int summarize(struct ctx *c, struct evr_error *err) {
  struct evr_trec_report *rep = c->rep;
  struct evr_acc *acc = calloc(c->nc + 1, sizeof *acc);
  if (!acc) return evr_error_set(err, "out of memory"), -1;
  double positive = 0;
  for (size_t k = 0; k < rep->n; k++) {
    if (rep->rows[k].skipped) continue;
    if (c->o->z && to_z(c, k, err)) return free(acc), -1;
    rep->n_evaluated++;
    positive += (double)c->positive[k];
    for (size_t j = 0; j < c->nc; j++) evr_acc_add(&acc[j], &c->cols[j], rep->values[k * c->nc + j]);
  }
  for (size_t j = 0; j < c->nc; j++) {
    rep->summary[j] = evr_acc_value(&acc[j], &c->cols[j]);
    rep->measured[j] = acc[j].n;
    if (c->o->complete && c->o->positive_num_rel && c->cols[j].kind == EVR_NUM_REL) rep->summary[j] = positive;
  }
  free(acc);
  return 0;
}

int evr_trec_report_summarize(struct evr_trec_report *rep, const struct evr_column *cols,
                              const struct evr_trec_opts *o, struct evr_error *err) {
  size_t *positive = calloc(rep->n + 1, sizeof *positive);
  if (!positive) return evr_error_set(err, "out of memory"), -1;
  struct ctx c = {NULL, cols, rep->nc, o, rep, positive, NULL, NULL, NULL, 0};
  int r = summarize(&c, err);
  free(positive);
  return r;
}

/* ---- a run read whole -------------------------------------------------------- */

/* Rows [from, to) of todo (row k is query at[k]), on one thread. */
struct part {
  struct ctx c;
  const size_t *todo, *at;
  size_t from, to;
  int failed;
  struct evr_error err;
};

static void eval_part(void *arg) {
  struct part *p = arg;
  p->c.rk = evr_ranker_new();
  for (size_t j = p->from; j < p->to && !p->failed; j++) {
    size_t k = p->todo[j];
    struct evr_trec_query q;
    evr_trec_query(p->c.t, p->at[k], &q);
    p->failed = eval_query(&p->c, k, p->at[k], q.results, q.n_results, &p->err) != 0;
  }
  evr_ranker_free(p->c.rk);
  free(p->c.kept);
}

/* The rows, their queries (at) and the rows to evaluate (todo). */
static size_t pick(const struct evr_trec *t, int complete, int run_only, struct evr_trec_report *rep, size_t *at,
                   size_t *todo) {
  size_t n = 0, m = 0;
  for (size_t i = 0; i < evr_trec_count(t); i++) {
    struct evr_trec_query q;
    evr_trec_query(t, i, &q);
    if (!q.in_qrels && !run_only) continue;
    const char *why = !q.in_qrels ? not_in_qrels : !q.in_run && !complete ? not_in_run : NULL;
    rep->rows[n] = (struct evr_trec_row){q.qid, q.qid_len, NULL};
    at[n] = i;
    if (why) skip(rep, n, why);
    else todo[m++] = n;
    n++;
  }
  rep->n = n;
  return m;
}

/* Evaluates in two halves at once when the host runs two jobs; the first
 * error in qid order is the one reported. */
static int evaluate(const struct evr_trec *t, const struct evr_column *cols, size_t nc, const struct evr_trec_opts *o,
                    int run_only, struct evr_trec_report *rep, struct evr_error *err) {
  size_t nq = evr_trec_count(t), *positive = NULL;
  size_t *at = malloc((nq + 1) * sizeof *at), *todo = malloc((nq + 1) * sizeof *todo);
  int r = start(rep, nq, nc, o->relstring, &positive, err);
  if (!r && (!at || !todo)) r = -1, evr_error_set(err, "out of memory");
  struct ctx c = {t, cols, nc, o, rep, positive, NULL, NULL, NULL, 0};
  if (!r) {
    size_t m = pick(t, o->complete, run_only, rep, at, todo);
    struct part parts[2] = {{c, todo, at, 0, m / 2, 0, {""}}, {c, todo, at, m / 2, m, 0, {""}}};
    void *args[2] = {&parts[0], &parts[1]};
    evr_parallel_fn run_two = evr_trec_parallel(t);
    if (run_two) run_two(eval_part, args);
    else eval_part(&parts[0]), eval_part(&parts[1]);
    for (int h = 1; h >= 0; h--)
      if (parts[h].failed) *err = parts[h].err, r = -1;
  }
  if (!r) r = summarize(&c, err);
  free(at), free(todo), free(positive);
  return r;
}

int evr_trec_evaluate(const struct evr_trec *t, const struct evr_column *cols, size_t nc,
                      const struct evr_trec_opts *o, struct evr_trec_report *rep, struct evr_error *err) {
  return evaluate(t, cols, nc, o, 1, rep, err);
}

/* ---- a run streamed ------------------------------------------------------------ */

static int on_query(void *arg, size_t i, const struct evr_trec_result *res, size_t n, struct evr_error *err) {
  struct ctx *c = arg;
  c->met[i] = 1;
  return eval_query(c, i, i, res, n, err);
}

/* After streaming: rows in qid order (here row k is query k of t), and
 * with -c the queries the run lacks, evaluated as retrieving nothing. */
static int finish_stream(struct ctx *c, struct evr_error *err) {
  for (size_t k = 0; k < c->rep->n; k++) {
    struct evr_trec_query q;
    evr_trec_query(c->t, k, &q);
    c->rep->rows[k] = (struct evr_trec_row){q.qid, q.qid_len, NULL};
    if (c->met[k]) continue;
    if (!c->o->complete) skip(c->rep, k, not_in_run);
    else if (eval_query(c, k, k, NULL, 0, err)) return -1;
  }
  return summarize(c, err);
}

static int stream(struct evr_trec *t, const char *path, struct ctx *c, struct evr_error *err) {
  struct ctx half[2] = {*c, *c};
  half[0].rk = evr_ranker_new(), half[1].rk = evr_ranker_new();
  void *ctx[2] = {&half[0], &half[1]};
  int r = half[0].rk && half[1].rk ? evr_trec_stream_run(t, path, on_query, ctx, err)
                                   : (evr_error_set(err, "out of memory"), -1);
  evr_ranker_free(half[0].rk), evr_ranker_free(half[1].rk);
  free(half[0].kept), free(half[1].kept);
  if (r) return r;
  c->rk = evr_ranker_new();
  r = finish_stream(c, err);
  evr_ranker_free(c->rk);
  free(c->kept), c->kept = NULL;
  return r;
}

int evr_trec_evaluate_run(struct evr_trec *t, const char *path, const struct evr_column *cols, size_t nc,
                          const struct evr_trec_opts *o, struct evr_trec_report *rep, struct evr_error *err) {
  size_t nq = evr_trec_count(t), *positive = NULL;
  unsigned char *met = calloc(nq + 1, 1);
  int r = start(rep, nq, nc, o->relstring, &positive, err);
  if (!r && !met) r = -1, evr_error_set(err, "out of memory");
  struct ctx c = {t, cols, nc, o, rep, positive, met, NULL, NULL, 0};
  if (!r) r = stream(t, path, &c, err);
  free(met), free(positive);
  if (r != 1) {
    rep->streamed = !r;
    return r;
  }
  evr_trec_report_free(rep);
  if (evr_trec_read_run(t, path, err)) return -1;
  return evaluate(t, cols, nc, o, 0, rep, err);
}

void evr_trec_report_free(struct evr_trec_report *rep) {
  free(rep->rows), free(rep->values), free(rep->summary), free(rep->measured), free(rep->relstrings);
  memset(rep, 0, sizeof *rep);
}
