/* The judge cache's journal (see cache_journal.h). */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cache_journal.h"
#include "cache.h"

#define MAGIC "evj1 "
#define HEADER 104 /* "evj1 " + 64 + " " + 16 + " " + 16 + "\n" */

/* A checksum against torn and damaged records (not against an attacker:
 * whoever can write the journal can write the entries). */
static uint64_t checksum(const char *key, const char *data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 64; i++) h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
  const unsigned char *p = (const unsigned char *)data;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; n; p++, n--) h = (h ^ *p) * 0x100000001b3ULL;
  return h;
}

static int open_journal_dir(int dirfd, int nofollow, int create) {
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
  int fd = openat(dirfd, JOURNAL_DIR, flags);
  if (fd < 0 && errno == ENOENT && create && (mkdirat(dirfd, JOURNAL_DIR, 0777) == 0 || errno == EEXIST))
    fd = openat(dirfd, JOURNAL_DIR, flags);
  return fd;
}

int journal_create(int dirfd, int nofollow, struct journal *j) {
  char host[256];
  if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (*p == '/') *p = '_';
  int dir = open_journal_dir(dirfd, nofollow, 1);
  if (dir < 0) return -1;
  static unsigned serial;
  j->fd = -1;
  for (int tries = 0; j->fd < 0 && tries < 1000; tries++) {
    snprintf(j->name, sizeof j->name, "%.200s.%ld.%u", host, (long)getpid(), serial++);
    j->fd = openat(dir, j->name, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (j->fd < 0 && errno != EEXIST) break;
  }
  int e = errno;
  close(dir);
  if (j->fd < 0) return errno = e, -1;
  if (flock(j->fd, LOCK_EX | LOCK_NB)) { /* cannot fail on a new file but over NFS without locks */
    e = errno;
    close(j->fd);
    j->fd = -1;
    return errno = e, -1;
  }
  j->size = 0;
  return 0;
}

int journal_append(struct journal *j, const char *key, const char *data, size_t len, off_t *data_at) {
  char head[HEADER + 1];
  snprintf(head, sizeof head, MAGIC "%.64s %016llx %016llx\n", key, (unsigned long long)len,
           (unsigned long long)checksum(key, data, len));
  struct iovec iov[3] = {{head, HEADER}, {(void *)data, len}, {"\n", 1}};
  size_t want = HEADER + len + 1;
  ssize_t w;
  do w = writev(j->fd, iov, 3);
  while (w < 0 && errno == EINTR);
  if (w == (ssize_t)want) {
    if (data_at) *data_at = j->size + HEADER;
    j->size += (off_t)want;
    return 0;
  }
  int e = w < 0 ? errno : ENOSPC; /* a short write: the disk is full */
  if (w > 0 && ftruncate(j->fd, j->size)) {} /* no torn record left behind; if this fails, replay skips it */
  errno = e;
  return -1;
}

char *journal_read(const struct journal *j, off_t at, size_t len) {
  char *data = malloc(len + 1);
  size_t got = 0;
  while (data && got < len) {
    ssize_t r = pread(j->fd, data + got, len - got, at + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : EIO;
      free(data);
      return errno = e, NULL;
    }
    got += (size_t)r;
  }
  if (data) data[len] = '\0';
  else errno = ENOMEM;
  return data;
}

int journal_truncate(struct journal *j) {
  if (ftruncate(j->fd, 0)) return -1;
  j->size = 0;
  return 0;
}

void journal_close(int dirfd, int nofollow, struct journal *j, int remove) {
  if (j->fd < 0) return;
  if (remove) {
    int dir = open_journal_dir(dirfd, nofollow, 0);
    if (dir >= 0) {
      unlinkat(dir, j->name, 0); /* while still locked: no replayer takes it meanwhile */
      close(dir);
    }
  }
  close(j->fd);
  j->fd = -1;
}

/* Parses the header at p (n bytes left); the data's length, or -1. */
static long long record_at(const char *p, size_t n, const char **key) {
  if (n < HEADER + 1 || memcmp(p, MAGIC, 5) || p[69] != ' ' || p[86] != ' ' || p[103] != '\n') return -1;
  char num[17], *end;
  memcpy(num, p + 70, 16), num[16] = '\0';
  unsigned long long len = strtoull(num, &end, 16);
  if (end != num + 16 || len > n - HEADER - 1 || p[HEADER + len] != '\n') return -1;
  memcpy(num, p + 87, 16);
  unsigned long long sum = strtoull(num, &end, 16);
  *key = p + 5;
  if (end != num + 16 || sum != checksum(*key, p + HEADER, (size_t)len)) return -1;
  return (long long)len;
}

/* Writes the records of a locked journal's text as entries; 0, or -1 when
 * one could not be written. */
static int replay_text(int dirfd, int nofollow, const char *text, size_t n, struct journal_replay *r) {
  int ok = 0;
  for (size_t at = 0; at < n;) {
    const char *key;
    long long len = record_at(text + at, n - at, &key);
    if (len < 0) { /* torn or damaged: look for the next record */
      r->torn++;
      const char *next = memmem(text + at + 1, n - at - 1, "\n" MAGIC, 6);
      if (!next) break;
      at = (size_t)(next + 1 - text);
      continue;
    }
    char hex[65];
    memcpy(hex, key, 64), hex[64] = '\0';
    if (client_cache_put(dirfd, nofollow, hex, text + at + HEADER, (size_t)len) == 0) r->entries++;
    else {
      r->failed++;
      if (!r->err) r->err = errno;
      ok = -1;
    }
    at += HEADER + (size_t)len + 1;
  }
  return ok;
}

/* Replays one journal if its owner is dead (its lock can be taken). */
static void replay_one(int dirfd, int nofollow, int dir, const char *name, struct journal_replay *r) {
  int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (flock(fd, LOCK_EX | LOCK_NB) || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink == 0) {
    close(fd); /* live, or removed by another replayer after we opened it */
    return;
  }
  int kept = 0;
  if (st.st_size > 0) {
    void *text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (text == MAP_FAILED) {
      kept = 1;
      r->failed++;
      if (!r->err) r->err = errno;
    } else {
      kept = replay_text(dirfd, nofollow, text, (size_t)st.st_size, r) != 0;
      munmap(text, (size_t)st.st_size);
    }
  }
  if (!kept && unlinkat(dir, name, 0) == 0) r->journals++;
  close(fd);
}

void journal_replay_dead(int dirfd, int nofollow, struct journal_replay *r) {
  memset(r, 0, sizeof *r);
  int dir = open_journal_dir(dirfd, nofollow, 0);
  if (dir < 0) return;
  int listing = dup(dir);
  DIR *d = listing >= 0 ? fdopendir(listing) : NULL;
  if (!d) {
    if (listing >= 0) close(listing);
    close(dir);
    return;
  }
  for (struct dirent *de; (de = readdir(d));)
    if (de->d_name[0] != '.') replay_one(dirfd, nofollow, dir, de->d_name, r);
  closedir(d);
  close(dir);
}
