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
 * each distinct one is numbered in the embedder's vocabulary (at most
 * 2^31 - 1 of them);
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

/* Runs job(args[0]) and job(args[1]) at once, returning when both are
 * done (the host's two threads; evr_parallel_fn in evalua/trec.h). */
typedef void (*evembed_parallel_fn)(void (*job)(void *), void *args[2]);

/* Adds n texts in order, as n calls of evembed_add would: with par and
 * ws[1], the second half on another thread (ws[0] and ws[1] are then each
 * one thread's). On EVTEXT_EUTF8, *failed is the first failing text
 * (0-based) and err says where in it; the texts before it may have been
 * added. */
int evembed_add_batch(evembed *e, evtext_ws *ws[2], const evtext_str *texts, size_t n,
                      evembed_parallel_fn par, size_t *failed, evtext_error *err);

/* Learns the IDF from every text added and weights them; call it once,
 * after the last add. EVTEXT_OK or EVTEXT_ENOMEM. */
int evembed_fit(evembed *e);

size_t evembed_count(const evembed *e);

/* Similarity of texts i and j (0-based, after evembed_fit), in [0, 1]; a
 * part that is empty in either text counts 0. Uses e's scratch: one call
 * on e at a time. */
double evembed_cosine(evembed *e, size_t i, size_t j);

/* The similarities of each text i < m with texts first[i] .. first[i + 1]
 * - 1 (first[0] >= m), into out[k - first[0]]; with par, half the texts i
 * on another thread. EVTEXT_OK or EVTEXT_ENOMEM. */
int evembed_similarity(evembed *e, const size_t *first, size_t m, double *out, evembed_parallel_fn par);

/* Text i as a dense vector of dim numbers (feature hashing with signs),
 * unit length unless the text has no features (then all zeros). */
void evembed_dense(const evembed *e, size_t i, double *out, size_t dim);

#endif
