/* evalua._sys: clocks, terminals, hashing and crash-safe file operations
 * for the Lua library. Every path goes through the sandbox policy. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "curl_load.h"
#include <lauxlib.h>
#include <openssl/evp.h>
#include <utf8proc.h>

#include "files.h"
#include "modules.h"
#include "runtime.h"
#include "udata.h"

static int fail(lua_State *L, const char *what, const char *path) {
  luaL_pushfail(L);
  lua_pushfstring(L, "%s '%s': %s", what, path, strerror(errno));
  return 2;
}

/* Resolves path with evalua_at. A refusal by the sandbox is raised (as
 * evalua_check_path does); any other failure returns nil, message. */
static int resolve(lua_State *L, const char *path, int write, int flags, struct evalua_at *at,
                   const char *what) {
  if (!evalua_at(L, path, write, flags, at)) return 0;
  int e = errno;
  if (e == EACCES || e == ELOOP || e == EXDEV || e == ENOTDIR) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_error(L);
  }
  lua_pop(L, 1);
  errno = e;
  return fail(L, what, path);
}

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int l_now(lua_State *L) { lua_pushnumber(L, clock_seconds(CLOCK_REALTIME)); return 1; }
static int l_monotonic(lua_State *L) { lua_pushnumber(L, clock_seconds(CLOCK_MONOTONIC)); return 1; }
static int l_cputime(lua_State *L) { lua_pushnumber(L, clock_seconds(CLOCK_PROCESS_CPUTIME_ID)); return 1; }

/* sleep(seconds); a sleep past --time-limit ends at the limit with its error. */
static int l_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1), left = evalua_time_left(L);
  int cut = s > left;
  if (cut) s = left;
  if (s > 1e9) s = 1e9; /* 31 years; beyond, time_t conversion would overflow */
  if (s > 0) {
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
  }
  return cut ? evalua_time_up(L) : 0;
}

static int stream_arg(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING) {
    lua_Integer n = luaL_checkinteger(L, arg);
    luaL_argcheck(L, n >= 0 && n <= INT_MAX, arg, "a file descriptor");
    return (int)n;
  }
  const char *n = lua_tostring(L, arg);
  int fd = !strcmp(n, "stdin") ? 0 : !strcmp(n, "stdout") ? 1 : !strcmp(n, "stderr") ? 2 : -1;
  luaL_argcheck(L, fd >= 0, arg, "expected 'stdin', 'stdout' or 'stderr'");
  return fd;
}

/* isatty("stdout" | "stderr" | fd) */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty(stream_arg(L, 1)));
  return 1;
}

/* terminal("stdout" | "stderr" | fd) -> {tty =, color =, dumb =, columns =,
 * progress_seconds =}: what the conventions of terminals allow on that
 * stream. color: a terminal, TERM set and not "dumb", NO_COLOR unset or
 * empty (no-color.org); dumb: no cursor control either; columns: $COLUMNS
 * when it is a positive number, else the terminal's width, else absent (no
 * limit); progress_seconds: $EVALUA_PROGRESS_SECONDS when a positive
 * number (how often progress is written where it cannot be redrawn).
 * Readable under --sandbox, as none of it is a secret. */
static int l_terminal(lua_State *L) {
  int fd = stream_arg(L, 1), tty = isatty(fd);
  const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
  const char *every = getenv("EVALUA_PROGRESS_SECONDS");
  int dumb = !term || !*term || !strcmp(term, "dumb");
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, tty), lua_setfield(L, -2, "tty");
  lua_pushboolean(L, dumb), lua_setfield(L, -2, "dumb");
  lua_pushboolean(L, tty && !dumb && !(no_color && *no_color)), lua_setfield(L, -2, "color");
  char *end;
  long n = cols ? strtol(cols, &end, 10) : 0;
  struct winsize ws;
  if (!(cols && *cols && !*end && n > 0 && n <= 100000))
    n = tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
  if (n > 0) lua_pushinteger(L, n), lua_setfield(L, -2, "columns");
  double secs = every && *every ? strtod(every, &end) : 0;
  if (secs > 0 && secs < 1e9 && !*end) lua_pushnumber(L, secs), lua_setfield(L, -2, "progress_seconds");
  return 1;
}

