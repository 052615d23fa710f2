/* Open-addressing string table with linear probing (see idtab.h). */
#include <stdlib.h>
#include <string.h>

#include "evalua/idtab.h"

void evr_idtab_init(struct evr_idtab *t) {
  memset(t, 0, sizeof *t);
  t->gen = 1;
}

void evr_idtab_free(struct evr_idtab *t) {
  free(t->slots);
  evr_idtab_init(t);
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
  t->slots = calloc(cap, sizeof *t->slots);
  if (!t->slots) {
    t->slots = old;
    return -1;
  }
  t->cap = cap;
  t->gen = 1;
  for (size_t i = 0; i < old_cap; i++) {
    if (old[i].gen != old_gen) continue;
    struct evr_idslot *s = evr_idtab_probe(t, old[i].hash, old[i].key, old[i].len);
    *s = old[i];
    s->gen = 1;
  }
  free(old);
  return 0;
}

int evr_idtab_reserve(struct evr_idtab *t, size_t n) {
  size_t cap = t->cap ? t->cap : 16;
  while (cap < 2 * n) cap *= 2; /* load factor at most 1/2 */
  return cap == t->cap ? 0 : grow(t, cap);
}
