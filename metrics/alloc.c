/* The plain allocator (alloc.h). */
#include <stdlib.h>

#include "evalua/alloc.h"

static void *plain(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize) return realloc(ptr, nsize);
  free(ptr);
  return NULL;
}

const struct evm_alloc evm_plain = {plain, NULL};
