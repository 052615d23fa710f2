/* evalua._json: Lua values as JSON text for files people diff (object keys
 * sorted, numbers that read back exactly, optional indentation): the
 * encoder behind lua/evalua/core/json.lua, in C because reports encode large
 * tables of aggregates. Arrays are tables marked {__jsontype = "array"} or
 * whose keys are exactly 1..#t; #t and t[i] honour metamethods, and a table
 * with __pairs is filled through it first, so row views encode as rows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "l_json.h"
#include "modules.h"
#include "runtime.h"
#include "udata.h"

/* 1 for the bytes json.lua escapes: control bytes, DEL, '"' and '\\';
 * 2 for the bytes of a multibyte UTF-8 sequence, which are checked. */
static const unsigned char escaped[256] = {
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

size_t evalua_utf8_valid(const char *s, size_t n, size_t *sub) {
  const unsigned char *p = (const unsigned char *)s;
  unsigned char c = p[0], lo = 0x80, hi = 0xBF;
  size_t need = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 4;
  if (need == 4) return *sub = 1, 0; /* a continuation byte, C0, C1, F5..FF: never a lead */
  if (c == 0xE0) lo = 0xA0;          /* no overlong forms, */
  if (c == 0xED) hi = 0x9F;          /* no surrogates, */
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;          /* nothing past U+10FFFF */
  for (size_t k = 1; k <= need; k++) {
    if (k >= n || p[k] < lo || p[k] > hi) return *sub = k, 0;
    lo = 0x80, hi = 0xBF;
  }
  return need + 1;
}

size_t evalua_json_quote(evalua_put_fn put, void *ud, const char *s, size_t n) {
  static const char fffd[] = "\xEF\xBF\xBD"; /* U+FFFD REPLACEMENT CHARACTER */
  size_t replaced = 0, start = 0;
  put(ud, "\"", 1);
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (!escaped[c]) {
      i++;
      continue;
    }
    if (escaped[c] == 2) {
      size_t sub, len = evalua_utf8_valid(s + i, n - i, &sub);
      if (len) {
        i += len;
        continue;
      }
      put(ud, s + start, i - start);
      put(ud, fffd, 3); /* one for each maximal invalid subpart, as WHATWG's decoder does */
      replaced++;
      start = i += sub;
      continue;
    }
    put(ud, s + start, i - start);
    start = ++i;
    const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                  : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
    char esc[8];
    if (!e) snprintf(esc, sizeof esc, "\\u%04x", c), e = esc;
    put(ud, e, strlen(e));
  }
  put(ud, s + start, n - start);
  put(ud, "\"", 1);
  return replaced;
}

__extension__ typedef unsigned __int128 u128;

static const double pow10d[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* round-half-even(x * 10^k) for 0 < x < 1e15 non-integral (x = m * 2^-s,
 * s > 0), exactly: m * 10^k fits 128 bits for k <= 22. */
static uint64_t scaled_digits(double x, int k) {
  int q;
  double f = frexp(x, &q); /* x = f * 2^q, f in [0.5, 1) */
  uint64_t m = (uint64_t)ldexp(f, 53);
  int shift = 53 - q;
#define E19 ((u128)10000000000000000000ULL)
  static const u128 p10[23] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, E19, E19 * 10, E19 * 100, E19 * 1000}; /* 10^0 .. 10^22 */
#undef E19
  u128 n = (u128)m * p10[k];
  if (shift <= 0) return (uint64_t)(n << -shift);
  if (shift >= 128) return 0;
  u128 d = n >> shift, rem = n - (d << shift), half = (u128)1 << (shift - 1);
  if (rem > half || (rem == half && (d & 1))) d++;
  return (uint64_t)d;
}

/* The digits of x to p significant places and its decimal exponent. */
static uint64_t sig_digits(double x, int p, int *e10) {
  static const double from_1e_5[] = {1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16};
  int e = -5; /* floor(log10(x)) by comparison; off by one at worst, fixed below */
  while (e < 15 && x >= from_1e_5[e + 6]) e++;
  for (;;) {
    int k = p - 1 - e;
    if (k < 0 || k > 22) return *e10 = e, UINT64_MAX;
    uint64_t d = scaled_digits(x, k);
    if (d >= (uint64_t)pow10d[p]) { e++; continue; }    /* one digit too many */
    if (d < (uint64_t)pow10d[p - 1]) { e--; continue; } /* one too few */
    *e10 = e;
    return d;
  }
}

