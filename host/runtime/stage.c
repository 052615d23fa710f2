/* A folder's files replaced all at once (stage.h). */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "stage.h"

#define TMP ".evalua-tmp-" /* being written, or the old folder after an exchange: removed */
#define PUB ".evalua-pub-" /* whole, its files being moved in one by one: moved on */

static int flock_retry(int fd, int op) {
  int r;
  while ((r = flock(fd, op)) != 0 && errno == EINTR) {}
  return r;
}

/* A lock the file system cannot give (NFS gives flock only on files open
 * for writing) is done without: writers beside each other are then not
 * kept apart, and no staging folder is taken for a dead one. */
static int lock_parent(int fd) {
  return flock_retry(fd, LOCK_EX) && errno != EBADF && errno != ENOLCK && errno != EOPNOTSUPP ? -1 : 0;
}

static int is_dir_entry(int dirfd, const struct dirent *e) {
  if (e->d_type != DT_UNKNOWN) return e->d_type == DT_DIR;
  struct stat st;
  return !fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

static int dotted(const char *name) { return !strcmp(name, ".") || !strcmp(name, ".."); }

/* Calls fn(fd, name, ud) for each entry of folder fd; returns the first
 * nonzero result, or -1 when the folder cannot be listed. */
static int each_entry(int fd, int (*fn)(int fd, const struct dirent *e, void *ud), void *ud) {
  int copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = copy < 0 ? NULL : fdopendir(copy);
  if (!d) {
    if (copy >= 0) close(copy);
    return -1;
  }
  int r = 0;
  for (struct dirent *e; !r && (e = readdir(d));)
    if (!dotted(e->d_name)) r = fn(fd, e, ud);
  closedir(d);
  return r;
}

/* A staging folder holds files only: a folder inside is not ours (1). */
static int remove_file(int fd, const struct dirent *e, void *ud) {
  (void)ud;
  if (is_dir_entry(fd, e)) return 1;
  unlinkat(fd, e->d_name, 0);
  return 0;
}

/* Removes folder name of parent, whose descriptor is fd, with its files. */
static void remove_staging(int parent, const char *name, int fd) {
  if (each_entry(fd, remove_file, NULL) == 0) unlinkat(parent, name, AT_REMOVEDIR);
}

static int move_file(int fd, const struct dirent *e, void *ud) {
  if (is_dir_entry(fd, e)) return 1;
  return renameat(fd, e->d_name, *(int *)ud, e->d_name) ? -1 : 0;
}

/* The kind of a staging folder's name: 't' (TMP), 'p' (PUB) or 0; *base
 * gets the length of the target's name before the suffix. Names end in
 * -PID-SEQ. */
static int staging_kind(const char *name, size_t *base) {
  const char *s = strstr(name, ".evalua-");
  for (const char *next; s && (next = strstr(s + 1, ".evalua-"));) s = next;
  if (!s) return 0;
  int kind = !strncmp(s, TMP, sizeof TMP - 1) ? 't' : !strncmp(s, PUB, sizeof PUB - 1) ? 'p' : 0;
  const char *p = s + sizeof TMP - 1;
  size_t a = strspn(p, "0123456789");
  if (!kind || !a || p[a] != '-' || !p[a + 1] || p[a + 1 + strspn(p + a + 1, "0123456789")]) return 0;
  *base = (size_t)(s - name);
  return kind;
}

/* What earlier evalua versions left: TARGET.tmp-PID beside, .tmp-PID inside,
 * unlocked; theirs while that process lives. */
static int legacy_dead(const struct evalua_stage *st, const char *name) {
  const char *p = name;
  if (!st->inside) {
    size_t n = strlen(st->target);
    if (strncmp(name, st->target, n)) return 0;
    p += n;
  }
  if (strncmp(p, ".tmp-", 5) || !p[5] || p[5 + strspn(p + 5, "0123456789")]) return 0;
  long pid = strtol(p + 5, NULL, 10);
  return pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH;
}

struct stale {
  char **names;
  size_t n, cap;
  const struct evalua_stage *st;
};

static int collect_stale(int fd, const struct dirent *e, void *ud) {
  (void)fd;
  struct stale *s = ud;
  size_t base;
  if (!staging_kind(e->d_name, &base) && !legacy_dead(s->st, e->d_name)) return 0;
  if (!strcmp(e->d_name, s->st->name)) return 0; /* this writer's own */
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 8;
    char **names = realloc(s->names, cap * sizeof *names);
    if (!names) return 0;
    s->names = names, s->cap = cap;
  }
  if ((s->names[s->n] = strdup(e->d_name))) s->n++;
  return 0;
}

