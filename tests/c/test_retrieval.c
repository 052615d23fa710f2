/* The retrieval library alone: id table, ranker, measure names, the
 * formulas on hand-worked examples (derivations in the comments) and the
 * TREC reader on small files, including its two-halves path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "evalua/idtab.h"
#include "evalua/measures.h"
#include "evalua/ranking.h"
#include "evalua/trec.h"
#include "evalua/trec_eval.h"

static void test_idtab(void) {
  struct evr_idtab t;
  evr_idtab_init(&t);
  char keys[1000][8];
  int found;
  for (int i = 0; i < 1000; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    uint32_t *v = evr_idtab_put(&t, keys[i], strlen(keys[i]), (uint32_t)i, &found);
    CHECK(v && !found);
  }
  CHECK(t.count == 1000 && t.cap >= 2000); /* grew, load at most 1/2 */
  uint32_t *v = evr_idtab_put(&t, "k7", 2, 99, &found);
  CHECK(found && *v == 7);
  CHECK(evr_idtab_get(&t, "k999", 4) && *evr_idtab_get(&t, "k999", 4) == 999);
  CHECK(!evr_idtab_get(&t, "k1000", 5));
  CHECK(!evr_idtab_get(&t, "k", 1)); /* a prefix is another key */
  evr_idtab_clear(&t);
  CHECK(!evr_idtab_get(&t, "k7", 2) && t.count == 0);
  evr_idtab_free(&t);
}

/* Keys of 1 to 7 bytes hash from one zero-padded word, read with
 * overlapping loads; the table tells them apart by hash and length alone,
 * so a byte lost at any position would merge two keys. */
static void test_idtab_short_keys(void) {
  const unsigned char b[7] = {1, 2, 3, 4, 5, 6, 7};
  for (size_t len = 1; len <= 7; len++) {
    uint64_t want = 0;
    for (size_t i = 0; i < len; i++) want |= (uint64_t)b[i] << 8 * i;
    CHECK(evr_tail_word(b, len) == want);
  }
  struct evr_idtab t;
  evr_idtab_init(&t);
  char keys[7][7][8];
  int found;
  for (size_t len = 1; len <= 7; len++)
    for (size_t at = 0; at < len; at++) { /* "abcdefg"[:len] with byte at changed */
      memcpy(keys[len - 1][at], "abcdefg", len);
      keys[len - 1][at][at] = 'X';
      uint32_t *v = evr_idtab_put(&t, keys[len - 1][at], len, (uint32_t)(10 * len + at), &found);
      CHECK(v && !found);
    }
  CHECK(t.count == 28);
  for (size_t len = 1; len <= 7; len++)
    for (size_t at = 0; at < len; at++) {
      uint32_t *v = evr_idtab_get(&t, keys[len - 1][at], len);
      CHECK(v && *v == 10 * len + at);
    }
  CHECK(!evr_idtab_get(&t, "abcdefg", 7));
  evr_idtab_free(&t);
}

