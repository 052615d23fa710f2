/* The judge engine's URLs (host/client/url.h, issue 26 item 6): a request path
 * cannot leave the base URL's path, spelt with dots or percent-encoded
 * dots; the allow-list matches by prefix at a '/' boundary, not by host. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "url.h"

static void request_is(const char *base, const char *path, const char *want) {
  errno = 0;
  char *got = url_request(base, path);
  CHECK_STR(got, want);
  free(got);
}

static void request_fails(const char *base, const char *path, int err) {
  errno = 0;
  char *got = url_request(base, path);
  CHECK(got == NULL && errno == err);
  if (got) fprintf(stderr, "  %s + %s gave %s\n", base, path, got);
  free(got);
}

static void test_requests_stay_below_the_base_path(void) {
  request_is("http://h:8080/v1", "/chat/completions", "http://h:8080/v1/chat/completions");
  request_is("http://h:8080/v1/", "/chat/completions", "http://h:8080/v1/chat/completions");
  request_is("HTTP://H:80/v1", "/x", "http://h/v1/x");
  request_is("https://h:443/v1", "/x", "https://h/v1/x");
  request_is("http://u:p%40ss@h/v1", "/x", "http://u:p%40ss@h/v1/x"); /* credentials go to curl */
  request_is("http://h/hooks/T1/", "", "http://h/hooks/T1/"); /* the base itself, as written */
  request_is("http://h/v1/a/../b", "/x", "http://h/v1/b/x");
  request_is("http://h/v1", "/a/./b/../c", "http://h/v1/a/c");
  request_is("http://h/v1", "/a/%7euser/%2Dx%41", "http://h/v1/a/~user/-xA");
  request_is("http://h/v1", "/a%3ab", "http://h/v1/a%3Ab");
  request_is("http://h/v1?api-version=2", "/x?y=1", "http://h/v1/x?api-version=2&y=1");
  request_is("http://h", "/../x", "http://h/x"); /* no path to leave */
  request_is("http://h/v1", "/..x/y", "http://h/v1/..x/y");
  request_fails("http://h/v1", "/../../x", EACCES);
  request_fails("http://h/v1", "/..", EACCES);
  request_fails("http://h/v1", "/%2e%2e/x", EACCES);
  request_fails("http://h/v1", "/.%2E/x", EACCES);
  request_fails("http://h/v1", "/a/../../v10/x", EACCES);
  request_fails("http://h/v1/a", "/../b", EACCES);
  request_fails("http://h/v1", "/..%2fx", EINVAL);
  request_fails("http://h/v1", "/a%5C..%5Cx", EINVAL);
  request_fails("http://h/v1", "/a\\..\\x", EINVAL);
  request_fails("http://h/v1", "/a#x", EINVAL);
  request_fails("http://h/v1", "/a b", EINVAL);
  request_fails("http://h/v1", "/a\r\nX: y", EINVAL);
  request_fails("http://h/v1", "x", EINVAL);
  request_fails("ftp://h/v1", "/x", EINVAL);
}

static void test_allowed_by_prefix_not_host(void) {
  const char *hook = "https://hooks.example.com/services/T1";
  CHECK(url_under("https://hooks.example.com/services/T1", hook));
  CHECK(url_under("https://hooks.example.com/services/T1/", hook));
  CHECK(url_under("https://HOOKS.example.com:443/services/T1/x", hook));
  CHECK(url_under("https://u:p@hooks.example.com/services/T1", hook));
  CHECK(!url_under("https://hooks.example.com/services/T10", hook));
  CHECK(!url_under("https://hooks.example.com/services", hook));
  CHECK(!url_under("https://hooks.example.com/services/T1/../T2", hook));
  CHECK(!url_under("https://hooks.example.com/services/T1/%2e%2e/T2", hook));
  CHECK(!url_under("http://hooks.example.com/services/T1", hook));
  CHECK(!url_under("https://hooks.example.com.evil/services/T1", hook));
  CHECK(!url_under("https://hooks.example.com@evil.com/services/T1", hook));
  CHECK(url_under("http://h:1/anything", "http://h:1"));
  CHECK(url_under("http://h:1/anything", "http://h:1/"));
  CHECK(!url_under("http://h:2/anything", "http://h:1"));
  CHECK(url_under("https://g/v1/m?key=K&token=T", "https://g/v1/m?key=K&token=T"));
  CHECK(!url_under("https://g/v1/m?key=K", "https://g/v1/m?key=K&token=T"));
  CHECK(!url_under("https://g/v1/m", "https://g/v1/m?key=K"));
  CHECK(url_same("http://h/v1/", "HTTP://h:80/v1"));
  CHECK(!url_same("http://h/v1", "http://h/v1/x"));
  char *info = url_userinfo("http://us%65r:p%40ss@h/v1");
  CHECK_STR(info, "user:p@ss");
  free(info);
  CHECK(url_userinfo("http://h/v1") == NULL);
}

int main(void) {
  test_requests_stay_below_the_base_path();
  test_allowed_by_prefix_not_host();
  return check_report();
}
