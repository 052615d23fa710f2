/* Answer-text metrics over UTF-8: normalisation into tokens and the scores
 * computed on them. The rules and their order are documented in
 * evalua/text.h and docs/text.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "evalua/text.h"

struct tok {
  size_t off, len;
  uint64_t hash;
};

struct toklist {
  char *text; /* the tokens' bytes in order, a space at times between (ascii_block) */
  size_t text_cap, text_len;
  struct tok *tok;
  size_t tok_cap, n;
};

/* A distinct prediction token in the F1 count's hash table: the index of
 * its first occurrence, how many times it occurs, and how many of those
 * the gold answer numbered gold has paired off. The slot is empty unless
 * round is the table's: a new prediction empties it without a memset. */
struct slot {
  size_t tok, count, paired, gold, round;
};

struct evtext_ws {
  int32_t *cp; /* folded code points of the string being tokenised */
  size_t cp_cap;
  struct toklist pred, gold;
  char *norm; /* evtext_normalize's result */
  size_t norm_cap;
  int32_t *ua, *ub; /* code points compared by the edit distance */
  size_t ua_cap, ub_cap;
  size_t *row; /* one row of a dynamic-programming table */
  size_t row_cap;
  struct slot *slots; /* F1's multiset count of the prediction's tokens */
  size_t slots_cap, slots_used; /* slots_used: 0 until counted, for each prediction */
  size_t round;                 /* of the slots in use: 1 up */
  unsigned slot_bits;
  evtext_alloc alloc; /* every buffer comes from here (a host counts them) */
  void *ud;
  size_t max_cells;   /* bound on a DP table's cells; 0 = none */
};

/* ---- memory ------------------------------------------------------------ */

static void *plain_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize) return realloc(p, nsize);
  free(p);
  return NULL;
}

/* p grown to hold need elements of size bytes, or NULL (p untouched). */
static void *grow(evtext_ws *ws, void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap && p) return p;
  size_t c = *cap > 16 ? *cap : 16;
  while (c < need) {
    if (c > SIZE_MAX / 4) return NULL;
    c *= 2;
  }
  if (c > SIZE_MAX / size) return NULL;
  void *q = ws->alloc(ws->ud, p, p ? *cap * size : 0, c * size);
  if (q) *cap = c;
  return q;
}

#define DEFINE_RESERVE(name, T)                                                    \
  static int name(evtext_ws *ws, T **p, size_t *cap, size_t need) {                \
    void *q = grow(ws, *p, cap, need, sizeof(T));                                  \
    if (!q) return EVTEXT_ENOMEM;                                                  \
    *p = q;                                                                        \
    return EVTEXT_OK;                                                              \
  }
DEFINE_RESERVE(reserve_i32, int32_t)
DEFINE_RESERVE(reserve_char, char)
DEFINE_RESERVE(reserve_tok, struct tok)
DEFINE_RESERVE(reserve_size, size_t)
DEFINE_RESERVE(reserve_slot, struct slot)

evtext_ws *evtext_ws_new(void) { return evtext_ws_new_alloc(plain_alloc, NULL); }

evtext_ws *evtext_ws_new_alloc(evtext_alloc alloc, void *ud) {
  evtext_ws *ws = alloc(ud, NULL, 0, sizeof *ws);
  if (!ws) return NULL;
  memset(ws, 0, sizeof *ws);
  ws->alloc = alloc;
  ws->ud = ud;
  return ws;
}

void evtext_ws_set_max_cells(evtext_ws *ws, size_t max_cells) { ws->max_cells = max_cells; }

#define RELEASE(ws, p, cap) ((ws)->alloc((ws)->ud, (p), (p) ? (cap) * sizeof *(p) : 0, 0))

void evtext_ws_free(evtext_ws *ws) {
  if (!ws) return;
  RELEASE(ws, ws->cp, ws->cp_cap);
  RELEASE(ws, ws->pred.text, ws->pred.text_cap);
  RELEASE(ws, ws->pred.tok, ws->pred.tok_cap);
  RELEASE(ws, ws->gold.text, ws->gold.text_cap);
  RELEASE(ws, ws->gold.tok, ws->gold.tok_cap);
  RELEASE(ws, ws->norm, ws->norm_cap);
  RELEASE(ws, ws->ua, ws->ua_cap);
  RELEASE(ws, ws->ub, ws->ub_cap);
  RELEASE(ws, ws->row, ws->row_cap);
  RELEASE(ws, ws->slots, ws->slots_cap);
  ws->alloc(ws->ud, ws, sizeof *ws, 0);
}

