/* Reading a JSONL file into a table (metrics/include/evalua/rows.h), the
 * two halves of a large file on two threads, hashing every byte. */
#ifndef EVALUA_READ_JSONL_H
#define EVALUA_READ_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/rows.h"

/* A row the reader refused: its line and why. */
struct jsonl_skip {
  uint32_t line;
  char *msg;
};

struct jsonl_result {
  char hash[65];             /* SHA-256 of the file's bytes, hex */
  struct jsonl_skip *skips;  /* lenient: the refused rows in line order */
  size_t nskips, capskips;
  struct evm_alloc a;        /* where skips come from */
  int nomem;                 /* the read ran out of memory (err says so too) */
  char err[700];             /* non-empty: the read failed ("PATH:LINE: ..." or a system error) */
};

/* An empty result whose skips come from a. */
void jsonl_result_init(struct jsonl_result *res, const struct evm_alloc *a);
/* Reads the open file fd (named path in messages; closed here) into t
 * (empty on entry), with t's allocator. Strict (lenient = 0): the first bad
 * row, by line, stops the read with err set. Free the result with
 * jsonl_result_free. */
void jsonl_read(int fd, const char *path, struct evt_table *t, const struct evt_schema *sc, int lenient,
                struct jsonl_result *res);
/* Appends a refused row; -1 when out of memory. */
int jsonl_skip_add(struct jsonl_result *res, uint32_t line, const char *msg);
void jsonl_result_free(struct jsonl_result *res);

#endif