static void test_ranker(void) {
  struct evr_ranker *r = evr_ranker_new();
  struct evr_ranking out;
  /* judged: b=2, c=0, z=3, n=-1 (trec_eval's unjudged); scores tie at 5 */
  evr_ranker_judge(r, "b", 1, 2);
  evr_ranker_judge(r, "c", 1, 0);
  evr_ranker_judge(r, "z", 1, 3);
  evr_ranker_judge(r, "n", 1, -1);
  CHECK(evr_ranker_judge(r, "b", 1, 1) == 1); /* judged twice: first grade kept */
  evr_ranker_add(r, "a", 1, 1);
  evr_ranker_add(r, "b", 1, 5);
  evr_ranker_add(r, "bb", 2, 5);
  evr_ranker_add(r, "n", 1, 9);
  evr_ranker_add(r, "c", 1, -2);
  CHECK(evr_ranker_finish(r, 1, 0, &out) == 0);
  /* n (9), then the tie at 5 by id descending: bb before b, then a, c */
  size_t len;
  double score;
  CHECK_STR(evr_ranker_item(r, 1, &len, &score), "bb");
  CHECK(len == 2 && score == 5);
  CHECK(out.n_ret == 5);
  /* n is judged -1: in the pool but unjudged; bb and a are not judged */
  double want[] = {EVR_POOL_UNJUDGED, EVR_UNJUDGED, 2, EVR_UNJUDGED, 0};
  for (int i = 0; i < 5; i++) CHECK(out.rel[i] == want[i]);
  CHECK(out.n_judged == 3 && out.judged[0] == 3 && out.judged[1] == 2 && out.judged[2] == 0);
  CHECK(out.n_repeats == 0 && !evr_ranker_repeat(r, &len));

  /* as given, with a depth and a repeat */
  evr_ranker_reset(r);
  evr_ranker_judge(r, "x", 1, 1);
  const char *copy = evr_ranker_copy(r, "x", 1);
  evr_ranker_add(r, copy, 1, 0);
  evr_ranker_add(r, "y", 1, 0);
  evr_ranker_add(r, "x", 1, 0);
  evr_ranker_add(r, "w", 1, 0);
  CHECK(evr_ranker_finish(r, 0, 3, &out) == 0);
  CHECK(out.n_ret == 3 && out.rel[0] == 1 && out.rel[2] == EVR_UNJUDGED && out.rel_all[2] == 1);
  CHECK(out.n_repeats == 1 && evr_ranker_repeat(r, &len) && len == 1);

  /* a long ranking in reverse order goes past the insertion sort */
  evr_ranker_reset(r);
  char ids[300][8];
  for (int i = 0; i < 300; i++) {
    snprintf(ids[i], sizeof ids[i], "%03d", i);
    evr_ranker_add(r, ids[i], 3, (double)i);
  }
  CHECK(evr_ranker_finish(r, 1, 0, &out) == 0);
  int sorted = 1;
  for (size_t i = 0; i < 300; i++) {
    evr_ranker_item(r, i, &len, &score);
    sorted &= score == 299.0 - (double)i;
  }
  CHECK(sorted);
  evr_ranker_free(r);
}

static void test_measure_names(void) {
  struct evr_measures m;
  struct evr_error err;
  evr_measures_init(&m);
  CHECK(!evr_measures_add(&m, "P.10,5", &err));
  CHECK(!evr_measures_add(&m, "ndcg@3", &err));
  CHECK(!evr_measures_add(&m, "iprec_at_recall_0.5", &err));
  CHECK(!evr_measures_add(&m, "ndcg.2=5", &err));
  CHECK(!evr_measures_add(&m, "ragas.id_context_recall", &err));
  CHECK(m.n == 6);
  CHECK_STR(m.cols[0].name, "P_5");
  CHECK_STR(m.cols[1].name, "P_10");
  CHECK(m.cols[2].kind == EVR_NDCG_CUT && m.cols[2].k == 3);
  CHECK_STR(m.cols[3].name, "iprec_at_recall_0.5"); /* one column: named as asked */
  CHECK(m.cols[3].x == 0.5);
  CHECK_STR(m.cols[4].name, "ndcg.2=5");
  CHECK(m.cols[4].gains && m.cols[4].gains->n == 1 && m.cols[4].gains->gain[0] == 5);
  CHECK(evr_measures_add(&m, "P.0", &err) && strstr(err.msg, "cutoff '0' is not a positive integer"));
  CHECK(evr_measures_add(&m, "ndcg.x=1", &err) && strstr(err.msg, "GRADE=GAIN"));
  CHECK(evr_measures_add(&m, "rprec@5", &err) && strstr(err.msg, "takes no cutoff"));
  CHECK(evr_measures_add(&m, "num_q", &err) && strstr(err.msg, "a line of evalua trec's report, not a measure"));
  CHECK(evr_measures_add(&m, "relstring.5", &err) && strstr(err.msg, "relstring is a line of evalua trec's report"));
  CHECK(evr_measures_add(&m, "nope", &err) && !strcmp(err.msg, "unknown measure 'nope'"));
  /* measures of evalua trec's other relevance formats need their judgments */
  size_t n = m.n;
  CHECK(evr_measures_add(&m, "prefs_simp", &err) && strstr(err.msg, "computed from preferences, not qrels"));
  CHECK(evr_measures_add(&m, "P_avgjg.5", &err) && strstr(err.msg, "judgment groups, not qrels"));
  CHECK(evr_measures_add(&m, "Rprec_mult_avgjg_0.5", &err) && strstr(err.msg, "(evalua trec -R qrels_jg)"));
  CHECK(m.n == n);
  evr_measures_free(&m);
}

