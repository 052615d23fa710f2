/* Libraries opened on first use (see lazy_lib.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "lazy_lib.h"

static pthread_mutex_t opening = PTHREAD_MUTEX_INITIALIZER;

/* The library's handle, opened once under the lock; NULL when it cannot be. */
static void *handle_of(struct lazy_lib *lib) {
  void *h = atomic_load_explicit(&lib->handle, memory_order_acquire);
  if (h || atomic_load(&lib->failed)) return h;
  pthread_mutex_lock(&opening);
  h = atomic_load(&lib->handle);
  if (!h && !atomic_load(&lib->failed)) {
    h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL); /* stays open for the life of the process */
    if (h) {
      atomic_store_explicit(&lib->handle, h, memory_order_release);
    } else {
      const char *e = dlerror();
      fprintf(stderr, "evalua: %s could not be loaded (%s): install %s\n", lib->soname, e ? e : "?", lib->package);
      atomic_store(&lib->failed, 1);
    }
  }
  pthread_mutex_unlock(&opening);
  return h;
}

void *lazy_sym(struct lazy_lib *lib, const char *name) {
  void *h = handle_of(lib);
  if (!h) return NULL;
  void *p = dlsym(h, name);
  if (!p) fprintf(stderr, "evalua: %s has no function %s: install %s\n", lib->soname, name, lib->package);
  return p;
}
