/* evalua._report: the JSON and CSV reports' per-item part, streamed from
 * the columns with a fixed buffer, so a million rows never become Lua
 * tables. The writers take data only: the table, score and code columns,
 * names, and the few values only Lua holds as JSON text made before the
 * report begins (lua/evalua/report/columns.lua), so no item calls into Lua
 * and every report is written on two threads. The rest of each report
 * (aggregates, metadata) is small and encoded from Lua once. The text is
 * exactly what lua/evalua/core/json.lua would write: sorted keys, two-space
 * indent, numbers that read back exactly. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "files.h"
#include "l_json.h"
#include "l_table.h"
#include "stage.h"
#include "modules.h"
#include "parallel.h"
#include "runtime.h"
#include "udata.h"

/* ---- a buffered sink: a file, or a Lua string when path is nil ------------------ */

#define SINK_MT "evalua.report.sink"

/* The text of a number written lately, by its bits: scores repeat (a
 * ratio of small counts, 0, 1), and formatting one exactly costs more
 * than finding it again. */
#define NCACHE 1024
struct ncache { uint64_t bits; unsigned char len; char text[31]; };

/* Where a report goes: a temporary file beside its target (opened with the
 * sandbox's check in one step), or memory. A userdata, so that an error
 * midway closes and removes what was begun. */
struct sink {
  FILE *f;             /* NULL when writing to memory */
  char *mem;           /* the text, when writing to memory */
  size_t memlen, memcap, len;
  struct evm_alloc a;  /* where mem comes from: it counts against --mem-limit */
  int err;
  int compact;         /* JSON on one line: no indentation, ":" alone */
  const char *fail;    /* what a JSON-valued field the encoder refuses raises (the encoder's words) */
  size_t *ord;         /* graded ids in key order, for one row */
  size_t ordcap;
  struct ncache nc[NCACHE];
  size_t replaced;     /* invalid UTF-8 sequences written as U+FFFD */
  int at_open;         /* at holds the target's folder */
  struct evalua_at at;
  char tmp[4200];      /* the temporary file's name in that folder; "" once renamed */
  char buf[1 << 16];
};

/* n bytes to the end of the text in memory; ENOMEM when it cannot grow. */
static void to_memory(struct sink *s, const char *p, size_t n) {
  if (s->err) return;
  if (n > s->memcap - s->memlen) {
    size_t cap = s->memcap ? s->memcap : 1 << 16;
    while (cap - s->memlen < n && cap < SIZE_MAX / 4) cap *= 2;
    char *m = cap - s->memlen >= n ? evm_resize(&s->a, s->mem, s->memcap, cap, 1) : NULL;
    if (!m) return (void)(s->err = ENOMEM);
    s->mem = m, s->memcap = cap;
  }
  memcpy(s->mem + s->memlen, p, n);
  s->memlen += n;
}

static void drain(struct sink *s, const char *p, size_t n) {
  if (!s->f) return to_memory(s, p, n);
  if (n && fwrite(p, 1, n, s->f) != n) s->err = errno ? errno : EIO;
}

static void flush(struct sink *s) {
  drain(s, s->buf, s->len);
  s->len = 0;
}

static void put_past(struct sink *s, const char *p, size_t n) {
  flush(s);
  if (n > sizeof s->buf) return drain(s, p, n);
  memcpy(s->buf, p, n);
  s->len = n;
}

/* Inline: most pieces are a few bytes of constant length, copied without a call. */
static inline void put(struct sink *s, const char *p, size_t n) {
  if (n > sizeof s->buf - s->len) return put_past(s, p, n);
  memcpy(s->buf + s->len, p, n);
  s->len += n;
}

static void puts_(struct sink *s, const char *p) { put(s, p, strlen(p)); }

static void indent(struct sink *s, int depth) {
  if (s->compact) return;
  static const char spaces[] = "\n                                                                ";
  put(s, spaces, 1 + (size_t)(2 * depth < 64 ? 2 * depth : 64));
}

static void put_cb(void *ud, const char *p, size_t n) { put(ud, p, n); }

/* Printable ASCII but '"' and '\\': written as it is. */
static int plain(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return 0;
  }
  return 1;
}

static void quoted(struct sink *s, const char *p, size_t n) {
  if (n <= 256 && s->len + n + 2 <= sizeof s->buf && plain(p, n)) { /* most ids: no call per piece */
    char *o = s->buf + s->len;
    o[0] = '"', memcpy(o + 1, p, n), o[n + 1] = '"';
    s->len += n + 2;
    return;
  }
  s->replaced += evalua_json_quote(put_cb, s, p, n);
}

static void number(struct sink *s, double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  struct ncache *c = &s->nc[(bits * 0x9E3779B97F4A7C15ULL) >> 54]; /* Fibonacci hashing: 10 bits */
  if (c->len && c->bits == bits) return put(s, c->text, c->len);
  char b[40];
  size_t n = evalua_json_number(x, b);
  if (n <= sizeof c->text) c->bits = bits, c->len = (unsigned char)n, memcpy(c->text, b, n);
  put(s, b, n);
}

/* A name quoted once for the whole report (metric, slice dimension or
 * value, system), with the replacements its quoting made. */
struct qstr { size_t off, n, replaced; };

static void put_q(struct sink *s, const char *base, const struct qstr *q) {
  put(s, base + q->off, q->n);
  s->replaced += q->replaced;
}

/* ---- what the writers read ---------------------------------------------------- */

/* JSON text Lua encoded before the report began (s NULL: none). */
struct text {
  const char *s;
  size_t len;
};

/* A key of the rows: a list of the format (list >= 0) or a column. */
struct rowkey {
  const char *name;
  size_t len;
  int list;
  long col;
};

