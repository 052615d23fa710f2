/* The viewer's background full-text index (host/view/fts_build.c) on a real
 * SQLite file: a build stopped at once leaves the index unmarked; a whole
 * build indexes every row, from the table's row column and from the report
 * at the rows' places, in several chunks, while another connection reads
 * and writes the same file; a row that cannot be read and bad SQL fail,
 * saying why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check.h"
#include "fts_build.h"

#define ROWS 30000 /* six chunks of 5,000 */

static char dir[64], db_path[128], report[128];

static const struct fts_build_sql SQL = {
  "SELECT last FROM progress WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'f')",
  "DELETE FROM fts_built; DELETE FROM progress; DROP TABLE IF EXISTS f; INSERT INTO setups VALUES (1); "
  "CREATE VIRTUAL TABLE f USING fts5(query, content = '', tokenize = 'unicode61')",
  "SELECT k, off, len, row FROM t_text WHERE k > ?1 ORDER BY k LIMIT ?2",
  "INSERT INTO f(rowid, query) VALUES (?1, ?2 ->> '$.query')",
  "INSERT OR REPLACE INTO progress VALUES (1, ?1)",
  "INSERT INTO f(f) VALUES ('optimize'); INSERT INTO fts_built VALUES ('f'); DELETE FROM progress",
};

static sqlite3 *open_db(void) {
  sqlite3 *db;
  CHECK(sqlite3_open(db_path, &db) == SQLITE_OK);
  sqlite3_busy_timeout(db, 10000);
  return db;
}

