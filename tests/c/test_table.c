/* The columnar table (metrics/table.c) across its growth steps: 700,000
 * rows (past the step at which every per-row array stops doubling), some
 * taken back, read back whole and copied; the memory held past what is
 * written stays within one step a block; lists that keep no numbers hold
 * none; the 8-byte text reference's limits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "evalua/table.h"

#define ROWS 700000
#define STEP ((size_t)8 << 20)

/* Row r's answer text and list lengths, from r alone. */
static int answer(size_t r, char *buf) { return snprintf(buf, 32, "a%zu-%zu", r, r * 7919 % 1000); }
static size_t items(size_t r, int k) { return (r * (size_t)(k + 3)) % (k == EVT_RETRIEVED ? 21 : 4); }

/* Writes row r (or starts it and takes it back when abort is set). */
static int write_row(struct evt_table *t, size_t r, int abort) {
  char buf[32];
  if (evt_row_begin(t, (uint32_t)(r + 1))) return -1;
  struct evt_col *col = evt_col_get(t, "answer", 6, 1);
  int n = answer(r, buf);
  char *o = col ? evt_text_room(t, (size_t)n) : NULL;
  if (!o) return -1;
  memcpy(o, buf, (size_t)n);
  evt_sref s = evt_text_take(t, (size_t)n);
  col->cells[t->n] = (struct evt_cell){.type = EVT_STR, .len = s.len, .v.off = s.off};
  for (int k = 0; k < EVT_CONTEXTS; k++) {
    t->list[k].present[t->n] = EVT_LIST_PRESENT;
    for (size_t i = 0; i < items(r, k); i++)
      if (evt_list_push(t, (enum evt_list_key)k, s, (double)(r + i))) return -1;
  }
  if (abort) evt_row_abort(t);
  else evt_row_commit(t);
  return 0;
}

/* Row i of t holds what write_row wrote for r. */
static int same_row(const struct evt_table *t, size_t i, size_t r) {
  char buf[32];
  int n = answer(r, buf);
  const struct evt_cell *c = &t->cols[evt_col_index(t, "answer", 6)].cells[i];
  if (t->line[i] != r + 1 || c->type != EVT_STR || c->len != (uint32_t)n || memcmp(t->text + c->v.off, buf, (size_t)n))
    return 0;
  for (int k = 0; k < EVT_NLISTS; k++) {
    size_t first, m = evt_list_range(t, (enum evt_list_key)k, i, &first);
    if (m != (k == EVT_CONTEXTS ? 0 : items(r, k))) return 0;
    for (size_t j = 0; j < m; j++) {
      evt_sref s = t->list[k].str[first + j];
      if (s.len != (uint32_t)n || memcmp(t->text + s.off, buf, (size_t)n)) return 0;
      if (evt_list_numbered((enum evt_list_key)k) && t->list[k].num[first + j] != (double)(r + j)) return 0;
    }
  }
  return 1;
}

/* Capacity past use, in bytes, is within one growth step (or the doubling
 * below it). */
static int slack_ok(size_t used, size_t cap, size_t size) {
  return cap * size <= (used * size < STEP ? 2 * used * size + 64 * size : used * size + STEP);
}

int main(void) {
  struct evt_table t, d;
  evt_init(&t);
  evt_init(&d);
  int wrote = 1;
  for (size_t r = 0; r < ROWS && wrote; r++) wrote = write_row(&t, r, r % 7 == 3) == 0;
  CHECK(wrote);
  CHECK(t.n == ROWS - (ROWS + 3) / 7);
  int same = 1;
  for (size_t i = 0, r = 0; i < t.n && same; i++, r++) {
    if (r % 7 == 3) r++;
    same = same_row(&t, i, r);
  }
  CHECK(same);

  CHECK(slack_ok(t.n, t.cap, sizeof(struct evt_cell)));
  CHECK(slack_ok(t.text_len, t.text_cap, 1));
  for (int k = 0; k < EVT_NLISTS; k++) {
    const struct evt_list *l = &t.list[k];
    CHECK(slack_ok(l->n, l->cap, sizeof *l->str));
    CHECK(evt_list_numbered((enum evt_list_key)k) == (l->num != NULL) || l->cap == 0);
  }
  CHECK(t.list[EVT_GOLD_IDS].num == NULL && t.list[EVT_GOLD_ANSWERS].num == NULL);

  int copied = 1;
  for (size_t i = 0; i < t.n && copied; i += 97) {
    copied = evt_copy_row(&d, &t, i) == 0;
    if (copied) evt_row_commit(&d);
  }
  CHECK(copied);
  same = d.n == (t.n + 96) / 97;
  for (size_t i = 0, r = 0, j = 0; j < d.n && same; i++, r++) {
    if (r % 7 == 3) r++;
    if (i % 97 == 0) same = same_row(&d, j++, r);
  }
  CHECK(same);

  evt_free(&t);
  evt_free(&d);

  /* A reference is 8 bytes and holds the arena's last offset and the
   * longest item; an arena past 64 GB is refused, not wrapped. */
  CHECK(sizeof(evt_sref) == 8);
  evt_sref far = {.off = EVT_TEXT_MAX - 1, .len = EVT_ITEM_MAX};
  CHECK(far.off == EVT_TEXT_MAX - 1 && far.len == EVT_ITEM_MAX);
  struct evt_table huge;
  evt_init(&huge);
  huge.text_len = EVT_TEXT_MAX - 16;
  CHECK(evt_text_room(&huge, 1) == NULL && huge.text == NULL);
  huge.text_len = EVT_TEXT_MAX - ((size_t)8 << 20) - 100; /* within a step of the end */
  CHECK(evt_text_room(&huge, 200) == NULL && huge.text == NULL);
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
