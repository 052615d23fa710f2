/* The judge's answer cache on disk: one file per answer, named by the
 * SHA-256 of the canonical request, under DIR/<first two hex digits>/.
 * Entries are written to a temporary file and renamed into place, so a
 * killed process leaves either no entry or a whole one. Plain C, no Lua. */
#ifndef EVALUA_JUDGE_CACHE_H
#define EVALUA_JUDGE_CACHE_H

#include <stddef.h>

/* hex = lower-case SHA-256 of data (65 bytes with the NUL); 0 or -1. */
int judge_cache_key(const char *data, size_t len, char hex[65]);

/* 0 when key is well-formed and its entry's path fits; -1 with errno =
 * EINVAL or ENAMETOOLONG otherwise. */
int judge_cache_check(const char *dir, const char *key);

/* The entry for key (64 lower-case hex digits) as malloc'd, NUL-terminated
 * data with *len set; NULL with errno = ENOENT when absent, EINVAL for a
 * malformed key, or another errno when unreadable; an entry
 * that is not a regular file (a FIFO would block a plain open forever: it
 * is opened without blocking) is refused with *not_regular = 1. */
char *judge_cache_get(const char *dir, const char *key, size_t *len, int *not_regular);

/* The temporary name an entry is written to before its rename:
 * PATH.tmp.HOST.PID, so processes on several machines sharing the cache
 * (NFS) never write the same file. 0, or -1 when it does not fit. */
int judge_cache_tmp_name(const char *path, char *out, size_t n);

/* Stores data as key's entry; 0, or -1 with errno set. */
int judge_cache_put(const char *dir, const char *key, const char *data, size_t len);

#endif
