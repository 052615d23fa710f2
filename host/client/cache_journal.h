/* The judge cache's journal: each answer is appended, in one write(), to
 * a journal file of this process as it is stored, so a process killed
 * (kill -9, the OOM killer) before the writer thread has put the answer's
 * entry file in place loses nothing: the next process that opens the cache
 * for writing replays journals whose owner is dead into entries.
 *
 * Journals live in DIR/journal/, one or more segments per process, named
 * HOST.PID.N; the owner holds an flock on each for its life, which is how
 * a replayer tells a dead owner's journal from a live one (also across
 * machines sharing DIR, where NFS supports locks). A record is
 *
 *   "evj1 " KEY " " LEN " " SUM "\n" DATA "\n"
 *
 * (KEY the entry's 64 hex digits, LEN and SUM 16 hex digits: the data's
 * length and a checksum of key and data), so a torn last record (a kill
 * inside the write, a power loss) is recognised and skipped. A write that
 * fails (a full disk) is cut back off the file, so no torn record is left
 * in the middle. Plain C, no Lua. */
#ifndef EVALUA_CACHE_JOURNAL_H
#define EVALUA_CACHE_JOURNAL_H

#include <stddef.h>
#include <sys/types.h>

#define JOURNAL_DIR "journal"

/* An open segment this process appends to. */
struct journal {
  int fd;
  off_t size;      /* bytes of whole records in it */
  char name[300];  /* in JOURNAL_DIR */
};

/* Creates a new segment in the cache folder dirfd (making JOURNAL_DIR when
 * missing) and locks it; 0, or -1 with errno set. */
int journal_create(int dirfd, int nofollow, struct journal *j);

/* Appends one record in one write(), its data at offset *data_at of the
 * file (readable back with journal_read while the segment lives); 0, or -1
 * with errno set (the file is then as it was). */
int journal_append(struct journal *j, const char *key, const char *data, size_t len, off_t *data_at);

/* Reads back len bytes of data at offset at into a malloc'd,
 * NUL-terminated buffer; NULL with errno set. */
char *journal_read(const struct journal *j, off_t at, size_t len);

/* Empties a segment whose records all have their entries. */
int journal_truncate(struct journal *j);

/* Closes a segment; with remove, deletes it first. */
void journal_close(int dirfd, int nofollow, struct journal *j, int remove);

/* What a replay found. */
struct journal_replay {
  long journals;   /* journals of dead owners replayed and removed */
  long entries;    /* entries written from them */
  long torn;       /* records skipped as torn or damaged */
  long failed;     /* entries that could not be written; their journal is kept */
  int err;         /* errno of the first failure, 0 if none */
};

/* Replays every journal in the cache folder dirfd whose owner is dead:
 * each whole record is written as its entry, in order (a later record for
 * a key wins, as it would have in the dead process), then the journal is
 * removed (kept when an entry could not be written, for the next replay).
 * Journals of live owners (this process's too) are left alone. */
void journal_replay_dead(int dirfd, int nofollow, struct journal_replay *r);

#endif
