/* evalua._sqlparse: SQLite's own parser for the is-sql and contains-sql
 * assertions.
 *
 *   sqlparse.check(text) -> n            -- every statement parses: their number
 *                        -> nil, why     -- SQLite's syntax error ("near \"FORM\": syntax error")
 *
 * Each statement is prepared, never run, on an empty in-memory database of
 * its own. Preparing also resolves names, and the database has no tables:
 * an error naming a missing table, column, function, collation or module
 * comes after the whole statement parsed, so it counts as valid syntax.
 * What "valid" means is SQLite's dialect (docs/assertions.md). */
#include <string.h>

#include <lauxlib.h>
#include <sqlite3.h>

#include "modules.h"

#define MAX_BYTES (1u << 20)

static const char *const NAME_ERRORS[] = {
  "no such table", "no such column", "no such function", "no such collation", "no such module",
  "no such index", "no such view", "unknown database", "no such savepoint", "no tables specified", NULL,
};

static int name_error(const char *msg) {
  for (const char *const *p = NAME_ERRORS; *p; p++)
    if (strstr(msg, *p)) return 1;
  return 0;
}

static int fail(lua_State *L, sqlite3 *db, const char *why) {
  lua_pushnil(L);
  lua_pushstring(L, why);
  sqlite3_close(db);
  return 2;
}

static int l_check(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  luaL_argcheck(L, len <= MAX_BYTES, 1, "text longer than 1 MB");
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK) {
    return fail(L, db, "sqlparse: cannot open an in-memory database");
  }
  const char *at = s, *end = s + len;
  int n = 0;
  while (at < end) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, at, (int)(end - at), &st, &tail);
    if (rc != SQLITE_OK) {
      const char *msg = sqlite3_errmsg(db);
      if (!name_error(msg) || !tail || tail <= at) return fail(L, db, msg);
    }
    if (st || rc != SQLITE_OK) n++;
    sqlite3_finalize(st);
    if (!tail || tail <= at) break;
    at = tail;
  }
  sqlite3_close(db);
  if (n == 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "no SQL statement");
    return 2;
  }
  lua_pushinteger(L, n);
  return 1;
}

static const luaL_Reg funcs[] = {{"check", l_check}, {NULL, NULL}};

int luaopen_evalua_sqlparse(lua_State *L) {
  luaL_newlib(L, funcs);
  lua_pushstring(L, sqlite3_libversion());
  lua_setfield(L, -2, "sqlite_version");
  return 1;
}
