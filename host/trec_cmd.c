/* evalua trec: trec_eval's command line and output over metrics/ (no Lua),
 * whose trec_eval.c selects the queries, evaluates them (streaming a run
 * grouped by query) and sums them up. Every value is computed before
 * anything is printed, so bad input never leaves half a report behind.
 * Exit status: 0 ok, 2 usage, 3 input error. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evalua/measures.h"
#include "evalua/ranking.h"
#include "evalua/trec.h"
#include "evalua/trec_eval.h"

#include "commands.h"
#include "parallel.h"

enum { EXIT_USAGE = 2, EXIT_INPUT = 3 };

static const char help_text[] =
  "usage: evalua trec [-q] [-c] [-n] [-l LEVEL] [-M N] [-m MEASURE]... QRELS RUN\n"
  "\n"
  "Evaluates a TREC run against TREC qrels and prints trec_eval's report.\n"
  "  -q          also print each query's values\n"
  "  -c          average over every query of QRELS; queries missing from RUN\n"
  "              count as zeros (default: the queries in both files)\n"
  "  -n          no summary ('all') lines\n"
  "  -l LEVEL    least relevance grade that counts as relevant (default 1)\n"
  "  -M N        evaluate only the first N documents of each ranking\n"
  "  -m MEASURE  a measure, with comma-separated parameters after a dot:\n"
  "              num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank\n"
  "              iprec_at_recall.0,.5,1 P.5,10 recall.5,10 Rprec_mult.0.5,2\n"
  "              utility.1,-1,0,0 11pt_avg ndcg ndcg.1=3,2=9 ndcg_cut.5,10\n"
  "              map_cut.5,10 relative_P.5,10 success.1,5,10 set_P set_recall\n"
  "              set_map set_F.1 set_relative_P num_nonrel_judged_ret, runid,\n"
  "              num_q, or a set: official (the default) or all_trec (all)\n"
  "QRELS or RUN may be '-' for standard input.\n";

static int usage(const char *fmt, const char *what) {
  fputs("evalua trec: ", stderr);
  fprintf(stderr, fmt, what);
  fputs(" (try 'evalua trec --help')\n", stderr);
  return EXIT_USAGE;
}

/* ---- options and measures ------------------------------------------------- */

struct opts {
  int per_query, complete, summary;
  double level;
  size_t depth;
  const char *qrels, *run;
};

static const char *const official[] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                       "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
                                       NULL};

/* What -m marked: one flag per trec measure and the first parameters given
 * for it (trec_eval ignores later ones). */
struct marks {
  int on[64];
  const char *params[64];
};

static size_t index_of(const struct evr_trec_measure *tm) { return (size_t)(tm - evr_trec_measures); }

static int mark(struct marks *mk, const char *arg) {
  const char *dot = strchr(arg, '.');
  size_t len = dot ? (size_t)(dot - arg) : strlen(arg);
  if ((len == 8 && !strncmp(arg, "official", 8)) || (len == 8 && !strncmp(arg, "all_trec", 8))) {
    for (size_t i = 0; i < evr_trec_measure_count; i++)
      if (arg[0] == 'a') mk->on[i] = 1;
    for (const char *const *n = official; arg[0] == 'o' && *n; n++)
      mk->on[index_of(evr_trec_find(*n, strlen(*n)))] = 1;
    return 0;
  }
  const struct evr_trec_measure *tm = evr_trec_find(arg, len);
  if (!tm) return -1;
  size_t i = index_of(tm);
  mk->on[i] = 1;
  if (dot && !mk->params[i]) mk->params[i] = dot + 1;
  return 0;
}

static int parse_count(const char *s, long min, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < min) return -1;
  *out = v;
  return 0;
}

