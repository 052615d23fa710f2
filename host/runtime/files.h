/* Small POSIX file helpers shared by the CLI, _sys and the judge cache. */
#ifndef EVALUA_FILES_H
#define EVALUA_FILES_H

#include <stddef.h>

/* mkdir -p; 0 on success, -1 with errno set. */
int evalua_make_dir(const char *path);
/* Writes all n bytes, retrying on EINTR; 0 or -1. */
int evalua_write_all(int fd, const char *s, size_t n);
/* Writes data to path through a temporary file and rename(2), so readers see
 * the old or the whole new content; 0 or -1 with errno set. */
int evalua_write_atomic(const char *path, const char *data, size_t n);
/* The same for name relative to dirfd (AT_FDCWD: the working folder); oflags
 * are added to the temporary file's open (O_NOFOLLOW in the sandbox). */
int evalua_write_atomic_at(int dirfd, const char *name, int oflags, const char *data, size_t n);
/* For the crash tests: when $EVALUA_TEST_PAUSE is "POINT:FIFO" for this
 * point, writes "POINT\n" into the FIFO (once the test reads it) and waits
 * there for the test's kill. */
void evalua_test_pause(const char *point);

#endif
