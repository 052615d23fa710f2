/* Judge cache entries: journaled at once, written behind on a thread.
 *
 * A cache folder is opened once per process as a store: a descriptor of
 * the folder (opened beneath --out under the sandbox, so no symbolic link
 * is followed below it), and this process's journal in it
 * (cache_journal.h). Putting an entry appends it to the journal in one
 * write(), so it survives the process being killed from then on, and
 * queues it for the writer thread, one per process, which puts the entry's
 * file in place (client_cache_put) relative to the store's descriptor.
 * Creating a file costs a fraction of a millisecond, on the thread that
 * should be sending the next request; a journal record costs a few
 * microseconds. Until an entry is on disk, cache_store_get finds it in the
 * queue, so an answer is never asked for twice while its file is written.
 *
 * A journal segment whose entries are all written is emptied once it holds
 * 1 MB (a new one is begun past 8 MB while entries wait), and removed at a
 * normal exit; one of a killed process is replayed into entries by the next
 * process that opens the folder for writing. A write that fails is kept
 * with the sink the caller named, for the caller to collect
 * (cache_writer_failures) and account for, and its journal is kept for the
 * next replay. At most 1,024 entries or 64 MB wait; past that the caller
 * waits for the disk. Plain C, no Lua. */
#ifndef EVALUA_CACHE_WRITER_H
#define EVALUA_CACHE_WRITER_H

#include <stddef.h>

#include "cache_journal.h"

struct cache_store;

/* The store of the folder dirfd refers to (found by device and inode when
 * the process has it open already), taking dirfd over; name is how
 * messages call the folder. nofollow: no symbolic link below it is
 * followed (the sandbox; once set for a folder it stays). With write,
 * journals of dead processes are replayed into entries first. NULL with
 * errno set. */
struct cache_store *cache_store_open(int dirfd, const char *name, int nofollow, int write);
void cache_store_release(struct cache_store *s);

/* What the replay at the store's opening found, once: 1 and *r filled for
 * the first caller, 0 after. */
int cache_store_take_replay(struct cache_store *s, struct journal_replay *r);

/* Journals data as key's entry and queues it (copied). 0; -1 with errno set
 * when it was not queued (EINVAL for a malformed key, ENOMEM); -2 with
 * errno set when it was queued but could not be journaled (a full disk):
 * it is then not safe from a kill, and a failure to write it is not
 * reported again. When no thread can be started the entry is written at
 * once, with client_cache_put's result. */
int cache_writer_put(struct cache_store *s, const char *key, const char *data, size_t len, int sink);

/* key's entry: the newest queued one, else the one on disk, as
 * client_cache_get returns it. */
char *cache_store_get(struct cache_store *s, const char *key, size_t *len, int *not_regular);

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
