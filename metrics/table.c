/* The columnar data set: growth, and rows taken back whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "evalua/table.h"

const char *const evt_list_names[EVT_NLISTS] = {"retrieved", "gold_doc_ids", "graded_relevance",
                                                "gold_answers", "contexts"};

void evt_init(struct evt_table *t) { evt_init_alloc(t, &evm_plain); }

void evt_init_alloc(struct evt_table *t, const struct evm_alloc *a) {
  memset(t, 0, sizeof *t);
  t->a = *a;
}

void evt_free(struct evt_table *t) {
  const struct evm_alloc a = t->a;
  evm_free(&a, t->line, t->line_cap, sizeof *t->line);
  for (size_t c = 0; c < t->ncols; c++) {
    evm_free(&a, t->cols[c].name, t->cols[c].name_len + 1, 1);
    evm_free(&a, t->cols[c].cells, t->cols[c].cap, sizeof *t->cols[c].cells);
  }
  evm_free(&a, t->cols, t->capcols, sizeof *t->cols);
  for (int k = 0; k < EVT_NLISTS; k++) {
    struct evt_list *l = &t->list[k];
    evm_free(&a, l->start, l->start_cap, sizeof *l->start);
    evm_free(&a, l->present, l->present_cap, 1);
    evm_free(&a, l->num, l->num_cap, sizeof *l->num);
    evm_free(&a, l->str, l->cap, sizeof *l->str);
  }
  evm_free(&a, t->text, t->text_cap, 1);
  evt_init_alloc(t, &a);
}

size_t evt_bytes(const struct evt_table *t) {
  size_t b = t->cap * (sizeof *t->line + t->ncols * sizeof(struct evt_cell)) + t->text_cap;
  for (int k = 0; k < EVT_NLISTS; k++) {
    const struct evt_list *l = &t->list[k];
    b += t->cap * 9 + l->num_cap * sizeof *l->num + l->cap * sizeof *l->str;
  }
  return b;
}

/* p grown from n to m items of size bytes, then the new part of a large
 * block faulted in with one call: the columns are written front to back
 * right after, and a fault per page costs more than the writing on a
 * virtual machine. NULL when out of memory (p unchanged). */
static void *grow_block(const struct evm_alloc *a, void *p, size_t n, size_t m, size_t size) {
  void *q = evm_resize(a, p, n, m, size);
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096;
  size_t old_bytes = n * size, bytes = m * size;
  if (q && bytes - old_bytes >= ((size_t)1 << 20)) {
    uintptr_t from = ((uintptr_t)q + old_bytes + page - 1) & ~(page - 1), to = ((uintptr_t)q + bytes) & ~(page - 1);
    if (to > from) madvise((void *)from, to - from, MADV_POPULATE_WRITE); /* a hint: failure is harmless */
  }
#endif
  return q;
}

/* The capacity after cap that holds need items of size bytes: doubling,
 * then steps of 8 MB once a block is that large, so that what is faulted
 * in ahead (grow_block) and never written is at most 8 MB a block: with
 * 64 MB steps (and doubling up to them) that slack was 200 MB of the
 * 1.22 GB a million rows took, while a step costs one mremap. 0 when no
 * capacity can (the size overflows). */
#define STEP ((size_t)8 << 20)
static size_t next_cap(size_t cap, size_t need, size_t size) {
  const size_t step = STEP / size;
  size_t c = cap ? cap : 64;
  while (c < need) {
    if (c > SIZE_MAX / 2 / size) return 0;
    c = c >= step ? c + step : c * 2;
  }
  return c;
}

static int grow(const struct evm_alloc *a, void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t c = next_cap(*cap, need, size);
  void *q = c ? grow_block(a, *p, *cap, c, size) : NULL;
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

/* *p, of *have items of size bytes, grown to at least want; 0 or -1. */
static int grow_to(const struct evm_alloc *a, void **p, size_t *have, size_t want, size_t size) {
  if (*have >= want) return 0;
  void *q = grow_block(a, *p, *have, want, size);
  if (!q) return -1;
  *p = q;
  *have = want;
  return 0;
}

/* Every per-row array to room for cap rows; new cells are absent. Each
 * array keeps its own capacity, so what grew before a failure is still
 * given back whole. */
static int grow_rows(struct evt_table *t, size_t cap) {
  const struct evm_alloc *a = &t->a;
  if (grow_to(a, (void **)&t->line, &t->line_cap, cap, sizeof *t->line)) return -1;
  for (size_t c = 0; c < t->ncols; c++) {
    struct evt_col *col = &t->cols[c];
    size_t had = col->cap;
    if (grow_to(a, (void **)&col->cells, &col->cap, cap, sizeof *col->cells)) return -1;
    memset(col->cells + had, 0, (col->cap - had) * sizeof *col->cells);
  }
  for (int k = 0; k < EVT_NLISTS; k++) {
    struct evt_list *l = &t->list[k];
    if (grow_to(a, (void **)&l->start, &l->start_cap, cap + 1, sizeof *l->start) ||
        grow_to(a, (void **)&l->present, &l->present_cap, cap, 1))
      return -1;
    if (t->cap == 0) l->start[0] = 0;
  }
  t->cap = cap;
  return 0;
}

/* Rows grow like a column of cells, the largest per-row array. */
int evt_row_begin(struct evt_table *t, uint32_t line) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? next_cap(t->cap, t->n + 1, sizeof(struct evt_cell)) : 1024;
    if (!cap || cap > SIZE_MAX / 64 || grow_rows(t, cap)) return -1;
  }
  t->line[t->n] = line;
  for (int k = 0; k < EVT_NLISTS; k++) {
    t->list[k].start[t->n] = t->list[k].n;
    t->list[k].present[t->n] = 0;
  }
  t->text_mark = t->text_len;
  return 0;
}

