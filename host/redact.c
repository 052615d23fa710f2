/* Scrubbing secrets from answers (see redact.h). A view is a text decoded
 * from the answer with, for each of its bytes, the range of raw bytes it
 * came from, so a match found in any view is cut out of the raw answer. */
#define _GNU_SOURCE /* memmem */
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
  uint32_t *from, *to; /* raw range [from, to) of each byte; NULL: the raw text itself */
  size_t n, cap;
};

struct group {
  const char *key; /* the raw key literal; NULL for the key names themselves */
  size_t key_len;
  int depth;
  struct view v;
};

struct scan {
  const char *s;
  size_t n;
  const char *const *secrets;
  unsigned char *mark; /* 1: covered by a match; 2: a match starts here */
  struct group groups[MAX_GROUPS];
  int n_groups;
  int oom;
};

static void view_free(struct view *v) {
  free(v->b), free(v->from), free(v->to);
  memset(v, 0, sizeof *v);
}

static int view_push(struct scan *sc, struct view *v, unsigned char c, uint32_t from, uint32_t to) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 64;
    unsigned char *b = realloc(v->b, cap);
    if (b) v->b = b;
    uint32_t *f = b ? realloc(v->from, cap * sizeof *f) : NULL;
    if (f) v->from = f;
    uint32_t *t = f ? realloc(v->to, cap * sizeof *t) : NULL;
    if (!t) return sc->oom = 1, -1;
    v->to = t, v->cap = cap;
  }
  v->b[v->n] = c, v->from[v->n] = from, v->to[v->n] = to;
  v->n++;
  return 0;
}

/* Marks every occurrence of every secret in v on the raw text. */
static void search(struct scan *sc, const struct view *v) {
  for (const char *const *k = sc->secrets; *k; k++) {
    size_t kl = strlen(*k);
    if (kl < REDACT_MIN_SECRET) continue;
    for (const unsigned char *p = v->b, *end = v->b + v->n; (size_t)(end - p) >= kl;) {
      p = memmem(p, (size_t)(end - p), *k, kl);
      if (!p) break;
      size_t i = (size_t)(p - v->b);
      for (size_t b = i; b < i + kl; b++) /* byte by byte: the parts may lie in several strings */
        for (size_t x = v->from ? v->from[b] : b, z = v->to ? v->to[b] : b + 1; x < z; x++) sc->mark[x] |= 1;
      sc->mark[v->from ? v->from[i] : i] |= 2;
      p++;
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

/* Appends the bytes of in[0..n) with their escapes decoded (code points as
 * UTF-8) to out. in's raw ranges are from/to, or base + i when those are
 * NULL (a piece of the raw text). */
static void decode_into(struct scan *sc, struct view *out, const unsigned char *in, size_t n,
                        const uint32_t *from, const uint32_t *to, size_t base) {
  for (size_t i = 0; i < n && !sc->oom;) {
    unsigned cp;
    size_t len = escape_at(in + i, in + n, &cp);
    if (!len) len = 1, cp = 0x110000; /* a byte as it is */
    uint32_t a = from ? from[i] : (uint32_t)(base + i), z = to ? to[i + len - 1] : (uint32_t)(base + i + len);
    unsigned char u[4];
    int k = 0;
    if (cp == 0x110000) u[k++] = in[i];
    else if (cp < 0x80) u[k++] = (unsigned char)cp;
    else if (cp < 0x800) u[k++] = (unsigned char)(0xC0 | cp >> 6), u[k++] = (unsigned char)(0x80 | (cp & 63));
    else if (cp < 0x10000) {
      u[k++] = (unsigned char)(0xE0 | cp >> 12), u[k++] = (unsigned char)(0x80 | (cp >> 6 & 63));
      u[k++] = (unsigned char)(0x80 | (cp & 63));
    } else {
      u[k++] = (unsigned char)(0xF0 | cp >> 18), u[k++] = (unsigned char)(0x80 | (cp >> 12 & 63));
      u[k++] = (unsigned char)(0x80 | (cp >> 6 & 63)), u[k++] = (unsigned char)(0x80 | (cp & 63));
    }
    for (int j = 0; j < k; j++) view_push(sc, out, u[j], a, z);
    i += len;
  }
}

/* Searches v, then v decoded again and again while it holds escapes. v is
 * consumed unless it is the raw text. */
static void search_levels(struct scan *sc, struct view v) {
  for (int level = 0; !sc->oom; level++) {
    search(sc, &v);
    struct view next = {0};
    if (level < MAX_LEVELS && memchr(v.b, '\\', v.n)) decode_into(sc, &next, v.b, v.n, v.from, v.to, 0);
    int same = next.n == v.n;
    if (v.from) view_free(&v);
    if (!next.n || same) {
      view_free(&next);
      return;
    }
    v = next;
  }
}

static struct view *group_of(struct scan *sc, const char *key, size_t key_len, int depth) {
  for (int i = 0; i < sc->n_groups; i++) {
    struct group *g = &sc->groups[i];
    if (g->depth == depth && g->key_len == key_len && (!key || (g->key && !memcmp(g->key, key, key_len))))
      return &g->v;
  }
  if (sc->n_groups == MAX_GROUPS) return &sc->groups[MAX_GROUPS - 1].v;
  struct group *g = &sc->groups[sc->n_groups++];
  g->key = key, g->key_len = key_len, g->depth = depth;
  return &g->v;
}

/* Files every JSON string of the raw text, decoded, under its key name and
 * depth (key names under their own). Tolerant: text that is not JSON makes
 * odd groups, never an error. */
static void collect_strings(struct scan *sc) {
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
      size_t j = i + 1;
      while (j < n && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      if (j >= n) return; /* an unterminated string: the raw levels cover it */
      size_t k = j + 1;
      while (k < n && strchr(" \t\r\n", s[k]) && s[k]) k++;
      int is_key = k < n && s[k] == ':';
      struct view *v = is_key ? group_of(sc, NULL, 0, -1) : group_of(sc, key[depth], key_len[depth], depth);
      decode_into(sc, v, (const unsigned char *)s + i + 1, j - i - 1, NULL, NULL, i + 1);
      if (is_key) key[depth] = s + i + 1, key_len[depth] = j - i - 1;
      i = j;
    }
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

static int any_secret(const char *const *secrets) {
  for (const char *const *k = secrets; k && *k; k++)
    if (strlen(*k) >= REDACT_MIN_SECRET) return 1;
  return 0;
}

char *redact(char *s, size_t *n, const char *const *secrets) {
  if (!s || !any_secret(secrets)) return s;
  struct scan sc = {.s = s, .n = *n, .secrets = secrets};
  sc.oom = *n >= UINT32_MAX || !(sc.mark = calloc(*n + 1, 1));
  if (!sc.oom) search_levels(&sc, (struct view){.b = (unsigned char *)s, .n = *n});
  if (!sc.oom) collect_strings(&sc);
  for (int i = 0; i < sc.n_groups; i++) {
    if (!sc.oom && sc.groups[i].v.n) search_levels(&sc, sc.groups[i].v);
    else view_free(&sc.groups[i].v);
  }
  size_t marked = 0;
  for (size_t i = 0; !sc.oom && i < *n; i++) marked |= sc.mark[i];
  char *out = sc.oom || !marked ? NULL : rebuild(&sc, n);
  free(sc.mark);
  if (!sc.oom && !marked) return s;
  memset(s, 0, sc.n);
  free(s);
  return out;
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
