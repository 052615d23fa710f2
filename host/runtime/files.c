/* Small POSIX file helpers shared by the CLI, _sys and the judge cache. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int evalua_make_dir(const char *path) {
  char *copy = strdup(path);
  if (!copy) return -1;
  int r = 0;
  for (char *p = copy + 1; *p && !r; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(copy, 0777) && errno != EEXIST) r = -1;
    *p = '/';
  }
  if (!r && mkdir(copy, 0777) && errno != EEXIST) r = -1;
  free(copy);
  return r;
}

int evalua_write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    s += w, n -= (size_t)w;
  }
  return 0;
}

int evalua_write_atomic(const char *path, const char *data, size_t n) {
  return evalua_write_atomic_at(AT_FDCWD, path, 0, data, n);
}

/* The data in an unnamed file (O_TMPFILE) in name's folder, given the
 * temporary name tmp once whole: a kill while writing leaves nothing. 0, 1
 * when O_TMPFILE or /proc is missing (write a named file instead), -1. */
static int write_unnamed(int dirfd, const char *name, const char *tmp, const char *data, size_t n) {
  const char *slash = strrchr(name, '/');
  char *folder = slash ? strndup(name, slash == name ? 1 : (size_t)(slash - name)) : NULL;
  if (slash && !folder) return -1;
  int fd = openat(dirfd, folder ? folder : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  free(folder);
  if (fd < 0) return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ? 1 : -1;
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int r = evalua_write_all(fd, data, n) || fsync(fd) ? -1 : 0;
  if (!r) evalua_test_pause("atomic-written");
  if (!r && linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW)) r = errno == ENOENT ? 1 : -1;
  int e = errno;
  close(fd);
  errno = e;
  return r;
}

int evalua_write_atomic_at(int dirfd, const char *name, int oflags, const char *data, size_t n) {
  size_t len = strlen(name) + 32;
  char *tmp = malloc(len);
  if (!tmp) return -1;
  snprintf(tmp, len, "%s.tmp.%ld", name, (long)getpid());
  int r = write_unnamed(dirfd, name, tmp, data, n), fd = -1;
  if (r == 1) { /* a named temporary file, removed on failure (not on a kill) */
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | oflags, 0666);
    r = fd < 0 || evalua_write_all(fd, data, n) || fsync(fd) ? -1 : 0;
    if (!r) evalua_test_pause("atomic-written");
    if (fd >= 0 && close(fd)) r = -1;
  }
  if (!r && renameat(dirfd, tmp, dirfd, name)) r = -1;
  if (r) {
    int e = errno;
    unlinkat(dirfd, tmp, 0);
    errno = e;
  }
  free(tmp);
  return r;
}

void evalua_test_pause(const char *point) {
  const char *v = getenv("EVALUA_TEST_PAUSE");
  size_t n = strlen(point);
  if (!v || strncmp(v, point, n) || v[n] != ':') return;
  int fd = open(v + n + 1, O_WRONLY | O_CLOEXEC); /* blocks until the test opens it to read */
  if (fd < 0) return;
  if (evalua_write_all(fd, point, n) || evalua_write_all(fd, "\n", 1)) { /* the test sees the end of the file */ }
  close(fd);
  for (;;) pause();
}
