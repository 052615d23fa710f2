/* evalua._regex: PCRE2 regular expressions for the regex assertions.
 *
 *   local re, why = regex.compile(pattern)   -- nil and PCRE2's message on a bad pattern
 *   re:find(text [, init]) -> first, last    -- byte positions of the first match
 *                          -> false          -- no match
 *                          -> nil, why       -- no answer: a limit was hit, text not UTF-8
 *   re:close()                               -- frees the code now; __gc and __close too
 *   regex.limits                             -- {match =, depth =, heap_kib =}
 *
 * A pattern is compiled once, in UTF-8 mode, and matched by the interpreter
 * (not the JIT, which has no depth or heap limit of its own) under fixed limits,
 * so a pattern that backtracks catastrophically on a long answer gives up in
 * bounded time instead of hanging the run. After close every method raises
 * "closed object"; closing twice is harmless. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>

#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define REGEX_MT "evalua.Regex"

/* Backtracking steps, nested backtracking points, and KiB of match heap.
 * A catastrophic pattern on 5,000 characters hits the match limit in about
 * 30 ms; ordinary patterns over 1 MB of text stay far below every limit. */
#define MATCH_LIMIT 1000000u
#define DEPTH_LIMIT 100000u
#define HEAP_LIMIT_KIB 65536u

/* PCRE2 allocates through the state's allocator, so compiled patterns and
 * match memory count against --mem-limit like any Lua value. Each block
 * carries its size in a header, since PCRE2 frees without giving it. The
 * code and contexts keep a pointer to mem, which lives in the userdata and
 * so outlives them (they are freed in its __gc). */
struct mem {
  lua_Alloc alloc;
  void *ud;
};

struct regex {
  struct mem mem;
  pcre2_general_context *gc;
  pcre2_code *code;
  pcre2_match_context *mc;
};

#define HEADER sizeof(max_align_t)

static void *mem_get(PCRE2_SIZE size, void *data) {
  struct mem *m = data;
  if (size > SIZE_MAX - HEADER) return NULL;
  char *p = m->alloc(m->ud, NULL, 0, size + HEADER);
  if (!p) return NULL;
  *(size_t *)p = size + HEADER;
  return p + HEADER;
}

static void mem_put(void *block, void *data) {
  struct mem *m = data;
  if (!block) return;
  char *p = (char *)block - HEADER;
  m->alloc(m->ud, p, *(size_t *)p, 0);
}

static void release(struct regex *r) {
  pcre2_match_context_free(r->mc); /* each accepts NULL */
  pcre2_code_free(r->code);
  pcre2_general_context_free(r->gc);
  r->mc = NULL, r->code = NULL, r->gc = NULL;
}

/* Out of memory: when the state's cap refused it, the same memory error as
 * the state's own allocations (as l_text.c does), else a plain error. */
static int no_memory(lua_State *L) {
  struct evalua_runtime *rt = evalua_runtime(L);
  if (rt->mem_exceeded && rt->mem_limit) lua_newuserdatauv(L, rt->mem_limit, 0); /* raises LUA_ERRMEM */
  return luaL_error(L, "not enough memory");
}

static struct regex *check_open(lua_State *L) {
  struct regex *r = luaL_checkudata(L, 1, REGEX_MT);
  if (!r->code) luaL_error(L, "regex: closed object");
  return r;
}

static void push_pcre_message(lua_State *L, int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) lua_pushfstring(L, "PCRE2 error %d", code);
  else lua_pushstring(L, (const char *)buf);
}

/* compile(pattern) -> regex | nil, why. The userdata exists before PCRE2
 * allocates, so a memory error raised later cannot leak what it holds. */
static int l_compile(lua_State *L) {
  size_t len;
  const char *pat = luaL_checklstring(L, 1, &len);
  struct regex *r = lua_newuserdatauv(L, sizeof *r, 0);
  r->gc = NULL, r->code = NULL, r->mc = NULL;
  r->mem.alloc = lua_getallocf(L, &r->mem.ud);
  luaL_setmetatable(L, REGEX_MT);
  if (!(r->gc = pcre2_general_context_create(mem_get, mem_put, &r->mem))) return no_memory(L);
  int err;
  PCRE2_SIZE at;
  pcre2_compile_context *cc = pcre2_compile_context_create(r->gc);
  if (!cc) return no_memory(L);
  r->code = pcre2_compile((PCRE2_SPTR)pat, len, PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C, &err, &at, cc);
  pcre2_compile_context_free(cc);
  if (!r->code && err == PCRE2_ERROR_HEAP_FAILED) return no_memory(L);
  if (!r->code) {
    luaL_pushfail(L);
    push_pcre_message(L, err);
    if (at == 0) lua_pushliteral(L, " at the start of the pattern");
    else lua_pushfstring(L, " after %I byte%s of the pattern", (lua_Integer)at, at == 1 ? "" : "s");
    lua_concat(L, 2);
    return 2;
  }
  if (!(r->mc = pcre2_match_context_create(r->gc))) return no_memory(L);
  pcre2_set_match_limit(r->mc, MATCH_LIMIT);
  pcre2_set_depth_limit(r->mc, DEPTH_LIMIT);
  pcre2_set_heap_limit(r->mc, HEAP_LIMIT_KIB);
  return 1;
}

