/* The viewer's token and the checks every request passes. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "guard.h"

int view_token_new(char *out) {
  unsigned char raw[VIEW_TOKEN_LEN / 2];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof raw; i++) {
    out[2 * i] = hex[raw[i] >> 4];
    out[2 * i + 1] = hex[raw[i] & 15];
  }
  out[VIEW_TOKEN_LEN] = '\0';
  return 0;
}

int view_token_equal(const char *token, const char *given) {
  if (!given || strlen(given) != strlen(token)) return 0;
  unsigned char diff = 0;
  for (size_t i = 0; token[i]; i++) diff |= (unsigned char)(token[i] ^ given[i]);
  return diff == 0;
}

int view_cookie_token(const char *cookie, unsigned port, char *out) {
  if (!cookie) return 0;
  char name[40];
  int n = snprintf(name, sizeof name, "evalua_token_%u=", port);
  for (const char *p = cookie; (p = strstr(p, name)) != NULL; p += n) {
    if (p != cookie && p[-1] != ' ' && p[-1] != ';') continue; /* inside another cookie's name */
    const char *v = p + n;
    size_t len = strcspn(v, "; ");
    if (len != VIEW_TOKEN_LEN) return 0;
    memcpy(out, v, len);
    out[len] = '\0';
    return 1;
  }
  return 0;
}

int view_host_ok(const char *host, unsigned port) {
  if (!host) return 0;
  char a[48], b[48];
  snprintf(a, sizeof a, "127.0.0.1:%u", port);
  snprintf(b, sizeof b, "localhost:%u", port);
  return strcmp(host, a) == 0 || strcmp(host, b) == 0;
}
