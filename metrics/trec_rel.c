/* The relevance formats of trec_prefs.h: reading them, ranking each query's
 * run as trec_eval ranks it for them, and the report (the measures of one
 * query are in trec_prefs.c and trec_jg.c). These files are small next to
 * runs, so they are read whole into memory and their lines sorted. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evalua/trec_prefs.h"
#include "trec_rel.h"

/* A longer line means the input is not a TREC file (as trec.c says). */
#define MAX_LINE ((size_t)1 << 20)

/* The lines of one query: rel->lines[at, at + n). */
struct qset {
  const char *qid;
  size_t len, at, n;
};

struct evr_rel {
  enum evr_rel_format format;
  char *path, *text;
  struct rel_line *lines;
  size_t n, cap;
  struct qset *q;
  size_t nq;
};

int evr_rel_cmp(const char *a, size_t la, const char *b, size_t lb) {
  int c = memcmp(a, b, la < lb ? la : lb);
  return c ? c : (la > lb) - (la < lb);
}

/* ---- files ------------------------------------------------------------------ */

/* 1 + the newlines before p[at]. */
static size_t line_of(const char *p, size_t at) {
  size_t no = 1;
  for (size_t i = 0; i < at; i++) no += p[i] == '\n';
  return no;
}

/* Reads fd to its end, refusing a line over MAX_LINE, so that a device or a
 * binary given by mistake cannot exhaust memory. */
static int read_fd(int fd, const char *path, char **out, size_t *size, struct evr_error *err) {
  size_t cap = (size_t)1 << 16, n = 0, start = 0; /* start: of the last line */
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) return evr_error_set(err, "%s: out of memory", path), -1;
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return evr_error_set(err, "%s: cannot read (%s)", path, strerror(errno)), free(buf), -1;
    if (got == 0) break;
    for (size_t i = n + (size_t)got; i > n; i--)
      if (buf[i - 1] == '\n') {
        start = i;
        break;
      }
    n += (size_t)got;
    if (n - start > MAX_LINE) {
      evr_error_set(err, "%s:%zu: line longer than %zu bytes: not a TREC file", path, line_of(buf, start), MAX_LINE);
      return free(buf), -1;
    }
    if (n == cap) {
      char *p = realloc(buf, cap *= 2);
      if (!p) free(buf);
      buf = p;
    }
  }
  *out = buf, *size = n;
  return 0;
}

/* The file at path ("-": standard input), whole. */
static int read_file(const char *path, char **out, size_t *size, struct evr_error *err) {
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  if (fd < 0) return evr_error_set(err, "%s: cannot open (%s)", path, strerror(errno)), -1;
  int r = read_fd(fd, path, out, size, err);
  if (fd > 0) close(fd);
  return r;
}

/* ---- lines and fields ---------------------------------------------------- */

#define MAX_FIELDS 5

/* One line split into at most MAX_FIELDS + 1 fields (one more than any
 * format has, to see that there are too many). */
struct fields {
  const char *f[MAX_FIELDS + 1];
  size_t len[MAX_FIELDS + 1];
  int n;
};

static int blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Splits the line at p (ending at a newline or at end); returns where the
 * next line starts. */
static const char *split(const char *p, const char *end, struct fields *fl) {
  fl->n = 0;
  while (p < end && *p != '\n') {
    if (blank(*p)) {
      p++;
      continue;
    }
    const char *s = p;
    while (p < end && *p != '\n' && !blank(*p)) p++;
    if (fl->n <= MAX_FIELDS) fl->f[fl->n] = s, fl->len[fl->n++] = (size_t)(p - s);
  }
  return p < end ? p + 1 : p;
}

/* A data line: not blank, not a '#' comment. */
static int data_line(const struct fields *fl) { return fl->n > 0 && fl->f[0][0] != '#'; }

/* ---- reading a relevance file --------------------------------------------- */

static const struct {
  int n;
  const char *names;
} layout[] = {
  [EVR_REL_PREFS] = {5, "QID JG JSG DOCNO LEVEL"},
  [EVR_REL_QRELS_PREFS] = {4, "QID JG DOCNO LEVEL"},
  [EVR_REL_QRELS_JG] = {4, "QID JG DOCNO REL"},
};

/* A preference level: a number (strtod's forms), not NaN. */
static int parse_level(const char *s, size_t len, double *out) {
  char buf[64], *end;
  if (len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  *out = strtod(buf, &end);
  return end == buf + len && !isnan(*out) ? 0 : -1;
}

/* An integer grade; "2.0" is read as 2 (as trec.c reads qrels). */
static int parse_grade(const char *s, size_t len, double *out) {
  const char *p = s, *end = s + len, *digits;
  int neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) p++;
  long v = 0;
  for (digits = p; p < end && *p >= '0' && *p <= '9' && p - digits < 9; p++) v = v * 10 + (*p - '0');
  if (p == digits) return -1;
  if (p < end && *p == '.')
    for (p++; p < end && *p == '0'; p++) {}
  if (p != end) return -1;
  *out = (double)(neg ? -v : v);
  return 0;
}

