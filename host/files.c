/* Small POSIX file helpers shared by the CLI, _sys and the judge cache. */
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

int evalua_write_atomic_at(int dirfd, const char *name, int oflags, const char *data, size_t n) {
  size_t len = strlen(name) + 32;
  char *tmp = malloc(len);
  if (!tmp) return -1;
  snprintf(tmp, len, "%s.tmp.%ld", name, (long)getpid());
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | oflags, 0666);
  int r = fd < 0 ? -1 : 0;
  if (!r && (evalua_write_all(fd, data, n) || fsync(fd))) r = -1;
  if (fd >= 0 && close(fd)) r = -1;
  if (!r && renameat(dirfd, tmp, dirfd, name)) r = -1;
  if (r && fd >= 0) {
    int e = errno;
    unlinkat(dirfd, tmp, 0);
    errno = e;
  }
  free(tmp);
  return r;
}