static int rowkey_cmp(const void *a, const void *b) {
  const struct rowkey *x = a, *y = b;
  int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

struct job {
  lua_State *L;
  const struct evt_table *t;
  struct lscores *sc;
  struct lcodes *sys;
  size_t nm, ndims;
  const char **mname;    /* metric names */
  size_t *by_name;       /* metric indices in name order */
  const char **dname;    /* slice dimension names (without "all") */
  size_t *dims_by_name;
  struct lcodes **dcodes;
  int systems, dvalues;  /* stack indices: list of names; list of value lists */
  struct text **details; /* details[m][r]: metric m's details of row r as JSON text, or NULL */
  struct text *rows;     /* each row as JSON text (rows given as Lua tables, full items), or NULL */
  struct lscores *base;  /* the baseline's scores of each row's item, or NULL */
  struct rowkey *keys;   /* every key a row can have, sorted as json.lua sorts */
  size_t nkeys;
  const char **sysname;  /* system names, by code */
  const char ***dval;    /* dval[k][code]: value names of dimension k */
  long id_col;
  int full_items;        /* items with their rows (items = "full") */
  const char *qbase;     /* the names quoted (JSON): text, and where each is in it */
  struct qstr *qmetric, *qdim, **qval, *qsys;
};

static const char *value_of(struct job *j, int list, size_t k) {
  if (lua_rawgeti(j->L, list, (lua_Integer)k + 1) != LUA_TSTRING)
    luaL_error(j->L, "report: name %d of a list is a %s, not a string", (int)k + 1, luaL_typename(j->L, -1));
  const char *s = lua_tostring(j->L, -1);
  lua_pop(j->L, 1); /* the string stays alive in the list */
  return s;
}

/* Between a key and its value. */
static void colon(struct sink *s) { put(s, ": ", s->compact ? 1 : 2); }

static void cell_json(struct job *j, struct sink *s, const struct evt_cell *c, int depth) {
  switch (c->type) {
  case EVT_STR: quoted(s, j->t->text + c->v.off, c->len); break;
  case EVT_INT: { char b[24]; put(s, b, (size_t)sprintf(b, "%lld", (long long)c->v.i)); break; }
  case EVT_NUM: number(s, c->v.d); break;
  case EVT_TRUE: puts_(s, "true"); break;
  case EVT_FALSE: puts_(s, "false"); break;
  case EVT_JSON: { /* re-encoded so keys sort and indent as elsewhere */
    struct evalua_json_out out = {put_cb, s, NULL, NULL, 0};
    int e = evalua_json_recode(j->t->text + c->v.off, s->compact ? NULL : "  ", depth, &s->a, &out, &s->replaced);
    if (e == ELOOP) s->fail = "json: nesting deeper than 64 (a cycle?)";
    else if (e == ERANGE) s->fail = "json: cannot encode NaN or infinity";
    else if (e) s->err = e;
    break;
  }
  default: puts_(s, "null"); break;
  }
}

static void text_json(struct job *j, struct sink *s, evt_sref r) { quoted(s, evt_text(j->t, r), r.len); }

/* Byte order of two texts, as Lua compares strings in the C locale. */
static int text_cmp(const struct evt_table *t, evt_sref x, evt_sref y) {
  int c = memcmp(evt_text(t, x), evt_text(t, y), x.len < y.len ? x.len : y.len);
  return c ? c : (x.len > y.len) - (x.len < y.len);
}

/* Two graded ids by their text, an id given twice in its order (qsort_r
 * with the table). */
static int grade_cmp(const void *a, const void *b, void *t) {
  const struct evt_list *l = &((const struct evt_table *)t)->list[EVT_GRADES];
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = text_cmp(t, l->str[x], l->str[y]);
  return c ? c : (x > y) - (x < y);
}

static void list_json(struct job *j, struct sink *s, enum evt_list_key k, size_t r, int depth) {
  const struct evt_table *t = j->t;
  const struct evt_list *l = &t->list[k];
  size_t first, n = evt_list_range(t, k, r, &first);
  if (k == EVT_GOLD_ANSWERS && (l->present[r] & EVT_LIST_SCALAR)) {
    quoted(s, evt_text(t, l->str[first]), l->str[first].len);
    return;
  }
  if (k == EVT_GRADES) { /* an object: keys sorted */
    if (!n) return puts_(s, "{}");
    if (n > s->ordcap) {
      size_t *o = evm_resize(&s->a, s->ord, s->ordcap, n, sizeof *o);
      if (!o) return (void)(s->err = ENOMEM); /* raised on the Lua thread */
      s->ord = o, s->ordcap = n;
    }
    size_t *o = s->ord;
    for (size_t i = 0; i < n; i++) o[i] = first + i;
    qsort_r(o, n, sizeof *o, grade_cmp, (void *)t);
    puts_(s, "{");
    for (size_t i = 0; i < n; i++) {
      if (i) puts_(s, ",");
      indent(s, depth + 1);
      text_json(j, s, l->str[o[i]]);
      colon(s);
      number(s, l->num[o[i]]);
    }
    indent(s, depth);
    puts_(s, "}");
    return;
  }
  if (!n) return puts_(s, "[]");
  puts_(s, "[");
  for (size_t i = first; i < first + n; i++) {
    if (i > first) puts_(s, ",");
    indent(s, depth + 1);
    if (k == EVT_RETRIEVED && (l->present[r] & EVT_LIST_OBJECTS)) {
      puts_(s, "{");
      indent(s, depth + 2);
      puts_(s, "\"id\""), colon(s);
      text_json(j, s, l->str[i]);
      if (l->present[r] & EVT_LIST_SCORED) {
        puts_(s, ",");
        indent(s, depth + 2);
        puts_(s, "\"score\""), colon(s);
        number(s, l->num[i]);
      }
      indent(s, depth + 1);
      puts_(s, "}");
    } else {
      text_json(j, s, l->str[i]);
    }
  }
  indent(s, depth);
  puts_(s, "]");
}

/* The row's keys from the columns, sorted; lists are kept by their key. */
static void row_json(struct job *j, struct sink *s, size_t r, int depth) {
  const struct evt_table *t = j->t;
  if (j->rows) return put(s, j->rows[r].s, j->rows[r].len);
  int any = 0;
  for (size_t i = 0; i < j->nkeys; i++) {
    const struct rowkey *k = &j->keys[i];
    if (k->list >= 0 ? !(t->list[k->list].present[r] & EVT_LIST_PRESENT) : t->cols[k->col].cells[r].type == EVT_ABSENT)
      continue;
    puts_(s, any ? "," : "{");
    any = 1;
    indent(s, depth + 1);
    quoted(s, k->name, k->len);
    colon(s);
    if (k->list >= 0) list_json(j, s, (enum evt_list_key)k->list, r, depth + 1);
    else cell_json(j, s, &t->cols[k->col].cells[r], depth + 1);
  }
  if (!any) return puts_(s, "{}");
  indent(s, depth);
  puts_(s, "}");
}

/* {"metric": value...} of the metrics for which want(j, i, r) holds. */
enum part { SCORES, REASONS, UNMEASURED };

static int in_part(const struct lscores *sc, enum part p, size_t m, size_t r) {
  if (p == SCORES) return !sc->miss[m][r];
  if (p == REASONS) return !sc->miss[m][r] && sc->why[m][r];
  return sc->miss[m][r];
}

static void part_json(struct job *j, struct sink *s, enum part p, size_t r, int depth) {
  int any = 0;
  for (size_t a = 0; a < j->nm; a++) {
    size_t m = j->by_name[a];
    if (!in_part(j->sc, p, m, r)) continue;
    puts_(s, any ? "," : "{");
    any = 1;
    indent(s, depth + 1);
    put_q(s, j->qbase, &j->qmetric[m]);
    colon(s);
    if (p == SCORES) number(s, j->sc->val[m][r]);
    else {
      const char *why = j->sc->why[m][r] ? j->sc->reasons[j->sc->why[m][r]] : "unmeasured";
      quoted(s, why, strlen(why));
    }
  }
  if (!any) return puts_(s, "{}");
  indent(s, depth);
  puts_(s, "}");
}

static void details_json(struct job *j, struct sink *s, size_t r, int depth) {
  int any = 0;
  for (size_t a = 0; a < j->nm; a++) {
    size_t m = j->by_name[a];
    const struct text *d = j->details[m] ? &j->details[m][r] : NULL;
    if (!d || !d->s) continue;
    puts_(s, any ? "," : "{");
    any = 1;
    indent(s, depth + 1);
    put_q(s, j->qbase, &j->qmetric[m]);
    colon(s);
    put(s, d->s, d->len);
  }
  if (!any) return puts_(s, "{}");
  indent(s, depth);
  puts_(s, "}");
}

static void id_value(struct job *j, struct sink *s, size_t r, int depth) {
  if (j->id_col < 0) return puts_(s, "null");
  cell_json(j, s, &j->t->cols[j->id_col].cells[r], depth);
}

/* "key": at depth, after a comma unless first. */
static void key(struct sink *s, const char *k, int depth, int first) {
  if (!first) puts_(s, ",");
  indent(s, depth);
  puts_(s, k);
  colon(s);
}

/* An item: in full, with its row (on one line) and a key a line; compact,
 * all on one line and without the row, which the data set holds. */
static void item_json(struct job *j, struct sink *s, size_t r) {
  const int d = 3; /* the item's keys: document > items > item */
  int was = s->compact;
  s->compact = was || !j->full_items;
  puts_(s, "{");
  key(s, "\"details\"", d, 1), details_json(j, s, r, d);
  key(s, "\"id\"", d, 0), id_value(j, s, r, d);
  key(s, "\"reasons\"", d, 0), part_json(j, s, REASONS, r, d);
  if (j->full_items) {
    key(s, "\"row\"", d, 0);
    s->compact = 1; /* the row as read, on one line: a changed row is one changed line */
    row_json(j, s, r, d);
    s->compact = was;
  }
  key(s, "\"scores\"", d, 0), part_json(j, s, SCORES, r, d);
  key(s, "\"slices\"", d, 0);
  if (!j->ndims) puts_(s, "{}");
  else {
    for (size_t a = 0; a < j->ndims; a++) {
      size_t k = j->dims_by_name[a];
      puts_(s, a ? "," : "{");
      indent(s, d + 1);
      put_q(s, j->qbase, &j->qdim[k]);
      colon(s);
      put_q(s, j->qbase, &j->qval[k][j->dcodes[k]->code[r]]);
    }
    indent(s, d);
    puts_(s, "}");
  }
  key(s, "\"system\"", d, 0), put_q(s, j->qbase, &j->qsys[j->sys->code[r]]);
  key(s, "\"unmeasured\"", d, 0), part_json(j, s, UNMEASURED, r, d);
  indent(s, d - 1);
  puts_(s, "}");
  s->compact = was;
}

/* ---- reading the spec ------------------------------------------------------- */

static int opt_index(lua_State *L, int spec, const char *k) {
  if (lua_getfield(L, spec, k) == LUA_TNIL) return lua_pop(L, 1), 0;
  return lua_gettop(L);
}

static const char **names_sorted(lua_State *L, int list, size_t n, size_t **order) {
  const char **names = lua_newuserdatauv(L, (n + 1) * sizeof *names, 0);
  *order = lua_newuserdatauv(L, (n + 1) * sizeof **order, 0);
  for (size_t i = 0; i < n; i++) names[i] = value_of(&(struct job){.L = L}, list, i), (*order)[i] = i;
  for (size_t i = 1; i < n; i++) /* insertion sort: few names */
    for (size_t a = i; a > 0 && strcmp(names[(*order)[a - 1]], names[(*order)[a]]) > 0; a--) {
      size_t t = (*order)[a]; (*order)[a] = (*order)[a - 1]; (*order)[a - 1] = t;
    }
  return names;
}

/* A list of n JSON texts (false: none) as an array left on the stack; the
 * texts stay alive in the list. */
static struct text *texts_of(lua_State *L, int list, size_t n) {
  luaL_argcheck(L, lua_rawlen(L, list) == n, 1, "a text (or false) per row");
  struct text *t = lua_newuserdatauv(L, (n + 1) * sizeof *t, 0);
  for (size_t r = 0; r < n; r++) {
    int type = lua_rawgeti(L, list, (lua_Integer)r + 1);
    if (type != LUA_TSTRING && type != LUA_TBOOLEAN) luaL_error(L, "report: text %d of a list is a %s", (int)r + 1, lua_typename(L, type));
    t[r].s = type == LUA_TSTRING ? lua_tolstring(L, -1, &t[r].len) : NULL;
    lua_pop(L, 1);
  }
  return t;
}

static void read_job(lua_State *L, int spec, struct job *j) {
  memset(j, 0, sizeof *j);
  j->L = L;
  lua_getfield(L, spec, "table"), j->t = ltable_check(L, -1);
  lua_getfield(L, spec, "scores"), j->sc = lscores_check(L, -1);
  lua_getfield(L, spec, "sys_codes"), j->sys = lcodes_check(L, -1);
  j->systems = opt_index(L, spec, "systems");
  int metrics = opt_index(L, spec, "metrics");
  int dims = opt_index(L, spec, "dims");
  int dcodes = opt_index(L, spec, "dim_codes");
  j->dvalues = opt_index(L, spec, "dim_values");
  if (!j->systems || !metrics || !dims || !dcodes || !j->dvalues) luaL_error(L, "report: incomplete spec");
  int details = opt_index(L, spec, "details");
  lua_getfield(L, spec, "full_items");
  j->full_items = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (opt_index(L, spec, "rows")) j->rows = texts_of(L, lua_gettop(L), j->t->n);
  j->nm = lua_rawlen(L, metrics), j->ndims = lua_rawlen(L, dims);
  luaL_argcheck(L, j->nm == j->sc->m, 1, "one metric name per score column");
  if (opt_index(L, spec, "baseline")) {
    j->base = lscores_check(L, -1);
    luaL_argcheck(L, j->base->n == j->t->n && j->base->m == j->nm, 1, "a baseline score per row and metric");
  }
  j->mname = names_sorted(L, metrics, j->nm, &j->by_name);
  j->details = lua_newuserdatauv(L, (j->nm + 1) * sizeof *j->details, 0);
  luaL_checkstack(L, (int)j->nm + 8, "too many metrics");
  for (size_t m = 0; m < j->nm; m++) { /* each array left on the stack */
    j->details[m] = details && lua_getfield(L, details, j->mname[m]) == LUA_TTABLE ? texts_of(L, lua_gettop(L), j->t->n) : NULL;
    if (details) lua_remove(L, j->details[m] ? -2 : -1); /* the list stays alive in the spec */
  }
  j->dname = names_sorted(L, dims, j->ndims, &j->dims_by_name);
  j->dcodes = lua_newuserdatauv(L, (j->ndims + 1) * sizeof *j->dcodes, 0);
  for (size_t k = 0; k < j->ndims; k++) {
    lua_rawgeti(L, dcodes, (lua_Integer)k + 1);
    j->dcodes[k] = lcodes_check(L, -1); /* kept alive by the spec */
    lua_pop(L, 1);
  }
  j->sysname = lua_newuserdatauv(L, (j->sys->nvalues + 1) * sizeof *j->sysname, 0); /* left on the stack */
  for (size_t v = 0; v < j->sys->nvalues; v++) j->sysname[v] = value_of(j, j->systems, v);
  j->dval = lua_newuserdatauv(L, (j->ndims + 1) * sizeof *j->dval, 0);
  luaL_checkstack(L, (int)j->ndims * 2 + 8, "too many slice dimensions");
  for (size_t k = 0; k < j->ndims; k++) { /* each array stays on the stack, each list in the spec */
    j->dval[k] = lua_newuserdatauv(L, (j->dcodes[k]->nvalues + 1) * sizeof **j->dval, 0);
    lua_rawgeti(L, j->dvalues, (lua_Integer)k + 1);
    for (size_t v = 0; v < j->dcodes[k]->nvalues; v++) j->dval[k][v] = value_of(j, lua_gettop(L), v);
    lua_pop(L, 1);
  }
  lua_getfield(L, spec, "id_field");
  size_t n;
  const char *idf = luaL_checklstring(L, -1, &n); /* the field that names an item */
  j->id_col = evt_col_index(j->t, idf, n);
  lua_pop(L, 1);
  j->keys = lua_newuserdatauv(L, (j->t->ncols + EVT_NLISTS) * sizeof *j->keys, 0); /* left on the stack */
  for (size_t c = 0; c < j->t->ncols; c++)
    j->keys[j->nkeys++] = (struct rowkey){j->t->cols[c].name, j->t->cols[c].name_len, -1, (long)c};
  for (int k = 0; k < EVT_NLISTS; k++)
    j->keys[j->nkeys++] = (struct rowkey){evt_list_names[k], strlen(evt_list_names[k]), k, -1};
  qsort(j->keys, j->nkeys, sizeof *j->keys, rowkey_cmp);
}

static struct sink *sink_open(lua_State *L, const char *path);

/* names[0..n) quoted into s, where each is in s's text (an array left on
 * the stack). */
static struct qstr *quote_all(lua_State *L, struct sink *s, const char *const *names, size_t n) {
  struct qstr *q = lua_newuserdatauv(L, (n + 1) * sizeof *q, 0);
  for (size_t i = 0; i < n; i++) {
    size_t at = s->memlen + s->len, was = s->replaced;
    s->replaced += evalua_json_quote(put_cb, s, names[i], strlen(names[i]));
    q[i] = (struct qstr){at, s->memlen + s->len - at, s->replaced - was};
  }
  return q;
}

/* Every name of the report quoted once, into a sink in memory left on the stack. */
static void prequote(lua_State *L, struct job *j) {
  luaL_checkstack(L, (int)j->ndims + 8, "too many slice dimensions");
  struct sink *s = sink_open(L, NULL);
  j->qmetric = quote_all(L, s, j->mname, j->nm);
  j->qdim = quote_all(L, s, j->dname, j->ndims);
  j->qsys = quote_all(L, s, j->sysname, j->sys->nvalues);
  j->qval = lua_newuserdatauv(L, (j->ndims + 1) * sizeof *j->qval, 0);
  for (size_t k = 0; k < j->ndims; k++) j->qval[k] = quote_all(L, s, j->dval[k], j->dcodes[k]->nvalues);
  flush(s);
  if (s->err) evalua_nomem(L);
  j->qbase = s->mem ? s->mem : "";
}

static int sink_gc(lua_State *L) {
  struct sink *s = luaL_checkudata(L, 1, SINK_MT);
  if (s->f) fclose(s->f), s->f = NULL;
  if (s->at_open) {
    if (s->tmp[0]) unlinkat(s->at.dirfd, s->tmp, 0);
    evalua_at_release(&s->at);
    s->at_open = 0;
  }
  evm_free(&s->a, s->mem, s->memcap, 1);
  evm_free(&s->a, s->ord, s->ordcap, sizeof *s->ord);
  s->mem = NULL, s->memcap = s->memlen = 0, s->ord = NULL, s->ordcap = 0;
  return 0;
}

/* A new sink on the stack: a temporary file beside path, or memory (path NULL). */
static struct sink *sink_open(lua_State *L, const char *path) {
  struct sink *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, offsetof(struct sink, buf));
  luaL_setmetatable(L, SINK_MT);
  s->a = evalua_allocator(L);
  if (!path) return s;
  if (evalua_at(L, path, 1, 0, &s->at)) lua_error(L); /* the sandbox's message */
  s->at_open = 1;
  snprintf(s->tmp, sizeof s->tmp, "%s.tmp.%ld", s->at.name, (long)getpid());
  int fd = openat(s->at.dirfd, s->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | evalua_at_flags(&s->at), 0666);
  if (fd < 0 || !(s->f = fdopen(fd, "wb"))) {
    int e = errno;
    if (fd >= 0) close(fd);
    luaL_error(L, "cannot write %s: %s", path, strerror(e));
  }
  return s;
}

