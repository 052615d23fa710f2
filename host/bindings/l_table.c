/* evalua._table: data sets as C columns (metrics/table.h). Lua keeps only
 * the userdata; rows reach Lua one field at a time (get) when user code
 * asks, and group codes for slicing are made here from a column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "evalua/rows.h"
#include "l_lists.h"
#include "l_table.h"
#include "modules.h"
#include "read_jsonl.h"
#include "runtime.h"
#include "udata.h"

#define TABLE_MT "evalua.table"
#define CODES_MT "evalua.codes"

struct ltable {
  struct evt_table t;
  struct evt_schema sc;
  struct evt_field *fields;
  size_t fields_cap;
  int closed;
};

static struct ltable *check_ltable(lua_State *L, int arg) {
  struct ltable *lt = luaL_checkudata(L, arg, TABLE_MT);
  if (lt->closed) evalua_closed(L, arg);
  return lt;
}

struct evt_table *ltable_check(lua_State *L, int arg) { return &check_ltable(L, arg)->t; }

static int table_gc(lua_State *L) {
  struct ltable *lt = luaL_checkudata(L, 1, TABLE_MT);
  lt->closed = 1;
  evt_free(&lt->t);
  for (size_t i = 0; i < lt->sc.nfields; i++) evm_free(&lt->t.a, (char *)lt->fields[i].name, strlen(lt->fields[i].name) + 1, 1);
  evm_free(&lt->t.a, lt->fields, lt->fields_cap, sizeof *lt->fields);
  lt->fields = NULL, lt->sc.nfields = lt->fields_cap = 0;
  return 0;
}

/* The schema from opts: rag = bool, fields = {{name, type, required}...}. */
static void read_schema(lua_State *L, int opts, struct ltable *lt) {
  lt->sc.rag = lua_getfield(L, opts, "rag") == LUA_TNIL || lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (lua_getfield(L, opts, "fields") != LUA_TTABLE) return (void)lua_pop(L, 1);
  size_t n = lua_rawlen(L, -1);
  if (!(lt->fields = evm_new(&lt->t.a, n ? n : 1, sizeof *lt->fields))) evalua_nomem(L);
  lt->fields_cap = n ? n : 1;
  memset(lt->fields, 0, lt->fields_cap * sizeof *lt->fields);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "type");
    size_t tl;
    const char *name = luaL_checkstring(L, -2), *type = luaL_checklstring(L, -1, &tl);
    struct evt_field *f = &lt->fields[lt->sc.nfields];
    if (!evt_want_parse(type, tl, &f->want)) luaL_error(L, "schema: type '%s' is not a scalar type", type);
    size_t nl = strlen(name) + 1;
    char *copy = evm_new(&lt->t.a, nl, 1);
    if (!copy) evalua_nomem(L);
    f->name = memcpy(copy, name, nl);
    lt->sc.nfields++; /* from now on freed with the table */
    lua_getfield(L, -3, "required");
    f->required = lua_toboolean(L, -1);
    lua_pop(L, 4);
  }
  lt->sc.fields = lt->fields;
  lua_pop(L, 1);
}

static struct ltable *new_table(lua_State *L, int opts) {
  struct ltable *lt = lua_newuserdatauv(L, sizeof *lt, 0);
  memset(lt, 0, sizeof *lt);
  struct evm_alloc a = evalua_allocator(L);
  evt_init_alloc(&lt->t, &a);
  luaL_setmetatable(L, TABLE_MT);
  if (opts && lua_istable(L, opts)) read_schema(L, opts, lt);
  else lt->sc.rag = 1;
  return lt;
}

/* ---- reading files ------------------------------------------------------------ */

/* The columns count against --mem-limit as they grow; under --sandbox a
 * load is also checked before it starts, so that it fails with a message
 * naming the file instead of midway: a regular file, and about twice its
 * size must fit in what --mem-limit leaves. The message (pushed), or NULL. */
