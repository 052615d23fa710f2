/* Two jobs at once on two threads (parallel.h). */
#include <pthread.h>
#include <stdint.h>

#include "parallel.h"

struct call {
  void (*job)(void *);
  void *arg;
};

static void *start(void *p) {
  struct call *c = p;
  c->job(c->arg);
  return NULL;
}

void evalua_run_two(void (*job)(void *), void *args[2]) {
  struct call second = {job, args[1]};
  pthread_t th;
  int started = pthread_create(&th, NULL, start, &second) == 0;
  job(args[0]);
  if (started) pthread_join(th, NULL);
  else job(args[1]);
}

/* The order of takes: next is the block whose turn it is; stop the first
 * block a lane refused (SIZE_MAX while none has). */
struct ordered {
  size_t first, n, next, stop;
  int (*make)(void *, int, size_t);
  void (*take)(void *, int, size_t);
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t turn;
};

struct lane {
  struct ordered *o;
  int k;
};

/* Waits for block b's turn; 0 when a block before it stopped the run. */
static int my_turn(struct ordered *o, size_t b, int refused) {
  pthread_mutex_lock(&o->mu);
  while (o->next != b && o->stop > b) pthread_cond_wait(&o->turn, &o->mu);
  int go = o->stop > b && !refused;
  if (!go && o->stop > b) o->stop = b, pthread_cond_broadcast(&o->turn);
  pthread_mutex_unlock(&o->mu);
  return go;
}

static void pass_turn(struct ordered *o, size_t b) {
  pthread_mutex_lock(&o->mu);
  o->next = b + 1;
  pthread_cond_broadcast(&o->turn);
  pthread_mutex_unlock(&o->mu);
}

static void lane_job(void *arg) {
  struct lane *l = arg;
  struct ordered *o = l->o;
  for (size_t b = o->first + (size_t)l->k; b < o->n; b += 2) {
    int refused = o->make(o->ctx, l->k, b);
    if (!my_turn(o, b, refused)) return;
    o->take(o->ctx, l->k, b); /* the other lane waits for its turn or makes its next block */
    pass_turn(o, b);
  }
}

size_t evalua_run_ordered(size_t first, size_t n, int (*make)(void *ctx, int lane, size_t b),
                          void (*take)(void *ctx, int lane, size_t b), void *ctx) {
  struct ordered o = {first, n, first, SIZE_MAX, make, take, ctx, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
  struct lane lanes[2] = {{&o, 0}, {&o, 1}};
  struct call second = {lane_job, &lanes[1]};
  pthread_t th;
  if (first + 1 < n && pthread_create(&th, NULL, start, &second) == 0) {
    lane_job(&lanes[0]);
    pthread_join(th, NULL);
  } else { /* one thread: the blocks in order */
    for (size_t b = first; b < n && o.stop == SIZE_MAX; b++)
      if (make(ctx, (int)((b - first) % 2), b)) o.stop = b;
      else take(ctx, (int)((b - first) % 2), b);
  }
  pthread_mutex_destroy(&o.mu);
  pthread_cond_destroy(&o.turn);
  return o.stop < n ? o.stop : n;
}