/* printf's %.{p}g of x > 0 in fixed notation (exponent in [-4, p)). */
static size_t fixed_g(uint64_t d, int p, int e, char *out) {
  char dig[24];
  for (int i = p - 1; i >= 0; i--) dig[i] = (char)('0' + d % 10), d /= 10;
  int nd = p;
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  size_t n = 0;
  if (e < 0) {
    out[n++] = '0', out[n++] = '.';
    for (int i = -1; i > e; i--) out[n++] = '0';
    memcpy(out + n, dig, (size_t)nd), n += (size_t)nd;
  } else {
    memcpy(out + n, dig, (size_t)e + 1), n += (size_t)e + 1;
    if (nd > e + 1) out[n++] = '.', memcpy(out + n, dig + e + 1, (size_t)(nd - e - 1)), n += (size_t)(nd - e - 1);
  }
  out[n] = '\0';
  return n;
}

/* The shortest of %.15g / %.17g that reads back as x, as json.number, in
 * integer arithmetic for 1e-4 <= |x| < 1e15 (the 15-digit candidate is
 * checked exactly: a 15-digit integer over a power of ten up to 10^22 is
 * one correctly rounded division); printf elsewhere. */
/* v in decimal at o; its length. */
static size_t u64_text(uint64_t v, char *o) {
  char tmp[24];
  size_t n = 0;
  do tmp[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  for (size_t i = 0; i < n; i++) o[i] = tmp[n - 1 - i];
  return n;
}

/* x > 0 with at most 6 decimals, when some k <= 6 gives a d with d / 10^k
 * == x: the division is correctly rounded, so that decimal reads back as x,
 * and as it has far fewer than 15 significant digits it is what %.15g
 * prints. 0 when there is none. */
static size_t few_decimals(double x, char *o) {
  if (!(x >= 1e-4 && x < 1e9)) return 0;
  for (int k = 1; k <= 6; k++) {
    double y = nearbyint(x * pow10d[k]);
    if (y / pow10d[k] != x) continue;
    uint64_t d = (uint64_t)y, p = (uint64_t)pow10d[k];
    size_t n = u64_text(d / p, o);
    o[n++] = '.';
    char frac[8];
    size_t f = u64_text(d % p + p, frac); /* 1 followed by k digits, leading zeros kept */
    memcpy(o + n, frac + 1, f - 1);
    n += f - 1;
    while (o[n - 1] == '0') n--;
    o[n] = '\0';
    return n;
  }
  return 0;
}

size_t evalua_json_number(double x, char *out) {
  double ax = fabs(x);
  if (x == floor(x) && ax < 9007199254740992.0) {
    if (x < 0) out[0] = '-';
    size_t n = (x < 0) + u64_text((uint64_t)ax, out + (x < 0));
    out[n] = '\0';
    return n;
  }
  if (ax >= 1e-4 && ax < 1e15) {
    int e, neg = x < 0;
    char *o = out + neg;
    if (neg) out[0] = '-';
    size_t short_n = few_decimals(ax, o);
    if (short_n) return neg + short_n;
    uint64_t d = sig_digits(ax, 15, &e);
    if (d != UINT64_MAX && (double)d / pow10d[14 - e] == ax) return neg + fixed_g(d, 15, e, o); /* e in [-5, 14] */
    d = sig_digits(ax, 17, &e);
    if (d != UINT64_MAX && e < 17) return neg + fixed_g(d, 17, e, o);
  }
  int n = snprintf(out, 40, "%.15g", x);
  if (strtod(out, NULL) != x) n = snprintf(out, 40, "%.17g", x);
  return (size_t)n;
}

/* ---- the encoder: text grows in a userdata, freed by the collector even
 * when an error leaves early ---------------------------------------------- */

#define BUF_MT "evalua.json.buffer"

struct buf {
  char *p;
  size_t len, cap;
  int nomem;
  struct evm_alloc a; /* the text counts against --mem-limit */
};

static int buf_gc(lua_State *L) {
  struct buf *b = luaL_checkudata(L, 1, BUF_MT);
  evm_free(&b->a, b->p, b->cap, 1);
  b->p = NULL, b->cap = b->len = 0;
  return 0;
}

static int make_buf(lua_State *L) {
  struct buf *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  b->a = evalua_allocator(L);
  luaL_setmetatable(L, BUF_MT);
  return 1;
}

static void add(void *ud, const char *s, size_t n) {
  struct buf *b = ud;
  if (b->nomem) return;
  if (n > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n && cap < SIZE_MAX / 4) cap *= 2;
    char *p = cap - b->len >= n ? evm_resize(&b->a, b->p, b->cap, cap, 1) : NULL;
    if (!p) { b->nomem = 1; return; }
    b->p = p, b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

struct enc {
  lua_State *L;
  const struct evalua_json_out *out;
  const char *indent;
  size_t indent_len;
  size_t replaced; /* invalid UTF-8 sequences written as U+FFFD */
};

static void put(struct enc *e, const char *s, size_t n) { e->out->put(e->out->ud, s, n); }
static void adds(struct enc *e, const char *s) { put(e, s, strlen(s)); }

static void fail(lua_State *L, const char *msg) {
  lua_pushstring(L, msg);
  lua_error(L);
}

static void newline(struct enc *e, int depth) {
  if (!e->indent) return;
  put(e, "\n", 1);
  for (int i = 0; i < depth; i++) put(e, e->indent, e->indent_len);
}

static void value(struct enc *e, int idx, int depth);

/* A table with __pairs (a row view) is filled through it before its raw
 * keys are read. */
static void fill(lua_State *L, int idx) {
  if (luaL_getmetafield(L, idx, "__pairs") == LUA_TNIL) return;
  lua_pushvalue(L, idx);
  lua_call(L, 1, 0);
}

/* Whether the table at idx is a JSON array; *n gets its length. */
static int is_array(lua_State *L, int idx, lua_Integer *n) {
  *n = luaL_len(L, idx);
  if (luaL_getmetafield(L, idx, "__jsontype") != LUA_TNIL) {
    int arr = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "array") == 0;
    lua_pop(L, 1);
    if (arr) return 1;
  }
  if (*n == 0) return 0;
  fill(L, idx);
  lua_Integer count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) count++, lua_pop(L, 1);
  return count == *n;
}