static const char *too_big(lua_State *L, int fd, const char *path) {
  struct evalua_runtime *rt = evalua_runtime(L);
  struct stat st;
  if (!rt->sandbox || fstat(fd, &st)) return NULL;
  if (!S_ISREG(st.st_mode)) return lua_pushfstring(L, "%s: a data set must be a regular file under --sandbox", path);
  evalua_make_room(L, 2 * (size_t)st.st_size);
  size_t used = evalua_mem_used(rt);
  double need = 2.0 * (double)st.st_size / 1048576.0;
  double left = rt->mem_limit > used ? (double)(rt->mem_limit - used) / 1048576.0 : 0;
  if (rt->mem_limit && need > left)
    return lua_pushfstring(L, "%s: the data set needs about %d MB, more than the %d MB --mem-limit leaves", path,
                           (int)ceil(need), (int)left);
  return NULL;
}

/* The data file opened for reading, in one step with the sandbox's check
 * (no symbolic link, beneath a --read folder); -1 with *err set when it
 * cannot be read. */
static int open_input(lua_State *L, const char *path, const char **err) {
  struct evalua_at at;
  if (evalua_at(L, path, 0, 0, &at)) return *err = lua_tostring(L, -1), -1; /* the message stays pushed */
  int fd = openat(at.dirfd, at.name, O_RDONLY | O_CLOEXEC | evalua_at_flags(&at));
  int e = errno;
  evalua_at_release(&at);
  if (fd < 0) *err = lua_pushfstring(L, "cannot read data set: %s: %s", path, strerror(e));
  else if ((*err = too_big(L, fd, path))) close(fd), fd = -1;
  return fd;
}

/* The path, lenient mode, a new table and the open file, from the
 * arguments (path, opts) of a load; fd is -1 with the message pushed. */
static struct ltable *load_args(lua_State *L, const char **path, int *lenient, int *fd, const char **err) {
  *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_getfield(L, 2, "lenient");
  *lenient = lua_toboolean(L, -1);
  lua_pop(L, 1);
  struct ltable *lt = new_table(L, 2);
  *fd = open_input(L, *path, err);
  return lt;
}

static void result_done(void *p) { jsonl_result_free(p); }

/* The refused rows of a read, in scratch freed whatever happens. */
static struct jsonl_result *new_result(lua_State *L, const struct evm_alloc *a) {
  struct jsonl_result *res = evalua_scratch(L, sizeof *res, result_done);
  jsonl_result_init(res, a);
  return res;
}

/* {{line =, error =}...}: the refused rows. */
static void push_skips(lua_State *L, const struct jsonl_result *res) {
  lua_createtable(L, (int)res->nskips, 0);
  for (size_t i = 0; i < res->nskips; i++) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, res->skips[i].line), lua_setfield(L, -2, "line");
    lua_pushstring(L, res->skips[i].msg), lua_setfield(L, -2, "error");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* load(path, opts) -> table, sha256, skipped | nil, message */
static int l_load(lua_State *L) {
  const char *path, *err;
  int lenient, fd;
  struct ltable *lt = load_args(L, &path, &lenient, &fd, &err);
  if (fd < 0) return lua_pushnil(L), lua_pushstring(L, err), 2;
  int ud = lua_gettop(L); /* the table */
  struct jsonl_result *res = new_result(L, &lt->t.a);
  jsonl_read(fd, path, &lt->t, &lt->sc, lenient, res);
  if (res->nomem) return evalua_nomem(L);
  if (res->err[0]) return lua_pushnil(L), lua_pushstring(L, res->err), 2;
  lua_pushvalue(L, ud);
  lua_pushstring(L, res->hash);
  push_skips(L, res);
  return 3;
}

/* ---- reading CSV --------------------------------------------------------------- */

/* Kept in C while the reader runs: a Lua error there would leak its scratch. */
static void csv_skip(void *ud, uint32_t line, const char *why) {
  struct jsonl_result *res = ud;
  if (jsonl_skip_add(res, line, why)) res->nomem = 1;
}

/* The whole open file (closed here) in a string at the top of the stack;
 * NULL with errno set when reading fails. */
