/* libFuzzer target: the TREC qrels and run readers (metrics/trec.c) and the
 * ranking of every query they produce. Input: QRELS '\0' RUN; the first
 * byte's low bit picks a pipe (read whole) or a memfd (mapped) for both. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evalua/ranking.h"
#include "evalua/trec.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int piped = size && (data[0] & 1);
  const uint8_t *sep = memchr(data, 0, size);
  size_t nq = sep ? (size_t)(sep - data) : size;
  const uint8_t *run = sep ? sep + 1 : data + size;
  size_t nr = (size_t)(data + size - run);
  char qpath[64], rpath[64];
  int qfd = open_data(data, nq, piped, qpath), rfd = open_data(run, nr, piped, rpath);
  struct evr_trec *t = evr_trec_new();
  struct evr_error err;
  if (t && qfd >= 0 && rfd >= 0 && !evr_trec_read_qrels(t, qpath, &err) && !evr_trec_read_run(t, rpath, &err))
    rank_all(t);
  evr_trec_free(t);
  if (qfd >= 0) close(qfd);
  if (rfd >= 0) close(rfd);
  return 0;
}
