/* trec_eval's relevance formats besides qrels (`evalua trec -R`), and the
 * measures computed from them:
 *   prefs        "QID JG JSG DOCNO LEVEL": within each judgment subgroup
 *                (JSG) of a judgment group (JG: one user's judgments), a
 *                document of a higher LEVEL is preferred to one of a lower;
 *                a group's preferences are those of its subgroups, made
 *                transitive
 *   qrels_prefs  "QID JG DOCNO LEVEL": a qrels file read as prefs, each
 *                group a single subgroup
 *   qrels_jg     "QID JG DOCNO REL": qrels judged by several groups
 * LEVEL is a number (above 0: relevant; 0: not relevant; below 0: not
 * relevant in a group of one subgroup, neither in a group of several, as
 * trec_eval counts them); REL an integer as in qrels (a negative one: in
 * the pool, unjudged). Lines are read as trec.h reads
 * qrels: any order, fields separated by blanks, '#' lines and blank lines
 * skipped; errors name the file, the line and the field. */
#ifndef EVALUA_TREC_PREFS_H
#define EVALUA_TREC_PREFS_H

#include <stddef.h>

#include "evalua/retrieval.h"
#include "evalua/trec.h"
#include "evalua/trec_eval.h"

enum evr_rel_format { EVR_REL_QRELS, EVR_REL_PREFS, EVR_REL_QRELS_PREFS, EVR_REL_QRELS_JG };

struct evr_rel;

/* Reads the file at path ("-": standard input) in format f, which is not
 * qrels (trec.h reads those). NULL with err set on bad input ("FILE:LINE:
 * problem"); a document judged twice by one group of qrels_jg is one. */
struct evr_rel *evr_rel_read(const char *path, enum evr_rel_format f, struct evr_error *err);
void evr_rel_free(struct evr_rel *rel);

/* Reads the run at run_path into t (whose qrels are not read) and
 * evaluates cols over it, as evr_trec_evaluate_run does for qrels: rows are
 * the queries of rel in qid byte order, those the run lacks left out (with
 * o->complete, evaluated as retrieving nothing); o->depth, o->level and
 * o->judged_only apply as in trec_eval. Columns computed from other
 * judgments are NaN. Errors name their lines: a document retrieved twice
 * within the depth, one given two levels by one group of a single subgroup,
 * one judged both 0 and above 0 by one group, a group whose preferences
 * contradict each other. 0 or -1; free rep either way. */
int evr_rel_evaluate_run(const struct evr_rel *rel, struct evr_trec *t, const char *run_path,
                         const struct evr_column *cols, size_t nc, const struct evr_trec_opts *o,
                         struct evr_trec_report *rep, struct evr_error *err);

#endif
