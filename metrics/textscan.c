/* The viewer's text scan (evalua/textscan.h): folded texts, each distinct
 * one once in a buffer (contexts repeat across rows and systems), each
 * followed by a NUL so no match spans two; rows as lists of text numbers. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include <utf8proc.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "evalua/textscan.h"
#include "textscan_impl.h"

struct evm_textscan *evm_ts_new(const struct evm_alloc *a) {
  struct evm_textscan *ts = evm_new(a, 1, sizeof *ts);
  if (!ts) return NULL;
  memset(ts, 0, sizeof *ts);
  ts->a = *a;
  ts->start = evm_new(a, 1, sizeof *ts->start); /* start[nstr]: the end of the buffer */
  ts->first = evm_new(a, 1, sizeof *ts->first); /* first[nrow]: the end of the references */
  if (!ts->start || !ts->first) {
    evm_ts_free(ts);
    return NULL;
  }
  ts->text = evm_new(a, 1, 1); /* a NUL before the first text, as before every other */
  if (!ts->text) {
    evm_ts_free(ts);
    return NULL;
  }
  ts->text[0] = '\0';
  ts->len = ts->cap_text = 1;
  ts->start[0] = 1;
  ts->first[0] = 0;
  ts->cap_start = ts->cap_first = 1;
  return ts;
}

void evm_ts_free(struct evm_textscan *ts) {
  if (!ts) return;
  const struct evm_alloc a = ts->a;
  evm_free(&a, ts->text, ts->cap_text, 1);
  evm_free(&a, ts->start, ts->cap_start, sizeof *ts->start);
  evm_free(&a, ts->hash, ts->cap_start, sizeof *ts->hash);
  evm_free(&a, ts->slot, ts->nslot, sizeof *ts->slot);
  evm_free(&a, ts->first, ts->cap_first, sizeof *ts->first);
  evm_free(&a, ts->key, ts->cap_first, sizeof *ts->key);
  evm_free(&a, ts->ref, ts->cap_ref, sizeof *ts->ref);
  evm_free(&a, ts->scratch, ts->cap_scratch, 1);
  evm_free(&a, ts->raw, ts->cap_raw, 1);
  evm_free(&a, ts->cp, ts->cap_cp, sizeof *ts->cp);
  evm_free(&a, ts->hit, ts->cap_hit, 1);
  evm_free(&a, ts->ok, ts->cap_ok, 1);
  evm_free(&a, ts->out, ts->cap_out, sizeof *ts->out);
  evm_free(&a, ts, 1, sizeof *ts);
}

size_t evm_ts_bytes(const struct evm_textscan *ts) {
  return sizeof *ts + ts->cap_text + ts->cap_start * (sizeof *ts->start + sizeof *ts->hash) +
         ts->nslot * sizeof *ts->slot + ts->cap_first * (sizeof *ts->first + sizeof *ts->key) +
         ts->cap_ref * sizeof *ts->ref + ts->cap_scratch + ts->cap_raw + ts->cap_cp * sizeof *ts->cp + ts->cap_hit +
         ts->cap_ok + ts->cap_out * sizeof *ts->out;
}

void evm_ts_counts(const struct evm_textscan *ts, size_t *rows, size_t *texts, size_t *text_bytes) {
  *rows = ts->nrow;
  *texts = ts->nstr;
  *text_bytes = ts->len - 1;
}

/* *p (of *cap items of size bytes) with room for need items; 0 or -1. */
int evm_ts_grow(const struct evm_alloc *a, void *pp, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t m = *cap * 2 > need ? *cap * 2 : need;
  void **p = pp;
  void *q = evm_resize(a, *p, *cap, m, size);
  if (!q) return -1;
  *p = q;
  *cap = m;
  return 0;
}

/* ---- folding ----------------------------------------------------------------- */

static int is_ascii(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] >= 0x80) return 0;
  return 1;
}

/* ASCII alone: A-Z to a-z, NUL to a space (NUL ends each text in the buffer). */
static void fold_ascii(const char *s, size_t n, char *o) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    o[i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c ? c : ' ';
  }
}

