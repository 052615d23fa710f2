/* Lua state creation: a capped allocator, a CPU-time hook that pcall cannot
 * swallow, library opening, and the sandbox's file-access policy. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "runtime.h"
#include "udata.h"

#define CPU_CHECK_EVERY 10000 /* VM instructions between CPU-time checks */

size_t evalua_mem_used(const struct evalua_runtime *rt) {
  return atomic_load_explicit(&rt->mem_used, memory_order_relaxed) +
         atomic_load_explicit(&rt->c_used, memory_order_relaxed);
}

/* Whether a block growing from old to nsize bytes is refused. A shrink
 * never is: Lua relies on that, and so do the structures' error paths. */
static int refused(struct evalua_runtime *rt, size_t old, size_t nsize) {
  if (nsize <= old) return 0;
  size_t fail_at = atomic_load_explicit(&rt->fail_at, memory_order_relaxed);
  if (fail_at && atomic_fetch_add(&rt->allocs, 1) + 1 >= fail_at) return 1;
  size_t limit = rt->mem_limit, used = evalua_mem_used(rt) - old;
  if (!limit || (nsize <= limit && used <= limit - nsize)) return 0;
  rt->mem_exceeded = 1;
  return 1;
}

/* The Lua state's allocator; only the Lua thread calls it. */
static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct evalua_runtime *rt = ud;
  size_t old = ptr ? osize : 0, used = atomic_load_explicit(&rt->mem_used, memory_order_relaxed);
  if (nsize == 0) {
    free(ptr);
    atomic_store_explicit(&rt->mem_used, used - old, memory_order_relaxed);
    return NULL;
  }
  if (refused(rt, old, nsize)) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) atomic_store_explicit(&rt->mem_used, used - old + nsize, memory_order_relaxed);
  return p;
}

/* The allocator of C structures (evalua_allocator), the same cap. */
static void *counted_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct evalua_runtime *rt = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    atomic_fetch_sub(&rt->c_used, old);
    return NULL;
  }
  if (refused(rt, old, nsize)) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) atomic_fetch_add(&rt->c_used, nsize - old); /* modulo 2^n: a shrink subtracts */
  return p;
}

struct evm_alloc evalua_allocator(lua_State *L) {
  return (struct evm_alloc){counted_alloc, evalua_runtime(L)};
}

int evalua_charge(struct evalua_runtime *rt, size_t bytes) {
  if (refused(rt, 0, bytes)) return -1;
  atomic_fetch_add(&rt->c_used, bytes);
  return 0;
}

void evalua_uncharge(struct evalua_runtime *rt, size_t bytes) { atomic_fetch_sub(&rt->c_used, bytes); }

void evalua_make_room(lua_State *L, size_t bytes) {
  struct evalua_runtime *rt = evalua_runtime(L);
  size_t used = evalua_mem_used(rt);
  if (rt->mem_limit && (bytes > rt->mem_limit || used > rt->mem_limit - bytes)) lua_gc(L, LUA_GCCOLLECT);
}

int evalua_nomem(lua_State *L) {
  struct evalua_runtime *rt = evalua_runtime(L);
  if (rt->mem_exceeded && rt->mem_limit) lua_newuserdatauv(L, rt->mem_limit, 0); /* raises LUA_ERRMEM */
  return luaL_error(L, "not enough memory");
}

static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  lua_writestringerror("evalua: unprotected Lua error: %s\n", msg ? msg : "?");
  return 0;
}

static void warn_off(void *ud, const char *msg, int tocont);
static void warn_on(void *ud, const char *msg, int tocont) {
  lua_State *L = ud;
  if (!tocont && *msg == '@') { /* control message, as in lauxlib */
    if (strcmp(msg, "@off") == 0) lua_setwarnf(L, warn_off, L);
    return;
  }
  lua_writestringerror("%s", msg);
  if (!tocont) lua_writestringerror("%s", "\n");
}
static void warn_off(void *ud, const char *msg, int tocont) {
  lua_State *L = ud;
  if (!tocont && strcmp(msg, "@on") == 0) lua_setwarnf(L, warn_on, L);
}

lua_State *evalua_state_new(struct evalua_runtime *rt) {
  lua_State *L = lua_newstate(capped_alloc, rt);
  if (L) {
    lua_atpanic(L, panic);
    lua_setwarnf(L, warn_off, L);
  }
  return L;
}

