/* evalua trec: trec_eval's command line and output over metrics/ (no Lua),
 * whose trec_eval.c selects the queries, evaluates them (streaming a run
 * grouped by query) and sums them up; trec_rel.c does the same for the
 * relevance formats other than qrels (-R). Every value is computed before
 * anything is printed, so bad input never leaves half a report behind.
 * Exit status: 0 ok, 2 usage, 3 input error. */
#include <getopt.h>
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
#include "evalua/trec_prefs.h"

#include "commands.h"
#include "parallel.h"

enum { EXIT_USAGE = 2, EXIT_INPUT = 3 };

static const char help_text[] =
  "usage: evalua trec [-q] [-c] [-n] [-a] [-J] [-l LEVEL] [-M N] [-N DOCS]\n"
  "                   [-R FORMAT] [-T trec_results] [-Z FILE] [-m MEASURE]...\n"
  "                   [--ignore-identical-ids] QRELS RUN\n"
  "\n"
  "Evaluates a TREC run against TREC qrels and prints trec_eval's report.\n"
  "QRELS has trec_eval's four columns (QID ITER DOCNO REL) or three\n"
  "(QID DOCNO REL, as BEIR's qrels/SPLIT.tsv, whose header line is read past).\n"
  "Each option has trec_eval 10.0's long name too (--measure, --nosummary ...).\n"
  "  -q          also print each query's values\n"
  "  -c          average over every query of QRELS; queries missing from RUN\n"
  "              count as zeros (default: the queries in both files)\n"
  "  -n          no summary ('all') lines\n"
  "  -l LEVEL    least relevance grade that counts as relevant (default 1)\n"
  "  -M N        evaluate only the first N documents of each ranking\n"
  "  -J          rank only the judged documents (after -M), as trec_eval -J\n"
  "  -N DOCS     documents in the collection (utility's fourth term; 0)\n"
  "  -a          every measure of the format: -m all_trec (all_prefs, qrels_jg)\n"
  "  -R FORMAT   the format of QRELS: qrels (the default), prefs, qrels_prefs\n"
  "              or qrels_jg, each with its own measures (below)\n"
  "  -T FORMAT   the format of RUN: trec_results, the only one\n"
  "  -Z FILE     print z-scores: FILE has lines QID MEASURE MEAN STDDEV\n"
  "  -m MEASURE  a measure, with comma-separated parameters after a dot:\n"
  "              num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank\n"
  "              iprec_at_recall.0,.5,1 P.5,10 recall.5,10 infAP gm_bpref\n"
  "              Rprec_mult.0.5,2 utility.1,-1,0,0 11pt_avg binG G ndcg\n"
  "              ndcg.1=3,2=9 ndcg_rel Rndcg ndcg_cut.5,10\n"
  "              map_cut.5,10 relative_P.5,10 success.1,5,10 set_P set_recall\n"
  "              set_map set_F.1 set_relative_P num_nonrel_judged_ret rbp.p=0.9\n"
  "              rbp_resid unj.5,10,20 relstring.10 yaap, runid, num_q, or a\n"
  "              set: official (the default), set (the unranked measures),\n"
  "              all_trec (all but yaap), or beir[.K,...]: ndcg_cut, map_cut,\n"
  "              recall and P at BEIR's k values (default 1,3,5,10,100,1000)\n"
  "  --ignore-identical-ids  drop each retrieved document whose id is its\n"
  "              query's id, as BEIR's evaluation does by default; a query\n"
  "              left with no results counts, as retrieving nothing\n"
  "  -v, --version  the version, and the trec_eval it reproduces\n"
  "  with -R prefs or qrels_prefs: prefs_num_prefs_poss prefs_num_prefs_ful\n"
  "              prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg\n"
  "              prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret\n"
  "              prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp\n"
  "              prefs_pair_imp prefs_avgjg_imp, runid, num_q, or a set:\n"
  "              prefs (the default) or all_prefs (all)\n"
  "  with -R qrels_jg: map_avgjg P_avgjg.5,10 Rprec_mult_avgjg.0.5,2, runid,\n"
  "              num_q, or the set qrels_jg (all, the default)\n"
  "QRELS or RUN may be '-' for standard input.\n";

