/* TREC qrels and run files (trec.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evalua/idtab.h"
#include "evalua/trec.h"

struct file {
  const char *path;
  char *data;
  size_t size;
  int mapped;
};

struct query {
  const char *qid;
  uint32_t len;
  size_t j_start, j_count, r_start, r_count;
};

struct evr_trec {
  struct file qrels, run;
  struct evr_idtab qids;
  struct query *queries;
  size_t n_queries, cap_queries;
  uint32_t *order; /* query indices in qid byte order */
  struct evr_trec_judgment *judged;
  size_t n_judged, cap_judged;
  struct evr_trec_result *results;
  size_t n_results, cap_results;
  const char *runid;
  size_t runid_len;
};

struct evr_trec *evr_trec_new(void) {
  struct evr_trec *t = calloc(1, sizeof *t);
  if (t) evr_idtab_init(&t->qids);
  return t;
}

static void close_file(struct file *f) {
  if (f->mapped) munmap(f->data, f->size);
  else free(f->data);
}

void evr_trec_free(struct evr_trec *t) {
  if (!t) return;
  close_file(&t->qrels), close_file(&t->run);
  evr_idtab_free(&t->qids);
  free(t->queries), free(t->order), free(t->judged), free(t->results);
  free(t);
}

/* ---- files --------------------------------------------------------------- */

static int read_all(int fd, struct file *f) {
  size_t cap = 1 << 16;
  f->data = malloc(cap);
  for (;;) {
    if (!f->data) return -1;
    ssize_t n = read(fd, f->data + f->size, cap - f->size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    f->size += (size_t)n;
    if (f->size == cap) {
      char *p = realloc(f->data, cap *= 2);
      if (!p) free(f->data);
      f->data = p;
    }
  }
}

/* Maps a regular file; reads anything else (a pipe, standard input). */
static int open_file(const char *path, struct file *f, struct evr_error *err) {
  f->path = path;
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    evr_error_set(err, "%s: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  int r = 0;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    f->size = (size_t)st.st_size;
    f->data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    f->mapped = f->data != MAP_FAILED;
    if (!f->mapped) f->data = NULL, f->size = 0, r = read_all(fd, f);
    else madvise(f->data, f->size, MADV_WILLNEED);
  } else if (!S_ISDIR(st.st_mode)) {
    r = read_all(fd, f);
  } else {
    errno = EISDIR, r = -1;
  }
  if (r) evr_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
  if (fd > 0) close(fd);
  return r;
}

/* ---- lines and fields ------------------------------------------------------ */

static const unsigned char blank[256] = {[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

#define MAX_FIELDS 7 /* a run line's six, plus one to see that more follow */

struct line {
  const char *f[MAX_FIELDS];
  size_t len[MAX_FIELDS];
  int n;
};

/* Splits [p, end) into at most MAX_FIELDS fields. */
static void split_line(const char *p, const char *end, struct line *l) {
  l->n = 0;
  while (l->n < MAX_FIELDS) {
    while (p < end && blank[(unsigned char)*p]) p++;
    if (p == end) return;
    const char *s = p;
    while (p < end && !blank[(unsigned char)*p]) p++;
    l->f[l->n] = s;
    l->len[l->n++] = (size_t)(p - s);
  }
}

static const char *line_end(const char *p, const char *end) {
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  return nl ? nl : end;
}

/* The numbers of the first two lines of f whose first field is qid and
 * third is doc (for naming both copies of a repeated document). */
static void find_pair(const struct file *f, const char *qid, size_t qlen, const char *doc, size_t dlen,
                      size_t lines[2]) {
  const char *p = f->data, *end = f->data + f->size;
  size_t no = 0, found = 0;
  lines[0] = lines[1] = 0;
  while (p < end && found < 2) {
    const char *eol = line_end(p, end);
    struct line l;
    no++;
    split_line(p, eol, &l);
    if (l.n >= 3 && l.len[0] == qlen && l.len[2] == dlen && !memcmp(l.f[0], qid, qlen) &&
        !memcmp(l.f[2], doc, dlen))
      lines[found++] = no;
    p = eol + 1;
  }
}

/* ---- numbers --------------------------------------------------------------- */

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* Decimal text to double, rounded exactly as strtod rounds. Plain decimals
 * of up to 15 digits take the fast path: the digits form an integer below
 * 2^53 and one correctly rounded division by an exact power of ten gives
 * the nearest double. Anything else goes to strtod. */
static int parse_score(const char *s, size_t len, double *out) {
  const char *p = s, *end = s + len;
  int neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) p++;
  uint64_t m = 0;
  int digits = 0, frac = -1;
  for (; p < end; p++) {
    if (*p >= '0' && *p <= '9') m = m * 10 + (uint64_t)(*p - '0'), digits++;
    else if (*p == '.' && frac < 0) frac = digits;
    else break;
  }
  if (p == end && digits && digits <= 15) {
    double v = (double)m;
    if (frac >= 0) v /= pow10_exact[digits - frac];
    *out = neg ? -v : v;
    return 0;
  }
  char buf[128];
  if (len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *stop;
  *out = strtod(buf, &stop);
  return stop == buf + len && len ? 0 : -1;
}

static int parse_grade(const char *s, size_t len, int32_t *out) {
  const char *p = s, *end = s + len;
  int neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) p++;
  if (p == end || end - p > 9) return -1;
  int32_t v = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
  }
  *out = neg ? -v : v;
  return 0;
}

/* ---- reading ------------------------------------------------------------------ */

static int grow(void *p, size_t *cap, size_t n, size_t sz) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < n) c *= 2;
  void *q = realloc(*(void **)p, c * sz);
  if (!q) return -1;
  *(void **)p = q;
  *cap = c;
  return 0;
}

