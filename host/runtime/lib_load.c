/* Shared libraries opened on first use (lib_load.h). */
#include "lib_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int evalua_lib_open(const char *soname, const char *env_override, const char *package,
                    const struct lib_fn *fns, size_t n) {
  const char *path = env_override ? getenv(env_override) : NULL;
  if (!path || !*path) path = soname;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    fprintf(stderr, "evalua: %s could not be loaded (%s): install %s\n", soname, e ? e : path, package);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(lib, fns[i].name);
    if (!p) {
      fprintf(stderr, "evalua: %s has no function %s: install %s\n", path, fns[i].name, package);
      dlclose(lib);
      return 0;
    }
    memcpy(fns[i].slot, &p, sizeof p); /* POSIX: a function's address through void * */
  }
  return 1;
}
