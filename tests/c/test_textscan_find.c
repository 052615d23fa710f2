/* The text scan's search for one term (evalua/textscan.h evm_ts_first):
 * its SSE2 path and its portable one give the same places as a plain loop,
 * anywhere and at a word's start, on random folded texts of ASCII letters,
 * digits, spaces, NUL separators, a letter of two bytes (é), one of three
 * (上) and a dash of three (—, no letter), at every start and length. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "evalua/textscan.h"

static const char *const PIECES[] = {"a", "b", "z", "0", "9", " ", ",", "\0", "\xc3\xa9", "\xe4\xb8\x8a", "\xe2\x80\x94"};
#define NPIECES (sizeof PIECES / sizeof *PIECES)

/* The piece's length ("\0" is one byte). */
static size_t piece_len(size_t k) { return k == 7 ? 1 : strlen(PIECES[k]); }

/* Whether the code point ending before text[i] is a letter or digit,
 * knowing only the pieces above. */
static int after_letter(const char *text, size_t i) {
  unsigned char c = (unsigned char)text[i - 1];
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  if (i >= 2 && !memcmp(text + i - 2, "\xc3\xa9", 2)) return 1;
  if (i >= 3 && !memcmp(text + i - 3, "\xe4\xb8\x8a", 3)) return 1;
  return 0; /* the dash */
}

/* The plain loop: the first i in [from, len) where the term starts as it must. */
static const char *naive(const char *text, size_t from, size_t len, const struct evm_ts_term *t) {
  for (size_t i = from; i + t->n <= len; i++)
    if (!memcmp(text + i, t->s, t->n) && (!t->word_start || !text[i - 1] || !after_letter(text, i)))
      return text + i;
  return NULL;
}

/* Appends random pieces to buf (at most cap bytes), after its leading NUL; its length. */
static size_t random_text(char *buf, size_t cap, size_t pieces) {
  size_t n = 1;
  buf[0] = '\0';
  for (size_t k = 0; k < pieces; k++) {
    size_t p = (size_t)rand() % NPIECES, m = piece_len(p);
    if (n + m > cap) break;
    memcpy(buf + n, PIECES[p], m);
    n += m;
  }
  return n;
}

/* A term of 1..4 pieces with no NUL, as the viewer folds them. */
static size_t random_term(char *buf) {
  size_t n = 0, pieces = 1 + (size_t)rand() % 4;
  for (size_t k = 0; k < pieces; k++) {
    size_t p;
    do p = (size_t)rand() % NPIECES; while (p == 7);
    memcpy(buf + n, PIECES[p], piece_len(p));
    n += piece_len(p);
  }
  return n;
}

int main(void) {
  srand(30);
  static char text[400];
  char term[16];
  int differ = 0, found = 0;
  for (int round = 0; round < 3000; round++) {
    size_t len = random_text(text, sizeof text, (size_t)rand() % 120);
    struct evm_ts_term t = {term, random_term(term), rand() % 2};
    for (size_t from = 1; from <= len; from += 1 + (size_t)rand() % 5) {
      const char *want = naive(text, from, len, &t);
      const char *wide = evm_ts_first(text, text + from, text + len, &t, 0);
      const char *bytes = evm_ts_first(text, text + from, text + len, &t, 1);
      found += want != NULL;
      if (wide != want || bytes != want) {
        if (differ++ < 5)
          fprintf(stderr, "term '%.*s' (word start %d) from %zu of %zu: plain %td, wide %td, bytes %td\n", (int)t.n,
                  t.s, t.word_start, from, len, want ? want - text : -1, wide ? wide - text : -1,
                  bytes ? bytes - text : -1);
      }
    }
  }
  CHECK(differ == 0);
  CHECK(found > 10000); /* the cases find something, at word starts too */
  /* by hand: "ba a" holds "a" at 2, after a letter, and at 4, a word's start */
  const char hand[] = "\0ba a\0";
  struct evm_ts_term a = {"a", 1, 1}, anywhere = {"a", 1, 0};
  CHECK(evm_ts_first(hand, hand + 1, hand + 6, &a, 0) == hand + 4);
  CHECK(evm_ts_first(hand, hand + 1, hand + 6, &anywhere, 0) == hand + 2);
  CHECK(evm_ts_first(hand, hand + 1, hand + 6, &a, 1) == hand + 4);
  printf("%d searches found something\n", found);
  return check_report();
}
