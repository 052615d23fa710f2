/* evalua._sqlite: SQLite databases for the run history (docs/history.md).
 *
 *   local db = sqlite.open(path [, {readonly = false, timeout_ms = 10000}])
 *   db:exec(sql)              -- statements without parameters (a schema)
 *   db:run(sql, ...)          -- one statement, ? bound to the arguments -> changes, last rowid
 *   db:rows(sql, ...)         -- one query -> { {column = value, ...}, ... }
 *   local st = db:prepare(sql); st:run(...); st:rows(...); st:close()
 *   db:close()                -- also __gc and __close
 *
 * A database opened for writing is put in WAL mode with synchronous=FULL:
 * readers never wait for a writer, and a committed transaction survives a
 * kill -9 or a power loss. Writers wait for one another up to timeout_ms
 * (the busy timeout) before "database is locked". Every error names the
 * database file. Values: nil <-> NULL, integers, finite floats, strings
 * (as text), booleans as 0/1; NaN is refused rather than stored as NULL.
 *
 * Under --sandbox a database opens only where io.open could open it: for
 * writing under --out, for reading under --read or --out, through no
 * symbolic link (evalua_at), the file and its -wal, -shm and -journal
 * siblings alike; SQLite then opens the file with SQLITE_OPEN_NOFOLLOW.
 * ATTACH is refused everywhere (the attached-database limit is 0, and the
 * authorizer denies it), so SQL cannot reach another file, nor can VACUUM
 * INTO or the pragmas that move SQLite's temporary files. After close every method
 * raises "closed object"; a statement of a closed database does too. */
#include <limits.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <sqlite3.h>

#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define DB_MT "evalua.sqlite.db"
#define STMT_MT "evalua.sqlite.stmt"
#define DEFAULT_TIMEOUT_MS 10000

struct db {
  sqlite3 *db; /* NULL once closed */
};

struct stmt {
  sqlite3_stmt *st; /* NULL once closed; uservalue 1 is its database's userdata */
};

/* Raises "PATH: message [(errno text)]" for the database whose userdata is at index idx
 * (its uservalue 1 holds the path). */
static int db_error(lua_State *L, int idx, sqlite3 *db) {
  lua_getiuservalue(L, idx, 1);
  const char *path = lua_tostring(L, -1);
  int code = sqlite3_extended_errcode(db), e = sqlite3_system_errno(db);
  if (code == SQLITE_NOMEM) return evalua_nomem(L);
  if ((code & 0xff) == SQLITE_IOERR || (code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_CANTOPEN) {
    if (e) {
      lua_pushfstring(L, "%s: %s (%s)", path ? path : "database", sqlite3_errmsg(db), strerror(e));
      return lua_error(L);
    }
  }
  lua_pushfstring(L, "%s: %s", path ? path : "database", sqlite3_errmsg(db)); /* no position: the file is the place */
  return lua_error(L);
}

static struct db *check_db(lua_State *L, int idx) {
  struct db *d = luaL_checkudata(L, idx, DB_MT);
  if (!d->db) evalua_closed(L, idx);
  return d;
}

/* A statement, checked open, with its database's userdata pushed. */
static struct stmt *check_stmt(lua_State *L, int idx) {
  struct stmt *s = luaL_checkudata(L, idx, STMT_MT);
  if (!s->st) evalua_closed(L, idx);
  lua_getiuservalue(L, idx, 1);
  struct db *d = lua_touserdata(L, -1);
  if (!d || !d->db) evalua_closed(L, idx);
  return s;
}

/* Under --sandbox: the file and the siblings SQLite makes beside it must be
 * where the policy allows, with no symbolic link on the way. */
static void check_sandbox(lua_State *L, const char *path, int write) {
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  if (!evalua_runtime(L)->sandbox) return;
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    lua_pushfstring(L, "%s%s", path, suffixes[i]);
    struct evalua_at at;
    /* -shm is written even by a reader of a WAL database */
    int rc = evalua_at(L, lua_tostring(L, -1), write || i == 2, 0, &at);
    if (rc < 0) lua_error(L);
    evalua_at_release(&at);
    lua_pop(L, 1);
  }
}

