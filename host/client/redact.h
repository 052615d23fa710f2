/* Scrubbing secrets (the API key, URL credentials) from a server's answer
 * before anything keeps or shows it. A hostile or careless server can echo
 * a secret in many spellings; what is searched is every text a reader can
 * decode from the answer:
 *   - the raw bytes;
 *   - the text with JSON escapes decoded, again and again while escapes
 *     remain (a key \u-escaped inside a JSON answer that is itself a JSON
 *     string), \u escapes as UTF-8, so a non-ASCII key matches too;
 *   - the decoded values of the JSON strings under one key name at one
 *     depth, joined in order (the "content" deltas of a streamed answer,
 *     the "token"s of logprobs), so a secret split across chunks matches.
 * Every match is replaced in the raw answer by "[redacted]" (a match that
 * spans several strings: the first part, the rest removed), whole escape
 * sequences at a time, so JSON stays JSON. Plain C, no Lua. */
#ifndef EVALUA_REDACT_H
#define EVALUA_REDACT_H

#include <stddef.h>

#define REDACT_MIN_SECRET 4 /* shorter strings are not taken for secrets */

/* Replaces every spelling of each of the NULL-terminated secrets in s
 * (length *n, NUL-terminated, malloc'd); returns s or a new buffer (s then
 * freed), *n updated. NULL when memory runs out (s is then wiped and
 * freed): an answer that could not be checked is not handed on. */
char *redact(char *s, size_t *n, const char *const *secrets);

/* The spelling of secret as a server that reads a header as Latin-1 echoes
 * it (each byte >= 0x80 as the UTF-8 of U+0080..U+00FF), malloc'd; NULL when
 * secret is ASCII (the same) or memory runs out. */
char *redact_latin1_form(const char *secret);

/* s in base64 (RFC 4648, padded), as Basic authentication sends
 * "user:password"; malloc'd, NULL when memory runs out. */
char *redact_base64(const char *s);

#endif