/* Refuses a dynamic-programming table over the workspace's bound, before
 * the quadratic work starts. */
static int within_budget(const evtext_ws *ws, size_t rows, size_t cols) {
  if (!ws->max_cells || !rows || !cols) return 1;
  return rows <= ws->max_cells / cols;
}

/* ---- step 1: NFKC_Casefold --------------------------------------------- */

static size_t first_bad_byte(const unsigned char *u, size_t n) {
  size_t i = 0;
  utf8proc_int32_t c;
  while (i < n) {
    utf8proc_ssize_t k = utf8proc_iterate(u + i, (utf8proc_ssize_t)(n - i), &c);
    if (k < 0) return i;
    i += (size_t)k;
  }
  return n;
}

/* The NFKC_Casefold code points of s into ws->cp, their count in *n. */
static int fold(evtext_ws *ws, evtext_str s, size_t *n, size_t *bad) {
  const unsigned char *u = (const unsigned char *)s.s;
  if (s.len > (size_t)PTRDIFF_MAX / 8) return EVTEXT_ENOMEM;
  const utf8proc_option_t opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                                 UTF8PROC_CASEFOLD | UTF8PROC_IGNORE;
  size_t want = s.len + 1;
  for (;;) {
    if (reserve_i32(ws, &ws->cp, &ws->cp_cap, want)) return EVTEXT_ENOMEM;
    utf8proc_ssize_t r = utf8proc_decompose(u, (utf8proc_ssize_t)s.len, ws->cp,
                                            (utf8proc_ssize_t)ws->cp_cap, opts);
    if (r == UTF8PROC_ERROR_INVALIDUTF8) {
      *bad = first_bad_byte(u, s.len);
      return EVTEXT_EUTF8;
    }
    if (r < 0) return EVTEXT_ENOMEM;
    if ((size_t)r > ws->cp_cap) { /* decompositions can be longer than the input */
      want = (size_t)r;
      continue;
    }
    r = utf8proc_normalize_utf32(ws->cp, r, opts);
    if (r < 0) return EVTEXT_ENOMEM;
    *n = (size_t)r;
    return EVTEXT_OK;
  }
}

/* ---- steps 2-4: punctuation, white space, CJK, articles ------------------ */

enum cls { C_PUNCT = 'P', C_SPACE = 'S', C_CJK = 'C', C_WORD = 'W', C_OTHER = 'O' };

/* ASCII by table: Python's str.split() white space (\t..\r, \x1c..\x1f,
 * space), letters and digits, Python's string.punctuation (all other
 * printable characters), and the remaining control characters. */
static const char ascii_class[] =
  "OOOOOOOOOSSSSSOOOOOOOOOOOOOOSSSS"  /* 0x00-0x1f */
  "SPPPPPPPPPPPPPPPWWWWWWWWWWPPPPPP"  /* 0x20-0x3f */
  "PWWWWWWWWWWWWWWWWWWWWWWWWWWPPPPP"  /* 0x40-0x5f */
  "PWWWWWWWWWWWWWWWWWWWWWWWWWWPPPPO"; /* 0x60-0x7f */
_Static_assert(sizeof ascii_class == 129, "one class per ASCII character");

/* Ideographs, kana and Hangul syllables: each one a token. */
static int is_cjk(int32_t c) {
  return (c >= 0x3005 && c <= 0x3007)     /* 々 〆 〇 */
         || (c >= 0x3021 && c <= 0x3029)  /* Suzhou numerals */
         || (c >= 0x3038 && c <= 0x303B)  /* more Suzhou numerals, 〻 */
         || (c >= 0x3040 && c <= 0x30FF)  /* Hiragana, Katakana */
         || (c >= 0x31F0 && c <= 0x31FF)  /* Katakana phonetic extensions */
         || (c >= 0x3400 && c <= 0x4DBF)  /* CJK extension A */
         || (c >= 0x4E00 && c <= 0x9FFF)  /* CJK unified ideographs */
         || (c >= 0xAC00 && c <= 0xD7A3)  /* Hangul syllables */
         || (c >= 0xF900 && c <= 0xFAFF)  /* CJK compatibility ideographs */
         || (c >= 0x1AFF0 && c <= 0x1B16F) /* kana supplements and extensions */
         || (c >= 0x20000 && c <= 0x3FFFF); /* CJK extensions B onwards */
}

