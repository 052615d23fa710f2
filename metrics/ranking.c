/* Judged rankings of one query from ids, scores and judgments (ranking.h). */
#include <stdlib.h>
#include <string.h>

#include "evalua/idtab.h"
#include "evalua/ranking.h"

/* Table values: the judged index in the low 31 bits (NONE when the id has
 * no judgment) and SEEN once the id has been given a rank. */
#define NONE 0x7fffffffu
#define SEEN 0x80000000u

struct item {
  const char *id;
  double score;
  size_t len;
};

struct arena {
  char *p;
  size_t cap;
};

struct evr_ranker {
  struct evm_alloc a;  /* where every block comes from */
  struct evr_idtab tab;
  double *grades;      /* judged grades in insertion order */
  size_t n_judged, cap_judged;
  struct item *items, *tmp;
  size_t n_items, cap_items, cap_tmp;
  double *rel, *rel_all, *sorted;
  size_t cap_rel, cap_rel_all, cap_sorted;
  char *arena;
  size_t arena_len, arena_cap;
  struct arena *old_arenas; /* arenas outgrown during this query, freed at reset */
  size_t n_old, cap_old;
  const char *repeat;
  size_t repeat_len;
};

struct evr_ranker *evr_ranker_new(void) { return evr_ranker_new_alloc(&evm_plain); }

struct evr_ranker *evr_ranker_new_alloc(const struct evm_alloc *a) {
  struct evr_ranker *r = evm_new(a, 1, sizeof *r);
  if (!r) return NULL;
  memset(r, 0, sizeof *r);
  r->a = *a;
  evr_idtab_init_alloc(&r->tab, a);
  return r;
}

static void drop_old_arenas(struct evr_ranker *r) {
  for (size_t i = 0; i < r->n_old; i++) evm_free(&r->a, r->old_arenas[i].p, r->old_arenas[i].cap, 1);
  r->n_old = 0;
}

void evr_ranker_free(struct evr_ranker *r) {
  if (!r) return;
  const struct evm_alloc a = r->a;
  evr_idtab_free(&r->tab);
  drop_old_arenas(r);
  evm_free(&a, r->old_arenas, r->cap_old, sizeof *r->old_arenas);
  evm_free(&a, r->grades, r->cap_judged, sizeof *r->grades);
  evm_free(&a, r->items, r->cap_items, sizeof *r->items);
  evm_free(&a, r->tmp, r->cap_tmp, sizeof *r->tmp);
  evm_free(&a, r->rel, r->cap_rel, sizeof *r->rel);
  evm_free(&a, r->rel_all, r->cap_rel_all, sizeof *r->rel_all);
  evm_free(&a, r->sorted, r->cap_sorted, sizeof *r->sorted);
  evm_free(&a, r->arena, r->arena_cap, 1);
  evm_free(&a, r, 1, sizeof *r);
}

void evr_ranker_reset(struct evr_ranker *r) {
  evr_idtab_clear(&r->tab);
  r->n_judged = r->n_items = r->arena_len = 0;
  r->repeat = NULL;
  drop_old_arenas(r);
}

/* Grows *p (*cap elements of size sz) to hold at least n; 0 or -1. */
static int reserve(const struct evm_alloc *a, void *p, size_t *cap, size_t n, size_t sz) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 64;
  while (c < n) {
    if (c > SIZE_MAX / 2 / sz) return -1;
    c *= 2;
  }
  void *q = evm_resize(a, *(void **)p, *cap, c, sz);
  if (!q) return -1;
  *(void **)p = q;
  *cap = c;
  return 0;
}

/* Copies live in an arena; when it must grow, the old block is kept until
 * reset because earlier copies still point into it. */
const char *evr_ranker_copy(struct evr_ranker *r, const char *id, size_t len) {
  if (len > SIZE_MAX / 4) return NULL;
  if (r->arena_len + len > r->arena_cap) {
    size_t cap = r->arena_cap ? 2 * r->arena_cap : 4096;
    while (cap < len) cap *= 2;
    if (r->arena_len) {
      if (reserve(&r->a, &r->old_arenas, &r->cap_old, r->n_old + 1, sizeof *r->old_arenas)) return NULL;
      r->old_arenas[r->n_old++] = (struct arena){r->arena, r->arena_cap};
      r->arena = NULL, r->arena_cap = 0;
    }
    char *a = evm_resize(&r->a, r->arena, r->arena_cap, cap, 1);
    if (!a) return NULL;
    r->arena = a, r->arena_cap = cap, r->arena_len = 0;
  }
  char *dst = r->arena + r->arena_len;
  if (len) memcpy(dst, id, len);
  r->arena_len += len;
  return dst;
}

int evr_ranker_judge(struct evr_ranker *r, const char *id, size_t len, double grade) {
  int found;
  uint32_t *v = evr_idtab_put(&r->tab, id, len, (uint32_t)r->n_judged, &found);
  if (!v) return -1;
  if (found) return 1;
  if (reserve(&r->a, &r->grades, &r->cap_judged, r->n_judged + 1, sizeof *r->grades)) return -1;
  r->grades[r->n_judged++] = grade;
  return 0;
}

int evr_ranker_is_judged(const struct evr_ranker *r, const char *id, size_t len) {
  return evr_idtab_get(&r->tab, id, len) != NULL;
}