static int table_int(lua_State *L, int t, const char *key, lua_Integer def, lua_Integer lo, lua_Integer hi) {
  if (lua_getfield(L, t, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return (int)def;
  }
  int ok;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < lo || v > hi)
    luaL_error(L, "sqlite.open: %s must be an integer from %I to %I", key, lo, hi);
  lua_pop(L, 1);
  return (int)v;
}

static void exec_or_raise(lua_State *L, int idx, sqlite3 *db, const char *sql) {
  if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) db_error(L, idx, db);
}

/* Statements that would reach files other than the database are denied:
 * ATTACH (also refused by the attached-database limit of 0) and the
 * deprecated pragmas that move SQLite's temporary and data files into any
 * folder. */
static int authorize(void *ud, int action, const char *a, const char *b, const char *db, const char *trigger) {
  (void)ud, (void)b, (void)db, (void)trigger;
  if (action == SQLITE_ATTACH || action == SQLITE_DETACH) return SQLITE_DENY;
  if (action == SQLITE_PRAGMA && a &&
      (sqlite3_stricmp(a, "temp_store_directory") == 0 || sqlite3_stricmp(a, "data_store_directory") == 0))
    return SQLITE_DENY;
  return SQLITE_OK;
}

/* SQLite allocates through its own allocator, process-wide: with
 * --mem-limit its heap is capped at the same number of bytes (an
 * allocation past it fails, and the call raises "not enough memory"), so
 * a script cannot grow C memory without bound through it. */
static void bound_memory(lua_State *L) {
  size_t limit = evalua_runtime(L)->mem_limit;
  if (limit > 0 && limit <= (size_t)INT64_MAX) sqlite3_hard_heap_limit64((sqlite3_int64)limit);
}

/* WAL mode. Switching a new database to it takes a lock for which SQLite
 * does not call the busy handler (two processes creating one history at
 * once), so that one step is retried here, within the busy timeout. */
static void set_wal(lua_State *L, int idx, sqlite3 *db, int timeout_ms) {
  for (int waited = 0;; waited += 10) {
    int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY || waited >= timeout_ms) db_error(L, idx, db);
    sqlite3_sleep(10);
  }
}

/* open(path [, opts]) -> db. The userdata exists before SQLite allocates,
 * so an error raised later still closes the connection (in __gc). */