/* The index of query qid, added when new; -1 when out of memory. */
static long intern(struct evr_trec *t, const char *qid, size_t len) {
  int found;
  uint32_t *v = evr_idtab_put(&t->qids, qid, len, (uint32_t)t->n_queries, &found);
  if (!v) return -1;
  if (found) return *v;
  if (grow(&t->queries, &t->cap_queries, t->n_queries + 1, sizeof *t->queries)) return -1;
  t->queries[t->n_queries] = (struct query){qid, (uint32_t)len, 0, 0, 0, 0};
  return (long)t->n_queries++;
}

static int oom(struct evr_error *err, const struct file *f) {
  evr_error_set(err, "%s: out of memory", f->path);
  return -1;
}

static int bad_line(struct evr_error *err, const struct file *f, size_t no, const char *what,
                    const char *field, size_t len) {
  evr_error_set(err, "%s:%zu: %s '%.*s'", f->path, no, what, (int)(len > 80 ? 80 : len), field);
  return -1;
}

/* Calls line_fn for each line that is neither blank nor a comment. The
 * previous line's query is remembered, since lines usually come grouped. */
struct reader {
  struct evr_trec *t;
  const struct file *f;
  size_t no;
  const char *last_qid;
  size_t last_len;
  long last_q;
};

static long query_of(struct reader *rd, const char *qid, size_t len) {
  if (rd->last_qid && len == rd->last_len && !memcmp(qid, rd->last_qid, len)) return rd->last_q;
  long q = intern(rd->t, qid, len);
  rd->last_qid = qid, rd->last_len = len, rd->last_q = q;
  return q;
}

static int qrels_line(struct reader *rd, const struct line *l, struct evr_error *err) {
  struct evr_trec *t = rd->t;
  if (l->n != 4) {
    evr_error_set(err, "%s:%zu: expected 4 fields (QID ITER DOCNO REL), found %s%d", rd->f->path, rd->no,
                  l->n > 4 ? "more than " : "", l->n > 4 ? 4 : l->n);
    return -1;
  }
  int32_t grade;
  if (parse_grade(l->f[3], l->len[3], &grade))
    return bad_line(err, rd->f, rd->no, "relevance is not an integer:", l->f[3], l->len[3]);
  long q = query_of(rd, l->f[0], l->len[0]);
  if (q < 0 || grow(&t->judged, &t->cap_judged, t->n_judged + 1, sizeof *t->judged)) return oom(err, rd->f);
  t->judged[t->n_judged++] = (struct evr_trec_judgment){l->f[2], (uint32_t)l->len[2], grade, (uint32_t)q, 0};
  return 0;
}

