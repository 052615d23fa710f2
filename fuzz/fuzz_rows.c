/* libFuzzer target: the JSON and CSV row readers (metrics/rows_json.c,
 * rows_csv.c) writing into columns. The first byte picks: bit 0 types the
 * documented keys, bit 1 reads the rest as one CSV file (else as JSONL
 * lines); the user's fields include an id[] and a string[] list. Rows
 * refused are taken back; every accepted row is read back and copied. */
#include <stdint.h>
#include <string.h>

#include "evalua/rows.h"
#include "evalua/table.h"

static const struct evt_field fields[] = {
  {"score", EVT_W_NUMBER, 0}, {"n", EVT_W_INTEGER, 0}, {"citations", EVT_W_IDS, 0}, {"notes", EVT_W_TEXTS, 0}};

/* Reads every cell and list item, so a bad offset shows under ASan. */
static size_t touch(const struct evt_table *t, size_t r) {
  size_t sum = 0;
  for (size_t c = 0; c < t->ncols; c++) {
    const struct evt_cell *cell = &t->cols[c].cells[r];
    if (cell->type == EVT_STR || cell->type == EVT_JSON)
      for (uint32_t i = 0; i < cell->len; i++) sum += (unsigned char)t->text[cell->v.off + i];
  }
  for (int k = 0; k < EVT_NLISTS; k++) {
    size_t first, n = evt_list_range(t, (enum evt_list_key)k, r, &first);
    for (size_t i = first; i < first + n; i++) sum += t->list[k].str[i].len ? (unsigned char)*evt_text(t, t->list[k].str[i]) : 0;
  }
  return sum;
}

static void skip(void *ud, uint32_t line, const char *why) { (void)ud, (void)line, (void)why; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct evt_schema sc = {size && (data[0] & 1), fields, sizeof fields / sizeof *fields};
  struct evt_table t, copy;
  evt_init(&t), evt_init(&copy);
  char err[600];
  const char *s = (const char *)data, *end = s + size;
  uint32_t line = 1;
  if (size && (data[0] & 2)) { /* the whole input as a CSV file, leniently */
    evt_csv_read(&t, s + 1, size - 1, &sc, 1, skip, NULL, err, sizeof err, &line);
    s = end;
  }
  while (s < end) { /* one row per line, as a JSONL file */
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
    evt_json_row(&t, s, len, line++, &sc, err, sizeof err);
    s += len + (nl != NULL);
  }
  volatile size_t sum = 0;
  for (size_t r = 0; r < t.n; r++) {
    sum += touch(&t, r);
    if (evt_copy_row(&copy, &t, r) == 0) evt_row_commit(&copy), sum += touch(&copy, copy.n - 1);
  }
  evt_free(&t), evt_free(&copy);
  return 0;
}
