/* libxml2 opened on first use (lazy_lib.h): the functions the XML and HTML
 * assertions call (host/bindings/l_xml.c). Linked, libxml2 and the ICU it
 * needs cost every run about 2.6 ms of CPU at start-up. */
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "lazy_lib.h"
#include "xml_load.h"

static struct lazy_lib xml2 = {.soname = "libxml2.so.2", .package = "libxml2"};

LAZY_VOID(xml2, xmlInitParser, (void), ())
LAZY_FN(xml2, xmlParserCtxtPtr, xmlNewParserCtxt, (void), (), NULL)
LAZY_VOID(xml2, xmlFreeParserCtxt, (xmlParserCtxtPtr ctxt), (ctxt))
LAZY_FN(xml2, xmlDocPtr, xmlCtxtReadMemory,
        (xmlParserCtxtPtr ctxt, const char *buffer, int size, const char *URL, const char *encoding, int options),
        (ctxt, buffer, size, URL, encoding, options), NULL)
LAZY_FN(xml2, xmlErrorPtr, xmlCtxtGetLastError, (void *ctx), (ctx), NULL)
LAZY_FN(xml2, xmlNodePtr, xmlDocGetRootElement, (const xmlDoc *doc), (doc), NULL)
LAZY_VOID(xml2, xmlFreeDoc, (xmlDocPtr cur), (cur))
LAZY_FN(xml2, htmlDocPtr, htmlReadMemory,
        (const char *buffer, int size, const char *URL, const char *encoding, int options),
        (buffer, size, URL, encoding, options), NULL)
LAZY_FN(xml2, const htmlElemDesc *, htmlTagLookup, (const xmlChar *tag), (tag), NULL)

int evalua_xml_load(void) { return lazy_sym(&xml2, "xmlInitParser") != NULL; }
