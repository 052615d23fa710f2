/* A shared library opened by the first call into it instead of at start-up
 * (docs/internals.md, "libraries opened on first use"): linked, libxml2 and
 * libmicrohttpd brought ICU and GnuTLS trees that cost every run several
 * milliseconds in the dynamic loader, though only the XML assertions and
 * `evalua view` use them. A *_load.c file defines, with the library's own
 * prototypes (its headers check them), each function evalua calls; each
 * forwards to the library's, found by name on its first call (LAZY_FN).
 * The executable exports none of its symbols, so these never stand in for
 * the library's calls to itself. A function not defined there fails to
 * link: add it. When the library cannot be opened, each call fails as the
 * library's own calls fail (NULL, 0), and the reason is said on stderr
 * once. */
#ifndef EVALUA_LAZY_LIB_H
#define EVALUA_LAZY_LIB_H

#include <stdatomic.h>
#include <string.h>

struct lazy_lib {
  const char *soname;   /* "libxml2.so.2" */
  const char *package;  /* the Debian package that has it, for the message */
  void *_Atomic handle; /* NULL until opened */
  atomic_int failed;
};

/* The address of function name in lib, opening lib first; NULL when either
 * cannot be found (said on stderr, once per library). Any thread. */
void *lazy_sym(struct lazy_lib *lib, const char *name);

/* Defines `ret name params` forwarding `args` to the library's name, or
 * returning fail when it cannot be found. */
#define LAZY_FN(lib, ret, name, params, args, fail)                    \
  ret name params {                                                    \
    static void *_Atomic slot;                                         \
    void *p = atomic_load_explicit(&slot, memory_order_acquire);       \
    if (!p && !(p = lazy_sym(&(lib), #name))) return fail;             \
    atomic_store_explicit(&slot, p, memory_order_release);             \
    ret(*fn) params;                                                   \
    memcpy(&fn, &p, sizeof p);                                         \
    return fn args;                                                    \
  }

/* The same for a function that returns nothing. */
#define LAZY_VOID(lib, name, params, args)                             \
  void name params {                                                   \
    static void *_Atomic slot;                                         \
    void *p = atomic_load_explicit(&slot, memory_order_acquire);       \
    if (!p && !(p = lazy_sym(&(lib), #name))) return;                  \
    atomic_store_explicit(&slot, p, memory_order_release);             \
    void(*fn) params;                                                  \
    memcpy(&fn, &p, sizeof p);                                         \
    fn args;                                                           \
  }

#endif
