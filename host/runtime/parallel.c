/* Two jobs at once on two threads (parallel.h). */
#include <pthread.h>

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
