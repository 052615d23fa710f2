/* evalua: the command line. As in lua.c, everything that touches Lua runs
 * inside pmain under lua_pcall with a traceback handler. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>
#include <lualib.h>

#include "bundled.h"
#include "commands.h"
#include "curl_load.h"
#include "files.h"
#include "runtime.h"

enum { EXIT_GATE = 1, EXIT_USAGE = 2, EXIT_SCRIPT = 3, EXIT_UNDECIDED = 4, EXIT_HELPED = -1 /* --help: done, status 0 */ };

static const char usage_text[] =
  "usage: evalua run [OPTIONS] SCRIPT [ARG...]   run a Lua script\n"
  "       evalua trec [-q] [-c] [-n] [-a] [-J] [-l LEVEL] [-M N] [-N DOCS] [-Z FILE]\n"
  "                   [-m MEASURE]... QRELS RUN    trec_eval's report (evalua trec --help)\n"
  "       evalua merge [RUN-OPTIONS --] PART... [--out DIR] [--allow-missing]\n"
  "                                              one run's reports from its shards' parts\n"
  "       evalua diff [OPTIONS] A.json B.json    compare two saved JSON reports\n"
  "                   (--history DIR [A [B]]: two runs of a history)\n"
  "       evalua view [OPTIONS] HISTORY_DIR|REPORT.json\n"
  "                                              the viewer: runs, items, labels\n"
  "       evalua init [DIR]                      start an evaluation project in DIR\n"
  "       evalua version                         versions of evalua and its libraries\n"
  "       evalua --help                          this text\n"
  "\n"
  "SCRIPT is a file, or the name of a bundled script installed with evalua\n"
  "(rag_report, nightly, calibrate, ...: see 'man evalua'). A SCRIPT named\n"
  "*.yaml or *.yml is a promptfoo config, run as it is ('evalua run CONFIG.yaml\n"
  "--help' lists its options).\n"
  "\n"
  "run options (before SCRIPT; everything after SCRIPT goes to the script):\n"
  "  --sandbox          run an untrusted script: no processes, C modules, debug\n"
  "                     library or bytecode; files readable only under --read and\n"
  "                     --out, writable only under --out; CPU and memory capped\n"
  "  --read DIR         a folder the sandboxed script may read (repeatable)\n"
  "  --out DIR          the script's output folder: the default of its own --out\n"
  "                     (ev.cli); with --sandbox also the one folder it may write\n"
  "                     (created if missing)\n"
  "  --cpu-limit SEC    CPU-time limit (default 60 with --sandbox, else none)\n"
  "  --time-limit SEC   wall-clock limit (default 600 with --sandbox, else none)\n"
  "  --mem-limit MB     memory limit of the Lua state (default 1024 with --sandbox)\n"
  "  --lua-dir DIR      load the evalua library from DIR/evalua/*.lua instead of\n"
  "                     the copy built into the binary (also $EVALUA_LUA_DIR)\n"
  "  --help             this text\n"
  "\n"
  "exit status: 0 ok, 1 a gate failed, 2 usage error, 3 script or input error,\n"
  "             4 too much was unmeasured to decide a gate, 75 another run holds\n"
  "             the lock (nightly); 'man evalua' says more\n";

static int usage_error(const char *fmt, const char *what) {
  fputs("evalua: ", stderr);
  fprintf(stderr, fmt, what);
  fputs(" (try 'evalua --help')\n", stderr);
  return EXIT_USAGE;
}

struct job {
  struct evalua_runtime rt;
  int argc, script; /* argv[script] is the script as given */
  char **argv;
  const char *path; /* the script's file: argv[script], or a bundled script */
  const char *module; /* or a Lua module whose main(...) gets the arguments */
  const char *out;    /* run --out DIR, which the script takes through ev.cli */
  int config;         /* argv[script] is a promptfoo config: the module's main gets arg */
};

/* Message handler: adds a traceback; exit requests (ev.exit) pass through. */
static int msghandler(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE && lua_getfield(L, 1, "evalua_exit") == LUA_TNUMBER) {
    lua_settop(L, 1);
    return 1;
  }
  const char *msg = lua_tostring(L, 1);
  if (msg && lua_getfield(L, LUA_REGISTRYINDEX, EVALUA_INPUT_ERRORS) == LUA_TTABLE) {
    lua_pushvalue(L, 1);
    int input = lua_rawget(L, -2) == LUA_TBOOLEAN;
    lua_pop(L, 2);
    if (input) return 1; /* the message names file and line; a traceback adds nothing */
  } else {
    lua_pop(L, 1);
  }
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) msg = lua_tostring(L, -1);
    else msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* arg as the lua interpreter sets it: arg[0] the script, arg[1..] its
 * arguments, negative indices the words before it. */