/* Finishes the sink: the file renamed into place (pushes true) or the
 * text pushed, then the number of invalid UTF-8 sequences replaced. */
static void sink_check(lua_State *L, const struct sink *s) {
  if (s->fail) lua_pushstring(L, s->fail), lua_error(L);
  if (s->err == ENOMEM) evalua_nomem(L);
}

static int sink_close(lua_State *L, struct sink *s, const char *path) {
  flush(s);
  sink_check(L, s);
  if (!path) {
    lua_pushlstring(L, s->mem ? s->mem : "", s->memlen);
    lua_pushinteger(L, (lua_Integer)s->replaced);
    return 2;
  }
  /* No fsync: the rename makes the report whole or absent for every reader,
   * even after a kill; a report lost to a power cut is regenerated. */
  if (fclose(s->f) && !s->err) s->err = errno;
  s->f = NULL;
  if (!s->err && renameat(s->at.dirfd, s->tmp, s->at.dirfd, s->at.name)) s->err = errno;
  if (s->err) luaL_error(L, "cannot write %s: %s", path, strerror(s->err));
  s->tmp[0] = '\0';
  lua_pushboolean(L, 1);
  lua_pushinteger(L, (lua_Integer)s->replaced);
  return 2;
}

struct items_hook {
  struct job *j;
  struct sink *s;
};