struct evalua_runtime *evalua_runtime(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  return ud;
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int over_limit(struct evalua_runtime *rt) {
  if (rt->cpu_exceeded || rt->time_exceeded) return 1;
  if (rt->cpu_limit > 0 && cpu_seconds() >= rt->cpu_limit) return rt->cpu_exceeded = 1;
  if (rt->time_limit > 0 && monotonic_seconds() >= rt->deadline) return rt->time_exceeded = 1;
  return 0;
}

/* Once a limit is passed, the hook fires on every instruction and line of
 * every coroutine that runs, so a pcall that catches the error gets nowhere. */
static void limit_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  struct evalua_runtime *rt = evalua_runtime(L);
  if (!over_limit(rt)) return;
  lua_sethook(L, limit_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  if (rt->cpu_exceeded) luaL_error(L, "CPU time limit of %f s exceeded (--cpu-limit)", rt->cpu_limit);
  luaL_error(L, "time limit of %f s exceeded (--time-limit)", rt->time_limit);
}

double evalua_time_left(lua_State *L) {
  struct evalua_runtime *rt = evalua_runtime(L);
  return rt->time_limit > 0 ? rt->deadline - monotonic_seconds() : HUGE_VAL;
}

int evalua_time_up(lua_State *L) {
  evalua_runtime(L)->time_exceeded = 1;
  limit_hook(L, NULL);
  return 0;
}

/* ---- backstops: signals for what the hook cannot interrupt --------------- */

#define BACKSTOP_GRACE 1 /* seconds past a limit before the process is stopped */

/* Written by evalua_arm_limits before the signals are armed, read only by
 * the handlers (write(2) and _exit(2) are async-signal-safe). */
static char cpu_message[128], time_message[128];
static size_t cpu_message_len, time_message_len;

static void backstop(int sig) {
  if (sig == SIGXCPU) (void)!write(2, cpu_message, cpu_message_len);
  else (void)!write(2, time_message, time_message_len);
  _exit(3);
}

static void on_signal(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = backstop;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* A timer on the process's CPU clock sends SIGXCPU at the limit plus the
 * grace, to the microsecond; RLIMIT_CPU counts whole seconds, so it stays
 * only as the outright kill: its soft limit (SIGXCPU again) at the limit
 * rounded up plus the grace, SIGKILL at its hard limit a grace later. */
static void arm_cpu_timer(double at) {
  timer_t t;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGXCPU;
  if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t)) return; /* the rlimit still stops it */
  struct itimerspec its = {{0, 0}, {(time_t)at, (long)((at - floor(at)) * 1e9)}};
  timer_settime(t, 0, &its, NULL);
}

static void arm_cpu(double limit) {
  int n = snprintf(cpu_message, sizeof cpu_message,
                   "evalua: CPU time limit of %g s exceeded (--cpu-limit); stopped outside Lua\n", limit);
  cpu_message_len = n > 0 && (size_t)n < sizeof cpu_message ? (size_t)n : 0;
  on_signal(SIGXCPU);
  arm_cpu_timer(limit + BACKSTOP_GRACE);
  struct rlimit rl;
  if (getrlimit(RLIMIT_CPU, &rl)) return;
  rlim_t soft = (rlim_t)ceil(limit) + BACKSTOP_GRACE, hard = soft + BACKSTOP_GRACE;
  if (rl.rlim_max != RLIM_INFINITY && hard > rl.rlim_max) hard = rl.rlim_max;
  if (soft > hard) soft = hard;
  rl.rlim_cur = soft, rl.rlim_max = hard;
  setrlimit(RLIMIT_CPU, &rl);
}

static void arm_time(double limit) {
  int n = snprintf(time_message, sizeof time_message,
                   "evalua: time limit of %g s exceeded (--time-limit); stopped outside Lua\n", limit);
  time_message_len = n > 0 && (size_t)n < sizeof time_message ? (size_t)n : 0;
  on_signal(SIGALRM);
  double at = limit + BACKSTOP_GRACE;
  struct itimerval it = {{0, 0}, {(time_t)at, (suseconds_t)((at - floor(at)) * 1e6)}};
  setitimer(ITIMER_REAL, &it, NULL);
}

void evalua_arm_limits(struct evalua_runtime *rt) {
  if (rt->time_limit > 0) {
    rt->deadline = monotonic_seconds() + rt->time_limit;
    arm_time(rt->time_limit);
  }
  if (rt->cpu_limit > 0) arm_cpu(rt->cpu_limit); /* both count from the start of the process */
}

static void push_exit(lua_State *L, int code) {
  lua_createtable(L, 0, 1);
  lua_pushinteger(L, code);
  lua_setfield(L, -2, "evalua_exit");
}

static void exit_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  push_exit(L, evalua_runtime(L)->exit_code);
  lua_error(L);
}

