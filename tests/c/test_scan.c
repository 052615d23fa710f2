/* The JSON reader's structural pass (evalua/scan.h): the SSE2 path and the
 * portable one against a byte loop, on strings with every kind of byte
 * that stops a string at every place and every alignment. */
#include <stdlib.h>

#include "check.h"
#include "evalua/scan.h"

static size_t naive(const char *p, size_t n) {
  size_t i = 0;
  while (i < n && (unsigned char)p[i] >= 0x20 && (unsigned char)p[i] < 0x80 && p[i] != '"' && p[i] != '\\') i++;
  return i;
}

int main(void) {
  /* the bytes around each boundary: the stops, and plain neighbours of them */
  const unsigned char stop[] = {'"', '\\', 0x00, 0x01, 0x0a, 0x1f, 0x80, 0xc3, 0xe4, 0xff};
  const unsigned char plain[] = {' ', '!', '#', '[', ']', '~', 0x7f, 'a', '0', 0x21};
  static char buf[96 + 16];
  int bad_portable = 0, bad_sse2 = 0, runs = 0;
  for (size_t off = 0; off < 16; off++) {
    char *p = buf + off;
    for (size_t n = 0; n <= 96; n++) {
      for (size_t at = 0; at <= n; at++) {
        for (size_t k = 0; k < sizeof stop; k++) {
          for (size_t i = 0; i < n; i++) p[i] = (char)plain[(i * 7 + off) % sizeof plain];
          if (at < n) p[at] = (char)stop[k];
          if (at + 3 < n) p[at + 3] = (char)stop[(k + 1) % sizeof stop]; /* a second stop after it */
          size_t want = naive(p, n);
          if (at < n && want != at) bad_portable = -1000; /* the test itself is wrong */
          bad_portable += evt_plain_portable(p, n) != want;
#if defined(__SSE2__)
          bad_sse2 += evt_plain_sse2(p, n) != want;
#endif
          runs++;
        }
      }
    }
  }
  CHECK(runs > 400000);
  CHECK(bad_portable == 0);
  CHECK(bad_sse2 == 0);
  /* 0x7f (DEL) is plain for the reader, as RFC 8259 allows it unescaped */
  CHECK(evt_plain_portable("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", 9) == 9);
#if defined(__SSE2__)
  CHECK(evt_plain_sse2("abcdefghijklmnopqrstuvwxyz\x7f\"", 28) == 27);
#endif
  return check_report();
}