#define BLOCK 8192 /* items a thread writes at a time */

/* Rows [lo, hi) of a report written into s: what two threads share out. */
struct writer {
  void (*range)(void *ctx, struct sink *s, size_t lo, size_t hi);
  void *ctx;
  lua_State *L;
};

/* What the two lanes share: the writer, the report's sink and a sink in
 * memory per lane for the block it makes. */
struct lanes {
  const struct writer *w;
  struct sink *out, *t[2];
  size_t n;
};

static int make_block(void *ctx, int lane, size_t b) {
  struct lanes *p = ctx;
  struct sink *t = p->t[lane];
  size_t lo = b * BLOCK;
  p->w->range(p->w->ctx, t, lo, lo + BLOCK < p->n ? lo + BLOCK : p->n);
  flush(t);
  return t->err || t->fail; /* stops the lanes */
}

/* Appended to the report while the other lane makes its block, so the
 * writing (to the file's pages) and the formatting overlap. */
static void take_block(void *ctx, int lane, size_t b) {
  struct lanes *p = ctx;
  struct sink *t = p->t[lane];
  (void)b;
  put(p->out, t->mem, t->memlen), p->out->replaced += t->replaced;
  t->memlen = t->len = 0, t->replaced = 0;
}

/* Rows [0, n) on two threads, a block of BLOCK each at a time, appended
 * in order. */
