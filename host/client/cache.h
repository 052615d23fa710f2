/* The client's answer cache on disk: one file per answer, named by the
 * SHA-256 of the canonical request, under DIR/<first two hex digits>/.
 * Entries are written to a temporary file and renamed into place, so a
 * killed process leaves either no entry or a whole one. Every name is
 * opened relative to a descriptor of DIR; with nofollow (the sandbox) no
 * symbolic link below DIR is followed, so an entry is never read or written
 * outside it. Plain C, no Lua. */
#ifndef EVALUA_CLIENT_CACHE_H
#define EVALUA_CLIENT_CACHE_H

#include <stddef.h>

/* hex = lower-case SHA-256 of data (65 bytes with the NUL); 0 or -1. */
int client_cache_key(const char *data, size_t len, char hex[65]);

/* 0 when key is 64 lower-case hex digits (so no key names a file
 * elsewhere); -1 with errno = EINVAL otherwise. */
int client_cache_check(const char *key);

/* The entry for key in the folder dirfd as malloc'd, NUL-terminated data
 * with *len set; NULL with errno = ENOENT when absent, EINVAL for a
 * malformed key, ELOOP for a symbolic link under nofollow, or another errno
 * when unreadable; an entry that is not a regular file (a FIFO would block
 * a plain open forever: it is opened without blocking) is refused with
 * *not_regular = 1. */
char *client_cache_get(int dirfd, int nofollow, const char *key, size_t *len, int *not_regular);

/* The temporary name an entry is written to before its rename:
 * NAME.tmp.HOST.PID, so processes on several machines sharing the cache
 * (NFS) never write the same file. 0, or -1 when it does not fit. */
int client_cache_tmp_name(const char *name, char *out, size_t n);

/* Stores data as key's entry in the folder dirfd, making its
 * two-digit folder when missing; 0, or -1 with errno set. */
int client_cache_put(int dirfd, int nofollow, const char *key, const char *data, size_t len);

#endif