int evr_ranker_add(struct evr_ranker *r, const char *id, size_t len, double score) {
  if (reserve(&r->a, &r->items, &r->cap_items, r->n_items + 1, sizeof *r->items)) return -1;
  r->items[r->n_items++] = (struct item){id, score, len};
  return 0;
}

/* strcmp's order over byte strings that need no terminator. */
static inline int id_cmp(const char *a, size_t la, const char *b, size_t lb) {
  size_t n = la < lb ? la : lb;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
  return (la > lb) - (la < lb);
}

/* trec_eval's order: a before b when a's score is higher, or equal with a
 * greater id (byte order, a proper prefix being smaller, as strcmp). */
static inline int before(const struct item *a, const struct item *b) {
  if (a->score != b->score) return a->score > b->score;
  return id_cmp(a->id, a->len, b->id, b->len) > 0;
}

/* Insertion sort, given up (returning -1) once it has moved more than
 * budget items: runs usually arrive in score order with only ties out of
 * place, which this sorts in one pass. */
static int insertion_sort(struct item *a, size_t n, size_t budget) {
  size_t moved = 0;
  for (size_t i = 1; i < n; i++) {
    if (!before(&a[i], &a[i - 1])) continue;
    struct item x = a[i];
    size_t j = i;
    for (; j > 0 && before(&x, &a[j - 1]); j--) a[j] = a[j - 1];
    a[j] = x;
    if ((moved += i - j) > budget) return -1;
  }
  return 0;
}

/* Bottom-up merge sort over insertion-sorted runs of 16. */
static int merge_sort(struct evr_ranker *r) {
  struct item *a = r->items;
  size_t n = r->n_items, run = 16;
  for (size_t i = 0; i < n; i += run) insertion_sort(a + i, n - i < run ? n - i : run, (size_t)-1);
  if (n <= run) return 0;
  if (reserve(&r->a, &r->tmp, &r->cap_tmp, n, sizeof *r->tmp)) return -1;
  struct item *src = a, *dst = r->tmp;
  for (size_t w = run; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = before(&src[j], &src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    struct item *t = src;
    src = dst, dst = t;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
  return 0;
}

static int order_by_score(struct evr_ranker *r) {
  if (!insertion_sort(r->items, r->n_items, 4 * r->n_items + 64)) return 0;
  return merge_sort(r);
}

static int desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* Judged grades >= 0, descending (the ideal ranking of nDCG). */
static int sort_judged(struct evr_ranker *r, size_t *n_out) {
  if (reserve(&r->a, &r->sorted, &r->cap_sorted, r->n_judged, sizeof *r->sorted)) return -1;
  size_t n = 0;
  for (size_t i = 0; i < r->n_judged; i++)
    if (r->grades[i] >= 0) r->sorted[n++] = r->grades[i];
  if (n > 32) {
    qsort(r->sorted, n, sizeof *r->sorted, desc);
  } else {
    for (size_t i = 1; i < n; i++) {
      double g = r->sorted[i];
      size_t j = i;
      for (; j > 0 && r->sorted[j - 1] < g; j--) r->sorted[j] = r->sorted[j - 1];
      r->sorted[j] = g;
    }
  }
  *n_out = n;
  return 0;
}

int evr_ranker_finish(struct evr_ranker *r, int by_score, size_t depth, struct evr_ranking *out) {
  if (by_score && order_by_score(r)) return -1;
  size_t n = depth && depth < r->n_items ? depth : r->n_items;
  if (reserve(&r->a, &r->rel, &r->cap_rel, n, sizeof *r->rel) ||
      reserve(&r->a, &r->rel_all, &r->cap_rel_all, n, sizeof *r->rel_all))
    return -1;
  size_t repeats = 0;
  for (size_t i = 0; i < n; i++) {
    const struct item *it = &r->items[i];
    int found;
    uint32_t *v = evr_idtab_put(&r->tab, it->id, it->len, NONE, &found);
    if (!v) return -1;
    uint32_t j = *v & NONE;
    double g = j == NONE ? EVR_UNJUDGED : !(r->grades[j] >= 0) ? EVR_POOL_UNJUDGED : r->grades[j];
    r->rel_all[i] = g;
    if (*v & SEEN) {
      if (!repeats++) r->repeat = it->id, r->repeat_len = it->len;
      g = EVR_UNJUDGED;
    }
    *v |= SEEN;
    r->rel[i] = g;
  }
  size_t n_sorted;
  if (sort_judged(r, &n_sorted)) return -1;
  *out = (struct evr_ranking){n, r->rel, r->rel_all, repeats, n_sorted, r->sorted};
  return 0;
}

void evr_ranker_keep_judged(struct evr_ranker *r, struct evr_ranking *out) {
  size_t n = 0;
  for (size_t i = 0; i < out->n_ret; i++)
    if (r->rel[i] >= 0) r->rel_all[n] = r->rel_all[i], r->rel[n++] = r->rel[i];
  out->n_ret = n;
  out->n_repeats = 0; /* a repeat ranks as a document without a judgment */
}

const char *evr_ranker_repeat(const struct evr_ranker *r, size_t *len) {
  if (r->repeat) *len = r->repeat_len;
  return r->repeat;
}

const char *evr_ranker_item(const struct evr_ranker *r, size_t i, size_t *len, double *score) {
  *len = r->items[i].len;
  *score = r->items[i].score;
  return r->items[i].id;
}