/* Why a match gave no answer, as a user reads it; bad is the offset of
 * the invalid UTF-8 sequence. */
static void push_failure(lua_State *L, int rc, PCRE2_SIZE bad) {
  switch (rc) {
  case PCRE2_ERROR_MATCHLIMIT:
    lua_pushfstring(L, "gave up after %d backtracking steps (the match limit): the pattern backtracks "
                       "catastrophically on this text", (int)MATCH_LIMIT);
    return;
  case PCRE2_ERROR_DEPTHLIMIT:
    lua_pushfstring(L, "gave up at %d nested backtracking points (the depth limit)", (int)DEPTH_LIMIT);
    return;
  case PCRE2_ERROR_HEAPLIMIT:
    lua_pushfstring(L, "gave up at %d MiB of match memory (the heap limit)", (int)(HEAP_LIMIT_KIB / 1024));
    return;
  }
  if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
    lua_pushfstring(L, "the text is not valid UTF-8 (byte %I: ", (lua_Integer)bad + 1);
    push_pcre_message(L, rc);
    lua_pushliteral(L, ")");
    lua_concat(L, 3);
    return;
  }
  push_pcre_message(L, rc);
}

/* re:find(text [, init]): init is a byte position from 1 to #text + 1.
 * The match data lives for one call only: PCRE2 keeps its backtracking heap
 * (up to the heap limit) in it, which a kept regex should not hold on to.
 * Nothing between its creation and its release can raise. */
static int l_find(lua_State *L) {
  struct regex *r = check_open(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  lua_Integer init = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, init >= 1 && (lua_Unsigned)init - 1 <= len, 3, "init out of range");
  pcre2_match_data *md = pcre2_match_data_create(1, r->gc);
  if (!md) return no_memory(L);
  int rc = pcre2_match(r->code, (PCRE2_SPTR)s, len, (PCRE2_SIZE)(init - 1), 0, md, r->mc);
  PCRE2_SIZE first = 0, last = 0, bad = 0;
  if (rc >= 0) first = pcre2_get_ovector_pointer(md)[0], last = pcre2_get_ovector_pointer(md)[1];
  else if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) bad = pcre2_get_startchar(md);
  pcre2_match_data_free(md);
  if (rc == PCRE2_ERROR_NOMATCH) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (rc == PCRE2_ERROR_NOMEMORY) return no_memory(L);
  if (rc == PCRE2_ERROR_BADUTFOFFSET) return luaL_argerror(L, 3, "init is inside a UTF-8 character");
  if (rc < 0) {
    luaL_pushfail(L);
    push_failure(L, rc, bad);
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)first + 1); /* rc 0: only the whole match fitted, which is all we read */
  lua_pushinteger(L, (lua_Integer)last);
  return 2;
}

static int l_close(lua_State *L) {
  release(luaL_checkudata(L, 1, REGEX_MT));
  return 0;
}

static int l_tostring(lua_State *L) {
  struct regex *r = luaL_checkudata(L, 1, REGEX_MT);
  lua_pushfstring(L, "regex (%s)", r->code ? "open" : "closed");
  return 1;
}

static const luaL_Reg methods[] = {
  {"find", l_find},
  {"close", l_close},
  {NULL, NULL},
};

static const luaL_Reg meta[] = {
  {"__gc", l_close},
  {"__close", l_close},
  {"__tostring", l_tostring},
  {NULL, NULL},
};

/* An object of the type, for tests that walk every type (udata.h). */
static int make_regex(lua_State *L) {
  lua_settop(L, 0);
  lua_pushliteral(L, "");
  return l_compile(L);
}

int luaopen_evalua_regex(lua_State *L) {
  if (evalua_newclass(L, REGEX_MT, make_regex)) {
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lua_createtable(L, 0, 3);
  lua_pushcfunction(L, l_compile);
  lua_setfield(L, -2, "compile");
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, MATCH_LIMIT);
  lua_setfield(L, -2, "match");
  lua_pushinteger(L, DEPTH_LIMIT);
  lua_setfield(L, -2, "depth");
  lua_pushinteger(L, HEAP_LIMIT_KIB);
  lua_setfield(L, -2, "heap_kib");
  lua_setfield(L, -2, "limits");
  return 1;
}
