/* TREC qrels and run files (trec.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evalua/idtab.h"
#include "evalua/trec.h"

/* Mapping a file with all its pages at once costs one call instead of a
 * page fault per 4 KB (Linux). */
#ifdef MAP_POPULATE
#define MAP_POPULATE_IF_ANY MAP_POPULATE
#else
#define MAP_POPULATE_IF_ANY 0
#endif

struct file {
  const char *path;
  char *data;
  size_t size;
  int mapped;
  char *tail; /* a copy of a last line that lacks its newline, with one */
};

struct query {
  const char *qid;
  uint32_t len;
  size_t j_start, j_count, r_start, r_count;
};

struct evr_trec {
  struct file qrels, run;
  struct evr_idtab qids; /* emptied while a run is streamed (see drop_ids) */
  int ids_dropped;
  struct query *queries;
  size_t n_queries, cap_queries;
  uint32_t *order; /* query indices in qid byte order */
  struct evr_trec_judgment *judged;
  size_t n_judged, cap_judged, judged_bytes; /* a mapping of its own, as results */
  struct evr_trec_result *results; /* a mapping of its own (see map_results) */
  size_t n_results, cap_results, results_bytes;
  size_t gap_lo, gap_hi;           /* results[gap_lo, gap_hi) hold nothing */
  int results_borrowed;            /* another evr_trec's (a half being read) */
  int results_grow;                /* malloc'ed and grown as needed (a streamed query) */
  const char *runid;
  size_t runid_len;
  evr_parallel_fn parallel;
  struct chunk *ids; /* copies of the query ids, compact for fast lookups */
  int qrels_width;   /* 4 (trec_eval's QID ITER DOCNO REL) or 3 (QID DOCNO REL, BEIR's TSV); 0 before a line */
};

struct chunk {
  struct chunk *next;
  size_t cap, used;
  char data[];
};

struct evr_trec *evr_trec_new(void) {
  struct evr_trec *t = calloc(1, sizeof *t);
  if (t) evr_idtab_init(&t->qids);
  return t;
}

void evr_trec_set_parallel(struct evr_trec *t, evr_parallel_fn fn) { t->parallel = fn; }

evr_parallel_fn evr_trec_parallel(const struct evr_trec *t) { return t->parallel; }

static void close_file(struct file *f) {
  if (f->mapped) munmap(f->data, f->size);
  else free(f->data);
  free(f->tail);
}

void evr_trec_free(struct evr_trec *t) {
  if (!t) return;
  close_file(&t->qrels), close_file(&t->run);
  evr_idtab_free(&t->qids);
  if (t->results_grow) free(t->results);
  else if (t->results && !t->results_borrowed) munmap(t->results, t->results_bytes);
  if (t->judged) munmap(t->judged, t->judged_bytes);
  free(t->queries), free(t->order);
  for (struct chunk *c = t->ids, *next; c; c = next) next = c->next, free(c);
  free(t);
}

/* ---- files --------------------------------------------------------------- */

/* TREC lines are short; a longer one means the input is not a TREC file
 * (/dev/zero, a binary), and reading on would only exhaust memory. */
#define MAX_LINE ((size_t)1 << 20)
#define LINE_TOO_LONG (-2)

/* The start of the last line of [p, end): just after its last newline. */
static size_t last_line_start(const char *p, size_t start, size_t end) {
  for (size_t i = end; i > start; i--)
    if (p[i - 1] == '\n') return i;
  return start;
}

/* 1 + the number of newlines before p[at]: the line number of byte at. */
static size_t line_number(const char *p, size_t at) {
  size_t no = 1;
  for (const char *q = p; (q = memchr(q, '\n', (size_t)(p + at - q))); q++) no++;
  return no;
}

static int too_long(const struct file *f, size_t line_start, struct evr_error *err) {
  evr_error_set(err, "%s:%zu: line longer than %zu bytes: not a TREC file", f->path,
                line_number(f->data, line_start), MAX_LINE);
  return -1;
}

/* Reads fd to its end (a pipe, a device), refusing a line over MAX_LINE. */
static int read_all(int fd, struct file *f) {
  size_t cap = 1 << 16, line = 0;
  f->data = malloc(cap);
  for (;;) {
    if (!f->data) return -1;
    ssize_t n = read(fd, f->data + f->size, cap - f->size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    line = last_line_start(f->data, f->size > line ? line : f->size, f->size + (size_t)n);
    f->size += (size_t)n;
    if (f->size - line > MAX_LINE) return LINE_TOO_LONG;
    if (f->size == cap) {
      char *p = realloc(f->data, cap *= 2);
      if (!p) free(f->data);
      f->data = p;
    }
  }
}

/* Maps the regular file open at fd (with all its pages at once when
 * populate); reads anything else (a pipe, standard input). path names it
 * in messages. The caller closes fd. */
static int open_fd(int fd, const char *path, struct file *f, int populate, struct evr_error *err) {
  f->path = path;
  struct stat st;
  if (fstat(fd, &st)) {
    evr_error_set(err, "%s: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  int r = 0;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    f->size = (size_t)st.st_size;
    f->data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE_IF_ANY : 0), fd, 0);
    f->mapped = f->data != MAP_FAILED;
    if (!f->mapped) f->data = NULL, f->size = 0, r = read_all(fd, f);
  } else if (!S_ISDIR(st.st_mode)) {
    r = read_all(fd, f);
  } else {
    errno = EISDIR, r = -1;
  }
  if (r == LINE_TOO_LONG) too_long(f, last_line_start(f->data, 0, f->size), err);
  else if (r) evr_error_set(err, "%s: cannot read (%s)", path, strerror(errno));
  return r ? -1 : 0;
}

