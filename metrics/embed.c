/* The offline embedder (see evalua/embed.h). A text's features are 64-bit
 * FNV-1a hashes whose top bit says the part (0 words, 1 characters),
 * counted by hashing: each distinct feature gets a number in a vocabulary
 * (an open-addressing table) as it is first met, a text keeps its distinct
 * features by number with their counts, and the document frequency is
 * counted on the way. IDF is then one logarithm per distinct feature, and
 * a cosine scatters one text's weights into a dense array indexed by
 * number and reads the other's against it: no sort, no search. A batch is
 * added on two threads, each half into a vocabulary of its own, the second
 * merged into the first. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/embed.h"

#define CHAR_PART ((uint64_t)1 << 63)
#define ID_CHAR ((uint32_t)1 << 31) /* a feature's number: the part in the top bit */
#define ID_MAX (ID_CHAR - 1)
#define CJK_NGRAM_MAX 3 /* characters of a CJK run: 1-, 2- and 3-grams */
#define NONE SIZE_MAX
#define SPLIT_MIN 256 /* texts in a batch below which a second thread costs more than it saves */

/* w holds the count while adding, the weight after evembed_fit. */
struct feat { uint32_t id; double w; };
struct slot { uint64_t h; uint32_t id1; }; /* id1: number + 1, 0 an empty slot */
/* A feature of the vocabulary: its hash, the texts that have it, and its
 * entry in f of the latest text that has it (NONE before the first). */
struct entry { uint64_t h; size_t last; uint32_t df; };

/* Texts with their features and vocabulary: the embedder's own, or the
 * half of a batch another thread adds. */
struct part {
  struct evm_alloc a;
  const evembed_opts *o;
  struct slot *slot;   /* mask + 1 slots, at most half of them used */
  size_t mask;
  struct entry *v;     /* by number */
  size_t nv, capv;
  struct feat *f;      /* every text's features, text after text */
  size_t nf, capf;
  size_t *start;       /* text i: f[start[i] .. start[i + 1]) */
  size_t n, capn;
  size_t *cp;          /* code point offsets in a token */
  size_t capcp;
  char *pad;           /* a token with its boundary marks */
  size_t cappad;
};

struct evembed {
  struct part p;
  evembed_opts o;
  double *norm;        /* text i: norm of its word part, then of its character part */
  size_t nnorm;
  double *dense;       /* zero between calls: a text's weights by number, for a cosine */
  size_t ndense;
};

void evembed_defaults(evembed_opts *o) {
  o->char_weight = 0.5;
  o->char_min = 3;
  o->char_max = 5;
}

static int grow(const struct evm_alloc *a, void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 64;
  while (c < need) {
    if (c > SIZE_MAX / 2 / size) return -1;
    c *= 2;
  }
  void *q = evm_resize(a, *p, *cap, c, size);
  if (!q) return -1;
  *p = q, *cap = c;
  return 0;
}

static int part_init(struct part *p, const struct evm_alloc *a, const evembed_opts *o) {
  memset(p, 0, sizeof *p);
  p->a = *a, p->o = o;
  if (!(p->start = evm_new(a, 1, sizeof *p->start))) return -1;
  p->capn = 1;
  p->start[0] = 0;
  return 0;
}

static void part_free(struct part *p) {
  const struct evm_alloc *a = &p->a;
  evm_free(a, p->slot, p->slot ? p->mask + 1 : 0, sizeof *p->slot);
  evm_free(a, p->v, p->capv, sizeof *p->v);
  evm_free(a, p->f, p->capf, sizeof *p->f);
  evm_free(a, p->start, p->capn, sizeof *p->start);
  evm_free(a, p->cp, p->capcp, sizeof *p->cp);
  evm_free(a, p->pad, p->cappad, 1);
  memset(p, 0, sizeof *p);
}

evembed *evembed_new(const evembed_opts *o) { return evembed_new_alloc(o, &evm_plain); }

evembed *evembed_new_alloc(const evembed_opts *o, const struct evm_alloc *a) {
  evembed *e = evm_new(a, 1, sizeof *e);
  if (!e) return NULL;
  memset(e, 0, sizeof *e);
  if (o) e->o = *o; else evembed_defaults(&e->o);
  if (part_init(&e->p, a, &e->o)) { evm_free(a, e, 1, sizeof *e); return NULL; }
  return e;
}

