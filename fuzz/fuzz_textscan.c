/* libFuzzer target: the viewer's text scan (metrics/textscan*.c). Input: a
 * row's JSON. Its texts are read (or the row refused, with a message), a
 * word cut from the input is searched as a substring and as a word's start,
 * and the scan saved to a memfd and loaded back answers the same; a file cut
 * short or with a byte flipped is refused or loaded whole, never read past. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evalua/textscan.h"

static size_t search(struct evm_textscan *ts, const uint8_t *w, size_t n, int start) {
  const char *f;
  size_t m = evm_ts_fold(ts, (const char *)w, n, &f);
  if (m == (size_t)-1) return 0;
  char *word = malloc(m + 1);
  memcpy(word, f, m);
  struct evm_ts_term t = {word, m, start};
  const int64_t *keys;
  size_t nkeys;
  int misses;
  size_t hits = evm_ts_find(ts, &t, 1, start, &keys, &nkeys, &misses);
  free(word);
  return hits;
}

/* ts saved and loaded back (its first cut bytes only, and one byte flipped, when flip) or NULL. */
static struct evm_textscan *reload(const struct evm_textscan *ts, size_t cut, int flip) {
  int fd = memfd_create("scan", 0);
  if (fd < 0 || evm_ts_save(ts, fd, "k", 1)) abort();
  off_t size = lseek(fd, 0, SEEK_END);
  if (flip && size > 0) {
    unsigned char c;
    off_t at = (off_t)(cut % (size_t)size);
    if (pread(fd, &c, 1, at) != 1) abort();
    c ^= 0x5A;
    if (pwrite(fd, &c, 1, at) != 1) abort();
  } else if (cut < (size_t)size && ftruncate(fd, (off_t)cut)) abort();
  lseek(fd, 0, SEEK_SET);
  int nomem;
  struct evm_textscan *back = evm_ts_load(&evm_plain, fd, "k", 1, &nomem);
  close(fd);
  return back;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  struct evm_textscan *ts = evm_ts_new(&evm_plain);
  char err[160];
  if (!ts || evm_ts_row(ts, 1) || evm_ts_text(ts, "id", 2)) abort();
  int e = evm_ts_json_row(ts, (const char *)data, n, err, sizeof err);
  if (e < 0) abort();
  if (e > 0 && !err[0]) abort(); /* a refusal says why */
  size_t wn = n < 3 ? n : 3, a = n > 3 ? data[0] % (n - 3) : 0;
  size_t sub = search(ts, data + a, wn, 0), start = search(ts, data + a, wn, 1);
  if (start > sub) abort(); /* a word's start is a substring too */
  struct evm_textscan *back = reload(ts, SIZE_MAX, 0);
  if (!back || search(back, data + a, wn, 0) != sub || search(back, data + a, wn, 1) != start) abort();
  evm_ts_free(back);
  evm_ts_free(reload(ts, n, 0));
  struct evm_textscan *flipped = reload(ts, n * 7 + 3, 1);
  if (flipped) search(flipped, data + a, wn, n & 1);
  evm_ts_free(flipped);
  evm_ts_free(ts);
  return 0;
}