/* The file at path ("-": standard input), as open_fd. */
static int open_file(const char *path, struct file *f, int populate, struct evr_error *err) {
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  if (fd < 0) {
    f->path = path;
    evr_error_set(err, "%s: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  int r = open_fd(fd, path, f, populate, err);
  if (fd > 0) close(fd);
  return r;
}

/* Pages of a mapped file that has been read past are handed back in steps
 * of this size: touched again, they are read again from the file, so that
 * memory holds what is in use rather than the whole file. */
#define HAND_BACK_STEP ((size_t)4 << 20)

/* The first page boundary of f's mapping at or after p. */
static const char *page_up(const struct file *f, const char *p) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), off = (size_t)(p - f->data);
  return f->data + (off + page - 1) / page * page;
}

/* Hands back the pages of f from *from to the page of p once they make a
 * step; 1 when it did. */
static int hand_back(const struct file *f, const char **from, const char *p) {
  if (!f->mapped || p < f->data || p >= f->data + f->size) return 0; /* a copied last line */
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const char *upto = f->data + (size_t)(p - f->data) / page * page;
  if (upto <= *from || (size_t)(upto - *from) < HAND_BACK_STEP) return 0;
  madvise((void *)*from, (size_t)(upto - *from), MADV_DONTNEED);
  *from = upto;
  return 1;
}

/* Hands back all of f's pages. */
static void hand_back_all(const struct file *f) {
  if (f->mapped) madvise(f->data, f->size, MADV_DONTNEED);
}

/* ---- lines and fields ------------------------------------------------------ */

/* Byte classes: 1 separates fields, 2 ends a line, 0 is part of a field. */
static const unsigned char cls[256] = {[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1, ['\n'] = 2};

#define MAX_FIELDS 6

struct line {
  const char *f[MAX_FIELDS];
  size_t len[MAX_FIELDS];
  int n;
  int more;          /* a field follows the last one split */
  const char *rest;  /* where it starts */
};

/* The end of the field at p, 8 bytes at a time while they lie before
 * stop: the first byte below 0x21 is found with word arithmetic (exact for
 * the lowest such byte on a little-endian machine), then checked, since
 * other control bytes belong to fields. */
static inline const char *field_end(const char *p, const char *stop) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (stop - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t low = (w - ones * 0x21) & ~w & highs;
    if (!low) {
      p += 8;
      continue;
    }
    unsigned k = (unsigned)__builtin_ctzll(low) / 8;
    unsigned b = (unsigned)(w >> (8 * k)) & 0xff; /* the byte itself, not loaded again */
    p += k;
    if (b == ' ' || b - '\t' <= '\r' - '\t') return p; /* a separator or the newline */
    p++;
  }
#else
  (void)stop;
#endif
  while (!cls[(unsigned char)*p]) p++;
  return p;
}

/* Splits the line at p, which ends with a newline before stop, into at most
 * max fields without splitting past them; returns the start of the next line. */
static const char *split_line(const char *p, const char *stop, struct line *l, int max) {
  l->n = l->more = 0;
  for (;;) {
    while (cls[(unsigned char)*p] == 1) p++;
    if (*p == '\n') return p + 1;
    if (l->n == max) {
      l->more = 1, l->rest = p;
      while (*p != '\n') p++;
      return p + 1;
    }
    const char *s = p;
    p = field_end(p, stop);
    l->f[l->n] = s;
    l->len[l->n++] = (size_t)(p - s);
  }
}

static size_t field_len(const char *p) {
  const char *s = p;
  while (!cls[(unsigned char)*p]) p++;
  return (size_t)(p - s);
}

size_t evr_trec_doc_len(const struct evr_trec_judgment *j) { return field_len(j->doc); }

typedef int (*line_fn)(void *ctx, size_t no, const struct line *l, struct evr_error *err);

/* Gives the lines of [p, stop), each ending with a newline, to fn; *no is
 * the number of the line before p, and then of the last line given. */
static int lines_in(const char *p, const char *stop, size_t *no, int max, void *ctx, line_fn fn,
                    struct evr_error *err) {
  while (p < stop) {
    struct line l;
    p = split_line(p, stop, &l, max);
    ++*no;
    if (l.n > 0 && l.f[0][0] != '#' && fn(ctx, *no, &l, err)) return -1;
  }
  return 0;
}

/* Where f's complete lines end; a last line without a newline is copied,
 * with one, to f->tail. */
static const char *complete_lines(struct file *f, struct evr_error *err) {
  const char *end = f->data + f->size, *stop = end;
  while (stop > f->data && stop[-1] != '\n') stop--;
  if (stop < end && !f->tail) {
    size_t n = (size_t)(end - stop);
    if (n > MAX_LINE) return too_long(f, (size_t)(stop - f->data), err), NULL;
    if (!(f->tail = malloc(n + 1))) return evr_error_set(err, "%s: out of memory", f->path), NULL;
    memcpy(f->tail, stop, n);
    f->tail[n] = '\n';
  }
  return stop;
}

static size_t tail_len(const struct file *f, const char *stop) {
  return f->tail ? (size_t)(f->data + f->size - stop) + 1 : 0;
}