static void push_arg_table(lua_State *L, const struct job *j) {
  lua_createtable(L, j->argc - j->script - 1, j->script + 1);
  for (int i = 0; i < j->argc; i++) {
    lua_pushstring(L, i == j->script ? j->path : j->argv[i]);
    lua_rawseti(L, -2, i - j->script);
  }
  lua_setglobal(L, "arg");
}

static int exit_code_of(lua_State *L, int status) {
  struct evalua_runtime *rt = evalua_runtime(L);
  if (rt->exit_requested) return rt->exit_code;
  if (status == LUA_OK) return lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
  if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "evalua_exit") == LUA_TNUMBER)
    return (int)lua_tointeger(L, -1);
  if (status == LUA_ERRMEM && rt->mem_exceeded)
    fprintf(stderr, "evalua: memory limit of %zu MB exceeded (--mem-limit)\n", rt->mem_limit >> 20);
  else
    fprintf(stderr, "%s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)");
  return EXIT_SCRIPT;
}

/* A script that cannot be loaded: say why, and where bundled ones are. */
static void report_unopened(lua_State *L, const char *script) {
  int missing = strstr(lua_tostring(L, -1), "No such file") != NULL;
  fprintf(stderr, "evalua: cannot open script '%s' (%s", script, missing ? "no such file" : "unreadable");
  evalua_push_bundled_dir(L);
  if (missing && !strchr(script, '/') && lua_isstring(L, -1))
    fprintf(stderr, ", and no bundled script of that name in %s", lua_tostring(L, -1));
  lua_pop(L, 1);
  fputs(")\n", stderr);
}

/* Whether the script took run's --out as its output folder: ev.cli.parse
 * marks it in its module table (lua/evalua/core/cli.lua). */
static int out_taken(lua_State *L) {
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  int taken = lua_getfield(L, -1, "evalua.core.cli") == LUA_TTABLE && lua_getfield(L, -1, "run_out_taken") == LUA_TBOOLEAN
              && lua_toboolean(L, -1);
  lua_settop(L, top);
  return taken;
}

/* An option that did nothing is an error: run --out given (without
 * --sandbox, which writes only there anyway) to a script that finished
 * without reading its options. A run that failed otherwise keeps its status. */
static int check_out_taken(lua_State *L, const struct job *j, int code) {
  if (!j->out || j->module || j->rt.sandbox || code == EXIT_USAGE || code == EXIT_SCRIPT) return code;
  if (out_taken(L)) return code;
  fprintf(stderr, "evalua: run --out %s: the script took no output folder from it (scripts read it through "
                  "ev.cli.parse); its files are where it wrote them\n", j->out);
  return code ? code : EXIT_USAGE;
}

/* A script that ended normally (status 0, not through ev.exit) after an
 * evaluation whose judge failed ends undecided: evalua.core.run keeps the line
 * ev.evaluate printed (lua/evalua/core/run.lua). Never loads the module itself. */
static int undecided_by_judge(lua_State *L, int code) {
  if (code != 0 || evalua_runtime(L)->exit_requested) return code;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "evalua.core.run") == LUA_TTABLE && lua_getfield(L, -1, "undecided") == LUA_TFUNCTION
      && lua_pcall(L, 0, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
    fputs("evalua: exit status 4 (undecided): the script ended normally, but the judge failed (see the line above); "
          "ev.exit(0) ends 0 on purpose\n", stderr);
    code = EXIT_UNDECIDED;
  }
  lua_settop(L, top);
  return code;
}

