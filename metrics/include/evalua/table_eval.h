/* Built-in metrics over a table's columns (table.h), a range of rows at a
 * time so that callers can split the rows between threads. Each writes one
 * score per row and a reason code; a score of NaN with code 0 is a value
 * that the measure's definition leaves undefined for that row. */
#ifndef EVALUA_TABLE_EVAL_H
#define EVALUA_TABLE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "evalua/ranking.h"
#include "evalua/retrieval.h"
#include "evalua/table.h"
#include "evalua/text.h"

/* Why a row has no score. */
enum evt_why {
  EVT_MEASURED = 0,
  EVT_NO_GOLD_LABELS,   /* neither gold_doc_ids nor graded_relevance */
  EVT_NO_RETRIEVED,     /* no retrieved list */
  EVT_NO_ANSWER,        /* no answer string */
  EVT_NO_GOLD_ANSWERS,  /* no gold answers, or an empty list */
  EVT_BAD_UTF8,         /* answer or gold answer not UTF-8 */
  EVT_NOMEM,
  EVT_NWHY
};
extern const char *const evt_why_text[EVT_NWHY];

/* Retrieval columns cols[0..nc) for rows [r0, r1): out[c][r] is the value
 * of cols[c] for row r, why[r] the row's reason. level: least relevant
 * grade; depth: ranks kept (0 = all). */
void evt_eval_retrieval(const struct evt_table *t, size_t r0, size_t r1, const struct evr_column *cols, size_t nc,
                        double level, size_t depth, struct evr_ranker *rk, double *const *out, uint8_t *why);

/* An answer metric of rows [r0, r1) over the column "answer" and the list
 * gold_answers. */
void evt_eval_answers(const struct evt_table *t, size_t r0, size_t r1, enum evtext_metric metric, evtext_ws *ws,
                      double *out, uint8_t *why);

#endif