static int l_getpid(lua_State *L) { lua_pushinteger(L, getpid()); return 1; }

/* shard_env(name) -> value | nil: the variables that place a run among its
 * shards, readable under --sandbox too, as they hold no secret; any other
 * name is an error (os.getenv is the way to the rest, where allowed). */
static int l_shard_env(lua_State *L) {
  static const char *const names[] = {
    "EVALUA_SHARD", "EVALUA_SHARDS", "EVALUA_PARTS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "BUILDKITE_PARALLEL_JOB",
    "BUILDKITE_PARALLEL_JOB_COUNT", "CI_NODE_INDEX", "CI_NODE_TOTAL", NULL};
  int k = luaL_checkoption(L, 1, NULL, names);
  const char *v = getenv(names[k]);
  if (v) lua_pushstring(L, v);
  else lua_pushnil(L);
  return 1;
}

static int l_sandboxed(lua_State *L) {
  lua_pushboolean(L, evalua_runtime(L)->sandbox);
  return 1;
}

/* path_allowed(path, mode) -> true | false, message (mode as in io.open) */
static int l_path_allowed(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  if (evalua_path_allowed(L, path, mode[0] != 'r' || strchr(mode, '+') != NULL)) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_insert(L, -2);
  return 2;
}

static int l_sha256(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(s, n, md, &len, EVP_sha256(), NULL)) return luaL_error(L, "sha256 failed");
  char hex[2 * EVP_MAX_MD_SIZE + 1];
  for (unsigned i = 0; i < len; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  lua_pushlstring(L, hex, 2 * len);
  return 1;
}

/* realpath(path) -> the canonical absolute path, or nil, message: how a
 * run records a folder (its judge cache) so a later process elsewhere
 * finds it. Under --sandbox a path outside the allowed folders is refused
 * (raised), so it cannot probe what exists there. */
static int l_realpath(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (!evalua_path_allowed(L, path, 0)) return lua_error(L);
  char *real = realpath(path, NULL);
  if (!real) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushstring(L, real);
  free(real);
  return 1;
}

static int l_mkdir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct evalua_at at;
  int r = resolve(L, path, 1, EVALUA_AT_MKDIRS, &at, "cannot create folder");
  if (r) return r;
  int bad = at.owned ? mkdirat(at.dirfd, at.name, 0777) && errno != EEXIST : evalua_make_dir(path);
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  if (bad) return fail(L, "cannot create folder", path);
  lua_pushboolean(L, 1);
  return 1;
}

/* nil, "path: strerror", errno: how os.remove and os.rename fail. */
static int os_fail(lua_State *L, const char *path, int e) {
  luaL_pushfail(L);
  lua_pushfstring(L, "%s: %s", path, strerror(e));
  lua_pushinteger(L, e);
  return 3;
}

/* A sandbox refusal from evalua_at is raised, as evalua_check_path does. */
static int refused(lua_State *L) {
  luaL_where(L, 1);
  lua_insert(L, -2);
  lua_concat(L, 2);
  return lua_error(L);
}

/* remove(path): os.remove for --sandbox, the check and the removal in one
 * step (a link is removed, never followed). */
static int l_remove(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct evalua_at at;
  if (evalua_at(L, path, 1, EVALUA_AT_LINK, &at)) return refused(L);
  int r = unlinkat(at.dirfd, at.name, 0);
  if (r && (errno == EISDIR || errno == EPERM)) r = unlinkat(at.dirfd, at.name, AT_REMOVEDIR);
  int e = errno;
  evalua_at_release(&at);
  if (r) return os_fail(L, path, e);
  lua_pushboolean(L, 1);
  return 1;
}

/* rename(from, to): os.rename for --sandbox, both ends resolved beneath
 * --out in one step each. */