static int usage(const char *fmt, const char *what) {
  fputs("evalua trec: ", stderr);
  fprintf(stderr, fmt, what);
  fputs(" (try 'evalua trec --help')\n", stderr);
  return EXIT_USAGE;
}

/* ---- options and measures ------------------------------------------------- */

struct opts {
  int per_query, complete, summary, judged_only, drop_query_id;
  enum evr_rel_format format; /* of QRELS (-R) */
  double level, n_docs;
  size_t depth, relstring; /* relstring's length (when asked for: a name) */
  const char *zscores;     /* -Z FILE */
  char relstring_name[64];
  const char *qrels, *run;
};

/* -R's names, by enum evr_rel_format, and the judgments each is read as. */
static const char *const formats[] = {"qrels", "prefs", "qrels_prefs", "qrels_jg"};
static const enum evr_trec_judgments judgments[] = {EVR_TJ_QRELS, EVR_TJ_PREFS, EVR_TJ_PREFS, EVR_TJ_GROUPS};
/* The -R values that a measure of some judgments needs (as judgments). */
static const char *const needs[] = {"qrels", "prefs or qrels_prefs", "qrels_jg", ""};

static const char *const official[] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                       "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
                                       NULL};
static const char *const set_list[] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
                                       "set_recall", "set_relative_P", "set_map", "set_F", NULL};
static const char *const prefs_official[] = {"runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                                             "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
                                             NULL};

/* trec_eval's sets of measures: a list, or (list NULL) every measure of
 * some judgments with runid and num_q, but those trec_eval puts in no set
 * (-m names them alone). */
static const char *const in_no_set[] = {"yaap", NULL};
static const struct {
  const char *name;
  const char *const *list;
  enum evr_trec_judgments all;
} sets[] = {
  {"official", official, EVR_TJ_QRELS}, {"set", set_list, EVR_TJ_QRELS}, {"all_trec", NULL, EVR_TJ_QRELS},
  {"prefs", prefs_official, EVR_TJ_PREFS}, {"all_prefs", NULL, EVR_TJ_PREFS},
  {"qrels_jg", NULL, EVR_TJ_GROUPS},
};
/* The set printed without -m, and every measure (-a), by enum evr_rel_format. */
static const char *const default_set[] = {"official", "prefs", "prefs", "qrels_jg"};
static const char *const all_set[] = {"all_trec", "all_prefs", "all_prefs", "qrels_jg"};

/* What -m marked: one flag per trec measure and the first parameters given
 * for it (trec_eval ignores later ones). Room for every measure. */
#define MAX_MEASURES 96
struct marks {
  int on[MAX_MEASURES];
  const char *params[MAX_MEASURES];
};

static size_t index_of(const struct evr_trec_measure *tm) { return (size_t)(tm - evr_trec_measures); }

/* Marks the set named arg[0..len); 0, or 1 when there is none. */
static int mark_set(struct marks *mk, const char *arg, size_t len) {
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
    if (strlen(sets[s].name) != len || strncmp(arg, sets[s].name, len)) continue;
    for (const char *const *n = sets[s].list; n && *n; n++) mk->on[index_of(evr_trec_find(*n, strlen(*n)))] = 1;
    for (size_t i = 0; !sets[s].list && i < evr_trec_measure_count; i++) {
      enum evr_trec_judgments j = evr_trec_judgments_of(&evr_trec_measures[i]);
      if (j == sets[s].all || j == EVR_TJ_ANY) mk->on[i] = 1;
    }
    for (const char *const *n = in_no_set; !sets[s].list && *n; n++)
      mk->on[index_of(evr_trec_find(*n, strlen(*n)))] = 0;
    return 0;
  }
  return 1;
}

/* -m beir[.K,...]: the measures BEIR's EvaluateRetrieval.evaluate asks
 * pytrec_eval for (beir/retrieval/evaluation.py), at its k values. */
static const char *const beir_measures[] = {"ndcg_cut", "map_cut", "recall", "P", NULL};
static const char beir_k[] = "1,3,5,10,100,1000";

