/* Two jobs at once on two threads: what metrics/ asks of its host when it
 * splits work (evr_parallel_fn in evalua/trec.h). */
#ifndef EVALUA_PARALLEL_H
#define EVALUA_PARALLEL_H

#include <stddef.h>

/* Runs job(args[0]) on this thread and job(args[1]) on another, and
 * returns when both are done; if no thread can be started, runs them one
 * after the other. */
void evalua_run_two(void (*job)(void *), void *args[2]);

/* Blocks [first, n) on two threads: make(ctx, lane, b) makes block b on
 * lane (b - first) % 2, and take(ctx, lane, b) takes it in the order of b,
 * one take at a time, while the other lane makes its next block. make
 * returns nonzero to stop: that block and those after it are not taken.
 * Returns the first block not taken (n when every one was). */
size_t evalua_run_ordered(size_t first, size_t n, int (*make)(void *ctx, int lane, size_t b),
                          void (*take)(void *ctx, int lane, size_t b), void *ctx);

#endif
