/* Dot product and cosine similarity of dense vectors of doubles (embeddings
 * for semantic answer similarity and answer relevance). Inputs are finite;
 * the Lua bindings reject NaN and infinities. */
#ifndef EVALUA_VECTOR_H
#define EVALUA_VECTOR_H

#include <stddef.h>

/* sum a[i] b[i]; rescaled when the plain sum overflows or underflows, so the
 * result is infinite only when the true value is beyond the double range. */
double evvec_dot(const double *a, const double *b, size_t n);

/* dot / (|a| |b|) in [-1, 1]; 0 when either vector is all zeros (there is no
 * direction to compare), as scikit-learn's cosine_similarity. */
double evvec_cosine(const double *a, const double *b, size_t n);

#endif
