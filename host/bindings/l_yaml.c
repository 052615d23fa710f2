/* evalua._yaml: YAML documents (libyaml) as Lua values, for configs and
 * test lists written for other tools (promptfoo's promptfooconfig.yaml).
 *
 *   local v, lines = yaml.decode(text [, name [, {max_bytes =, max_nodes =, max_depth =}]])
 *   -- nil, "name:line:col: message" for YAML that is malformed or too large
 *   yaml.null      -- a null value (the same light userdata as cjson.null)
 *   yaml.array     -- the metatable of every sequence ({__jsontype = "array"})
 *   yaml.limits    -- the default limits
 *
 * lines[t] gives, for every table t of the result, {[0] = line of t,
 * [key] = line of the key (mappings) or of the item (sequences)}, so a
 * later check can say "file:line: key ...". Scalars follow YAML 1.2's core
 * schema, as js-yaml reads them: plain null/~/empty, true/false, integers
 * (decimal, 0o, 0x), floats (.inf, .nan); quoted and block scalars are
 * strings; !!str, !!int, !!float, !!bool, !!null tags are honoured and any
 * other tag is an error. Mapping keys are strings (the key's text, as in
 * JavaScript); a duplicate key is an error; merge keys (<<) are taken.
 * An alias is a copy of its anchor's value, counted node by node against
 * max_nodes, so an alias bomb stops at the limit instead of filling memory;
 * an alias inside its own anchor is refused, so the result has no cycle.
 * One document per text; a second is an error. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <yaml.h>

#include "modules.h"
#include "runtime.h"
#include "udata.h"

#define MAX_BYTES ((lua_Integer)64 << 20)
#define MAX_NODES ((lua_Integer)1000000)
#define MAX_DEPTH 100

#define TAG "tag:yaml.org,2002:"

/* One call's state, in a scratch box so an error frees the parser. The
 * stack indexes are those of the protected call. */
struct ctx {
  yaml_parser_t parser;
  yaml_event_t ev;
  int parser_open, ev_open;
  lua_State *L;
  const char *name;
  lua_Integer nodes, max_nodes;
  int depth, max_depth;
  int anchors, lines, array_mt; /* stack indexes */
};

static void ctx_done(void *p) {
  struct ctx *c = p;
  if (c->ev_open) yaml_event_delete(&c->ev);
  if (c->parser_open) yaml_parser_delete(&c->parser);
  c->ev_open = c->parser_open = 0;
}

/* A YAML problem: raised as {yaml_error = "name:line:col: message"}, which
 * decode returns as nil, message; any other error passes through. */
static int fail(struct ctx *c, yaml_mark_t m, const char *fmt, ...) {
  lua_State *L = c->L;
  va_list ap;
  lua_createtable(L, 0, 1);
  lua_pushfstring(L, "%s:%d:%d: ", c->name, (int)m.line + 1, (int)m.column + 1);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  lua_setfield(L, -2, "yaml_error");
  return lua_error(L);
}

static void parser_fail(struct ctx *c) {
  yaml_parser_t *p = &c->parser;
  if (p->error == YAML_MEMORY_ERROR) evalua_nomem(c->L);
  const char *problem = p->problem ? p->problem : "malformed YAML";
  if (p->context)
    fail(c, p->problem_mark, "%s (%s on line %d)", problem, p->context, (int)p->context_mark.line + 1);
  fail(c, p->problem_mark, "%s", problem);
}

/* The next event in c->ev (the previous one deleted). */
static yaml_event_type_t next(struct ctx *c) {
  if (c->ev_open) yaml_event_delete(&c->ev);
  c->ev_open = 0;
  if (!yaml_parser_parse(&c->parser, &c->ev)) parser_fail(c);
  c->ev_open = 1;
  return c->ev.type;
}

static void count_node(struct ctx *c, yaml_mark_t m) {
  if (++c->nodes > c->max_nodes)
    fail(c, m, "more than %I nodes (max_nodes), aliases expanded: too large a document or an alias bomb",
         c->max_nodes);
}

/* ---- scalars ------------------------------------------------------------- */

