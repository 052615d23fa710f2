/* A JSON value the loader kept as text (an object or a list, checked by
 * metrics/rows_json.c) written as the encoder writes what lua-cjson
 * decodes from it with nulls stripped (lua/evalua/core/tables.lua): keys
 * sorted, the last of a repeated key kept, a key whose value is null
 * dropped, an empty list written {} (it decodes to an empty table), every
 * number a double. In C so that the report writers read no Lua per item
 * and write such rows on two threads. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/alloc.h"
#include "l_json.h"

struct recode {
  const struct evalua_json_out *out;
  const char *indent;
  size_t indent_len;
  const struct evm_alloc *a;
  size_t replaced;
  int err;
};

struct member {
  const char *key, *value; /* the key decoded; the value's text */
  size_t key_len, at;      /* at: its place in the object, for the last of a repeated key */
};

static void put(struct recode *r, const char *s, size_t n) { r->out->put(r->out->ud, s, n); }

static void newline(struct recode *r, int depth) {
  if (!r->indent) return;
  put(r, "\n", 1);
  for (int i = 0; i < depth; i++) put(r, r->indent, r->indent_len);
}

static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* The closing quote of the string whose body starts at p. */
static const char *string_end(const char *p) {
  while (*p != '"') p += *p == '\\' ? 2 : 1;
  return p;
}

/* The end of the value at p (checked text: brackets balance outside strings). */
static const char *value_end(const char *p) {
  if (*p == '"') return string_end(p + 1) + 1;
  if (*p != '{' && *p != '[') {
    while (!strchr(",]} \t\r\n", *p)) p++; /* a number, true, false or null: something follows it */
    return p;
  }
  int level = 0;
  do {
    if (*p == '"') p = string_end(p + 1);
    else if (*p == '{' || *p == '[') level++;
    else if (*p == '}' || *p == ']') level--;
    p++;
  } while (level);
  return p;
}

static unsigned hex4(const char *p) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) v = v << 4 | (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
  return v;
}

/* The string body [p, end) unescaped into o (at most end - p bytes); its length. */
static size_t unescape(const char *p, const char *end, char *o) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  size_t n = 0;
  while (p < end) {
    if (*p != '\\') { o[n++] = *p++; continue; }
    const char *k = strchr(from, p[1]);
    if (k && p[1]) { o[n++] = to[k - from], p += 2; continue; }
    unsigned cp = hex4(p + 2);
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(p + 2) - 0xDC00), p += 6;
    if (cp < 0x80) o[n++] = (char)cp;
    else if (cp < 0x800) o[n++] = (char)(0xC0 | cp >> 6), o[n++] = (char)(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
      o[n++] = (char)(0xE0 | cp >> 12), o[n++] = (char)(0x80 | (cp >> 6 & 0x3F)), o[n++] = (char)(0x80 | (cp & 0x3F));
    else
      o[n++] = (char)(0xF0 | cp >> 18), o[n++] = (char)(0x80 | (cp >> 12 & 0x3F)),
      o[n++] = (char)(0x80 | (cp >> 6 & 0x3F)), o[n++] = (char)(0x80 | (cp & 0x3F));
  }
  return n;
}

/* The string whose body starts at p, quoted; the text after it. */
static const char *string(struct recode *r, const char *p) {
  const char *end = string_end(p);
  size_t n = (size_t)(end - p);
  if (!memchr(p, '\\', n)) {
    r->replaced += evalua_json_quote(r->out->put, r->out->ud, p, n);
    return end + 1;
  }
  char *o = evm_new(r->a, n + 1, 1);
  if (!o) return r->err = ENOMEM, end + 1;
  r->replaced += evalua_json_quote(r->out->put, r->out->ud, o, unescape(p, end, o));
  evm_free(r->a, o, n + 1, 1);
  return end + 1;
}

static void value(struct recode *r, const char *p, int depth);

