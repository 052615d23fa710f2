/* evalua init [DIR]: writes a new evaluation project (the files listed by
 * lua/evalua/core/scaffold.lua) into DIR, creating it if needed. A file that
 * exists already stops the command before anything is written, so init never
 * overwrites work. Exit status: 0 ok, 2 usage, 3 a file exists or cannot be
 * written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "commands.h"
#include "files.h"
#include "runtime.h"

enum { EXIT_USAGE = 2, EXIT_INPUT = 3 };

static const char help_text[] =
  "usage: evalua init [DIR]\n"
  "\n"
  "Writes a new evaluation project into DIR (default: the working folder):\n"
  "  data.jsonl   three example rows in evalua's row format\n"
  "  eval.lua     the evaluation: a metric of your own, a G-Eval criterion, a gate\n"
  "  nightly.sh   a dated nightly run, with cron and systemd examples\n"
  "  README.md    what the files are\n"
  "Then `cd DIR && evalua run eval.lua` runs it with the offline judge.\n"
  "A file that exists already is never overwritten: nothing is written then.\n";

/* Pushes "DIR/name" for the file table at the top of the stack. */
static const char *push_path(lua_State *L, const char *dir) {
  lua_getfield(L, -1, "name");
  const char *path = lua_pushfstring(L, "%s/%s", dir, luaL_checkstring(L, -1));
  lua_remove(L, -2);
  return path;
}

static void write_file(lua_State *L, const char *dir) {
  const char *path = push_path(L, dir);
  lua_getfield(L, -2, "mode");
  mode_t mode = lua_isstring(L, -1) && !strcmp(lua_tostring(L, -1), "755") ? 0755 : 0644;
  lua_getfield(L, -3, "content");
  size_t n;
  const char *content = luaL_checklstring(L, -1, &n);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  int failed = fd < 0 || evalua_write_all(fd, content, n);
  int err = errno;
  if (fd >= 0 && close(fd) && !failed) failed = 1, err = errno;
  if (failed) luaL_error(L, "cannot write '%s': %s", path, strerror(err));
  printf("wrote %s\n", path);
  lua_pop(L, 3);
}

/* Runs under lua_pcall: checks every target first, then writes. */
static int init_project(lua_State *L) {
  const char *dir = lua_tostring(L, 1);
  evalua_state_open(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "evalua.core.scaffold");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "files");
  int files = lua_gettop(L);
  lua_Integer count = luaL_len(L, files);
  for (lua_Integer i = 1; i <= count; i++) {
    lua_rawgeti(L, files, i);
    const char *path = push_path(L, dir);
    if (access(path, F_OK) == 0) return luaL_error(L, "%s exists already; nothing was written", path);
    lua_pop(L, 2);
  }
  if (evalua_make_dir(dir)) return luaL_error(L, "cannot create folder '%s': %s", dir, strerror(errno));
  for (lua_Integer i = 1; i <= count; i++) {
    lua_rawgeti(L, files, i);
    write_file(L, dir);
    lua_pop(L, 1);
  }
  return 0;
}

int evalua_init_main(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(help_text, stdout);
    return 0;
  }
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
    fprintf(stderr, "evalua init: expected at most one folder, not '%s' (try 'evalua init --help')\n",
            argv[argc - 1]);
    return EXIT_USAGE;
  }
  struct evalua_runtime rt = {0};
  lua_State *L = evalua_state_new(&rt);
  if (!L) return fputs("evalua init: out of memory\n", stderr), EXIT_INPUT;
  lua_pushcfunction(L, init_project);
  lua_pushstring(L, argc == 2 ? argv[1] : ".");
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) fprintf(stderr, "evalua init: %s\n", lua_tostring(L, -1));
  lua_close(L);
  evalua_runtime_free(&rt);
  return status == LUA_OK ? 0 : EXIT_INPUT;
}
