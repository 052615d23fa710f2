/* Per-state runtime: limits and the file-access policy of one Lua state.
 * It is the allocator's user data, so any C function reaches it from its
 * lua_State (evalua_runtime(L)) without globals. */
#ifndef EVALUA_RUNTIME_H
#define EVALUA_RUNTIME_H

#include <stdatomic.h>
#include <stddef.h>
#include <lua.h>

#include "evalua/alloc.h"

#define EVALUA_MAX_READ_DIRS 16
/* Registry table of messages raised by _sys.input_error (printed without a traceback). */
#define EVALUA_INPUT_ERRORS "evalua.input_errors"

struct evalua_runtime {
  /* configuration */
  int sandbox;                 /* 1: --sandbox profile */
  const char *lua_dir;         /* load lua/evalua from here instead of the binary */
  size_t mem_limit;            /* bytes; 0 = none */
  double cpu_limit;            /* seconds of CPU time; 0 = none */
  double time_limit;           /* seconds of wall-clock time; 0 = none */
  char *read_dirs[EVALUA_MAX_READ_DIRS]; /* canonical paths, sandbox only */
  int n_read_dirs;
  char *out_dir;               /* canonical path, the only writable folder */
  int read_fds[EVALUA_MAX_READ_DIRS]; /* the folders above, opened once (O_PATH) */
  int out_fd;                  /* valid when out_dir is set */
  /* state */
  _Atomic size_t mem_used;     /* bytes the Lua allocator holds (written by the Lua thread only) */
  _Atomic size_t c_used;       /* bytes C structures hold through evalua_allocator (any thread) */
  atomic_int mem_exceeded;     /* an allocation was refused at mem_limit */
  /* for tests (tests/c/host_memerr.c): when fail_at > 0, every allocation
   * from the one that makes allocs reach fail_at on fails as if memory had
   * run out (one failure alone would not do: Lua collects and retries);
   * allocs counts the allocations that grow a block, Lua's and C's */
  _Atomic size_t allocs, fail_at;
  int cpu_exceeded;
  int time_exceeded;
  double deadline;             /* CLOCK_MONOTONIC seconds when time_limit runs out */
  int exit_requested;          /* ev.exit was called: its code is exit_code */
  int exit_code;
};

/* A new state whose allocator enforces rt->mem_limit; NULL when out of memory. */
lua_State *evalua_state_new(struct evalua_runtime *rt);
struct evalua_runtime *evalua_runtime(lua_State *L);

/* C memory a script causes counts against --mem-limit with the Lua
 * state's own: structures of metrics/ and the bindings take it from this
 * allocator (alloc.h), which any thread may call. */
struct evm_alloc evalua_allocator(lua_State *L);
/* Bytes both allocators hold. */
size_t evalua_mem_used(const struct evalua_runtime *rt);
/* Before a binding allocates about bytes of C memory for a script: when
 * that would pass --mem-limit, a full collection first, so that objects
 * the script dropped give back their C memory (the collector sees only
 * their small userdata). */
void evalua_make_room(lua_State *L, size_t bytes);
/* Counts bytes held outside evalua_allocator (TREC data, mapped; the
 * report metrics/trec_eval.c makes) against --mem-limit while they are
 * held: 0, or -1 when they do not fit (nothing is counted then).
 * evalua_uncharge gives them back. */
int evalua_charge(struct evalua_runtime *rt, size_t bytes);
void evalua_uncharge(struct evalua_runtime *rt, size_t bytes);
/* Raises the error of a C allocation that failed: the state's memory
 * error when --mem-limit refused it (the run ends with the limit's
 * message), else "not enough memory". */
int evalua_nomem(lua_State *L);

/* Opens the standard libraries, preloads the C modules, installs the
 * embedded-library searcher and, for --sandbox, applies the profile.
 * Runs inside a protected call. */
void evalua_state_open(lua_State *L);

/* Whether the runtime allows reading (write = 0) or writing (write = 1)
 * path: 1, or 0 with a message pushed. Trusted states allow everything. */
int evalua_path_allowed(lua_State *L, const char *path, int write);
/* The same, raising the message as a Lua error. */
void evalua_check_path(lua_State *L, const char *path, int write);

/* A file named relative to an open folder: what evalua_at resolves a path
 * to. In the trusted profile dirfd is AT_FDCWD and name the path itself. */
struct evalua_at {
  int dirfd;
  const char *name;
  char *owned; /* the resolved path name points into */
};

/* Opens the folder that holds path, in one step with the sandbox's check:
 * beneath the --out folder (write) or a --read/--out folder (read), through
 * no symbolic link (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk
 * of O_NOFOLLOW opens where the kernel lacks openat2), so a dangling link
 * or a folder swapped for a link after the check cannot redirect the open.
 * The last name is never resolved: a symbolic link there is refused, or,
 * with EVALUA_AT_LINK, is what the caller acts on (unlink, rename).
 * EVALUA_AT_MKDIRS creates missing folders on the way. Open the name
 * itself with O_NOFOLLOW (evalua_at_flags). 0, or -1 with a message pushed. */
#define EVALUA_AT_MKDIRS 1
#define EVALUA_AT_LINK 2
int evalua_at(lua_State *L, const char *path, int write, int flags, struct evalua_at *at);
/* O_NOFOLLOW when at came from the sandbox, else 0. */
int evalua_at_flags(const struct evalua_at *at);
void evalua_at_release(struct evalua_at *at);
/* Opens the folder rel (no "." or ".." names) beneath rootfd with no
 * symbolic link on the way; use_openat2 = 0 forces the O_NOFOLLOW walk
 * (for tests). A new descriptor, or -1 with errno set. */
int evalua_open_dir_beneath(int rootfd, const char *rel, int mkdirs, int use_openat2);

/* Canonicalises rt's folders given on the command line; returns 0 or sets
 * *err to a static message naming the folder. */
int evalua_runtime_add_read_dir(struct evalua_runtime *rt, const char *dir, const char **err);
int evalua_runtime_set_out_dir(struct evalua_runtime *rt, const char *dir, const char **err);
void evalua_runtime_free(struct evalua_runtime *rt);

/* Starts the clocks of --cpu-limit and --time-limit and arms their
 * backstops: signals that end the process (status 3, one line on stderr) a
 * few seconds after a limit if the Lua hook never got to fire (a loop in C,
 * in a finalizer or a message handler, where hooks are off). */
void evalua_arm_limits(struct evalua_runtime *rt);
/* Seconds left before --time-limit (HUGE_VAL when there is none). */
double evalua_time_left(lua_State *L);
/* Raises the time-limit error; from then on every instruction raises it. */
int evalua_time_up(lua_State *L);

/* Raises an exit request ({evalua_exit = code}) that pcall cannot keep:
 * from then on every instruction of the main thread and of L raises it
 * again, so a metric or ev.map item that calls ev.exit ends the run. */
int evalua_request_exit(lua_State *L, int code);

/* Installed by evalua_state_open: package.preload entries for C modules. */
void evalua_preload_modules(lua_State *L);
/* package.searchers entry for the embedded library (or rt->lua_dir). */
void evalua_install_searcher(lua_State *L);
/* Gives the chunk at idx the library's globals under --sandbox (a chunk of
 * the host's that runs library code, as `evalua merge` does); elsewhere
 * it keeps the globals it has. */
void evalua_library_env(lua_State *L, int idx);

#endif
