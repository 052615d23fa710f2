/* libxml2 opened on first use (xml_load.c). */
#ifndef EVALUA_XML_LOAD_H
#define EVALUA_XML_LOAD_H

/* 1 once libxml2 is open (the first call opens it), else 0 with the
 * reason said on stderr. */
int evalua_xml_load(void);

#endif
