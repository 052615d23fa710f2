/* Open-addressing string table with linear probing (see idtab.h). */
#include <stdlib.h>
#include <string.h>

#include "evalua/idtab.h"

void evr_idtab_init(struct evr_idtab *t) { evr_idtab_init_alloc(t, &evm_plain); }

void evr_idtab_init_alloc(struct evr_idtab *t, const struct evm_alloc *a) {
  memset(t, 0, sizeof *t);
  t->gen = 1;
  t->a = *a;
}

void evr_idtab_free(struct evr_idtab *t) {
  const struct evm_alloc a = t->a;
  evm_free(&a, t->slots, t->cap, sizeof *t->slots);
  evr_idtab_init_alloc(t, &a);
}

void evr_idtab_clear(struct evr_idtab *t) {
  t->count = 0;
  if (++t->gen == 0) { /* wrapped: stale generations could look live */
    if (t->slots) memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->gen = 1;
  }
}

static int grow(struct evr_idtab *t, size_t cap) {
  struct evr_idslot *old = t->slots;
  size_t old_cap = t->cap;
  uint32_t old_gen = t->gen;
  t->slots = evm_new(&t->a, cap, sizeof *t->slots);
  if (!t->slots) {
    t->slots = old;
    return -1;
  }
  memset(t->slots, 0, cap * sizeof *t->slots);
  t->cap = cap;
  t->gen = 1;
  for (size_t i = 0; i < old_cap; i++) {
    if (old[i].gen != old_gen) continue;
    struct evr_idslot *s = evr_idtab_probe(t, old[i].hash, old[i].key, old[i].len);
    *s = old[i];
    s->gen = 1;
  }
  evm_free(&t->a, old, old_cap, sizeof *old);
  return 0;
}

int evr_idtab_reserve(struct evr_idtab *t, size_t n) {
  size_t cap = t->cap ? t->cap : 16;
  if (n > SIZE_MAX / 4 / sizeof *t->slots) return -1;
  while (cap < 2 * n) cap *= 2; /* load factor at most 1/2 */
  return cap == t->cap ? 0 : grow(t, cap);
}
