/* The http(s) URLs the judge engine sends to: split, normalised, joined
 * with a request path that may not leave the base URL's path, compared by
 * prefix, and stripped of credentials for anything shown. Plain C, no Lua.
 *
 * Normal form (RFC 3986 section 6.2.2): scheme and host in lower case, the
 * default port (80, 443) dropped, percent-encoded unreserved characters
 * decoded (so %2e is a dot), other percent-encodings in upper case, and
 * the "." and ".." segments of the path resolved. */
#ifndef EVALUA_URL_H
#define EVALUA_URL_H

#include <stddef.h>

/* The parts of an http:// or https:// URL, as pointers into its text. */
struct url {
  const char *scheme, *userinfo, *host, *path, *query; /* userinfo, query: NULL when absent */
  size_t scheme_len, userinfo_len, host_len, path_len, query_len;
};

/* 0, or -1 when s is not an http:// or https:// URL with a host. */
int url_split(const char *s, struct url *u);

/* s in normal form, malloc'd: "scheme://host[:port]/path", with the
 * userinfo ("user:password@") only when with_userinfo, and "?query" only
 * when with_query. NULL when s is no URL or memory runs out. */
char *url_normal(const char *s, int with_userinfo, int with_query);

/* The URL a request for path goes to, malloc'd: the base URL's path with
 * path ("/chat/completions"; "" for the base URL itself) appended and
 * normalised, then the base's query (and path's own, after '?'). NULL with
 * errno = EACCES when the result would leave the base's path ("/../x",
 * "/%2e%2e/x"), EINVAL when path does not start with '/' or holds what a
 * server may read as a separator or that cannot be sent (an encoded slash
 * or backslash, a backslash, '#', a space or control character), ENOMEM. */
char *url_request(const char *base, const char *path);

/* Whether url is prefix itself or below it: same scheme, host and port,
 * path equal or under prefix's path at a '/' boundary, and prefix's query
 * (if any) the same. Both are normalised first; userinfo is not compared. */
int url_under(const char *url, const char *prefix);

/* Whether a and b are the same URL in normal form, userinfo aside (a
 * trailing '/' of the path aside too). */
int url_same(const char *a, const char *b);

/* The userinfo of s percent-decoded ("user:password"), malloc'd; NULL when
 * s has none or memory runs out. */
char *url_userinfo(const char *s);

#endif
