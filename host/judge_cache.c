/* The judge's answer cache on disk (see judge_cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "files.h"
#include "judge_cache.h"

int judge_cache_key(const char *data, size_t len, char hex[65]) {
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

/* Only a well-formed key makes a path, so no key can name a file elsewhere. */
static int entry_path(const char *dir, const char *key, char *out, size_t n, int folder_only) {
  if (strlen(key) != 64 || strspn(key, "0123456789abcdef") != 64) {
    errno = EINVAL;
    return -1;
  }
  int w = folder_only ? snprintf(out, n, "%s/%.2s", dir, key)
                      : snprintf(out, n, "%s/%.2s/%s.json", dir, key, key);
  if (w < 0 || (size_t)w >= n) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

int judge_cache_check(const char *dir, const char *key) {
  char path[PATH_MAX];
  return entry_path(dir, key, path, sizeof path, 0);
}

char *judge_cache_get(const char *dir, const char *key, size_t *len, int *not_regular) {
  char path[PATH_MAX];
  *not_regular = 0;
  if (entry_path(dir, key, path, sizeof path, 0)) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return NULL;
  struct stat st;
  char *data = NULL;
  int ok = fstat(fd, &st) == 0;
  if (ok && !S_ISREG(st.st_mode)) {
    *not_regular = 1;
    errno = EINVAL;
  } else if (ok && (data = malloc((size_t)st.st_size + 1))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    data[got] = '\0';
    *len = got;
  }
  int e = errno;
  close(fd);
  errno = e;
  return data;
}

int judge_cache_tmp_name(const char *path, char *out, size_t n) {
  char host[256];
  if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (*p == '/') *p = '_';
  int w = snprintf(out, n, "%s.tmp.%s.%ld", path, host, (long)getpid());
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* No fsync: rename is atomic against a killed process, which is the failure
 * that matters for a cache; after a power loss a damaged entry does not
 * parse, is treated as a miss and written again. */
static int open_tmp(const char *tmp) {
  return open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
}

/* The entry's folder is made only when the first open finds it missing: a
 * folder made on every write cost more than the write itself. */
int judge_cache_put(const char *dir, const char *key, const char *data, size_t len) {
  char path[PATH_MAX], tmp[PATH_MAX + 300];
  if (entry_path(dir, key, path, sizeof path, 0)) return -1;
  if (judge_cache_tmp_name(path, tmp, sizeof tmp)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = open_tmp(tmp);
  if (fd < 0 && errno == ENOENT) {
    char folder[PATH_MAX];
    if (entry_path(dir, key, folder, sizeof folder, 1) || evalua_make_dir(folder)) return -1;
    fd = open_tmp(tmp);
  }
  if (fd < 0) return -1;
  int r = evalua_write_all(fd, data, len);
  if (close(fd)) r = -1;
  if (!r && rename(tmp, path)) r = -1;
  if (r) {
    int e = errno;
    unlink(tmp);
    errno = e;
  }
  return r;
}