/* Gives all of f's lines to fn. */
static int each_line(const struct file *cf, int max, void *ctx, line_fn fn, struct evr_error *err) {
  struct file *f = (struct file *)cf;
  size_t no = 0;
  if (!f->size) return 0;
  const char *stop = complete_lines(f, err);
  if (!stop) return -1;
  if (lines_in(f->data, stop, &no, max, ctx, fn, err)) return -1;
  return f->tail ? lines_in(f->tail, f->tail + tail_len(f, stop), &no, max, ctx, fn, err) : 0;
}

/* The numbers of the first two lines of f whose first field is qid and
 * third is doc (for naming both copies of a repeated document). */
struct pair_search {
  const char *qid, *doc;
  size_t qlen, dlen, found, lines[2];
  int doc_field; /* 2, or 1 in a three-column qrels file */
};

static int match_pair(void *ctx, size_t no, const struct line *l, struct evr_error *err) {
  struct pair_search *ps = ctx;
  (void)err;
  int d = ps->doc_field;
  if (ps->found < 2 && l->n >= 3 && l->len[0] == ps->qlen && l->len[d] == ps->dlen &&
      !memcmp(l->f[0], ps->qid, ps->qlen) && !memcmp(l->f[d], ps->doc, ps->dlen))
    ps->lines[ps->found++] = no;
  return 0;
}

static void find_pair(const struct file *f, const char *qid, size_t qlen, const char *doc, size_t dlen,
                      size_t lines[2], int doc_field) {
  struct pair_search ps = {qid, doc, qlen, dlen, 0, {0, 0}, doc_field};
  struct evr_error err;
  each_line(f, 3, &ps, match_pair, &err);
  lines[0] = ps.lines[0], lines[1] = ps.lines[1];
}

/* ---- numbers --------------------------------------------------------------- */

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* Decimal text to double, rounded exactly as strtod rounds. Plain decimals
 * of up to 15 digits take the fast path: the digits form an integer below
 * 2^53 and one correctly rounded division by an exact power of ten gives
 * the nearest double. Anything else goes to strtod. */
static int parse_score_slow(const char *s, size_t len, double *out) {
  char buf[128];
  if (!len || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *stop;
  *out = strtod(buf, &stop);
  return stop == buf + len ? 0 : -1;
}

static inline int parse_score(const char *s, size_t len, double *out) {
  const char *p = s, *end = s + len;
  int neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) p++;
  uint64_t m = 0;
  int digits = 0, frac = -1;
  for (; p < end; p++) {
    unsigned d = (unsigned)(unsigned char)*p - '0';
    if (d <= 9) m = m * 10 + d, digits++;
    else if (*p == '.' && frac < 0) frac = digits;
    else break;
  }
  if (p != end || !digits || digits > 15) return parse_score_slow(s, len, out);
  double v = (double)m;
  if (frac >= 0) v /= pow10_exact[digits - frac];
  *out = neg ? -v : v;
  return 0;
}

/* An integer grade; "2.0" is read as 2, as trec_eval reads it, but "0.5"
 * is refused where trec_eval would silently take 0. */
static int parse_grade(const char *s, size_t len, int32_t *out) {
  const char *p = s, *end = s + len;
  int neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) p++;
  const char *digits = p;
  int32_t v = 0;
  for (; p < end && *p >= '0' && *p <= '9' && p - digits < 9; p++) v = v * 10 + (*p - '0');
  if (p == digits) return -1;
  if (p < end && *p == '.')
    for (p++; p < end && *p == '0'; p++) {}
  if (p != end) return -1;
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

/* Room for n records of sz bytes, mapped so that the pages never written
 * cost no memory; NULL when there is no room. */