/* Decomposed and case folded, the combining diacritical marks dropped, composed again: the code
 * points' count at ts->cp, or -1 (out of memory) or -2 (not UTF-8). */
static utf8proc_ssize_t fold_points(struct evm_textscan *ts, const char *s, size_t n) {
  const utf8proc_option_t opts = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_CASEFOLD;
  utf8proc_ssize_t m;
  for (;;) {
    m = utf8proc_decompose((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, ts->cp, (utf8proc_ssize_t)ts->cap_cp,
                           opts);
    if (m < 0) return -2;
    if ((size_t)m <= ts->cap_cp) break;
    if (evm_ts_grow(&ts->a, &ts->cp, &ts->cap_cp, (size_t)m, sizeof *ts->cp)) return -1;
  }
  utf8proc_ssize_t k = 0;
  for (utf8proc_ssize_t i = 0; i < m; i++) {
    utf8proc_int32_t c = ts->cp[i];
    if (c >= 0x300 && c <= 0x36F) continue;
    ts->cp[k++] = c ? c : ' ';
  }
  return utf8proc_normalize_utf32(ts->cp, k, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
}

size_t evm_ts_fold(struct evm_textscan *ts, const char *s, size_t n, const char **out) {
  if (is_ascii((const unsigned char *)s, n)) {
    if (evm_ts_grow(&ts->a, &ts->scratch, &ts->cap_scratch, n + 1, 1)) return (size_t)-1;
    fold_ascii(s, n, ts->scratch);
    *out = ts->scratch;
    return n;
  }
  utf8proc_ssize_t m = fold_points(ts, s, n);
  if (m == -1) return (size_t)-1;
  if (m == -2) { /* not UTF-8 (evalua's reports replace such bytes): its ASCII folded, the rest as is */
    if (evm_ts_grow(&ts->a, &ts->scratch, &ts->cap_scratch, n + 1, 1)) return (size_t)-1;
    fold_ascii(s, n, ts->scratch);
    *out = ts->scratch;
    return n;
  }
  if (evm_ts_grow(&ts->a, &ts->scratch, &ts->cap_scratch, 4 * (size_t)m + 1, 1)) return (size_t)-1;
  size_t w = 0;
  for (utf8proc_ssize_t i = 0; i < m; i++)
    w += (size_t)utf8proc_encode_char(ts->cp[i], (utf8proc_uint8_t *)ts->scratch + w);
  *out = ts->scratch;
  return w;
}

/* ---- the texts, each once ------------------------------------------------------ */

static uint32_t hash_of(const char *s, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15u ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDu;
    h ^= h >> 32;
  }
  for (; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3u;
  h ^= h >> 29;
  return (uint32_t)(h ^ (h >> 32));
}

static int rehash(struct evm_textscan *ts) {
  size_t m = ts->nslot ? ts->nslot * 2 : 1024;
  uint32_t *slot = evm_new(&ts->a, m, sizeof *slot);
  if (!slot) return -1;
  memset(slot, 0, m * sizeof *slot);
  for (size_t j = 0; j < ts->nstr; j++) {
    size_t i = ts->hash[j] & (m - 1);
    while (slot[i]) i = (i + 1) & (m - 1);
    slot[i] = (uint32_t)j + 1;
  }
  evm_free(&ts->a, ts->slot, ts->nslot, sizeof *ts->slot);
  ts->slot = slot;
  ts->nslot = m;
  return 0;
}

/* The number of the text f[0..n) (folded), added when new; or -1. */
static long text_id(struct evm_textscan *ts, const char *f, size_t n) {
  if (2 * (ts->nstr + 1) > ts->nslot && rehash(ts)) return -1;
  uint32_t h = hash_of(f, n);
  size_t i = h & (ts->nslot - 1);
  for (; ts->slot[i]; i = (i + 1) & (ts->nslot - 1)) {
    size_t j = ts->slot[i] - 1;
    if (ts->hash[j] == h && ts->start[j + 1] - ts->start[j] - 1 == n && !memcmp(ts->text + ts->start[j], f, n))
      return (long)j;
  }
  size_t cap_start = ts->cap_start;
  if (evm_ts_grow(&ts->a, &ts->text, &ts->cap_text, ts->len + n + 1, 1) ||
      evm_ts_grow(&ts->a, &ts->start, &ts->cap_start, ts->nstr + 2, sizeof *ts->start))
    return -1;
  if (ts->cap_start != cap_start) { /* hash[] keeps start[]'s capacity */
    uint32_t *q = evm_resize(&ts->a, ts->hash, ts->hash ? cap_start : 0, ts->cap_start, sizeof *ts->hash);
    if (!q) return -1;
    ts->hash = q;
  }
  memcpy(ts->text + ts->len, f, n);
  ts->text[ts->len + n] = '\0';
  ts->len += n + 1;
  ts->hash[ts->nstr] = h;
  ts->slot[i] = (uint32_t)ts->nstr + 1;
  ts->start[++ts->nstr] = ts->len;
  return (long)ts->nstr - 1;
}

int evm_ts_row(struct evm_textscan *ts, int64_t key) {
  size_t cap = ts->cap_first;
  if (evm_ts_grow(&ts->a, &ts->first, &ts->cap_first, ts->nrow + 2, sizeof *ts->first)) return -1;
  if (ts->cap_first != cap) {
    int64_t *q = evm_resize(&ts->a, ts->key, ts->key ? cap : 0, ts->cap_first, sizeof *ts->key);
    if (!q) return -1;
    ts->key = q;
  }
  ts->key[ts->nrow] = key;
  ts->first[ts->nrow + 1] = ts->first[ts->nrow];
  ts->nrow++;
  return 0;
}

int evm_ts_text(struct evm_textscan *ts, const char *s, size_t n) {
  const char *f;
  size_t m = evm_ts_fold(ts, s, n, &f);
  if (m == (size_t)-1) return -1;
  long j = text_id(ts, f, m);
  if (j < 0 || evm_ts_grow(&ts->a, &ts->ref, &ts->cap_ref, ts->nref + 1, sizeof *ts->ref)) return -1;
  ts->ref[ts->nref++] = (uint32_t)j;
  ts->first[ts->nrow]++;
  return 0;
}

/* ---- the search ------------------------------------------------------------------- */

/* Whether the code point that ends before text[off] is a letter or digit (text[off - 1] is not NUL). */
static int after_word_char(const char *text, size_t off) {
  unsigned char c = (unsigned char)text[off - 1];
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
  size_t b = off - 1;
  while (b > 0 && off - b < 4 && ((unsigned char)text[b] & 0xC0) == 0x80) b--;
  utf8proc_int32_t cp;
  if (utf8proc_iterate((const utf8proc_uint8_t *)text + b, (utf8proc_ssize_t)(off - b), &cp) <= 0) return 0;
  switch (utf8proc_category(cp)) {
  case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
  case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
    return 1;
  default:
    return 0;
  }
}

/* The number of the text that holds byte off: the last start at or before it. */
static size_t text_at(const struct evm_textscan *ts, size_t off) {
  size_t lo = 0, hi = ts->nstr; /* start[lo] <= off < start[hi] */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (ts->start[mid] <= off) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Whether a term that starts at text[off] is where it may be: anywhere, or at the start of a word. */
static int placed(const struct evm_ts_term *t, const char *text, size_t off) {
  return !t->word_start || !text[off - 1] || !after_word_char(text, off);
}

/* The first place in [p, end) where term t starts (placed), or NULL,
 * a byte at a time with memmem; p[-1] is readable (the buffer starts with
 * a NUL). */
static const char *find_bytes(const char *text, const char *p, const char *end, const struct evm_ts_term *t) {
  for (; (size_t)(end - p) >= t->n; p++) {
    const char *q = memmem(p, (size_t)(end - p), t->s, t->n);
    if (!q) return NULL;
    p = q;
    if (placed(t, text, (size_t)(q - text))) return q;
  }
  return NULL;
}

#if defined(__SSE2__)
/* As find_bytes, sixteen places at a time while sixteen more fit, then
 * find_bytes for the rest. glibc's memmem reads 1.3 GB/s for a needle of
 * two bytes: here the places whose first and last bytes are the needle's,
 * and whose byte before is no ASCII letter or digit for a word's start
 * (SSE2, in every x86-64), are kept, each then compared whole. */
static const char *find_wide(const char *text, const char *p, const char *end, const struct evm_ts_term *t) {
  const char *s = t->s;
  size_t n = t->n;
  const __m128i f = _mm_set1_epi8(s[0]), l = _mm_set1_epi8(s[n - 1]);
  const __m128i a = _mm_set1_epi8('a'), z = _mm_set1_epi8('z' - 'a'), d = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
  const __m128i zero = _mm_setzero_si128();
  while ((size_t)(end - p) >= n - 1 + 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 1));
    __m128i m = _mm_and_si128(_mm_cmpeq_epi8(x, f), _mm_cmpeq_epi8(y, l));
    if (t->word_start) { /* the byte before: a-z or 0-9 is inside a word (the text has no A-Z) */
      __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p - 1));
      __m128i az = _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(b, a), z), zero);
      __m128i dg = _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(b, d), nine), zero);
      m = _mm_andnot_si128(_mm_or_si128(az, dg), m);
    }
    for (unsigned bits = (unsigned)_mm_movemask_epi8(m); bits; bits &= bits - 1) {
      int i = __builtin_ctz(bits);
      if (!memcmp(p + i + 1, s + 1, n - 1) && placed(t, text, (size_t)(p + i - text))) return p + i;
    }
    p += 16;
  }
  return find_bytes(text, p, end, t);
}
#endif

