/* evalua._textscan: the viewer's scan of a run's texts (metrics/textscan.c,
 * docs/view.md#the-scan).
 *   new() -> scan
 *   scan:add_rows(report, rows)   rows: {{k =, id =, off =, len =, row =}}: the row's JSON is
 *                                 row, or len bytes of the file report at off (from 1)
 *   scan:find({{word, start}...} [, smaller]) -> JSON array of the matching rows' k, their number;
 *                                 with smaller, when more than half the rows match: the rows that do
 *                                 not, and true
 *   scan:save(path, key) -> true, or nil and why      load(path, key) -> scan, or nil (no such
 *                                 file, another key, damaged)
 *   scan:counts() -> rows, distinct texts, bytes      fold(s) -> s folded
 *   scan:close() */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "evalua/textscan.h"
#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define SCAN_MT "evalua.textscan"

static struct evm_textscan **check(lua_State *L) {
  struct evm_textscan **ts = luaL_checkudata(L, 1, SCAN_MT);
  if (!*ts) evalua_closed(L, 1);
  return ts;
}

static int make(lua_State *L) {
  struct evm_textscan **ts = lua_newuserdatauv(L, sizeof *ts, 0);
  *ts = NULL;
  luaL_setmetatable(L, SCAN_MT);
  struct evm_alloc a = evalua_allocator(L);
  *ts = evm_ts_new(&a);
  if (!*ts) return evalua_nomem(L);
  return 1;
}

static int l_close(lua_State *L) {
  struct evm_textscan **ts = luaL_checkudata(L, 1, SCAN_MT);
  evm_ts_free(*ts);
  *ts = NULL;
  return 0;
}

/* The open file of the report and a buffer for one row, closed and freed when add_rows ends. */
struct reading {
  int fd;
  char *buf;
  size_t cap;
  struct evm_alloc a;
};

static void reading_done(void *p) {
  struct reading *r = p;
  if (r->fd >= 0) close(r->fd);
  evm_free(&r->a, r->buf, r->cap, 1);
}

/* The row's JSON: its text, or read from the report at its place. */
static const char *row_text(lua_State *L, struct reading *rd, const char *report, size_t *n) {
  if (lua_getfield(L, -1, "row") == LUA_TSTRING) return lua_tolstring(L, -1, n);
  lua_pop(L, 1);
  lua_getfield(L, -1, "off");
  lua_getfield(L, -2, "len");
  lua_Integer off = luaL_checkinteger(L, -2), len = luaL_checkinteger(L, -1);
  lua_pop(L, 2);
  lua_pushnil(L); /* in place of the row's text */
  if (off < 1 || len < 0) luaL_error(L, "%s: a row's place (%d, %d) is not in the file", report, (int)off, (int)len);
  if (rd->fd < 0 && (rd->fd = open(report, O_RDONLY | O_CLOEXEC)) < 0)
    luaL_error(L, "%s: the run's report is gone (the texts are read from it): %s", report, strerror(errno));
  if ((size_t)len + 1 > rd->cap) {
    char *q = evm_resize(&rd->a, rd->buf, rd->cap, (size_t)len + 1, 1);
    if (!q) evalua_nomem(L);
    rd->buf = q;
    rd->cap = (size_t)len + 1;
  }
  ssize_t got = pread(rd->fd, rd->buf, (size_t)len, (off_t)(off - 1));
  if (got != (ssize_t)len)
    luaL_error(L, "%s: the row at byte %d is past the file's end (the report changed?)", report, (int)off);
  *n = (size_t)len;
  return rd->buf;
}

static int l_add_rows(lua_State *L) {
  struct evm_textscan *ts = *check(L);
  const char *report = luaL_optstring(L, 2, "the report");
  luaL_checktype(L, 3, LUA_TTABLE);
  struct reading *rd = evalua_scratch(L, sizeof *rd, reading_done);
  rd->fd = -1;
  rd->a = evalua_allocator(L);
  int top = lua_gettop(L);
  for (lua_Integer i = 1; lua_rawgeti(L, 3, i) == LUA_TTABLE; i++) {
    lua_getfield(L, -1, "k");
    lua_Integer k = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    if (evm_ts_row(ts, k)) return evalua_nomem(L);
    size_t n;
    if (lua_getfield(L, -1, "id") == LUA_TSTRING) {
      const char *id = lua_tolstring(L, -1, &n);
      if (evm_ts_text(ts, id, n)) return evalua_nomem(L);
    }
    lua_pop(L, 1);
    const char *s = row_text(L, rd, report, &n);
    char err[160];
    int e = evm_ts_json_row(ts, s, n, err, sizeof err);
    if (e < 0) return evalua_nomem(L);
    if (e > 0) return luaL_error(L, "%s: the row of item %d is not JSON: %s", report, (int)k, err);
    lua_settop(L, top);
  }
  return 0;
}

