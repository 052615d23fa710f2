/* libFuzzer target for a reader written in Lua, run in the embedded state
 * as evalua runs it (the real allocator, the embedded library). CHECK_FILE
 * is a chunk returning function(input); it raises only when the reader broke
 * its contract (a wrong kind of error, a wrong result), and then the
 * harness aborts so libFuzzer keeps the input.
 *
 * The Lua VM and lua-cjson are Debian's, not instrumented, so coverage
 * comes from a line hook: each pair of consecutive Lua lines bumps one of
 * libFuzzer's extra counters, which guides it like C edge coverage. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>

#include "runtime.h"

#ifndef CHECK_FILE
#error "compile with -DCHECK_FILE=\"path/to/check.lua\""
#endif

#define COUNTERS 65536
__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t counters[COUNTERS];
static uintptr_t previous;

static void line_hook(lua_State *S, lua_Debug *ar) {
  if (!lua_getinfo(S, "S", ar)) return;
  uintptr_t here = (uintptr_t)ar->source * 31u + (uintptr_t)ar->currentline;
  counters[(here ^ (previous >> 1)) % COUNTERS]++;
  previous = here;
}

static struct evalua_runtime rt = {.mem_limit = (size_t)512 << 20};
static lua_State *L;

static int open_state(lua_State *S) {
  evalua_state_open(S);
  if (luaL_loadfile(S, CHECK_FILE)) return lua_error(S);
  lua_call(S, 0, 1);
  return 1;
}

static void start(void) {
  L = evalua_state_new(&rt);
  if (!L) abort();
  lua_pushcfunction(L, open_state);
  if (lua_pcall(L, 0, 1, 0)) {
    fprintf(stderr, "fuzz_lua: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.check");
  lua_sethook(L, line_hook, LUA_MASKLINE, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!L) start();
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.check");
  lua_pushlstring(L, (const char *)data, size);
  if (lua_pcall(L, 1, 0, 0)) {
    fprintf(stderr, "fuzz_lua: contract broken: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_gc(L, LUA_GCSTEP, 0);
  return 0;
}