static int pmain(lua_State *L) {
  struct job *j = lua_touserdata(L, 1);
  evalua_state_open(L);
  j->path = j->module ? lua_pushstring(L, j->argv[j->script]) /* kept on the stack */
                      : evalua_push_script_path(L, j->argv[j->script]);
  push_arg_table(L, j);
  lua_pushcfunction(L, msghandler);
  int status = j->module
    ? luaL_loadstring(L, lua_pushfstring(L, "return require('%s').main(...)", j->module))
    : luaL_loadfilex(L, j->path, j->rt.sandbox ? "t" : "bt");
  if (j->module) lua_remove(L, -2); /* the chunk's source text */
  if (j->module && status == LUA_OK) evalua_library_env(L, -1); /* the host's chunk: library code */
  if (status == LUA_ERRFILE) {
    report_unopened(L, j->path);
    lua_pushinteger(L, EXIT_USAGE);
    return 1;
  }
  if (status == LUA_OK) {
    int nargs = j->argc - j->script - 1;
    luaL_checkstack(L, nargs, "too many arguments");
    if (j->config) nargs = 1, lua_getglobal(L, "arg"); /* the config's main(arg), arg as for a script */
    else for (int i = j->script + 1; i < j->argc; i++) lua_pushstring(L, j->argv[i]);
    status = lua_pcall(L, nargs, 1, -(nargs + 2));
  }
  int code = exit_code_of(L, status);
  if (status == LUA_OK) code = undecided_by_judge(L, code);
  lua_pushinteger(L, check_out_taken(L, j, code));
  return 1;
}

static int parse_number(const char *s, double *out) {
  char *end;
  *out = strtod(s, &end);
  return *s && !*end && *out >= 0;
}

/* Options between "run" and the script; returns 0 or an exit status. */
static int parse_run_options(struct job *j) {
  struct evalua_runtime *rt = &j->rt;
  int i = 2, cpu_set = 0, mem_set = 0, time_set = 0;
  const char *err;
  for (; i < j->argc && j->argv[i][0] == '-'; i++) {
    const char *o = j->argv[i];
    if (!strcmp(o, "--")) { i++; break; }
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) return fputs(usage_text, stdout), EXIT_HELPED;
    if (!strcmp(o, "--sandbox")) { rt->sandbox = 1; continue; }
    if (i + 1 >= j->argc) return usage_error("option '%s' needs a value", o);
    const char *v = j->argv[++i];
    double num;
    if (!strcmp(o, "--read")) {
      if (evalua_runtime_add_read_dir(rt, v, &err)) return usage_error("--read: %s", err);
    } else if (!strcmp(o, "--out")) {
      if (!*v) return usage_error("%s", "--out needs a folder");
      j->out = v; /* the sandbox's folder is made below, once --sandbox is known */
    } else if (!strcmp(o, "--cpu-limit")) {
      if (!parse_number(v, &num)) return usage_error("--cpu-limit: '%s' is not a number of seconds", v);
      rt->cpu_limit = num, cpu_set = 1;
    } else if (!strcmp(o, "--time-limit")) {
      if (!parse_number(v, &num)) return usage_error("--time-limit: '%s' is not a number of seconds", v);
      rt->time_limit = num, time_set = 1;
    } else if (!strcmp(o, "--mem-limit")) {
      if (!parse_number(v, &num)) return usage_error("--mem-limit: '%s' is not a number of MB", v);
      rt->mem_limit = (size_t)(num * 1048576.0), mem_set = 1;
    } else if (!strcmp(o, "--lua-dir")) {
      rt->lua_dir = v;
    } else {
      return usage_error("unknown option '%s' for run", o);
    }
  }
  if (i >= j->argc) return usage_error("%s", j->module ? "merge needs a PART" : "run needs a SCRIPT");
  j->script = i;
  if (j->out && rt->sandbox && (evalua_make_dir(j->out) || evalua_runtime_set_out_dir(rt, j->out, &err)))
    return usage_error("--out: cannot create folder '%s'", j->out);
  if (rt->sandbox && !cpu_set) rt->cpu_limit = 60;
  if (rt->sandbox && !time_set) rt->time_limit = 600;
  if (rt->sandbox && !mem_set) rt->mem_limit = (size_t)1024 << 20;
  return 0;
}

/* Runs a job in a fresh Lua state; returns the exit status. */
static int run_job(struct job *j) {
  lua_State *L = evalua_state_new(&j->rt);
  if (!L) {
    evalua_runtime_free(&j->rt);
    fputs("evalua: cannot create a Lua state: not enough memory\n", stderr);
    return EXIT_SCRIPT;
  }
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, j);
  int status = lua_pcall(L, 1, 1, 0);
  int code = status == LUA_OK ? (int)lua_tointeger(L, -1) : exit_code_of(L, status);
  lua_close(L);
  evalua_runtime_free(&j->rt);
  return code;
}

