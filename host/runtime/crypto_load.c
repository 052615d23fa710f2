/* libcrypto opened on first use (lazy_lib.h): the SHA-256 calls that data
 * set hashes, the judge cache and ev.sys.sha256 make. Linked, its
 * relocations and constructors cost every run about 2 ms of CPU, two
 * thirds of an empty script's start-up. OpenSSL 3's soname is
 * libcrypto.so.3 (Debian 12: libssl3). */
#include <openssl/evp.h>

#include "lazy_lib.h"

static struct lazy_lib crypto = {.soname = "libcrypto.so.3", .package = "libssl3"};

LAZY_FN(crypto, int, EVP_Digest,
        (const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl),
        (data, count, md, size, type, impl), 0)
LAZY_FN(crypto, const EVP_MD *, EVP_sha256, (void), (), NULL)
LAZY_FN(crypto, EVP_MD_CTX *, EVP_MD_CTX_new, (void), (), NULL)
LAZY_VOID(crypto, EVP_MD_CTX_free, (EVP_MD_CTX *ctx), (ctx))
LAZY_FN(crypto, int, EVP_DigestInit_ex, (EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl), (ctx, type, impl), 0)
LAZY_FN(crypto, int, EVP_DigestUpdate, (EVP_MD_CTX *ctx, const void *d, size_t cnt), (ctx, d, cnt), 0)
LAZY_FN(crypto, int, EVP_DigestFinal_ex, (EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s), (ctx, md, s), 0)
