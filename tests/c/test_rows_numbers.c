/* The JSON row reader's numbers (metrics/rows_json.c) against the C
 * library: a number with a fraction or an exponent (or too many digits for
 * 64 bits) must be bit for bit what strtod gives, an integer what strtoll
 * gives; on edge cases and on many random numbers in every form a writer
 * produces (%.1g to %.17g, %e, integers, long digit strings). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "evalua/rows.h"

static struct evt_table t;
static const struct evt_schema any = {0, NULL, 0};
static int mismatches;

/* Reads {"x":text} as a row and checks the cell against the reference. */
static void one(const char *text) {
  char row[600], err[600];
  int n = snprintf(row, sizeof row, "{\"x\":%s}", text);
  if (n < 0 || (size_t)n >= sizeof row) return;
  if (evt_json_row(&t, row, (size_t)n, 1, &any, err, sizeof err) != EVT_ROW_OK) {
    if (mismatches++ < 10) fprintf(stderr, "refused %s: %s\n", text, err);
    return;
  }
  const struct evt_cell *c = &t.cols[evt_col_index(&t, "x", 1)].cells[t.n - 1];
  int is_int = !strpbrk(text, ".eE");
  errno = 0;
  long long want_i = is_int ? strtoll(text, NULL, 10) : 0;
  if (is_int && errno == 0 && strlen(text) - (text[0] == '-') < 19) {
    if (c->type != EVT_INT || c->v.i != want_i) {
      if (mismatches++ < 10) fprintf(stderr, "integer %s: got type %d, %lld\n", text, c->type, (long long)c->v.i);
    }
    return;
  }
  double want = strtod(text, NULL);
  if (c->type != EVT_NUM || memcmp(&c->v.d, &want, sizeof want) != 0) {
    if (mismatches++ < 10) fprintf(stderr, "number %s: got type %d, %.17g, want %.17g\n", text, c->type, c->v.d, want);
  }
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* A random finite double: random bits, or a "human" decimal. */
static double random_double(void) {
  for (;;) {
    uint64_t b = next();
    double d;
    switch (b % 4) {
    case 0: memcpy(&d, &b, sizeof d); break;
    case 1: d = (double)(next() % 100000000) / 1000.0; break;
    case 2: d = (double)(int64_t)(next() % 2000001 - 1000000) * 1e-6; break;
    default: d = ((double)(next() >> 11) / 9007199254740992.0) * 1e3; break;
    }
    if (isfinite(d)) return d;
  }
}

int main(void) {
  evt_init(&t);
  static const char *const edge[] = {
      "0", "-0", "0.0", "-0.0", "1", "-1", "0.1", "0.2", "0.3", "1e0", "1E0", "1e+0", "1e-0", "1.5e3",
      "123456789012345678", "-123456789012345678", "999999999999999999", "1234567890123456789",
      "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
      "12345678901234567890123", "9007199254740992", "9007199254740993", "9007199254740993.0",
      "9007199254740992.5", "123456789012345.6", "1234567890123456.7", "12345678901234567.8",
      "1e22", "1e23", "1e-22", "1e-23", "4.5e15", "0.000001", "1e-7", "123.456e-5",
      "5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
      "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
      "0.1000000000000000055511151231257827", "1.00000000000000011102230246251565404236316680908203125",
      "1.00000000000000011102230246251565404236316680908203124", "3.141592653589793238462643383279",
      "0.000000000000000000000000000000000000001", "100000000000000000000000000000000000000000",
      "33.418", "27.235", "2.0", "10.50", "0.30000000000000004", "7.0e-10", "-1.25E+2",
      "000", "01", "1.", ".5", "1e", "-", "+1", "1e309", "-1e309", "NaN", "Infinity",
  };
  int refused = 0;
  char err[600];
  for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
    const char *s = edge[i];
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    /* JSON refuses what strtod accepts but RFC 8259 does not */
    int json_ok = *s && *end == '\0' && isfinite(d) && s[strspn(s, "-0123456789.eE+")] == '\0' &&
                  !(s[s[0] == '-'] == '0' && s[1 + (s[0] == '-')] >= '0' && s[1 + (s[0] == '-')] <= '9') &&
                  s[0] != '+' && s[0] != '.' && !strstr(s, ".e") && s[strlen(s) - 1] != '.' && s[strlen(s) - 1] != 'e';
    if (json_ok) one(s);
    else {
      char row[64];
      int n = snprintf(row, sizeof row, "{\"x\":%s}", s);
      refused += evt_json_row(&t, row, (size_t)n, 1, &any, err, sizeof err) == EVT_ROW_BAD;
    }
  }
  CHECK(refused == 11);
  CHECK(evt_json_row(&t, "{\"x\":-1e309}", 12, 1, &any, err, sizeof err) == EVT_ROW_BAD);
  CHECK_STR(err, "field 'x': number out of range");
  char buf[64];
  for (int i = 0; i < 200000; i++) {
    double d = random_double();
    int form = (int)(next() % 20);
    if (form < 17) snprintf(buf, sizeof buf, "%.*g", form + 1, d);
    else if (form == 17) snprintf(buf, sizeof buf, "%.*e", (int)(next() % 20), d);
    else if (form == 18) snprintf(buf, sizeof buf, "%lld", (long long)(next() >> (next() % 64)) * (next() % 2 ? 1 : -1));
    else { /* a long run of digits, sometimes with a point */
      size_t n = 1 + next() % 40, k = 0;
      buf[k++] = (char)('1' + next() % 9);
      for (size_t j = 1; j < n; j++) buf[k++] = (char)('0' + next() % 10);
      if (next() % 2) {
        size_t at = 1 + next() % n;
        memmove(buf + at + 1, buf + at, k - at), buf[at] = '.', k++;
        if (buf[k - 1] == '.') buf[k++] = '0';
      }
      buf[k] = '\0';
    }
    if (strcmp(buf, "inf") && strcmp(buf, "-inf")) one(buf);
  }
  CHECK(mismatches == 0);
  CHECK(t.n > 200000);
  evt_free(&t);
  return check_report();
}