static void list(struct recode *r, const char *p, int depth) {
  p = ws(p + 1);
  if (*p == ']') return put(r, "{}", 2); /* an empty table, as lua-cjson decodes it */
  put(r, "[", 1);
  for (int first = 1; *p != ']'; first = 0) {
    if (!first) put(r, ",", 1);
    newline(r, depth + 1);
    value(r, p, depth + 1);
    p = ws(value_end(p));
    if (*p == ',') p = ws(p + 1);
  }
  newline(r, depth);
  put(r, "]", 1);
}

static int member_cmp(const void *a, const void *b) {
  const struct member *x = a, *y = b;
  int c = memcmp(x->key, y->key, x->key_len < y->key_len ? x->key_len : y->key_len);
  if (!c) c = (x->key_len > y->key_len) - (x->key_len < y->key_len);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The object at p's members, keys decoded into *keys (its size in *kn);
 * their number, or -1 when out of memory. */
static long members(struct recode *r, const char *p, struct member **out, char **keys, size_t *kn) {
  size_t n = 0, len = 0;
  const char *q = ws(p + 1);
  *kn = 1;
  while (*q == '"') { /* sizes first: one allocation each */
    const char *e = string_end(q + 1);
    *kn += (size_t)(e - q), n++;
    q = ws(value_end(ws(ws(e + 1) + 1)));
    if (*q == ',') q = ws(q + 1);
  }
  struct member *m = evm_new(r->a, n + 1, sizeof *m);
  char *k = evm_new(r->a, *kn, 1);
  if (!m || !k) return evm_free(r->a, m, n + 1, sizeof *m), evm_free(r->a, k, *kn, 1), -1;
  q = ws(p + 1);
  for (size_t i = 0; i < n; i++) {
    const char *e = string_end(q + 1);
    size_t kl = unescape(q + 1, e, k + len);
    const char *v = ws(ws(e + 1) + 1);
    m[i] = (struct member){k + len, v, kl, i};
    len += kl;
    q = ws(value_end(v));
    if (*q == ',') q = ws(q + 1);
  }
  *out = m, *keys = k;
  return (long)n;
}

static void object(struct recode *r, const char *p, int depth) {
  struct member *m;
  char *keys;
  size_t kn;
  long n = members(r, p, &m, &keys, &kn);
  if (n < 0) return (void)(r->err = ENOMEM);
  qsort(m, (size_t)n, sizeof *m, member_cmp);
  int any = 0;
  for (long i = 0; i < n; i++) {
    if (i + 1 < n && m[i].key_len == m[i + 1].key_len && !memcmp(m[i].key, m[i + 1].key, m[i].key_len)) continue;
    if (*m[i].value == 'n') continue; /* null, stripped: absent and null mean the same */
    put(r, any ? "," : "{", 1);
    any = 1;
    newline(r, depth + 1);
    r->replaced += evalua_json_quote(r->out->put, r->out->ud, m[i].key, m[i].key_len);
    put(r, ":", 1);
    if (r->indent) put(r, " ", 1);
    value(r, m[i].value, depth + 1);
  }
  evm_free(r->a, m, (size_t)n + 1, sizeof *m);
  evm_free(r->a, keys, kn, 1);
  if (!any) return put(r, "{}", 2);
  newline(r, depth);
  put(r, "}", 1);
}

static void value(struct recode *r, const char *p, int depth) {
  char num[48];
  if (r->err) return;
  switch (*p) {
  case '"': string(r, p + 1); return;
  case 't': put(r, "true", 4); return;
  case 'f': put(r, "false", 5); return;
  case 'n': put(r, "null", 4); return; /* in a list: kept */
  case '{': case '[':
    if (depth > 64) return (void)(r->err = ELOOP); /* what the encoder refuses */
    if (*p == '{') object(r, p, depth);
    else list(r, p, depth);
    return;
  default: {
    double x = strtod(p, NULL);
    if (!isfinite(x)) return (void)(r->err = ERANGE);
    put(r, num, evalua_json_number(x, num));
  }
  }
}

int evalua_json_recode(const char *text, const char *indent, int depth, const struct evm_alloc *a,
                       const struct evalua_json_out *out, size_t *replaced) {
  struct recode r = {out, indent, indent ? strlen(indent) : 0, a, 0, 0};
  value(&r, ws(text), depth);
  *replaced += r.replaced;
  return r.err;
}
