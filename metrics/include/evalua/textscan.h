/* The texts of a run's rows (id, query, answer, contexts), folded and kept
 * in one buffer, each distinct text once, for the viewer's search of what a
 * word index cannot answer: a substring (Chinese and Japanese are written
 * without spaces) or the start of a word too short for the index to be
 * quick (docs/view.md#the-scan). A search is one pass over the buffer per
 * word (SSE2 where there is SSE2, else memmem), then a pass over the rows'
 * references to the texts it hit.
 *
 * Folding (evm_ts_fold) is Unicode's case folding, accents (the combining
 * marks U+0300..U+036F after canonical decomposition) dropped, then NFC:
 * "Müller", "MULLER" and "mu\u0308ller" all fold to "muller"; CJK, kana
 * voicing marks and every other script's marks are kept. */
#ifndef EVALUA_TEXTSCAN_H
#define EVALUA_TEXTSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/alloc.h"

struct evm_textscan;

/* An empty set of rows, allocating from a; NULL when out of memory. */
struct evm_textscan *evm_ts_new(const struct evm_alloc *a);
void evm_ts_free(struct evm_textscan *ts);
/* Bytes held. */
size_t evm_ts_bytes(const struct evm_textscan *ts);
/* Rows, distinct texts, bytes of folded text held. */
void evm_ts_counts(const struct evm_textscan *ts, size_t *rows, size_t *texts, size_t *text_bytes);

/* Opens the next row, named key; its texts follow (evm_ts_text). 0, or -1
 * when out of memory. */
int evm_ts_row(struct evm_textscan *ts, int64_t key);
/* s[0..n) as a text of the open row (folded, kept once). 0 or -1. */
int evm_ts_text(struct evm_textscan *ts, const char *s, size_t n);
/* The row's texts from its JSON object: "query", "answer" and "contexts"
 * (a string, or a list whose strings are texts and whose other elements
 * are their JSON text); any other value of those keys as its JSON text.
 * 0, -1 out of memory, 1 not JSON (err says where). */
int evm_ts_json_row(struct evm_textscan *ts, const char *s, size_t n, char *err, size_t errlen);

/* The texts and rows written to the open file fd, named by key (the run's
 * table and report, as the viewer's cache names them): 0, or -1 with errno. */
int evm_ts_save(const struct evm_textscan *ts, int fd, const char *key, size_t keylen);
/* What evm_ts_save wrote to fd under the same key, checked whole; NULL when
 * the file holds another key, is short or damaged (*nomem 0), or out of
 * memory (*nomem 1). */
struct evm_textscan *evm_ts_load(const struct evm_alloc *a, int fd, const char *key, size_t keylen, int *nomem);

/* s[0..n) folded, at *out (scratch of ts, valid to its next call): its
 * length, or (size_t)-1 when out of memory. */
size_t evm_ts_fold(struct evm_textscan *ts, const char *s, size_t n, const char **out);

/* A word searched for: folded already (evm_ts_fold). word_start: it must
 * begin a word (the code point before it is not a letter or digit), else
 * it may be anywhere in a text. */
struct evm_ts_term {
  const char *s;
  size_t n;
  int word_start;
};

/* The first place in [p, end) of a folded text buffer (text: its start,
 * a NUL; the byte before p readable) where term t starts as it must, or
 * NULL: sixteen places at a time (SSE2) where the build has it, unless
 * portable; a byte at a time (memmem) otherwise. Both are tested against
 * each other and a plain loop (tests/c/test_textscan_find.c). */
const char *evm_ts_first(const char *text, const char *p, const char *end, const struct evm_ts_term *t, int portable);

/* The rows in which every term is in one of the row's texts: their number,
 * or (size_t)-1 when out of memory. Their keys in row order at *keys (ts's
 * memory, valid to the next call), *nkeys of them; or, when smaller and
 * more than half the rows match, the keys of the rows that do not, with
 * *misses set (a filter then passes a short list). A term of length 0 is
 * in every row. */
size_t evm_ts_find(struct evm_textscan *ts, const struct evm_ts_term *terms, size_t nterms, int smaller,
                   const int64_t **keys, size_t *nkeys, int *misses);

#endif