static int parse_options(int argc, char **argv, struct opts *o, struct marks *mk) {
  int any = 0;
  long v;
  opterr = 0;
  optind = 1;
  for (int c; (c = getopt(argc, argv, "qcnl:M:m:")) != -1;) {
    switch (c) {
    case 'q': o->per_query = 1; break;
    case 'c': o->complete = 1; break;
    case 'n': o->summary = 0; break;
    case 'l':
      if (parse_count(optarg, 0, &v)) return usage("-l: '%s' is not a relevance grade (an integer >= 0)", optarg);
      o->level = (double)v;
      break;
    case 'M':
      if (parse_count(optarg, 1, &v)) return usage("-M: '%s' is not a positive number of documents", optarg);
      o->depth = (size_t)v;
      break;
    case 'm':
      if (mark(mk, optarg)) return usage("unknown measure '%s'", optarg);
      any = 1;
      break;
    default: {
      char opt[3] = {'-', (char)optopt, 0};
      return usage(strchr("lMm", optopt) ? "option %s needs a value" : "unknown option %s", opt);
    }
    }
  }
  if (argc - optind != 2) return usage("%s", "expected two files: QRELS RUN");
  o->qrels = argv[optind], o->run = argv[optind + 1];
  if (!any) mark(mk, "official");
  return 0;
}

/* One entry per marked measure, in trec_eval's order: its columns are
 * cols[first, first + n). */
struct item {
  const struct evr_trec_measure *tm;
  size_t first, n;
};

static int build(const struct marks *mk, struct evr_measures *ms, struct item *items, size_t *n_items) {
  struct evr_error err;
  *n_items = 0;
  for (size_t i = 0; i < evr_trec_measure_count; i++) {
    if (!mk->on[i]) continue;
    const struct evr_trec_measure *tm = &evr_trec_measures[i];
    size_t before = ms->n;
    if (tm->kind >= 0 && evr_measures_add_trec(ms, tm, mk->params[i], &err)) return usage("%s", err.msg);
    items[(*n_items)++] = (struct item){tm, before, ms->n - before};
  }
  return 0;
}

/* ---- evaluation ------------------------------------------------------------- */

/* The run streamed when it can be (metrics/trec_eval.c); at least one query
 * must be in both files. */
static int evaluate(struct evr_trec *t, const struct opts *o, const struct evr_measures *ms,
                    struct evr_trec_report *rep, struct evr_error *err) {
  struct evr_trec_opts how = {o->level, o->depth, o->complete, 1};
  if (evr_trec_evaluate_run(t, o->run, ms->cols, ms->n, &how, rep, err)) return -1;
  if (!rep->n_evaluated)
    return evr_error_set(err, "no query has both judgments in %s and results in %s", o->qrels, o->run), -1;
  return 0;
}

/* ---- output ---------------------------------------------------------------- */

struct out {
  char buf[1 << 16];
  size_t n;
  int failed;
};

static void flush(struct out *w) {
  if (w->n && fwrite(w->buf, 1, w->n, stdout) != w->n) w->failed = 1;
  w->n = 0;
}

static void put(struct out *w, const char *s, size_t len) {
  if (w->n + len > sizeof w->buf) flush(w);
  if (len > sizeof w->buf) {
    if (fwrite(s, 1, len, stdout) != len) w->failed = 1;
    return;
  }
  memcpy(w->buf + w->n, s, len);
  w->n += len;
}

/* "%-22s\t%s\t" */
static void put_head(struct out *w, const char *name, const char *qid, size_t qlen) {
  size_t len = strlen(name);
  char pad[24];
  put(w, name, len);
  if (len < 22) {
    memset(pad, ' ', 22 - len);
    put(w, pad, 22 - len);
  }
  put(w, "\t", 1);
  put(w, qid, qlen);
  put(w, "\t", 1);
}

/* printf's "%6.4f" for v. Most values take a fast path: the product
 * v * 10^4 is computed with an error below 2e-7, so when it is not within
 * 1e-6 of a half, rounding it gives printf's digits; otherwise, and for
 * large or odd values, printf itself is asked. */
static size_t format4(double v, char *s) {
  double a = fabs(v), t = a * 1e4;
  if (!(a < 1e5) || fabs(t - floor(t) - 0.5) < 1e-6) return (size_t)snprintf(s, 32, "%6.4f", v);
  uint64_t n = (uint64_t)(t + 0.5);
  char *p = s;
  if (signbit(v)) *p++ = '-';
  char digits[24];
  int nd = 0;
  for (uint64_t ip = n / 10000; nd == 0 || ip; ip /= 10) digits[nd++] = (char)('0' + ip % 10);
  while (nd) *p++ = digits[--nd];
  unsigned f = (unsigned)(n % 10000);
  p[0] = '.', p[1] = (char)('0' + f / 1000), p[2] = (char)('0' + f / 100 % 10);
  p[3] = (char)('0' + f / 10 % 10), p[4] = (char)('0' + f % 10);
  return (size_t)(p + 5 - s);
}