/* The CJK unified ideographs of Unicode 1.1, letters (Lo) in every version
 * since, which NFKC_Casefold leaves as they are. */
static int is_common_han(int32_t c) { return c >= 0x4E00 && c <= 0x9FA5; }

static enum cls classify(int32_t c) {
  if (c < 0x80) return (enum cls)ascii_class[c];
  if (is_common_han(c)) return C_CJK;
  switch (utf8proc_category(c)) {
  case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
  case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
  case UTF8PROC_CATEGORY_PO:
    return C_PUNCT;
  case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    return C_SPACE;
  case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
  case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
  case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
  case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
    return is_cjk(c) ? C_CJK : C_WORD;
  default:
    return c == 0x85 ? C_SPACE : C_OTHER; /* NEL splits in Python too */
  }
}

/* A token's hash, 8 bytes at a time: the list's text has 8 bytes of room
 * past its end (reserve_tokens), read and masked off. For tokens of at
 * most 8 bytes it is one-to-one (an odd multiple and a xor-shift of one
 * word after a xor by the length's), so equal hashes and lengths there
 * mean equal tokens. */
static uint64_t token_hash(const char *p, size_t n) {
  const uint64_t m = 0x9E3779B97F4A7C15u;
  uint64_t h = n * m, x;
  for (; n > 8; p += 8, n -= 8) {
    memcpy(&x, p, 8);
    h = (h ^ x) * m;
    h ^= h >> 29;
  }
  memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  x &= ~(uint64_t)0 << (64 - 8 * n); /* n is 1 to 8: a token is never empty */
#else
  x &= ~(uint64_t)0 >> (64 - 8 * n);
#endif
  h = (h ^ x) * m;
  return h ^ (h >> 32);
}

static int is_article(const char *p, size_t n) {
  return (n == 1 && p[0] == 'a') || (n == 2 && p[0] == 'a' && p[1] == 'n') ||
         (n == 3 && memcmp(p, "the", 3) == 0);
}

/* Building state: the tokens' bytes go to text[0..len), the current token
 * starts at text[start], the current word (letters, marks, digits) at
 * text[run], or run == NO_RUN. The list's fields are copied here and back
 * at the end: stores of characters could alias them, and reloading them
 * for every byte was a third of the tokeniser's time. */
#define NO_RUN SIZE_MAX
struct builder {
  char *text;
  struct tok *tok;
  size_t len, n, start, run;
};

static inline void end_token(struct builder *b) {
  if (b->len > b->start) {
    size_t len = b->len - b->start;
    b->tok[b->n++] = (struct tok){b->start, len, token_hash(b->text + b->start, len)};
  }
  b->start = b->len;
}

/* A finished word that is an article goes, and splits its token there
 * (SQuAD replaces it by a space). */
static inline void end_word(struct builder *b) {
  if (b->run == NO_RUN) return;
  if (is_article(b->text + b->run, b->len - b->run)) {
    b->len = b->run;
    end_token(b);
  }
  b->run = NO_RUN;
}

/* The three-byte form inline: every Han character is one, and the call
 * was a tenth of tokenising Chinese answers. */
static void append(struct builder *b, int32_t c) {
  char *o = b->text + b->len;
  if (c < 0x80) {
    *o = (char)c, b->len++;
  } else if (c >= 0x800 && c < 0x10000 && (c < 0xD800 || c > 0xDFFF)) {
    o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3F)), o[2] = (char)(0x80 | (c & 0x3F));
    b->len += 3;
  } else {
    b->len += (size_t)utf8proc_encode_char(c, (utf8proc_uint8_t *)o);
  }
}

/* One code point of class k into the token list being built. */
static inline void step(struct builder *b, enum cls k, int32_t c) {
  switch (k) {
  case C_PUNCT: /* deleted without a trace: "don't" -> "dont" */
    break;
  case C_SPACE:
    end_word(b);
    end_token(b);
    break;
  case C_CJK:
    end_word(b);
    end_token(b);
    append(b, c);
    end_token(b);
    break;
  case C_WORD:
    if (b->run == NO_RUN) b->run = b->len;
    append(b, c);
    break;
  case C_OTHER: /* a symbol inside a token ends a word, not the token */
    end_word(b);
    append(b, c);
    break;
  }
}

/* Room for the tokens of n code points: 4 bytes each, and 8 more for
 * ascii_run's whole-word stores. */
