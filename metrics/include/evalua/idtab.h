/* A hash table from byte strings to 32-bit values, for interning query ids
 * and for looking documents up within one query. Keys are not copied: the
 * caller keeps them alive. Clearing is O(1) (a generation counter), so one
 * table serves query after query without a memset. */
#ifndef EVALUA_IDTAB_H
#define EVALUA_IDTAB_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/alloc.h"

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
  struct evm_alloc a; /* where slots come from */
};

#include <string.h>

static inline uint64_t evr_load32(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

/* The len (1 to 7) bytes at p as the low bytes of a zero-padded word, from
 * loads that overlap rather than memcpy of a variable length (a call, or a
 * loop, for every key of a TREC file or a data set's documents). */
static inline uint64_t evr_tail_word(const unsigned char *p, size_t len) {
  if (len >= 4) return evr_load32(p) | evr_load32(p + len - 4) << 8 * (len - 4);
  return (uint64_t)p[0] | (uint64_t)p[len / 2] << 8 * (len / 2) | (uint64_t)p[len - 1] << 8 * (len - 1);
}

/* 64-bit multiply-xorshift over 8-byte words: a handful of cycles for the
 * short ids of TREC files, and good enough spread for linear probing. */
static inline uint64_t evr_hash(const char *s, size_t len) {
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
    uint64_t w = evr_tail_word((const unsigned char *)s, len);
    h = (h ^ w) * m;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

/* An empty table taking memory with malloc (evr_idtab_init) or from a. */
void evr_idtab_init(struct evr_idtab *t);
void evr_idtab_init_alloc(struct evr_idtab *t, const struct evm_alloc *a);
/* Gives the slots back; the table is empty again, with the same allocator. */
void evr_idtab_free(struct evr_idtab *t);
void evr_idtab_clear(struct evr_idtab *t);
/* Room for n keys without growing; 0, or -1 when out of memory. */
int evr_idtab_reserve(struct evr_idtab *t, size_t n);
/* The slot holding key, or the empty slot where it would go. For keys of
 * at most 8 bytes evr_hash is a bijection (xor with a constant, odd
 * multiplies and xor-shifts of one zero-padded word), so equal hashes and
 * lengths mean equal keys: no second memory access to compare bytes. */
static inline struct evr_idslot *evr_idtab_probe(const struct evr_idtab *t, uint64_t h, const char *key,
                                                 size_t len) {
  size_t mask = t->cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    struct evr_idslot *s = &t->slots[i];
    if (s->gen != t->gen) return s;
    if (s->hash == h && s->len == len && (len <= 8 || memcmp(s->key, key, len) == 0)) return s;
  }
}

/* The value slot of key, inserting it with value v when absent (*found = 0).
 * NULL when out of memory. */
static inline uint32_t *evr_idtab_put(struct evr_idtab *t, const char *key, size_t len, uint32_t v, int *found) {
  *found = 0;
  if (2 * (t->count + 1) > t->cap && evr_idtab_reserve(t, t->count + 1)) return NULL;
  uint64_t h = evr_hash(key, len);
  struct evr_idslot *s = evr_idtab_probe(t, h, key, len);
  *found = s->gen == t->gen;
  if (!*found) {
    *s = (struct evr_idslot){h, key, (uint32_t)len, t->gen, v};
    t->count++;
  }
  return &s->value;
}

/* The value slot of key, or NULL. */
static inline uint32_t *evr_idtab_get(const struct evr_idtab *t, const char *key, size_t len) {
  if (!t->cap) return NULL;
  struct evr_idslot *s = evr_idtab_probe(t, evr_hash(key, len), key, len);
  return s->gen == t->gen ? &s->value : NULL;
}

#endif