void evembed_free(evembed *e) {
  if (!e) return;
  const struct evm_alloc a = e->p.a;
  part_free(&e->p);
  evm_free(&a, e->norm, e->nnorm, sizeof *e->norm);
  evm_free(&a, e->dense, e->ndense, sizeof *e->dense);
  evm_free(&a, e, 1, sizeof *e);
}

size_t evembed_count(const evembed *e) { return e->p.n; }

/* ---- the vocabulary ------------------------------------------------------- */

/* FNV-1a's low bits depend on the low bits of the input only: mixed
 * (MurmurHash3's finaliser) before they pick a slot. */
static size_t slot_of(uint64_t h, size_t mask) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & mask;
}

static int rehash(struct part *p) {
  size_t cap = p->slot ? 2 * (p->mask + 1) : 1024;
  struct slot *s = evm_new(&p->a, cap, sizeof *s);
  if (!s) return -1;
  memset(s, 0, cap * sizeof *s);
  for (size_t v = 0; v < p->nv; v++) {
    size_t i = slot_of(p->v[v].h, cap - 1);
    while (s[i].id1) i = (i + 1) & (cap - 1);
    s[i] = (struct slot){ p->v[v].h, (uint32_t)v + 1 };
  }
  evm_free(&p->a, p->slot, p->slot ? p->mask + 1 : 0, sizeof *p->slot);
  p->slot = s, p->mask = cap - 1;
  return 0;
}

/* The number of feature h, a new one (df 0) if it was not there; -1 when
 * out of memory or past 2^31 - 1 features. */
static long intern(struct part *p, uint64_t h) {
  if (!p->slot || p->nv >= (p->mask + 1) / 2) {
    if (p->nv >= ID_MAX || rehash(p)) return -1;
  }
  size_t i = slot_of(h, p->mask);
  for (; p->slot[i].id1; i = (i + 1) & p->mask)
    if (p->slot[i].h == h) return (long)p->slot[i].id1 - 1;
  if (grow(&p->a, (void **)&p->v, &p->capv, p->nv + 1, sizeof *p->v)) return -1;
  size_t v = p->nv++;
  p->slot[i] = (struct slot){ h, (uint32_t)v + 1 };
  p->v[v] = (struct entry){ h, NONE, 0 };
  return (long)v;
}

/* ---- features --------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return h;
}

/* Counts a feature of the text being added (text p->n); kind keeps
 * unigrams, bigrams and n-grams of equal bytes apart. */
static int emit(struct part *p, char kind, const char *s, size_t n, uint64_t part) {
  uint64_t h = fnv(fnv(0xcbf29ce484222325ULL, &kind, 1), s, n);
  h = (h & ~CHAR_PART) | part;
  long v = intern(p, h);
  if (v < 0) return -1;
  struct entry *en = &p->v[v];
  if (en->last != NONE && en->last >= p->start[p->n]) {
    p->f[en->last].w += 1;
    return 0;
  }
  if (grow(&p->a, (void **)&p->f, &p->capf, p->nf + 1, sizeof *p->f)) return -1;
  en->last = p->nf, en->df++;
  p->f[p->nf++] = (struct feat){ (uint32_t)v | (part ? ID_CHAR : 0), 1 };
  return 0;
}

/* Code point offsets of s (valid UTF-8) into p->cp: cp[0..k], k returned. */
static long code_points(struct part *p, const char *s, size_t n) {
  if (grow(&p->a, (void **)&p->cp, &p->capcp, n + 1, sizeof *p->cp)) return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) p->cp[k++] = i;
  p->cp[k] = n;
  return (long)k;
}

/* n-grams of lengths lo..hi (code points) of s. */
static int ngrams(struct part *p, const char *s, size_t len, int lo, int hi) {
  long k = code_points(p, s, len);
  if (k < 0) return -1;
  for (int n = lo; n <= hi; n++)
    for (long a = 0; a + n <= k; a++)
      if (emit(p, 'c', s + p->cp[a], p->cp[a + n] - p->cp[a], CHAR_PART)) return -1;
  return 0;
}