static void write_parallel(const struct writer *w, struct sink *s, size_t n) {
  luaL_checkstack(w->L, 4, "report rows");
  struct lanes p = {w, s, {sink_open(w->L, NULL), sink_open(w->L, NULL)}, n};
  size_t blocks = (n + BLOCK - 1) / BLOCK, b = evalua_run_ordered(0, blocks, make_block, take_block, &p);
  if (b < blocks) sink_check(w->L, p.t[b % 2]);
  lua_pop(w->L, 2);
}

/* The rows' texts are spread over the whole input: fetching row r's
 * while row r - AHEAD is written hides most of the wait for memory (the
 * id's load was 85% of the quoting's time). */
#define AHEAD 16

static void prefetch_text(const struct evt_table *t, long col, size_t r) {
  if (col < 0) return;
  const struct evt_cell *c = &t->cols[col].cells[r];
  if (c->type == EVT_STR) __builtin_prefetch(t->text + c->v.off);
}

struct items_ctx {
  struct job *j;
  int depth;
};

/* Items [lo, hi) after the opening bracket: a comma before each but the first. */
static void items_range(void *ctx, struct sink *s, size_t lo, size_t hi) {
  const struct items_ctx *c = ctx;
  for (size_t r = lo; r < hi; r++) {
    if (r + AHEAD < hi) prefetch_text(c->j->t, c->j->id_col, r + AHEAD);
    if (r) puts_(s, ",");
    indent(s, c->depth + 1);
    item_json(c->j, s, r);
  }
}