static int is_null(const char *s) {
  return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* 1 true, 0 false, -1 neither */
static int bool_of(const char *s) {
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return 1;
  if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return 0;
  return -1;
}

static int all_of(const char *s, const char *set) { return *s && strspn(s, set) == strlen(s); }

/* Pushes the integer s denotes (decimal, 0o, 0x; a double past 64 bits, as
 * JavaScript keeps it); 0 when s is no integer. */
static int push_int(lua_State *L, const char *s) {
  int base = 10;
  const char *digits = s;
  if (s[0] == '0' && s[1] == 'o' && all_of(s + 2, "01234567")) base = 8, digits = s + 2;
  else if (s[0] == '0' && s[1] == 'x' && all_of(s + 2, "0123456789abcdefABCDEF")) base = 16, digits = s + 2;
  else if (!all_of(s + (*s == '-' || *s == '+'), "0123456789")) return 0;
  errno = 0;
  long long v = strtoll(digits, NULL, base);
  if (errno != ERANGE) return lua_pushinteger(L, (lua_Integer)v), 1;
  double d = 0; /* past 64 bits: a double, as JavaScript keeps it */
  if (base == 10) d = strtod(s, NULL);
  else for (const char *p = digits; *p; p++) d = d * base + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
  lua_pushnumber(L, d);
  return 1;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int float_syntax(const char *s) {
  const char *p = s + (*s == '-' || *s == '+');
  size_t whole = strspn(p, "0123456789");
  p += whole;
  if (*p == '.') {
    size_t frac = strspn(p + 1, "0123456789");
    if (!whole && !frac) return 0;
    p += 1 + frac;
  } else if (!whole) {
    return 0;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    p += (*p == '-' || *p == '+');
    size_t exp = strspn(p, "0123456789");
    if (!exp) return 0;
    p += exp;
  }
  return *p == '\0';
}

static int push_float(lua_State *L, const char *s) {
  const char *p = s + (*s == '-' || *s == '+');
  double sign = *s == '-' ? -1.0 : 1.0;
  if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) return lua_pushnumber(L, sign * HUGE_VAL), 1;
  if (p == s && (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))) return lua_pushnumber(L, NAN), 1;
  if (!float_syntax(s)) return 0;
  lua_pushnumber(L, strtod(s, NULL));
  return 1;
}

/* A plain scalar without a tag, by the core schema. */
static void push_plain(lua_State *L, const char *s, size_t len) {
  if (is_null(s)) { lua_pushlightuserdata(L, NULL); return; }
  int b = bool_of(s);
  if (b >= 0) { lua_pushboolean(L, b); return; }
  if (push_int(L, s) || push_float(L, s)) return;
  lua_pushlstring(L, s, len);
}

/* A scalar with an explicit tag. */
static void push_tagged(struct ctx *c, const char *tag, const char *s, size_t len) {
  lua_State *L = c->L;
  yaml_mark_t m = c->ev.start_mark;
  if (!strcmp(tag, "!") || !strcmp(tag, TAG "str")) { lua_pushlstring(L, s, len); return; }
  if (!strcmp(tag, TAG "null")) {
    if (!is_null(s)) fail(c, m, "!!null: '%s' is not null", s);
    lua_pushlightuserdata(L, NULL);
  } else if (!strcmp(tag, TAG "bool")) {
    int b = bool_of(s);
    if (b < 0) fail(c, m, "!!bool: '%s' is not true or false", s);
    lua_pushboolean(L, b);
  } else if (!strcmp(tag, TAG "int")) {
    if (!push_int(L, s)) fail(c, m, "!!int: '%s' is not an integer", s);
  } else if (!strcmp(tag, TAG "float")) {
    if (!push_int(L, s) && !push_float(L, s)) fail(c, m, "!!float: '%s' is not a number", s);
    lua_pushnumber(L, lua_tonumber(L, -1));
    lua_remove(L, -2);
  } else {
    fail(c, m, "unsupported tag '%s%s'", strncmp(tag, TAG, strlen(TAG)) ? "" : "!!", strncmp(tag, TAG, strlen(TAG)) ? tag : tag + strlen(TAG));
  }
}

static void push_scalar(struct ctx *c) {
  yaml_event_t *e = &c->ev;
  const char *s = (const char *)e->data.scalar.value;
  size_t len = e->data.scalar.length;
  if (strlen(s) != len) fail(c, e->start_mark, "a scalar with a NUL character");
  if (e->data.scalar.tag) push_tagged(c, (const char *)e->data.scalar.tag, s, len);
  else if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) push_plain(c->L, s, len);
  else lua_pushlstring(c->L, s, len);
}

/* ---- aliases ------------------------------------------------------------- */

