/* A hash table from byte strings to 32-bit values, for interning query ids
 * and for looking documents up within one query. Keys are not copied: the
 * caller keeps them alive. Clearing is O(1) (a generation counter), so one
 * table serves query after query without a memset. */
#ifndef EVALUA_IDTAB_H
#define EVALUA_IDTAB_H

#include <stddef.h>
#include <stdint.h>

struct evr_idslot {
  uint64_t hash;
  const char *key;
  uint32_t len;
  uint32_t gen; /* the slot is live when gen == table's gen */
  uint32_t value;
};

struct evr_idtab {
  struct evr_idslot *slots;
  size_t cap; /* a power of two, or 0 */
  size_t count;
  uint32_t gen;
};

uint64_t evr_hash(const char *s, size_t len);

void evr_idtab_init(struct evr_idtab *t);
void evr_idtab_free(struct evr_idtab *t);
void evr_idtab_clear(struct evr_idtab *t);
/* Room for n keys without growing; 0, or -1 when out of memory. */
int evr_idtab_reserve(struct evr_idtab *t, size_t n);
/* The value slot of key, inserting it with value v when absent (*found = 0).
 * NULL when out of memory. */
uint32_t *evr_idtab_put(struct evr_idtab *t, const char *key, size_t len, uint32_t v, int *found);
/* The value slot of key, or NULL. */
uint32_t *evr_idtab_get(const struct evr_idtab *t, const char *key, size_t len);

#endif