static int reserve_tokens(evtext_ws *ws, struct toklist *tl, size_t n) {
  if (n > SIZE_MAX / 4 - 8 || reserve_char(ws, &tl->text, &tl->text_cap, 4 * n + 8) ||
      reserve_tok(ws, &tl->tok, &tl->tok_cap, n + 1))
    return EVTEXT_ENOMEM;
  return EVTEXT_OK;
}

static int ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES ((uint64_t)0x0101010101010101ULL)
#define HIGHS ((uint64_t)0x8080808080808080ULL)

/* The bytes of x (each below 0x80) that are at least c (at most 0x80),
 * each as its high bit: 0x80 + byte - c cannot borrow from its neighbour. */
static uint64_t at_least(uint64_t x, unsigned c) { return ((x | HIGHS) - ONES * c) & HIGHS; }

static uint64_t in_range(uint64_t x, unsigned lo, unsigned hi) {
  return at_least(x, lo) & ~at_least(x, hi + 1);
}

static int has_high_bit(const unsigned char *u) {
  uint64_t x;
  memcpy(&x, u, 8);
  return (x & HIGHS) != 0;
}

/* How many of the n bytes at u are letters or digits, copied lowercased to
 * o, 8 at a time: the bytes past the run are written too (o has room). The
 * last bytes are read zero-padded, and 0 ends a run. */
static size_t ascii_run(char *o, const unsigned char *u, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = 0;
    if (n - i >= 8) memcpy(&x, u + i, 8);
    else
      for (size_t k = 0; k < n - i; k++) x |= (uint64_t)u[i + k] << 8 * k;
    uint64_t letter = in_range(x | ONES * 0x20, 'a', 'z'); /* 0x20 is the case bit: 0x80 >> 2 */
    x |= letter >> 2;
    memcpy(o + i, &x, 8);
    uint64_t stop = ~(letter | in_range(x, '0', '9')) & HIGHS;
    if (stop) return i + (size_t)__builtin_ctzll(stop) / 8;
  }
  return n;
}
#else
static int has_high_bit(const unsigned char *u) {
  for (int i = 0; i < 8; i++)
    if (u[i] >= 0x80) return 1;
  return 0;
}

static size_t ascii_run(char *o, const unsigned char *u, size_t n) {
  size_t i = 0;
  for (; i < n && ascii_class[ascii_lower(u[i])] == C_WORD; i++) o[i] = (char)ascii_lower(u[i]);
  return i;
}
#endif

