/* Building the judged ranking of one query (retrieval.h) from document ids:
 * the judgments, then the retrieved ids in the order given (with or without
 * scores). Ordering follows trec_eval: score descending, ties by id
 * descending in byte order. A ranker is scratch space reused query after
 * query; it copies nothing unless asked (evr_ranker_copy). */
#ifndef EVALUA_RANKING_H
#define EVALUA_RANKING_H

#include <stddef.h>

#include "evalua/alloc.h"
#include "evalua/retrieval.h"

struct evr_ranker;

struct evr_ranker *evr_ranker_new(void);
/* The same, every block of it from a (alloc.h). */
struct evr_ranker *evr_ranker_new_alloc(const struct evm_alloc *a);
void evr_ranker_free(struct evr_ranker *r);
/* Starts a new query. */
void evr_ranker_reset(struct evr_ranker *r);
/* A copy of id owned by the ranker until the next reset; NULL when out of memory. */
const char *evr_ranker_copy(struct evr_ranker *r, const char *id, size_t len);

/* Records a judgment. Returns 0, 1 when id was already judged (the first
 * grade stays), or -1 when out of memory. */
int evr_ranker_judge(struct evr_ranker *r, const char *id, size_t len, double grade);
/* Whether id has a judgment (before finish): a row's list of gold ids
 * beside its grades must name only graded ids, else its relevance is mixed
 * graded and ungraded. */
int evr_ranker_is_judged(const struct evr_ranker *r, const char *id, size_t len);
/* Appends a retrieved id; score is used only when finishing by score. 0 or -1. */
int evr_ranker_add(struct evr_ranker *r, const char *id, size_t len, double score);

/* Orders the retrieved ids (by score when by_score, else as added), keeps
 * the first depth (0 = all), gives each rank its grade and fills *out, valid
 * until the next reset. 0, or -1 when out of memory. */
int evr_ranker_finish(struct evr_ranker *r, int by_score, size_t depth, struct evr_ranking *out);
/* After finish: drops the retrieved documents without a judgment (or with
 * a negative one), closing up the ranks, as trec_eval's -J (judged
 * documents only) does after its -M cut. */
void evr_ranker_keep_judged(struct evr_ranker *r, struct evr_ranking *out);
/* After finish: the id and score at rank i+1 (i < the number added). */
const char *evr_ranker_item(const struct evr_ranker *r, size_t i, size_t *len, double *score);
/* After finish: the first id that appeared twice within the depth, or NULL. */
const char *evr_ranker_repeat(const struct evr_ranker *r, size_t *len);

#endif
