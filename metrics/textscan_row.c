/* A row's texts for the text scan (evm_ts_json_row): its JSON object read
 * for "query", "answer" and "contexts", every other member skipped (but
 * checked: a row that is not JSON is said so, with where). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "evalua/textscan.h"
#include "textscan_impl.h"

struct rd {
  struct evm_textscan *ts;
  const char *s, *p, *end;
  char *err;
  size_t errlen;
};

enum { DEPTH = 200 }; /* what evalua's encoder writes at most is far less */

static int bad(struct rd *r, const char *what) {
  snprintf(r->err, r->errlen, "invalid JSON at byte %zu: %s", (size_t)(r->p - r->s) + 1, what);
  return 1;
}

static void ws(struct rd *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int hex4(const char *p, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
               : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
    if (d == 16) return -1;
    *v = *v * 16 + d;
  }
  return 0;
}

static size_t utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 63)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 63)); o[2] = (char)(0x80 | (cp & 63));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 63)); o[2] = (char)(0x80 | ((cp >> 6) & 63));
  o[3] = (char)(0x80 | (cp & 63));
  return 4;
}

/* The string at p (its opening quote) decoded into ts->raw when keep (else only checked): its length
 * at *n. 0, -1 out of memory, 1 not JSON. */
static int string(struct rd *r, int keep, size_t *n) {
  const char *p = ++r->p;
  const char *q = memchr(p, '"', (size_t)(r->end - p));
  if (!q) return bad(r, "a string without its closing quote");
  if (keep && evm_ts_grow(&r->ts->a, &r->ts->raw, &r->ts->cap_raw, (size_t)(r->end - p) + 1, 1)) return -1;
  char *o = r->ts->raw;
  size_t w = 0;
  while (p < r->end) {
    const char *b = memchr(p, '\\', (size_t)(q - p));
    const char *stop = b ? b : q;
    if (keep) memcpy(o + w, p, (size_t)(stop - p));
    w += (size_t)(stop - p);
    if (!b) {
      r->p = q + 1;
      *n = w;
      return 0;
    }
    p = b + 1;
    if (p >= r->end) break;
    char c = *p++, e = 0;
    switch (c) {
    case '"': e = '"'; break;
    case '\\': e = '\\'; break;
    case '/': e = '/'; break;
    case 'b': e = '\b'; break;
    case 'f': e = '\f'; break;
    case 'n': e = '\n'; break;
    case 'r': e = '\r'; break;
    case 't': e = '\t'; break;
    case 'u': {
      unsigned u, lo;
      if (r->end - p < 4 || hex4(p, &u)) return r->p = p, bad(r, "a \\u escape without four hex digits");
      p += 4;
      if (u >= 0xD800 && u < 0xDC00 && r->end - p >= 6 && p[0] == '\\' && p[1] == 'u' && !hex4(p + 2, &lo) &&
          lo >= 0xDC00 && lo < 0xE000) {
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
      } else if (u >= 0xD800 && u < 0xE000) u = 0xFFFD; /* a lone surrogate */
      char tmp[4];
      size_t k = utf8_put(tmp, u);
      if (keep) memcpy(o + w, tmp, k);
      w += k;
      break;
    }
    default: return r->p = p - 1, bad(r, "an unknown escape in a string");
    }
    if (e) {
      if (keep) o[w] = e;
      w++;
    }
    if (q < p) { /* the quote found was escaped: the next one */
      q = memchr(p, '"', (size_t)(r->end - p));
      if (!q) return bad(r, "a string without its closing quote");
    }
  }
  return bad(r, "a string without its closing quote");
}

static int value(struct rd *r, int depth);

