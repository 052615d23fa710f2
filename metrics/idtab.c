/* Open-addressing string table with linear probing (see idtab.h). */
#include <stdlib.h>
#include <string.h>

#include "evalua/idtab.h"

/* 64-bit multiply-xorshift over 8-byte words: a handful of cycles for the
 * short ids of TREC files, and good enough spread for linear probing. */
uint64_t evr_hash(const char *s, size_t len) {
  const uint64_t m = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x243F6A8885A308D3ull ^ (len * m);
  while (len >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * m;
    h ^= h >> 29;
    s += 8, len -= 8;
  }
  if (len) {
    uint64_t w = 0;
    memcpy(&w, s, len);
    h = (h ^ w) * m;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

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

static struct evr_idslot *probe(const struct evr_idtab *t, uint64_t h, const char *key, size_t len) {
  size_t mask = t->cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    struct evr_idslot *s = &t->slots[i];
    if (s->gen != t->gen) return s;
    if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) return s;
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
    struct evr_idslot *s = probe(t, old[i].hash, old[i].key, old[i].len);
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

uint32_t *evr_idtab_put(struct evr_idtab *t, const char *key, size_t len, uint32_t v, int *found) {
  if (evr_idtab_reserve(t, t->count + 1)) return NULL;
  uint64_t h = evr_hash(key, len);
  struct evr_idslot *s = probe(t, h, key, len);
  *found = s->gen == t->gen;
  if (!*found) {
    *s = (struct evr_idslot){h, key, (uint32_t)len, t->gen, v};
    t->count++;
  }
  return &s->value;
}

uint32_t *evr_idtab_get(const struct evr_idtab *t, const char *key, size_t len) {
  if (!t->cap) return NULL;
  struct evr_idslot *s = probe(t, evr_hash(key, len), key, len);
  return s->gen == t->gen ? &s->value : NULL;
}