static long long count(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  long long n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -2;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* Odd rows in the table's row column, even rows in the report at their places. */
static void make_data(void) {
  snprintf(dir, sizeof dir, "/tmp/evalua_fts_build_XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(db_path, sizeof db_path, "%s/cache.db", dir);
  snprintf(report, sizeof report, "%s/report.json", dir);
  FILE *f = fopen(report, "wb");
  CHECK(f != NULL);
  sqlite3 *db = open_db();
  CHECK(sqlite3_exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE fts_built(name TEXT PRIMARY KEY); "
                         "CREATE TABLE t_text(k INTEGER PRIMARY KEY, off INTEGER, len INTEGER, row TEXT); "
                         "CREATE TABLE other(x); CREATE TABLE setups(x); "
                         "CREATE TABLE progress(one INTEGER PRIMARY KEY, last INTEGER); BEGIN", NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_stmt *ins;
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO t_text VALUES (?, ?, ?, ?)", -1, &ins, NULL) == SQLITE_OK);
  for (int k = 1; k <= ROWS; k++) {
    char row[128];
    int n = snprintf(row, sizeof row, "{\"query\": \"common w%d %s\"}", k, k % 2 ? "incolumn" : "inreport");
    sqlite3_bind_int(ins, 1, k);
    if (k % 2) {
      sqlite3_bind_null(ins, 2), sqlite3_bind_null(ins, 3);
      sqlite3_bind_text(ins, 4, row, n, SQLITE_TRANSIENT);
    } else {
      fputs("  ", f); /* a row's place is an offset from 1 and a length, as the viewer records them */
      sqlite3_bind_int64(ins, 2, ftell(f) + 1), sqlite3_bind_int(ins, 3, n);
      sqlite3_bind_null(ins, 4);
      fwrite(row, 1, (size_t)n, f);
      fputs(",\n", f);
    }
    CHECK(sqlite3_step(ins) == SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  CHECK(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(db);
  fclose(f);
}

/* Waits for the end of a build: its state, with why. */
static int wait_end(struct fts_build *b, const char **why) {
  double secs;
  int state;
  for (int i = 0; (state = fts_build_state(b, why, &secs)) == 0 && i < 6000; i++) usleep(10000);
  return state;
}

static void stopped_at_once(void) {
  char err[200];
  struct fts_build *b = fts_build_start(db_path, report, &SQL, err, sizeof err);
  CHECK(b != NULL);
  fts_build_free(b); /* before it could end: 30,000 rows take far longer than starting a thread */
  sqlite3 *db = open_db();
  CHECK(count(db, "SELECT count(*) FROM fts_built") == 0);
  sqlite3_close(db);
}

/* Stopped once a chunk is committed, the next build goes on after it: one setup in all, every row once. */
static void resumed(void) {
  char err[200];
  sqlite3 *db = open_db();
  CHECK(sqlite3_exec(db, "DELETE FROM setups", NULL, NULL, NULL) == SQLITE_OK);
  struct fts_build *b = fts_build_start(db_path, report, &SQL, err, sizeof err);
  CHECK(b != NULL);
  int n = 0;
  while (count(db, "SELECT count(*) FROM progress") < 1 && n++ < 6000) usleep(1000);
  fts_build_free(b);
  long long got = count(db, "SELECT last FROM progress");
  CHECK(got >= 5000 && got < ROWS && count(db, "SELECT count(*) FROM fts_built") == 0);
  b = fts_build_start(db_path, report, &SQL, err, sizeof err);
  CHECK(b != NULL);
  const char *why;
  CHECK(wait_end(b, &why) == 1);
  fts_build_free(b);
  CHECK(count(db, "SELECT count(*) FROM setups") == 1);
  CHECK(count(db, "SELECT count(*) FROM f WHERE f MATCH 'common'") == ROWS);
  CHECK(count(db, "SELECT count(*) FROM fts_built") == 1 && count(db, "SELECT count(*) FROM progress") == 0);
  sqlite3_close(db);
}

static void whole(void) {
  char err[200];
  struct fts_build *b = fts_build_start(db_path, report, &SQL, err, sizeof err);
  CHECK(b != NULL);
  const char *why;
  double secs;
  /* Meanwhile the server's connection reads and writes the same file (between the builder's chunks). */
  sqlite3 *db = open_db();
  int during = fts_build_state(b, &why, &secs) == 0;
  CHECK(count(db, "SELECT count(*) FROM t_text") == ROWS);
  CHECK(sqlite3_exec(db, "INSERT INTO other VALUES (1)", NULL, NULL, NULL) == SQLITE_OK);
  CHECK(wait_end(b, &why) == 1);
  CHECK(fts_build_state(b, &why, &secs) == 1 && secs > 0 && why[0] == '\0');
  fts_build_free(b);
  CHECK(during); /* it was building when the read and the write above began */
  CHECK(count(db, "SELECT count(*) FROM fts_built WHERE name = 'f'") == 1);
  CHECK(count(db, "SELECT count(*) FROM f WHERE f MATCH 'common'") == ROWS);
  CHECK(count(db, "SELECT count(*) FROM f WHERE f MATCH 'incolumn'") == ROWS / 2);
  CHECK(count(db, "SELECT count(*) FROM f WHERE f MATCH 'inreport'") == ROWS / 2);
  CHECK(count(db, "SELECT rowid FROM f WHERE f MATCH 'w11998'") == 11998); /* a row from the report */
  CHECK(count(db, "SELECT count(*) FROM f WHERE f MATCH 'w1199*'") == 11); /* w1199, w11990..w11999 */
  CHECK(count(db, "SELECT count(*) FROM other") == 1);
  sqlite3_close(db);
}

static void failures(void) {
  char err[200];
  sqlite3 *db = open_db(); /* a place past the report's end: the row cannot be read */
  CHECK(sqlite3_exec(db, "UPDATE t_text SET off = 1000000000 WHERE k = 6000", NULL, NULL, NULL) == SQLITE_OK);
  struct fts_build *b = fts_build_start(db_path, report, &SQL, err, sizeof err);
  CHECK(b != NULL);
  const char *why;
  CHECK(wait_end(b, &why) == -1 && strstr(why, "a row could not be read") && strstr(why, report));
  fts_build_free(b);
  CHECK(count(db, "SELECT count(*) FROM fts_built") == 0); /* the earlier whole build's mark went with the setup */
  sqlite3_close(db);

  struct fts_build_sql bad = SQL;
  bad.insert = "INSERT INTO nowhere VALUES (?1, ?2)";
  b = fts_build_start(db_path, report, &bad, err, sizeof err);
  CHECK(b != NULL);
  CHECK(wait_end(b, &why) == -1 && strstr(why, "no such table: nowhere"));
  fts_build_free(b);

  CHECK(fts_build_start(db_path, "/nonexistent/report.json", &SQL, err, sizeof err) == NULL);
  CHECK(strstr(err, "/nonexistent/report.json") && strstr(err, "No such file"));
}

int main(void) {
  make_data();
  stopped_at_once();
  resumed();
  whole();
  failures();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  return check_report();
}
