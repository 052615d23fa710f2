/* evalua._xml: libxml2's parsers for the is-xml, contains-xml and is-html
 * assertions.
 *
 *   xml.check(text) -> paths          -- well-formed: the element paths ("root.item.name", "root.item.1.name")
 *                   -> nil, why, line -- libxml2's first error and its line
 *   xml.html(text) -> {elements =, unknown =, text_outside =, first =}
 *                                     -- libxml2's HTML parser: known and unknown elements,
 *                                     -- whether text stands outside every element
 *   xml.max_bytes                     -- the longest text read
 *
 * Neither parser reads the network, loads a DTD or substitutes entities, so
 * a document cannot make the run fetch or read a file. libxml2 allocates
 * with its own (process-wide) allocator, outside --mem-limit: the input is
 * bounded by max_bytes instead, and each tree is freed before returning. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "xml_load.h"
#include <lauxlib.h>

#include "modules.h"

#define MAX_BYTES (16u << 20)
#define MAX_PATHS 10000
#define PATH_CHARS 1024

static const char *checked_text(lua_State *L, size_t *len) {
  const char *s = luaL_checklstring(L, 1, len);
  luaL_argcheck(L, *len <= MAX_BYTES, 1, "text longer than xml.max_bytes");
  return s;
}

static void push_path(lua_State *L, const char *buf, size_t len, int *count) {
  if (*count >= MAX_PATHS) return;
  lua_pushlstring(L, buf, len);
  lua_rawseti(L, -2, ++*count);
}

/* Same-named element siblings of n (n included), and n's place among them. */
static int siblings(xmlNode *n, int *place) {
  int total = 0;
  *place = 0;
  for (xmlNode *m = n->parent ? n->parent->children : n; m; m = m->next) {
    if (m->type != XML_ELEMENT_NODE || strcmp((const char *)m->name, (const char *)n->name)) continue;
    if (m == n) *place = total;
    total++;
  }
  return total;
}

/* Every element's dotted path, depth first, as promptfoo's parser names
 * them: "root.item.name"; where a name repeats among siblings, the list
 * ("root.item") and each item by index ("root.item.1.name"). */
static void add_paths(lua_State *L, xmlNode *n, char *buf, size_t used, int *count) {
  for (; n && *count < MAX_PATHS; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    const char *name = (const char *)n->name;
    size_t len = strlen(name), at = used;
    if (used + len + 16 >= PATH_CHARS) continue; /* too deep to name: left out */
    if (used) buf[at++] = '.';
    memcpy(buf + at, name, len + 1);
    size_t end = at + len;
    int place, total = siblings(n, &place);
    push_path(L, buf, end, count);
    if (total > 1) end += (size_t)snprintf(buf + end, PATH_CHARS - end, ".%d", place), push_path(L, buf, end, count);
    add_paths(L, n->children, buf, end, count);
    buf[used] = '\0';
  }
}

/* XML wants a space between DOCTYPE and the name; libxml2 2.9 lets
 * "<!DOCTYPEroot>" through. */
static int doctype_unspaced(const char *s, size_t len, int *line) {
  const char *p = memmem(s, len, "<!DOCTYPE", 9);
  if (!p || (size_t)(p - s) + 9 >= len) return 0;
  char c = p[9];
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return 0;
  *line = 1;
  for (const char *q = s; q < p; q++) *line += *q == '\n';
  return 1;
}

static int l_check(lua_State *L) {
  size_t len;
  const char *s = checked_text(L, &len);
  int dline = 0;
  if (doctype_unspaced(s, len, &dline)) {
    lua_pushnil(L);
    lua_pushliteral(L, "a space must follow <!DOCTYPE");
    lua_pushinteger(L, dline);
    return 3;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) return luaL_error(L, "xml: out of memory");
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, s, (int)len, NULL, "UTF-8",
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc || !ctxt->wellFormed) {
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    char why[512];
    int line = e ? e->line : 0;
    snprintf(why, sizeof why, "%s", e && e->message ? e->message : "not well-formed");
    size_t n = strlen(why);
    while (n && (why[n - 1] == '\n' || why[n - 1] == ' ')) why[--n] = '\0';
    if (doc) xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    lua_pushnil(L);
    lua_pushstring(L, why);
    lua_pushinteger(L, line);
    return 3;
  }
  char buf[PATH_CHARS] = "";
  int count = 0;
  lua_createtable(L, 8, 0);
  add_paths(L, xmlDocGetRootElement(doc), buf, 0, &count);
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(ctxt);
  return 1;
}

struct html_count {
  int known, unknown, text_outside;
  const char *first;
};

/* Elements the parser made up (html, head and body around a fragment, a p
 * around stray text) are not the output's own: an element counts when the
 * text opens it ("<name"). */
/* Whether the text opens the element itself: "<name" then a space, "/" or
 * ">" ("a<b) c>d" is code, though the parser makes a b element of it). */
static int has_tag(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = text; (p = strchr(p, '<')) != NULL; p++) {
    if (strncasecmp(p + 1, name, len)) continue;
    char c = p[1 + len];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' || c == '>') return 1;
  }
  return 0;
}

static void html_walk(xmlNode *n, const char *text, int in_own, struct html_count *c) {
  for (; n; n = n->next) {
    if (n->type == XML_TEXT_NODE && !in_own) {
      for (const xmlChar *p = n->content; p && *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') { c->text_outside = 1; break; }
    }
    if (n->type != XML_ELEMENT_NODE) continue;
    const char *name = (const char *)n->name;
    int implied = !has_tag(text, name);
    if (!implied) {
      if (htmlTagLookup(n->name)) c->known++; else c->unknown++;
      if (!c->first) c->first = name;
    }
    html_walk(n->children, text, in_own || !implied, c);
  }
}

static int l_html(lua_State *L) {
  size_t len;
  const char *s = checked_text(L, &len);
  htmlDocPtr doc = htmlReadMemory(s, (int)len, NULL, "UTF-8",
                                  HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
  struct html_count c = {0, 0, 0, NULL};
  if (doc) html_walk(xmlDocGetRootElement(doc), s, 0, &c);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, c.known);
  lua_setfield(L, -2, "elements");
  lua_pushinteger(L, c.unknown);
  lua_setfield(L, -2, "unknown");
  lua_pushboolean(L, c.text_outside);
  lua_setfield(L, -2, "text_outside");
  if (c.first) {
    lua_pushstring(L, c.first);
    lua_setfield(L, -2, "first");
  }
  if (doc) xmlFreeDoc(doc);
  return 1;
}

static const luaL_Reg funcs[] = {{"check", l_check}, {"html", l_html}, {NULL, NULL}};

int luaopen_evalua_xml(lua_State *L) {
  if (!evalua_xml_load()) return luaL_error(L, "evalua._xml: libxml2 could not be loaded (the reason is above)");
  xmlInitParser();
  luaL_newlib(L, funcs);
  lua_pushinteger(L, MAX_BYTES);
  lua_setfield(L, -2, "max_bytes");
  return 1;
}