static void array(struct enc *e, int idx, lua_Integer n, int depth) {
  if (n == 0) return adds(e, "[]");
  put(e, "[", 1);
  for (lua_Integer i = 1; i <= n; i++) {
    if (i > 1) put(e, ",", 1);
    newline(e, depth + 1);
    lua_geti(e->L, idx, i);
    value(e, lua_gettop(e->L), depth + 1);
    lua_pop(e->L, 1);
  }
  newline(e, depth);
  put(e, "]", 1);
}

struct key {
  const char *s;
  size_t len;
};

/* Byte order, as Lua compares strings in the C locale. */
static int key_cmp(const void *a, const void *b) {
  const struct key *x = a, *y = b;
  int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The object's keys as text, sorted; the list that keeps the texts alive
 * is left on the stack. */
static struct key *sorted_keys(lua_State *L, int idx, size_t *nkeys) {
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int kt = lua_type(L, -2);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER) luaL_error(L, "json: cannot encode a key of type %s", lua_typename(L, kt));
    lua_pop(L, 1);
    luaL_tolstring(L, -1, NULL);
    lua_rawseti(L, list, ++n);
  }
  struct key *k = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof *k, 0);
  lua_rawseti(L, list, n + 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    k[i - 1].s = lua_tolstring(L, -1, &k[i - 1].len); /* alive in the list */
    lua_pop(L, 1);
  }
  qsort(k, (size_t)n, sizeof *k, key_cmp);
  *nkeys = (size_t)n;
  return k;
}

/* Pushes t[key], or t[tonumber(key)] when the key was a number. */
static void field(lua_State *L, int idx, const struct key *k) {
  lua_pushlstring(L, k->s, k->len);
  if (lua_gettable(L, idx) != LUA_TNIL) return;
  lua_pop(L, 1);
  lua_pushlstring(L, k->s, k->len);
  if (lua_stringtonumber(L, lua_tostring(L, -1))) lua_remove(L, -2);
  else lua_pop(L, 1), lua_pushnil(L);
  if (!lua_isnil(L, -1)) lua_gettable(L, idx);
}

