/* Built-in retrieval and answer metrics straight from the columns. */
#include <math.h>

#include "evalua/table_eval.h"

const char *const evt_why_text[EVT_NWHY] = {
  "", "no gold labels", "no retrieved list", "no 'answer' in the row", "no 'gold_answers' in the row",
  "the answer or a gold answer is not valid UTF-8", "not enough memory",
};

static int present(const struct evt_table *t, enum evt_list_key k, size_t r) {
  return t->list[k].present[r] & EVT_LIST_PRESENT;
}

/* Judgments: graded_relevance when given (the reader made sure every gold
 * id has a grade), else every gold id with grade 1. */
static int judge_row(const struct evt_table *t, size_t r, struct evr_ranker *rk) {
  size_t first, n;
  if (present(t, EVT_GRADES, r)) {
    const struct evt_list *l = &t->list[EVT_GRADES];
    n = evt_list_range(t, EVT_GRADES, r, &first);
    for (size_t i = first; i < first + n; i++)
      if (evr_ranker_judge(rk, evt_text(t, l->str[i]), l->str[i].len, l->num[i]) < 0) return -1;
    return 0;
  }
  const struct evt_list *l = &t->list[EVT_GOLD_IDS];
  n = evt_list_range(t, EVT_GOLD_IDS, r, &first);
  for (size_t i = first; i < first + n; i++)
    if (evr_ranker_judge(rk, evt_text(t, l->str[i]), l->str[i].len, 1.0) < 0) return -1;
  return 0;
}

static int rank_row(const struct evt_table *t, size_t r, struct evr_ranker *rk, size_t depth, struct evr_ranking *out) {
  const struct evt_list *l = &t->list[EVT_RETRIEVED];
  size_t first, n = evt_list_range(t, EVT_RETRIEVED, r, &first);
  for (size_t i = first; i < first + n; i++) {
    double s = l->num[i];
    if (evr_ranker_add(rk, evt_text(t, l->str[i]), l->str[i].len, isnan(s) ? 0 : s)) return -1;
  }
  return evr_ranker_finish(rk, (l->present[r] & EVT_LIST_SCORED) != 0, depth, out);
}

void evt_eval_retrieval(const struct evt_table *t, size_t r0, size_t r1, const struct evr_column *cols, size_t nc,
                        double level, size_t depth, struct evr_ranker *rk, double *const *out, uint8_t *why) {
  double vals[256];
  for (size_t r = r0; r < r1; r++) {
    why[r] = EVT_MEASURED;
    if (!present(t, EVT_GRADES, r) && !present(t, EVT_GOLD_IDS, r)) why[r] = EVT_NO_GOLD_LABELS;
    else if (!present(t, EVT_RETRIEVED, r)) why[r] = EVT_NO_RETRIEVED;
    struct evr_ranking rank;
    if (!why[r]) {
      evr_ranker_reset(rk);
      if (judge_row(t, r, rk) || rank_row(t, r, rk, depth, &rank)) why[r] = EVT_NOMEM;
    }
    for (size_t c0 = 0; c0 < nc; c0 += 256) {
      size_t m = nc - c0 < 256 ? nc - c0 : 256;
      if (!why[r]) evr_eval(cols + c0, m, &rank, level, vals);
      for (size_t c = 0; c < m; c++) out[c0 + c][r] = why[r] ? NAN : vals[c];
    }
  }
}

static evtext_str column_str(const struct evt_table *t, long col, size_t r, int *ok) {
  evtext_str s = {"", 0};
  *ok = 0;
  if (col < 0) return s;
  const struct evt_cell *c = &t->cols[col].cells[r];
  if (c->type != EVT_STR) return s;
  *ok = 1;
  s.s = t->text + c->v.off, s.len = c->len;
  return s;
}

void evt_eval_answers(const struct evt_table *t, size_t r0, size_t r1, enum evtext_metric metric, evtext_ws *ws,
                      double *out, uint8_t *why) {
  long acol = evt_col_index(t, "answer", 6);
  const struct evt_list *g = &t->list[EVT_GOLD_ANSWERS];
  evtext_str golds[64];
  for (size_t r = r0; r < r1; r++) {
    int ok;
    evtext_str pred = column_str(t, acol, r, &ok);
    size_t first, n = evt_list_range(t, EVT_GOLD_ANSWERS, r, &first);
    out[r] = NAN;
    if (!ok) { why[r] = EVT_NO_ANSWER; continue; }
    if (n == 0) { why[r] = EVT_NO_GOLD_ANSWERS; continue; }
    double best = -1, score;
    evtext_error err;
    /* golds in chunks, keeping the best (the metric is a max over golds) */
    for (size_t c0 = 0; c0 < n; c0 += 64) {
      size_t m = n - c0 < 64 ? n - c0 : 64;
      for (size_t i = 0; i < m; i++)
        golds[i] = (evtext_str){t->text + g->str[first + c0 + i].off, g->str[first + c0 + i].len};
      int rc = evtext_score(ws, metric, pred, golds, m, &score, &err);
      if (rc) { best = -2; why[r] = rc == EVTEXT_EUTF8 ? EVT_BAD_UTF8 : EVT_NOMEM; break; }
      if (score > best) best = score;
    }
    if (best >= 0) out[r] = best, why[r] = EVT_MEASURED;
  }
}