static int l_open(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  luaL_argcheck(L, len > 0 && strlen(path) == len, 1, "expected a file path without NUL bytes");
  int readonly = 0, timeout = DEFAULT_TIMEOUT_MS;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "readonly");
    readonly = lua_toboolean(L, -1);
    lua_pop(L, 1);
    timeout = table_int(L, 2, "timeout_ms", DEFAULT_TIMEOUT_MS, 0, 3600000);
  }
  int memory = strcmp(path, ":memory:") == 0;
  if (!memory) {
    if (strncmp(path, "file:", 5) == 0) path = lua_pushfstring(L, "./%s", path); /* a file, never a URI */
    check_sandbox(L, path, !readonly);
  }
  bound_memory(L);
  struct db *d = lua_newuserdatauv(L, sizeof *d, 1);
  d->db = NULL;
  luaL_setmetatable(L, DB_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  int idx = lua_gettop(L);
  int flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
              SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path, &d->db, flags, NULL);
  if (!d->db) return evalua_nomem(L);
  if (rc != SQLITE_OK) db_error(L, idx, d->db);
  sqlite3_extended_result_codes(d->db, 1);
  sqlite3_limit(d->db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_db_config(d->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config(d->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_busy_timeout(d->db, timeout);
  sqlite3_set_authorizer(d->db, authorize, NULL);
  if (!readonly && !memory) set_wal(L, idx, d->db, timeout);
  exec_or_raise(L, idx, d->db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON");
  return 1;
}

static int l_exec(lua_State *L) {
  struct db *d = check_db(L, 1);
  const char *sql = luaL_checkstring(L, 2);
  exec_or_raise(L, 1, d->db, sql);
  return 0;
}

/* Prepares sql (exactly one statement) on the database at index idx. */
static sqlite3_stmt *prepare(lua_State *L, int idx, sqlite3 *db, int sql_arg) {
  size_t len;
  const char *sql = luaL_checklstring(L, sql_arg, &len);
  luaL_argcheck(L, len < INT_MAX, sql_arg, "statement too long");
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  if (sqlite3_prepare_v3(db, sql, (int)len, 0, &st, &tail) != SQLITE_OK) db_error(L, idx, db);
  if (!st) luaL_argerror(L, sql_arg, "no statement");
  if (tail && strspn(tail, " \t\r\n;") != strlen(tail)) {
    sqlite3_finalize(st);
    luaL_argerror(L, sql_arg, "more than one statement (use exec)");
  }
  return st;
}

/* Binds the n Lua values from index first on to st's parameters; the
 * count must match. Raises on a bad value (st is never leaked: its owner,
 * a box or a userdata, frees it). */
static void bind_all(lua_State *L, sqlite3_stmt *st, int first, int n) {
  int want = sqlite3_bind_parameter_count(st);
  if (n != want) luaL_error(L, "sqlite: %d value%s given for a statement of %d parameter%s", n, n == 1 ? "" : "s",
                            want, want == 1 ? "" : "s");
  for (int i = 1; i <= n; i++) {
    int arg = first + i - 1, rc = SQLITE_OK;
    switch (lua_type(L, arg)) {
    case LUA_TNIL: rc = sqlite3_bind_null(st, i); break;
    case LUA_TBOOLEAN: rc = sqlite3_bind_int(st, i, lua_toboolean(L, arg)); break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, arg)) rc = sqlite3_bind_int64(st, i, (sqlite3_int64)lua_tointeger(L, arg));
      else {
        double x = lua_tonumber(L, arg);
        if (isnan(x)) luaL_argerror(L, arg, "NaN cannot be stored (it would read back as NULL)");
        rc = sqlite3_bind_double(st, i, x);
      }
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, arg, &len);
      rc = sqlite3_bind_text64(st, i, s, (sqlite3_uint64)len, SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
    }
    default: luaL_typeerror(L, arg, "nil, boolean, number or string");
    }
    if (rc == SQLITE_NOMEM) evalua_nomem(L);
    if (rc == SQLITE_TOOBIG) luaL_argerror(L, arg, "value too large for SQLite");
    if (rc != SQLITE_OK) luaL_error(L, "sqlite: binding parameter %d: %s", i, sqlite3_errstr(rc));
  }
}

static void push_column(lua_State *L, sqlite3_stmt *st, int c) {
  switch (sqlite3_column_type(st, c)) {
  case SQLITE_INTEGER: lua_pushinteger(L, (lua_Integer)sqlite3_column_int64(st, c)); break;
  case SQLITE_FLOAT: lua_pushnumber(L, sqlite3_column_double(st, c)); break;
  case SQLITE_NULL: lua_pushnil(L); break;
  default: {
    const char *s = (const char *)sqlite3_column_text(st, c);
    int n = sqlite3_column_bytes(st, c);
    if (!s && n > 0) evalua_nomem(L);
    lua_pushlstring(L, s ? s : "", (size_t)n);
  }
  }
}

/* Steps st to its end: with rows = 1 pushes the list of rows (tables keyed
 * by column name), else the changes and the last rowid. The statement is
 * reset and its bindings cleared whatever happens, so a raised error leaves
 * it ready for the next call. */
static int step_all(lua_State *L, int db_idx, sqlite3 *db, sqlite3_stmt *st, int rows) {
  int ncol = sqlite3_column_count(st), rc, k = 0;
  if (rows) lua_newtable(L);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!rows) continue;
    lua_createtable(L, 0, ncol);
    for (int c = 0; c < ncol; c++) {
      push_column(L, st, c);
      lua_setfield(L, -2, sqlite3_column_name(st, c));
    }
    lua_rawseti(L, -2, ++k);
  }
  if (rc != SQLITE_DONE) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return db_error(L, db_idx, db);
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rows) return 1;
  lua_pushinteger(L, sqlite3_changes64(db));
  lua_pushinteger(L, sqlite3_last_insert_rowid(db));
  return 2;
}

/* db:run(sql, ...) and db:rows(sql, ...): a statement prepared for this
 * call, in a to-be-closed box so an error while binding frees it. */
static void finalize_box(void *p) { sqlite3_finalize(*(sqlite3_stmt **)p); }