/* An array or object at p, checked and skipped. */
static int container(struct rd *r, int depth) {
  char close = *r->p == '{' ? '}' : ']';
  int obj = close == '}';
  if (depth > DEPTH) return bad(r, "nested too deep");
  r->p++;
  ws(r);
  if (r->p < r->end && *r->p == close) return r->p++, 0;
  for (;;) {
    size_t n;
    int e;
    if (obj) {
      if (r->p >= r->end || *r->p != '"') return bad(r, "expected a key");
      if ((e = string(r, 0, &n))) return e;
      ws(r);
      if (r->p >= r->end || *r->p != ':') return bad(r, "expected ':'");
      r->p++;
    }
    if ((e = value(r, depth + 1))) return e;
    ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      ws(r);
      continue;
    }
    if (r->p < r->end && *r->p == close) return r->p++, 0;
    return bad(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

/* Any value at p (after white space), checked and skipped. */
static int value(struct rd *r, int depth) {
  size_t n;
  ws(r);
  if (r->p >= r->end) return bad(r, "expected a value");
  char c = *r->p;
  if (c == '"') return string(r, 0, &n);
  if (c == '{' || c == '[') return container(r, depth);
  const char *b = r->p;
  while (r->p < r->end && strchr("+-.0123456789eEtruefalsn", *r->p) && *r->p) r->p++;
  if (r->p == b) return bad(r, "expected a value");
  size_t k = (size_t)(r->p - b);
  if ((c >= 'a' && c <= 'z') && !(k == 4 && !memcmp(b, "true", 4)) && !(k == 5 && !memcmp(b, "false", 5)) &&
      !(k == 4 && !memcmp(b, "null", 4)))
    return r->p = b, bad(r, "expected a value");
  return 0;
}

/* The value at p as a text of the row: a string decoded, anything else as its JSON text; a list's
 * elements each (when list), a null none. */
static int text_value(struct rd *r, int list) {
  ws(r);
  if (r->p >= r->end) return bad(r, "expected a value");
  size_t n;
  int e;
  if (*r->p == '"') {
    if ((e = string(r, 1, &n))) return e;
    return evm_ts_text(r->ts, r->ts->raw, n);
  }
  if (list && *r->p == '[') {
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == ']') return r->p++, 0;
    for (;;) {
      if ((e = text_value(r, 0))) return e;
      ws(r);
      if (r->p < r->end && *r->p == ',') {
        r->p++;
        continue;
      }
      if (r->p < r->end && *r->p == ']') return r->p++, 0;
      return bad(r, "expected ',' or ']'");
    }
  }
  const char *b = r->p;
  if ((e = value(r, 1))) return e;
  if (r->p - b == 4 && !memcmp(b, "null", 4)) return 0;
  return evm_ts_text(r->ts, b, (size_t)(r->p - b));
}

int evm_ts_json_row(struct evm_textscan *ts, const char *s, size_t n, char *err, size_t errlen) {
  struct rd r = {ts, s, s, s + n, err, errlen};
  ws(&r);
  if (r.p >= r.end || *r.p != '{') return bad(&r, "a row is an object");
  r.p++;
  ws(&r);
  if (r.p < r.end && *r.p == '}') return 0;
  for (;;) {
    size_t k;
    int e;
    if (r.p >= r.end || *r.p != '"') return bad(&r, "expected a key");
    const char *kb = r.p + 1;
    if ((e = string(&r, 0, &k))) return e;
    size_t raw_len = (size_t)(r.p - kb - 1); /* keys of the format have no escapes */
    int want = (raw_len == 5 && (!memcmp(kb, "query", 5))) || (raw_len == 6 && !memcmp(kb, "answer", 6)) ? 1
             : raw_len == 8 && !memcmp(kb, "contexts", 8) ? 2 : 0;
    ws(&r);
    if (r.p >= r.end || *r.p != ':') return bad(&r, "expected ':'");
    r.p++;
    if ((e = want ? text_value(&r, want == 2) : value(&r, 1))) return e;
    ws(&r);
    if (r.p < r.end && *r.p == ',') {
      r.p++;
      ws(&r);
      continue;
    }
    if (r.p < r.end && *r.p == '}') break;
    return bad(&r, "expected ',' or '}'");
  }
  r.p++;
  ws(&r);
  return r.p == r.end ? 0 : bad(&r, "more after the row's object");
}