static int l_rename(lua_State *L) {
  const char *from = luaL_checkstring(L, 1), *to = luaL_checkstring(L, 2);
  struct evalua_at a, b;
  if (evalua_at(L, from, 1, EVALUA_AT_LINK, &a)) return refused(L);
  if (evalua_at(L, to, 1, EVALUA_AT_LINK, &b)) {
    evalua_at_release(&a);
    return refused(L);
  }
  int r = renameat(a.dirfd, a.name, b.dirfd, b.name), e = errno;
  evalua_at_release(&a);
  evalua_at_release(&b);
  if (r) return os_fail(L, from, e);
  lua_pushboolean(L, 1);
  return 1;
}

/* Lua's own file handles, made from a descriptor: io.open's result. */
static int close_stream(lua_State *L) {
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(s->f) == 0, NULL);
}

static int open_flags(const char *mode) {
  int f = mode[0] == 'r' ? O_RDONLY : mode[0] == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
        : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND : -1;
  const char *p = mode + (f != -1);
  if (f != -1 && *p == '+') f = (f & ~O_WRONLY) | O_RDWR, p++;
  p += strspn(p, "b");
  return *p ? -1 : f;
}

/* open(path [, mode]) -> file | nil, message, errno: io.open, with the
 * sandbox's check and the open in one step (evalua_at). */
static int l_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1), *mode = luaL_optstring(L, 2, "r");
  int flags = open_flags(mode);
  luaL_argcheck(L, flags != -1, 2, "invalid mode");
  luaL_Stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->closef = NULL; /* a closed file until fdopen succeeds */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  struct evalua_at at;
  int write = (flags & (O_WRONLY | O_RDWR)) != 0;
  if (evalua_at(L, path, write, 0, &at)) {
    int e = errno;
    luaL_pushfail(L);
    lua_insert(L, -2);
    lua_pushinteger(L, e);
    return 3;
  }
  int fd = openat(at.dirfd, at.name, flags | O_CLOEXEC | evalua_at_flags(&at), 0666);
  int e = errno, sandboxed = at.owned != NULL;
  evalua_at_release(&at);
  if (fd >= 0 && !(s->f = fdopen(fd, mode))) e = errno, close(fd), fd = -1;
  if (fd < 0) {
    luaL_pushfail(L);
    if (sandboxed && e == ELOOP)
      lua_pushfstring(L, "sandbox: %s access to '%s' is not allowed (no symbolic links under --sandbox)",
                      write ? "write" : "read", path);
    else
      lua_pushfstring(L, "%s: %s", path, strerror(e));
    lua_pushinteger(L, e);
    return 3;
  }
  s->closef = close_stream;
  return 1;
}

/* write_atomic(path, data): a reader sees the old file or the whole new one,
 * never a torn one, even if the process is killed midway. */
static int l_write_atomic(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n;
  const char *data = luaL_checklstring(L, 2, &n);
  struct evalua_at at;
  int r = resolve(L, path, 1, EVALUA_AT_LINK, &at, "cannot write"); /* rename(2) replaces a link */
  if (r) return r;
  int bad = evalua_write_atomic_at(at.dirfd, at.name, evalua_at_flags(&at), data, n);
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  if (bad) return fail(L, "cannot write", path);
  lua_pushboolean(L, 1);
  return 1;
}

/* A file of lines whose last line has no newline was cut off while being
 * appended to (power loss, a kill between two writes): cut that torn tail
 * off, so the next record starts on a line of its own. */
static int cut_torn_tail(int fd, off_t *dropped) {
  struct stat st;
  char buf[4096];
  if (fstat(fd, &st)) return -1;
  off_t end = st.st_size, pos = end;
  while (pos > 0) {
    size_t k = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
    pos -= (off_t)k;
    if (pread(fd, buf, k, pos) != (ssize_t)k) return -1;
    for (size_t i = k; i-- > 0;) {
      if (buf[i] != '\n') continue;
      *dropped = end - (pos + (off_t)i + 1);
      return *dropped ? ftruncate(fd, pos + (off_t)i + 1) : 0;
    }
  }
  *dropped = end;
  return end ? ftruncate(fd, 0) : 0;
}

/* Writes data at the end, or nothing: a short write (full disk, file-size
 * limit) is truncated back, keeping errno. */
static int append_whole(int fd, const char *data, size_t n) {
  off_t end = lseek(fd, 0, SEEK_END);
  if (end < 0) return -1;
  if (!evalua_write_all(fd, data, n)) return 0;
  int e = errno;
  if (ftruncate(fd, end)) { /* nothing better to do; the write's error is the one to report */ }
  errno = e;
  return -1;
}

