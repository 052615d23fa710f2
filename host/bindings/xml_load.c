/* libxml2 opened on first use, not linked: its tree (ICU, libstdc++,
 * liblzma) cost every run the dynamic loader's time, though only the
 * is-xml, contains-xml and is-html assertions parse with it. This file
 * defines the libxml2 functions l_xml.c calls, with libxml2's own
 * prototypes (the headers check them), each forwarding to the library
 * that evalua_xml_load() opened; luaopen_evalua_xml calls that first and
 * raises when the library is missing, so no forwarder runs unloaded. A call
 * to another libxml2 function fails to link: add it here. */
#include <pthread.h>

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "lib_load.h"
#include "xml_load.h"

static struct {
  void (*init)(void);
  xmlParserCtxtPtr (*new_ctxt)(void);
  xmlDocPtr (*ctxt_read)(xmlParserCtxtPtr, const char *, int, const char *, const char *, int);
  xmlErrorPtr (*last_error)(void *);
  void (*free_doc)(xmlDocPtr);
  void (*free_ctxt)(xmlParserCtxtPtr);
  xmlNodePtr (*root)(const xmlDoc *);
  htmlDocPtr (*html_read)(const char *, int, const char *, const char *, int);
  const htmlElemDesc *(*tag_lookup)(const xmlChar *);
} fns;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_xml(void) {
  const struct lib_fn want[] = {
      {"xmlInitParser", &fns.init},         {"xmlNewParserCtxt", &fns.new_ctxt},
      {"xmlCtxtReadMemory", &fns.ctxt_read}, {"xmlCtxtGetLastError", &fns.last_error},
      {"xmlFreeDoc", &fns.free_doc},         {"xmlFreeParserCtxt", &fns.free_ctxt},
      {"xmlDocGetRootElement", &fns.root},   {"htmlReadMemory", &fns.html_read},
      {"htmlTagLookup", &fns.tag_lookup},
  };
  ready = evalua_lib_open("libxml2.so.2", NULL, "libxml2", want, sizeof want / sizeof *want);
}

int evalua_xml_load(void) {
  pthread_once(&once, open_xml);
  return ready;
}

void xmlInitParser(void) { fns.init(); }
xmlParserCtxtPtr xmlNewParserCtxt(void) { return fns.new_ctxt(); }
xmlDocPtr xmlCtxtReadMemory(xmlParserCtxtPtr ctxt, const char *buffer, int size, const char *URL,
                            const char *encoding, int options) {
  return fns.ctxt_read(ctxt, buffer, size, URL, encoding, options);
}
xmlErrorPtr xmlCtxtGetLastError(void *ctx) { return fns.last_error(ctx); }
void xmlFreeDoc(xmlDocPtr cur) { fns.free_doc(cur); }
void xmlFreeParserCtxt(xmlParserCtxtPtr ctxt) { fns.free_ctxt(ctxt); }
xmlNodePtr xmlDocGetRootElement(const xmlDoc *doc) { return fns.root(doc); }
htmlDocPtr htmlReadMemory(const char *buffer, int size, const char *URL, const char *encoding, int options) {
  return fns.html_read(buffer, size, URL, encoding, options);
}
const htmlElemDesc *htmlTagLookup(const xmlChar *tag) { return fns.tag_lookup(tag); }
