/* libFuzzer target: the TREC qrels and run readers (metrics/trec.c), the
 * ranking of every query they produce, and the evaluation of the run
 * streamed query by query (metrics/trec_eval.c); with memfds, QRELS read as
 * each of the other relevance formats too, and evaluated with their
 * measures (metrics/trec_rel.c, trec_prefs.c, trec_jg.c). Input: QRELS '\0'
 * RUN; the first byte's low bit picks a pipe (read whole) or a memfd
 * (mapped, so streamed when grouped, and read whole a second time) for both. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evalua/measures.h"
#include "evalua/ranking.h"
#include "evalua/trec.h"
#include "evalua/trec_eval.h"
#include "evalua/trec_prefs.h"

/* A path that reads back data: /proc/self/fd of a memfd or of a pipe's
 * read end (inputs stay under the pipe buffer, libFuzzer's -max_len 4096). */
static int open_data(const uint8_t *data, size_t n, int piped, char path[64]) {
  int fd, w;
  if (piped) {
    int p[2];
    if (pipe(p)) return -1;
    fd = p[0], w = p[1];
  } else {
    if ((fd = memfd_create("trec", 0)) < 0) return -1;
    w = fd;
  }
  if (n && write(w, data, n) != (ssize_t)n) return close(fd), -1;
  if (piped) close(w);
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}

static void rank_all(struct evr_trec *t) {
  struct evr_ranker *r = evr_ranker_new();
  struct evr_error err;
  struct evr_ranking out;
  for (size_t i = 0; r && i < evr_trec_count(t); i++) {
    struct evr_trec_query q;
    evr_trec_query(t, i, &q);
    evr_trec_rank(t, i, r, i % 3 ? 0 : 5, &out, &err);
  }
  evr_ranker_free(r);
}

/* Runs both jobs one after the other: the two halves without threads. */
static void one_then_other(void (*job)(void *), void *args[2]) {
  job(args[0]);
  job(args[1]);
}

/* The run evaluated against the qrels: streamed when it can be. */
static void evaluate(const char *qpath, const char *rpath, int depth) {
  struct evr_measures ms;
  struct evr_error err;
  struct evr_trec_report rep;
  struct evr_trec_opts o = {1.0, (size_t)depth, depth > 0, 1, depth == 3, (size_t)depth * 3, NULL, depth == 2};
  evr_measures_init(&ms);
  memset(&rep, 0, sizeof rep);
  struct evr_trec *t = evr_trec_new();
  if (t && !evr_measures_add(&ms, "map", &err) && !evr_measures_add(&ms, "ndcg_cut.5", &err)) {
    evr_trec_set_parallel(t, one_then_other);
    if (!evr_trec_read_qrels(t, qpath, &err)) evr_trec_evaluate_run(t, rpath, ms.cols, ms.n, &o, &rep, &err);
  }
  evr_trec_report_free(&rep);
  evr_trec_free(t);
  evr_measures_free(&ms);
}

/* QRELS as prefs, qrels_prefs and qrels_jg, each with the measures of all
 * three (those of another format give NaN); files that can be read again. */
static void evaluate_rel(const char *qpath, const char *rpath, int depth) {
  static const char *const names[] = {"prefs_pair",       "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret",
                                      "prefs_simp_imp",   "map_avgjg",           "P_avgjg",
                                      "Rprec_mult_avgjg"};
  struct evr_trec_opts o = {(double)(depth % 3), (size_t)depth, depth > 1, 0, depth == 3, 0, NULL};
  for (int f = EVR_REL_PREFS; f <= EVR_REL_QRELS_JG; f++) {
    struct evr_measures ms;
    struct evr_error err;
    struct evr_trec_report rep;
    evr_measures_init(&ms);
    memset(&rep, 0, sizeof rep);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      evr_measures_add_trec(&ms, evr_trec_find(names[i], strlen(names[i])), NULL, &err);
    struct evr_rel *rel = evr_rel_read(qpath, (enum evr_rel_format)f, &err);
    struct evr_trec *t = rel ? evr_trec_new() : NULL;
    if (t) evr_rel_evaluate_run(rel, t, rpath, ms.cols, ms.n, &o, &rep, &err);
    evr_trec_report_free(&rep);
    evr_trec_free(t);
    evr_rel_free(rel);
    evr_measures_free(&ms);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int piped = size && (data[0] & 1);
  const uint8_t *sep = memchr(data, 0, size);
  size_t nq = sep ? (size_t)(sep - data) : size;
  const uint8_t *run = sep ? sep + 1 : data + size;
  size_t nr = (size_t)(data + size - run);
  char qpath[64], rpath[64];
  int qfd = open_data(data, nq, piped, qpath), rfd = open_data(run, nr, piped, rpath);
  if (qfd >= 0 && rfd >= 0) evaluate(qpath, rpath, size > 1 ? data[1] % 4 : 0);
  if (!piped && qfd >= 0 && rfd >= 0) evaluate_rel(qpath, rpath, size > 1 ? data[1] % 4 : 0);
  struct evr_trec *t = piped ? NULL : evr_trec_new();
  struct evr_error err;
  if (t && qfd >= 0 && rfd >= 0 && !evr_trec_read_qrels(t, qpath, &err) && !evr_trec_read_run(t, rpath, &err))
    rank_all(t);
  evr_trec_free(t);
  if (qfd >= 0) close(qfd);
  if (rfd >= 0) close(rfd);
  return 0;
}