static int one_shot(lua_State *L, int rows) {
  struct db *d = check_db(L, 1);
  luaL_checkstring(L, 2);
  int n = lua_gettop(L) - 2;
  sqlite3_stmt **box = evalua_scratch(L, sizeof *box, finalize_box);
  *box = prepare(L, 1, d->db, 2);
  bind_all(L, *box, 3, n);
  return step_all(L, 1, d->db, *box, rows); /* the box closes on return */
}

static int l_run(lua_State *L) { return one_shot(L, 0); }
static int l_rows(lua_State *L) { return one_shot(L, 1); }

static int l_prepare(lua_State *L) {
  struct db *d = check_db(L, 1);
  luaL_checkstring(L, 2);
  struct stmt *s = lua_newuserdatauv(L, sizeof *s, 1);
  s->st = NULL;
  luaL_setmetatable(L, STMT_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  s->st = prepare(L, 1, d->db, 2);
  return 1;
}

static int stmt_exec(lua_State *L, int rows) {
  int n = lua_gettop(L) - 1;
  struct stmt *s = check_stmt(L, 1);
  int db_idx = lua_gettop(L);
  struct db *d = lua_touserdata(L, db_idx);
  sqlite3_reset(s->st);
  sqlite3_clear_bindings(s->st);
  bind_all(L, s->st, 2, n);
  return step_all(L, db_idx, d->db, s->st, rows);
}

static int l_stmt_run(lua_State *L) { return stmt_exec(L, 0); }
static int l_stmt_rows(lua_State *L) { return stmt_exec(L, 1); }

static int l_stmt_close(lua_State *L) {
  struct stmt *s = luaL_checkudata(L, 1, STMT_MT);
  sqlite3_finalize(s->st); /* accepts NULL */
  s->st = NULL;
  return 0;
}

static int l_close(lua_State *L) {
  struct db *d = luaL_checkudata(L, 1, DB_MT);
  sqlite3_close_v2(d->db); /* with statements still open: closed when the last one is */
  d->db = NULL;
  return 0;
}

static int l_path(lua_State *L) {
  check_db(L, 1);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

static int l_tostring(lua_State *L) {
  struct db *d = luaL_checkudata(L, 1, DB_MT);
  lua_getiuservalue(L, 1, 1);
  lua_pushfstring(L, "sqlite database %s (%s)", lua_tostring(L, -1), d->db ? "open" : "closed");
  return 1;
}

static int l_stmt_tostring(lua_State *L) {
  struct stmt *s = luaL_checkudata(L, 1, STMT_MT);
  lua_pushfstring(L, "sqlite statement (%s)", s->st ? "open" : "closed");
  return 1;
}

/* For tests/lua/test_closed.lua: new objects of each type. */
static int make_db(lua_State *L) {
  lua_settop(L, 0);
  lua_pushliteral(L, ":memory:");
  return l_open(L);
}

static int make_stmt(lua_State *L) {
  make_db(L);
  lua_remove(L, 1); /* the path: the database is argument 1 */
  lua_pushliteral(L, "SELECT 1");
  return l_prepare(L);
}

static const luaL_Reg db_methods[] = {
  {"exec", l_exec}, {"run", l_run}, {"rows", l_rows}, {"prepare", l_prepare}, {"path", l_path}, {"close", l_close},
  {NULL, NULL},
};

static const luaL_Reg stmt_methods[] = {
  {"run", l_stmt_run}, {"rows", l_stmt_rows}, {"close", l_stmt_close}, {NULL, NULL},
};

static void new_class(lua_State *L, const char *name, lua_CFunction make, const luaL_Reg *methods,
                      lua_CFunction close, lua_CFunction tostring) {
  if (evalua_newclass(L, name, make)) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
}

int luaopen_evalua_sqlite(lua_State *L) {
  new_class(L, DB_MT, make_db, db_methods, l_close, l_tostring);
  new_class(L, STMT_MT, make_stmt, stmt_methods, l_stmt_close, l_stmt_tostring);
  lua_newtable(L);
  lua_pushcfunction(L, l_open);
  lua_setfield(L, -2, "open");
  lua_pushstring(L, sqlite3_libversion());
  lua_setfield(L, -2, "version");
  return 1;
}