/* The values of spec on a ranking given as grades (-1: unjudged) and the
 * other judged grades not retrieved. */
static double value(const char *spec, const double *rel, size_t n, const double *missed, size_t n_missed,
                    double level) {
  struct evr_measures m;
  struct evr_error err;
  double judged[64], v = NAN;
  size_t nj = 0;
  for (size_t i = 0; i < n; i++)
    if (rel[i] >= 0) judged[nj++] = rel[i];
  for (size_t i = 0; i < n_missed; i++) judged[nj++] = missed[i];
  for (size_t i = 1; i < nj; i++) /* descending */
    for (size_t j = i; j > 0 && judged[j - 1] < judged[j]; j--) {
      double t = judged[j];
      judged[j] = judged[j - 1], judged[j - 1] = t;
    }
  struct evr_ranking r = {n, rel, rel, 0, nj, judged};
  evr_measures_init(&m);
  if (!evr_measures_add(&m, spec, &err) && m.n == 1) evr_eval(m.cols, 1, &r, level, &v);
  evr_measures_free(&m);
  return v;
}

static void test_formulas(void) {
  /* ranks: 0, 2, -, 1, 3 (grades; - unjudged); 2 and 1 more judged but
   * missed: grades 1 and 0. Level 1: relevant at ranks 2, 4, 5; R = 4. */
  const double rel[] = {0, 2, -1, 1, 3}, missed[] = {1, 0};
  CHECK_NEAR(value("P.2", rel, 5, missed, 2, 1), 1.0 / 2, 1e-15);
  CHECK_NEAR(value("P.10", rel, 5, missed, 2, 1), 3.0 / 10, 1e-15);
  CHECK_NEAR(value("recall.4", rel, 5, missed, 2, 1), 2.0 / 4, 1e-15);
  /* AP = (1/2 + 2/4 + 3/5) / 4 */
  CHECK_NEAR(value("map", rel, 5, missed, 2, 1), (0.5 + 0.5 + 0.6) / 4, 1e-15);
  CHECK_NEAR(value("map_cut.2", rel, 5, missed, 2, 1), 0.5 / 4, 1e-15);
  CHECK_NEAR(value("Rprec", rel, 5, missed, 2, 1), 2.0 / 4, 1e-15); /* top 4: ranks 2 and 4 */
  CHECK_NEAR(value("recip_rank", rel, 5, missed, 2, 1), 0.5, 1e-15);
  /* bpref: N = 2 judged non-relevant, R = 4; one non-relevant (rank 1)
   * above each relevant: 3 x (1 - 1/2), over R */
  CHECK_NEAR(value("bpref", rel, 5, missed, 2, 1), 1.5 / 4, 1e-15);
  /* iprec at recall 0.5: needs 2 relevant; best precision from rank 4 on is
   * max(2/4, 3/5) = 0.6 */
  CHECK_NEAR(value("iprec_at_recall.0.5", rel, 5, missed, 2, 1), 0.6, 1e-15);
  CHECK_NEAR(value("iprec_at_recall.1", rel, 5, missed, 2, 1), 0.0, 0); /* 4 relevant never reached */
  /* nDCG: DCG = 2/log2(3) + 1/log2(5) + 3/log2(6); ideal 3,2,1,1 */
  double dcg = 2 / log2(3) + 1 / log2(5) + 3 / log2(6), idcg = 3 + 2 / log2(3) + 1 / log2(4) + 1 / log2(5);
  CHECK_NEAR(value("ndcg", rel, 5, missed, 2, 1), dcg / idcg, 1e-15);
  CHECK_NEAR(value("ndcg_cut.2", rel, 5, missed, 2, 1), (2 / log2(3)) / (3 + 2 / log2(3)), 1e-15);
  /* gains 2=10: DCG = 10/log2(3) + 1/log2(5) + 3/log2(6); ideal 10,3,1,1 */
  CHECK_NEAR(value("ndcg.2=10", rel, 5, missed, 2, 1),
             (10 / log2(3) + 1 / log2(5) + 3 / log2(6)) / (10 + 3 / log2(3) + 1 / log2(4) + 1 / log2(5)), 1e-15);
  /* level 2: relevant at ranks 2 and 5, R = 2 */
  CHECK_NEAR(value("map", rel, 5, missed, 2, 2), (1.0 / 2 + 2.0 / 5) / 2, 1e-15);
  CHECK_NEAR(value("success.1", rel, 5, missed, 2, 2), 0.0, 0);
  CHECK_NEAR(value("num_rel", rel, 5, missed, 2, 2), 2, 0);
  /* nothing retrieved: zeros, and NaN (unmeasured) for the RAGAS variant */
  CHECK_NEAR(value("map", rel, 0, missed, 2, 1), 0.0, 0);
  CHECK_NEAR(value("iprec_at_recall.0", rel, 0, missed, 2, 1), 0.0, 0);
  CHECK(isnan(value("ragas.id_context_precision", rel, 0, missed, 2, 1)));
}