int evalua_request_exit(lua_State *L, int code) {
  struct evalua_runtime *rt = evalua_runtime(L);
  rt->exit_requested = 1, rt->exit_code = code;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_sethook(lua_tothread(L, -1), exit_hook, LUA_MASKCOUNT, 1);
  lua_pop(L, 1);
  lua_sethook(L, exit_hook, LUA_MASKCOUNT, 1);
  push_exit(L, code);
  return lua_error(L);
}

static void apply_sandbox(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "evalua.core.sandbox");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "apply");
  lua_call(L, 0, 0);
  lua_pop(L, 1);
}

void evalua_state_open(lua_State *L) {
  struct evalua_runtime *rt = evalua_runtime(L);
  luaL_openlibs(L);
  evalua_udata_open(L);
  evalua_preload_modules(L);
  evalua_install_searcher(L);
  if (rt->sandbox) apply_sandbox(L);
  if (rt->cpu_limit > 0 || rt->time_limit > 0) lua_sethook(L, limit_hook, LUA_MASKCOUNT, CPU_CHECK_EVERY);
}

/* ---- file-access policy ---------------------------------------------- */

static int under(const char *path, const char *root) {
  size_t n = strlen(root);
  if (strncmp(path, root, n) != 0) return 0;
  return path[n] == '\0' || path[n] == '/' || (n == 1 && root[0] == '/');
}

/* Canonical form of path; for a path that does not exist yet (a file, or
 * folders several levels deep), the canonical form of its longest existing
 * ancestor plus the missing names, none of which may be "." or "..": those
 * could only be resolved once the folders exist. NULL when refused. */
static char *canonical(const char *path) {
  char *real = realpath(path, NULL);
  if (real || errno != ENOENT) return real;
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--; /* "out/new/" names "out/new" */
  const char *slash = NULL;
  for (size_t i = n; i-- > 0;)
    if (path[i] == '/') { slash = path + i; break; }
  const char *name = slash ? slash + 1 : path;
  size_t name_len = (size_t)(path + n - name);
  if (!name_len || (name_len == 1 && name[0] == '.') || (name_len == 2 && !strncmp(name, "..", 2)))
    return NULL;
  char dir[PATH_MAX];
  size_t dlen = slash ? (size_t)(slash - path) : 1;
  if (dlen >= sizeof dir) return NULL;
  if (!slash) strcpy(dir, ".");
  else if (dlen == 0) strcpy(dir, "/");
  else {
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
  }
  char *parent = canonical(dir); /* recursion: one level per missing folder */
  if (!parent) return NULL;
  size_t len = strlen(parent) + name_len + 2;
  char *out = malloc(len);
  if (out) snprintf(out, len, "%s/%.*s", strcmp(parent, "/") ? parent : "", (int)name_len, name);
  free(parent);
  return out;
}

/* The canonical form of path's folder joined with its last name, which is
 * not resolved: a symbolic link there is the name itself (what unlink and
 * rename act on, and what an O_NOFOLLOW open refuses), never its target.
 * A last name of "." or ".." cannot be a link and resolves as usual. */
static char *canonical_name(const char *path) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--;
  const char *slash = memrchr(path, '/', n);
  const char *name = slash ? slash + 1 : path;
  size_t name_len = (size_t)(path + n - name);
  if (!name_len || (name_len == 1 && name[0] == '.') || (name_len == 2 && !strncmp(name, "..", 2)))
    return canonical(path);
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  char *parent = dir ? canonical(dir) : NULL;
  free(dir);
  if (!parent) return NULL;
  size_t len = strlen(parent) + name_len + 2;
  char *out = malloc(len);
  if (out) snprintf(out, len, "%s/%.*s", strcmp(parent, "/") ? parent : "", (int)name_len, name);
  free(parent);
  return out;
}

static int allowed(const struct evalua_runtime *rt, const char *real, int write) {
  if (rt->out_dir && under(real, rt->out_dir)) return 1;
  if (write) return 0;
  for (int i = 0; i < rt->n_read_dirs; i++)
    if (under(real, rt->read_dirs[i])) return 1;
  return 0;
}

int evalua_path_allowed(lua_State *L, const char *path, int write) {
  struct evalua_runtime *rt = evalua_runtime(L);
  if (!rt->sandbox) return 1;
  char *real = canonical(path);
  int ok = real && allowed(rt, real, write);
  free(real);
  if (!ok)
    lua_pushfstring(L, "sandbox: %s access to '%s' is not allowed (%s)", write ? "write" : "read",
                    path, write ? "writable only under --out" : "readable only under --read or --out");
  return ok;
}

