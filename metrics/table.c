/* The columnar data set: growth, and rows taken back whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "evalua/table.h"

const char *const evt_list_names[EVT_NLISTS] = {"retrieved", "gold_doc_ids", "graded_relevance",
                                                "gold_answers", "contexts"};

void evt_init(struct evt_table *t) { memset(t, 0, sizeof *t); }

void evt_free(struct evt_table *t) {
  free(t->line);
  for (size_t c = 0; c < t->ncols; c++) free(t->cols[c].name), free(t->cols[c].cells);
  free(t->cols);
  for (int k = 0; k < EVT_NLISTS; k++) {
    struct evt_list *l = &t->list[k];
    free(l->start), free(l->present), free(l->num), free(l->str);
  }
  free(t->text);
  evt_init(t);
}

size_t evt_bytes(const struct evt_table *t) {
  size_t b = t->cap * (sizeof *t->line + t->ncols * sizeof(struct evt_cell)) + t->text_cap;
  for (int k = 0; k < EVT_NLISTS; k++) {
    const struct evt_list *l = &t->list[k];
    b += t->cap * 9 + l->cap * (sizeof *l->num + sizeof *l->str);
  }
  return b;
}

/* realloc, then the new part of a large block faulted in with one call:
 * the columns are written front to back right after, and a fault per page
 * costs more than the writing on a virtual machine. */
static void *grow_block(void *p, size_t old_bytes, size_t bytes) {
  void *q = realloc(p, bytes);
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096;
  if (q && bytes - old_bytes >= ((size_t)1 << 20)) {
    uintptr_t from = ((uintptr_t)q + old_bytes + page - 1) & ~(page - 1), to = ((uintptr_t)q + bytes) & ~(page - 1);
    if (to > from) madvise((void *)from, to - from, MADV_POPULATE_WRITE); /* a hint: failure is harmless */
  }
#endif
  return q;
}

/* The capacity after cap that holds need items of size bytes: doubling,
 * then steps of 64 MB once a block is that large, so that what is faulted
 * in ahead (grow_block) is never much more than what will be written. */
static size_t next_cap(size_t cap, size_t need, size_t size) {
  const size_t step = ((size_t)64 << 20) / size;
  size_t c = cap ? cap : 64;
  while (c < need) c = c >= step ? c + step : c * 2;
  return c;
}

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t c = next_cap(*cap, need, size);
  void *q = grow_block(*p, *cap * size, c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

/* Every per-row array to room for `cap` rows; new cells are absent. */
static int grow_rows(struct evt_table *t, size_t cap) {
  uint32_t *line = grow_block(t->line, t->cap * sizeof *line, cap * sizeof *line);
  if (!line) return -1;
  t->line = line;
  for (size_t c = 0; c < t->ncols; c++) {
    struct evt_cell *cells = grow_block(t->cols[c].cells, t->cap * sizeof *cells, cap * sizeof *cells);
    if (!cells) return -1;
    memset(cells + t->cap, 0, (cap - t->cap) * sizeof *cells);
    t->cols[c].cells = cells;
  }
  for (int k = 0; k < EVT_NLISTS; k++) {
    struct evt_list *l = &t->list[k];
    uint64_t *start = grow_block(l->start, (t->cap + !!t->cap) * sizeof *start, (cap + 1) * sizeof *start);
    if (!start) return -1;
    l->start = start;
    uint8_t *present = grow_block(l->present, t->cap, cap);
    if (!present) return -1;
    l->present = present;
    if (t->cap == 0) l->start[0] = 0;
  }
  t->cap = cap;
  return 0;
}

int evt_row_begin(struct evt_table *t, uint32_t line) {
  if (t->n == t->cap && grow_rows(t, t->cap ? t->cap * 2 : 1024)) return -1;
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
  if (grow((void **)&t->cols, &t->capcols, t->ncols + 1, sizeof *t->cols)) return NULL;
  struct evt_col *col = &t->cols[t->ncols];
  col->name = malloc(len + 1);
  col->cells = calloc(t->cap ? t->cap : 1, sizeof *col->cells);
  if (!col->name || !col->cells) return free(col->name), free(col->cells), NULL;
  memcpy(col->name, name, len);
  col->name[len] = '\0';
  col->name_len = len;
  t->ncols++;
  return col;
}

char *evt_text_room(struct evt_table *t, size_t len) {
  if (grow((void **)&t->text, &t->text_cap, t->text_len + len + 1, 1)) return NULL;
  return t->text + t->text_len;
}

evt_sref evt_text_take(struct evt_table *t, size_t len) {
  evt_sref s = {t->text_len, (uint32_t)len};
  t->text_len += len;
  return s;
}

int evt_list_push(struct evt_table *t, enum evt_list_key k, evt_sref str, double num) {
  struct evt_list *l = &t->list[k];
  if (l->n == l->cap) {
    size_t cap = next_cap(l->cap, l->n + 1, sizeof *l->str);
    evt_sref *s = grow_block(l->str, l->cap * sizeof *s, cap * sizeof *s);
    if (!s) return -1;
    l->str = s;
    double *d = grow_block(l->num, l->cap * sizeof *d, cap * sizeof *d);
    if (!d) return -1;
    l->num = d;
    l->cap = cap;
  }
  l->str[l->n] = str;
  l->num[l->n] = num;
  l->n++;
  return 0;
}

static int copy_text(struct evt_table *d, const struct evt_table *s, evt_sref in, evt_sref *out) {
  char *o = evt_text_room(d, in.len);
  if (!o) return -1;
  memcpy(o, s->text + in.off, in.len);
  *out = evt_text_take(d, in.len);
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
    if (in->type == EVT_STR || in->type == EVT_JSON) {
      evt_sref t;
      if (copy_text(d, s, (evt_sref){in->v.off, in->len}, &t)) return -1;
      out->v.off = t.off;
    }
  }
  for (int k = 0; k < EVT_NLISTS; k++) {
    const struct evt_list *l = &s->list[k];
    size_t first, n = evt_list_range(s, (enum evt_list_key)k, r, &first);
    d->list[k].present[d->n] = l->present[r];
    for (size_t i = first; i < first + n; i++) {
      evt_sref str;
      if (copy_text(d, s, l->str[i], &str) || evt_list_push(d, (enum evt_list_key)k, str, l->num[i])) return -1;
    }
  }
  return 0;
}
