/* The offline embedder (see evalua/embed.h). A text's features are 64-bit
 * FNV-1a hashes whose top bit says the part (0 words, 1 characters); each
 * text keeps its features sorted and distinct with their counts, so IDF is
 * a count over the texts and a cosine is a merge of two sorted lists. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/embed.h"

#define CHAR_PART ((uint64_t)1 << 63)
#define CJK_NGRAM_MAX 3 /* characters of a CJK run: 1-, 2- and 3-grams */

struct feat { uint64_t h; double w; };

struct evembed {
  struct evm_alloc a;  /* where every block comes from */
  evembed_opts o;
  struct feat *f;      /* every text's features, text after text */
  size_t nf, capf;
  size_t *start;       /* text i: f[start[i] .. start[i + 1]) */
  double *norm;        /* text i: norm of its word part, then of its character part */
  size_t nnorm;
  size_t n, capn;
  uint64_t *scratch;   /* the features of the text being added */
  size_t ns, caps;
  size_t *cp;          /* code point offsets in a token */
  size_t capcp;
  char *pad;           /* a token with its boundary marks */
  size_t cappad;
};

void evembed_defaults(evembed_opts *o) {
  o->char_weight = 0.5;
  o->char_min = 3;
  o->char_max = 5;
}

evembed *evembed_new(const evembed_opts *o) { return evembed_new_alloc(o, &evm_plain); }

evembed *evembed_new_alloc(const evembed_opts *o, const struct evm_alloc *a) {
  evembed *e = evm_new(a, 1, sizeof *e);
  if (!e) return NULL;
  memset(e, 0, sizeof *e);
  e->a = *a;
  if (o) e->o = *o; else evembed_defaults(&e->o);
  if (!(e->start = evm_new(a, 1, sizeof *e->start))) { evm_free(a, e, 1, sizeof *e); return NULL; }
  e->capn = 1;
  e->start[0] = 0;
  return e;
}

void evembed_free(evembed *e) {
  if (!e) return;
  const struct evm_alloc a = e->a;
  evm_free(&a, e->f, e->capf, sizeof *e->f);
  evm_free(&a, e->start, e->capn, sizeof *e->start);
  evm_free(&a, e->norm, e->nnorm, sizeof *e->norm);
  evm_free(&a, e->scratch, e->caps, sizeof *e->scratch);
  evm_free(&a, e->cp, e->capcp, sizeof *e->cp);
  evm_free(&a, e->pad, e->cappad, 1);
  evm_free(&a, e, 1, sizeof *e);
}

size_t evembed_count(const evembed *e) { return e->n; }

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

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return h;
}

/* kind keeps unigrams, bigrams and n-grams of equal bytes apart. */
static int emit(evembed *e, char kind, const char *s, size_t n, uint64_t part) {
  if (grow(&e->a, (void **)&e->scratch, &e->caps, e->ns + 1, sizeof *e->scratch)) return -1;
  uint64_t h = fnv(fnv(0xcbf29ce484222325ULL, &kind, 1), s, n);
  e->scratch[e->ns++] = (h & ~CHAR_PART) | part;
  return 0;
}

/* Code point offsets of s (valid UTF-8) into e->cp: cp[0..k], k returned. */
static long code_points(evembed *e, const char *s, size_t n) {
  if (grow(&e->a, (void **)&e->cp, &e->capcp, n + 1, sizeof *e->cp)) return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) e->cp[k++] = i;
  e->cp[k] = n;
  return (long)k;
}