/* Pushes a copy of the table at idx and of its lines, counting its nodes. */
static void copy_table(struct ctx *c, int idx, yaml_mark_t m) {
  lua_State *L = c->L;
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 8, "yaml: alias copy");
  count_node(c, m);
  lua_newtable(L);
  int dst = lua_gettop(L);
  if (lua_getmetatable(L, idx)) lua_setmetatable(L, dst);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      copy_table(c, -1, m);
      lua_remove(L, -2);
    } else {
      count_node(c, m);
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, dst);
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, c->lines) == LUA_TTABLE) { /* lines of a copy: those of the anchor, a copy of them */
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, -3)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
    lua_pushvalue(L, dst);
    lua_insert(L, -2);
    lua_rawset(L, c->lines);
  }
  lua_pop(L, 1);
}

static void push_alias(struct ctx *c) {
  lua_State *L = c->L;
  yaml_mark_t m = c->ev.start_mark;
  const char *anchor = (const char *)c->ev.data.alias.anchor;
  if (lua_getfield(L, c->anchors, anchor) == LUA_TNIL)
    fail(c, m, "alias *%s: no anchor &%s before it (or the alias is inside its own anchor)", anchor, anchor);
  if (lua_type(L, -1) == LUA_TTABLE) {
    copy_table(c, -1, m);
    lua_remove(L, -2);
  } else {
    count_node(c, m);
  }
}

static void keep_anchor(struct ctx *c, const yaml_char_t *anchor) {
  if (!anchor) return;
  lua_pushvalue(c->L, -1);
  lua_setfield(c->L, c->anchors, (const char *)anchor);
}

/* ---- collections ------------------------------------------------------------ */

static void push_node(struct ctx *c);

/* lines[t] = {[0] = line} for the new table on top; leaves that lines table
 * under t, so the stack is: ... lines_of_t t. */
static void new_collection(struct ctx *c, int is_seq) {
  lua_State *L = c->L;
  luaL_checkstack(L, 16, "yaml: nesting");
  if (++c->depth > c->max_depth) fail(c, c->ev.start_mark, "nested deeper than %d levels (max_depth)", c->max_depth);
  count_node(c, c->ev.start_mark);
  lua_newtable(L);
  lua_pushinteger(L, (lua_Integer)c->ev.start_mark.line + 1);
  lua_rawseti(L, -2, 0);
  lua_newtable(L);
  if (is_seq) {
    lua_pushvalue(L, c->array_mt);
    lua_setmetatable(L, -2);
  }
  lua_pushvalue(L, -1);
  lua_pushvalue(L, -3);
  lua_rawset(L, c->lines);
}

static void push_sequence(struct ctx *c) {
  lua_State *L = c->L;
  const yaml_char_t *anchor = c->ev.data.sequence_start.anchor;
  char *name = anchor ? lua_pushstring(L, (const char *)anchor), (char *)lua_tostring(L, -1) : NULL;
  new_collection(c, 1);
  lua_Integer n = 0;
  while (next(c) != YAML_SEQUENCE_END_EVENT) {
    int line = (int)c->ev.start_mark.line + 1;
    push_node(c);
    lua_rawseti(L, -2, ++n);
    lua_pushinteger(L, line);
    lua_rawseti(L, -3, n);
  }
  c->depth--;
  lua_remove(L, -2); /* its lines */
  keep_anchor(c, (const yaml_char_t *)name);
  if (name) lua_remove(L, -2);
}

/* The key's text: a scalar (or an alias to one) as written. */
static void push_key(struct ctx *c) {
  lua_State *L = c->L;
  yaml_event_t *e = &c->ev;
  if (e->type == YAML_SCALAR_EVENT) {
    lua_pushlstring(L, (const char *)e->data.scalar.value, e->data.scalar.length);
    return;
  }
  if (e->type == YAML_ALIAS_EVENT) {
    push_alias(c);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
      lua_pushstring(L, lua_tostring(L, -1));
      lua_remove(L, -2);
      return;
    }
  }
  fail(c, e->start_mark, "a mapping key must be a scalar");
}

/* Sets the pairs of the mapping at src into dst where dst has no such key
 * (merge keys: the mapping's own keys win), marking them in merged. */
