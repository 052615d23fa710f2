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
#if defined(__SSE2__)
size_t evt_plain_sse2(const char *p, size_t n);
#define evt_plain evt_plain_sse2
#else
#define evt_plain evt_plain_portable
#endif

#endif