/* n-grams of lengths lo..hi (code points) of s. */
static int ngrams(evembed *e, const char *s, size_t len, int lo, int hi) {
  long k = code_points(e, s, len);
  if (k < 0) return -1;
  for (int n = lo; n <= hi; n++)
    for (long a = 0; a + n <= k; a++)
      if (emit(e, 'c', s + e->cp[a], e->cp[a + n] - e->cp[a], CHAR_PART)) return -1;
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
static int word_features(evembed *e, evtext_str t) {
  if (emit(e, 'w', t.s, t.len, 0)) return -1;
  if (grow(&e->a, (void **)&e->pad, &e->cappad, t.len + 2, 1)) return -1;
  e->pad[0] = '<';
  memcpy(e->pad + 1, t.s, t.len);
  e->pad[t.len + 1] = '>';
  return ngrams(e, e->pad, t.len + 2, e->o.char_min, e->o.char_max);
}

/* A CJK run (tokens[a..b), adjacent in the text's token list): each
 * character and each pair of neighbours as words, 1- to 3-grams as characters. */
static int cjk_features(evembed *e, evtext_ws *ws, size_t a, size_t b) {
  evtext_str first = evtext_token(ws, a), last = evtext_token(ws, b - 1);
  const char *s = first.s;
  size_t len = (size_t)(last.s + last.len - s);
  for (size_t i = a; i < b; i++) {
    evtext_str t = evtext_token(ws, i);
    if (emit(e, 'w', t.s, t.len, 0)) return -1;
    if (i + 1 < b) {
      evtext_str u = evtext_token(ws, i + 1);
      if (emit(e, 'p', t.s, (size_t)(u.s + u.len - t.s), 0)) return -1;
    }
  }
  int hi = e->o.char_max < CJK_NGRAM_MAX ? e->o.char_max : CJK_NGRAM_MAX;
  return ngrams(e, s, len, 1, hi);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Moves the scratch features, sorted, into the text's distinct features
 * with their counts. */
static int keep(evembed *e) {
  if (e->ns) qsort(e->scratch, e->ns, sizeof *e->scratch, cmp_u64);
  if (grow(&e->a, (void **)&e->f, &e->capf, e->nf + e->ns, sizeof *e->f)) return -1;
  for (size_t i = 0; i < e->ns; i++) {
    if (i > 0 && e->scratch[i] == e->scratch[i - 1]) e->f[e->nf - 1].w += 1;
    else e->f[e->nf++] = (struct feat){ e->scratch[i], 1 };
  }
  return 0;
}

int evembed_add(evembed *e, evtext_ws *ws, evtext_str text, evtext_error *err) {
  size_t nt;
  int rc = evtext_tokenize(ws, text, &nt, err);
  if (rc != EVTEXT_OK) return rc;
  e->ns = 0;
  for (size_t i = 0; i < nt;) {
    size_t j = i;
    while (j < nt && is_cjk_char(evtext_token(ws, j))) j++;
    if (j > i) {
      if (cjk_features(e, ws, i, j)) return EVTEXT_ENOMEM;
      i = j;
    } else if (word_features(e, evtext_token(ws, i++))) {
      return EVTEXT_ENOMEM;
    }
  }
  if (grow(&e->a, (void **)&e->start, &e->capn, e->n + 2, sizeof *e->start) || keep(e)) return EVTEXT_ENOMEM;
  e->start[++e->n] = e->nf;
  return EVTEXT_OK;
}

/* ---- IDF and weights ------------------------------------------------------ */

static int cmp_feat(const void *a, const void *b) { return cmp_u64(&((const struct feat *)a)->h, &((const struct feat *)b)->h); }

/* idf = ln((1 + N) / (1 + df)) + 1 (scikit-learn's smoothed IDF);
 * weight = (1 + ln tf) idf. */
int evembed_fit(evembed *e) {
  size_t nall = e->nf ? e->nf : 1;
  struct feat *all = evm_new(&e->a, nall, sizeof *all);
  if (!all) return EVTEXT_ENOMEM;
  evm_free(&e->a, e->norm, e->nnorm, sizeof *e->norm);
  e->nnorm = 2 * (e->n ? e->n : 1);
  if (!(e->norm = evm_new(&e->a, e->nnorm, sizeof *e->norm))) {
    e->nnorm = 0;
    evm_free(&e->a, all, nall, sizeof *all);
    return EVTEXT_ENOMEM;
  }
  memset(e->norm, 0, e->nnorm * sizeof *e->norm);
  for (size_t i = 0; i < e->nf; i++) all[i] = (struct feat){ e->f[i].h, 0 };
  qsort(all, e->nf, sizeof *all, cmp_feat);
  size_t nu = 0; /* distinct features, with w = document frequency */
  for (size_t i = 0; i < e->nf; i++) {
    if (nu > 0 && all[nu - 1].h == all[i].h) all[nu - 1].w += 1;
    else all[nu++] = (struct feat){ all[i].h, 1 };
  }
  for (size_t t = 0; t < e->n; t++) {
    for (size_t k = e->start[t]; k < e->start[t + 1]; k++) {
      struct feat *f = &e->f[k];
      struct feat *d = bsearch(f, all, nu, sizeof *all, cmp_feat);
      f->w = (1 + log(f->w)) * (log((1.0 + e->n) / (1.0 + d->w)) + 1);
      e->norm[2 * t + (f->h >> 63)] += f->w * f->w;
    }
    e->norm[2 * t] = sqrt(e->norm[2 * t]);
    e->norm[2 * t + 1] = sqrt(e->norm[2 * t + 1]);
  }
  evm_free(&e->a, all, nall, sizeof *all);
  return EVTEXT_OK;
}

double evembed_cosine(const evembed *e, size_t i, size_t j) {
  double dot[2] = { 0, 0 };
  size_t a = e->start[i], ae = e->start[i + 1], b = e->start[j], be = e->start[j + 1];
  while (a < ae && b < be) {
    if (e->f[a].h < e->f[b].h) a++;
    else if (e->f[a].h > e->f[b].h) b++;
    else {
      dot[e->f[a].h >> 63] += e->f[a].w * e->f[b].w;
      a++, b++;
    }
  }
  double part[2];
  for (int p = 0; p < 2; p++) {
    double n = e->norm[2 * i + p] * e->norm[2 * j + p];
    part[p] = n > 0 ? dot[p] / n : 0;
    if (part[p] > 1) part[p] = 1; /* rounding */
  }
  return (1 - e->o.char_weight) * part[0] + e->o.char_weight * part[1];
}

void evembed_dense(const evembed *e, size_t i, double *out, size_t dim) {
  memset(out, 0, dim * sizeof *out);
  double scale[2];
  for (int p = 0; p < 2; p++) {
    double share = p ? e->o.char_weight : 1 - e->o.char_weight, n = e->norm[2 * i + p];
    scale[p] = n > 0 ? sqrt(share) / n : 0;
  }
  for (size_t k = e->start[i]; k < e->start[i + 1]; k++) {
    uint64_t h = e->f[k].h;
    double sign = (h >> 32) & 1 ? -1 : 1;
    out[(h & ~CHAR_PART) % dim] += sign * e->f[k].w * scale[h >> 63];
  }
  double n = 0;
  for (size_t d = 0; d < dim; d++) n += out[d] * out[d];
  if (n > 0)
    for (size_t d = 0; d < dim; d++) out[d] /= sqrt(n);
}