/* append(path, data) -> true, bytes of a torn tail dropped | nil, message.
 * One write under an exclusive lock, so records from two processes
 * finishing at once never interleave; a record is written whole or not at
 * all. */
static int l_append(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n;
  const char *data = luaL_checklstring(L, 2, &n);
  struct evalua_at at;
  int r = resolve(L, path, 1, 0, &at, "cannot append to");
  if (r) return r;
  int fd = openat(at.dirfd, at.name, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | evalua_at_flags(&at), 0666);
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  if (fd < 0) return fail(L, "cannot append to", path);
  off_t dropped = 0;
  int bad = flock(fd, LOCK_EX) || cut_torn_tail(fd, &dropped) || append_whole(fd, data, n) || fsync(fd);
  e = errno;
  if (close(fd) && !bad) bad = 1, e = errno; /* closing releases the lock */
  errno = e;
  if (bad) return fail(L, "cannot append to", path);
  lua_pushboolean(L, 1);
  lua_pushinteger(L, (lua_Integer)dropped);
  return 2;
}

/* flock(file, "sh" | "ex" | "un") -> true | nil, message: a lock on an
 * open Lua file, held until it is closed. A reader of history.jsonl takes
 * "sh", so it never sees half of a record that append is writing. */
static int l_flock(lua_State *L) {
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  static const char *const modes[] = {"sh", "ex", "un", NULL};
  static const int ops[] = {LOCK_SH, LOCK_EX, LOCK_UN};
  int op = ops[luaL_checkoption(L, 2, NULL, modes)];
  luaL_argcheck(L, s->closef != NULL, 1, "closed file");
  int r;
  while ((r = flock(fileno(s->f), op)) != 0 && errno == EINTR) {}
  return luaL_fileresult(L, r == 0, NULL);
}

/* ---- lock files: lock(path) -> handle | nil, "held by pid N" ---------- */

#define LOCK_MT "evalua.Lock"

/* unlock, __gc and __close: a second call does nothing. */
static int lock_release(lua_State *L) {
  int *fd = luaL_checkudata(L, 1, LOCK_MT);
  if (*fd >= 0) close(*fd), *fd = -1; /* closing drops the flock */
  return 0;
}

static int make_lock(lua_State *L) {
  int *ud = lua_newuserdatauv(L, sizeof(int), 0);
  *ud = -1;
  luaL_setmetatable(L, LOCK_MT);
  return 1;
}

static int l_lock(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct evalua_at at;
  int r = resolve(L, path, 1, 0, &at, "cannot open lock file");
  if (r) return r;
  make_lock(L);
  int *ud = lua_touserdata(L, -1);
  int fd = openat(at.dirfd, at.name, O_RDWR | O_CREAT | O_CLOEXEC | evalua_at_flags(&at), 0666);
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  if (fd < 0) return fail(L, "cannot open lock file", path);
  if (flock(fd, LOCK_EX | LOCK_NB)) {
    char holder[32] = "";
    ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
    holder[got > 0 ? got : 0] = '\0';
    close(fd);
    luaL_pushfail(L);
    lua_pushfstring(L, "'%s' is held by process %s", path, *holder ? holder : "?");
    return 2;
  }
  *ud = fd;
  char pid[32];
  int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)len, 0) < 0) { /* informative only */ }
  return 1;
}

static int l_listdir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct evalua_at at;
  int r = resolve(L, path, 0, 0, &at, "cannot list");
  if (r) return r;
  int fd = openat(at.dirfd, at.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | evalua_at_flags(&at));
  int e = errno;
  evalua_at_release(&at);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d && fd >= 0) e = errno, close(fd);
  errno = e;
  if (!d) return fail(L, "cannot list", path);
  lua_newtable(L);
  lua_Integer i = 0;
  for (struct dirent *entry; (entry = readdir(d));) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    lua_pushstring(L, entry->d_name);
    lua_rawseti(L, -2, ++i);
  }
  closedir(d);
  return 1;
}

