/* Answer-text metrics over UTF-8 strings: normalisation into tokens and the
 * scores built on them (exact match, token F1, ROUGE-L, edit similarity).
 *
 * Normalisation (docs/text.md has the full rules and why this order):
 *   1. NFKC with Unicode case folding, default-ignorable characters dropped
 *      (utf8proc's NFKC_Casefold);
 *   2. punctuation deleted: ASCII punctuation (Python's string.punctuation)
 *      and every character of general category P*;
 *   3. white space splits; every CJK ideograph, kana and Hangul syllable is
 *      a token of its own;
 *   4. the words a, an, the are dropped, a word being a maximal run of
 *      letters, marks and digits inside a token (SQuAD's \b(a|an|the)\b).
 * On ASCII text this is exactly the SQuAD v2.0 evaluation script. */
#ifndef EVALUA_TEXT_H
#define EVALUA_TEXT_H

#include <stddef.h>

typedef struct {
  const char *s;
  size_t len;
} evtext_str;

enum evtext_metric {
  EVTEXT_EXACT,      /* byte equality */
  EVTEXT_EXACT_NORM, /* equal token lists */
  EVTEXT_F1,         /* SQuAD token F1 (multiset overlap) */
  EVTEXT_ROUGE_L,    /* F1 of the longest common token subsequence */
  EVTEXT_EDIT,       /* 1 - Levenshtein / longer length, in code points */
  EVTEXT_EDIT_NORM,  /* the same over the normalised strings */
};

/* EVTEXT_EBUDGET: a comparison would need more cells than the workspace's
 * bound (evtext_ws_set_max_cells). */
enum { EVTEXT_OK = 0, EVTEXT_EUTF8 = -1, EVTEXT_ENOMEM = -2, EVTEXT_EBUDGET = -3 };

/* Where a call failed: which input (-1 the prediction, i >= 0 golds[i]) and
 * the 0-based offset of the first invalid byte for EVTEXT_EUTF8. */
typedef struct {
  long which;
  size_t byte;
} evtext_error;

/* Scratch memory reused across calls, so a batch allocates once. */
typedef struct evtext_ws evtext_ws;
evtext_ws *evtext_ws_new(void);
void evtext_ws_free(evtext_ws *ws);
/* A workspace whose memory comes from alloc, called like lua_Alloc: (ud,
 * block, old size, new size), new size 0 frees. A host passes its own to
 * count the memory against a cap; failure is EVTEXT_ENOMEM. */
typedef void *(*evtext_alloc)(void *ud, void *ptr, size_t osize, size_t nsize);
evtext_ws *evtext_ws_new_alloc(evtext_alloc alloc, void *ud);
/* Bounds ROUGE-L's and the edit distance's tables (tokens x tokens, code
 * points x code points, after common ends are cut): a larger comparison
 * fails with EVTEXT_EBUDGET instead of running for minutes. 0: no bound. */
void evtext_ws_set_max_cells(evtext_ws *ws, size_t max_cells);

/* The score of pred against the best of golds. No golds means one empty
 * gold (SQuAD v2.0's unanswerable question). For the normalised metrics,
 * golds that normalise to nothing are ignored unless all of them do, as in
 * SQuAD v2.0; an empty prediction against an empty gold scores 1. */
int evtext_score(evtext_ws *ws, enum evtext_metric metric, evtext_str pred,
                 const evtext_str *golds, size_t ngolds, double *score, evtext_error *err);

/* The Levenshtein distance of a and b in code points (unnormalised), or
 * bound + 1 when it is larger than bound: then only the band of cells
 * within bound of the diagonal is filled (Ukkonen's cut-off), so a small
 * bound on long texts stays cheap. SIZE_MAX: no bound. err->which is -1 for
 * a, 0 for b. */
int evtext_edit_distance(evtext_ws *ws, evtext_str a, evtext_str b, size_t bound, size_t *distance,
                         evtext_error *err);

/* Tokenises s; the tokens stay readable with evtext_token until the next
 * call on ws. */
int evtext_tokenize(evtext_ws *ws, evtext_str s, size_t *ntokens, evtext_error *err);
evtext_str evtext_token(const evtext_ws *ws, size_t i);

/* The tokens of s joined by single spaces (valid until the next call). */
int evtext_normalize(evtext_ws *ws, evtext_str s, evtext_str *out, evtext_error *err);

#endif
