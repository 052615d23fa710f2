/* The viewer's request checks (host/view/guard.c): the token, its cookie
 * and the Host header, without a server. */
#include <string.h>

#include "check.h"
#include "guard.h"

static void token(void) {
  char a[VIEW_TOKEN_LEN + 1], b[VIEW_TOKEN_LEN + 1];
  CHECK(view_token_new(a) == 0 && view_token_new(b) == 0);
  CHECK(strlen(a) == VIEW_TOKEN_LEN && strspn(a, "0123456789abcdef") == VIEW_TOKEN_LEN);
  CHECK(strcmp(a, b) != 0); /* 128 random bits: two alike would be a broken generator */
  CHECK(view_token_equal(a, a));
  CHECK(!view_token_equal(a, b));
  CHECK(!view_token_equal(a, NULL));
  CHECK(!view_token_equal(a, ""));
  char shorter[VIEW_TOKEN_LEN];
  memcpy(shorter, a, VIEW_TOKEN_LEN - 1);
  shorter[VIEW_TOKEN_LEN - 1] = '\0';
  CHECK(!view_token_equal(a, shorter)); /* a prefix is not the token */
}

static void cookie(void) {
  const char *t = "0123456789abcdef0123456789abcdef";
  char out[VIEW_TOKEN_LEN + 1];
  CHECK(view_cookie_token("evalua_token_8080=0123456789abcdef0123456789abcdef", 8080, out) && strcmp(out, t) == 0);
  CHECK(view_cookie_token("a=1; evalua_token_8080=0123456789abcdef0123456789abcdef; b=2", 8080, out) &&
        strcmp(out, t) == 0);
  CHECK(!view_cookie_token("evalua_token_8081=0123456789abcdef0123456789abcdef", 8080, out)); /* another port's */
  CHECK(!view_cookie_token("xevalua_token_8080=0123456789abcdef0123456789abcdef", 8080, out)); /* another name */
  CHECK(!view_cookie_token("evalua_token_8080=0123", 8080, out));                              /* too short */
  CHECK(!view_cookie_token(NULL, 8080, out));
}

static void host(void) {
  CHECK(view_host_ok("127.0.0.1:8080", 8080));
  CHECK(view_host_ok("localhost:8080", 8080));
  CHECK(!view_host_ok("127.0.0.1:8081", 8080));
  CHECK(!view_host_ok("evil.example:8080", 8080)); /* DNS rebinding: the page's own name */
  CHECK(!view_host_ok("127.0.0.1", 8080));
  CHECK(!view_host_ok("127.0.0.1:8080.evil", 8080));
  CHECK(!view_host_ok(NULL, 8080));
}

int main(void) {
  token();
  cookie();
  host();
  return check_report();
}