static void test_summaries(void) {
  struct evr_column mean = {.agg = EVR_AGG_MEAN}, sum = {.agg = EVR_AGG_SUM}, geo = {.agg = EVR_AGG_GEO};
  struct evr_acc a = {0, 0}, b = {0, 0}, g = {0, 0};
  double v[] = {0.5, NAN, 0.25, 0};
  for (int i = 0; i < 4; i++) {
    evr_acc_add(&a, &mean, v[i]);
    evr_acc_add(&b, &sum, v[i]);
    evr_acc_add(&g, &geo, v[i]);
  }
  CHECK(a.n == 3);
  CHECK_NEAR(evr_acc_value(&a, &mean), 0.75 / 3, 1e-15);
  CHECK_NEAR(evr_acc_value(&b, &sum), 0.75, 1e-15);
  /* 0 counts as trec_eval's floor 1e-5 */
  CHECK_NEAR(evr_acc_value(&g, &geo), cbrt(0.5 * 0.25 * 1e-5), 1e-15);
  struct evr_acc none = {0, 0};
  CHECK(isnan(evr_acc_value(&none, &mean)));
}

static void write_file(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  fputs(s, f);
  fclose(f);
}

/* Runs both jobs one after the other: the two-halves path without threads. */
static void one_then_other(void (*job)(void *), void *args[2]) {
  job(args[0]);
  job(args[1]);
}