/* A token of one code point from U+2E80 on: a CJK character (metrics/text.c
 * makes each ideograph, kana and Hangul syllable a token of its own). */
static int is_cjk_char(evtext_str t) {
  unsigned char c = (unsigned char)t.s[0];
  size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  return t.len == n && n >= 3 && !(n == 3 && c == 0xE2 && (unsigned char)t.s[1] < 0xBA);
}

/* A word: itself, and its character n-grams with boundary marks. */
static int word_features(struct part *p, evtext_str t) {
  if (emit(p, 'w', t.s, t.len, 0)) return -1;
  if (grow(&p->a, (void **)&p->pad, &p->cappad, t.len + 2, 1)) return -1;
  p->pad[0] = '<';
  memcpy(p->pad + 1, t.s, t.len);
  p->pad[t.len + 1] = '>';
  return ngrams(p, p->pad, t.len + 2, p->o->char_min, p->o->char_max);
}

/* A CJK run (tokens[a..b), adjacent in the text's token list): each
 * character and each pair of neighbours as words, 1- to 3-grams as characters. */
static int cjk_features(struct part *p, evtext_ws *ws, size_t a, size_t b) {
  evtext_str first = evtext_token(ws, a), last = evtext_token(ws, b - 1);
  const char *s = first.s;
  size_t len = (size_t)(last.s + last.len - s);
  for (size_t i = a; i < b; i++) {
    evtext_str t = evtext_token(ws, i);
    if (emit(p, 'w', t.s, t.len, 0)) return -1;
    if (i + 1 < b) {
      evtext_str u = evtext_token(ws, i + 1);
      if (emit(p, 'p', t.s, (size_t)(u.s + u.len - t.s), 0)) return -1;
    }
  }
  int hi = p->o->char_max < CJK_NGRAM_MAX ? p->o->char_max : CJK_NGRAM_MAX;
  return ngrams(p, s, len, 1, hi);
}

/* A text that failed half way is taken back: its features uncounted. */
static void take_back(struct part *p) {
  for (size_t k = p->start[p->n]; k < p->nf; k++) {
    struct entry *en = &p->v[p->f[k].id & ID_MAX];
    en->df--, en->last = NONE;
  }
  p->nf = p->start[p->n];
}

static int part_add(struct part *p, evtext_ws *ws, evtext_str text, evtext_error *err) {
  size_t nt;
  int rc = evtext_tokenize(ws, text, &nt, err);
  if (rc != EVTEXT_OK) return rc;
  if (grow(&p->a, (void **)&p->start, &p->capn, p->n + 2, sizeof *p->start)) return EVTEXT_ENOMEM;
  for (size_t i = 0; i < nt;) {
    size_t j = i;
    while (j < nt && is_cjk_char(evtext_token(ws, j))) j++;
    int bad = j > i ? cjk_features(p, ws, i, j) : word_features(p, evtext_token(ws, i));
    if (bad) {
      take_back(p);
      return EVTEXT_ENOMEM;
    }
    i = j > i ? j : i + 1;
  }
  p->start[++p->n] = p->nf;
  return EVTEXT_OK;
}

int evembed_add(evembed *e, evtext_ws *ws, evtext_str text, evtext_error *err) {
  return part_add(&e->p, ws, text, err);
}

/* ---- a batch on two threads ------------------------------------------------ */

/* b's texts appended to a's, b's features renumbered into a's vocabulary. */
static int absorb(struct part *a, const struct part *b) {
  uint32_t *map = evm_new(&a->a, b->nv ? b->nv : 1, sizeof *map);
  if (!map) return -1;
  int rc = -1;
  for (size_t v = 0; v < b->nv; v++) {
    long w = intern(a, b->v[v].h);
    if (w < 0) goto done;
    a->v[w].df += b->v[v].df;
    map[v] = (uint32_t)w;
  }
  if (grow(&a->a, (void **)&a->f, &a->capf, a->nf + b->nf, sizeof *a->f) ||
      grow(&a->a, (void **)&a->start, &a->capn, a->n + b->n + 1, sizeof *a->start))
    goto done;
  for (size_t k = 0; k < b->nf; k++) {
    uint32_t id = b->f[k].id;
    a->f[a->nf + k] = (struct feat){ map[id & ID_MAX] | (id & ID_CHAR), b->f[k].w };
  }
  for (size_t t = 1; t <= b->n; t++) a->start[a->n + t] = a->nf + b->start[t];
  a->nf += b->nf, a->n += b->n;
  rc = 0;
done:
  evm_free(&a->a, map, b->nv ? b->nv : 1, sizeof *map);
  return rc;
}