/* One staging folder left by a dead writer (its flock is free): a TMP one
 * removed, a PUB one moved on into the folder it was for. */
static void clean_one(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (flock(fd, LOCK_EX | LOCK_NB)) { /* its writer lives (or the file system gives no lock) */
    close(fd);
    return;
  }
  size_t base = 0;
  if (staging_kind(name, &base) == 'p') {
    char target[NAME_MAX + 1];
    snprintf(target, sizeof target, "%.*s", (int)base, name);
    int to = openat(parent, base ? target : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (to >= 0) each_entry(fd, move_file, &to), close(to);
  }
  remove_staging(parent, name, fd);
  close(fd);
}

/* What dead writers left in the parent folder. Under the parent's lock, so
 * two writers never clean (or publish) at once. */
static void clean_stale(const struct evalua_stage *st) {
  struct stale s = {NULL, 0, 0, st};
  each_entry(st->parent, collect_stale, &s);
  for (size_t i = 0; i < s.n; i++) {
    clean_one(st->parent, s.names[i]);
    free(s.names[i]);
  }
  free(s.names);
}

int evalua_stage_open(struct evalua_stage *st, int parent, const char *target, int inside) {
  static unsigned seq;
  st->parent = parent, st->inside = inside, st->fd = -1, st->name[0] = '\0';
  size_t n = strlen(target);
  if (n > NAME_MAX - 40) {
    close(parent);
    st->parent = -1;
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(st->target, target, n + 1);
  snprintf(st->name, sizeof st->name, "%s" TMP "%ld-%u", inside ? "" : target, (long)getpid(), ++seq);
  int r = lock_parent(parent);
  if (!r) {
    clean_stale(st); /* first, so that a full disk has room again */
    r = mkdirat(parent, st->name, 0777);
    if (!r) st->fd = openat(parent, st->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->fd >= 0 && flock(st->fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) r = -1;
    if (!r && st->fd < 0) r = -1;
  }
  int e = errno;
  flock(parent, LOCK_UN);
  if (r) {
    evalua_stage_close(st);
    errno = e;
    return -1;
  }
  return 0;
}

/* Whether folder fd is the working folder or holds it: exchanging it would
 * leave this process (and evalua's relative paths) in the removed one. */
static int holds_cwd(int fd) {
  struct stat d, c, u;
  if (fstat(fd, &d)) return 1;
  int at = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), found = 0;
  for (int depth = 0; at >= 0 && depth < 4096; depth++) {
    if (fstat(at, &c)) break;
    if (c.st_dev == d.st_dev && c.st_ino == d.st_ino) {
      found = 1;
      break;
    }
    int up = openat(at, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int root = up < 0 || fstat(up, &u) || (u.st_dev == c.st_dev && u.st_ino == c.st_ino);
    close(at);
    at = up;
    if (root) break;
  }
  if (at >= 0) close(at);
  return found;
}

struct carry {
  const struct evalua_stage *st;
  const char *const *files;
  size_t n;
};

static int listed(const char *name, const char *const *files, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(files[i], name)) return 1;
  return 0;
}

/* Every other entry of the old folder is linked into the new one, so the
 * exchange keeps it; a folder cannot be linked, and stops the exchange. */
static int carry_entry(int fd, const struct dirent *e, void *ud) {
  struct carry *c = ud;
  if (is_dir_entry(fd, e)) return 1;
  if (listed(e->d_name, c->files, c->n)) return 0;
  return linkat(fd, e->d_name, c->st->fd, e->d_name, 0) ? 1 : 0;
}

static int unlink_carried(int fd, const struct dirent *e, void *ud) {
  struct carry *c = ud;
  if (!listed(e->d_name, c->files, c->n) && !is_dir_entry(fd, e)) unlinkat(fd, e->d_name, 0);
  return 0;
}

/* The staging folder takes the target's place in one exchange; 0 when it
 * cannot (the caller then moves the files). */
static int exchange(struct evalua_stage *st, int target, const char *const *files, size_t n) {
  struct carry c = {st, files, n};
  struct stat sb;
  if (holds_cwd(target) || fstat(target, &sb) || each_entry(target, carry_entry, &c) != 0 ||
      fchmod(st->fd, sb.st_mode & 07777) || renameat2(st->parent, st->name, st->parent, st->target, RENAME_EXCHANGE)) {
    each_entry(st->fd, unlink_carried, &c);
    return 0;
  }
  evalua_test_pause("report-exchanged");
  int old = openat(st->parent, st->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (old >= 0) remove_staging(st->parent, st->name, old), close(old);
  st->name[0] = '\0';
  return EVALUA_EXCHANGED;
}

/* The fallback: the staging folder is renamed PUB (whole: a dead writer's
 * is moved on by the next write), then each file moves with its rename. */
static int move_files(struct evalua_stage *st, int target, const char *const *files, size_t n) {
  char pub[sizeof st->name];
  memcpy(pub, st->name, sizeof pub);
  char *tmp = strstr(pub, TMP);
  memcpy(tmp, PUB, sizeof PUB - 1);
  if (renameat(st->parent, st->name, st->parent, pub)) return -1;
  memcpy(st->name, pub, sizeof pub); /* from here on the next write finishes what this one leaves */
  for (size_t i = 0; i < n; i++) {
    if (renameat(st->fd, files[i], target, files[i])) return -1;
    if (i == 0) evalua_test_pause("report-moving");
  }
  unlinkat(st->parent, st->name, AT_REMOVEDIR);
  st->name[0] = '\0';
  return EVALUA_MOVED;
}

int evalua_stage_publish(struct evalua_stage *st, const char *const *files, size_t n) {
  evalua_test_pause("report-staged");
  if (lock_parent(st->parent)) return -1;
  clean_stale(st); /* a writer killed while this one wrote may have left files half moved */
  int how = -1, e = 0;
  if (st->inside) {
    how = move_files(st, st->parent, files, n);
  } else if (!renameat2(st->parent, st->name, st->parent, st->target, RENAME_NOREPLACE)) {
    st->name[0] = '\0';
    how = EVALUA_CREATED;
  } else if (errno == EINVAL || errno == ENOSYS || errno == EEXIST) {
    struct stat sb;
    if (fstatat(st->parent, st->target, &sb, AT_SYMLINK_NOFOLLOW)) {
      if (errno == ENOENT && !renameat(st->parent, st->name, st->parent, st->target)) st->name[0] = '\0', how = EVALUA_CREATED;
    } else if (!S_ISDIR(sb.st_mode)) {
      errno = ENOTDIR;
    } else {
      int target = openat(st->parent, st->target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (target >= 0) {
        how = exchange(st, target, files, n);
        if (!how) how = move_files(st, target, files, n);
        e = errno;
        close(target);
        errno = e;
      }
    }
  }
  e = errno;
  flock(st->parent, LOCK_UN);
  errno = e;
  return how;
}

void evalua_stage_close(struct evalua_stage *st) {
  if (st->fd >= 0 && st->name[0] && strstr(st->name, TMP)) remove_staging(st->parent, st->name, st->fd);
  if (st->fd >= 0) close(st->fd); /* releases the flock: a PUB folder left now is the next write's to finish */
  if (st->parent >= 0) close(st->parent);
  st->fd = st->parent = -1;
  st->name[0] = '\0';
}
