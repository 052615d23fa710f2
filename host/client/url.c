/* URLs of the judge engine (see url.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

int url_split(const char *s, struct url *u) {
  memset(u, 0, sizeof *u);
  size_t scheme = !strncasecmp(s, "http://", 7) ? 4 : !strncasecmp(s, "https://", 8) ? 5 : 0;
  if (!scheme) return -1;
  u->scheme = s, u->scheme_len = scheme;
  const char *auth = s + scheme + 3, *end = auth + strcspn(auth, "/?#");
  const char *at = NULL;
  for (const char *p = auth; p < end; p++)
    if (*p == '@') at = p;
  if (at) u->userinfo = auth, u->userinfo_len = (size_t)(at - auth);
  u->host = at ? at + 1 : auth, u->host_len = (size_t)(end - u->host);
  if (!u->host_len) return -1;
  u->path = end, u->path_len = strcspn(end, "?#");
  if (end[u->path_len] == '?') {
    u->query = end + u->path_len + 1;
    u->query_len = strcspn(u->query, "#");
  }
  return 0;
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int unreserved(int c) { return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

/* p[0..n) with percent-encoded unreserved characters decoded and other
 * encodings in upper case, into out; returns the length written (<= n). */
static size_t normal_escapes(const char *p, size_t n, char *out) {
  static const char hex[] = "0123456789ABCDEF";
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    int hi = -1, lo = -1;
    if (p[i] == '%' && i + 2 < n) hi = hexval((unsigned char)p[i + 1]), lo = hexval((unsigned char)p[i + 2]);
    if (hi < 0 || lo < 0) {
      out[w++] = p[i];
      continue;
    }
    int c = hi * 16 + lo;
    if (unreserved(c)) out[w++] = (char)c;
    else out[w++] = '%', out[w++] = hex[hi], out[w++] = hex[lo];
    i += 2;
  }
  return w;
}

/* RFC 3986 section 5.2.4: the path in[0..n) without "." and ".." segments,
 * into out; returns the length written (<= n). */
static size_t remove_dots(const char *in, size_t n, char *out) {
  size_t i = 0, w = 0;
  while (i < n) {
    const char *p = in + i;
    size_t left = n - i;
    if (left >= 3 && !strncmp(p, "../", 3)) i += 3;
    else if (left >= 2 && !strncmp(p, "./", 2)) i += 2;
    else if (left >= 3 && !strncmp(p, "/./", 3)) i += 2;
    else if (left == 2 && !strncmp(p, "/.", 2)) out[w++] = '/', i = n;
    else if ((left >= 4 && !strncmp(p, "/../", 4)) || (left == 3 && !strncmp(p, "/..", 3))) {
      while (w > 0 && out[--w] != '/') {}
      if (left == 3) out[w++] = '/', i = n;
      else i += 3;
    } else if ((left == 1 && p[0] == '.') || (left == 2 && !strncmp(p, "..", 2))) i = n;
    else {
      size_t seg = 1;
      while (seg < left && p[seg] != '/') seg++;
      memcpy(out + w, p, seg), w += seg, i += seg;
    }
  }
  return w;
}

/* The normal form of path p[0..n) into out (room for n + 1 bytes). */
static size_t normal_path(const char *p, size_t n, char *out) {
  char *tmp = malloc(n + 1);
  if (!tmp) return (size_t)-1;
  size_t len = remove_dots(tmp, normal_escapes(p, n, tmp), out);
  free(tmp);
  return len;
}

/* "scheme://[userinfo@]host" of u in normal form into out; returns its length. */
static size_t normal_origin(const struct url *u, int with_userinfo, char *out) {
  size_t w = 0, host = u->host_len;
  for (size_t i = 0; i < u->scheme_len; i++) out[w++] = (char)tolower((unsigned char)u->scheme[i]);
  memcpy(out + w, "://", 3), w += 3;
  if (with_userinfo && u->userinfo) {
    memcpy(out + w, u->userinfo, u->userinfo_len), w += u->userinfo_len;
    out[w++] = '@';
  }
  const char *dflt = u->scheme_len == 4 ? ":80" : ":443";
  size_t dl = strlen(dflt);
  if (host > dl && !memcmp(u->host + host - dl, dflt, dl)) host -= dl;
  else if (host > 1 && u->host[host - 1] == ':') host--;
  for (size_t i = 0; i < host; i++) out[w++] = (char)tolower((unsigned char)u->host[i]);
  return w;
}

char *url_normal(const char *s, int with_userinfo, int with_query) {
  struct url u;
  if (url_split(s, &u)) return NULL;
  char *out = malloc(strlen(s) + 8);
  if (!out) return NULL;
  size_t w = normal_origin(&u, with_userinfo, out), p = normal_path(u.path, u.path_len, out + w);
  if (p == (size_t)-1) {
    free(out);
    return NULL;
  }
  w += p;
  if (with_query && u.query) {
    out[w++] = '?';
    memcpy(out + w, u.query, u.query_len), w += u.query_len;
  }
  out[w] = '\0';
  return out;
}