static void put_value(struct out *w, const struct evr_column *c, double v) {
  char s[48];
  size_t len = c->integer ? (size_t)snprintf(s, sizeof s, "%ld", (long)v) : format4(v, s);
  s[len++] = '\n';
  put(w, s, len);
}

static void print_query(struct out *w, const struct item *items, size_t n_items, const struct evr_measures *ms,
                        const char *qid, size_t qlen, const double *v) {
  for (size_t i = 0; i < n_items; i++) {
    if (!items[i].tm->per_query) continue;
    for (size_t c = items[i].first; c < items[i].first + items[i].n; c++) {
      put_head(w, ms->cols[c].name, qid, qlen);
      put_value(w, &ms->cols[c], v[c]);
    }
  }
}

static void print_summary(struct out *w, const struct item *items, size_t n_items, const struct evr_measures *ms,
                          const struct evr_trec *t, const struct evr_trec_report *rep) {
  char s[32];
  for (size_t i = 0; i < n_items; i++) {
    const struct evr_trec_measure *tm = items[i].tm;
    if (tm->kind == EVR_TREC_RUNID) {
      size_t len;
      const char *id = evr_trec_runid(t, &len);
      put_head(w, "runid", "all", 3);
      put(w, id, len);
      put(w, "\n", 1);
    } else if (tm->kind == EVR_TREC_NUM_Q) {
      put_head(w, "num_q", "all", 3);
      put(w, s, (size_t)snprintf(s, sizeof s, "%zu\n", rep->n_evaluated));
    }
    for (size_t c = items[i].first; c < items[i].first + items[i].n; c++) {
      put_head(w, ms->cols[c].name, "all", 3);
      put_value(w, &ms->cols[c], rep->summary[c]);
    }
  }
}

static int report(const struct evr_trec *t, const struct opts *o, const struct item *items, size_t n_items,
                  const struct evr_measures *ms, const struct evr_trec_report *rep) {
  struct out *w = malloc(sizeof *w);
  if (!w) return fputs("evalua trec: out of memory\n", stderr), EXIT_INPUT;
  w->n = 0, w->failed = 0;
  for (size_t k = 0; o->per_query && k < rep->n; k++) {
    const struct evr_trec_row *row = &rep->rows[k];
    if (!row->skipped) print_query(w, items, n_items, ms, row->qid, row->len, rep->values + k * ms->n);
  }
  if (o->summary) print_summary(w, items, n_items, ms, t, rep);
  flush(w);
  int failed = w->failed || fflush(stdout);
  free(w);
  if (failed) return fputs("evalua trec: cannot write the report\n", stderr), EXIT_INPUT;
  return 0;
}

int evalua_trec_main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(help_text, stdout);
    return 0;
  }
  struct opts o = {0, 0, 1, 1.0, 0, NULL, NULL};
  struct marks mk;
  memset(&mk, 0, sizeof mk);
  struct evr_measures ms;
  evr_measures_init(&ms);
  struct item items[64];
  size_t n_items = 0;
  int code = parse_options(argc, argv, &o, &mk);
  if (!code) code = build(&mk, &ms, items, &n_items);
  struct evr_trec *t = code ? NULL : evr_trec_new();
  if (t) evr_trec_set_parallel(t, evalua_run_two);
  struct evr_trec_report rep;
  memset(&rep, 0, sizeof rep);
  struct evr_error err;
  if (!code && (!t || evr_trec_read_qrels(t, o.qrels, &err) || evaluate(t, &o, &ms, &rep, &err))) {
    fprintf(stderr, "evalua trec: %s\n", t ? err.msg : "out of memory");
    code = EXIT_INPUT;
  }
  if (!code) code = report(t, &o, items, n_items, &ms, &rep);
  evr_trec_report_free(&rep);
  evr_trec_free(t);
  evr_measures_free(&ms);
  return code;
}