static int bad_field(struct evr_error *err, const char *path, size_t no, const char *what, const char *f,
                     size_t len) {
  evr_error_set(err, "%s:%zu: %s '%.*s'", path, no, what, clip(len), f);
  return -1;
}

/* The line's level (or grade) into l; -1 with err set. */
static int line_level(const struct evr_rel *rel, size_t no, const char *f, size_t len, struct rel_line *l,
                      struct evr_error *err) {
  if (rel->format == EVR_REL_QRELS_JG)
    return parse_grade(f, len, &l->level) ? bad_field(err, rel->path, no, "relevance is not an integer:", f, len) : 0;
  if (parse_level(f, len, &l->level))
    return bad_field(err, rel->path, no, "relevance level is not a number:", f, len);
  return 0;
}

static int add_line(struct evr_rel *rel, size_t no, const struct fields *fl, struct evr_error *err) {
  int want = layout[rel->format].n, prefs = rel->format == EVR_REL_PREFS;
  if (fl->n != want)
    return evr_error_set(err, "%s:%zu: expected %d fields (%s), found %s%d", rel->path, no, want,
                         layout[rel->format].names, fl->n > want ? "more than " : "", fl->n > want ? want : fl->n),
           -1;
  if (rel->n == rel->cap) {
    size_t cap = rel->cap ? 2 * rel->cap : 1024;
    struct rel_line *p = realloc(rel->lines, cap * sizeof *p);
    if (!p) return evr_error_set(err, "%s: out of memory", rel->path), -1;
    rel->lines = p, rel->cap = cap;
  }
  struct rel_line *l = &rel->lines[rel->n];
  int d = prefs ? 3 : 2; /* the DOCNO field */
  *l = (struct rel_line){fl->f[0], fl->f[1], prefs ? fl->f[2] : "0", fl->f[d], (uint32_t)fl->len[0],
                         (uint32_t)fl->len[1], prefs ? (uint32_t)fl->len[2] : 1, (uint32_t)fl->len[d], 0, no};
  if (line_level(rel, no, fl->f[want - 1], fl->len[want - 1], l, err)) return -1;
  rel->n++;
  return 0;
}