static void object(struct enc *e, int idx, int depth) {
  lua_State *L = e->L;
  fill(L, idx);
  size_t n;
  struct key *k = sorted_keys(L, idx, &n);
  if (n == 0) return lua_pop(L, 1), adds(e, "{}");
  put(e, "{", 1);
  for (size_t i = 0; i < n; i++) {
    if (i) put(e, ",", 1);
    newline(e, depth + 1);
    e->replaced += evalua_json_quote(e->out->put, e->out->ud, k[i].s, k[i].len);
    adds(e, e->indent ? ": " : ":");
    field(L, idx, &k[i]);
    value(e, lua_gettop(L), depth + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1); /* the key list */
  newline(e, depth);
  put(e, "}", 1);
}

static void value(struct enc *e, int idx, int depth) {
  lua_State *L = e->L;
  luaL_checkstack(L, 8, "json: nesting too deep");
  if (e->out->marker && lua_rawequal(L, idx, e->out->marker)) return e->out->hook(e->out->hook_ud, depth);
  char num[48];
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    e->replaced += evalua_json_quote(e->out->put, e->out->ud, s, n);
    return;
  }
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) snprintf(num, sizeof num, "%lld", (long long)lua_tointeger(L, idx));
    else if (!isfinite(lua_tonumber(L, idx))) fail(L, "json: cannot encode NaN or infinity");
    else evalua_json_number(lua_tonumber(L, idx), num);
    return adds(e, num);
  case LUA_TBOOLEAN: return adds(e, lua_toboolean(L, idx) ? "true" : "false");
  case LUA_TNIL: return adds(e, "null");
  case LUA_TLIGHTUSERDATA:
    if (lua_touserdata(L, idx) == NULL) return adds(e, "null"); /* cjson.null */
    break;
  case LUA_TTABLE: {
    if (depth > 64) fail(L, "json: nesting deeper than 64 (a cycle?)");
    lua_Integer n;
    if (is_array(L, idx, &n)) array(e, idx, n, depth);
    else object(e, idx, depth);
    return;
  }
  default: break;
  }
  lua_pushfstring(L, "json: cannot encode a %s", luaL_typename(L, idx));
  lua_error(L);
}

size_t evalua_json_encode(lua_State *L, int idx, const char *indent, int depth, const struct evalua_json_out *out) {
  struct enc e = {L, out, indent, indent ? strlen(indent) : 0, 0};
  value(&e, lua_absindex(L, idx), depth);
  return e.replaced;
}

/* encode(value [, indent [, depth]]) -> text, invalid UTF-8 sequences replaced */
static int l_encode(lua_State *L) {
  luaL_checkany(L, 1);
  size_t il = 0;
  const char *indent = luaL_optlstring(L, 2, NULL, &il);
  lua_Integer depth = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, depth >= 0 && depth <= 64, 3, "a depth from 0 to 64");
  lua_settop(L, 3);
  make_buf(L);
  struct buf *b = lua_touserdata(L, -1);
  struct evalua_json_out out = {add, b, NULL, NULL, 0};
  size_t replaced = evalua_json_encode(L, 1, indent, (int)depth, &out);
  if (b->nomem) return evalua_nomem(L);
  lua_pushlstring(L, b->p ? b->p : "", b->len);
  lua_pushinteger(L, (lua_Integer)replaced);
  return 2;
}

/* utf8(s) -> s with U+FFFD for each invalid UTF-8 sequence (s itself when
 * valid), and their number. */
static int l_utf8(lua_State *L) {
  size_t n, sub, len;
  const char *s = luaL_checklstring(L, 1, &n);
  size_t i = 0;
  while (i < n && (len = evalua_utf8_valid(s + i, n - i, &sub))) i += len;
  if (i == n) {
    lua_settop(L, 1);
    lua_pushinteger(L, 0);
    return 2;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer replaced = 0;
  size_t start = 0;
  while (i < n) {
    if ((len = evalua_utf8_valid(s + i, n - i, &sub))) {
      i += len;
      continue;
    }
    luaL_addlstring(&b, s + start, i - start);
    luaL_addstring(&b, "\xEF\xBF\xBD");
    replaced++;
    start = i += sub;
  }
  luaL_addlstring(&b, s + start, n - start);
  luaL_pushresult(&b);
  lua_pushinteger(L, replaced);
  return 2;
}

/* number(x) -> the shortest text that reads back as x (an integer as is);
 * NaN and infinity are the caller's to refuse, with its own message. */
static int l_number(lua_State *L) {
  if (lua_isinteger(L, 1)) {
    lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, 1));
    return 1;
  }
  double x = luaL_checknumber(L, 1);
  if (!isfinite(x)) return luaL_argerror(L, 1, "NaN or infinity has no JSON text");
  char out[40];
  lua_pushlstring(L, out, evalua_json_number(x, out));
  return 1;
}

int luaopen_evalua_json(lua_State *L) {
  evalua_newclass(L, BUF_MT, make_buf);
  lua_pushcfunction(L, buf_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"encode", l_encode}, {"utf8", l_utf8}, {"number", l_number}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