static int l_find(lua_State *L) {
  struct evm_textscan *ts = *check(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  int smaller = lua_toboolean(L, 3);
  lua_settop(L, 2);
  lua_Integer n = luaL_len(L, 2);
  luaL_argcheck(L, n >= 0 && n <= 64, 2, "at most 64 words");
  luaL_checkstack(L, 3 * (int)n + 8, "words");
  struct evm_ts_term terms[64];
  luaL_Buffer b;
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, 2, i + 1);
    luaL_checktype(L, -1, LUA_TTABLE);
    lua_rawgeti(L, -1, 1);
    size_t len;
    const char *w = luaL_checklstring(L, -1, &len);
    const char *f;
    size_t m = evm_ts_fold(ts, w, len, &f);
    if (m == (size_t)-1) return evalua_nomem(L);
    lua_pushlstring(L, f, m); /* kept on the stack: the scratch is reused */
    terms[i].s = lua_tolstring(L, -1, &terms[i].n);
    lua_rawgeti(L, -3, 2);
    terms[i].word_start = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  const int64_t *keys;
  size_t k, hits;
  int misses;
  hits = evm_ts_find(ts, terms, (size_t)n, smaller, &keys, &k, &misses);
  if (hits == (size_t)-1) return evalua_nomem(L);
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '[');
  for (size_t i = 0; i < k; i++) {
    char num[24];
    int w = snprintf(num, sizeof num, i ? ",%lld" : "%lld", (long long)keys[i]);
    luaL_addlstring(&b, num, (size_t)w);
  }
  luaL_addchar(&b, ']');
  luaL_pushresult(&b);
  lua_pushinteger(L, (lua_Integer)hits);
  lua_pushboolean(L, misses);
  return 3;
}

/* Written to path.tmp, then renamed over path: a reader finds the old file or the new one, whole. */
static int l_save(lua_State *L) {
  struct evm_textscan *ts = *check(L);
  const char *path = luaL_checkstring(L, 2);
  size_t keylen;
  const char *key = luaL_checklstring(L, 3, &keylen);
  evalua_check_path(L, path, 1);
  const char *tmp = lua_pushfstring(L, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int ok = fd >= 0 && evm_ts_save(ts, fd, key, keylen) == 0;
  int err = errno;
  if (fd >= 0 && close(fd) && ok) ok = 0, err = errno;
  if (ok && rename(tmp, path)) ok = 0, err = errno;
  if (ok) {
    lua_pushboolean(L, 1);
    return 1;
  }
  unlink(tmp);
  luaL_pushfail(L);
  lua_pushfstring(L, "%s: %s", path, strerror(err));
  return 2;
}

static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t keylen;
  const char *key = luaL_checklstring(L, 2, &keylen);
  evalua_check_path(L, path, 0);
  struct evm_textscan **ts = lua_newuserdatauv(L, sizeof *ts, 0);
  *ts = NULL;
  luaL_setmetatable(L, SCAN_MT);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    luaL_pushfail(L);
    return 1;
  }
  struct evm_alloc a = evalua_allocator(L);
  int nomem;
  *ts = evm_ts_load(&a, fd, key, keylen, &nomem);
  close(fd);
  if (nomem) return evalua_nomem(L);
  if (!*ts) luaL_pushfail(L);
  return 1;
}

static int l_counts(lua_State *L) {
  struct evm_textscan *ts = *check(L);
  size_t rows, texts, bytes;
  evm_ts_counts(ts, &rows, &texts, &bytes);
  lua_pushinteger(L, (lua_Integer)rows);
  lua_pushinteger(L, (lua_Integer)texts);
  lua_pushinteger(L, (lua_Integer)bytes);
  lua_pushinteger(L, (lua_Integer)evm_ts_bytes(ts));
  return 4;
}

static int l_fold(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  struct evm_alloc a = evalua_allocator(L);
  struct evm_textscan *ts = evm_ts_new(&a);
  if (!ts) return evalua_nomem(L);
  const char *f;
  size_t m = evm_ts_fold(ts, s, n, &f);
  if (m != (size_t)-1) lua_pushlstring(L, f, m);
  evm_ts_free(ts);
  if (m == (size_t)-1) return evalua_nomem(L);
  return 1;
}

int luaopen_evalua_textscan(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"add_rows", l_add_rows}, {"find", l_find}, {"save", l_save}, {"counts", l_counts}, {"close", l_close},
    {NULL, NULL}};
  if (evalua_newclass(L, SCAN_MT, make)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"new", make}, {"load", l_load}, {"fold", l_fold}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
