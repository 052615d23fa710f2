/* libcurl opened on first use (see curl_load.h). The table is filled once
 * under pthread_once and only read afterwards, so the process-wide state is
 * immutable once any engine can see it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curl_load.h"

#ifndef EVALUA_LIBCURL
#define EVALUA_LIBCURL "libcurl.so.4" /* libcurl's soname since 7.16 (2006) */
#endif

static struct curl_fns fns;
static const struct curl_fns *loaded;
static char why[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define FIND(field, name)                                              \
  do {                                                                 \
    void *p = dlsym(lib, sym = name);                                  \
    if (!p) goto missing;                                              \
    memcpy(&fns.field, &p, sizeof p);                                  \
  } while (0)

static void open_curl(void) {
  const char *sym = NULL, *name = getenv("EVALUA_LIBCURL"); /* docs/judge.md */
  if (!name || !*name) name = EVALUA_LIBCURL;
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "libcurl could not be loaded (%s); the HTTP client (judges, providers, "
             "--notify) needs it: install libcurl4 (Debian: apt-get install libcurl4)", e ? e : name);
    return;
  }
  FIND(global_init, "curl_global_init");
  FIND(global_cleanup, "curl_global_cleanup");
  FIND(easy_init, "curl_easy_init");
  FIND(easy_reset, "curl_easy_reset");
  FIND(easy_cleanup, "curl_easy_cleanup");
  FIND(easy_setopt, "curl_easy_setopt");
  FIND(easy_getinfo, "curl_easy_getinfo");
  FIND(easy_strerror, "curl_easy_strerror");
  FIND(multi_init, "curl_multi_init");
  FIND(multi_cleanup, "curl_multi_cleanup");
  FIND(multi_setopt, "curl_multi_setopt");
  FIND(multi_add_handle, "curl_multi_add_handle");
  FIND(multi_remove_handle, "curl_multi_remove_handle");
  FIND(multi_info_read, "curl_multi_info_read");
  FIND(multi_socket_action, "curl_multi_socket_action");
  FIND(slist_append, "curl_slist_append");
  FIND(slist_free_all, "curl_slist_free_all");
  FIND(version_info, "curl_version_info");
  loaded = &fns; /* the library stays open for the life of the process */
  return;
missing:
  snprintf(why, sizeof why, "libcurl could not be used: %s has no function %s (libcurl %s or newer is needed)",
           name, sym, LIBCURL_VERSION);
  dlclose(lib);
}

const struct curl_fns *curl_load(const char **err) {
  pthread_once(&once, open_curl);
  if (!loaded && err) *err = why;
  return loaded;
}

const struct curl_fns *curl_api(void) { return loaded; }
