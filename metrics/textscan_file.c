/* The text scan kept in a file of the viewer's cache (evm_ts_save,
 * evm_ts_load), so a later start reads it rather than every row again:
 * a header (magic, key, counts), then the arrays as they are in memory.
 * Loaded arrays are checked (offsets in order, references in range, each
 * text ended by its NUL) before a search trusts them. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evalua/textscan.h"
#include "textscan_impl.h"

static const char MAGIC[8] = "EVSCAN1";

/* All n bytes at p written to fd (out) or read from it: 0, or -1 (an error, or the file's end). */
static int whole(int fd, void *p, size_t n, int out) {
  char *c = p;
  while (n) {
    ssize_t k = out ? write(fd, c, n) : read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

static int put(int fd, const void *p, size_t n) { return whole(fd, (void *)(uintptr_t)p, n, 1); }
static int get(int fd, void *p, size_t n) { return whole(fd, p, n, 0); }

int evm_ts_save(const struct evm_textscan *ts, int fd, const char *key, size_t keylen) {
  uint64_t h[5] = {keylen, ts->len, ts->nstr, ts->nrow, ts->nref};
  if (put(fd, MAGIC, sizeof MAGIC) || put(fd, h, sizeof h) || put(fd, key, keylen) || put(fd, ts->text, ts->len) ||
      put(fd, ts->start, (ts->nstr + 1) * sizeof *ts->start) || put(fd, ts->hash, ts->nstr * sizeof *ts->hash) ||
      put(fd, ts->first, (ts->nrow + 1) * sizeof *ts->first) || put(fd, ts->key, ts->nrow * sizeof *ts->key) ||
      put(fd, ts->ref, ts->nref * sizeof *ts->ref))
    return -1;
  return 0;
}

/* *pp (of *cap items of size bytes) resized to m items, then its first n read from fd; 0, -1 short,
 * -2 out of memory. */
static int array(const struct evm_alloc *a, int fd, void *pp, size_t *cap, size_t m, size_t n, size_t size) {
  void **p = pp;
  void *q = evm_resize(a, *p, *cap, m, size);
  if (!q) return -2;
  *p = q;
  *cap = m;
  return get(fd, q, n * size);
}

static int valid(const struct evm_textscan *ts) {
  if (ts->len < 1 || ts->text[0] || ts->start[0] != 1 || ts->start[ts->nstr] != ts->len || ts->first[0] != 0 ||
      ts->first[ts->nrow] != ts->nref)
    return 0;
  for (size_t j = 0; j < ts->nstr; j++)
    if (ts->start[j + 1] <= ts->start[j] || ts->start[j + 1] > ts->len || ts->text[ts->start[j + 1] - 1]) return 0;
  for (size_t r = 0; r < ts->nrow; r++)
    if (ts->first[r + 1] < ts->first[r]) return 0;
  for (size_t x = 0; x < ts->nref; x++)
    if (ts->ref[x] >= ts->nstr) return 0;
  return 1;
}

struct evm_textscan *evm_ts_load(const struct evm_alloc *a, int fd, const char *key, size_t keylen, int *nomem) {
  char magic[sizeof MAGIC];
  uint64_t h[5];
  *nomem = 0;
  if (get(fd, magic, sizeof magic) || memcmp(magic, MAGIC, sizeof magic) || get(fd, h, sizeof h) || h[0] != keylen)
    return NULL;
  /* The counts against the file's size before anything is allocated for them: a damaged count is a
   * file to build again, not a request for terabytes. */
  struct stat st;
  if (fstat(fd, &st) || st.st_size < 0 || !h[1] || h[1] > ((uint64_t)1 << 48) || h[2] >= UINT32_MAX ||
      h[3] > ((uint64_t)1 << 40) || h[4] > ((uint64_t)1 << 40) || keylen > ((uint64_t)1 << 40))
    return NULL;
  uint64_t want = sizeof MAGIC + sizeof h + keylen + h[1] + (h[2] + 1) * sizeof(uint64_t) + h[2] * sizeof(uint32_t) +
                  (h[3] + 1) * sizeof(uint64_t) + h[3] * sizeof(int64_t) + h[4] * sizeof(uint32_t);
  if ((uint64_t)st.st_size != want) return NULL;
  char kb[512];
  for (size_t done = 0; done < keylen;) { /* the key, compared a block at a time */
    size_t n = keylen - done < sizeof kb ? keylen - done : sizeof kb;
    if (get(fd, kb, n) || memcmp(kb, key + done, n)) return NULL;
    done += n;
  }
  struct evm_textscan *ts = evm_ts_new(a);
  if (!ts) return *nomem = 1, NULL;
  ts->len = h[1], ts->nstr = h[2], ts->nrow = h[3], ts->nref = h[4];
  const struct evm_alloc *m = &ts->a;
  size_t none = 0; /* hash[] and key[] keep the capacities of start[] and first[] */
  int e = array(m, fd, &ts->text, &ts->cap_text, ts->len, ts->len, 1);
  if (!e) e = array(m, fd, &ts->start, &ts->cap_start, ts->nstr + 1, ts->nstr + 1, sizeof *ts->start);
  if (!e) e = array(m, fd, &ts->hash, &none, ts->cap_start, ts->nstr, sizeof *ts->hash);
  none = 0;
  if (!e) e = array(m, fd, &ts->first, &ts->cap_first, ts->nrow + 1, ts->nrow + 1, sizeof *ts->first);
  if (!e) e = array(m, fd, &ts->key, &none, ts->cap_first, ts->nrow, sizeof *ts->key);
  if (!e && ts->nref) e = array(m, fd, &ts->ref, &ts->cap_ref, ts->nref, ts->nref, sizeof *ts->ref);
  char extra;
  if (!e && (get(fd, &extra, 1) == 0 || !valid(ts))) e = -1; /* more than was written, or damaged */
  if (e) {
    *nomem = e == -2;
    evm_ts_free(ts);
    return NULL;
  }
  return ts;
}
