/* Shared libraries opened on first use rather than linked, so that a run
 * that never needs one does not pay the dynamic loader for its tree
 * (docs/internals.md, "Libraries on first use"). */
#ifndef EVALUA_LIB_LOAD_H
#define EVALUA_LIB_LOAD_H

#include <stddef.h>

/* A function to find by name; slot is the address of the function
 * pointer that receives it. */
struct lib_fn {
  const char *name;
  void *slot;
};

/* Opens soname ($env_override when set) and fills every slot: 1 when all
 * were found, else 0, with the reason on stderr naming the Debian package
 * to install. Call it once per process (under pthread_once); a library
 * that opened stays open. */
int evalua_lib_open(const char *soname, const char *env_override, const char *package,
                    const struct lib_fn *fns, size_t n);

#endif