const char *evm_ts_first(const char *text, const char *p, const char *end, const struct evm_ts_term *t, int portable) {
#if defined(__SSE2__)
  if (!portable) return find_wide(text, p, end, t);
#endif
  (void)portable;
  return find_bytes(text, p, end, t);
}

/* hit[j] = 1 for each text j that holds the term. */
static void mark(struct evm_textscan *ts, const struct evm_ts_term *t) {
  memset(ts->hit, 0, ts->nstr);
  const char *end = ts->text + ts->len;
  for (const char *p = ts->text + 1; p < end;) {
    p = evm_ts_first(ts->text, p, end, t, 0);
    if (!p) break;
    size_t j = text_at(ts, (size_t)(p - ts->text));
    ts->hit[j] = 1;
    p = ts->text + ts->start[j + 1];
  }
}

size_t evm_ts_find(struct evm_textscan *ts, const struct evm_ts_term *terms, size_t nterms, int smaller,
                   const int64_t **keys, size_t *nkeys, int *misses) {
  if (evm_ts_grow(&ts->a, &ts->hit, &ts->cap_hit, ts->nstr + 1, 1) ||
      evm_ts_grow(&ts->a, &ts->ok, &ts->cap_ok, ts->nrow + 1, 1) ||
      evm_ts_grow(&ts->a, &ts->out, &ts->cap_out, ts->nrow + 1, sizeof *ts->out))
    return (size_t)-1;
  memset(ts->ok, 1, ts->nrow);
  for (size_t i = 0; i < nterms; i++) {
    if (terms[i].n == 0) continue;
    mark(ts, &terms[i]);
    for (size_t r = 0; r < ts->nrow; r++) {
      if (!ts->ok[r]) continue;
      int any = 0;
      for (uint64_t x = ts->first[r]; x < ts->first[r + 1] && !any; x++) any = ts->hit[ts->ref[x]];
      ts->ok[r] = (uint8_t)any;
    }
  }
  size_t hits = 0;
  for (size_t r = 0; r < ts->nrow; r++) hits += ts->ok[r];
  *misses = smaller && hits > ts->nrow / 2;
  size_t n = 0;
  for (size_t r = 0; r < ts->nrow; r++)
    if (ts->ok[r] != *misses) ts->out[n++] = ts->key[r];
  *keys = ts->out;
  *nkeys = n;
  return hits;
}