struct add_half {
  struct part *p;
  evtext_ws *ws;
  const evtext_str *t;
  size_t n, failed;
  int rc;
  evtext_error err;
};

static void add_job(void *arg) {
  struct add_half *h = arg;
  for (size_t i = 0; i < h->n; i++) {
    if ((h->rc = part_add(h->p, h->ws, h->t[i], &h->err)) != EVTEXT_OK) {
      h->failed = i;
      return;
    }
  }
}

int evembed_add_batch(evembed *e, evtext_ws *ws[2], const evtext_str *texts, size_t n,
                      evembed_parallel_fn par, size_t *failed, evtext_error *err) {
  struct part b;
  int two = par && ws[1] && n >= SPLIT_MIN;
  if (two && part_init(&b, &e->p.a, &e->o)) return EVTEXT_ENOMEM;
  size_t mid = two ? n / 2 : n;
  struct add_half h[2] = { { &e->p, ws[0], texts, mid, 0, EVTEXT_OK, { -1, 0 } },
                           { &b, ws[1], texts + mid, n - mid, 0, EVTEXT_OK, { -1, 0 } } };
  if (two) par(add_job, (void *[]){ &h[0], &h[1] });
  else add_job(&h[0]);
  int rc = h[0].rc != EVTEXT_OK ? h[0].rc : two ? h[1].rc : EVTEXT_OK;
  if (rc != EVTEXT_OK) {
    int k = h[0].rc != EVTEXT_OK ? 0 : 1;
    *failed = (k ? mid : 0) + h[k].failed, *err = h[k].err;
  } else if (two && absorb(&e->p, &b)) {
    rc = EVTEXT_ENOMEM, *failed = n;
  }
  if (two) part_free(&b);
  return rc;
}

/* ---- IDF and weights ------------------------------------------------------ */

/* idf = ln((1 + N) / (1 + df)) + 1 (scikit-learn's smoothed IDF), one per
 * distinct feature; weight = (1 + ln tf) idf, and most counts are 1. */
int evembed_fit(evembed *e) {
  struct part *p = &e->p;
  size_t nv = p->nv ? p->nv : 1;
  double *idf = evm_new(&p->a, nv, sizeof *idf);
  if (!idf) return EVTEXT_ENOMEM;
  evm_free(&p->a, e->norm, e->nnorm, sizeof *e->norm);
  evm_free(&p->a, e->dense, e->ndense, sizeof *e->dense);
  e->nnorm = 2 * (p->n ? p->n : 1), e->ndense = nv;
  e->norm = evm_new(&p->a, e->nnorm, sizeof *e->norm);
  e->dense = evm_new(&p->a, e->ndense, sizeof *e->dense);
  if (!e->norm || !e->dense) {
    evm_free(&p->a, e->norm, e->nnorm, sizeof *e->norm);
    evm_free(&p->a, e->dense, e->ndense, sizeof *e->dense);
    e->norm = e->dense = NULL, e->nnorm = e->ndense = 0;
    evm_free(&p->a, idf, nv, sizeof *idf);
    return EVTEXT_ENOMEM;
  }
  memset(e->norm, 0, e->nnorm * sizeof *e->norm);
  memset(e->dense, 0, e->ndense * sizeof *e->dense);
  for (size_t v = 0; v < p->nv; v++) idf[v] = log((1.0 + p->n) / (1.0 + p->v[v].df)) + 1;
  for (size_t t = 0; t < p->n; t++) {
    double sq[2] = { 0, 0 };
    for (size_t k = p->start[t]; k < p->start[t + 1]; k++) {
      struct feat *f = &p->f[k];
      f->w = (f->w == 1 ? 1 : 1 + log(f->w)) * idf[f->id & ID_MAX];
      sq[f->id >> 31] += f->w * f->w;
    }
    e->norm[2 * t] = sqrt(sq[0]);
    e->norm[2 * t + 1] = sqrt(sq[1]);
  }
  evm_free(&p->a, idf, nv, sizeof *idf);
  return EVTEXT_OK;
}

