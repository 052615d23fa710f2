/* The judge's answer cache on disk (see cache.h). Trusted, names go
 * through the folder's descriptor as "ab/KEY.json", one call each; under
 * nofollow the two-digit folder is opened first with O_NOFOLLOW (or the
 * entry with openat2's RESOLVE_NO_SYMLINKS), since rename has no way to
 * refuse links on the way. */
#define _GNU_SOURCE /* RESOLVE_* */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "files.h"
#include "cache.h"

int client_cache_key(const char *data, size_t len, char hex[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32) return -1;
  static const char digits[] = "0123456789abcdef";
  for (unsigned i = 0; i < n; i++) {
    hex[2 * i] = digits[md[i] >> 4];
    hex[2 * i + 1] = digits[md[i] & 15];
  }
  hex[64] = '\0';
  return 0;
}

int client_cache_check(const char *key) {
  if (strlen(key) == 64 && strspn(key, "0123456789abcdef") == 64) return 0;
  errno = EINVAL;
  return -1;
}

/* The entry's two-digit folder beneath dirfd, made when create and it is
 * missing, and the entry's name in it; -1 with errno set. */
static int open_folder(int dirfd, int nofollow, const char *key, int create, char name[70]) {
  if (client_cache_check(key)) return -1;
  char folder[3] = {key[0], key[1], '\0'};
  snprintf(name, 70, "%s.json", key);
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
  int fd = openat(dirfd, folder, flags);
  /* made only when missing: a folder made on every write cost more than the write */
  if (fd < 0 && errno == ENOENT && create && (mkdirat(dirfd, folder, 0777) == 0 || errno == EEXIST))
    fd = openat(dirfd, folder, flags);
  struct stat st; /* O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: say what it is */
  if (fd < 0 && errno == ENOTDIR && nofollow && !fstatat(dirfd, folder, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
    errno = ELOOP;
  return fd;
}

static char *read_fd(int fd, size_t *len, int *not_regular) {
  struct stat st;
  char *data = NULL;
  if (fstat(fd, &st)) return NULL;
  if (!S_ISREG(st.st_mode)) {
    *not_regular = 1;
    errno = EINVAL;
    return NULL;
  }
  if (!(data = malloc((size_t)st.st_size + 1))) return NULL;
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  data[got] = '\0';
  *len = got;
  return data;
}

/* The entry opened for reading in one call: openat, or openat2 refusing
 * links; -1 with errno = ENOSYS where the kernel lacks openat2. */
static int open_entry(int dirfd, int nofollow, const char *key) {
  char rel[80];
  snprintf(rel, sizeof rel, "%.2s/%s.json", key, key);
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (!nofollow) return openat(dirfd, rel, flags);
  struct open_how how = {.flags = (unsigned)flags, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
  return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how); /* a link on the way: ELOOP */
}

char *client_cache_get(int dirfd, int nofollow, const char *key, size_t *len, int *not_regular) {
  char name[70];
  *not_regular = 0;
  if (client_cache_check(key)) return NULL;
  int fd = open_entry(dirfd, nofollow, key);
  if (fd < 0 && errno == ENOSYS) { /* no openat2: the folder, then the entry, each without following */
    int folder = open_folder(dirfd, nofollow, key, 0, name);
    if (folder < 0) return NULL;
    fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    int e = errno;
    close(folder);
    errno = e;
  }
  if (fd < 0) return NULL;
  char *data = read_fd(fd, len, not_regular);
  int e = errno;
  close(fd);
  errno = e;
  return data;
}

int client_cache_tmp_name(const char *name, char *out, size_t n) {
  char host[256];
  if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (*p == '/') *p = '_';
  int w = snprintf(out, n, "%s.tmp.%s.%ld", name, host, (long)getpid());
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* No fsync: rename is atomic against a killed process, which is the failure
 * that matters for a cache; after a power loss a damaged entry does not
 * parse, is treated as a miss and written again. */
/* Writes data through a temporary name and renames it into place, both
 * relative to folder; 0, or -1 with errno set. */
static int put_in(int folder, const char *name, const char *tmp, const char *data, size_t len) {
  int fd = openat(folder, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) return -1;
  int r = evalua_write_all(fd, data, len);
  if (close(fd)) r = -1;
  if (!r && renameat(folder, tmp, folder, name)) r = -1;
  if (r) {
    int e = errno;
    unlinkat(folder, tmp, 0);
    errno = e;
  }
  return r;
}

int client_cache_put(int dirfd, int nofollow, const char *key, const char *data, size_t len) {
  char name[80], tmp[400];
  if (client_cache_check(key)) return -1;
  if (!nofollow) { /* "ab/KEY.json" from the folder; "ab" made on the first ENOENT */
    snprintf(name, sizeof name, "%.2s/%s.json", key, key);
    if (client_cache_tmp_name(name, tmp, sizeof tmp)) return errno = ENAMETOOLONG, -1;
    int r = put_in(dirfd, name, tmp, data, len);
    char folder[3] = {key[0], key[1], '\0'};
    if (r && errno == ENOENT && (mkdirat(dirfd, folder, 0777) == 0 || errno == EEXIST))
      r = put_in(dirfd, name, tmp, data, len);
    return r;
  }
  int folder = open_folder(dirfd, nofollow, key, 1, name);
  if (folder < 0) return -1;
  int r = client_cache_tmp_name(name, tmp, sizeof tmp) ? (errno = ENAMETOOLONG, -1) : put_in(folder, name, tmp, data, len);
  int e = errno;
  close(folder);
  errno = e;
  return r;
}
