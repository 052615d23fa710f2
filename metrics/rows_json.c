/* A JSON reader that writes one row straight into the table's columns: no
 * document tree, strings decoded once into the arena, numbers parsed by the
 * exact fast path when they allow it (docs/internals.md says why a reader
 * of our own and not a library's tree). RFC 8259 strictly: no NaN,
 * Infinity, hex, leading zeros or control characters; UTF-8 checked. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/rows.h"
#include "evalua/scan.h"

#define MAX_DEPTH 64

struct jp {
  const char *p, *end, *base;
  struct evt_table *t;
  const struct evt_schema *sc;
  char *err;
  size_t errlen;
  unsigned lists_seen; /* bit k: list k already read in this row */
  size_t next_col;     /* the column the next scalar key likely names: rows repeat their keys' order */
};

static int fail(struct jp *j, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->err, j->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

static int syntax(struct jp *j, const char *what) {
  if (j->p >= j->end) return fail(j, "invalid JSON: %s at the end of the line", what);
  unsigned char c = (unsigned char)*j->p;
  if (c >= 0x21 && c < 0x7f)
    return fail(j, "invalid JSON at column %zu: %s, found '%c'", (size_t)(j->p - j->base) + 1, what, c);
  return fail(j, "invalid JSON at column %zu: %s", (size_t)(j->p - j->base) + 1, what);
}

/* Rows rarely hold whitespace: one compare per call finds there is none. */
static void ws(struct jp *j) {
  if (j->p >= j->end || (unsigned char)*j->p > ' ') return;
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int eat(struct jp *j, char c, const char *what) {
  ws(j);
  if (j->p < j->end && *j->p == c) return j->p++, 0;
  return syntax(j, what);
}

/* The JSON type of the value at p, for messages. */
static const char *kind_at(struct jp *j) {
  ws(j);
  if (j->p >= j->end) return "nothing";
  switch (*j->p) {
  case '"': return "string";
  case '{': return "object";
  case '[': return "list";
  case 't': case 'f': return "boolean";
  case 'n': return "null";
  default: break;
  }
  if (*j->p != '-' && (*j->p < '0' || *j->p > '9')) return "invalid JSON";
  for (const char *q = j->p; q < j->end && strchr("-+0123456789.eE", *q); q++)
    if (*q == '.' || *q == 'e' || *q == 'E') return "number";
  return "integer";
}

/* ---- strings ------------------------------------------------------------------ */

static int hex4(const char *p, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0')
               : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
               : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10) : 16u;
    if (d == 16) return -1;
    *v = *v * 16 + d;
  }
  return 0;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Length of the valid UTF-8 sequence at p (first byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  unsigned cp = c & (0x3F >> (n - 1));
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

static int escape(struct jp *j, char *o, size_t *w) {
  if (j->p >= j->end) return syntax(j, "unterminated string"); /* a backslash ends the line */
  char c = *j->p++;
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k = c ? strchr(from, c) : NULL;
  if (k) return o[(*w)++] = to[k - from], 0;
  unsigned cp, lo;
  if (c != 'u' || j->end - j->p < 4 || hex4(j->p, &cp)) return j->p--, syntax(j, "bad escape in a string");
  j->p += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || hex4(j->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
      return syntax(j, "a lone UTF-16 surrogate in a \\u escape");
    j->p += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return syntax(j, "a lone UTF-16 surrogate in a \\u escape");
  }
  *w += put_utf8(o + *w, cp);
  return 0;
}

/* The rest of a string from p, its first w bytes decoded at o: escapes,
 * multibyte sequences, then plain bytes again, to the closing quote. */
static int string_rest(struct jp *j, char *o, size_t w, size_t *len) {
  for (;;) {
    if (j->p >= j->end) return syntax(j, "unterminated string");
    unsigned char c = (unsigned char)*j->p;
    if (c == '"') break;
    if (c == '\\') {
      j->p++;
      if (escape(j, o, &w)) return -1;
    } else if (c < 0x20) {
      return syntax(j, "a control character in a string");
    } else { /* a run of multibyte sequences (Chinese text) checked, then copied at once */
      const char *run = j->p;
      do {
        size_t n = utf8_len((const unsigned char *)j->p, (const unsigned char *)j->end);
        if (!n) return syntax(j, "invalid UTF-8 in a string");
        j->p += n;
      } while (j->p < j->end && (unsigned char)*j->p >= 0x80);
      memcpy(o + w, run, (size_t)(j->p - run));
      w += (size_t)(j->p - run);
    }
    size_t k = evt_copy_plain(o + w, j->p, (size_t)(j->end - j->p)); /* many bytes at a time (evalua/scan.h) */
    w += k, j->p += k;
  }
  j->p++;
  if (w > UINT32_MAX) return fail(j, "a string longer than 4 GB");
  *len = w;
  return 0;
}

/* Decodes the string at p (after its opening quote) to the end of the
 * arena without taking it; *len gets its length. Inline up to the first
 * byte that is not plain: most strings (ids, keys, English text) end
 * there with their quote. */
static inline int string_body(struct jp *j, size_t *len) {
  size_t room = (size_t)(j->end - j->p);
  struct evt_table *t = j->t;
  char *o = t->text_cap - t->text_len > room ? t->text + t->text_len : evt_text_room(t, room);
  if (!o) return fail(j, "not enough memory");
  size_t k = evt_copy_plain(o, j->p, room);
  j->p += k;
  if (k < room && *j->p == '"' && k <= UINT32_MAX) return j->p++, *len = k, 0;
  return string_rest(j, o, k, len);
}

/* A string value into the arena. */
#define TOO_LONG "a string longer than 16 MB"

static inline int take_string(struct jp *j, evt_sref *out) {
  size_t len;
  j->p++; /* the quote */
  if (string_body(j, &len)) return -1;
  if (len > EVT_MAX_FIELD) return fail(j, TOO_LONG);
  *out = evt_text_take(j->t, len);
  return 0;
}

/* A failure inside a value, named by its field (its first 100 bytes):
 * "field 'answer': ...". */
static int name_field(struct jp *j, const char *name, size_t len, size_t i) {
  if (strcmp(j->err, TOO_LONG) && strcmp(j->err, "number out of range")) return -1;
  char what[64];
  snprintf(what, sizeof what, "%s", j->err);
  int n = (int)(len < 100 ? len : 100);
  if (i) return fail(j, "field '%.*s[%zu]': %s", n, name, i, what);
  return fail(j, "field '%.*s': %s", n, name, what);
}

/* ---- numbers ------------------------------------------------------------------- */

static const double pow10s[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number per RFC 8259; an integer (no fraction or exponent) that fits 64
 * bits is an integer. Decimals with at most 15 digits and a small exponent
 * are exact in one multiply or divide (Clinger's fast path); others go
 * through strtod. */
static int number(struct jp *j, int *is_int, int64_t *iv, double *dv) {
  const char *s = j->p, *q = j->p;
  int neg = q < j->end && *q == '-';
  q += neg;
  if (q >= j->end || *q < '0' || *q > '9') return syntax(j, "expected a value");
  uint64_t mant = 0;
  int digits = 0, exp10 = 0, frac = 0, exp = 0;
  if (*q == '0') q++, digits = 0;
  else
    for (; q < j->end && *q >= '0' && *q <= '9'; q++) {
      if (digits < 19) mant = mant * 10 + (uint64_t)(*q - '0'), digits += mant != 0;
      else exp10++;
    }
  if (q < j->end && *q >= '0' && *q <= '9') return j->p = q, syntax(j, "a number with a leading zero");
  if (q < j->end && *q == '.') {
    frac = 1;
    if (++q >= j->end || *q < '0' || *q > '9') return j->p = q, syntax(j, "a digit after the decimal point");
    for (; q < j->end && *q >= '0' && *q <= '9'; q++)
      if (digits < 19) mant = mant * 10 + (uint64_t)(*q - '0'), digits += mant != 0, exp10--;
  }
  if (q < j->end && (*q == 'e' || *q == 'E')) {
    exp = 1;
    q++;
    if (q < j->end && (*q == '+' || *q == '-')) q++;
    if (q >= j->end || *q < '0' || *q > '9') return j->p = q, syntax(j, "a digit in the exponent");
    while (q < j->end && *q >= '0' && *q <= '9') q++;
  }
  j->p = q;
  *is_int = !frac && !exp && digits < 19;
  if (*is_int) {
    *iv = neg ? -(int64_t)mant : (int64_t)mant;
    return 0;
  }
  if (!exp && digits <= 15 && exp10 >= -22 && exp10 <= 0) {
    double d = (double)mant;
    *dv = neg ? -(d / pow10s[-exp10]) : d / pow10s[-exp10];
    return 0;
  }
  char buf[512];
  size_t n = (size_t)(q - s);
  if (n >= sizeof buf) return fail(j, "a number of more than 500 characters");
  memcpy(buf, s, n);
  buf[n] = '\0';
  *dv = strtod(buf, NULL);
  if (!isfinite(*dv)) return fail(j, "%s", "number out of range");
  return 0;
}

/* The common number, inline: at most 15 digits and no exponent, so that
 * its digits are exact in a double and it is one division (number's own
 * fast path, and its result); 1 when read, 0 (nothing moved) when not
 * short, and quick_number gives those to number. */
static inline int short_number(const char **at, const char *end, int *is_int, int64_t *iv, double *dv) {
  const char *q = *at;
  int neg = q < end && *q == '-';
  const char *first = q += neg;
  uint64_t m = 0; /* wraps on long runs of digits, which are not short */
  unsigned v;
  while (q < end && (v = (unsigned char)*q - (unsigned)'0') < 10) m = m * 10 + v, q++;
  size_t ni = (size_t)(q - first), nf = 0;
  int frac = q < end && *q == '.';
  if (frac) {
    const char *f = ++q;
    while (q < end && (v = (unsigned char)*q - (unsigned)'0') < 10) m = m * 10 + v, q++;
    nf = (size_t)(q - f);
  }
  if (!ni || (frac && !nf) || ni + nf > 15 || (ni > 1 && *first == '0') || (q < end && (*q == 'e' || *q == 'E')))
    return 0;
  *at = q;
  *is_int = !frac;
  if (!frac) *iv = neg ? -(int64_t)m : (int64_t)m;
  else *dv = neg ? -((double)m / pow10s[nf]) : (double)m / pow10s[nf];
  return 1;
}

static inline int quick_number(struct jp *j, int *is_int, int64_t *iv, double *dv) {
  return short_number(&j->p, j->end, is_int, iv, dv) ? 0 : number(j, is_int, iv, dv);
}

/* ---- skipping (validating) a value ------------------------------------------ */

static int skip_value(struct jp *j, int depth);

static int skip_container(struct jp *j, char close, int depth) {
  j->p++;
  ws(j);
  if (j->p < j->end && *j->p == close) return j->p++, 0;
  for (;;) {
    if (close == '}') {
      size_t len;
      ws(j);
      if (j->p >= j->end || *j->p != '"') return syntax(j, "expected a key in quotes");
      j->p++;
      if (string_body(j, &len) || eat(j, ':', "expected ':'")) return -1;
    }
    if (skip_value(j, depth + 1)) return -1;
    ws(j);
    if (j->p < j->end && *j->p == ',') { j->p++; continue; }
    return eat(j, close, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int literal(struct jp *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n)) return syntax(j, "expected a value");
  j->p += n;
  return 0;
}

static int skip_value(struct jp *j, int depth) {
  if (depth > MAX_DEPTH) return fail(j, "invalid JSON: nested deeper than %d", MAX_DEPTH);
  ws(j);
  if (j->p >= j->end) return syntax(j, "expected a value");
  size_t len;
  int is_int;
  int64_t iv;
  double dv;
  switch (*j->p) {
  case '{': return skip_container(j, '}', depth);
  case '[': return skip_container(j, ']', depth);
  case '"': j->p++; return string_body(j, &len);
  case 't': return literal(j, "true");
  case 'f': return literal(j, "false");
  case 'n': return literal(j, "null");
  default: return number(j, &is_int, &iv, &dv);
  }
}

static int is_null(struct jp *j) {
  ws(j);
  return j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0;
}

/* ---- typed values --------------------------------------------------------------- */

/* A scalar (or, for arrays and objects, the JSON text) into cell c. */
static int cell_value(struct jp *j, struct evt_cell *c) {
  ws(j);
  if (j->p >= j->end) return syntax(j, "expected a value");
  char ch = *j->p;
  if (ch == '"') {
    evt_sref s = {0, 0};
    if (take_string(j, &s)) return -1;
    c->type = EVT_STR, c->len = s.len, c->v.off = s.off;
  } else if (ch == '{' || ch == '[') {
    const char *s = j->p;
    if (skip_value(j, 0)) return -1;
    size_t n = (size_t)(j->p - s);
    char *o = evt_text_room(j->t, n);
    if (!o) return fail(j, "not enough memory");
    memcpy(o, s, n);
    c->type = EVT_JSON, c->len = (uint32_t)n, c->v.off = evt_text_take(j->t, n).off;
  } else if (ch == 't' || ch == 'f') {
    if (literal(j, ch == 't' ? "true" : "false")) return -1;
    c->type = ch == 't' ? EVT_TRUE : EVT_FALSE;
  } else if (ch == 'n') {
    if (literal(j, "null")) return -1;
    c->type = EVT_NULL;
  } else {
    int is_int;
    if (quick_number(j, &is_int, &c->v.i, &c->v.d)) return -1;
    c->type = is_int ? EVT_INT : EVT_NUM;
  }
  return 0;
}

/* Messages name a field "name[i]suffix" (just "name" when i is 0). */
static int field_fail(struct jp *j, const char *name, size_t i, const char *suffix, const char *what, const char *got) {
  if (i) return fail(j, "field '%s[%zu]%s': expected %s, got %s", name, i, suffix, what, got);
  return fail(j, "field '%s%s': expected %s, got %s", name, suffix, what, got);
}

/* v in decimal at o (at least 21 bytes); its length. */
static size_t i64_text(int64_t v, char *o) {
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do tmp[n++] = (char)('0' + u % 10), u /= 10;
  while (u);
  size_t k = 0;
  if (v < 0) o[k++] = '-';
  while (n) o[k++] = tmp[--n];
  return k;
}

/* An id: a string, or an integer kept as its decimal text (as written
 * when it does not fit 64 bits). The number is scanned once; the kind of
 * a value that is neither is looked at only for the message. */
static inline int id_value(struct jp *j, evt_sref *id, const char *name, size_t i, const char *suffix, const char *want) {
  ws(j);
  if (j->p < j->end && *j->p == '"') return take_string(j, id);
  const char *at = j->p;
  int is_int;
  int64_t v;
  double d;
  if (j->p < j->end && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) && !quick_number(j, &is_int, &v, &d)) {
    const char *k = is_int ? "integer" : kind_at(&(struct jp){at, j->p, j->base, j->t, j->sc, j->err, j->errlen, 0, 0});
    if (strcmp(k, "integer")) return j->p = at, field_fail(j, name, i, suffix, want, k);
    size_t n = (size_t)(j->p - at);
    char *o = evt_text_room(j->t, n > 24 ? n : 24);
    if (!o) return fail(j, "not enough memory");
    if (is_int) n = i64_text(v, o);
    else memcpy(o, at, n); /* 19 digits or more */
    *id = evt_text_take(j->t, n);
    return 0;
  }
  j->p = at; /* not a number, or a bad one: as before, the message by its kind */
  const char *k = kind_at(j);
  if (strcmp(k, "integer")) return field_fail(j, name, i, suffix, want, k);
  return number(j, &is_int, &v, &d);
}

static int list_start(struct jp *j, const char *name, const char *want) {
  ws(j);
  if (j->p >= j->end || *j->p != '[') return fail(j, "field '%s': expected %s, got %s", name, want, kind_at(j));
  j->p++;
  ws(j);
  return 0;
}

/* After an element: 1 when the list goes on, 0 at its end, -1 on error. */
static int list_next(struct jp *j) {
  ws(j);
  if (j->p < j->end && *j->p == ',') return j->p++, 1;
  return eat(j, ']', "expected ',' or ']'") ? -1 : 0;
}

static int at_close(struct jp *j, char c) {
  ws(j);
  if (j->p < j->end && *j->p == c) return j->p++, 1;
  return 0;
}

static int id_list(struct jp *j, enum evt_list_key k) {
  const char *name = evt_list_names[k];
  if (list_start(j, name, "a list of ids")) return -1;
  if (at_close(j, ']')) return 0;
  for (size_t i = 1;; i++) {
    evt_sref id = {0, 0};
    if (id_value(j, &id, name, i, "", "id") || evt_list_push(j->t, k, id, 0))
      return j->err[0] ? -1 : fail(j, "not enough memory");
    int more = list_next(j);
    if (more <= 0) return more;
  }
}

static int string_list(struct jp *j, enum evt_list_key k, int scalar_ok) {
  const char *name = evt_list_names[k];
  ws(j);
  if (scalar_ok && j->p < j->end && *j->p == '"') {
    evt_sref s = {0, 0};
    if (take_string(j, &s)) return name_field(j, name, strlen(name), 0);
    if (evt_list_push(j->t, k, s, 0)) return fail(j, "not enough memory");
    j->t->list[k].present[j->t->n] |= EVT_LIST_SCALAR;
    return 0;
  }
  if (list_start(j, name, scalar_ok ? "string or string[]" : "a list")) return -1;
  if (at_close(j, ']')) return 0;
  for (size_t i = 1;; i++) {
    ws(j);
    if (j->p >= j->end || *j->p != '"') return fail(j, "field '%s[%zu]': expected string, got %s", name, i, kind_at(j));
    evt_sref s = {0, 0};
    if (take_string(j, &s)) return name_field(j, name, strlen(name), i);
    if (evt_list_push(j->t, k, s, 0)) return fail(j, "not enough memory");
    int more = list_next(j);
    if (more <= 0) return more;
  }
}

static int key_is(const char *k, size_t len, const char *name) {
  if (len && name[0] != k[0]) return 0; /* most keys differ at once: no strlen */
  return strlen(name) == len && memcmp(k, name, len) == 0;
}

/* A key against a literal: the length first, then a compare the compiler
 * inlines. */
#define KEY_IS(k, len, lit) ((len) == sizeof lit - 1 && memcmp(k, lit, sizeof lit - 1) == 0)

/* Reads a key into the arena's scratch space (not taken). */
static int arena_key(struct jp *j, const char **k, size_t *len) {
  ws(j);
  if (j->p >= j->end || *j->p != '"') return syntax(j, "expected a key in quotes");
  j->p++;
  if (string_body(j, len)) return -1;
  *k = j->t->text + j->t->text_len; /* string_body made the room */
  return eat(j, ':', "expected ':'");
}

/* A key: in the line itself when it has no escape (nearly always: nothing
 * is copied), else decoded into scratch space; *scratch says which. */
static inline int key(struct jp *j, const char **k, size_t *len, int *scratch) {
  ws(j);
  *scratch = 0;
  if (j->p < j->end && *j->p == '"') {
    const char *s = j->p + 1;
    size_t n = evt_plain(s, (size_t)(j->end - s));
    if (s + n < j->end && s[n] == '"') {
      *k = s, *len = n, j->p = s + n + 1;
      if (j->p < j->end && *j->p == ':') return j->p++, 0;
      return eat(j, ':', "expected ':'");
    }
  }
  *scratch = 1;
  return arena_key(j, k, len);
}

/* A finite number, for scores and grades. */
static inline int num_value(struct jp *j, double *d, const char *name, size_t i, const char *suffix) {
  ws(j);
  if (j->p >= j->end || (*j->p != '-' && (*j->p < '0' || *j->p > '9'))) /* not a number: its kind for the message */
    return field_fail(j, name, i, suffix, "number", kind_at(j));
  int is_int;
  int64_t v;
  if (quick_number(j, &is_int, &v, d)) { /* out of range, or malformed: its own words after the field */
    char why[256];
    snprintf(why, sizeof why, "%s", j->err);
    if (i) return fail(j, "field '%s[%zu]%s': %s", name, i, suffix, why);
    return fail(j, "field '%s%s': %s", name, suffix, why);
  }
  if (is_int) *d = (double)v;
  return 0;
}

/* One {id =, score =} entry of a ranking; other keys are ignored. */
static int ranked_object(struct jp *j, size_t i, evt_sref *id, double *score, int *has_score) {
  j->p++;
  int has_id = 0;
  *has_score = 0;
  if (!at_close(j, '}'))
    for (;;) {
      const char *k = NULL;
      size_t len;
      int scratch;
      if (j->end - j->p >= 5 && memcmp(j->p, "\"id\":", 5) == 0) k = "id", len = 2, j->p += 5; /* as writers put them */
      else if (j->end - j->p >= 8 && memcmp(j->p, "\"score\":", 8) == 0) k = "score", len = 5, j->p += 8;
      else if (key(j, &k, &len, &scratch)) return -1;
      if (KEY_IS(k, len, "id")) {
        if (id_value(j, id, "retrieved", i, ".id", "a string id")) return -1;
        has_id = 1;
      } else if (KEY_IS(k, len, "score") && !is_null(j)) {
        if (num_value(j, score, "retrieved", i, ".score")) return -1;
        *has_score = 1;
      } else if (skip_value(j, 1)) {
        return -1;
      }
      ws(j);
      if (j->p < j->end && *j->p == ',') { j->p++; continue; }
      if (eat(j, '}', "expected ',' or '}'")) return -1;
      break;
    }
  if (!has_id) return fail(j, "field 'retrieved[%zu].id': expected a string id, got nothing", i);
  return 0;
}

/* An entry exactly as writers put it, {"id":"ID","score":N} with a plain
 * id and a short number: read straight through, 1. Anything else (spaces,
 * other keys, escapes, errors) is 0 with nothing moved or taken, and
 * ranked_object reads it from the same place. */
static int quick_entry(struct jp *j, evt_sref *id, double *score) {
  const char *s = j->p + 7, *end = j->end;
  struct evt_table *t = j->t;
  if (end - j->p < 8 || memcmp(j->p, "{\"id\":\"", 7)) return 0;
  size_t room = (size_t)(end - s);
  if (t->text_cap - t->text_len <= room) return 0;
  size_t n = evt_copy_plain(t->text + t->text_len, s, room);
  if (n >= room || s[n] != '"' || n > EVT_MAX_FIELD) return 0;
  const char *q = s + n + 1;
  if (end - q < 10 || memcmp(q, ",\"score\":", 9)) return 0;
  q += 9;
  int is_int;
  int64_t v;
  if (!short_number(&q, end, &is_int, &v, score) || q >= end || *q != '}') return 0;
  if (is_int) *score = (double)v;
  j->p = q + 1;
  *id = evt_text_take(t, n);
  return 1;
}

static int ranking(struct jp *j) {
  if (list_start(j, "retrieved", "a list of ids or {id=, score=}")) return -1;
  uint8_t *flags = &j->t->list[EVT_RETRIEVED].present[j->t->n];
  if (at_close(j, ']')) return 0;
  int first_scored = 0;
  for (size_t i = 1;; i++) {
    ws(j);
    evt_sref id = {0, 0};
    double score = NAN;
    int scored = 0;
    if (j->p < j->end && *j->p == '{') {
      if (quick_entry(j, &id, &score)) scored = 1;
      else if (ranked_object(j, i, &id, &score, &scored)) return -1;
      *flags |= EVT_LIST_OBJECTS;
    } else if (id_value(j, &id, "retrieved", i, "", "an id or {id=, score=}")) {
      return -1;
    }
    if (i == 1) first_scored = scored;
    else if (scored != first_scored)
      return fail(j, "field 'retrieved[%zu]': %s a score while retrieved[1] %s", i, scored ? "has" : "lacks",
                  first_scored ? "has one" : "does not");
    if (evt_list_push(j->t, EVT_RETRIEVED, id, score)) return fail(j, "not enough memory");
    int more = list_next(j);
    if (more < 0) return -1;
    if (!more) break;
  }
  if (first_scored) *flags |= EVT_LIST_SCORED;
  return 0;
}

static int grades(struct jp *j) {
  ws(j);
  if (j->p >= j->end || *j->p != '{')
    return fail(j, "field 'graded_relevance': expected an object id -> grade, got %s", kind_at(j));
  j->p++;
  if (at_close(j, '}')) return 0;
  for (;;) {
    const char *k = NULL;
    size_t len;
    if (arena_key(j, &k, &len)) return -1;
    evt_sref id = evt_text_take(j->t, len); /* the key is the id */
    double g;
    if (num_value(j, &g, "graded_relevance", 0, "")) { /* name the grade's key in the message */
      char rest[400];
      const char *after = strchr(j->err, ':');
      snprintf(rest, sizeof rest, "%s", after ? after : "");
      snprintf(j->err, j->errlen, "field 'graded_relevance.%.*s'%s", (int)(len < 100 ? len : 100), evt_text(j->t, id), rest);
      return -1;
    }
    if (evt_list_push(j->t, EVT_GRADES, id, g)) return fail(j, "not enough memory");
    ws(j);
    if (j->p < j->end && *j->p == ',') { j->p++; continue; }
    return eat(j, '}', "expected ',' or '}'");
  }
}

/* ---- the row ----------------------------------------------------------------- */

static const struct evt_field *user_field(const struct evt_schema *sc, const char *k, size_t len) {
  for (size_t i = 0; i < sc->nfields; i++)
    if (key_is(k, len, sc->fields[i].name)) return &sc->fields[i];
  return NULL;
}

static const char *const want_names[] = {"any", "string", "number", "integer", "boolean", "id", "id[]", "string[]"};

static int fits(enum evt_want w, const struct evt_cell *c, const struct evt_table *t) {
  switch (w) {
  case EVT_W_ANY: return 1;
  case EVT_W_STRING: return c->type == EVT_STR;
  case EVT_W_NUMBER: return c->type == EVT_INT || c->type == EVT_NUM;
  case EVT_W_INTEGER: return c->type == EVT_INT || (c->type == EVT_NUM && c->v.d == floor(c->v.d));
  case EVT_W_BOOLEAN: return c->type == EVT_TRUE || c->type == EVT_FALSE;
  case EVT_W_ID: return c->type == EVT_STR || c->type == EVT_INT;
  case EVT_W_IDS:
  case EVT_W_TEXTS: return c->type == EVT_JSON && t->text[c->v.off] == '[';
  }
  return 0;
}

static const char *cell_kind(const struct evt_cell *c, struct jp *j) {
  static const char *const names[] = {"nothing", "null", "boolean", "boolean", "integer", "number", "string", "JSON"};
  if (c->type == EVT_JSON) return j->t->text[c->v.off] == '[' ? "list" : "object";
  return names[c->type];
}

static enum evt_want documented_scalar(const char *k, size_t len) {
  if (KEY_IS(k, len, "qid")) return EVT_W_ID;
  if (KEY_IS(k, len, "query") || KEY_IS(k, len, "query_class") || KEY_IS(k, len, "variant") ||
      KEY_IS(k, len, "language") || KEY_IS(k, len, "answer"))
    return EVT_W_STRING;
  return EVT_W_ANY;
}

/* The list key k names, or -1. */
static int list_key(const char *k, size_t len) {
  for (int l = 0; l < EVT_NLISTS; l++)
    if (key_is(k, len, evt_list_names[l])) return l;
  return -1;
}

static int scalar_member(struct jp *j, const char *k, size_t len) {
  enum evt_want w = j->sc->rag ? documented_scalar(k, len) : EVT_W_ANY;
  const struct evt_field *f = user_field(j->sc, k, len);
  if (f) w = f->want;
  struct evt_table *t = j->t;
  struct evt_col *col = j->next_col < t->ncols && t->cols[j->next_col].name_len == len &&
                        memcmp(t->cols[j->next_col].name, k, len) == 0
                      ? &t->cols[j->next_col] : evt_col_get(t, k, len, 1);
  if (!col) return fail(j, "not enough memory");
  j->next_col = (size_t)(col - t->cols) + 1;
  struct evt_cell *c = &col->cells[j->t->n];
  if (cell_value(j, c)) { /* the message names the field only now: its text costs nothing on good rows */
    c->type = EVT_ABSENT;
    name_field(j, k, len, 0);
    return -1;
  }
  if (!fits(w, c, j->t)) {
    const char *got = cell_kind(c, j);
    c->type = EVT_ABSENT;
    return fail(j, "field '%.*s': expected %s, got %s", (int)(len < 100 ? len : 100), k, want_names[w], got);
  }
  return 0;
}

static int list_member(struct jp *j, enum evt_list_key k) {
  if (j->lists_seen & (1u << k)) return fail(j, "field '%s': given twice", evt_list_names[k]);
  j->lists_seen |= 1u << k;
  j->t->list[k].present[j->t->n] |= EVT_LIST_PRESENT;
  switch (k) {
  case EVT_RETRIEVED: return ranking(j);
  case EVT_GOLD_IDS: return id_list(j, k);
  case EVT_GRADES: return grades(j);
  case EVT_GOLD_ANSWERS: return string_list(j, k, 1);
  default: return string_list(j, k, 0);
  }
}

static int member(struct jp *j) {
  const char *k = NULL;
  size_t len;
  int scratch, l;
  if (key(j, &k, &len, &scratch)) return -1;
  if (is_null(j)) return j->p += 4, 0; /* a null member is an absent key */
  if (j->sc->rag && (l = list_key(k, len)) >= 0) return list_member(j, (enum evt_list_key)l);
  if (!scratch) return scalar_member(j, k, len);
  /* The key stays in scratch space until the value is read: copy it. */
  char small[256];
  char *name = len < sizeof small ? small : evm_new(&j->t->a, len + 1, 1);
  if (!name) return fail(j, "not enough memory");
  memcpy(name, k, len);
  int r = scalar_member(j, name, len);
  if (name != small) evm_free(&j->t->a, name, len + 1, 1);
  return r;
}

/* Every gold id needs a grade when both lists are given. */
static int gold_consistent(struct jp *j) {
  const struct evt_table *t = j->t;
  size_t n = t->n, gi, ni;
  if (!(t->list[EVT_GOLD_IDS].present[n] & EVT_LIST_PRESENT) || !(t->list[EVT_GRADES].present[n] & EVT_LIST_PRESENT))
    return 0;
  size_t ng = t->list[EVT_GRADES].n - (gi = t->list[EVT_GRADES].start[n]);
  size_t nid = t->list[EVT_GOLD_IDS].n - (ni = t->list[EVT_GOLD_IDS].start[n]);
  for (size_t a = 0; a < nid; a++) {
    evt_sref id = t->list[EVT_GOLD_IDS].str[ni + a];
    size_t b = 0;
    while (b < ng && !evt_same(t, t->list[EVT_GRADES].str[gi + b], id)) b++;
    if (b == ng)
      return fail(j, "field 'gold_doc_ids[%zu]': '%.*s' has no grade in graded_relevance", a + 1, (int)id.len,
                  evt_text(t, id));
  }
  return 0;
}

static int required(struct jp *j) {
  if (j->sc->rag && !user_field(j->sc, "qid", 3)) {
    long c = evt_col_index(j->t, "qid", 3);
    if (c < 0 || j->t->cols[c].cells[j->t->n].type == EVT_ABSENT) return fail(j, "field 'qid': missing (expected id)");
  }
  for (size_t i = 0; i < j->sc->nfields; i++) {
    const struct evt_field *f = &j->sc->fields[i];
    if (!f->required) continue;
    long c = evt_col_index(j->t, f->name, strlen(f->name));
    if (c < 0 || j->t->cols[c].cells[j->t->n].type == EVT_ABSENT)
      return fail(j, "field '%s': missing (expected %s)", f->name, want_names[f->want]);
  }
  return gold_consistent(j);
}

static int object(struct jp *j) {
  ws(j);
  if (j->p >= j->end || *j->p != '{') {
    const char *k = kind_at(j);
    if (strcmp(k, "invalid JSON") == 0 || skip_value(j, 0)) return syntax(j, "expected a JSON object");
    return fail(j, "expected a JSON object, got %s", k);
  }
  j->p++;
  if (!at_close(j, '}'))
    for (;;) {
      if (member(j)) return -1;
      ws(j);
      if (j->p < j->end && *j->p == ',') { j->p++; continue; }
      if (eat(j, '}', "expected ',' or '}'")) return -1;
      break;
    }
  ws(j);
  if (j->p < j->end) return syntax(j, "text after the object");
  return required(j);
}

int evt_json_row(struct evt_table *t, const char *s, size_t len, uint32_t line, const struct evt_schema *sc,
                 char *err, size_t errlen) {
  if (evt_row_begin(t, line)) return EVT_ROW_NOMEM;
  struct jp j = {s, s + len, s, t, sc, err, errlen, 0, 0};
  err[0] = '\0';
  if (object(&j)) {
    evt_row_abort(t);
    return strcmp(err, "not enough memory") == 0 ? EVT_ROW_NOMEM : EVT_ROW_BAD;
  }
  evt_row_commit(t);
  return EVT_ROW_OK;
}

int evt_want_parse(const char *type, size_t len, enum evt_want *want) {
  for (size_t i = 0; i < sizeof want_names / sizeof *want_names; i++)
    if (key_is(type, len, want_names[i])) return *want = (enum evt_want)i, 1;
  return 0;
}

int evt_json_value(struct evt_table *t, const char *key, size_t klen, const char *s, size_t len,
                   const struct evt_schema *sc, char *err, size_t errlen) {
  struct jp j = {s, s + len, s, t, sc, err, errlen, 0, 0};
  err[0] = '\0';
  int rc = -1;
  int l;
  if (sc->rag && (l = list_key(key, klen)) >= 0) rc = list_member(&j, (enum evt_list_key)l);
  if (rc == -1 && !err[0]) rc = scalar_member(&j, key, klen);
  if (!rc) {
    ws(&j);
    if (j.p < j.end) rc = syntax(&j, "text after the value");
  }
  return rc ? (strcmp(err, "not enough memory") == 0 ? EVT_ROW_NOMEM : EVT_ROW_BAD) : EVT_ROW_OK;
}

int evt_row_check(struct evt_table *t, const struct evt_schema *sc, char *err, size_t errlen) {
  struct jp j = {NULL, NULL, NULL, t, sc, err, errlen, 0, 0};
  err[0] = '\0';
  return required(&j) ? EVT_ROW_BAD : EVT_ROW_OK;
}