static size_t ascii_prefix(const unsigned char *u, size_t len) {
  size_t n = 0;
  while (n + 8 <= len && !has_high_bit(u + n)) n += 8;
  while (n < len && u[n] < 0x80) n++;
  return n;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* 16 bytes of letters, digits and spaces only, the bulk of English
 * answers, in one step (else 0, and nothing done): lowercased and stored
 * as they lie, a space too (a token is an offset and a length, and none
 * covers it), then each space ends the word and the token before it as
 * step() does. Per word this was half the tokeniser's instructions. */
static int ascii_block(struct builder *b, const unsigned char *u) {
  const __m128i x = _mm_loadu_si128((const void *)u), lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
  const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                       _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1)));
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
  unsigned word = (unsigned)_mm_movemask_epi8(_mm_or_si128(letter, digit));
  if ((word | (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')))) != 0xFFFF) return 0;
  _mm_storeu_si128((void *)(b->text + b->len), _mm_or_si128(x, _mm_and_si128(letter, _mm_set1_epi8(0x20))));
  const size_t base = b->len;
  for (unsigned pos = 0; pos < 16;) {
    if (word >> pos & 1) { /* a word (or its part) up to the next space */
      if (b->run == NO_RUN) b->run = base + pos;
      pos += (unsigned)__builtin_ctz((~word | 0x10000u) >> pos);
    } else {
      b->len = base + pos;
      end_word(b);
      end_token(b);
      b->start = base + ++pos;
    }
  }
  b->len = base + 16;
  return 1;
}
#endif

/* ASCII: NFKC changes nothing and folding is tolower. A run of letters and
 * digits, the bulk of any text, goes in at once; the other bytes one by one. */
static void ascii_tokens(struct builder *b, const unsigned char *u, size_t n) {
  for (size_t i = 0; i < n; i++) {
#if defined(__SSE2__)
    while (n - i >= 16 && ascii_block(b, u + i)) i += 16;
    if (i == n) break;
#endif
    size_t k = ascii_run(b->text + b->len, u + i, n - i);
    if (k) {
      if (b->run == NO_RUN) b->run = b->len;
      b->len += k, i += k;
      if (i == n) break;
    }
    int c = ascii_lower(u[i]);
    step(b, (enum cls)ascii_class[c], c);
  }
}

/* Text of ASCII and common Han only, the bulk of Chinese answers, folds by
 * lowercasing its ASCII: its code points into ws->cp without utf8proc's
 * decomposition, or 0 when s has anything else (or is not valid UTF-8). */
static int fold_han(evtext_ws *ws, evtext_str s, size_t *n) {
  const unsigned char *u = (const unsigned char *)s.s;
  if (reserve_i32(ws, &ws->cp, &ws->cp_cap, s.len + 1)) return 0;
  size_t k = 0;
  for (size_t i = 0; i < s.len; k++) {
    if (u[i] < 0x80) {
      ws->cp[k] = ascii_lower(u[i++]);
      continue;
    }
    if (s.len - i < 3 || (u[i] & 0xF0) != 0xE0 || (u[i + 1] & 0xC0) != 0x80 || (u[i + 2] & 0xC0) != 0x80)
      return 0;
    int32_t c = (u[i] & 0x0F) << 12 | (u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F);
    if (!is_common_han(c)) return 0;
    ws->cp[k] = c, i += 3;
  }
  *n = k;
  return 1;
}

static int tokenize_into(evtext_ws *ws, struct toklist *tl, evtext_str s, size_t *bad) {
  const unsigned char *u = (const unsigned char *)s.s;
  size_t n = ascii_prefix(u, s.len);
  int ascii = n == s.len, rc = ascii || fold_han(ws, s, &n) ? EVTEXT_OK : fold(ws, s, &n, bad);
  if (!rc) rc = reserve_tokens(ws, tl, n);
  if (rc) return rc;
  struct builder b = {tl->text, tl->tok, 0, 0, 0, NO_RUN};
  if (ascii) ascii_tokens(&b, u, n);
  else
    for (size_t i = 0; i < n; i++) step(&b, classify(ws->cp[i]), ws->cp[i]);
  end_word(&b);
  end_token(&b);
  tl->text_len = b.len, tl->n = b.n;
  return EVTEXT_OK;
}

/* ---- comparisons ------------------------------------------------------- */

static int tok_eq(const struct toklist *a, size_t i, const struct toklist *b, size_t j) {
  const struct tok *x = &a->tok[i], *y = &b->tok[j];
  return x->hash == y->hash && x->len == y->len &&
         (x->len <= 8 || memcmp(a->text + x->off, b->text + y->off, x->len) == 0);
}

static int lists_equal(const struct toklist *a, const struct toklist *b) {
  if (a->n != b->n) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!tok_eq(a, i, b, i)) return 0;
  return 1;
}

/* The table index takes the high bits of a Fibonacci multiple of the hash. */
static size_t slot_of(uint64_t hash, unsigned bits) {
  return (size_t)((hash * 0x9E3779B97F4A7C15u) >> (64 - bits));
}

/* The prediction's tokens counted in an open-addressing table on their
 * hashes, once for all its gold answers. */
static int count_prediction(evtext_ws *ws) {
  const struct toklist *p = &ws->pred;
  size_t size = 16;
  unsigned bits = 4;
  while (size < 2 * p->n) {
    if (size > SIZE_MAX / 4) return EVTEXT_ENOMEM;
    size *= 2, bits++;
  }
  size_t cap = ws->slots_cap;
  if (reserve_slot(ws, &ws->slots, &ws->slots_cap, size)) return EVTEXT_ENOMEM;
  struct slot *t = ws->slots;
  if (cap != ws->slots_cap) memset(t, 0, ws->slots_cap * sizeof *t), ws->round = 0;
  size_t round = ++ws->round;
  for (size_t i = 0; i < p->n; i++) {
    size_t h = slot_of(p->tok[i].hash, bits);
    while (t[h].round == round && !tok_eq(p, t[h].tok, p, i)) h = (h + 1) & (size - 1);
    if (t[h].round != round) t[h] = (struct slot){i, 0, 0, 0, round};
    t[h].count++;
  }
  ws->slots_used = size, ws->slot_bits = bits;
  return EVTEXT_OK;
}

/* Size of the multiset intersection of the prediction's tokens and those
 * of gold answer number gold (from 1, one number per answer): each gold
 * token pairs off one that is left. Linear in both lengths, where sorting
 * both lists cost n log n for every gold answer. */
static size_t common_tokens(evtext_ws *ws, const struct toklist *g, size_t gold) {
  const struct toklist *p = &ws->pred;
  struct slot *t = ws->slots;
  size_t c = 0, mask = ws->slots_used - 1, round = ws->round;
  for (size_t j = 0; j < g->n; j++) {
    size_t h = slot_of(g->tok[j].hash, ws->slot_bits);
    while (t[h].round == round && !tok_eq(p, t[h].tok, g, j)) h = (h + 1) & mask;
    if (t[h].round != round) continue;
    if (t[h].gold != gold) t[h].gold = gold, t[h].paired = 0;
    if (t[h].paired < t[h].count) t[h].paired++, c++;
  }
  return c;
}

/* F1 from an overlap count, in the order of operations of the SQuAD script. */
static double overlap_f1(size_t common, size_t npred, size_t ngold) {
  if (npred == 0 || ngold == 0) return npred == ngold;
  if (common == 0) return 0.0;
  double precision = 1.0 * (double)common / (double)npred;
  double recall = 1.0 * (double)common / (double)ngold;
  return (2 * precision * recall) / (precision + recall);
}

static int lcs_length(evtext_ws *ws, const struct toklist *p, const struct toklist *g, size_t *out) {
  if (!within_budget(ws, p->n, g->n)) return EVTEXT_EBUDGET;
  if (reserve_size(ws, &ws->row, &ws->row_cap, g->n + 1)) return EVTEXT_ENOMEM;
  size_t *row = ws->row;
  memset(row, 0, (g->n + 1) * sizeof *row);
  for (size_t i = 0; i < p->n; i++) {
    size_t diag = 0; /* row[j - 1] of the previous line */
    for (size_t j = 1; j <= g->n; j++) {
      size_t up = row[j];
      row[j] = tok_eq(p, i, g, j - 1) ? diag + 1 : (up > row[j - 1] ? up : row[j - 1]);
      diag = up;
    }
  }
  *out = row[g->n];
  return EVTEXT_OK;
}

static int levenshtein(evtext_ws *ws, const int32_t *a, size_t la, const int32_t *b, size_t lb,
                       size_t *out) {
  while (la && lb && a[0] == b[0]) a++, b++, la--, lb--; /* common ends cost nothing */
  while (la && lb && a[la - 1] == b[lb - 1]) la--, lb--;
  if (!within_budget(ws, la, lb)) return EVTEXT_EBUDGET;
  if (reserve_size(ws, &ws->row, &ws->row_cap, lb + 1)) return EVTEXT_ENOMEM;
  size_t *row = ws->row;
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  *out = row[lb];
  return EVTEXT_OK;
}

/* levenshtein within the band |i - j| <= bound: cells outside it, and
 * values above bound, count as bound + 1. */
static int levenshtein_within(evtext_ws *ws, const int32_t *a, size_t la, const int32_t *b, size_t lb,
                              size_t bound, size_t *out) {
  while (la && lb && a[0] == b[0]) a++, b++, la--, lb--;
  while (la && lb && a[la - 1] == b[lb - 1]) la--, lb--;
  if (bound >= la + lb) return levenshtein(ws, a, la, b, lb, out);
  size_t over = bound + 1;
  if ((la > lb ? la - lb : lb - la) > bound) return *out = over, EVTEXT_OK;
  if (!within_budget(ws, la, 2 * bound + 1)) return EVTEXT_EBUDGET;
  if (reserve_size(ws, &ws->row, &ws->row_cap, lb + 1)) return EVTEXT_ENOMEM;
  size_t *row = ws->row;
  for (size_t j = 0; j <= lb; j++) row[j] = j < over ? j : over;
  for (size_t i = 1; i <= la; i++) {
    size_t lo = i > bound ? i - bound : 1, hi = i + bound < lb ? i + bound : lb, least = over;
    size_t diag = row[lo - 1];
    row[lo - 1] = lo == 1 && i < over ? i : over;
    for (size_t j = lo; j <= hi; j++) {
      size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best < over ? best : over;
      if (row[j] < least) least = row[j];
      diag = up;
    }
    if (least == over) return *out = over, EVTEXT_OK; /* every path is past bound already */
  }
  *out = row[lb];
  return EVTEXT_OK;
}

static double edit_similarity(size_t distance, size_t la, size_t lb) {
  size_t longer = la > lb ? la : lb;
  return longer == 0 ? 1.0 : 1.0 - (double)distance / (double)longer;
}

/* Code points of s into *buf, validating it. */
static int decode(evtext_ws *ws, evtext_str s, int32_t **buf, size_t *cap, size_t *n, size_t *bad) {
  if (reserve_i32(ws, buf, cap, s.len + 1)) return EVTEXT_ENOMEM;
  const unsigned char *u = (const unsigned char *)s.s;
  size_t i = 0, k = 0;
  while (i < s.len) {
    utf8proc_int32_t c;
    utf8proc_ssize_t step = utf8proc_iterate(u + i, (utf8proc_ssize_t)(s.len - i), &c);
    if (step < 0) {
      *bad = i;
      return EVTEXT_EUTF8;
    }
    (*buf)[k++] = c;
    i += (size_t)step;
  }
  *n = k;
  return EVTEXT_OK;
}

/* Code points of the normalised string (tokens joined by spaces). */
static int joined_codepoints(evtext_ws *ws, const struct toklist *tl, int32_t **buf, size_t *cap, size_t *n) {
  if (reserve_i32(ws, buf, cap, tl->text_len + tl->n + 1)) return EVTEXT_ENOMEM;
  size_t k = 0;
  for (size_t t = 0; t < tl->n; t++) {
    if (t) (*buf)[k++] = ' ';
    const unsigned char *u = (const unsigned char *)tl->text + tl->tok[t].off;
    for (size_t i = 0; i < tl->tok[t].len;) {
      utf8proc_int32_t c;
      i += (size_t)utf8proc_iterate(u + i, (utf8proc_ssize_t)(tl->tok[t].len - i), &c);
      (*buf)[k++] = c;
    }
  }
  *n = k;
  return EVTEXT_OK;
}

/* ---- scores ------------------------------------------------------------ */

/* One normalised comparison of ws->pred (code points in ws->ua for the edit
 * metric) against ws->gold. */
static int compare(evtext_ws *ws, enum evtext_metric metric, size_t npred_cp, size_t gold, double *score) {
  const struct toklist *p = &ws->pred, *g = &ws->gold;
  size_t k = 0;
  int rc = EVTEXT_OK;
  switch (metric) {
  case EVTEXT_EXACT_NORM:
    *score = lists_equal(p, g);
    break;
  case EVTEXT_F1:
    if (!ws->slots_used) rc = count_prediction(ws);
    if (!rc) k = common_tokens(ws, g, gold);
    *score = overlap_f1(k, p->n, g->n);
    break;
  case EVTEXT_ROUGE_L:
    rc = lcs_length(ws, p, g, &k);
    *score = overlap_f1(k, p->n, g->n);
    break;
  default: { /* EVTEXT_EDIT_NORM */
    size_t ngold_cp = 0, d = 0;
    rc = joined_codepoints(ws, g, &ws->ub, &ws->ub_cap, &ngold_cp);
    if (!rc) rc = levenshtein(ws, ws->ua, npred_cp, ws->ub, ngold_cp, &d);
    *score = edit_similarity(d, npred_cp, ngold_cp);
  }
  }
  return rc;
}

/* What tokenize_into says of s, without the tokens. */
static int check_utf8(evtext_str s, size_t *bad) {
  const unsigned char *u = (const unsigned char *)s.s;
  size_t n = ascii_prefix(u, s.len);
  if (n < s.len) n += first_bad_byte(u + n, s.len - n);
  if (n == s.len) return EVTEXT_OK;
  *bad = n;
  return EVTEXT_EUTF8;
}

/* A gold answer byte for byte the prediction scores 1 under the linear
 * metrics (all tokens in common), or normalises to nothing as it does.
 * The quadratic ones still compare, so that their bound on the work is
 * the same whatever the answers. */
static int same_as_prediction(enum evtext_metric metric, evtext_str pred, evtext_str gold) {
  return (metric == EVTEXT_F1 || metric == EVTEXT_EXACT_NORM) && gold.len == pred.len &&
         memcmp(gold.s, pred.s, pred.len) == 0;
}

static int score_normalised(evtext_ws *ws, enum evtext_metric metric, evtext_str pred,
                            const evtext_str *golds, size_t ngolds, double *score,
                            evtext_error *err) {
  int rc = tokenize_into(ws, &ws->pred, pred, &err->byte);
  size_t npred_cp = 0;
  if (!rc && metric == EVTEXT_EDIT_NORM)
    rc = joined_codepoints(ws, &ws->pred, &ws->ua, &ws->ua_cap, &npred_cp);
  if (rc) return rc;
  ws->slots_used = 0;
  double best = 0;
  int any = 0;
  for (size_t k = 0; k < ngolds; k++) {
    err->which = (long)k;
    if (best == 1.0) { /* still validate every gold */
      if ((rc = check_utf8(golds[k], &err->byte))) return rc;
      continue;
    }
    if (same_as_prediction(metric, pred, golds[k])) { /* its tokens are the prediction's */
      if (ws->pred.n) any = 1, best = 1.0;
      continue;
    }
    rc = tokenize_into(ws, &ws->gold, golds[k], &err->byte);
    if (rc) return rc;
    if (ws->gold.n == 0) continue;
    any = 1;
    double s = 0;
    if ((rc = compare(ws, metric, npred_cp, k + 1, &s))) return rc;
    if (s > best) best = s;
  }
  err->which = -1;
  *score = any ? best : ws->pred.n == 0;
  return EVTEXT_OK;
}

static int score_edit(evtext_ws *ws, evtext_str pred, const evtext_str *golds, size_t ngolds,
                      double *score, evtext_error *err) {
  size_t la = 0, lb = 0, d = 0;
  int rc = decode(ws, pred, &ws->ua, &ws->ua_cap, &la, &err->byte);
  if (rc) return rc;
  double best = 0;
  for (size_t k = 0; k < ngolds; k++) {
    err->which = (long)k;
    if ((rc = decode(ws, golds[k], &ws->ub, &ws->ub_cap, &lb, &err->byte))) return rc;
    if (best == 1.0) continue;
    if ((rc = levenshtein(ws, ws->ua, la, ws->ub, lb, &d))) return rc;
    double s = edit_similarity(d, la, lb);
    if (s > best) best = s;
  }
  err->which = -1;
  *score = best;
  return EVTEXT_OK;
}

int evtext_edit_distance(evtext_ws *ws, evtext_str a, evtext_str b, size_t bound, size_t *distance,
                         evtext_error *err) {
  size_t la = 0, lb = 0;
  err->which = -1;
  int rc = decode(ws, a, &ws->ua, &ws->ua_cap, &la, &err->byte);
  if (rc) return rc;
  err->which = 0;
  if ((rc = decode(ws, b, &ws->ub, &ws->ub_cap, &lb, &err->byte))) return rc;
  err->which = -1;
  return levenshtein_within(ws, ws->ua, la, ws->ub, lb, bound, distance);
}

int evtext_score(evtext_ws *ws, enum evtext_metric metric, evtext_str pred,
                 const evtext_str *golds, size_t ngolds, double *score, evtext_error *err) {
  static const evtext_str no_answer = {"", 0};
  if (ngolds == 0) golds = &no_answer, ngolds = 1;
  err->which = -1;
  err->byte = 0;
  switch (metric) {
  case EVTEXT_EXACT:
    *score = 0;
    for (size_t k = 0; k < ngolds; k++)
      if (golds[k].len == pred.len && memcmp(golds[k].s, pred.s, pred.len) == 0) *score = 1;
    return EVTEXT_OK;
  case EVTEXT_EDIT:
    return score_edit(ws, pred, golds, ngolds, score, err);
  default:
    return score_normalised(ws, metric, pred, golds, ngolds, score, err);
  }
}

int evtext_tokenize(evtext_ws *ws, evtext_str s, size_t *ntokens, evtext_error *err) {
  err->which = -1;
  err->byte = 0;
  int rc = tokenize_into(ws, &ws->pred, s, &err->byte);
  *ntokens = rc ? 0 : ws->pred.n;
  return rc;
}

evtext_str evtext_token(const evtext_ws *ws, size_t i) {
  const struct tok *t = &ws->pred.tok[i];
  return (evtext_str){ws->pred.text + t->off, t->len};
}

int evtext_normalize(evtext_ws *ws, evtext_str s, evtext_str *out, evtext_error *err) {
  size_t n = 0;
  int rc = evtext_tokenize(ws, s, &n, err);
  if (rc) return rc;
  const struct toklist *tl = &ws->pred;
  if (reserve_char(ws, &ws->norm, &ws->norm_cap, tl->text_len + n + 1)) return EVTEXT_ENOMEM;
  size_t k = 0;
  for (size_t t = 0; t < n; t++) {
    if (t) ws->norm[k++] = ' ';
    memcpy(ws->norm + k, tl->text + tl->tok[t].off, tl->tok[t].len);
    k += tl->tok[t].len;
  }
  ws->norm[k] = '\0';
  *out = (evtext_str){ws->norm, k};
  return EVTEXT_OK;
}
