/* Reading rows into a table (table.h): one JSON object per call, checked as
 * it is read, so a bad row is refused with the field that is wrong:
 *   "field 'retrieved[2].score': expected number, got string".
 *
 * With the documented format on (schema.rag), its keys are typed:
 *   qid id (required)       query, query_class, variant, language, answer string
 *   retrieved ranking       a list of ids, or of {id =, score =} (all with a
 *                           score or none, scores finite)
 *   gold_doc_ids id[]       graded_relevance {id: grade}; with both, every
 *                           gold id has a grade
 *   gold_answers string or string[]        contexts string[]
 * An id is a string or an integer (kept as its decimal text in lists). Other
 * keys keep their scalar values; arrays and objects are kept as JSON text.
 * A null member is an absent key. Numbers must be finite. */
#ifndef EVALUA_ROWS_H
#define EVALUA_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/table.h"

/* What a user's schema asks of a key that is not a list of the format.
 * id[] and string[] are kept as JSON lists (their items are checked in
 * Lua); they tell the CSV reader to split such a cell as a list. */
enum evt_want { EVT_W_ANY, EVT_W_STRING, EVT_W_NUMBER, EVT_W_INTEGER, EVT_W_BOOLEAN, EVT_W_ID, EVT_W_IDS, EVT_W_TEXTS };

struct evt_field {
  const char *name;
  enum evt_want want;
  int required;
};

struct evt_schema {
  int rag; /* the documented keys are typed */
  const struct evt_field *fields;
  size_t nfields;
};

/* Longest line a reader accepts, so a file of garbage cannot take all
 * memory. */
#define EVT_MAX_LINE ((size_t)256 << 20)
/* Longest string value: one answer or context of 16 MB is already far past
 * what any metric or judge is for. */
#define EVT_MAX_FIELD ((size_t)16 << 20)

enum { EVT_ROW_OK = 0, EVT_ROW_BAD = 1, EVT_ROW_NOMEM = -1 };

/* Reads the JSON object s[0..len) as row t->n (line: its source line).
 * EVT_ROW_OK: the row is added; EVT_ROW_BAD: nothing is added and err holds
 * the reason ("field ...", "invalid JSON at column 7: ..."). */
int evt_json_row(struct evt_table *t, const char *s, size_t len, uint32_t line, const struct evt_schema *sc,
                 char *err, size_t errlen);

/* For readers of other formats (CSV): the JSON value s[0..len) as the
 * member key of the open row (evt_row_begin), typed as evt_json_row types
 * it; then evt_row_check for required keys and gold labels. Both return
 * EVT_ROW_OK, EVT_ROW_BAD (err set) or EVT_ROW_NOMEM; the caller takes a
 * bad row back (evt_row_abort). */
int evt_json_value(struct evt_table *t, const char *key, size_t klen, const char *s, size_t len,
                   const struct evt_schema *sc, char *err, size_t errlen);
int evt_row_check(struct evt_table *t, const struct evt_schema *sc, char *err, size_t errlen);

/* Reads CSV text (RFC 4180, a leading BOM skipped) into t, the first
 * record naming the fields (after an optional "sep=X" line; ';' and tab
 * separated files are recognised by their header; list cells are split
 * as docs/data.md says). A bad row stops the read (EVT_ROW_BAD, err
 * and *line set) or, when lenient, is given to skip(ud, line, why) and
 * left out. EVT_ROW_OK, EVT_ROW_BAD or EVT_ROW_NOMEM. */
typedef void (*evt_skip_fn)(void *ud, uint32_t line, const char *why);
int evt_csv_read(struct evt_table *t, const char *buf, size_t len, const struct evt_schema *sc, int lenient,
                 evt_skip_fn skip, void *ud, char *err, size_t errlen, uint32_t *line);

/* The want of a user schema type name (string, number, integer, boolean,
 * id, any, id[], string[]): 1, or 0 when it is none of them. */
int evt_want_parse(const char *type, size_t len, enum evt_want *want);

#endif
