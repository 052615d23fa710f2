/* libcrypto opened on first use, not linked: loading it with the binary
 * cost every run about 2 ms of CPU in the dynamic loader (its relocations
 * and constructors), two thirds of an empty script's start-up, though only
 * SHA-256 is used and only by runs that hash (data sets, the judge cache,
 * ev.sys.sha256). This file defines the libcrypto functions evalua calls,
 * with OpenSSL's own prototypes (the headers check them), each forwarding
 * to the library, which the first call opens (dlopen of libcrypto.so.3,
 * under pthread_once: any thread may hash). The executable exports none of
 * its symbols, so these never stand in for libcrypto's own calls inside
 * libcurl or libssl. A call to another libcrypto function fails to link:
 * add it here (docs/internals.md, "libcrypto and libcurl on first use").
 * When the library cannot be opened each function fails as OpenSSL's do
 * (0 or NULL), and the reason is written to stderr once. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#define EVALUA_LIBCRYPTO "libcrypto.so.3" /* OpenSSL 3's soname (Debian 12: libssl3) */

static struct {
  int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
  const EVP_MD *(*sha256)(void);
  EVP_MD_CTX *(*ctx_new)(void);
  void (*ctx_free)(EVP_MD_CTX *);
  int (*init_ex)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
  int (*update)(EVP_MD_CTX *, const void *, size_t);
  int (*final_ex)(EVP_MD_CTX *, unsigned char *, unsigned int *);
} fns;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define FIND(field, name)                  \
  do {                                     \
    void *p = dlsym(lib, sym = name);      \
    if (!p) goto missing;                  \
    memcpy(&fns.field, &p, sizeof p);      \
  } while (0)

static void open_crypto(void) {
  const char *sym = NULL;
  void *lib = dlopen(EVALUA_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    fprintf(stderr, "evalua: libcrypto could not be loaded (%s); SHA-256 needs it: install libssl3\n",
            e ? e : EVALUA_LIBCRYPTO);
    return;
  }
  FIND(digest, "EVP_Digest");
  FIND(sha256, "EVP_sha256");
  FIND(ctx_new, "EVP_MD_CTX_new");
  FIND(ctx_free, "EVP_MD_CTX_free");
  FIND(init_ex, "EVP_DigestInit_ex");
  FIND(update, "EVP_DigestUpdate");
  FIND(final_ex, "EVP_DigestFinal_ex");
  ready = 1; /* the library stays open for the life of the process */
  return;
missing:
  fprintf(stderr, "evalua: %s has no function %s (OpenSSL 3 is needed)\n", EVALUA_LIBCRYPTO, sym);
  dlclose(lib);
}

static int loaded(void) {
  pthread_once(&once, open_crypto);
  return ready;
}

int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type,
               ENGINE *impl) {
  return loaded() ? fns.digest(data, count, md, size, type, impl) : 0;
}

const EVP_MD *EVP_sha256(void) { return loaded() ? fns.sha256() : NULL; }

EVP_MD_CTX *EVP_MD_CTX_new(void) { return loaded() ? fns.ctx_new() : NULL; }

void EVP_MD_CTX_free(EVP_MD_CTX *ctx) {
  if (ctx && loaded()) fns.ctx_free(ctx);
}

int EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl) {
  return loaded() ? fns.init_ex(ctx, type, impl) : 0;
}

int EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt) {
  return loaded() ? fns.update(ctx, d, cnt) : 0;
}

int EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s) {
  return loaded() ? fns.final_ex(ctx, md, s) : 0;
}
