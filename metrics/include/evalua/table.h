/* A data set as columns: one row per query (and pipeline variant), each key
 * of the documented row format stored typed, everything in flat arrays.
 *
 *   scalar keys (qid, query, answer, variant, any other key)  -> a column of
 *       cells: absent, null, boolean, integer, number, string (bytes in the
 *       text arena) or JSON (the raw text of an array or object)
 *   list keys (retrieved, gold_doc_ids, graded_relevance, gold_answers,
 *       contexts) -> per row a range [start[r], start[r+1]) of items: ids
 *       and texts as references into the arena, grades and scores as
 *       doubles. Ids are not interned: a lookup table of every id is a
 *       cache miss per id read, while the arena is written in order
 *       (docs/internals.md has the figures).
 *
 * Rows are added one at a time (evt_row_begin, writes, evt_row_commit), and
 * a row that fails validation is taken back whole (evt_row_abort). */
#ifndef EVALUA_TABLE_H
#define EVALUA_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evalua/alloc.h"

enum evt_type { EVT_ABSENT = 0, EVT_NULL, EVT_FALSE, EVT_TRUE, EVT_INT, EVT_NUM, EVT_STR, EVT_JSON };

/* Bytes [off, off + len) of the text arena, in 8 bytes: a million rows
 * hold 17 million (ranked ids, gold ids and answers), and at 16 bytes
 * they were a seventh of the table. So the arena holds at most 64 GB
 * (evt_text_room refuses more) and an item at most 256 MB - 1 (a reader's
 * item is at most EVT_MAX_FIELD; a cell keeps its own 32-bit length). */
#define EVT_TEXT_MAX ((uint64_t)1 << 36)
#define EVT_ITEM_MAX (((size_t)1 << 28) - 1)
typedef struct {
  uint64_t off : 36;
  uint64_t len : 28;
} evt_sref;

struct evt_cell {
  uint8_t type;    /* enum evt_type */
  uint32_t len;    /* EVT_STR, EVT_JSON: length of the bytes */
  union {
    int64_t i;     /* EVT_INT */
    double d;      /* EVT_NUM */
    uint64_t off;  /* EVT_STR, EVT_JSON: offset in the arena */
  } v;
};

struct evt_col {
  char *name;
  size_t name_len; /* a JSON key may hold "\u0000" */
  struct evt_cell *cells; /* one per row */
  size_t cap;             /* cells held: at least the table's cap */
};

enum evt_list_key { EVT_RETRIEVED, EVT_GOLD_IDS, EVT_GRADES, EVT_GOLD_ANSWERS, EVT_CONTEXTS, EVT_NLISTS };
extern const char *const evt_list_names[EVT_NLISTS];

/* Row flags of a list (present[r]). */
enum {
  EVT_LIST_PRESENT = 1,
  EVT_LIST_SCALAR = 2,  /* gold_answers given as one string */
  EVT_LIST_OBJECTS = 4, /* retrieved as {id =, score =} entries */
  EVT_LIST_SCORED = 8,  /* ... each with a score */
};

struct evt_list {
  uint64_t *start;  /* start_cap entries: at least the table's cap + 1 */
  uint8_t *present; /* EVT_LIST_* flags per row; present_cap of them */
  size_t start_cap, present_cap;
  size_t n, cap;    /* items; str holds cap of them */
  evt_sref *str;    /* ids, gold answers, contexts */
  double *num;      /* retrieved scores, grades (evt_list_numbered); num_cap of
                     * them, at least cap; NULL for the other lists */
  size_t num_cap;
};

struct evt_table {
  struct evm_alloc a; /* where every block of the table comes from */
  size_t n, cap;      /* rows; every per-row array holds at least cap */
  uint32_t *line;     /* source line of each row */
  size_t line_cap;
  struct evt_col *cols;
  size_t ncols, capcols;
  struct evt_list list[EVT_NLISTS];
  char *text;         /* the text arena */
  size_t text_len, text_cap, text_mark;
};

/* An empty table allocating with malloc (evt_init) or with a. */
void evt_init(struct evt_table *t);
void evt_init_alloc(struct evt_table *t, const struct evm_alloc *a);
/* Gives every block back; the table is empty again, with the same allocator. */
void evt_free(struct evt_table *t);
/* Bytes held, for reporting memory use. */
size_t evt_bytes(const struct evt_table *t);

/* Opens row t->n for writing; 0 or -1 when out of memory. */
int evt_row_begin(struct evt_table *t, uint32_t line);
void evt_row_commit(struct evt_table *t);
/* Takes back everything written since evt_row_begin. */
void evt_row_abort(struct evt_table *t);

/* The column named name, created when absent (create = 1); NULL if there is
 * none or out of memory. */
struct evt_col *evt_col_get(struct evt_table *t, const char *name, size_t len, int create);
/* Index of the column, or -1. */
long evt_col_index(const struct evt_table *t, const char *name, size_t len);

/* Room for len more bytes in the arena; the caller writes them and then
 * calls evt_text_take. NULL when out of memory. */
char *evt_text_room(struct evt_table *t, size_t len);
static inline const char *evt_text(const struct evt_table *t, evt_sref s) { return t->text + s.off; }

/* Takes the len bytes written at evt_text_room's pointer (inline: the
 * reader takes a string for nearly every value); the reference holds len
 * only up to EVT_ITEM_MAX, so a longer cell takes its length from len. */
static inline evt_sref evt_text_take(struct evt_table *t, size_t len) {
  evt_sref s = {.off = t->text_len, .len = len & EVT_ITEM_MAX};
  t->text_len += len;
  return s;
}

/* Room for one more item in list k; -1 when out of memory. */
int evt_list_grow(struct evt_table *t, enum evt_list_key k);

/* Whether list k keeps a number per item: the others hold none, and a
 * million rows' gold ids and answers would take 36 MB of unread zeros. */
static inline int evt_list_numbered(enum evt_list_key k) { return k == EVT_RETRIEVED || k == EVT_GRADES; }

/* Appends an item (a text and, for rankings and grades, a number; num is
 * dropped for the other lists) to list k of the open row; -1 when out of
 * memory. Inline, the call was a tenth of reading a ranking. */
static inline int evt_list_push(struct evt_table *t, enum evt_list_key k, evt_sref str, double num) {
  struct evt_list *l = &t->list[k];
  if (l->n == l->cap && evt_list_grow(t, k)) return -1;
  l->str[l->n] = str;
  if (l->num) l->num[l->n] = num;
  l->n++;
  return 0;
}

/* Whether two references hold the same bytes. */
static inline int evt_same(const struct evt_table *t, evt_sref a, evt_sref b) {
  return a.len == b.len && memcmp(t->text + a.off, t->text + b.off, a.len) == 0;
}

/* Opens row d->n as a copy of row r of s (commit it with evt_row_commit);
 * 0 or -1 when out of memory. */
int evt_copy_row(struct evt_table *d, const struct evt_table *s, size_t r);

/* Row r's items of list k: [*first, *first + count). */
static inline size_t evt_list_range(const struct evt_table *t, enum evt_list_key k, size_t r, size_t *first) {
  const struct evt_list *l = &t->list[k];
  *first = l->start[r];
  return (size_t)(l->start[r + 1] - l->start[r]);
}

#endif
