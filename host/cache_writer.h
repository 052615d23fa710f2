/* Judge cache entries written behind, on a thread of their own.
 *
 * Creating a file costs the caller a fraction of a millisecond (much more
 * on a file system with many recent deletions), on the thread that should
 * be sending the next request. Entries are queued here and written, in
 * order, by one writer thread per process with judge_cache_put. Until an
 * entry is on disk, cache_writer_pending finds it, so an answer is never
 * asked for twice because its file is still being written.
 *
 * A write that fails is kept with the sink the caller named, for the
 * caller to collect (cache_writer_failures) and account for. The queue is
 * drained when the process exits normally; failures nobody collected are
 * then printed on stderr. A killed process loses what was still queued:
 * the answers that arrived since the writer last caught up. At most 1,024
 * entries or 64 MB wait; past that the caller waits for the disk. Plain
 * C, no Lua. */
#ifndef EVALUA_CACHE_WRITER_H
#define EVALUA_CACHE_WRITER_H

#include <stddef.h>

/* Queues data as key's entry in dir (copied). 0, or -1 with errno set:
 * EINVAL for a malformed key, ENAMETOOLONG, ENOMEM. When no thread can be
 * started the entry is written at once, with judge_cache_put's result. */
int cache_writer_put(const char *dir, const char *key, const char *data, size_t len, int sink);

/* The newest queued entry for (dir, key) as a malloc'd, NUL-terminated
 * copy with *len set, or NULL when none is queued (or no memory for the
 * copy: the caller then reads the disk, as for an entry not queued). */
char *cache_writer_pending(const char *dir, const char *key, size_t *len);

/* A sink number no other caller in the process has had, so a failure
 * reaches its own writer even when several Lua states queue entries. */
int cache_writer_new_sink(void);

/* Blocks until every entry queued so far is written (or has failed). */
void cache_writer_settle(void);

/* A failed write: the sink given to cache_writer_put and why. */
struct cache_failure {
  struct cache_failure *next;
  int sink;
  char message[];
};

/* The failures since the last call, oldest first; the caller frees each
 * with free(). NULL when there are none. */
struct cache_failure *cache_writer_failures(void);

#endif