static void mark_beir(struct marks *mk, const char *params) {
  for (const char *const *n = beir_measures; *n; n++) {
    size_t i = index_of(evr_trec_find(*n, strlen(*n)));
    mk->on[i] = 1;
    if (!mk->params[i]) mk->params[i] = params ? params : beir_k;
  }
}

static int mark(struct marks *mk, const char *arg) {
  const char *dot = strchr(arg, '.');
  size_t len = dot ? (size_t)(dot - arg) : strlen(arg);
  if (!mark_set(mk, arg, len)) return 0;
  if (len == 4 && !strncmp(arg, "beir", 4)) return mark_beir(mk, dot ? dot + 1 : NULL), 0;
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

enum { OPT_IGNORE_IDS = 1000 };

/* trec_eval 10.0's long names (its trec_eval.c), and evalua's own. */
static const struct option long_options[] = {
  {"help", no_argument, NULL, 'h'},
  {"version", no_argument, NULL, 'v'},
  {"query_eval_wanted", no_argument, NULL, 'q'},
  {"measure", required_argument, NULL, 'm'},
  {"complete_rel_info_wanted", no_argument, NULL, 'c'},
  {"level_for_rel", required_argument, NULL, 'l'},
  {"nosummary", no_argument, NULL, 'n'},
  {"Debug_level", required_argument, NULL, 'D'},
  {"Judged_docs_only", no_argument, NULL, 'J'},
  {"Number_docs_in_coll", required_argument, NULL, 'N'},
  {"Max_retrieved_per_topic", required_argument, NULL, 'M'},
  {"Rel_info_format", required_argument, NULL, 'R'},
  {"Results_format", required_argument, NULL, 'T'},
  {"Output_old_results_format", required_argument, NULL, 'o'},
  {"Zscore", required_argument, NULL, 'Z'},
  {"ignore-identical-ids", no_argument, NULL, OPT_IGNORE_IDS},
  {NULL, 0, NULL, 0},
};

/* The option as the user wrote it, for a message: "-x" or "--name". */
static const char *given(char **argv, int at, char *buf, size_t size) {
  const char *a = at > 0 ? argv[at - 1] : NULL;
  if (a && !strncmp(a, "--", 2)) {
    size_t n = strcspn(a, "=");
    snprintf(buf, size, "%.*s", (int)(n < 60 ? n : 60), a);
  } else {
    snprintf(buf, size, "-%c", optopt ? optopt : '?');
  }
  return buf;
}

static int parse_options(int argc, char **argv, struct opts *o, struct marks *mk) {
  int any = 0, all = 0;
  long v;
  char name[64];
  opterr = 0;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, ":hvqcnaJoD:l:M:N:R:T:Z:m:", long_options, NULL)) != -1;) {
    switch (c) {
    case 'h': fputs(help_text, stdout); return -1;
    case 'v': printf("evalua trec %s (trec_eval 10.0's measures, options and output)\n", EVALUA_VERSION); return -1;
    case OPT_IGNORE_IDS: o->drop_query_id = 1; break;
    case 'D': return usage("%s: trec_eval's debugging output is not reproduced", "-D (--Debug_level)");
    case 'o': return usage("%s: obsolete in trec_eval 10.0, which ignores it", "-o (--Output_old_results_format)");
    case 'q': o->per_query = 1; break;
    case 'c': o->complete = 1; break;
    case 'n': o->summary = 0; break;
    case 'J': o->judged_only = 1; break;
    case 'Z': o->zscores = optarg; break;
    case 'a': any = all = 1; break; /* marked once -R is known */
    case 'N':
      if (parse_count(optarg, 0, &v)) return usage("-N: '%s' is not a number of documents", optarg);
      o->n_docs = (double)v;
      break;
    case 'R':
      for (o->format = EVR_REL_QRELS; o->format <= EVR_REL_QRELS_JG && strcmp(optarg, formats[o->format]);)
        o->format++;
      if (o->format > EVR_REL_QRELS_JG)
        return usage("-R: '%s' is not a relevance format: qrels, prefs, qrels_prefs or qrels_jg", optarg);
      break;
    case 'T':
      if (strcmp(optarg, "trec_results"))
        return usage("-T: '%s' is not read: runs are in trec_eval's 'trec_results' format", optarg);
      break;
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
    case ':': return usage("option %s needs a value", given(argv, optind, name, sizeof name));
    default:
      if (optind > 0 && !strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '=') && optopt)
        return usage("option %s takes no value", given(argv, optind, name, sizeof name));
      return usage("unknown option %s", given(argv, optind, name, sizeof name));
    }
  }
  if (argc - optind != 2) return usage("%s", "expected two files: QRELS RUN");
  if (o->drop_query_id && o->format != EVR_REL_QRELS)
    return usage("%s applies to -R qrels, whose documents are ranked against their query", "--ignore-identical-ids");
  o->qrels = argv[optind], o->run = argv[optind + 1];
  if (all) mark(mk, all_set[o->format]);
  if (!any) mark(mk, default_set[o->format]);
  return 0;
}