/* The items array, where the document holds the marker: on two threads
 * when there are enough of them. */
static void write_items(void *ud, int depth) {
  struct items_hook *h = ud;
  struct job *j = h->j;
  if (!j->t->n) return puts_(h->s, "[]");
  puts_(h->s, "[");
  struct items_ctx c = {j, depth};
  struct writer w = {items_range, &c, j->L};
  if (j->t->n >= 2 * BLOCK) write_parallel(&w, h->s, j->t->n);
  else items_range(&c, h->s, 0, j->t->n);
  indent(h->s, depth);
  puts_(h->s, "]");
}

/* What Lua replaced making the spec's texts (columns.lua). */
static size_t replaced_before(lua_State *L, int spec) {
  lua_getfield(L, spec, "replaced");
  lua_Integer n = luaL_optinteger(L, -1, 0);
  lua_pop(L, 1);
  return n > 0 ? (size_t)n : 0;
}

/* json(spec, doc, marker [, path]): the document, its items (the value
 * equal to marker) streamed from the columns. */
static int l_json(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checkany(L, 3);
  const char *path = luaL_optstring(L, 4, NULL);
  struct job j;
  read_job(L, 1, &j);
  prequote(L, &j);
  struct sink *s = sink_open(L, path);
  s->replaced += replaced_before(L, 1);
  struct items_hook h = {&j, s};
  struct evalua_json_out out = {put_cb, s, write_items, &h, 3};
  s->replaced += evalua_json_encode(L, 2, "  ", 0, &out);
  puts_(s, "\n");
  return sink_close(L, s, path);
}

/* ---- CSV ----------------------------------------------------------------------- */

/* Text as UTF-8: each invalid sequence as U+FFFD, counted. */
static void put_utf8(struct sink *s, const char *p, size_t n) {
  size_t start = 0, sub, len;
  for (size_t i = 0; i < n;) {
    if ((unsigned char)p[i] < 0x80) {
      i++;
    } else if ((len = evalua_utf8_valid(p + i, n - i, &sub))) {
      i += len;
    } else {
      put(s, p + start, i - start);
      put(s, "\xEF\xBF\xBD", 3);
      s->replaced++;
      start = i += sub;
    }
  }
  put(s, p + start, n - start);
}

/* A text cell: quoted when it holds a separator, quote or line break; a
 * cell a spreadsheet would run as a formula (= + - @ tab CR first) gets a
 * leading apostrophe (OWASP's advice against CSV injection). */
