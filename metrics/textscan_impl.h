/* The parts of struct evm_textscan (evalua/textscan.h) shared by
 * textscan.c (texts, search) and textscan_row.c (a row's JSON). */
#ifndef EVALUA_TEXTSCAN_IMPL_H
#define EVALUA_TEXTSCAN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <utf8proc.h>

#include "evalua/alloc.h"

struct evm_textscan {
  struct evm_alloc a;
  char *text;           /* the distinct folded texts, each followed by NUL */
  size_t len, cap_text;
  uint64_t *start;      /* start[j]: text j's offset; start[nstr]: len */
  uint32_t *hash;       /* of each text (cap_start of them) */
  size_t nstr, cap_start;
  uint32_t *slot;       /* open addressing: text number + 1, 0 free */
  size_t nslot;
  uint64_t *first;      /* row r's references: ref[first[r] .. first[r + 1]) */
  int64_t *key;         /* row r's key (cap_first of them) */
  size_t nrow, cap_first;
  uint32_t *ref;
  size_t nref, cap_ref;
  char *scratch;        /* a folded text, a decoded JSON string */
  size_t cap_scratch;
  utf8proc_int32_t *cp;
  size_t cap_cp;
  char *raw;            /* a JSON string decoded, before folding */
  size_t cap_raw;
  uint8_t *hit, *ok;    /* a search's marks: per text, per row */
  size_t cap_hit, cap_ok;
  int64_t *out;
  size_t cap_out;
};

/* *pp (*cap items of size bytes) grown to hold need items; 0, or -1 out of memory. */
int evm_ts_grow(const struct evm_alloc *a, void *pp, size_t *cap, size_t need, size_t size);

#endif