/* One entry per marked measure, in trec_eval's order: its columns are
 * cols[first, first + n). */
struct item {
  const struct evr_trec_measure *tm;
  size_t first, n;
};

/* relstring's length, read as trec_eval reads it (a number, its integer
 * part; below 0 is 0) but refusing what is not a number. */
static int relstring_length(const char *params, struct opts *o) {
  const char *text = params ? params : "10";
  char *end;
  double v = strtod(text, &end);
  if (end == text || *end || !(v < 1e6)) return usage("relstring: '%s' is not a length below 1000000", text);
  o->relstring = v >= 1 ? (size_t)v : 0;
  snprintf(o->relstring_name, sizeof o->relstring_name, params ? "relstring_%s" : "relstring", params ? params : "");
  return 0;
}

/* A measure computed from other judgments than those -R reads. */
static int misfit(const struct evr_trec_measure *tm, enum evr_rel_format f) {
  enum evr_trec_judgments j = evr_trec_judgments_of(tm);
  if (j == EVR_TJ_ANY || j == judgments[f]) return 0;
  char msg[160];
  snprintf(msg, sizeof msg, "measure '%s' needs -R %s, not -R %s", tm->name, needs[j], formats[f]);
  return usage("%s", msg);
}

static int build(const struct marks *mk, struct evr_measures *ms, struct item *items, size_t *n_items,
                 struct opts *o) {
  struct evr_error err;
  *n_items = 0;
  for (size_t i = 0; i < evr_trec_measure_count; i++) {
    if (!mk->on[i]) continue;
    const struct evr_trec_measure *tm = &evr_trec_measures[i];
    size_t before = ms->n;
    if (misfit(tm, o->format)) return EXIT_USAGE;
    if (tm->kind == EVR_TREC_RELSTRING && relstring_length(mk->params[i], o)) return EXIT_USAGE;
    if (tm->kind >= 0 && evr_measures_add_trec(ms, tm, mk->params[i], &err)) return usage("%s", err.msg);
    items[(*n_items)++] = (struct item){tm, before, ms->n - before};
  }
  return 0;
}

/* ---- evaluation ------------------------------------------------------------- */

/* QRELS in the format of -R: into t (qrels) or *rel (the others). */
static int read_judgments(struct evr_trec *t, const struct opts *o, struct evr_rel **rel, struct evr_error *err) {
  if (o->format == EVR_REL_QRELS) return evr_trec_read_qrels(t, o->qrels, err);
  *rel = evr_rel_read(o->qrels, o->format, err);
  return *rel ? 0 : -1;
}

/* The run streamed when it can be (metrics/trec_eval.c), or against the
 * judgments of another format (metrics/trec_rel.c); at least one query
 * must be in both files. */
