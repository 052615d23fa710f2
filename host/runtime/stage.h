/* A folder's files replaced all at once: they are written into a staging
 * folder beside it, which then takes the folder's place in one
 * renameat2(RENAME_EXCHANGE), so a reader (or a kill) sees the old folder
 * or the new one, never a mix. Where the exchange cannot keep the folder's
 * other contents (a subfolder), or the kernel or file system lacks it, the
 * files move one rename each, and a write killed midway is finished by the
 * next one. Staging folders of dead processes are removed (or finished) by
 * the next write beside them, before it needs any space. docs/internals.md
 * ("Writing a report folder") has the rules. */
#ifndef EVALUA_STAGE_H
#define EVALUA_STAGE_H

#include <limits.h>
#include <stddef.h>

struct evalua_stage {
  int parent;                /* the folder that holds the staging folder, locked while it is used */
  int inside;                /* the staging folder is inside the target (nothing beside it is writable) */
  char target[NAME_MAX + 1]; /* the target's name in parent ("." when inside) */
  char name[64];             /* the staging folder's name in parent */
  int fd;                    /* the staging folder, flock'ed for as long as this process lives */
};

/* How publish put the files in place. */
enum evalua_published { EVALUA_CREATED = 1, EVALUA_EXCHANGED, EVALUA_MOVED };

/* Takes ownership of parent (an O_RDONLY folder descriptor): cleans what
 * dead writers left in it, then creates the staging folder. 0, or -1 with
 * errno set (parent closed). */
int evalua_stage_open(struct evalua_stage *st, int parent, const char *target, int inside);
/* Puts the n files of the staging folder in place; 1..3 (enum
 * evalua_published), or -1 with errno set. */
int evalua_stage_publish(struct evalua_stage *st, const char *const *files, size_t n);
/* Removes the staging folder unless it was published; closes everything. */
void evalua_stage_close(struct evalua_stage *st);

#endif
