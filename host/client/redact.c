/* Scrubbing secrets from answers (see redact.h). A view is a text decoded
 * from the answer; a first pass builds the views as plain bytes and only
 * looks for the secrets. Only when one is found (never, with an honest
 * server) does a second pass build them again with, for each byte, the
 * range of raw bytes it came from, so each match is cut out of the raw
 * answer. Decoding never lengthens a text, so every view fits in a buffer
 * of the answer's size. */
#define _GNU_SOURCE /* memmem */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

#define REDACTED "[redacted]"
#define MAX_LEVELS 8  /* escapes decoded at most this many times over */
#define MAX_GROUPS 64 /* (key, depth) pairs kept apart; later ones share the last */
#define MAX_DEPTH 64

struct view {
  unsigned char *b;
  uint32_t *from, *to; /* raw range [from, to) of each byte; NULL: b is the raw text */
  size_t n;
};

struct literal {
  uint32_t at, len; /* the string's content in the raw text */
  int group;
};

struct scan {
  const char *s;
  size_t n;
  const char *const *secrets;
  unsigned char *mark; /* the second pass: 1 covered by a match, 2 a match starts here */
  struct view a, b;    /* scratch, room for n bytes each */
  struct literal *lits;
  size_t n_lits, cap_lits;
  const char *group_key[MAX_GROUPS];
  size_t group_len[MAX_GROUPS];
  int group_depth[MAX_GROUPS], n_groups;
  int found, oom;
};

/* Looks for every secret in v; in the second pass marks each occurrence
 * on the raw text, byte by byte (its parts may lie in several strings). */
static void search(struct scan *sc, const struct view *v) {
  for (const char *const *k = sc->secrets; *k; k++) {
    size_t kl = strlen(*k);
    if (kl < REDACT_MIN_SECRET) continue;
    for (const unsigned char *p = v->b, *end = v->b + v->n; (size_t)(end - p) >= kl; p++) {
      if (!(p = memmem(p, (size_t)(end - p), *k, kl))) break;
      sc->found = 1;
      if (!sc->mark) return;
      size_t i = (size_t)(p - v->b);
      for (size_t b = i; b < i + kl; b++)
        for (size_t x = v->from ? v->from[b] : b, z = v->to ? v->to[b] : b + 1; x < z; x++) sc->mark[x] |= 1;
      sc->mark[v->from ? v->from[i] : i] |= 2;
    }
  }
}

static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 1;
}

/* Length of the JSON escape at p (before end), with its code point in *cp
 * (a surrogate pair read as one); 0 when p holds none. */