static void test_trec_files(void) {
  char qrels[] = "/tmp/evalua-test-qrelsXXXXXX", run[] = "/tmp/evalua-test-runXXXXXX";
  close(mkstemp(qrels)), close(mkstemp(run));
  write_file(qrels, "# judged\nq2 0 a 1\n\nq1 0 b 2\nq1 0 c 0\n");
  /* q3 is not judged; the last line has no newline; q1's lines are split */
  write_file(run, "q1 Q0 c 1 2.0 r1\nq2\tQ0\ta 1 -1e3 r1 extra words\nq3 Q0 x 1 1 r1\nq1 Q0 b 2 1.5 r2");
  for (int parallel = 0; parallel < 2; parallel++) {
    struct evr_trec *t = evr_trec_new();
    struct evr_error err;
    if (parallel) evr_trec_set_parallel(t, one_then_other);
    CHECK(!evr_trec_read_qrels(t, qrels, &err) && !evr_trec_read_run(t, run, &err));
    CHECK(evr_trec_count(t) == 3);
    struct evr_trec_query q;
    evr_trec_query(t, 0, &q);
    CHECK(q.qid_len == 2 && !memcmp(q.qid, "q1", 2) && q.n_judged == 2 && q.n_results == 2);
    evr_trec_query(t, 2, &q);
    CHECK(!q.in_qrels && q.in_run);
    size_t len;
    CHECK(!strncmp(evr_trec_runid(t, &len), "r2", 2) && len == 2);
    struct evr_ranker *r = evr_ranker_new();
    struct evr_ranking out;
    CHECK(!evr_trec_rank(t, 0, r, 0, &out, &err));
    CHECK(out.n_ret == 2 && out.rel[0] == 0 && out.rel[1] == 2); /* c (2.0) before b (1.5) */
    evr_ranker_free(r);
    evr_trec_free(t);
  }
  /* errors name file and line, in either path */
  write_file(run, "q1 Q0 c 1 2.0 r\nq1 Q0 b 1 1 r\nq2 Q0 a 1 x r\n");
  for (int parallel = 0; parallel < 2; parallel++) {
    struct evr_trec *t = evr_trec_new();
    struct evr_error err;
    char want[256];
    if (parallel) evr_trec_set_parallel(t, one_then_other);
    CHECK(!evr_trec_read_qrels(t, qrels, &err));
    CHECK(evr_trec_read_run(t, run, &err));
    snprintf(want, sizeof want, "%s:3: score is not a number: 'x'", run);
    CHECK_STR(err.msg, want);
    evr_trec_free(t);
  }
  unlink(qrels), unlink(run);
}

/* Evaluates qrels and run with map and P_1 (streamed when it can be) and
 * checks the report against the run read whole. */
static int stream_case(const char *qrels, const char *run, int parallel, int complete, struct evr_trec_report *rep,
                       struct evr_error *err) {
  struct evr_measures ms;
  evr_measures_init(&ms);
  CHECK(!evr_measures_add(&ms, "map", err) && !evr_measures_add(&ms, "P_1", err));
  struct evr_trec_opts o = {1.0, 0, complete, 1, 0, 0, NULL, 0};
  struct evr_trec *t = evr_trec_new(), *whole = evr_trec_new();
  if (parallel) evr_trec_set_parallel(t, one_then_other), evr_trec_set_parallel(whole, one_then_other);
  CHECK(!evr_trec_read_qrels(t, qrels, err));
  int r = evr_trec_evaluate_run(t, run, ms.cols, ms.n, &o, rep, err);
  struct evr_trec_report w;
  struct evr_error werr;
  memset(&w, 0, sizeof w);
  if (!r) {
    CHECK(!evr_trec_read_qrels(whole, qrels, &werr) && !evr_trec_read_run(whole, run, &werr));
    CHECK(!evr_trec_evaluate(whole, ms.cols, ms.n, &o, &w, &werr));
    size_t k = 0; /* the whole report also lists the queries the qrels lack */
    for (size_t j = 0; j < w.n; j++) {
      if (w.rows[j].skipped && !strcmp(w.rows[j].skipped, "not in the qrels")) continue;
      CHECK(k < rep->n && rep->rows[k].len == w.rows[j].len && !memcmp(rep->rows[k].qid, w.rows[j].qid, w.rows[j].len));
      CHECK(!rep->rows[k].skipped == !w.rows[j].skipped);
      for (size_t c = 0; c < ms.n; c++)
        CHECK(!memcmp(&rep->values[k * ms.n + c], &w.values[j * ms.n + c], sizeof(double)));
      k++;
    }
    CHECK(k == rep->n && rep->n_evaluated == w.n_evaluated);
    CHECK(!memcmp(rep->summary, w.summary, ms.n * sizeof(double)));
    size_t la, lb;
    const char *a = evr_trec_runid(t, &la), *b = evr_trec_runid(whole, &lb);
    CHECK(la == lb && !memcmp(a, b, la));
  }
  evr_trec_report_free(&w);
  evr_trec_free(t), evr_trec_free(whole);
  evr_measures_free(&ms);
  return r;
}