static void csv_text(struct sink *s, const char *p, size_t n) {
  static const unsigned char as_is[256] = { /* printable ASCII but ',' and '"' */
    [' '] = 1, ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1, ['*'] = 1,
    ['+'] = 1, ['-'] = 1, ['.'] = 1, ['/'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, [':'] = 1, [';'] = 1, ['<'] = 1, ['='] = 1, ['>'] = 1, ['?'] = 1,
    ['@'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
    ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1,
    ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['['] = 1, ['\\'] = 1, [']'] = 1,
    ['^'] = 1, ['_'] = 1, ['`'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
    ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1,
    ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['{'] = 1,
    ['|'] = 1, ['}'] = 1, ['~'] = 1, [0x7f] = 1};
  int formula = n && strchr("=+-@\t\r", p[0]);
  size_t k = 0;
  while (k < n && as_is[(unsigned char)p[k]]) k++;
  if (k == n && !formula) return put(s, p, n); /* most cells: one pass, no quoting, nothing to check */
  int quote = 0;
  for (size_t i = 0; i < n && !quote; i++) quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
  if (!quote) {
    if (formula) put(s, "'", 1);
    return put_utf8(s, p, n);
  }
  put(s, "\"", 1);
  if (formula) put(s, "'", 1);
  size_t start = 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] == '"') put_utf8(s, p + start, i + 1 - start), put(s, "\"", 1), start = i + 1;
  put_utf8(s, p + start, n - start);
  put(s, "\"", 1);
}

/* A text cell from column c (no Lua): nothing for an absent column. */
static void csv_col_text(struct job *j, struct sink *s, size_t r, long c) {
  if (c < 0) return;
  const struct evt_cell *cell = &j->t->cols[c].cells[r];
  char b[40];
  switch (cell->type) {
  case EVT_STR: case EVT_JSON: csv_text(s, j->t->text + cell->v.off, cell->len); break;
  case EVT_INT: put(s, b, (size_t)sprintf(b, "%lld", (long long)cell->v.i)); break;
  case EVT_NUM: number(s, cell->v.d); break;
  case EVT_TRUE: puts_(s, "true"); break;
  case EVT_FALSE: puts_(s, "false"); break;
  default: break;
  }
}

/* What a CSV line needs besides the job: the reason columns, the columns
 * of query and answer, and the system and slice value cells, each made
 * once for the whole report. */
struct csv_ctx {
  struct job *j;
  const size_t *rcol;
  size_t nr;
  long qcol, acol;
  const char *cbase;
  struct qstr *csys, **cval;
};

static struct qstr *csv_all(lua_State *L, struct sink *s, const char *const *names, size_t n) {
  struct qstr *q = lua_newuserdatauv(L, (n + 1) * sizeof *q, 0);
  for (size_t i = 0; i < n; i++) {
    size_t at = s->memlen + s->len, was = s->replaced;
    csv_text(s, names[i], strlen(names[i]));
    q[i] = (struct qstr){at, s->memlen + s->len - at, s->replaced - was};
  }
  return q;
}

static void csv_cells(lua_State *L, struct csv_ctx *c) {
  struct job *j = c->j;
  luaL_checkstack(L, (int)j->ndims + 8, "too many slice dimensions");
  struct sink *s = sink_open(L, NULL);
  c->csys = csv_all(L, s, j->sysname, j->sys->nvalues);
  c->cval = lua_newuserdatauv(L, (j->ndims + 1) * sizeof *c->cval, 0);
  for (size_t k = 0; k < j->ndims; k++) c->cval[k] = csv_all(L, s, j->dval[k], j->dcodes[k]->nvalues);
  flush(s);
  if (s->err) evalua_nomem(L);
  c->cbase = s->mem ? s->mem : "";
}

static void csv_range(void *ctx, struct sink *s, size_t lo, size_t hi) {
  const struct csv_ctx *c = ctx;
  struct job *j = c->j;
  for (size_t r = lo; r < hi; r++) {
    csv_col_text(j, s, r, j->id_col);
    uint32_t code = j->sys->code[r];
    puts_(s, ","), put_q(s, c->cbase, &c->csys[code]);
    for (size_t k = 0; k < j->ndims; k++) puts_(s, ","), put_q(s, c->cbase, &c->cval[k][j->dcodes[k]->code[r]]);
    for (size_t m = 0; m < j->nm; m++) {
      puts_(s, ",");
      if (!j->sc->miss[m][r]) number(s, j->sc->val[m][r]);
    }
    for (size_t m = 0; m < j->nm && j->base; m++) {
      puts_(s, ",");
      if (!j->base->miss[m][r]) number(s, j->base->val[m][r]);
    }
    for (size_t i = 0; i < c->nr; i++) {
      uint32_t w = j->sc->why[c->rcol[i]][r];
      puts_(s, ",");
      if (w) csv_text(s, j->sc->reasons[w], strlen(j->sc->reasons[w]));
      else if (j->sc->miss[c->rcol[i]][r]) puts_(s, "unmeasured");
    }
    puts_(s, ",");
    csv_col_text(j, s, r, c->qcol);
    puts_(s, ",");
    csv_col_text(j, s, r, c->acol);
    puts_(s, "\r\n");
  }
}

/* csv(spec, reason_metrics [, path]): header and one line per row, on two
 * threads when there are enough of them. */
static int l_csv(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE); /* 0-based metric indices with a reason column */
  const char *path = luaL_optstring(L, 3, NULL);
  struct job j;
  read_job(L, 1, &j);
  size_t nr = lua_rawlen(L, 2);
  size_t *rcol = lua_newuserdatauv(L, (nr + 1) * sizeof *rcol, 0);
  for (size_t i = 0; i < nr; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i + 1);
    lua_Integer m = lua_tointeger(L, -1);
    luaL_argcheck(L, m >= 0 && (size_t)m < j.nm, 2, "a metric index from 0");
    rcol[i] = (size_t)m;
    lua_pop(L, 1);
  }
  struct csv_ctx c = {&j, rcol, nr, evt_col_index(j.t, "query", 5), evt_col_index(j.t, "answer", 6), NULL, NULL, NULL};
  csv_cells(L, &c);
  struct sink *s = sink_open(L, path);
  s->replaced += replaced_before(L, 1);
  puts_(s, "id,system");
  for (size_t k = 0; k < j.ndims; k++) puts_(s, ","), csv_text(s, j.dname[k], strlen(j.dname[k]));
  for (size_t m = 0; m < j.nm; m++) puts_(s, ","), csv_text(s, j.mname[m], strlen(j.mname[m]));
  for (size_t m = 0; m < j.nm && j.base; m++)
    puts_(s, ","), csv_text(s, j.mname[m], strlen(j.mname[m])), puts_(s, ".baseline");
  for (size_t i = 0; i < nr; i++) puts_(s, ","), csv_text(s, j.mname[rcol[i]], strlen(j.mname[rcol[i]])), puts_(s, ".reason");
  puts_(s, ",query,answer\r\n");
  struct writer w = {csv_range, &c, L};
  if (j.t->n >= 2 * BLOCK) write_parallel(&w, s, j.t->n);
  else csv_range(&c, s, 0, j.t->n);
  return sink_close(L, s, path);
}

