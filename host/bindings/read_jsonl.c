/* JSONL files into columns (read_jsonl.h): 1 MB blocks read in order (a
 * pipe works too) and cut into lines, each line read into the table, while
 * a second thread hashes the block (SHA-256 was a seventh of the reading
 * thread's time). Reading two halves at once into two tables and appending
 * them measured slower here (page faults and copying outweigh the second
 * core). */
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_jsonl.h"

#define BLOCK ((size_t)1 << 20)

/* The hashing thread: one block at a time, handed over and waited for. */
struct hasher {
  EVP_MD_CTX *md;
  pthread_t th;
  int started, busy, quit;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  const char *p;
  size_t n;
};

static void *hash_main(void *arg) {
  struct hasher *h = arg;
  pthread_mutex_lock(&h->mu);
  for (;;) {
    while (!h->busy && !h->quit) pthread_cond_wait(&h->cv, &h->mu);
    if (!h->busy) break;
    pthread_mutex_unlock(&h->mu);
    EVP_DigestUpdate(h->md, h->p, h->n);
    pthread_mutex_lock(&h->mu);
    h->busy = 0;
    pthread_cond_broadcast(&h->cv);
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

/* Without a thread (none could start) the block is hashed here. */
static void hash_start(struct hasher *h, EVP_MD_CTX *md) {
  memset(h, 0, sizeof *h);
  h->md = md;
  if (pthread_mutex_init(&h->mu, NULL)) return;
  if (pthread_cond_init(&h->cv, NULL)) { pthread_mutex_destroy(&h->mu); return; }
  h->started = pthread_create(&h->th, NULL, hash_main, h) == 0;
  if (!h->started) pthread_cond_destroy(&h->cv), pthread_mutex_destroy(&h->mu);
}

static void hash_give(struct hasher *h, const char *p, size_t n) {
  if (!h->started) return (void)EVP_DigestUpdate(h->md, p, n);
  pthread_mutex_lock(&h->mu);
  h->p = p, h->n = n, h->busy = 1;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
}

/* Returns when the block handed over is hashed: its bytes may change. */
static void hash_wait(struct hasher *h) {
  if (!h->started) return;
  pthread_mutex_lock(&h->mu);
  while (h->busy) pthread_cond_wait(&h->cv, &h->mu);
  pthread_mutex_unlock(&h->mu);
}

static void hash_stop(struct hasher *h) {
  if (!h->started) return;
  hash_wait(h);
  pthread_mutex_lock(&h->mu);
  h->quit = 1;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  pthread_join(h->th, NULL);
  pthread_cond_destroy(&h->cv);
  pthread_mutex_destroy(&h->mu);
  h->started = 0;
}

struct reader {
  int fd;
  struct evt_table *t;
  const struct evt_schema *sc;
  int lenient;
  struct hasher *h;
  uint32_t lines;            /* lines seen */
  struct jsonl_result *res;  /* the refused rows go here */
  uint32_t bad_line;         /* strict: the refused row's line, 0 if none */
  char err[600];
  int failed;                /* 1: out of memory, 2: a read error, 3: a line too long */
  int read_errno;
};

void jsonl_result_init(struct jsonl_result *res, const struct evm_alloc *a) {
  memset(res, 0, sizeof *res);
  res->a = *a;
}

int jsonl_skip_add(struct jsonl_result *res, uint32_t line, const char *msg) {
  if (res->nskips == res->capskips) {
    size_t cap = res->capskips ? res->capskips * 2 : 16;
    struct jsonl_skip *s = evm_resize(&res->a, res->skips, res->capskips, cap, sizeof *s);
    if (!s) return -1;
    res->skips = s, res->capskips = cap;
  }
  size_t n = strlen(msg) + 1;
  char *copy = evm_new(&res->a, n, 1);
  if (!copy) return -1;
  memcpy(copy, msg, n);
  res->skips[res->nskips++] = (struct jsonl_skip){line, copy};
  return 0;
}

/* One line without its newline; 1 when reading must stop. */
static int take_line(struct reader *p, const char *s, size_t len) {
  uint32_t line = ++p->lines;
  if (len && s[len - 1] == '\r') len--;
  if (line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3, len -= 3; /* a BOM */
  size_t i = 0;
  while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i == len) return 0;
  int rc = evt_json_row(p->t, s, len, line, p->sc, p->err, sizeof p->err);
  if (rc == EVT_ROW_NOMEM) return p->failed = 1;
  if (rc == EVT_ROW_OK) return 0;
  if (!p->lenient) return p->bad_line = line, 1;
  return jsonl_skip_add(p->res, line, p->err) ? (p->failed = 1) : 0;
}

static int read_some(int fd, char *buf, size_t n, size_t *got) {
  ssize_t r;
  do r = read(fd, buf, n);
  while (r < 0 && errno == EINTR);
  if (r < 0) return -1;
  *got = (size_t)r;
  return 0;
}

/* The file's bytes, block by block; a line may span blocks. */
static void read_rows(struct reader *p) {
  size_t cap = BLOCK, have = 0;
  const struct evm_alloc *a = &p->t->a;
  char *buf = evm_new(a, cap, 1);
  if (!buf) { p->failed = 1; return; }
  for (;;) {
    size_t got = 0;
    if (read_some(p->fd, buf + have, cap - have, &got)) { p->failed = 2, p->read_errno = errno; break; }
    if (got) hash_give(p->h, buf + have, got); /* hashed while the lines are read */
    have += got;
    int eof = got == 0;
    char *s = buf, *end = buf + have, *nl;
    int stop = 0;
    while (!stop && (nl = memchr(s, '\n', (size_t)(end - s)))) stop = take_line(p, s, (size_t)(nl - s)), s = nl + 1;
    if (!stop && eof && s < end) stop = take_line(p, s, (size_t)(end - s)), s = end;
    hash_wait(p->h); /* before the buffer's bytes move or change */
    if (stop || eof) break;
    have = (size_t)(end - s);
    memmove(buf, s, have);
    if (have == cap) {
      char *b = cap >= EVT_MAX_LINE ? NULL : evm_resize(a, buf, cap, cap * 2, 1);
      if (!b) { p->failed = cap >= EVT_MAX_LINE ? 3 : 1; break; }
      buf = b, cap *= 2;
    }
  }
  evm_free(a, buf, cap, 1);
}

static void report_failure(const char *path, const struct reader *p, struct jsonl_result *res) {
  if (p->bad_line) snprintf(res->err, sizeof res->err, "%s:%u: %s", path, p->bad_line, p->err);
  else if (p->failed == 3)
    snprintf(res->err, sizeof res->err, "%s:%u: line longer than %d MB", path, p->lines + 1, (int)(EVT_MAX_LINE >> 20));
  else if (p->failed == 2) snprintf(res->err, sizeof res->err, "%s: %s", path, strerror(p->read_errno));
  else snprintf(res->err, sizeof res->err, "%s: not enough memory", path);
}

static void finish_hash(EVP_MD_CTX *md, struct jsonl_result *res) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(md, d, &n);
  for (unsigned i = 0; i < n && i < 32; i++) snprintf(res->hash + 2 * i, 3, "%02x", d[i]);
}

void jsonl_read(int fd, const char *path, struct evt_table *t, const struct evt_schema *sc, int lenient,
                struct jsonl_result *res) {
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
    snprintf(res->err, sizeof res->err, "%s: sha256 failed", path);
    EVP_MD_CTX_free(md), close(fd);
    return;
  }
  struct hasher h;
  hash_start(&h, md);
  struct reader p = {.fd = fd, .t = t, .sc = sc, .lenient = lenient, .h = &h, .res = res};
  read_rows(&p);
  hash_stop(&h);
  res->nomem = p.failed == 1;
  if (p.failed || p.bad_line) report_failure(path, &p, res);
  else finish_hash(md, res);
  EVP_MD_CTX_free(md);
  close(fd);
}

void jsonl_result_free(struct jsonl_result *res) {
  for (size_t i = 0; i < res->nskips; i++) evm_free(&res->a, res->skips[i].msg, strlen(res->skips[i].msg) + 1, 1);
  evm_free(&res->a, res->skips, res->capskips, sizeof *res->skips);
  res->skips = NULL, res->nskips = res->capskips = 0;
}
