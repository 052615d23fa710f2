/* The JSON reader's structural pass over a string's bytes: how many bytes
 * from p on are plain, that is printable ASCII other than '"' and '\\',
 * which a string copies as they are. Many bytes at a time: SSE2 (16 at a
 * time, always there on x86-64) or, elsewhere, eight at a time in a 64-bit
 * word; both are compiled where SSE2 is, so tests/c/test_scan.c checks each
 * against a byte loop. */
#ifndef EVALUA_SCAN_H
#define EVALUA_SCAN_H

#include <stddef.h>

/* Bytes of p[0..n) before the first '"', '\\', control byte (< 0x20) or
 * byte >= 0x80; n when there is none. */
size_t evt_plain_portable(const char *p, size_t n);
/* The same, copying those bytes to o, which has room for n (bytes past
 * the returned count may be written too). */
size_t evt_copy_plain_portable(char *o, const char *p, size_t n);
#if defined(__SSE2__)
#include <emmintrin.h>

/* Inline: most strings are keys and short values, where a call cost as
 * much as the scan. The signed compare puts the bytes from 0x80 on below
 * 0x20, with the controls. */
static inline unsigned evt_stops_sse2(__m128i v) {
  const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
  __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)), _mm_cmplt_epi8(v, space));
  return (unsigned)_mm_movemask_epi8(m);
}

static inline size_t evt_plain_sse2(const char *p, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    unsigned bits = evt_stops_sse2(_mm_loadu_si128((const __m128i *)(const void *)(p + i)));
    if (bits) return i + (size_t)__builtin_ctz(bits);
  }
  return i + evt_plain_portable(p + i, n - i);
}

static inline size_t evt_copy_plain_sse2(char *o, const char *p, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    _mm_storeu_si128((__m128i *)(void *)(o + i), v);
    unsigned bits = evt_stops_sse2(v);
    if (bits) return i + (size_t)__builtin_ctz(bits);
  }
  return i + evt_copy_plain_portable(o + i, p + i, n - i);
}
#define evt_plain evt_plain_sse2
#define evt_copy_plain evt_copy_plain_sse2
#else
#define evt_plain evt_plain_portable
#define evt_copy_plain evt_copy_plain_portable
#endif

#endif