static int run_line(struct reader *rd, const struct line *l, struct evr_error *err) {
  struct evr_trec *t = rd->t;
  if (l->n < 6) {
    evr_error_set(err, "%s:%zu: expected 6 fields (QID Q0 DOCNO RANK SCORE RUNID), found %d", rd->f->path,
                  rd->no, l->n);
    return -1;
  }
  double score;
  if (parse_score(l->f[4], l->len[4], &score))
    return bad_line(err, rd->f, rd->no, "score is not a number:", l->f[4], l->len[4]);
  if (isnan(score)) return bad_line(err, rd->f, rd->no, "score is not a number:", l->f[4], l->len[4]);
  long q = query_of(rd, l->f[0], l->len[0]);
  if (q < 0 || grow(&t->results, &t->cap_results, t->n_results + 1, sizeof *t->results)) return oom(err, rd->f);
  t->results[t->n_results++] = (struct evr_trec_result){l->f[2], score, (uint32_t)l->len[2], (uint32_t)q};
  t->runid = l->f[5], t->runid_len = l->len[5];
  return 0;
}

static int each_line(struct reader *rd, int (*fn)(struct reader *, const struct line *, struct evr_error *),
                     struct evr_error *err) {
  const char *p = rd->f->data, *end = p + rd->f->size;
  while (p < end) {
    const char *eol = line_end(p, end);
    struct line l;
    rd->no++;
    split_line(p, eol, &l);
    if (l.n > 0 && l.f[0][0] != '#' && fn(rd, &l, err)) return -1;
    p = eol + 1;
  }
  return 0;
}

/* ---- grouping by query ---------------------------------------------------- */

static uint32_t key_at(const char *rec, size_t q_off) {
  uint32_t q;
  memcpy(&q, rec + q_off, sizeof q);
  return q;
}

/* Moves n records of size bytes into one block per query, in place (a
 * counting sort that follows permutation cycles, so a large run needs no
 * second copy). The query index is a uint32_t at q_off; start[q] and
 * count[q] (nq each) receive the blocks. */
static int group(void *recs, size_t n, size_t size, size_t q_off, size_t nq, size_t *start, size_t *count) {
  char *a = recs, x[64], y[64];
  size_t *next = malloc((nq + 1) * sizeof *next);
  if (!next || size > sizeof x) return free(next), -1;
  memset(count, 0, nq * sizeof *count);
  for (size_t i = 0; i < n; i++) count[key_at(a + i * size, q_off)]++;
  for (size_t q = 0, at = 0; q < nq; at += count[q++]) start[q] = next[q] = at;
  for (size_t q = 0; q < nq; q++) {
    for (size_t end = start[q] + count[q]; next[q] < end; next[q]++) {
      memcpy(x, a + next[q] * size, size);
      for (uint32_t k; (k = key_at(x, q_off)) != q; next[k]++) {
        memcpy(y, a + next[k] * size, size);
        memcpy(a + next[k] * size, x, size);
        memcpy(x, y, size);
      }
      memcpy(a + next[q] * size, x, size);
    }
  }
  free(next);
  return 0;
}

struct qkey {
  const char *qid;
  uint32_t len, index;
};

