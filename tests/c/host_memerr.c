/* Allocation failures, in the manner of Lua's testes/memerr.lua (issue 26,
 * item 2): tests/c/memerr.lua runs once to count its allocations, then
 * once for every n of them with memory running out at the n-th (the
 * runtime's fail_at: that allocation and every later one fail, Lua's and
 * C's alike, as at a memory limit). Each run must end in an error that
 * says "not enough memory"; nothing may crash, and after lua_close every
 * byte either allocator counted must be given back (LeakSanitizer checks
 * the rest in the sanitized build). */
#define _GNU_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "check.h"
#include "runtime.h"

#define WORKLOAD "tests/c/memerr.lua"

static char dir[64];

static void put(const char *name, const char *text) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fputs(text, f), fclose(f);
}

static void write_inputs(void) {
  snprintf(dir, sizeof dir, "/tmp/evalua-memerr-XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  put("rows.jsonl",
      "{\"qid\": \"q1\", \"answer\": \"the cat sat\", \"gold_answers\": [\"a cat sat\"], "
      "\"retrieved\": [{\"id\": \"d1\", \"score\": 2}, {\"id\": \"d2\", \"score\": 1}], \"gold_doc_ids\": [\"d2\"]}\n"
      "{\"qid\": \"q2\", \"answer\": \"no\", \"gold_answers\": \"yes\", \"retrieved\": [\"d3\"], "
      "\"graded_relevance\": {\"d3\": 2}, \"extra\": {\"k\": [1, 2]}}\n"
      "{\"qid\": 3, \"answer\": \"bad qid\"}\n"
      "{\"qid\": \"q3\", \"answer\": \"some words here\", \"gold_answers\": [\"words\"], \"retrieved\": [\"d1\"], "
      "\"gold_doc_ids\": [\"d1\"], \"n\": 2.5}\n");
  put("rows.csv", "qid,answer,gold_answers,retrieved\nq1,\"a, b\",a|b,d1|d2\nq2,c,c,\"[\"\"d3\"\"]\"\n");
  put("qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n");
  put("run", "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r\nq2 Q0 d3 1 1.0 r\nq3 Q0 d9 1 1.0 r\n");
}

static void remove_inputs(void) {
  const char *names[] = {"rows.jsonl", "rows.csv", "qrels", "run"};
  char path[128];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

static int open_state(lua_State *L) {
  evalua_state_open(L);
  lua_pushstring(L, dir);
  lua_setglobal(L, "DIR");
  return 0;
}

/* One run with the fail_at-th allocation failing (0: none); returns the
 * allocations it made and sets *ok to whether it ended as it must. */
static size_t run(size_t fail_at, int *ok) {
  struct evalua_runtime rt;
  memset(&rt, 0, sizeof rt);
  lua_State *L = evalua_state_new(&rt);
  *ok = 0;
  if (!L) return 0;
  lua_pushcfunction(L, open_state);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK || luaL_loadfilex(L, WORKLOAD, "t") != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    lua_close(L);
    return 0;
  }
  rt.allocs = 0;
  rt.fail_at = fail_at ? fail_at : (size_t)-1; /* counted, never reached */
  int status = lua_pcall(L, 0, 1, 0);
  const char *msg = lua_tostring(L, -1);
  size_t made = rt.allocs;
  if (fail_at == 0) *ok = status == LUA_OK && msg && !strcmp(msg, "done");
  else *ok = status != LUA_OK && msg && strstr(msg, "not enough memory");
  if (!*ok) fprintf(stderr, "allocation %zu failing: status %d, %s\n", fail_at, status, msg ? msg : "(no message)");
  rt.fail_at = 0;
  lua_close(L);
  if (rt.mem_used || rt.c_used) {
    fprintf(stderr, "allocation %zu failing: %zu bytes of Lua and %zu of C not given back\n", fail_at,
            (size_t)rt.mem_used, (size_t)rt.c_used);
    *ok = 0;
  }
  return made;
}

int main(void) {
  write_inputs();
  int ok;
  size_t total = run(0, &ok);
  CHECK(ok);
  CHECK(total > 500); /* the run reaches the structures: several hundred allocations */
  size_t bad = 0;
  for (size_t n = 1; n <= total; n++) {
    run(n, &ok);
    bad += !ok;
  }
  CHECK(bad == 0);
  printf("%zu allocations, each failed once; %zu runs ended wrongly\n", total, bad);
  remove_inputs();
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