static const char *slurp(lua_State *L, int fd, size_t *len) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  ssize_t got;
  do {
    char *p = luaL_prepbuffsize(&b, (size_t)1 << 20);
    do got = read(fd, p, (size_t)1 << 20);
    while (got < 0 && errno == EINTR);
    if (got > 0) luaL_addsize(&b, (size_t)got);
  } while (got > 0);
  int e = errno;
  close(fd);
  luaL_pushresult(&b);
  if (got < 0) return lua_pop(L, 1), errno = e, NULL;
  return lua_tolstring(L, -1, len);
}

/* load_csv(path, opts) -> table, sha256, skipped | nil, message */
static int l_load_csv(lua_State *L) {
  const char *path, *err;
  int lenient, fd;
  struct ltable *lt = load_args(L, &path, &lenient, &fd, &err);
  if (fd < 0) return lua_pushnil(L), lua_pushstring(L, err), 2;
  int ud = lua_gettop(L); /* the table */
  size_t len;
  const char *text = slurp(L, fd, &len);
  if (!text) return lua_pushnil(L), lua_pushfstring(L, "cannot read data set: %s: %s", path, strerror(errno)), 2;
  unsigned char md[32];
  unsigned n = 0;
  if (!EVP_Digest(text, len, md, &n, EVP_sha256(), NULL)) return luaL_error(L, "sha256 failed");
  char why[600];
  uint32_t line = 0;
  struct jsonl_result *res = new_result(L, &lt->t.a);
  int rc = evt_csv_read(&lt->t, text, len, &lt->sc, lenient, csv_skip, res, why, sizeof why, &line);
  if (rc == EVT_ROW_NOMEM || res->nomem) return evalua_nomem(L);
  if (rc == EVT_ROW_BAD) return lua_pushnil(L), lua_pushfstring(L, "%s:%d: %s", path, (int)line, why), 2;
  lua_pushvalue(L, ud);
  char hex[65];
  for (unsigned i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  lua_pushstring(L, hex);
  push_skips(L, res);
  return 3;
}

/* new(opts) -> an empty table to append rows to */
static int l_new(lua_State *L) {
  new_table(L, 1);
  return 1;
}

/* t:append(json, line) -> true | nil, message */
static int t_append(lua_State *L) {
  struct ltable *lt = check_ltable(L, 1);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n >= 0 && n <= UINT32_MAX, 3, "a line number from 0 to 2^32 - 1");
  uint32_t line = (uint32_t)n;
  char err[600];
  evalua_make_room(L, 2 * len);
  int rc = evt_json_row(&lt->t, s, len, line, &lt->sc, err, sizeof err);
  if (rc == EVT_ROW_NOMEM) return evalua_nomem(L);
  if (rc == EVT_ROW_BAD) return lua_pushnil(L), lua_pushstring(L, err), 2;
  lua_pushboolean(L, 1);
  return 1;
}

static int t_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)ltable_check(L, 1)->n);
  return 1;
}

static size_t check_row(lua_State *L, const struct evt_table *t, int arg) {
  lua_Integer i = luaL_checkinteger(L, arg);
  luaL_argcheck(L, i >= 1 && (size_t)i <= t->n, arg, "row out of range");
  return (size_t)i - 1;
}

/* ---- fields as Lua values -------------------------------------------------------- */

static void push_text(lua_State *L, const struct evt_table *t, evt_sref s) {
  lua_pushlstring(L, evt_text(t, s), s.len);
}