static void merge_from(struct ctx *c, int dst, int dst_lines, int merged, int src, yaml_mark_t m) {
  lua_State *L = c->L;
  int is_map = lua_type(L, src) == LUA_TTABLE && !lua_getmetatable(L, src); /* sequences have yaml.array */
  if (!is_map) fail(c, m, "a merge key (<<) takes a mapping or a list of mappings");
  lua_pushnil(L);
  while (lua_next(L, src)) {
    lua_pushvalue(L, -2);
    if (lua_rawget(L, dst) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, dst);
      lua_pushvalue(L, -1);
      lua_pushboolean(L, 1);
      lua_rawset(L, merged);
      lua_pushvalue(L, -1);
      lua_pushinteger(L, (lua_Integer)m.line + 1);
      lua_rawset(L, dst_lines);
    } else {
      lua_pop(L, 2);
    }
  }
}

static void merge(struct ctx *c, int dst, int dst_lines, int merged, yaml_mark_t m) {
  lua_State *L = c->L;
  int v = lua_gettop(L);
  if (lua_type(L, v) == LUA_TTABLE && lua_getmetatable(L, v)) { /* a sequence of mappings: earlier ones win */
    lua_pop(L, 1);
    for (lua_Integer i = 1; lua_rawgeti(L, v, i) != LUA_TNIL; i++) {
      merge_from(c, dst, dst_lines, merged, lua_gettop(L), m);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else {
    merge_from(c, dst, dst_lines, merged, v, m);
  }
  lua_pop(L, 1);
}

/* Stores value (top) under key (below it) in the mapping, refusing a key
 * given twice; a key merged in by << is overridden. */
static void set_pair(struct ctx *c, int map, int map_lines, int merged, yaml_mark_t km) {
  lua_State *L = c->L;
  lua_pushvalue(L, -2);
  if (lua_rawget(L, map) != LUA_TNIL) {
    lua_pushvalue(L, -3);
    int was_merged = lua_rawget(L, merged) != LUA_TNIL;
    lua_pop(L, 1);
    if (!was_merged) {
      lua_pushvalue(L, -3);
      lua_rawget(L, map_lines);
      fail(c, km, "duplicate key '%s' (first on line %d)", lua_tostring(L, -4), (int)lua_tointeger(L, -1));
    }
    lua_pushvalue(L, -3);
    lua_pushnil(L);
    lua_rawset(L, merged);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, -2);
  lua_pushinteger(L, (lua_Integer)km.line + 1);
  lua_rawset(L, map_lines);
  lua_rawset(L, map);
}

static void push_mapping(struct ctx *c) {
  lua_State *L = c->L;
  const yaml_char_t *anchor = c->ev.data.mapping_start.anchor;
  char *name = anchor ? lua_pushstring(L, (const char *)anchor), (char *)lua_tostring(L, -1) : NULL;
  new_collection(c, 0);
  int map = lua_gettop(L), map_lines = map - 1;
  lua_newtable(L); /* keys that came from a merge key */
  int merged = map + 1;
  while (next(c) != YAML_MAPPING_END_EVENT) {
    yaml_mark_t km = c->ev.start_mark;
    int is_merge = c->ev.type == YAML_SCALAR_EVENT && !c->ev.data.scalar.tag
                   && c->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp((char *)c->ev.data.scalar.value, "<<");
    push_key(c);
    next(c);
    push_node(c);
    if (is_merge) {
      lua_remove(L, -2);
      merge(c, map, map_lines, merged, km);
    } else {
      set_pair(c, map, map_lines, merged, km);
    }
  }
  lua_pop(L, 1);
  c->depth--;
  lua_remove(L, -2);
  keep_anchor(c, (const yaml_char_t *)name);
  if (name) lua_remove(L, -2);
}

/* Pushes the value of the node whose first event is in c->ev. */
static void push_node(struct ctx *c) {
  switch (c->ev.type) {
  case YAML_SCALAR_EVENT: {
    count_node(c, c->ev.start_mark);
    luaL_checkstack(c->L, 4, "yaml");
    const yaml_char_t *anchor = c->ev.data.scalar.anchor;
    push_scalar(c);
    keep_anchor(c, anchor);
    return;
  }
  case YAML_ALIAS_EVENT: push_alias(c); return;
  case YAML_SEQUENCE_START_EVENT: push_sequence(c); return;
  case YAML_MAPPING_START_EVENT: push_mapping(c); return;
  default: fail(c, c->ev.start_mark, "unexpected YAML event %d", (int)c->ev.type);
  }
}

/* ---- decode ------------------------------------------------------------- */

/* (text, name, max_nodes, max_depth, array_mt) -> value, lines */
static int decode_protected(lua_State *L) {
  size_t len;
  const char *text = lua_tolstring(L, 1, &len);
  struct ctx *c = evalua_scratch(L, sizeof *c, ctx_done); /* index 6 */
  c->L = L;
  c->name = lua_tostring(L, 2);
  c->max_nodes = lua_tointeger(L, 3);
  c->max_depth = (int)lua_tointeger(L, 4);
  c->array_mt = 5;
  lua_newtable(L);
  c->anchors = lua_gettop(L);
  lua_newtable(L);
  c->lines = lua_gettop(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, c->lines);
  if (!yaml_parser_initialize(&c->parser)) return evalua_nomem(L);
  c->parser_open = 1;
  yaml_parser_set_input_string(&c->parser, (const unsigned char *)text, len);
  if (next(c) != YAML_STREAM_START_EVENT) fail(c, c->ev.start_mark, "expected the start of a YAML stream");
  if (next(c) == YAML_STREAM_END_EVENT) { /* an empty text: null, as js-yaml gives */
    lua_pushlightuserdata(L, NULL);
  } else {
    next(c);
    push_node(c);
    if (next(c) != YAML_DOCUMENT_END_EVENT) fail(c, c->ev.start_mark, "expected the end of the document");
    if (next(c) != YAML_STREAM_END_EVENT)
      fail(c, c->ev.start_mark, "a second YAML document: one document is expected");
  }
  lua_pushvalue(L, c->lines);
  return 2;
}

static lua_Integer opt_limit(lua_State *L, const char *key, lua_Integer def, lua_Integer max) {
  if (lua_isnoneornil(L, 3)) return def;
  lua_getfield(L, 3, key);
  if (lua_isnil(L, -1)) return lua_pop(L, 1), def;
  int ok;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < 1 || v > max) luaL_error(L, "yaml.decode: %s must be a whole number from 1 to %I", key, max);
  lua_pop(L, 1);
  return v;
}

static void check_option_keys(lua_State *L) {
  if (lua_isnoneornil(L, 3)) return;
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, 3)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    if (strcmp(k, "max_bytes") && strcmp(k, "max_nodes") && strcmp(k, "max_depth"))
      luaL_error(L, "yaml.decode: unknown option '%s' (max_bytes, max_nodes, max_depth)", luaL_tolstring(L, -2, NULL));
    lua_pop(L, 1);
  }
}

