/* Where a data structure of metrics/ takes its memory from: a function with
 * lua_Alloc's contract, (ud, ptr, osize, nsize): nsize 0 frees ptr (of
 * osize bytes), anything else is a realloc of ptr from osize to nsize
 * bytes that returns NULL, leaving ptr as it was, when it cannot. A host
 * that caps memory gives the structures its own counted allocator (evalua
 * counts them against --mem-limit, host/runtime/state.c); evm_plain is malloc.
 * Sizes are exact, since a counting allocator adds and subtracts them. */
#ifndef EVALUA_ALLOC_H
#define EVALUA_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef void *(*evm_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

struct evm_alloc {
  evm_alloc_fn fn;
  void *ud;
};

/* malloc, realloc and free. */
extern const struct evm_alloc evm_plain;

/* p (n items of size bytes) resized to m items: NULL when the product
 * overflows, when m is 0, or when out of memory (p is then unchanged). */
static inline void *evm_resize(const struct evm_alloc *a, void *p, size_t n, size_t m, size_t size) {
  if (!m || m > SIZE_MAX / size) return NULL;
  return a->fn(a->ud, p, p ? n * size : 0, m * size);
}

static inline void *evm_new(const struct evm_alloc *a, size_t n, size_t size) {
  return evm_resize(a, NULL, 0, n, size);
}

/* p, of n items of size bytes, given back; NULL does nothing. */
static inline void evm_free(const struct evm_alloc *a, void *p, size_t n, size_t size) {
  if (p) a->fn(a->ud, p, n * size, 0);
}

#endif