/* stat(path) -> {size=, mtime=, mtime_ns=, dir=} | nil, message; mtime_ns
 * is the nanoseconds within mtime's second (a file rewritten within one
 * second, at its old size, differs there). */
static int l_stat(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct evalua_at at;
  int r = resolve(L, path, 0, EVALUA_AT_LINK, &at, "cannot stat"); /* a link's own, as lstat */
  if (r) return r;
  struct stat st;
  int bad = fstatat(at.dirfd, at.name, &st, at.owned ? AT_SYMLINK_NOFOLLOW : 0);
  int e = errno;
  evalua_at_release(&at);
  errno = e;
  if (bad) return fail(L, "cannot stat", path);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)st.st_size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, (lua_Integer)st.st_mtime);
  lua_setfield(L, -2, "mtime");
  lua_pushinteger(L, (lua_Integer)st.st_mtim.tv_nsec);
  lua_setfield(L, -2, "mtime_ns");
  lua_pushboolean(L, S_ISDIR(st.st_mode));
  lua_setfield(L, -2, "dir");
  return 1;
}

/* input_error(msg): raises msg (a string, so pcall callers see the usual
 * kind of error) and remembers it, so the command line prints it without a
 * traceback: a bad data file is not a bug in the script. */
static int l_input_error(lua_State *L) {
  luaL_checkstring(L, 1);
  lua_settop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, EVALUA_INPUT_ERRORS);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return lua_error(L);
}

/* exit(code): ev.exit; see evalua_request_exit. */
static int l_exit(lua_State *L) {
  lua_Integer code = luaL_optinteger(L, 1, 3);
  luaL_argcheck(L, code >= 0 && code <= 255, 1, "an exit status from 0 to 255");
  return evalua_request_exit(L, (int)code);
}

static int l_versions(lua_State *L) {
  const char *why = NULL;
  const struct curl_fns *cu = curl_load(&why); /* loads libcurl: only when asked */
  const curl_version_info_data *c = cu ? cu->version_info(CURLVERSION_NOW) : NULL;
  lua_createtable(L, 0, 5);
  lua_pushliteral(L, EVALUA_VERSION);
  lua_setfield(L, -2, "evalua");
  lua_pushliteral(L, LUA_RELEASE);
  lua_setfield(L, -2, "lua");
  if (c) lua_pushfstring(L, "libcurl %s%s%s", c->version, c->ssl_version ? " " : "",
                         c->ssl_version ? c->ssl_version : "");
  else lua_pushfstring(L, "libcurl: %s", why);
  lua_setfield(L, -2, "curl");
  lua_pushfstring(L, "utf8proc %s", utf8proc_version());
  lua_setfield(L, -2, "utf8proc");
  return 1;
}

static const luaL_Reg sys_funcs[] = {
  {"now", l_now},           {"monotonic", l_monotonic}, {"cputime", l_cputime},
  {"sleep", l_sleep},       {"isatty", l_isatty},       {"terminal", l_terminal},
  {"getpid", l_getpid},     {"shard_env", l_shard_env},
  {"sandboxed", l_sandboxed}, {"path_allowed", l_path_allowed}, {"sha256", l_sha256},
  {"mkdir", l_mkdir},       {"write_atomic", l_write_atomic}, {"append", l_append},
  {"lock", l_lock},         {"flock", l_flock},         {"listdir", l_listdir},     {"stat", l_stat},
  {"versions", l_versions}, {"input_error", l_input_error}, {"exit", l_exit}, {"open", l_open},
  {"remove", l_remove},     {"rename", l_rename},       {"realpath", l_realpath},   {NULL, NULL},
};

static const luaL_Reg lock_methods[] = {
  {"unlock", lock_release}, {"__gc", lock_release}, {"__close", lock_release}, {NULL, NULL},
};

int luaopen_evalua_sys(lua_State *L) {
  if (evalua_newclass(L, LOCK_MT, make_lock)) {
    luaL_setfuncs(L, lock_methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, sys_funcs);
  lua_pushliteral(L, EVALUA_VERSION); /* versions() loads libcurl; this does not */
  lua_setfield(L, -2, "version");
  return 1;
}