static int l_decode(lua_State *L) {
  size_t len;
  luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "(yaml)");
  check_option_keys(L);
  lua_Integer max_bytes = opt_limit(L, "max_bytes", MAX_BYTES, (lua_Integer)1 << 40);
  lua_Integer max_nodes = opt_limit(L, "max_nodes", MAX_NODES, (lua_Integer)1 << 40);
  lua_Integer max_depth = opt_limit(L, "max_depth", MAX_DEPTH, 1000);
  if ((uint64_t)len > (uint64_t)max_bytes) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %I bytes, more than the limit of %I (max_bytes)", name, (lua_Integer)len, max_bytes);
    return 2;
  }
  lua_pushcfunction(L, decode_protected);
  lua_pushvalue(L, 1);
  lua_pushstring(L, name);
  lua_pushinteger(L, max_nodes);
  lua_pushinteger(L, max_depth);
  lua_pushvalue(L, lua_upvalueindex(1));
  int status = lua_pcall(L, 5, 2, 0);
  if (status == LUA_OK) return 2;
  if (status == LUA_ERRRUN && lua_type(L, -1) == LUA_TTABLE) {
    if (lua_getfield(L, -1, "yaml_error") == LUA_TSTRING) {
      luaL_pushfail(L);
      lua_insert(L, -2);
      return 2;
    }
    lua_pop(L, 1); /* not ours: the original error */
  }
  return lua_error(L);
}

int luaopen_evalua_yaml(lua_State *L) {
  lua_createtable(L, 0, 4);
  lua_createtable(L, 0, 1); /* yaml.array, shared with decode */
  lua_pushliteral(L, "array");
  lua_setfield(L, -2, "__jsontype");
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "array");
  lua_pushcclosure(L, l_decode, 1);
  lua_setfield(L, -2, "decode");
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, MAX_BYTES);
  lua_setfield(L, -2, "max_bytes");
  lua_pushinteger(L, MAX_NODES);
  lua_setfield(L, -2, "max_nodes");
  lua_pushinteger(L, MAX_DEPTH);
  lua_setfield(L, -2, "max_depth");
  lua_setfield(L, -2, "limits");
  return 1;
}
