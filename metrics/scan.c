/* The structural pass of the JSON reader (evalua/scan.h): the portable
 * forms; the SSE2 ones are inline in the header. */
#include <stdint.h>
#include <string.h>

#include "evalua/scan.h"

static size_t plain_bytes(const char *p, size_t i, size_t n) {
  for (; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
  }
  return i;
}

#define ONES ((uint64_t)0x0101010101010101ULL)
#define HIGHS ((uint64_t)0x8080808080808080ULL)

/* The bytes of x that stop a string, each as its high bit: the first one
 * is exact (a borrow can only mark bytes above a true one). */
static uint64_t stops(uint64_t x) {
  uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
  uint64_t zq = (q - ONES) & ~q, zb = (b - ONES) & ~b; /* a zero byte: '"' or '\\' there */
  uint64_t lt = (x - ONES * 0x20) & ~x;                /* a byte below 0x20 */
  return (zq | zb | lt | x) & HIGHS;                   /* x: a byte from 0x80 on */
}

size_t evt_plain_portable(const char *p, size_t n) {
  size_t i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    uint64_t m = stops(x);
    if (m) return i + (size_t)__builtin_ctzll(m) / 8;
  }
#endif
  return plain_bytes(p, i, n);
}

size_t evt_copy_plain_portable(char *o, const char *p, size_t n) {
  size_t i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    memcpy(o + i, &x, 8); /* o has room for n: the bytes past the stop are written over later */
    uint64_t m = stops(x);
    if (m) return i + (size_t)__builtin_ctzll(m) / 8;
  }
#endif
  size_t k = plain_bytes(p, i, n);
  memcpy(o + i, p + i, k - i);
  return k;
}