/* ---- the report folder: staged, then put in place at once (stage.h) ------------- */

static int dotted_name(const char *s) { return !*s || !strcmp(s, ".") || !strcmp(s, ".."); }

#define STAGE_MT "evalua.report.stage"

/* dir's real path split into the folder that holds it and its name, with
 * symbolic links resolved (a link to a folder stages beside the folder it
 * names); missing folders above dir are created. A new string, or NULL. */
static char *real_target(const char *dir, char **name) {
  char *real = realpath(dir, NULL);
  struct stat st;
  if (real && (stat(real, &st) || !S_ISDIR(st.st_mode))) {
    free(real);
    errno = ENOTDIR;
    return NULL;
  }
  if (!real && errno == ENOENT) {
    char *copy = strdup(dir), *slash = copy ? strrchr(copy, '/') : NULL;
    if (!copy) return NULL;
    const char *base = slash ? slash + 1 : copy;
    if (slash) *slash = '\0';
    char *up = slash && evalua_make_dir(*copy ? copy : "/") == 0 ? realpath(*copy ? copy : "/", NULL)
             : slash ? NULL : realpath(".", NULL);
    if (up && (real = malloc(strlen(up) + strlen(base) + 2))) sprintf(real, "%s/%s", strcmp(up, "/") ? up : "", base);
    free(up);
    free(copy);
  }
  if (!real) return NULL;
  char *slash = strrchr(real, '/');
  *name = slash + 1;
  return real;
}

static int stage_gc(lua_State *L) {
  evalua_stage_close(luaL_checkudata(L, 1, STAGE_MT));
  return 0;
}

/* A stage of nothing (closed from the start), for tests that walk every type. */
static struct evalua_stage *new_stage(lua_State *L) {
  struct evalua_stage *st = lua_newuserdatauv(L, sizeof *st, 1);
  st->fd = st->parent = -1, st->name[0] = '\0';
  luaL_setmetatable(L, STAGE_MT);
  return st;
}

static int make_stage(lua_State *L) {
  new_stage(L);
  return 1;
}

/* stage(dir) -> stage, path: a staging folder for dir's files (cleaning
 * what dead writers left beside it first); path is where to write them.
 * Closing the stage (or collecting it) removes it unless it was published. */
static int l_stage(lua_State *L) {
  size_t len;
  const char *arg = luaL_checklstring(L, 1, &len);
  while (len > 1 && arg[len - 1] == '/') len--;
  lua_pushlstring(L, arg, len);
  const char *dir = lua_tostring(L, -1);
  struct evalua_stage *st = new_stage(L);
  lua_pushvalue(L, -2);
  lua_setiuservalue(L, -2, 1); /* dir, for publish's messages */
  struct evalua_at at;
  if (evalua_at(L, dir, 1, 1, &at)) return lua_error(L); /* the sandbox's message */
  char *name, *real = real_target(dir, &name);
  int parent = -1, inside = 0;
  if (real) {
    inside = !*name || (at.owned && !strcmp(at.name, ".")); /* "/", or --sandbox's --out itself */
    if (inside) {
      parent = open(*name ? real : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else if (at.owned && strcmp(at.name, name)) {
      errno = EXDEV; /* the sandbox resolved another folder: something moved meanwhile */
    } else {
      name[-1] = '\0'; /* real is now the parent's path ("" for the root) */
      parent = at.owned ? openat(at.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                        : open(*real ? real : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  }
  int e = errno;
  evalua_at_release(&at);
  if (parent < 0 || evalua_stage_open(st, parent, inside ? "." : name, inside)) {
    e = parent < 0 ? e : errno;
    free(real);
    return luaL_error(L, "cannot write %s: %s", dir, strerror(e));
  }
  lua_pushfstring(L, "%s/%s", inside && !*name ? "" : real, st->name);
  free(real);
  return 2;
}

/* stage:publish(files) -> "created" | "exchanged" | "moved" */
static int l_publish(lua_State *L) {
  struct evalua_stage *st = luaL_checkudata(L, 1, STAGE_MT);
  if (st->fd < 0) evalua_closed(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t n = lua_rawlen(L, 2);
  luaL_argcheck(L, n < 4096, 2, "too many files");
  const char **files = lua_newuserdatauv(L, (n + 1) * sizeof *files, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i + 1);
    files[i] = luaL_checkstring(L, -1); /* alive in the list */
    luaL_argcheck(L, !strchr(files[i], '/') && !dotted_name(files[i]), 2, "a file name, not a path");
    lua_pop(L, 1);
  }
  int how = evalua_stage_publish(st, files, n);
  if (how < 0) {
    int e = errno;
    lua_getiuservalue(L, 1, 1);
    return luaL_error(L, "cannot write %s: %s", lua_tostring(L, -1), strerror(e));
  }
  static const char *const names[] = {"", "created", "exchanged", "moved"};
  lua_pushstring(L, names[how]);
  return 1;
}

static int make_sink(lua_State *L) {
  sink_open(L, NULL);
  return 1;
}

int luaopen_evalua_report(lua_State *L) {
  evalua_newclass(L, SINK_MT, make_sink);
  lua_pushcfunction(L, sink_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  evalua_newclass(L, STAGE_MT, make_stage);
  static const luaL_Reg stage_methods[] = {{"publish", l_publish}, {"__gc", stage_gc}, {"__close", stage_gc}, {NULL, NULL}};
  luaL_setfuncs(L, stage_methods, 0);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  static const luaL_Reg funcs[] = {{"json", l_json}, {"csv", l_csv}, {"stage", l_stage}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
