/* A deterministic text embedder that needs no model: each text becomes a
 * sparse vector of hashed features, weighted by TF-IDF with the IDF learnt
 * from the texts embedded together (a data set's answers and gold answers,
 * say), in two parts:
 *   words       the text's tokens (metrics/text.c: NFKC case-folded,
 *               punctuation dropped) and, in Chinese, Japanese or Korean
 *               runs, pairs of adjacent characters;
 *   characters  n-grams of code points (char_min..char_max) of each word
 *               with boundary marks, and of each CJK run.
 * The similarity of two texts is (1 - char_weight) times the cosine of their
 * word parts plus char_weight times the cosine of their character parts.
 * Features are 64-bit hashes, so the sparse cosine has no collisions;
 * evembed_dense folds a vector into a fixed dimension for callers that need
 * a dense embedding. docs/judged_metrics.md has the measured quality. */
#ifndef EVALUA_EMBED_H
#define EVALUA_EMBED_H

#include <stddef.h>

#include "evalua/alloc.h"
#include "evalua/text.h"

typedef struct {
  double char_weight; /* 0..1 */
  int char_min, char_max; /* n-gram lengths in code points, 1 <= min <= max <= 8 */
} evembed_opts;

void evembed_defaults(evembed_opts *o);

typedef struct evembed evembed;

evembed *evembed_new(const evembed_opts *o);
/* The same, every block of it from a (alloc.h). */
evembed *evembed_new_alloc(const evembed_opts *o, const struct evm_alloc *a);
void evembed_free(evembed *e);

/* Adds a text; EVTEXT_OK, EVTEXT_EUTF8 (err says where) or EVTEXT_ENOMEM. */
int evembed_add(evembed *e, evtext_ws *ws, evtext_str text, evtext_error *err);

/* Learns the IDF from every text added and weights them; call it once,
 * after the last add. EVTEXT_OK or EVTEXT_ENOMEM. */
int evembed_fit(evembed *e);

size_t evembed_count(const evembed *e);

/* Similarity of texts i and j (0-based, after evembed_fit), in [0, 1]; a
 * part that is empty in either text counts 0. */
double evembed_cosine(const evembed *e, size_t i, size_t j);

/* Text i as a dense vector of dim numbers (feature hashing with signs),
 * unit length unless the text has no features (then all zeros). */
void evembed_dense(const evembed *e, size_t i, double *out, size_t dim);

#endif
