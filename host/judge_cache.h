/* The judge's answer cache on disk: one file per answer, named by the
 * SHA-256 of the canonical request, under DIR/<first two hex digits>/.
 * Entries are written to a temporary file and renamed into place, so a
 * killed process leaves either no entry or a whole one. Plain C, no Lua. */
#ifndef EVALUA_JUDGE_CACHE_H
#define EVALUA_JUDGE_CACHE_H

#include <stddef.h>

/* hex = lower-case SHA-256 of data (65 bytes with the NUL); 0 or -1. */
int judge_cache_key(const char *data, size_t len, char hex[65]);

/* The entry for key (64 lower-case hex digits) as malloc'd, NUL-terminated
 * data with *len set; NULL with errno = ENOENT when absent, EINVAL for a
 * malformed key, or another errno when unreadable. */
char *judge_cache_get(const char *dir, const char *key, size_t *len);

/* Stores data as key's entry; 0, or -1 with errno set. */
int judge_cache_put(const char *dir, const char *key, const char *data, size_t len);

#endif
