/* Two jobs at once on two threads: what metrics/ asks of its host when it
 * splits work (evr_parallel_fn in evalua/trec.h). */
#ifndef EVALUA_PARALLEL_H
#define EVALUA_PARALLEL_H

/* Runs job(args[0]) on this thread and job(args[1]) on another, and
 * returns when both are done; if no thread can be started, runs them one
 * after the other. */
void evalua_run_two(void (*job)(void *), void *args[2]);

#endif