static void *map_records(size_t n, size_t sz, size_t *bytes) {
  *bytes = n * sz;
  void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Room for the records of every line of a run of size bytes: a line has at
 * least 12 (six one-byte fields, five separators, a newline). */
static int map_results(struct evr_trec *t, size_t size) {
  t->cap_results = size / 12 + 4;
  t->results = map_records(t->cap_results, sizeof *t->results, &t->results_bytes);
  return t->results ? 0 : -1;
}

/* The same for qrels, whose lines have at least 8 bytes. */
static int map_judged(struct evr_trec *t, size_t size) {
  t->cap_judged = size / 8 + 4;
  t->judged = map_records(t->cap_judged, sizeof *t->judged, &t->judged_bytes);
  return t->judged ? 0 : -1;
}

/* The index of query qid, added when new; -1 when out of memory. */
/* A copy of id that lives as long as t; NULL when out of memory. */
static const char *keep_id(struct evr_trec *t, const char *id, size_t len) {
  struct chunk *c = t->ids;
  if (!c || c->cap - c->used < len) {
    size_t cap = len > 65536 ? len : 65536;
    if (!(c = malloc(sizeof *c + cap))) return NULL;
    c->next = t->ids, c->cap = cap, c->used = 0;
    t->ids = c;
  }
  char *dst = c->data + c->used;
  memcpy(dst, id, len);
  c->used += len;
  return dst;
}

/* Once the qrels are read, the hash table of their query ids is given
 * back (64 MB a million queries) before they are indexed: a streamed run
 * finds its queries by bisection (find_query), which needs no memory of
 * its own, and intern fills the table again when a run is read whole. */
static void drop_ids(struct evr_trec *t) {
  evr_idtab_free(&t->qids);
  evr_idtab_init(&t->qids);
  t->ids_dropped = 1;
}

/* Fills the table of query ids again after drop_ids. */
static int rebuild_ids(struct evr_trec *t) {
  int found;
  if (evr_idtab_reserve(&t->qids, t->n_queries)) return -1;
  for (size_t q = 0; q < t->n_queries; q++)
    if (!evr_idtab_put(&t->qids, t->queries[q].qid, t->queries[q].len, (uint32_t)q, &found)) return -1;
  t->ids_dropped = 0;
  return 0;
}

static long intern(struct evr_trec *t, const char *qid, size_t len) {
  if (t->ids_dropped && rebuild_ids(t)) return -1;
  uint32_t *v = evr_idtab_get(&t->qids, qid, len);
  if (v) return *v;
  int found;
  if (!(qid = keep_id(t, qid, len)) || !(v = evr_idtab_put(&t->qids, qid, len, (uint32_t)t->n_queries, &found)))
    return -1;
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

/* Lines usually come grouped by query, so the previous line's query is
 * remembered and compared before the table is asked. */
struct reader {
  struct evr_trec *t;
  const struct file *f;
  const char *last_qid;
  size_t last_len;
  long last_q;
  struct stream *st;   /* when the run is streamed: where each query's lines go */
  const char *dropped; /* pages of f before this were handed back */
};

/* Room for one more result; a streamed query's records grow as needed. */
static inline int room(struct evr_trec *t) {
  if (t->n_results < t->cap_results) return 1;
  return t->results_grow && !grow(&t->results, &t->cap_results, t->n_results + 1, sizeof *t->results);
}

static long stream_next(struct reader *rd, const char *qid, size_t len);

static inline int same(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static long query_of(struct reader *rd, const char *qid, size_t len) {
  if (rd->last_qid && len == rd->last_len && same(qid, rd->last_qid, len)) return rd->last_q;
  long q = rd->st ? stream_next(rd, qid, len) : intern(rd->t, qid, len);
  if (q >= 0) rd->last_qid = qid, rd->last_len = len, rd->last_q = q;
  return q;
}

/* The first line decides the columns: trec_eval's four, or three (QID
 * DOCNO REL) as BEIR writes its qrels/SPLIT.tsv, whose first line may be
 * its header "query-id corpus-id score" (a third field that is not a
 * number), read past. 1 when line l is that header. */
static int qrels_columns(struct evr_trec *t, const struct line *l) {
  double v;
  if (t->qrels_width) return 0;
  t->qrels_width = l->n == 3 && !l->more ? 3 : 4;
  return t->qrels_width == 3 && parse_score(l->f[2], l->len[2], &v); /* "0.5" is a bad grade, not a header */
}

static int qrels_line(void *ctx, size_t no, const struct line *l, struct evr_error *err) {
  struct reader *rd = ctx;
  struct evr_trec *t = rd->t;
  if (qrels_columns(t, l)) return 0;
  int w = t->qrels_width, d = w == 3 ? 1 : 2;
  if (l->n != w || l->more) {
    if (w == 4)
      evr_error_set(err, "%s:%zu: expected 4 fields (QID ITER DOCNO REL), found %s%d", rd->f->path, no,
                    l->more ? "more than " : "", l->n);
    else
      evr_error_set(err, "%s:%zu: expected 3 fields (QID DOCNO REL) as the first line has, found %s%d", rd->f->path,
                    no, l->more ? "more than " : "", l->n);
    return -1;
  }
  int32_t grade;
  if (parse_grade(l->f[w - 1], l->len[w - 1], &grade))
    return bad_line(err, rd->f, no, "relevance is not an integer:", l->f[w - 1], l->len[w - 1]);
  long q = query_of(rd, l->f[0], l->len[0]);
  if (q < 0 || t->n_judged == t->cap_judged) return oom(err, rd->f);
  t->judged[t->n_judged++] = (struct evr_trec_judgment){l->f[d], grade, (uint32_t)q};
  hand_back(rd->f, &rd->dropped, l->f[0]);
  return 0;
}

/* Five fields are split; the sixth (RUNID) is only seen to exist, and
 * measured for the last line alone. */
static int run_line(void *ctx, size_t no, const struct line *l, struct evr_error *err) {
  struct reader *rd = ctx;
  struct evr_trec *t = rd->t;
  if (!l->more) {
    evr_error_set(err, "%s:%zu: expected 6 fields (QID Q0 DOCNO RANK SCORE RUNID), found %d", rd->f->path, no,
                  l->n);
    return -1;
  }
  double score;
  if (parse_score(l->f[4], l->len[4], &score) || isnan(score))
    return bad_line(err, rd->f, no, "score is not a number:", l->f[4], l->len[4]);
  long q = query_of(rd, l->f[0], l->len[0]);
  if (q < 0 || !room(t)) return oom(err, rd->f);
  t->results[t->n_results++] = (struct evr_trec_result){l->f[2], score, (uint32_t)l->len[2], (uint32_t)q};
  t->runid = l->rest;
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
/* Files usually come grouped: then the blocks are where they are. Records
 * in [lo, hi) are skipped. */
static int grouped(const char *a, size_t n, size_t lo, size_t hi, size_t size, size_t q_off, size_t nq,
                   size_t *start, size_t *count) {
  memset(start, 0, nq * sizeof *start);
  memset(count, 0, nq * sizeof *count);
  for (size_t i = 0, prev = (size_t)-1; i < n; prev = i++) {
    if (i == lo && hi > lo) i = hi, prev = (size_t)-1; /* what follows the gap is not adjacent */
    if (i >= n) break;
    uint32_t q = key_at(a + i * size, q_off);
    if (prev != (size_t)-1 && q == key_at(a + prev * size, q_off)) {
      count[q]++;
      continue;
    }
    if (count[q]) return 0;
    start[q] = i, count[q] = 1;
  }
  return 1;
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

/* Moves the second half's records down to the first's, a few MB at a time,
 * handing back each page moved from that nothing will be moved to, so that
 * memory stays at what the records need. */
static void close_gap(struct evr_trec *t) {
  const size_t chunk = (size_t)4 << 20, page = (size_t)sysconf(_SC_PAGESIZE);
  char *base = (char *)t->results;
  size_t dst = t->gap_lo * sizeof *t->results, src = t->gap_hi * sizeof *t->results;
  size_t n = (t->n_results - t->gap_hi) * sizeof *t->results, kept_end = dst + n;
  for (size_t off = 0; off < n; off += chunk) {
    size_t c = n - off < chunk ? n - off : chunk;
    memmove(base + dst + off, base + src + off, c);
    size_t lo = src + off > kept_end ? src + off : kept_end, hi = (src + off + c) / page * page;
    lo = (lo + page - 1) / page * page;
    if (hi > lo) madvise(base + lo, hi - lo, MADV_DONTNEED);
  }
  t->n_results -= t->gap_hi - t->gap_lo;
  t->gap_lo = t->gap_hi = 0;
}

/* The blocks of the run's records: where they lie when the run is grouped
 * by query; else after closing any gap and sorting in place. */
static int group_results(struct evr_trec *t, size_t nq, size_t *start, size_t *count) {
  const size_t sz = sizeof *t->results, off = offsetof(struct evr_trec_result, q);
  if (grouped((const char *)t->results, t->n_results, t->gap_lo, t->gap_hi, sz, off, nq, start, count)) return 0;
  if (t->gap_hi > t->gap_lo) close_gap(t);
  return group(t->results, t->n_results, sz, off, nq, start, count);
}

static int group_judged(struct evr_trec *t, size_t nq, size_t *start, size_t *count) {
  const size_t sz = sizeof *t->judged, off = offsetof(struct evr_trec_judgment, q);
  if (grouped((const char *)t->judged, t->n_judged, 0, 0, sz, off, nq, start, count)) return 0;
  return group(t->judged, t->n_judged, sz, off, nq, start, count);
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
        : run ? group_results(t, nq, start, count) : group_judged(t, nq, start, count);
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

static int read_qrels(struct evr_trec *t, struct evr_error *err);

int evr_trec_read_qrels(struct evr_trec *t, const char *path, struct evr_error *err) {
  if (t->qrels.path) return evr_error_set(err, "%s: a qrels file was already read", path), -1;
  return open_file(path, &t->qrels, 0, err) ? -1 : read_qrels(t, err);
}

int evr_trec_read_qrels_fd(struct evr_trec *t, int fd, const char *name, struct evr_error *err) {
  if (t->qrels.path) return evr_error_set(err, "%s: a qrels file was already read", name), -1;
  return open_fd(fd, name, &t->qrels, 0, err) ? -1 : read_qrels(t, err);
}

static int read_qrels(struct evr_trec *t, struct evr_error *err) {
  struct reader rd = {t, &t->qrels, NULL, 0, 0, NULL, t->qrels.data};
  if (t->qrels.mapped) madvise(t->qrels.data, t->qrels.size, MADV_SEQUENTIAL);
  if (map_judged(t, t->qrels.size)) return oom(err, &t->qrels);
  if (each_line(&t->qrels, 4, &rd, qrels_line, err)) return -1;
  hand_back_all(&t->qrels); /* read again query by query, as they are evaluated */
  if (t->qrels.mapped) madvise(t->qrels.data, t->qrels.size, MADV_NORMAL);
  drop_ids(t);
  return index_queries(t, 0) ? oom(err, &t->qrels) : 0;
}

/* One half of a run: its lines, and the data set its records go to (the
 * real one for the first half, a private one for the second). */
struct half {
  struct evr_trec *t;
  const char *p, *stop, *tail, *tail_end;
  size_t no;
  int failed;
  struct evr_error err;
  struct stream *st; /* NULL unless streamed */
};

static int stream_flush(struct reader *rd);

/* The field at p when it is followed by blanks and then more on the same
 * line: its length, with *next at what follows; 0 when the line is not that
 * regular (the caller then takes the general path). */
static inline size_t next_field(const char *p, const char *stop, const char **next) {
  const char *e = field_end(p, stop);
  const char *n = e;
  if (cls[(unsigned char)*n] != 1) return 0;
  while (cls[(unsigned char)*n] == 1) n++;
  if (*n == '\n') return 0;
  *next = n;
  return (size_t)(e - p);
}

/* A common run line in one straight pass: six fields or more, no comment.
 * Returns the start of the next line, or NULL to read this one with the
 * general splitter (which also words the errors). */
static inline const char *run_fast(struct reader *rd, const char *p, const char *stop) {
  struct evr_trec *t = rd->t;
  const char *qid = p, *doc, *rank, *sc, *runid;
  size_t qlen, dlen, slen;
  double score;
  if (cls[(unsigned char)*p] || *p == '#' || !(qlen = next_field(qid, stop, &p)) || !next_field(p, stop, &doc) ||
      !(dlen = next_field(doc, stop, &rank)) || !next_field(rank, stop, &sc) ||
      !(slen = next_field(sc, stop, &runid)) || parse_score(sc, slen, &score) || isnan(score) || !room(t))
    return NULL;
  long q = query_of(rd, qid, qlen);
  if (q < 0) return NULL;
  t->results[t->n_results++] = (struct evr_trec_result){doc, score, (uint32_t)dlen, (uint32_t)q};
  t->runid = runid;
  for (p = runid; *p != '\n'; p++) {}
  return p + 1;
}

static int run_lines_in(struct reader *rd, const char *p, const char *stop, size_t *no, struct evr_error *err) {
  while (p < stop) {
    ++*no;
    const char *next = run_fast(rd, p, stop);
    if (next) {
      p = next;
      continue;
    }
    struct line l;
    p = split_line(p, stop, &l, 5);
    if (l.n > 0 && l.f[0][0] != '#' && run_line(rd, *no, &l, err)) return -1;
  }
  return 0;
}

static void read_half(void *arg) {
  struct half *h = arg;
  struct reader rd = {h->t, &h->t->run, NULL, 0, 0, h->st, NULL};
  h->failed = run_lines_in(&rd, h->p, h->stop, &h->no, &h->err) ||
              (h->tail && run_lines_in(&rd, h->tail, h->tail_end, &h->no, &h->err)) || (h->st && stream_flush(&rd));
}

/* Gives the second half's records, written in t's array after a gap,
 * t's query indices. */
static int merge_half(struct evr_trec *t, struct evr_trec *b, size_t base) {
  uint32_t *map = malloc((b->n_queries + 1) * sizeof *map);
  if (!map) return -1;
  for (size_t q = 0; q < b->n_queries; q++) {
    long g = intern(t, b->queries[q].qid, b->queries[q].len);
    if (g < 0) return free(map), -1;
    map[q] = (uint32_t)g;
  }
  for (size_t i = 0; i < b->n_results; i++) b->results[i].q = map[b->results[i].q];
  t->gap_lo = t->n_results, t->gap_hi = base;
  t->n_results = base + b->n_results;
  if (b->runid) t->runid = b->runid;
  free(map);
  return 0;
}

/* The start of the first line at or after p (before stop) whose query
 * differs from the previous line's, so that no query straddles a split. */
static const char *query_boundary(const char *p, const char *stop) {
  p = (const char *)memchr(p, '\n', (size_t)(stop - p)) + 1;
  const char *prev = NULL;
  size_t prev_len = 0;
  while (p < stop) {
    struct line l;
    const char *next = split_line(p, stop, &l, 1);
    int query = l.n && l.f[0][0] != '#'; /* comments and blank lines belong to no query */
    if (query && prev && (l.len[0] != prev_len || memcmp(l.f[0], prev, prev_len))) return p;
    if (query) prev = l.f[0], prev_len = l.len[0];
    p = next;
  }
  return stop;
}

/* Reads the run in two halves at once when the host can run two jobs;
 * records, query order and errors are those of one pass. */
static int read_run_lines(struct evr_trec *t, struct evr_error *err) {
  struct file *f = &t->run;
  if (!f->size) return 0;
  const char *stop = complete_lines(f, err), *mid;
  if (!stop) return -1;
  const char *tail = f->tail, *tail_end = f->tail ? f->tail + tail_len(f, stop) : NULL;
  mid = f->data + (size_t)(stop - f->data) / 2;
  mid = mid < stop ? query_boundary(mid, stop) : stop;
  struct evr_trec *b = t->parallel && mid < stop ? evr_trec_new() : NULL;
  if (!b) {
    struct half whole = {t, f->data, stop, tail, tail_end, 0, 0, {""}, NULL};
    read_half(&whole);
    if (whole.failed) *err = whole.err;
    return whole.failed ? -1 : 0;
  }
  /* the first half cannot reach base: it has at most (mid - data) / 12 lines */
  size_t base = t->n_results + (size_t)(mid - f->data) / 12 + 1;
  b->run.path = f->path;
  b->results = t->results + base, b->cap_results = t->cap_results - base, b->results_borrowed = 1;
  struct half h[2] = {{t, f->data, mid, NULL, NULL, 0, 0, {""}, NULL}, {b, mid, stop, tail, tail_end, 0, 0, {""}, NULL}};
  void *args[2] = {&h[0], &h[1]};
  t->parallel(read_half, args);
  int r = 0;
  if (h[0].failed) {
    *err = h[0].err, r = -1;
  } else if (h[1].failed) { /* again, alone, to number its lines from the first half's */
    struct evr_trec *again = evr_trec_new();
    if (!again) return evr_error_set(err, "%s: out of memory", f->path), evr_trec_free(b), -1;
    again->run.path = f->path;
    again->results = b->results, again->cap_results = b->cap_results, again->results_borrowed = 1;
    struct half h1 = {again, mid, stop, tail, tail_end, h[0].no, 0, {""}, NULL};
    read_half(&h1);
    *err = h1.err, r = -1;
    evr_trec_free(again);
  } else if (merge_half(t, b, base)) {
    r = oom(err, f);
  }
  evr_trec_free(b);
  return r;
}

static int read_run(struct evr_trec *t, struct evr_error *err);

int evr_trec_read_run(struct evr_trec *t, const char *path, struct evr_error *err) {
  if (t->run.path) return evr_error_set(err, "%s: a run file was already read", path), -1;
  return open_file(path, &t->run, 1, err) ? -1 : read_run(t, err);
}

int evr_trec_read_run_fd(struct evr_trec *t, int fd, const char *name, struct evr_error *err) {
  if (t->run.path) return evr_error_set(err, "%s: a run file was already read", name), -1;
  return open_fd(fd, name, &t->run, 1, err) ? -1 : read_run(t, err);
}

static int read_run(struct evr_trec *t, struct evr_error *err) {
  if (map_results(t, t->run.size)) return oom(err, &t->run);
  if (read_run_lines(t, err)) return -1;
  if (t->runid) t->runid_len = field_len(t->runid);
  return index_queries(t, 1) ? oom(err, &t->run) : 0;
}

/* ---- queries ------------------------------------------------------------------ */

size_t evr_trec_count(const struct evr_trec *t) { return t->order ? t->n_queries : 0; }

void evr_trec_query(const struct evr_trec *t, size_t i, struct evr_trec_query *out) {
  const struct query *q = &t->queries[t->order[i]];
  *out = (struct evr_trec_query){q->qid, q->len, q->j_count ? t->judged + q->j_start : NULL, q->j_count,
                                 q->r_count ? t->results + q->r_start : NULL, q->r_count, q->j_count > 0,
                                 q->r_count > 0};
}

const char *evr_trec_runid(const struct evr_trec *t, size_t *len) {
  *len = t->runid ? t->runid_len : 0;
  return t->runid ? t->runid : "";
}

static int twice(struct evr_error *err, const struct file *f, int doc_field, const struct evr_trec_query *q,
                 const char *doc, size_t len, const char *how) {
  size_t lines[2];
  find_pair(f, q->qid, q->qid_len, doc, len, lines, doc_field);
  evr_error_set(err, "%s:%zu: document '%.*s' %s for query '%.*s' (first at line %zu)", f->path, lines[1],
                (int)(len > 80 ? 80 : len), doc, how, (int)(q->qid_len > 80 ? 80 : q->qid_len), q->qid, lines[0]);
  return -1;
}

int evr_trec_rank(const struct evr_trec *t, size_t i, struct evr_ranker *r, size_t depth,
                  struct evr_ranking *out, struct evr_error *err) {
  struct evr_trec_query q;
  evr_trec_query(t, i, &q);
  return evr_trec_rank_results(t, i, q.results, q.n_results, r, depth, out, err);
}

int evr_trec_rank_results(const struct evr_trec *t, size_t i, const struct evr_trec_result *results, size_t n,
                          struct evr_ranker *r, size_t depth, struct evr_ranking *out, struct evr_error *err) {
  struct evr_trec_query q;
  evr_trec_query(t, i, &q);
  q.results = results, q.n_results = n;
  evr_ranker_reset(r);
  for (size_t j = 0; j < q.n_judged; j++) {
    const struct evr_trec_judgment *d = &q.judged[j];
    size_t len = field_len(d->doc);
    int dup = evr_ranker_judge(r, d->doc, len, (double)d->grade);
    if (dup < 0) return evr_error_set(err, "out of memory"), -1;
    if (dup) return twice(err, &t->qrels, t->qrels_width == 3 ? 1 : 2, &q, d->doc, len, "is judged twice");
  }
  for (size_t j = 0; j < q.n_results; j++)
    if (evr_ranker_add(r, q.results[j].doc, q.results[j].len, q.results[j].score))
      return evr_error_set(err, "out of memory"), -1;
  if (evr_ranker_finish(r, 1, depth, out)) return evr_error_set(err, "out of memory"), -1;
  size_t len;
  const char *dup = evr_ranker_repeat(r, &len);
  if (dup) return twice(err, &t->run, 2, &q, dup, len, "is retrieved twice");
  return 0;
}

/* ---- streaming a run grouped by query -------------------------------------- */

/* What the two halves of a streamed run share. */
struct stream_shared {
  struct evr_trec *t;             /* qrels read, run mapped */
  _Atomic unsigned char *claimed; /* per query: its lines were met (NULL: only parse) */
  uint32_t *pos;                  /* per query: its place in qid order */
  evr_trec_group_fn fn;
};

/* One half's state: the query whose lines are being gathered (-1 before
 * the first; n_queries for a query the qrels lack) and its pages handed
 * back so far. */
struct stream {
  struct stream_shared *sh;
  void *ctx;
  long q;
  const char *dropped;
  int ungrouped, failed;
  struct evr_error err;
  size_t steps; /* of the run handed back */
};

/* Evaluates the lines gathered for the current query, then forgets them. */
static int stream_flush(struct reader *rd) {
  struct stream *s = rd->st;
  struct evr_trec *h = rd->t;
  const struct evr_trec *t = s->sh->t;
  int r = 0;
  if (s->sh->fn && s->q >= 0 && (size_t)s->q < t->n_queries)
    r = s->sh->fn(s->ctx, s->sh->pos[s->q], h->results, h->n_results, &s->err);
  h->n_results = 0;
  if (r) s->failed = 1;
  return r;
}

/* The index of query qid, found in the qid order by bisection; -1 when
 * the qrels lack it. */
static long find_query(const struct evr_trec *t, const char *qid, size_t len) {
  struct qkey key = {qid, (uint32_t)len, 0};
  size_t lo = 0, hi = t->n_queries;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const struct query *e = &t->queries[t->order[mid]];
    int c = by_qid(&key, &(struct qkey){e->qid, e->len, 0});
    if (c == 0) return (long)t->order[mid];
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return -1;
}

/* A line of a new query: the previous query is complete. A query met a
 * second time means the run is not grouped. */
static long stream_next(struct reader *rd, const char *qid, size_t len) {
  struct stream *s = rd->st;
  struct stream_shared *sh = s->sh;
  if (s->failed || s->ungrouped || stream_flush(rd)) return -1;
  long q = find_query(sh->t, qid, len);
  s->q = q >= 0 ? q : (long)sh->t->n_queries;
  if (q >= 0 && sh->claimed && atomic_exchange_explicit(&sh->claimed[q], 1, memory_order_relaxed)) {
    s->ungrouped = 1;
    return -1;
  }
  /* the qrels' pages too, less often: each query touches a few of them again */
  if (hand_back(&sh->t->run, &s->dropped, qid) && ++s->steps % 4 == 0) hand_back_all(&sh->t->qrels);
  return s->q;
}

/* Scratch for one half: its own growing record array. */
static struct evr_trec *stream_scratch(const char *path) {
  struct evr_trec *p = evr_trec_new();
  if (p) p->run.path = path, p->results_grow = 1;
  return p;
}

/* Half 2 parsed again, alone and without evaluating, to number the line
 * of its error from the end of half 1. */
static void renumber(struct stream_shared *sh, const struct half *h2, size_t lines_before, struct evr_error *err) {
  struct stream_shared parse = {sh->t, NULL, sh->pos, NULL};
  struct stream st = {&parse, NULL, -1, page_up(&sh->t->run, h2->p), 0, 0, {""}, 0};
  struct evr_trec *p = stream_scratch(h2->t->run.path);
  if (!p) return;
  struct half h = {p, h2->p, h2->stop, h2->tail, h2->tail_end, lines_before, 0, {""}, &st};
  read_half(&h);
  if (h.failed) *err = h.err;
  evr_trec_free(p);
}

/* Puts the run back to unread, for reading it whole. */
static int unread_run(struct evr_trec *t) {
  close_file(&t->run);
  memset(&t->run, 0, sizeof t->run);
  t->runid = NULL, t->runid_len = 0;
  return 1;
}

/* Streams [data, stop) and the tail in two halves split between queries
 * (one after the other without a parallel host). */
static int stream_halves(struct stream_shared *sh, void *ctx[2], struct evr_error *err) {
  struct evr_trec *t = sh->t;
  struct file *f = &t->run;
  const char *stop = complete_lines(f, err);
  if (!stop) return -1;
  const char *tail = f->tail, *tail_end = f->tail ? f->tail + tail_len(f, stop) : NULL;
  const char *mid = f->data + (size_t)(stop - f->data) / 2;
  mid = t->parallel && mid < stop ? query_boundary(mid, stop) : stop;
  int split = mid < stop; /* else the first half takes the copied last line too */
  struct evr_trec *p[2] = {stream_scratch(f->path), stream_scratch(f->path)};
  struct stream st[2] = {{sh, ctx[0], -1, f->data, 0, 0, {""}, 0}, {sh, ctx[1], -1, page_up(f, mid), 0, 0, {""}, 0}};
  struct half h[2] = {{p[0], f->data, mid, split ? NULL : tail, split ? NULL : tail_end, 0, 0, {""}, &st[0]},
                      {p[1], mid, stop, split ? tail : NULL, split ? tail_end : NULL, 0, 0, {""}, &st[1]}};
  int r = 0;
  if (!p[0] || !p[1]) {
    r = oom(err, f);
  } else {
    void *args[2] = {&h[0], &h[1]};
    if (t->parallel) t->parallel(read_half, args);
    else read_half(&h[0]), read_half(&h[1]);
    if (st[0].ungrouped || st[1].ungrouped) r = unread_run(t);
    else if (h[0].failed) *err = st[0].failed ? st[0].err : h[0].err, r = -1;
    else if (h[1].failed && st[1].failed) *err = st[1].err, r = -1;
    else if (h[1].failed) *err = h[1].err, renumber(sh, &h[1], h[0].no, err), r = -1;
    else if ((t->runid = p[1]->runid ? p[1]->runid : p[0]->runid)) t->runid_len = field_len(t->runid);
  }
  evr_trec_free(p[0]), evr_trec_free(p[1]);
  return r;
}

int evr_trec_stream_run(struct evr_trec *t, const char *path, evr_trec_group_fn fn, void *ctx[2],
                        struct evr_error *err) {
  if (t->run.path) return evr_error_set(err, "%s: a run file was already read", path), -1;
  struct stat st;
  if (!t->order || !strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) return 1;
  if (open_file(path, &t->run, 0, err)) return -1;
  if (!t->run.mapped) return unread_run(t);
  madvise(t->run.data, t->run.size, MADV_SEQUENTIAL);
  size_t nq = t->n_queries;
  struct stream_shared sh = {t, calloc(nq + 1, 1), malloc((nq + 1) * sizeof(uint32_t)), fn};
  int r = sh.claimed && sh.pos ? 0 : oom(err, &t->run);
  for (size_t i = 0; !r && i < nq; i++) sh.pos[t->order[i]] = (uint32_t)i;
  if (!r) r = stream_halves(&sh, ctx, err);
  free((void *)sh.claimed), free(sh.pos);
  return r;
}