static void test_trec_stream(void) {
  char qrels[] = "/tmp/evalua-test-qrelsXXXXXX", run[] = "/tmp/evalua-test-runXXXXXX";
  close(mkstemp(qrels)), close(mkstemp(run));
  write_file(qrels, "q1 0 a 1\nq1 0 b 0\nq2 0 a 2\nq3 0 c 1\nq4 0 d 1\n");
  /* grouped, queries out of qid order, one the qrels lack (q9), q4 missing,
   * a comment and a blank line inside a query, no newline at the end */
  const char *grouped = "q2 Q0 b 1 3 r\nq2 Q0 a 2 2 r\nq9 Q0 a 1 5 r\nq1 Q0 a 1 1 r\n# note\n\nq1 Q0 b 2 1 r\n"
                        "q3 Q0 x 1 1 r\nq3 Q0 c 2 0.5 last";
  for (int parallel = 0; parallel < 2; parallel++)
    for (int complete = 0; complete < 2; complete++) {
      struct evr_trec_report rep;
      struct evr_error err;
      write_file(run, grouped);
      CHECK(!stream_case(qrels, run, parallel, complete, &rep, &err));
      CHECK(rep.streamed && rep.n == 4 && rep.n_evaluated == (complete ? 4u : 3u));
      CHECK_NEAR(rep.values[0], 0.5, 0); /* q1: b before a on their tie (ids descending) */
      CHECK(complete ? !rep.rows[3].skipped : !strcmp(rep.rows[3].skipped, "not in the run"));
      evr_trec_report_free(&rep);
      /* q1 met again after q9: read whole, same values */
      write_file(run, "q1 Q0 a 1 1 r\nq9 Q0 a 1 5 r\nq1 Q0 b 2 1 r\nq3 Q0 c 1 1 r\n");
      CHECK(!stream_case(qrels, run, parallel, complete, &rep, &err));
      CHECK(!rep.streamed && rep.n == 4);
      evr_trec_report_free(&rep);
    }
  /* errors name the line in either half; a repeated document both lines */
  const char *bad[][2] = {
    {"q1 Q0 a 1 1 r\nq1 Q0 b 1 1 r\nq2 Q0 a 1 1 r\nq3 Q0 c 1 x r\n", ":4: score is not a number: 'x'"},
    {"q1 Q0 a 1 y r\nq2 Q0 a 1 1 r\nq3 Q0 a 1 1 r\n", ":1: score is not a number: 'y'"},
    {"q1 Q0 a 1 1 r\nq2 Q0 a 1 1 r\nq3 Q0 c 1 1 r\nq3 Q0 c 1 1 r\n",
     ":4: document 'c' is retrieved twice for query 'q3' (first at line 3)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    for (int parallel = 0; parallel < 2; parallel++) {
      struct evr_trec_report rep;
      struct evr_error err;
      char want[256];
      write_file(run, bad[i][0]);
      CHECK(stream_case(qrels, run, parallel, 0, &rep, &err) == -1);
      snprintf(want, sizeof want, "%s%s", run, bad[i][1]);
      CHECK_STR(err.msg, want);
      evr_trec_report_free(&rep);
    }
  unlink(qrels), unlink(run);
}

int main(void) {
  test_idtab();
  test_idtab_short_keys();
  test_ranker();
  test_measure_names();
  test_formulas();
  test_summaries();
  test_trec_files();
  test_trec_stream();
  return check_report();
}