static void push_list(lua_State *L, const struct evt_table *t, enum evt_list_key k, size_t r) {
  const struct evt_list *l = &t->list[k];
  size_t first, n = evt_list_range(t, k, r, &first);
  if (k == EVT_GOLD_ANSWERS && (l->present[r] & EVT_LIST_SCALAR)) {
    lua_pushlstring(L, evt_text(t, l->str[first]), l->str[first].len);
    return;
  }
  lua_createtable(L, k == EVT_GRADES ? 0 : (int)n, k == EVT_GRADES ? (int)n : 0);
  for (size_t i = 0; i < n; i++) {
    size_t x = first + i;
    switch (k) {
    case EVT_RETRIEVED:
      if (l->present[r] & EVT_LIST_OBJECTS) {
        lua_createtable(L, 0, 2);
        push_text(L, t, l->str[x]);
        lua_setfield(L, -2, "id");
        if (l->present[r] & EVT_LIST_SCORED) lua_pushnumber(L, l->num[x]), lua_setfield(L, -2, "score");
      } else {
        push_text(L, t, l->str[x]);
      }
      break;
    case EVT_GRADES:
      push_text(L, t, l->str[x]);
      lua_pushnumber(L, l->num[x]);
      lua_rawset(L, -3);
      continue;
    default: push_text(L, t, l->str[x]); break;
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* Pushes a cell; returns 2 (value, "json") for JSON text the caller decodes. */
static int push_cell(lua_State *L, const struct evt_table *t, const struct evt_cell *c) {
  switch (c->type) {
  case EVT_FALSE: case EVT_TRUE: lua_pushboolean(L, c->type == EVT_TRUE); return 1;
  case EVT_INT: lua_pushinteger(L, (lua_Integer)c->v.i); return 1;
  case EVT_NUM: lua_pushnumber(L, c->v.d); return 1;
  case EVT_STR: lua_pushlstring(L, t->text + c->v.off, c->len); return 1;
  case EVT_JSON: lua_pushlstring(L, t->text + c->v.off, c->len); lua_pushliteral(L, "json"); return 2;
  default: lua_pushnil(L); return 1;
  }
}

static int list_key(const char *k) {
  for (int i = 0; i < EVT_NLISTS; i++)
    if (strcmp(k, evt_list_names[i]) == 0) return i;
  return -1;
}

/* t:get(i, key [, max]) -> value [, "json"] (nil when absent); with max,
 * a longer string is cut to at most max bytes, at a character, plus "…" */
static int t_get(lua_State *L) {
  struct ltable *lt = check_ltable(L, 1);
  size_t r = check_row(L, &lt->t, 2);
  size_t len;
  const char *k = luaL_checklstring(L, 3, &len);
  int lk = lt->sc.rag ? list_key(k) : -1;
  if (lk >= 0) {
    if (!(lt->t.list[lk].present[r] & EVT_LIST_PRESENT)) return lua_pushnil(L), 1;
    push_list(L, &lt->t, (enum evt_list_key)lk, r);
    return 1;
  }
  long c = evt_col_index(&lt->t, k, len);
  if (c < 0) return lua_pushnil(L), 1;
  const struct evt_cell *cell = &lt->t.cols[c].cells[r];
  lua_Integer max = luaL_optinteger(L, 4, 0);
  if (max > 0 && cell->type == EVT_STR && cell->len > (uint64_t)max) { /* a digest: the text cut at a character */
    const char *p = lt->t.text + cell->v.off;
    size_t n = (size_t)max;
    while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80) n--;
    lua_pushlstring(L, p, n);
    lua_pushliteral(L, "…");
    lua_concat(L, 2);
    return 1;
  }
  return push_cell(L, &lt->t, cell);
}

/* t:keys(i) -> the keys row i has, in column order */
static int t_keys(lua_State *L) {
  struct ltable *lt = check_ltable(L, 1);
  size_t r = check_row(L, &lt->t, 2);
  lua_newtable(L);
  lua_Integer n = 0;
  for (size_t c = 0; c < lt->t.ncols; c++)
    if (lt->t.cols[c].cells[r].type != EVT_ABSENT) lua_pushstring(L, lt->t.cols[c].name), lua_rawseti(L, -2, ++n);
  for (int k = 0; k < EVT_NLISTS && lt->sc.rag; k++)
    if (lt->t.list[k].present[r] & EVT_LIST_PRESENT) lua_pushstring(L, evt_list_names[k]), lua_rawseti(L, -2, ++n);
  return 1;
}

static int t_line(lua_State *L) {
  struct evt_table *t = ltable_check(L, 1);
  lua_pushinteger(L, t->line[check_row(L, t, 2)]);
  return 1;
}

static int t_bytes(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)evt_bytes(ltable_check(L, 1)));
  return 1;
}