/* ---- cosines ---------------------------------------------------------------- */

/* Text i's weights into d by number (w), or taken out again (0). */
static void scatter(const evembed *e, size_t i, double *d, int put) {
  const struct part *p = &e->p;
  for (size_t k = p->start[i]; k < p->start[i + 1]; k++) d[p->f[k].id & ID_MAX] = put ? p->f[k].w : 0;
}

/* The similarity of text j with the text scattered into d, text i. */
static double against(const evembed *e, size_t i, size_t j, const double *d) {
  const struct part *p = &e->p;
  double dot[2] = { 0, 0 };
  for (size_t k = p->start[j]; k < p->start[j + 1]; k++) {
    uint32_t id = p->f[k].id;
    dot[id >> 31] += p->f[k].w * d[id & ID_MAX];
  }
  double part[2];
  for (int c = 0; c < 2; c++) {
    double n = e->norm[2 * i + c] * e->norm[2 * j + c];
    part[c] = n > 0 ? dot[c] / n : 0;
    if (part[c] > 1) part[c] = 1; /* rounding */
  }
  return (1 - e->o.char_weight) * part[0] + e->o.char_weight * part[1];
}

double evembed_cosine(evembed *e, size_t i, size_t j) {
  scatter(e, i, e->dense, 1);
  double c = against(e, i, j, e->dense);
  scatter(e, i, e->dense, 0);
  return c;
}

struct sim_half {
  const evembed *e;
  const size_t *first;
  size_t lo, hi, base;
  double *d, *out;
};

static void sim_job(void *arg) {
  const struct sim_half *h = arg;
  for (size_t i = h->lo; i < h->hi; i++) {
    scatter(h->e, i, h->d, 1);
    for (size_t k = h->first[i]; k < h->first[i + 1]; k++) h->out[k - h->base] = against(h->e, i, k, h->d);
    scatter(h->e, i, h->d, 0);
  }
}

int evembed_similarity(evembed *e, const size_t *first, size_t m, double *out, evembed_parallel_fn par) {
  double *d2 = NULL;
  if (par && m >= SPLIT_MIN) {
    if (!(d2 = evm_new(&e->p.a, e->ndense, sizeof *d2))) return EVTEXT_ENOMEM;
    memset(d2, 0, e->ndense * sizeof *d2);
  }
  size_t mid = d2 ? m / 2 : m;
  struct sim_half h[2] = { { e, first, 0, mid, first[0], e->dense, out },
                           { e, first, mid, m, first[0], d2, out } };
  if (d2) par(sim_job, (void *[]){ &h[0], &h[1] });
  else sim_job(&h[0]);
  evm_free(&e->p.a, d2, e->ndense, sizeof *d2);
  return EVTEXT_OK;
}

void evembed_dense(const evembed *e, size_t i, double *out, size_t dim) {
  const struct part *p = &e->p;
  memset(out, 0, dim * sizeof *out);
  double scale[2];
  for (int c = 0; c < 2; c++) {
    double share = c ? e->o.char_weight : 1 - e->o.char_weight, n = e->norm[2 * i + c];
    scale[c] = n > 0 ? sqrt(share) / n : 0;
  }
  for (size_t k = p->start[i]; k < p->start[i + 1]; k++) {
    uint64_t h = p->v[p->f[k].id & ID_MAX].h;
    double sign = (h >> 32) & 1 ? -1 : 1;
    out[(h & ~CHAR_PART) % dim] += sign * p->f[k].w * scale[h >> 63];
  }
  double n = 0;
  for (size_t d = 0; d < dim; d++) n += out[d] * out[d];
  if (n > 0)
    for (size_t d = 0; d < dim; d++) out[d] /= sqrt(n);
}