/* The open root folder holding real (canonical), and where real's own part
 * starts; -1 when the policy refuses it. */
static int root_of(const struct evalua_runtime *rt, const char *real, int write, const char **rel) {
  int fd = -1;
  size_t n = 0;
  if (rt->out_dir && under(real, rt->out_dir)) fd = rt->out_fd, n = strlen(rt->out_dir);
  for (int i = 0; fd < 0 && !write && i < rt->n_read_dirs; i++)
    if (under(real, rt->read_dirs[i])) fd = rt->read_fds[i], n = strlen(rt->read_dirs[i]);
  if (fd >= 0) *rel = real + n + (real[n] == '/');
  return fd;
}

static int at_error(lua_State *L, const char *path, int write, int e) {
  if (e == ELOOP || e == EXDEV || e == ENOTDIR)
    lua_pushfstring(L, "sandbox: %s access to '%s' is not allowed (no symbolic links under --sandbox)",
                    write ? "write" : "read", path);
  else
    lua_pushfstring(L, "%s: %s", path, strerror(e));
  errno = e;
  return -1;
}

int evalua_at(lua_State *L, const char *path, int write, int flags, struct evalua_at *at) {
  struct evalua_runtime *rt = evalua_runtime(L);
  at->dirfd = AT_FDCWD, at->name = path, at->owned = NULL;
  if (!rt->sandbox) return 0;
  char *real = canonical_name(path);
  const char *rel = NULL;
  int root = real ? root_of(rt, real, write, &rel) : -1;
  if (root < 0) { /* a path naming a folder given on the command line, through a link to it */
    free(real);
    real = canonical(path);
    root = real ? root_of(rt, real, write, &rel) : -1;
    if (root >= 0 && *rel) root = -1;
  }
  if (root < 0) {
    free(real);
    if (evalua_path_allowed(L, path, write)) return at_error(L, path, write, EACCES);
    errno = EACCES; /* the policy's message is pushed */
    return -1;
  }
  at->owned = real;
  char *slash = strrchr((char *)rel, '/');
  at->name = slash ? slash + 1 : *rel ? rel : ".";
  if (slash) *slash = '\0';
  at->dirfd = evalua_open_dir_beneath(root, slash ? rel : "", flags & EVALUA_AT_MKDIRS, 1);
  struct stat st;
  if (at->dirfd >= 0 && ((flags & EVALUA_AT_LINK) || fstatat(at->dirfd, at->name, &st, AT_SYMLINK_NOFOLLOW) ||
                         !S_ISLNK(st.st_mode)))
    return 0;
  int e = at->dirfd >= 0 ? ELOOP : errno;
  evalua_at_release(at);
  return at_error(L, path, write, e);
}

int evalua_at_flags(const struct evalua_at *at) { return at->owned ? O_NOFOLLOW : 0; }

void evalua_at_release(struct evalua_at *at) {
  if (at->dirfd >= 0) close(at->dirfd);
  at->dirfd = -1;
  free(at->owned);
  at->owned = NULL;
}

void evalua_check_path(lua_State *L, const char *path, int write) {
  if (!evalua_path_allowed(L, path, write)) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_error(L);
  }
}

/* The folder's canonical path and a descriptor opened once: later opens
 * start from the descriptor, so renaming a folder above it changes nothing. */
static int keep_dir(const char *dir, char **slot, int *fd, const char **err) {
  char *real = realpath(dir, NULL);
  if (!real) {
    *err = "no such folder";
    return -1;
  }
  if ((*fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
    free(real);
    *err = "cannot open the folder";
    return -1;
  }
  *slot = real;
  return 0;
}

int evalua_runtime_add_read_dir(struct evalua_runtime *rt, const char *dir, const char **err) {
  if (rt->n_read_dirs == EVALUA_MAX_READ_DIRS) {
    *err = "too many --read folders";
    return -1;
  }
  if (keep_dir(dir, &rt->read_dirs[rt->n_read_dirs], &rt->read_fds[rt->n_read_dirs], err)) return -1;
  rt->n_read_dirs++;
  return 0;
}

int evalua_runtime_set_out_dir(struct evalua_runtime *rt, const char *dir, const char **err) {
  if (rt->out_dir) close(rt->out_fd), free(rt->out_dir);
  rt->out_dir = NULL;
  return keep_dir(dir, &rt->out_dir, &rt->out_fd, err);
}

void evalua_runtime_free(struct evalua_runtime *rt) {
  for (int i = 0; i < rt->n_read_dirs; i++) free(rt->read_dirs[i]), close(rt->read_fds[i]);
  if (rt->out_dir) close(rt->out_fd), free(rt->out_dir);
}