/* A promptfoo config (docs/promptfoo.md): a SCRIPT named *.yaml or *.yml. */
static int is_config(const char *s) {
  size_t n = strlen(s);
  return (n > 5 && !strcmp(s + n - 5, ".yaml")) || (n > 4 && !strcmp(s + n - 4, ".yml"));
}

static int cmd_run(int argc, char **argv) {
  struct job j = {.argc = argc, .argv = argv};
  j.rt.lua_dir = getenv("EVALUA_LUA_DIR");
  if (j.rt.lua_dir && !*j.rt.lua_dir) j.rt.lua_dir = NULL;
  int code = parse_run_options(&j);
  if (code) {
    evalua_runtime_free(&j.rt);
    return code == EXIT_HELPED ? 0 : code;
  }
  if (is_config(argv[j.script])) j.module = "evalua.experiment.promptfoo", j.config = 1;
  evalua_arm_limits(&j.rt);
  return run_job(&j);
}

/* evalua merge [RUN-OPTIONS --] PART... [--out DIR] [--allow-missing]:
 * reruns the parts' script with every evaluation answered from the parts
 * (lua/evalua/scale/merge.lua), under run's options (--sandbox ...) when given. */
static int cmd_merge(int argc, char **argv) {
  struct job j = {.argc = argc, .argv = argv, .script = 1, .module = "evalua.scale.merge"};
  j.rt.lua_dir = getenv("EVALUA_LUA_DIR");
  if (j.rt.lua_dir && !*j.rt.lua_dir) j.rt.lua_dir = NULL;
  for (int k = 2; k < argc; k++) {
    if (strcmp(argv[k], "--")) continue;
    int code = parse_run_options(&j);
    if (code) {
      evalua_runtime_free(&j.rt);
      return code == EXIT_HELPED ? 0 : code;
    }
    j.script--; /* the module gets every word after "--" */
    evalua_arm_limits(&j.rt);
    break;
  }
  return run_job(&j);
}

static int cmd_version(void) {
  struct evalua_runtime rt = {0};
  lua_State *L = evalua_state_new(&rt);
  if (!L) return EXIT_SCRIPT;
  luaL_openlibs(L);
  evalua_preload_modules(L);
  const char *cjson = "?";
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cjson");
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_getfield(L, -1, "_VERSION") == LUA_TSTRING)
    cjson = lua_tostring(L, -1);
  printf("evalua %s\n%s\nlua-cjson %s\n", EVALUA_VERSION, LUA_RELEASE, cjson);
  const char *why = NULL;
  const struct curl_fns *cu = curl_load(&why);
  const curl_version_info_data *c = cu ? cu->version_info(CURLVERSION_NOW) : NULL;
  if (c) printf("libcurl %s (%s)\n", c->version, c->ssl_version ? c->ssl_version : "no TLS");
  else printf("libcurl: %s\n", why);
  char pcre2[64] = "?";
  if (pcre2_config(PCRE2_CONFIG_VERSION, pcre2) < 0) strcpy(pcre2, "?");
  printf("PCRE2 %s\nutf8proc %s\n", pcre2, utf8proc_version());
  lua_close(L);
  return 0;
}

/* stdout and stderr into one file (> log 2>&1): both go out a line at a
 * time, so a message on stderr never lands inside a line of stdout (by
 * default stdout would leave in blocks of 4 KB, cut anywhere). */
static void lines_when_shared(void) {
  struct stat o, e;
  if (fstat(1, &o) || fstat(2, &e) || o.st_dev != e.st_dev || o.st_ino != e.st_ino) return;
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
}

int main(int argc, char **argv) {
  /* Columns grow by realloc; a fixed mmap threshold keeps large blocks
   * mapped, so growing one moves pages (mremap) instead of copying them.
   * glibc's default raises the threshold after a free and then copies. */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  lines_when_shared();
  if (argc < 2) return usage_error("%s", "no command given");
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) return cmd_version();
  if (!strcmp(cmd, "run")) return cmd_run(argc, argv);
  if (!strcmp(cmd, "merge")) return cmd_merge(argc, argv);
  for (const struct evalua_command *c = evalua_commands; c->name; c++)
    if (!strcmp(cmd, c->name)) return c->main(argc - 1, argv + 1);
  return usage_error("unknown command '%s'", cmd);
}
