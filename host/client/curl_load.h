/* libcurl, opened on first use (dlopen) rather than linked: its tree of
 * shared libraries (TLS, HTTP/2, Kerberos, LDAP ...) cost an evalua run that
 * never sends a request several milliseconds of dynamic loading at start-up
 * (docs/internals.md "Start-up"). These are the functions the client uses,
 * with libcurl's own types; the headers still come from libcurl's -dev
 * package, so the types are checked at compile time. */
#ifndef EVALUA_CURL_LOAD_H
#define EVALUA_CURL_LOAD_H

#include <curl/curl.h>

struct curl_fns {
  CURLcode (*global_init)(long flags);
  void (*global_cleanup)(void);
  CURL *(*easy_init)(void);
  void (*easy_reset)(CURL *h);
  void (*easy_cleanup)(CURL *h);
  CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
  CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
  const char *(*easy_strerror)(CURLcode rc);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_cleanup)(CURLM *m);
  CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
  CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
  CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
  CURLMsg *(*multi_info_read)(CURLM *m, int *left);
  CURLMcode (*multi_socket_action)(CURLM *m, curl_socket_t s, int mask, int *running);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
  void (*slist_free_all)(struct curl_slist *list);
  curl_version_info_data *(*version_info)(CURLversion age);
};

/* Opens libcurl once per process (any thread may call it; later calls
 * return the first outcome): the table of its functions, or NULL with *err
 * naming the library and why it could not be opened (static text). */
const struct curl_fns *curl_load(const char **err);

/* The table after a curl_load that succeeded (every caller of curl_api
 * runs behind one: an engine exists only once curl is loaded). */
const struct curl_fns *curl_api(void);

#endif