static int by_query(const void *pa, const void *pb) {
  const struct rel_line *a = pa, *b = pb;
  int c = evr_rel_cmp(a->qid, a->qid_len, b->qid, b->qid_len);
  return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* qrels_jg: by query, group, document (trec_eval's order of groups). */
static int by_group(const void *pa, const void *pb) {
  const struct rel_line *a = pa, *b = pb;
  int c = evr_rel_cmp(a->qid, a->qid_len, b->qid, b->qid_len);
  if (!c) c = evr_rel_cmp(a->jg, a->jg_len, b->jg, b->jg_len);
  if (!c) c = evr_rel_cmp(a->doc, a->doc_len, b->doc, b->doc_len);
  return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* A document twice in one group of qrels_jg (lines sorted by group). */
static int judged_twice(const struct evr_rel *rel, struct evr_error *err) {
  for (size_t i = 1; i < rel->n; i++) {
    const struct rel_line *a = &rel->lines[i - 1], *b = &rel->lines[i];
    if (evr_rel_cmp(a->qid, a->qid_len, b->qid, b->qid_len) || evr_rel_cmp(a->jg, a->jg_len, b->jg, b->jg_len) ||
        evr_rel_cmp(a->doc, a->doc_len, b->doc, b->doc_len))
      continue;
    evr_error_set(err, "%s:%zu: document '%.*s' is judged twice for query '%.*s' in group '%.*s' (first at line %zu)",
                  rel->path, b->line, clip(b->doc_len), b->doc, clip(b->qid_len), b->qid, clip(b->jg_len), b->jg,
                  a->line);
    return -1;
  }
  return 0;
}

/* Sorts the lines and makes the query sets. */
static int group_queries(struct evr_rel *rel, struct evr_error *err) {
  int jg = rel->format == EVR_REL_QRELS_JG;
  if (rel->n) qsort(rel->lines, rel->n, sizeof *rel->lines, jg ? by_group : by_query);
  if (jg && judged_twice(rel, err)) return -1;
  if (!(rel->q = malloc((rel->n + 1) * sizeof *rel->q)))
    return evr_error_set(err, "%s: out of memory", rel->path), -1;
  for (size_t i = 0; i < rel->n; i++) {
    const struct rel_line *l = &rel->lines[i];
    struct qset *last = rel->nq ? &rel->q[rel->nq - 1] : NULL;
    if (last && !evr_rel_cmp(last->qid, last->len, l->qid, l->qid_len)) last->n++;
    else rel->q[rel->nq++] = (struct qset){l->qid, l->qid_len, i, 1};
  }
  return 0;
}

struct evr_rel *evr_rel_read(const char *path, enum evr_rel_format f, struct evr_error *err) {
  struct evr_rel *rel = calloc(1, sizeof *rel);
  size_t size = 0, no = 0;
  if (!rel || !(rel->path = strdup(path)))
    return evr_error_set(err, "%s: out of memory", path), evr_rel_free(rel), NULL;
  rel->format = f;
  if (f == EVR_REL_QRELS) return evr_error_set(err, "%s: qrels are read by trec.h", path), evr_rel_free(rel), NULL;
  if (read_file(path, &rel->text, &size, err)) return evr_rel_free(rel), NULL;
  for (const char *p = rel->text, *end = p + size; p < end;) {
    struct fields fl;
    p = split(p, end, &fl);
    no++;
    if (data_line(&fl) && add_line(rel, no, &fl, err)) return evr_rel_free(rel), NULL;
  }
  if (group_queries(rel, err)) return evr_rel_free(rel), NULL;
  return rel;
}

void evr_rel_free(struct evr_rel *rel) {
  if (!rel) return;
  free(rel->path), free(rel->text), free(rel->lines), free(rel->q);
  free(rel);
}

/* ---- ranking a query's run ------------------------------------------------- */

struct scored {
  const char *id;
  size_t len;
  double score;
};

/* trec_eval's orders: score descending, ties by id ascending for prefs
 * (form_prefs_counts.c) and descending for qrels_jg (as for qrels). */
static int ties_up(const void *pa, const void *pb) {
  const struct scored *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return evr_rel_cmp(a->id, a->len, b->id, b->len);
}

static int ties_down(const void *pa, const void *pb) {
  const struct scored *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return evr_rel_cmp(b->id, b->len, a->id, a->len);
}

static int by_id(const void *pa, const void *pb) {
  const struct rel_doc *a = pa, *b = pb;
  return evr_rel_cmp(a->id, a->len, b->id, b->len);
}

/* Scratch reused query after query. */
struct scratch {
  struct scored *sc;
  struct rel_doc *docs, *tmp;
  size_t cap, n;
};

static int reserve(struct scratch *s, size_t n) {
  if (n <= s->cap) return 0;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < n) cap *= 2;
  struct scored *sc = realloc(s->sc, cap * sizeof *sc);
  if (sc) s->sc = sc;
  struct rel_doc *d = sc ? realloc(s->docs, cap * sizeof *d) : NULL;
  if (d) s->docs = d;
  struct rel_doc *t = d ? realloc(s->tmp, cap * sizeof *t) : NULL;
  if (t) s->tmp = t, s->cap = cap;
  return t ? 0 : -1;
}

/* The numbers of the first two lines of the run at path for query qid
 * and document doc (0 when not found: standard input is not read again). */
static void run_lines(const char *path, const char *qid, size_t qlen, const char *doc, size_t dlen,
                      size_t lines[2]) {
  char *text;
  size_t size, no = 0, found = 0;
  struct evr_error ignored;
  lines[0] = lines[1] = 0;
  if (!strcmp(path, "-") || read_file(path, &text, &size, &ignored)) return;
  for (const char *p = text, *end = text + size; p < end && found < 2;) {
    struct fields fl;
    p = split(p, end, &fl);
    no++;
    if (data_line(&fl) && fl.n >= 3 && !evr_rel_cmp(fl.f[0], fl.len[0], qid, qlen) &&
        !evr_rel_cmp(fl.f[2], fl.len[2], doc, dlen))
      lines[found++] = no;
  }
  free(text);
}

/* A document twice among the first n ranked: an error naming its lines. */
static int retrieved_twice(struct scratch *s, const char *run, const char *qid, size_t qlen, struct evr_error *err) {
  memcpy(s->tmp, s->docs, s->n * sizeof *s->tmp);
  qsort(s->tmp, s->n, sizeof *s->tmp, by_id);
  for (size_t i = 1; i < s->n; i++) {
    const struct rel_doc *d = &s->tmp[i];
    if (by_id(d - 1, d)) continue;
    size_t lines[2];
    run_lines(run, qid, qlen, d->id, d->len, lines);
    if (lines[1])
      evr_error_set(err, "%s:%zu: document '%.*s' is retrieved twice for query '%.*s' (first at line %zu)", run,
                    lines[1], clip(d->len), d->id, clip(qlen), qid, lines[0]);
    else
      evr_error_set(err, "%s: document '%.*s' is retrieved twice for query '%.*s'", run, clip(d->len), d->id,
                    clip(qlen), qid);
    return -1;
  }
  return 0;
}

/* The run's documents of one query (none: res NULL) in rank order, cut at
 * depth, into s->docs[0, s->n). */
static int rank(struct scratch *s, const struct evr_trec_query *res, int up, size_t depth, const char *run,
                struct evr_error *err) {
  size_t n = res ? res->n_results : 0;
  if (reserve(s, n + 1)) return evr_error_set(err, "out of memory"), -1;
  for (size_t i = 0; i < n; i++) {
    const struct evr_trec_result *r = &res->results[i];
    s->sc[i] = (struct scored){r->doc, r->len, r->score};
  }
  if (n) qsort(s->sc, n, sizeof *s->sc, up ? ties_up : ties_down);
  s->n = depth && depth < n ? depth : n;
  for (size_t i = 0; i < s->n; i++) s->docs[i] = (struct rel_doc){s->sc[i].id, s->sc[i].len};
  return retrieved_twice(s, run, res ? res->qid : "", res ? res->qid_len : 0, err);
}

/* ---- the report ------------------------------------------------------------ */

static int start(struct evr_trec_report *rep, size_t n, size_t nc, struct evr_error *err) {
  memset(rep, 0, sizeof *rep);
  rep->nc = nc, rep->n = n;
  rep->rows = calloc(n + 1, sizeof *rep->rows);
  rep->values = malloc((n * nc + 1) * sizeof *rep->values);
  rep->summary = malloc((nc + 1) * sizeof *rep->summary);
  rep->measured = calloc(nc + 1, sizeof *rep->measured);
  if (!rep->rows || !rep->values || !rep->summary || !rep->measured) return evr_error_set(err, "out of memory"), -1;
  for (size_t i = 0; i < n * nc; i++) rep->values[i] = NAN;
  return 0;
}

/* The run's query with the id of qs, looked for from *j on (both lists are
 * in qid byte order); 0 when the run lacks it. */
static int find_run(const struct evr_trec *t, size_t *j, const struct qset *qs, struct evr_trec_query *out) {
  for (; *j < evr_trec_count(t); ++*j) {
    evr_trec_query(t, *j, out);
    int c = evr_rel_cmp(out->qid, out->qid_len, qs->qid, qs->len);
    if (c >= 0) return c == 0;
  }
  return 0;
}

struct job {
  const struct evr_rel *rel;
  const struct evr_trec *t;
  const char *run;
  const struct evr_column *cols;
  size_t nc;
  const struct evr_trec_opts *o;
  struct evr_trec_report *rep;
  struct scratch s;
};

/* Row k: query set qs with the run's results res (NULL: none). Nothing is
 * ranked without a column, as trec_eval ranks nothing for runid and num_q. */
static int eval_row(struct job *jb, size_t k, const struct qset *qs, const struct evr_trec_query *res,
                    struct evr_error *err) {
  const struct evr_rel *rel = jb->rel;
  int jg = rel->format == EVR_REL_QRELS_JG;
  if (!jb->nc) return 0;
  if (rank(&jb->s, res, !jg, jb->o->depth, jb->run, err)) return -1;
  struct rel_query q = {rel->path, rel->lines + qs->at, qs->n, jb->s.docs, jb->s.n};
  double *out = jb->rep->values + k * jb->nc;
  return jg ? evr_jg_query(&q, jb->cols, jb->nc, jb->o, out, err) : evr_prefs_query(&q, jb->cols, jb->nc, out, err);
}

static int eval_rows(struct job *jb, struct evr_error *err) {
  size_t j = 0;
  for (size_t k = 0; k < jb->rel->nq; k++) {
    const struct qset *qs = &jb->rel->q[k];
    struct evr_trec_query res;
    int in_run = find_run(jb->t, &j, qs, &res);
    jb->rep->rows[k] = (struct evr_trec_row){qs->qid, qs->len, NULL};
    if (!in_run && !jb->o->complete) jb->rep->rows[k].skipped = "not in the run";
    else if (eval_row(jb, k, qs, in_run ? &res : NULL, err)) return -1;
  }
  return 0;
}

int evr_rel_evaluate_run(const struct evr_rel *rel, struct evr_trec *t, const char *run_path,
                         const struct evr_column *cols, size_t nc, const struct evr_trec_opts *o,
                         struct evr_trec_report *rep, struct evr_error *err) {
  memset(rep, 0, sizeof *rep);
  if (evr_trec_read_run(t, run_path, err) || start(rep, rel->nq, nc, err)) return -1;
  struct job jb = {rel, t, run_path, cols, nc, o, rep, {NULL, NULL, NULL, 0, 0}};
  int r = eval_rows(&jb, err);
  free(jb.s.sc), free(jb.s.docs), free(jb.s.tmp);
  return r ? r : evr_trec_report_summarize(rep, cols, o, err);
}