static int evaluate(struct evr_trec *t, const struct evr_rel *rel, const struct opts *o,
                    const struct evr_measures *ms, struct evr_trec_report *rep, struct evr_error *err) {
  struct evr_trec_opts how = {o->level, o->depth, o->complete, 1, o->judged_only, o->relstring, NULL, o->drop_query_id};
  struct evr_zscores *z = o->zscores ? evr_zscores_read(o->zscores, err) : NULL;
  if (o->zscores && !z) return -1;
  how.z = z;
  int r = rel ? evr_rel_evaluate_run(rel, t, o->run, ms->cols, ms->n, &how, rep, err)
              : evr_trec_evaluate_run(t, o->run, ms->cols, ms->n, &how, rep, err);
  evr_zscores_free(z);
  if (r) return -1;
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

/* "%s%-22s\t%s\t" of z ("Z" for z-scores, else "") and name */
static void put_head(struct out *w, const char *z, const char *name, const char *qid, size_t qlen) {
  size_t len = strlen(name);
  char pad[24];
  put(w, z, strlen(z));
  put(w, name, len);
  if (len < 22) {
    memset(pad, ' ', 22 - len);
    put(w, pad, 22 - len);
  }
  put(w, "\t", 1);
  put(w, qid, qlen);
  put(w, "\t", 1);
}

/* Room for a value as printed: "%6.4f" of the largest double has 316
 * characters, "%ld" 20. */
#define VALUE_ROOM 320

/* printf's "%6.4f" for v, in at most VALUE_ROOM - 1 bytes. Most values take a fast path: the product
 * v * 10^4 is computed with an error below 2e-7, so when it is not within
 * 1e-6 of a half, rounding it gives printf's digits; otherwise, and for
 * large or odd values, printf itself is asked. */
static size_t format4(double v, char *s) {
  double a = fabs(v), t = a * 1e4;
  if (!(a < 1e5) || fabs(t - floor(t) - 0.5) < 1e-6) return (size_t)snprintf(s, VALUE_ROOM - 1, "%6.4f", v);
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

/* A value: counts as integers, except z-scores (z) */
static void put_value(struct out *w, const struct evr_column *c, int z, double v) {
  char s[VALUE_ROOM];
  size_t len = c->integer && !z ? (size_t)snprintf(s, sizeof s, "%ld", (long)v) : format4(v, s);
  s[len++] = '\n';
  put(w, s, len);
}

/* A per-query line's start, "%-22s\t" of its column's name, made once. */
struct head {
  const struct evr_column *col;
  size_t c, len;
  char s[sizeof ((struct evr_column *)0)->name + 25];
};

/* The heads of the lines printed per query, in order (relstring's has no
 * column); their number. */
static size_t make_heads(const struct item *items, size_t n_items, const struct evr_measures *ms,
                         const struct opts *o, struct head *h) {
  size_t n = 0;
  for (size_t i = 0; i < n_items; i++) {
    if (items[i].tm->kind == EVR_TREC_RELSTRING) {
      h[n].col = NULL, h[n].c = 0;
      h[n].len = (size_t)snprintf(h[n].s, sizeof h[n].s, "%-22s\t", o->relstring_name);
      n++;
    }
    for (size_t c = items[i].first; items[i].tm->per_query && c < items[i].first + items[i].n; c++, n++) {
      h[n].col = &ms->cols[c], h[n].c = c;
      h[n].len = (size_t)snprintf(h[n].s, sizeof h[n].s, "%s%-22s\t", o->zscores ? "Z" : "", ms->cols[c].name);
    }
  }
  return n;
}

/* trec_eval's relstring line: the grades of the first ranks, quoted. */
static void put_relstring(struct out *w, const struct head *h, const char *qid, size_t qlen, const char *rs) {
  put(w, h->s, h->len);
  put(w, qid, qlen);
  put(w, "\t'", 2);
  put(w, rs, strlen(rs));
  put(w, "'\n", 2);
}

/* One query's lines, written straight into the buffer (a query id too long
 * for it goes the general way). */
static void print_query(struct out *w, const struct head *h, size_t n, const char *qid, size_t qlen,
                        const double *v, const char *rs, int z) {
  for (size_t k = 0; k < n; k++) {
    if (!h[k].col) {
      put_relstring(w, &h[k], qid, qlen, rs);
      continue;
    }
    size_t need = h[k].len + qlen + 1 + VALUE_ROOM;
    if (need > sizeof w->buf) {
      put_head(w, z ? "Z" : "", h[k].col->name, qid, qlen);
      put_value(w, h[k].col, z, v[h[k].c]);
      continue;
    }
    if (w->n + need > sizeof w->buf) flush(w);
    char *p = w->buf + w->n;
    memcpy(p, h[k].s, h[k].len), p += h[k].len;
    memcpy(p, qid, qlen), p += qlen;
    *p++ = '\t';
    double x = v[h[k].c];
    p += h[k].col->integer && !z ? (size_t)snprintf(p, 24, "%ld", (long)x) : format4(x, p);
    *p++ = '\n';
    w->n = (size_t)(p - w->buf);
  }
}

static void print_summary(struct out *w, const struct item *items, size_t n_items, const struct evr_measures *ms,
                          const struct evr_trec *t, const struct evr_trec_report *rep, int z) {
  char s[32];
  for (size_t i = 0; i < n_items; i++) {
    const struct evr_trec_measure *tm = items[i].tm;
    if (tm->kind == EVR_TREC_RUNID) {
      size_t len;
      const char *id = evr_trec_runid(t, &len);
      put_head(w, "", "runid", "all", 3);
      put(w, id, len);
      put(w, "\n", 1);
    } else if (tm->kind == EVR_TREC_NUM_Q) { /* with -Z marked and printed as a value, as trec_eval does */
      put_head(w, z ? "Z" : "", "num_q", "all", 3);
      int len = z ? snprintf(s, sizeof s, "%.4f\n", (double)rep->n_evaluated)
                  : snprintf(s, sizeof s, "%zu\n", rep->n_evaluated);
      put(w, s, (size_t)len);
    }
    for (size_t c = items[i].first; c < items[i].first + items[i].n; c++) {
      put_head(w, z ? "Z" : "", ms->cols[c].name, "all", 3);
      put_value(w, &ms->cols[c], z, rep->summary[c]);
    }
  }
}

static int report(const struct evr_trec *t, const struct opts *o, const struct item *items, size_t n_items,
                  const struct evr_measures *ms, const struct evr_trec_report *rep) {
  struct out *w = malloc(sizeof *w);
  struct head *heads = malloc((ms->n + 1) * sizeof *heads);
  if (!w || !heads) return free(w), free(heads), fputs("evalua trec: out of memory\n", stderr), EXIT_INPUT;
  w->n = 0, w->failed = 0;
  size_t n_heads = make_heads(items, n_items, ms, o, heads);
  for (size_t k = 0; o->per_query && k < rep->n; k++) {
    const struct evr_trec_row *row = &rep->rows[k];
    const char *rs = rep->relstrings ? rep->relstrings + k * (o->relstring + 1) : "";
    if (!row->skipped) print_query(w, heads, n_heads, row->qid, row->len, rep->values + k * ms->n, rs, !!o->zscores);
  }
  free(heads);
  if (o->summary) print_summary(w, items, n_items, ms, t, rep, !!o->zscores);
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
  struct opts o = {0, 0, 1, 0, 0, EVR_REL_QRELS, 1.0, 0.0, 0, 0, NULL, "", NULL, NULL};
  struct marks mk;
  memset(&mk, 0, sizeof mk);
  struct evr_measures ms;
  evr_measures_init(&ms);
  struct item items[MAX_MEASURES];
  size_t n_items = 0;
  int code = parse_options(argc, argv, &o, &mk);
  if (code < 0) return 0; /* --help or --version printed */
  if (!code) code = build(&mk, &ms, items, &n_items, &o);
  for (size_t c = 0; !code && c < ms.n; c++)
    if (ms.cols[c].kind == EVR_UTILITY) ms.cols[c].n_docs = o.n_docs;
  struct evr_trec *t = code ? NULL : evr_trec_new();
  if (t) evr_trec_set_parallel(t, evalua_run_two);
  struct evr_trec_report rep;
  memset(&rep, 0, sizeof rep);
  struct evr_error err;
  struct evr_rel *rel = NULL;
  if (!code && (!t || read_judgments(t, &o, &rel, &err) || evaluate(t, rel, &o, &ms, &rep, &err))) {
    fprintf(stderr, "evalua trec: %s\n", t ? err.msg : "out of memory");
    code = EXIT_INPUT;
  }
  if (!code) code = report(t, &o, items, n_items, &ms, &rep);
  evr_trec_report_free(&rep);
  evr_rel_free(rel);
  evr_trec_free(t);
  evr_measures_free(&ms);
  return code;
}