void evt_row_commit(struct evt_table *t) {
  for (int k = 0; k < EVT_NLISTS; k++) t->list[k].start[t->n + 1] = t->list[k].n;
  t->n++;
}

void evt_row_abort(struct evt_table *t) {
  for (size_t c = 0; c < t->ncols; c++) t->cols[c].cells[t->n].type = EVT_ABSENT;
  for (int k = 0; k < EVT_NLISTS; k++) {
    t->list[k].n = t->list[k].start[t->n];
    t->list[k].present[t->n] = 0;
  }
  t->text_len = t->text_mark;
}

long evt_col_index(const struct evt_table *t, const char *name, size_t len) {
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].name_len == len && memcmp(t->cols[c].name, name, len) == 0) return (long)c;
  return -1;
}

struct evt_col *evt_col_get(struct evt_table *t, const char *name, size_t len, int create) {
  long c = evt_col_index(t, name, len);
  if (c >= 0) return &t->cols[c];
  if (!create) return NULL;
  if (len == SIZE_MAX || grow(&t->a, (void **)&t->cols, &t->capcols, t->ncols + 1, sizeof *t->cols)) return NULL;
  struct evt_col *col = &t->cols[t->ncols];
  col->name = evm_new(&t->a, len + 1, 1);
  col->cells = t->cap ? evm_new(&t->a, t->cap, sizeof *col->cells) : NULL;
  if (!col->name || (t->cap && !col->cells)) {
    evm_free(&t->a, col->name, len + 1, 1);
    evm_free(&t->a, col->cells, t->cap, sizeof *col->cells);
    return NULL;
  }
  col->cap = t->cap;
  if (col->cells) memset(col->cells, 0, t->cap * sizeof *col->cells);
  memcpy(col->name, name, len);
  col->name[len] = '\0';
  col->name_len = len;
  t->ncols++;
  return col;
}

/* The arena's capacity stays within EVT_TEXT_MAX (a step past what is
 * asked at most), so no offset the reader writes at overflows a reference. */
char *evt_text_room(struct evt_table *t, size_t len) {
  const uint64_t most = EVT_TEXT_MAX - STEP - 1;
  if (t->text_len > most || len >= most - t->text_len || grow(&t->a, (void **)&t->text, &t->text_cap, t->text_len + len + 1, 1))
    return NULL;
  return t->text + t->text_len;
}

int evt_list_grow(struct evt_table *t, enum evt_list_key k) {
  struct evt_list *l = &t->list[k];
  size_t cap = next_cap(l->cap, l->n + 1, sizeof *l->str);
  if (!cap || (evt_list_numbered(k) && grow_to(&t->a, (void **)&l->num, &l->num_cap, cap, sizeof *l->num))) return -1;
  evt_sref *s = grow_block(&t->a, l->str, l->cap, cap, sizeof *s);
  if (!s) return -1;
  l->str = s;
  l->cap = cap;
  return 0;
}

/* Bytes [off, off + len) of s into d's arena at *to. */
static int copy_text(struct evt_table *d, const struct evt_table *s, uint64_t off, size_t len, uint64_t *to) {
  char *o = evt_text_room(d, len);
  if (!o) return -1;
  memcpy(o, s->text + off, len);
  *to = evt_text_take(d, len).off;
  return 0;
}

int evt_copy_row(struct evt_table *d, const struct evt_table *s, size_t r) {
  if (evt_row_begin(d, s->line[r])) return -1;
  for (size_t c = 0; c < s->ncols; c++) {
    const struct evt_cell *in = &s->cols[c].cells[r];
    if (in->type == EVT_ABSENT) continue;
    struct evt_col *col = evt_col_get(d, s->cols[c].name, s->cols[c].name_len, 1);
    if (!col) return -1;
    struct evt_cell *out = &col->cells[d->n];
    *out = *in;
    if ((in->type == EVT_STR || in->type == EVT_JSON) && copy_text(d, s, in->v.off, in->len, &out->v.off)) return -1;
  }
  for (int k = 0; k < EVT_NLISTS; k++) {
    const struct evt_list *l = &s->list[k];
    size_t first, n = evt_list_range(s, (enum evt_list_key)k, r, &first);
    d->list[k].present[d->n] = l->present[r];
    for (size_t i = first; i < first + n; i++) {
      uint64_t off;
      if (copy_text(d, s, l->str[i].off, l->str[i].len, &off) ||
          evt_list_push(d, (enum evt_list_key)k, (evt_sref){.off = off, .len = l->str[i].len}, l->num ? l->num[i] : 0))
        return -1;
    }
  }
  return 0;
}