/* What a request path may not hold: bytes a server may take for a separator
 * once decoded, or that no request line can carry. */
static int path_sendable(const char *path) {
  for (const char *p = path; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c <= 0x20 || c == 0x7f || c == '\\' || c == '#') return 0;
    if (c == '%' && (!strncasecmp(p, "%2f", 3) || !strncasecmp(p, "%5c", 3))) return 0;
  }
  return 1;
}

char *url_request(const char *base, const char *path) {
  struct url u;
  if (url_split(base, &u) || (*path && *path != '/') || !path_sendable(path)) {
    errno = EINVAL;
    return NULL;
  }
  size_t sub = strcspn(path, "?"), plen = strlen(path);
  char *out = malloc(strlen(base) + plen + 16), *joined = malloc(u.path_len + sub + 2);
  size_t w = 0, bl = (size_t)-1, jl = (size_t)-1;
  if (out && joined) w = normal_origin(&u, 1, out), bl = normal_path(u.path, u.path_len, joined);
  if (bl == (size_t)-1) {
    free(out), free(joined);
    errno = ENOMEM;
    return NULL;
  }
  size_t dir = bl;
  while (dir > 0 && joined[dir - 1] == '/') dir--; /* "/v1/" + "/chat" is "/v1/chat" */
  if (!sub) {
    memcpy(out + w, joined, jl = bl); /* the base URL itself, as written */
  } else {
    memcpy(joined + dir, path, sub);
    jl = normal_path(joined, dir + sub, out + w);
    int inside = jl != (size_t)-1 && (dir == 0 || (jl >= dir && !memcmp(out + w, joined, dir)
                                                   && (jl == dir || out[w + dir] == '/')));
    if (!inside) {
      free(out), free(joined);
      errno = jl == (size_t)-1 ? ENOMEM : EACCES;
      return NULL;
    }
  }
  free(joined);
  w += jl;
  const char *q = path[sub] == '?' ? path + sub + 1 : NULL;
  if (u.query || q) out[w++] = '?';
  if (u.query) memcpy(out + w, u.query, u.query_len), w += u.query_len;
  if (u.query && q) out[w++] = '&';
  if (q) memcpy(out + w, q, strlen(q)), w += strlen(q);
  out[w] = '\0';
  return out;
}

int url_under(const char *url, const char *prefix) {
  struct url ra, rb;
  if (url_split(url, &ra) || url_split(prefix, &rb)) return 0;
  if (rb.query && !(ra.query && ra.query_len == rb.query_len && !memcmp(ra.query, rb.query, rb.query_len)))
    return 0; /* the prefix's query, when it has one, is part of what is allowed */
  char *a = url_normal(url, 0, 0), *b = url_normal(prefix, 0, 0);
  struct url na, nb;
  int ok = a && b && !url_split(a, &na) && !url_split(b, &nb);
  if (ok) {
    size_t origin = (size_t)(nb.path - b), al = strlen(a), bl = strlen(b);
    while (bl > origin && b[bl - 1] == '/') bl--;
    ok = (size_t)(na.path - a) == origin && al >= bl && !memcmp(a, b, bl)
         && (al == bl || a[bl] == '/' || bl == origin);
  }
  free(a), free(b);
  return ok;
}

char *url_userinfo(const char *s) {
  struct url u;
  if (url_split(s, &u) || !u.userinfo) return NULL;
  char *out = malloc(u.userinfo_len + 1);
  if (!out) return NULL;
  size_t w = 0;
  for (size_t i = 0; i < u.userinfo_len; i++) {
    int hi = -1, lo = -1;
    if (u.userinfo[i] == '%' && i + 2 < u.userinfo_len)
      hi = hexval((unsigned char)u.userinfo[i + 1]), lo = hexval((unsigned char)u.userinfo[i + 2]);
    if (hi >= 0 && lo >= 0) out[w++] = (char)(hi * 16 + lo), i += 2;
    else out[w++] = u.userinfo[i];
  }
  out[w] = '\0';
  return out;
}

int url_same(const char *a, const char *b) {
  char *x = url_normal(a, 0, 1), *y = url_normal(b, 0, 1);
  int same = 0;
  if (x && y) {
    size_t nx = strcspn(x, "?"), ny = strcspn(y, "?");
    const char *qx = x + nx, *qy = y + ny;
    while (nx > 0 && x[nx - 1] == '/') nx--;
    while (ny > 0 && y[ny - 1] == '/') ny--;
    same = nx == ny && !strncmp(x, y, nx) && !strcmp(qx, qy);
  }
  free(x), free(y);
  return same;
}