static int by_qid(const void *a, const void *b) {
  const struct qkey *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->qid, y->qid, n) : 0;
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Groups the records just read and orders the queries by id. */
static int index_queries(struct evr_trec *t, int run) {
  size_t nq = t->n_queries;
  size_t *start = malloc((nq + 1) * sizeof *start), *count = malloc((nq + 1) * sizeof *count);
  struct qkey *keys = malloc((nq + 1) * sizeof *keys);
  uint32_t *order = malloc((nq + 1) * sizeof *order);
  int r = !start || !count || !keys || !order ? -1
        : run ? group(t->results, t->n_results, sizeof *t->results, offsetof(struct evr_trec_result, q), nq, start, count)
              : group(t->judged, t->n_judged, sizeof *t->judged, offsetof(struct evr_trec_judgment, q), nq, start, count);
  for (size_t q = 0; !r && q < nq; q++) {
    struct query *e = &t->queries[q];
    if (run) e->r_start = start[q], e->r_count = count[q];
    else e->j_start = start[q], e->j_count = count[q];
    keys[q] = (struct qkey){e->qid, e->len, (uint32_t)q};
  }
  if (!r) {
    qsort(keys, nq, sizeof *keys, by_qid);
    for (size_t q = 0; q < nq; q++) order[q] = keys[q].index;
    free(t->order);
    t->order = order, order = NULL;
  }
  free(start), free(count), free(keys), free(order);
  return r;
}

int evr_trec_read_qrels(struct evr_trec *t, const char *path, struct evr_error *err) {
  if (t->qrels.path) return evr_error_set(err, "%s: a qrels file was already read", path), -1;
  struct reader rd = {t, &t->qrels, 0, NULL, 0, 0};
  if (open_file(path, &t->qrels, err) || each_line(&rd, qrels_line, err)) return -1;
  return index_queries(t, 0) ? oom(err, &t->qrels) : 0;
}

int evr_trec_read_run(struct evr_trec *t, const char *path, struct evr_error *err) {
  if (t->run.path) return evr_error_set(err, "%s: a run file was already read", path), -1;
  struct reader rd = {t, &t->run, 0, NULL, 0, 0};
  if (open_file(path, &t->run, err) || each_line(&rd, run_line, err)) return -1;
  return index_queries(t, 1) ? oom(err, &t->run) : 0;
}

/* ---- queries ------------------------------------------------------------------ */

size_t evr_trec_count(const struct evr_trec *t) { return t->order ? t->n_queries : 0; }

void evr_trec_query(const struct evr_trec *t, size_t i, struct evr_trec_query *out) {
  const struct query *q = &t->queries[t->order[i]];
  *out = (struct evr_trec_query){q->qid, q->len, t->judged + q->j_start, q->j_count,
                                 t->results + q->r_start, q->r_count, q->j_count > 0, q->r_count > 0};
}

const char *evr_trec_runid(const struct evr_trec *t, size_t *len) {
  *len = t->runid ? t->runid_len : 0;
  return t->runid ? t->runid : "";
}

static int twice(struct evr_error *err, const struct file *f, const struct evr_trec_query *q, const char *doc,
                 size_t len, const char *how) {
  size_t lines[2];
  find_pair(f, q->qid, q->qid_len, doc, len, lines);
  evr_error_set(err, "%s:%zu: document '%.*s' %s for query '%.*s' (first at line %zu)", f->path, lines[1],
                (int)(len > 80 ? 80 : len), doc, how, (int)(q->qid_len > 80 ? 80 : q->qid_len), q->qid, lines[0]);
  return -1;
}

int evr_trec_rank(const struct evr_trec *t, size_t i, struct evr_ranker *r, size_t depth,
                  struct evr_ranking *out, struct evr_error *err) {
  struct evr_trec_query q;
  evr_trec_query(t, i, &q);
  evr_ranker_reset(r);
  for (size_t j = 0; j < q.n_judged; j++) {
    const struct evr_trec_judgment *d = &q.judged[j];
    int dup = evr_ranker_judge(r, d->doc, d->len, (double)d->grade);
    if (dup < 0) return evr_error_set(err, "out of memory"), -1;
    if (dup) return twice(err, &t->qrels, &q, d->doc, d->len, "is judged twice");
  }
  for (size_t j = 0; j < q.n_results; j++)
    if (evr_ranker_add(r, q.results[j].doc, q.results[j].len, q.results[j].score))
      return evr_error_set(err, "out of memory"), -1;
  if (evr_ranker_finish(r, 1, depth, out)) return evr_error_set(err, "out of memory"), -1;
  size_t len;
  const char *dup = evr_ranker_repeat(r, &len);
  if (dup) return twice(err, &t->run, &q, dup, len, "is retrieved twice");
  return 0;
}