/* ---- group codes -------------------------------------------------------------- */

struct lcodes *lcodes_check(lua_State *L, int arg) {
  struct lcodes *c = luaL_checkudata(L, arg, CODES_MT);
  if (!c->code) evalua_closed(L, arg);
  return c;
}

static int codes_gc(lua_State *L) {
  struct lcodes *c = luaL_checkudata(L, 1, CODES_MT);
  struct evm_alloc a = evalua_allocator(L);
  evm_free(&a, c->code, c->n ? c->n : 1, sizeof *c->code);
  c->code = NULL;
  return 0;
}

static struct lcodes *new_codes(lua_State *L, size_t n) {
  struct lcodes *c = lua_newuserdatauv(L, sizeof *c, 0);
  c->n = n, c->nvalues = 0, c->code = NULL;
  luaL_setmetatable(L, CODES_MT);
  evalua_make_room(L, n * sizeof *c->code);
  struct evm_alloc a = evalua_allocator(L);
  if (!(c->code = evm_new(&a, n ? n : 1, sizeof *c->code))) evalua_nomem(L);
  return c;
}

static void idtab_done(void *p) { evr_idtab_free(p); }

/* A table of the values seen while codes are made, freed whatever happens. */
static struct evr_idtab *new_seen(lua_State *L) {
  struct evr_idtab *seen = evalua_scratch(L, sizeof *seen, idtab_done);
  struct evm_alloc a = evalua_allocator(L);
  evr_idtab_init_alloc(seen, &a);
  return seen;
}


/* The text a cell groups by: as Lua's tostring would show it. */
static const char *cell_text(const struct evt_table *t, const struct evt_cell *c, char *buf, size_t cap, size_t *len) {
  switch (c->type) {
  case EVT_STR: case EVT_JSON: *len = c->len; return t->text + c->v.off;
  case EVT_TRUE: case EVT_FALSE: *len = c->type == EVT_TRUE ? 4 : 5; return c->type == EVT_TRUE ? "true" : "false";
  case EVT_INT: *len = (size_t)snprintf(buf, cap, "%lld", (long long)c->v.i); return buf;
  case EVT_NUM:
    *len = (size_t)snprintf(buf, cap, "%.14g", c->v.d);
    if (!strpbrk(buf, ".eEn")) buf[(*len)++] = '.', buf[(*len)++] = '0', buf[*len] = '\0';
    return buf;
  default: return NULL;
  }
}

/* Values in order of first appearance get codes 0, 1, ...; the list of
 * values is built in the table at index values. */
static uint32_t code_of(lua_State *L, struct evr_idtab *seen, struct lcodes *c, const char *s, size_t len, int values) {
  int found;
  uint32_t *v = evr_idtab_put(seen, s, len, (uint32_t)c->nvalues, &found);
  if (!v) evalua_nomem(L);
  if (!found) {
    lua_pushlstring(L, s, len);
    lua_rawseti(L, values, (lua_Integer)++c->nvalues);
  }
  return *v;
}

/* t:codes(key, missing) -> codes, values: rows grouped by a column's value;
 * a row without the key (every row when key is nil) is in the group named
 * missing. */
static int t_codes(lua_State *L) {
  struct evt_table *t = ltable_check(L, 1);
  size_t klen = 0, mlen;
  const char *key = luaL_optlstring(L, 2, NULL, &klen), *missing = luaL_checklstring(L, 3, &mlen);
  long col = key ? evt_col_index(t, key, klen) : -1;
  char (*bufs)[32] = lists_scratch(L, t->n, 32); /* number texts stay alive for the table's keys */
  struct evr_idtab *seen = new_seen(L);
  struct lcodes *c = new_codes(L, t->n);
  lua_newtable(L);
  int values = lua_gettop(L);
  for (size_t r = 0; r < t->n; r++) {
    size_t len = mlen;
    const char *s = col >= 0 ? cell_text(t, &t->cols[col].cells[r], bufs[r], 32, &len) : NULL;
    c->code[r] = code_of(L, seen, c, s ? s : missing, s ? len : mlen, values);
  }
  return 2;
}

