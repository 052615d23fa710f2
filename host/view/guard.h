/* Who may talk to the viewer: the holder of its random token, over
 * 127.0.0.1, naming this server in its Host header. */
#ifndef EVALUA_VIEW_GUARD_H
#define EVALUA_VIEW_GUARD_H

#include <stddef.h>

#define VIEW_TOKEN_LEN 32 /* hex digits: 128 random bits */

/* Fills out (VIEW_TOKEN_LEN + 1 bytes) with a new token from getrandom(2);
 * -1 when the system gives no randomness. */
int view_token_new(char *out);

/* 1 when given equals token, compared in time independent of where they
 * differ; 0 for NULL or another length. */
int view_token_equal(const char *token, const char *given);

/* The token in a Cookie header ("evalua_token_PORT=..."), copied to out
 * (VIEW_TOKEN_LEN + 1 bytes); 0 when absent. */
int view_cookie_token(const char *cookie, unsigned port, char *out);

/* 1 when host (the Host header) is 127.0.0.1:port or localhost:port: a
 * page of another site that rebinds its name to 127.0.0.1 sends its own
 * name, and is refused (DNS rebinding). */
int view_host_ok(const char *host, unsigned port);

#endif