static size_t escape_at(const unsigned char *p, const unsigned char *end, unsigned *cp) {
  static const char simple[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
  if (end - p < 2 || p[0] != '\\') return 0;
  for (const char *s = simple; *s; s += 2)
    if (p[1] == (unsigned char)s[0]) return *cp = (unsigned char)s[1], 2;
  if (p[1] != 'u' || end - p < 6 || !hex4(p + 2, cp)) return 0;
  unsigned lo;
  if (*cp >= 0xD800 && *cp < 0xDC00 && end - p >= 12 && p[6] == '\\' && p[7] == 'u' && hex4(p + 8, &lo)
      && lo >= 0xDC00 && lo < 0xE000) {
    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    return 12;
  }
  return 6;
}

static int utf8(unsigned cp, unsigned char u[4]) {
  if (cp < 0x80) return u[0] = (unsigned char)cp, 1;
  if (cp < 0x800) return u[0] = (unsigned char)(0xC0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 63)), 2;
  if (cp < 0x10000) {
    u[0] = (unsigned char)(0xE0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
    u[2] = (unsigned char)(0x80 | (cp & 63));
    return 3;
  }
  u[0] = (unsigned char)(0xF0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
  u[2] = (unsigned char)(0x80 | (cp >> 6 & 63)), u[3] = (unsigned char)(0x80 | (cp & 63));
  return 4;
}

/* Appends in[0..n) with its escapes decoded (code points as UTF-8) to out;
 * in's raw ranges are from/to, or base + i when from is NULL (a piece of
 * the raw text); out's are kept when it has maps. Never longer than n.
 * Without maps, the bytes between escapes are copied a run at a time. */
static void decode_into(struct view *out, const unsigned char *in, size_t n, const uint32_t *from,
                        const uint32_t *to, size_t base) {
  unsigned char *w = out->b + out->n;
  uint32_t *f = out->from ? out->from + out->n : NULL, *t = out->from ? out->to + out->n : NULL;
  for (size_t i = 0; i < n;) {
    if (!f) {
      const unsigned char *bs = memchr(in + i, '\\', n - i);
      size_t run = bs ? (size_t)(bs - (in + i)) : n - i;
      memcpy(w, in + i, run);
      w += run, i += run;
      if (i == n) break;
    }
    unsigned cp;
    unsigned char u[4];
    size_t len = escape_at(in + i, in + n, &cp);
    int k = len ? utf8(cp, u) : (u[0] = in[i], len = 1, 1);
    uint32_t a = from ? from[i] : (uint32_t)(base + i), z = from ? to[i + len - 1] : (uint32_t)(base + i + len);
    for (int j = 0; j < k; j++) {
      *w++ = u[j];
      if (f) *f++ = a, *t++ = z;
    }
    i += len;
  }
  out->n = (size_t)(w - out->b);
}

/* Searches v (a or b), then v decoded again and again while it holds
 * escapes, ping-ponging between the scratch views. */
static void search_levels(struct scan *sc, struct view *v) {
  for (int level = 0;; level++) {
    search(sc, v);
    if (level == MAX_LEVELS || !memchr(v->b, '\\', v->n)) return;
    struct view *next = v == &sc->a ? &sc->b : &sc->a;
    next->n = 0;
    decode_into(next, v->b, v->n, v->from, v->to, 0);
    if (next->n == v->n) return; /* backslashes that escape nothing */
    v = next;
  }
}

static int group_of(struct scan *sc, const char *key, size_t len, int depth) {
  for (int i = 0; i < sc->n_groups; i++)
    if (sc->group_depth[i] == depth && sc->group_len[i] == len && (!len || !memcmp(sc->group_key[i], key, len)))
      return i;
  if (sc->n_groups == MAX_GROUPS) return MAX_GROUPS - 1;
  sc->group_key[sc->n_groups] = key, sc->group_len[sc->n_groups] = len, sc->group_depth[sc->n_groups] = depth;
  return sc->n_groups++;
}

static void add_literal(struct scan *sc, size_t at, size_t len, int group) {
  if (sc->n_lits == sc->cap_lits) {
    size_t cap = sc->cap_lits ? 2 * sc->cap_lits : 64;
    struct literal *l = realloc(sc->lits, cap * sizeof *l);
    if (!l) return (void)(sc->oom = 1);
    sc->lits = l, sc->cap_lits = cap;
  }
  sc->lits[sc->n_lits++] = (struct literal){(uint32_t)at, (uint32_t)len, group};
}

/* Lists every JSON string of the raw text under its key name and depth
 * (key names under a group of their own, depth -1). Tolerant: text that
 * is not JSON makes odd groups, never an error. */
static void list_strings(struct scan *sc) {
  const char *s = sc->s, *key[MAX_DEPTH + 1] = {NULL};
  size_t key_len[MAX_DEPTH + 1] = {0}, n = sc->n;
  int depth = 0;
  for (size_t i = 0; i < n && !sc->oom; i++) {
    char c = s[i];
    if (c == '{' || c == '[') {
      if (depth < MAX_DEPTH) depth++, key[depth] = key[depth - 1], key_len[depth] = key_len[depth - 1];
    } else if ((c == '}' || c == ']') && depth > 0) {
      depth--;
    } else if (c == '"') {
      size_t j = i + 1; /* the closing quote: one not after an odd run of backslashes */
      for (const char *q; (q = memchr(s + j, '"', n - j)); j = (size_t)(q - s) + 1) {
        size_t run = 0;
        while (q - run > s + i + 1 && q[-1 - (ptrdiff_t)run] == '\\') run++;
        if (run % 2 == 0) {
          j = (size_t)(q - s);
          break;
        }
      }
      if (j >= n || s[j] != '"') return; /* an unterminated string: the raw levels cover it */
      size_t k = j + 1;
      while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\n')) k++;
      int is_key = k < n && s[k] == ':';
      add_literal(sc, i + 1, j - i - 1, is_key ? group_of(sc, "", 0, -1) : group_of(sc, key[depth], key_len[depth], depth));
      if (is_key) key[depth] = s + i + 1, key_len[depth] = j - i - 1;
      i = j;
    }
  }
}

/* Every view: the raw text and its decodings, then each group's strings
 * joined, decoded, and their decodings. */
static void search_all(struct scan *sc) {
  struct view raw = {.b = (unsigned char *)sc->s, .n = sc->n};
  search(sc, &raw);
  if (memchr(sc->s, '\\', sc->n)) {
    sc->a.n = 0;
    decode_into(&sc->a, raw.b, raw.n, NULL, NULL, 0);
    if (sc->a.n < raw.n) search_levels(sc, &sc->a);
  }
  for (int g = 0; g < sc->n_groups && !(sc->found && !sc->mark); g++) {
    sc->a.n = 0;
    for (size_t i = 0; i < sc->n_lits; i++)
      if (sc->lits[i].group == g) decode_into(&sc->a, raw.b + sc->lits[i].at, sc->lits[i].len, NULL, NULL, sc->lits[i].at);
    search_levels(sc, &sc->a);
  }
}

/* The raw text with each run of marked bytes that holds a match start
 * replaced by REDACTED and other marked runs removed. */
static char *rebuild(struct scan *sc, size_t *out_len) {
  size_t rl = strlen(REDACTED), len = 0;
  for (size_t i = 0; i < sc->n; i++) len += sc->mark[i] ? (sc->mark[i] & 2 ? rl : 0) : 1;
  char *out = malloc(len + 1), *w = out;
  if (!out) return NULL;
  for (size_t i = 0; i < sc->n;) {
    if (!sc->mark[i]) {
      *w++ = sc->s[i++];
      continue;
    }
    int starts = 0;
    for (; i < sc->n && sc->mark[i]; i++) starts |= sc->mark[i] & 2;
    if (starts) memcpy(w, REDACTED, rl), w += rl;
  }
  *w = '\0';
  *out_len = (size_t)(w - out);
  return out;
}

/* The second pass's maps and marks; -1 when memory runs out. */
static int add_maps(struct scan *sc) {
  size_t n = sc->n + 1;
  sc->mark = calloc(n, 1);
  for (struct view *v = &sc->a; v <= &sc->b; v++) {
    v->from = malloc(n * sizeof *v->from);
    v->to = malloc(n * sizeof *v->to);
    if (!v->from || !v->to) return -1;
  }
  return sc->mark ? 0 : -1;
}

static int any_secret(const char *const *secrets) {
  for (const char *const *k = secrets; k && *k; k++)
    if (strlen(*k) >= REDACT_MIN_SECRET) return 1;
  return 0;
}

char *redact(char *s, size_t *n, const char *const *secrets) {
  if (!s || !any_secret(secrets)) return s;
  struct scan sc = {.s = s, .n = *n, .secrets = secrets};
  sc.a.b = malloc(*n + 1), sc.b.b = malloc(*n + 1);
  sc.oom = *n >= UINT32_MAX || !sc.a.b || !sc.b.b;
  if (!sc.oom) list_strings(&sc);
  if (!sc.oom) search_all(&sc);
  char *out = s;
  if (!sc.oom && sc.found) { /* again, with maps, to cut the matches out */
    sc.oom = add_maps(&sc) != 0;
    if (!sc.oom) search_all(&sc);
    out = sc.oom ? NULL : rebuild(&sc, n);
  }
  free(sc.mark), free(sc.lits);
  for (struct view *v = &sc.a; v <= &sc.b; v++) free(v->b), free(v->from), free(v->to);
  if (out == s && !sc.oom) return s;
  memset(s, 0, sc.n);
  free(s);
  return sc.oom ? NULL : out;
}

char *redact_latin1_form(const char *secret) {
  size_t n = strlen(secret), high = 0;
  for (size_t i = 0; i < n; i++) high += (unsigned char)secret[i] >= 0x80;
  char *out = high ? malloc(n + high + 1) : NULL, *w = out;
  if (!out) return NULL;
  for (const unsigned char *p = (const unsigned char *)secret; *p; p++) {
    if (*p < 0x80) *w++ = (char)*p;
    else *w++ = (char)(0xC0 | *p >> 6), *w++ = (char)(0x80 | (*p & 63));
  }
  *w = '\0';
  return out;
}

char *redact_base64(const char *s) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t n = strlen(s);
  char *out = malloc((n + 2) / 3 * 4 + 1), *w = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned char)s[i] << 16 | (i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0)
               | (i + 2 < n ? (unsigned char)s[i + 2] : 0);
    *w++ = digits[v >> 18 & 63], *w++ = digits[v >> 12 & 63];
    *w++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
    *w++ = i + 2 < n ? digits[v & 63] : '=';
  }
  *w = '\0';
  return out;
}