/* codes_of(list of strings) -> codes, values (for slices a function computes) */
static int l_codes_of(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  size_t n = lua_rawlen(L, 1);
  struct evr_idtab *seen = new_seen(L);
  struct lcodes *c = new_codes(L, n);
  lua_newtable(L);
  int values = lua_gettop(L);
  for (size_t i = 0; i < n; i++) {
    size_t len;
    lua_rawgeti(L, 1, (lua_Integer)i + 1);
    const char *s = lua_tolstring(L, -1, &len);
    if (!s) return luaL_argerror(L, 1, lua_pushfstring(L, "[%I] is not a string", (lua_Integer)i + 1));
    c->code[i] = code_of(L, seen, c, s, len, values); /* s stays alive in the list */
    lua_pop(L, 1);
  }
  return 2;
}

/* codes:remap(order) -> codes renumbered so that value order[k] gets k-1 */
static int codes_remap(lua_State *L) {
  struct lcodes *c = lcodes_check(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t nv = lua_rawlen(L, 2);
  luaL_argcheck(L, nv == c->nvalues, 2, "a permutation of the values");
  uint32_t *to = lists_scratch(L, nv, sizeof *to);
  for (size_t k = 0; k < nv; k++) {
    lua_rawgeti(L, 2, (lua_Integer)k + 1);
    lua_Integer old = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (old < 1 || (size_t)old > nv) return luaL_argerror(L, 2, "a permutation of the values");
    to[old - 1] = (uint32_t)k;
  }
  for (size_t i = 0; i < c->n; i++) c->code[i] = to[c->code[i]];
  return 0;
}

static int codes_get(lua_State *L) {
  struct lcodes *c = lcodes_check(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  luaL_argcheck(L, i >= 1 && (size_t)i <= c->n, 2, "out of range");
  lua_pushinteger(L, c->code[i - 1] + 1);
  return 1;
}

static int make_codes(lua_State *L) {
  new_codes(L, 0);
  return 1;
}

/* t:subset(rows) -> a new table of the given rows (1-based), in that order */
static int t_subset(lua_State *L) {
  struct ltable *lt = check_ltable(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  struct ltable *nt = new_table(L, 0);
  nt->sc.rag = lt->sc.rag;
  size_t n = lua_rawlen(L, 2);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i);
    lua_Integer r = lua_tointeger(L, -1);
    lua_pop(L, 1);
    luaL_argcheck(L, r >= 1 && (size_t)r <= lt->t.n, 2, "row out of range");
    if (i % 1024 == 1) evalua_make_room(L, (evt_bytes(&lt->t) / (lt->t.n ? lt->t.n : 1)) * 1024);
    if (evt_copy_row(&nt->t, &lt->t, (size_t)r - 1)) return evalua_nomem(L);
    evt_row_commit(&nt->t);
  }
  return 1;
}

/* FNV-1a, 64 bits: a hash that every machine and version computes alike,
 * so a row's shard depends on its id only. */
static uint64_t fnv1a64(const char *s, size_t len) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* t:shard_rows(key, index, count) -> the rows (1-based) whose key's text
 * hashes to shard index of count: FNV-1a-64(text) mod count == index - 1.
 * A row without the key hashes as the empty text. */
static int t_shard_rows(lua_State *L) {
  struct evt_table *t = ltable_check(L, 1);
  size_t klen;
  const char *key = luaL_checklstring(L, 2, &klen);
  lua_Integer index = luaL_checkinteger(L, 3), count = luaL_checkinteger(L, 4);
  luaL_argcheck(L, count >= 1, 4, "at least one shard");
  luaL_argcheck(L, index >= 1 && index <= count, 3, "a shard between 1 and count");
  long col = evt_col_index(t, key, klen);
  lua_newtable(L);
  lua_Integer k = 0;
  char buf[32];
  for (size_t r = 0; r < t->n; r++) {
    size_t len = 0;
    const char *s = col >= 0 ? cell_text(t, &t->cols[col].cells[r], buf, sizeof buf, &len) : NULL;
    if (fnv1a64(s ? s : "", s ? len : 0) % (uint64_t)count == (uint64_t)(index - 1))
      lua_pushinteger(L, (lua_Integer)r + 1), lua_rawseti(L, -2, ++k);
  }
  return 1;
}

/* The first k retrieved ids' texts from docs (id -> text) as the row's
 * contexts; -1 when out of memory. */
static int contexts_from(lua_State *L, struct evt_table *d, const struct evt_table *s, size_t r, int docs, size_t k) {
  const struct evt_list *ret = &s->list[EVT_RETRIEVED];
  size_t first, n = evt_list_range(s, EVT_RETRIEVED, r, &first);
  d->list[EVT_CONTEXTS].present[d->n] = EVT_LIST_PRESENT;
  for (size_t i = first; i < first + (n < k ? n : k); i++) {
    push_text(L, s, ret->str[i]);
    size_t len;
    const char *text = lua_rawget(L, docs) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (text && len > EVT_ITEM_MAX) {
      push_text(L, s, ret->str[i]);
      return luaL_error(L, "attach_contexts: the text of document '%s' is longer than %d MB", lua_tostring(L, -1),
                        (int)((EVT_ITEM_MAX + 1) >> 20));
    }
    if (text) {
      char *o = evt_text_room(d, len);
      if (!o) return -1;
      memcpy(o, text, len);
      if (evt_list_push(d, EVT_CONTEXTS, evt_text_take(d, len), 0)) return -1;
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* t:attach_contexts(docs, k): rows without contexts but with a ranking get
 * the texts (docs: id -> text) of their first k retrieved ids. */
static int t_attach_contexts(lua_State *L) {
  struct ltable *lt = check_ltable(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer k = luaL_optinteger(L, 3, LUA_MAXINTEGER);
  struct ltable *nt = new_table(L, 0); /* the new rows, collected if an error stops the copy */
  const struct evt_table *s = &lt->t;
  evalua_make_room(L, evt_bytes(s));
  for (size_t r = 0; r < s->n; r++) {
    int fill = !(s->list[EVT_CONTEXTS].present[r] & EVT_LIST_PRESENT) &&
               (s->list[EVT_RETRIEVED].present[r] & EVT_LIST_PRESENT);
    if (evt_copy_row(&nt->t, s, r) || (fill && contexts_from(L, &nt->t, s, r, 2, (size_t)(k < 0 ? 0 : k))))
      return evalua_nomem(L);
    evt_row_commit(&nt->t);
  }
  struct evt_table old = lt->t; /* the old rows go with nt */
  lt->t = nt->t, nt->t = old;
  return 0;
}

int luaopen_evalua_table(lua_State *L) {
  static const luaL_Reg tmeth[] = {
    {"append", t_append}, {"get", t_get}, {"keys", t_keys}, {"line", t_line}, {"codes", t_codes},
    {"bytes", t_bytes}, {"size", t_len}, {"subset", t_subset}, {"shard_rows", t_shard_rows}, {"attach_contexts", t_attach_contexts},
    {NULL, NULL},
  };
  evalua_newclass(L, TABLE_MT, l_new);
  luaL_newlib(L, tmeth);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, table_gc), lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, t_len), lua_setfield(L, -2, "__len");
  lua_pop(L, 1);
  static const luaL_Reg cmeth[] = {{"remap", codes_remap}, {"get", codes_get}, {NULL, NULL}};
  evalua_newclass(L, CODES_MT, make_codes);
  luaL_newlib(L, cmeth);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, codes_gc), lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"load", l_load}, {"load_csv", l_load_csv}, {"new", l_new}, {"codes_of", l_codes_of},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  luaopen_evalua_scores(L);
  lua_setfield(L, -2, "scores");
  return 1;
}
