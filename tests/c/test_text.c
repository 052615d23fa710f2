/* Answer-text metrics: normalisation and scores with exact expected values.
 *
 * English expectations are the numbers of the official SQuAD v2.0
 * evaluation script (evaluate-v2.0.py: normalize_answer, compute_exact,
 * compute_f1, max over the gold answers that normalise to something, else
 * ['']), run on the same strings with Python 3.11; each is also worked out
 * by hand in its comment. CJK expectations are worked out by hand from the
 * rules in docs/text.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "evalua/text.h"

static evtext_ws *ws;

#define NGOLDS(...) (sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *))
#define SCORE(metric, pred, ...) \
  score(metric, pred, (const char *[]){__VA_ARGS__}, NGOLDS(__VA_ARGS__))

static double score(enum evtext_metric m, const char *pred, const char *const *golds, size_t n) {
  evtext_str g[8];
  for (size_t i = 0; i < n; i++) g[i] = (evtext_str){golds[i], strlen(golds[i])};
  evtext_error err;
  double s = -1;
  if (evtext_score(ws, m, (evtext_str){pred, strlen(pred)}, g, n, &s, &err) != EVTEXT_OK) return -1;
  return s;
}

static const char *norm(const char *s) {
  evtext_str out;
  evtext_error err;
  if (evtext_normalize(ws, (evtext_str){s, strlen(s)}, &out, &err) != EVTEXT_OK) return NULL;
  return out.s;
}

static void test_normalize_english(void) {
  CHECK_STR(norm("The Cat's hat, a theater!"), "cats hat theater"); /* "the" inside words stays */
  CHECK_STR(norm("  June   29th,\t2007\n"), "june 29th 2007");
  CHECK_STR(norm("a.m. the-end"), "am theend");    /* punctuation goes first, as in SQuAD */
  CHECK_STR(norm("an apple a day"), "apple day");
  CHECK_STR(norm("$100 + 5% = <x>"), "100 5 x"); /* all of string.punctuation, incl. $+=<> */
  CHECK_STR(norm(""), "");
  CHECK_STR(norm("the a an"), "");
}

static void test_normalize_unicode(void) {
  CHECK_STR(norm("iPhone于2007年发布"), "iphone 于 2007 年 发 布");      /* the issue's example */
  CHECK_STR(norm("\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3\xEF\xBC\x91\xEF\xBC\x92"), "abc12"); /* ＡＢＣ１２ */
  CHECK_STR(norm("，。！？、“”《》（）"), "");                         /* full-width punctuation */
  CHECK_STR(norm("《三体》，刘慈欣。"), "三 体 刘 慈 欣");
  CHECK_STR(norm("東京タワー・テスト"), "東 京 タ ワ ー テ ス ト");       /* ・ is punctuation (Po) */
  CHECK_STR(norm("ｶﾀｶﾅ"), "カ タ カ ナ");                               /* half-width kana: NFKC */
  CHECK_STR(norm("한국어 문장입니다."), "한 국 어 문 장 입 니 다");
  CHECK_STR(norm("Café NAÏVE"), "café naïve");                        /* accents kept, case folded */
  CHECK_STR(norm("cafe\xCC\x81"), "café");                            /* e + U+0301 composes */
  CHECK_STR(norm("Straße ΣΑΣ"), "strasse σασ");                       /* full case folding */
  CHECK_STR(norm("soft\xC2\xADhyphen zero\xE2\x80\x8Bwidth"), "softhyphen zerowidth"); /* ignorables */
  CHECK_STR(norm("IBM\xE3\x80\x80" "2024\xC2\xA0x"), "ibm 2024 x");   /* U+3000, U+00A0 split */
  CHECK_STR(norm("Tokyo—Osaka"), "tokyoosaka");                       /* U+2014 is Pd: deleted */
  /* Articles are whole words: a CJK character is a word of its own, a
   * symbol (°, category So) ends a word; letters with accents do not. */
  CHECK_STR(norm("the苹果"), "苹 果");
  CHECK_STR(norm("the°C x°the"), "°c x°");
  CHECK_STR(norm("añejo thé"), "añejo thé");
  CHECK_STR(norm("ＴＨＥ answer"), "answer");                           /* full-width THE */
}

/* The fast paths (ASCII 8 bytes at a time, ASCII with common Han without
 * utf8proc) by hand at their edges: punctuation inside a word, articles at
 * the ends and across deleted punctuation, case, control characters (a
 * symbol: it ends a word, not the token), runs across 8-byte blocks. */
static void test_fast_paths(void) {
  CHECK_STR(norm("Don't e-mail O'Neil"), "dont email oneil");
  CHECK_STR(norm("t.h.e a, (an) THE. x"), "x");             /* "t.h.e" is "the" once the dots go */
  CHECK_STR(norm("A"), "");
  CHECK_STR(norm("theAN anthem Theory"), "thean anthem theory");
  CHECK_STR(norm("the\x01x x\x7fthe a\x1b"), "\x01x x\x7f \x1b"); /* \x1b after "a": "a" goes, \x1b stays */
  CHECK_STR(norm("x\x1cy\x1fz"), "x y z");                  /* \x1c..\x1f split, as in Python */
  CHECK_STR(norm("ABCDEFGH"), "abcdefgh");                  /* one block exactly */
  CHECK_STR(norm("ABCDEFGHIJKLMNOPQ the"), "abcdefghijklmnopq"); /* two blocks and a tail */
  CHECK_STR(norm("abcdefg,hijklmnop"), "abcdefghijklmnop"); /* punctuation at byte 7 */
  CHECK_STR(norm("abcdefgh the"), "abcdefgh");              /* an article right after a block */
  CHECK_STR(norm("1234567 89@ZZ"), "1234567 89zz");
  CHECK_STR(norm("Zz[]`{}~@"), "zz");                       /* the printable bytes around the letters */
  CHECK_STR(norm("iPhone于2007年"), "iphone 于 2007 年");    /* Han fast path */
  CHECK_STR(norm("THE中国A"), "中 国");
  CHECK_STR(norm("\xE4\xB8\xAD\xEF\xBC\x8C"), "中");         /* 中， : full-width comma needs NFKC */
  /* tokens equal up to their last byte, within one hashed word and past it */
  CHECK(SCORE(EVTEXT_F1, "abcdefgh abcdefghi", "abcdefgi abcdefghj") == 0.0);
  CHECK(SCORE(EVTEXT_F1, "x abcdefghijklmnopq", "abcdefghijklmnopr x") == 0.5);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "Abcdefghijklmnopq the", "abcdefghijklmnopq") == 1.0);
  /* a gold answer the same bytes as the prediction: 1, or nothing to
   * compare when both normalise to nothing; the golds after a perfect
   * match are still checked */
  CHECK(SCORE(EVTEXT_F1, "The Cat", "The Cat", "dog") == 1.0);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "the", "the", "x") == 0.0); /* "x" is the only gold with tokens */
  CHECK(SCORE(EVTEXT_F1, "the", "the") == 1.0);                /* SQuAD: [''] against '' */
  /* one prediction's counts are gone for the next, whatever the table's size */
  CHECK(SCORE(EVTEXT_F1, "cat dog", "dog") == (2 * 0.5 * 1.0) / (0.5 + 1.0)); /* [hand] p 1/2, r 1 */
  CHECK(SCORE(EVTEXT_F1, "emu", "dog", "cat") == 0.0);
  CHECK(SCORE(EVTEXT_F1, "t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 u0 u1 u2 u3 u4 u5 u6 u7 u8 u9", "u9") == (2 * 0.05 * 1.0) / (0.05 + 1.0));
  CHECK(SCORE(EVTEXT_F1, "x", "u9", "t0") == 0.0);
  const evtext_str golds[] = {{"a b", 3}, {"\xC3\xA9", 2}, {"x\xFF", 2}};
  double sc = -1;
  evtext_error err;
  CHECK(evtext_score(ws, EVTEXT_F1, golds[0], golds, 3, &sc, &err) == EVTEXT_EUTF8);
  CHECK(err.which == 2 && err.byte == 1);
  CHECK(evtext_score(ws, EVTEXT_EXACT_NORM, golds[0], golds, 2, &sc, &err) == EVTEXT_OK && sc == 1.0);
  size_t n = 0;
  CHECK(evtext_tokenize(ws, (evtext_str){"a\0b", 3}, &n, &err) == EVTEXT_OK && n == 1); /* NUL: a symbol */
  CHECK(evtext_token(ws, 0).len == 2 && memcmp(evtext_token(ws, 0).s, "\0b", 2) == 0);
  CHECK(evtext_tokenize(ws, (evtext_str){"x\xE4\xB8", 3}, &n, &err) == EVTEXT_EUTF8 && err.byte == 1);
}

/* The fast paths against utf8proc's: a soft hyphen, which NFKC_Casefold
 * drops, sends the same text down the general path. Random strings over
 * an alphabet of the cases above; then longer ones mostly of words and
 * spaces, whose 16-byte blocks take the one-step path (ascii_block) next
 * to the byte-wise one, articles and words across the blocks' edges. */
static void agree(const char *const *parts, size_t nparts, int most_parts, int *differ) {
  uint64_t seed = 12345;
  char s[1024], slow[1024], fast[1024];
  for (int t = 0; t < 3000; t++) {
    size_t len = 2;
    memcpy(s, "\xC2\xAD", 2);
    for (int k = (int)((seed >> 33) % (uint64_t)most_parts); k >= 0; k--) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      const char *p = parts[(seed >> 33) % nparts];
      memcpy(s + len, p, strlen(p)), len += strlen(p);
    }
    s[len] = '\0';
    const char *a = norm(s), *b;
    snprintf(slow, sizeof slow, "%s", a ? a : "(error)");
    b = norm(s + 2);
    snprintf(fast, sizeof fast, "%s", b ? b : "(error)");
    if (strcmp(slow, fast) && (*differ)++ < 3) fprintf(stderr, "fast path differs on \"%s\": \"%s\" vs \"%s\"\n", s + 2, fast, slow);
  }
}

static void test_fast_paths_agree(void) {
  static const char *const parts[] = {"a", "an", "the", "The", "A", "x", "Word", "ABCDEFGHI", "7", " ", "  ",
                                      "\t", ".", "'", "-", "$", "/", ":", "@", "[", "`", "{", "\x01", "\x7f", "\x1c", "中", "国"};
  static const char *const words[] = {"a", "an", "the", "THE", "x", "Zz", "Word", "answer", "ABCDEFGHI", "0123456789",
                                      "7", " ", " ", " ", "  ", ".", "-", "'", "@"};
  int differ = 0;
  agree(parts, sizeof parts / sizeof *parts, 16, &differ);
  agree(words, sizeof words / sizeof *words, 80, &differ);
  CHECK(differ == 0);
}

static void test_tokens(void) {
  size_t n = 0;
  evtext_error err;
  const char *s = "The 北京 answer";
  CHECK(evtext_tokenize(ws, (evtext_str){s, strlen(s)}, &n, &err) == EVTEXT_OK);
  CHECK(n == 3);
  const char *want[] = {"北", "京", "answer"};
  for (size_t i = 0; i < n && i < 3; i++) {
    evtext_str t = evtext_token(ws, i);
    CHECK(t.len == strlen(want[i]) && memcmp(t.s, want[i], t.len) == 0);
  }
}

static void test_squad_english(void) {
  const double tol = 1e-15;
  /* june 29th 2007 vs june 29 2007: 2 common of 3 and 3 -> 2/3 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "June 29th, 2007", "June 29, 2007"), 2.0 / 3, tol);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "June 29th, 2007", "June 29, 2007") == 0);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "The Eiffel Tower", "Eiffel Tower") == 1);
  CHECK(SCORE(EVTEXT_EXACT, "The Eiffel Tower", "Eiffel Tower") == 0);
  CHECK(SCORE(EVTEXT_EXACT, "Eiffel Tower", "x", "Eiffel Tower") == 1);
  /* theater in city vs theater city: P 2/3, R 1 -> 0.8 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "a theater in the city", "theater city"), 0.8, tol);
  CHECK(SCORE(EVTEXT_F1, "Denver Broncos", "Denver Broncos", "Broncos", "The Denver Broncos") == 1);
  /* multiset: [cat] vs [cat cat] -> P 1, R 1/2 -> 2/3 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "the the the cat", "cat cat"), 2.0 / 3, tol);
  /* max over golds: 0.5 and (P 1, R 2/3) 0.8 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "Broncos won", "Denver Broncos", "The Broncos won it"), 0.8, tol);
  /* yes answer is 42 vs answer is fortytwo: P 2/4, R 2/3 -> 4/7 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "Yes, the answer is 42!", "42", "the answer is forty-two"), 4.0 / 7, tol);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "don't", "dont") == 1);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "U.S.A.", "usa") == 1);
  CHECK(SCORE(EVTEXT_F1, "x y z", "y x z") == 1); /* F1 ignores order */
}

static void test_empty_answers(void) {
  CHECK(SCORE(EVTEXT_F1, "", "") == 1);
  CHECK(SCORE(EVTEXT_F1, "", "x") == 0);
  CHECK(SCORE(EVTEXT_F1, "x", "") == 0);
  CHECK(SCORE(EVTEXT_F1, "the", "") == 1);       /* "the" normalises to nothing */
  CHECK(SCORE(EVTEXT_EXACT_NORM, "the", "") == 1);
  CHECK(SCORE(EVTEXT_EXACT, "the", "") == 0);
  /* SQuAD v2.0 drops golds that normalise to nothing when others remain */
  CHECK(SCORE(EVTEXT_F1, "", "", "Paris") == 0);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "", "", "Paris") == 0);
  CHECK(SCORE(EVTEXT_F1, "Paris", "", "Paris") == 1);
  /* no golds at all: an unanswerable question, only silence scores */
  double s = -1;
  evtext_error err;
  evtext_score(ws, EVTEXT_F1, (evtext_str){"", 0}, NULL, 0, &s, &err);
  CHECK(s == 1);
  evtext_score(ws, EVTEXT_F1, (evtext_str){"Paris", 5}, NULL, 0, &s, &err);
  CHECK(s == 0);
  evtext_score(ws, EVTEXT_EXACT, (evtext_str){"", 0}, NULL, 0, &s, &err);
  CHECK(s == 1);
  CHECK(SCORE(EVTEXT_ROUGE_L, "", "") == 1);
  CHECK(SCORE(EVTEXT_ROUGE_L, "a", "b") == 0);
  CHECK(SCORE(EVTEXT_EDIT, "", "") == 1);
  CHECK(SCORE(EVTEXT_EDIT, "abc", "") == 0);
  CHECK(SCORE(EVTEXT_EDIT_NORM, "The!", "") == 1);
}

static void test_cjk_scores(void) {
  const double tol = 1e-15;
  /* [iphone 于 2007 年 发 布] vs [2007 年]: P 2/6, R 1 -> 1/2 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "iPhone于2007年发布", "2007年"), 0.5, tol);
  /* 13 characters (。 dropped) vs 三 个 失 败 分 片, all 6 shared: P 6/13, R 1 -> 12/19 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "连续三个分片失败后中止上传。", "三个失败分片"), 12.0 / 19, tol);
  /* in order only 三 个 + 分 片 (or 失 败): LCS 4, P 4/13, R 4/6 -> 8/19 */
  CHECK_NEAR(SCORE(EVTEXT_ROUGE_L, "连续三个分片失败后中止上传。", "三个失败分片"), 8.0 / 19, tol);
  /* 東 京 タ ワ ー は 333 メ ー ト ル で す (13) vs 333 メ ー ト ル (5): 5 shared -> 10/18 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "東京タワーは333メートルです", "333メートル"), 5.0 / 9, tol);
  /* 서 울 은 한 국 의 수 도 입 니 다 (11) vs 서 울: P 2/11, R 1 -> 4/13 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "서울은 한국의 수도입니다", "서울"), 4.0 / 13, tol);
  /* mixed: [answer is 北 京 beijing] vs [北 京]: P 2/5, R 1 -> 4/7 */
  CHECK_NEAR(SCORE(EVTEXT_F1, "The answer is 北京 (Beijing).", "北京"), 4.0 / 7, tol);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "ＩＢＭ\xE3\x80\x80２０２４", "IBM 2024") == 1); /* full-width */
  CHECK(SCORE(EVTEXT_EXACT, "ＩＢＭ\xE3\x80\x80２０２４", "IBM 2024") == 0);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "《三体》", "三体") == 1);
  CHECK(SCORE(EVTEXT_EXACT_NORM, "CAFÉ", "café") == 1);
  CHECK(SCORE(EVTEXT_F1, "Café", "cafe") == 0); /* accents are kept: different words */
}

static void test_rouge_l(void) {
  const double tol = 1e-15;
  /* cat sat on mat vs cat lay on mat: LCS 3 -> 3/4 */
  CHECK_NEAR(SCORE(EVTEXT_ROUGE_L, "the cat sat on the mat", "the cat lay on a mat"), 0.75, tol);
  /* x y z vs y x z: LCS 2 of 3 and 3 -> 2/3, where F1 is 1 */
  CHECK_NEAR(SCORE(EVTEXT_ROUGE_L, "x y z", "y x z"), 2.0 / 3, tol);
  CHECK(SCORE(EVTEXT_ROUGE_L, "x y z", "q", "x y z") == 1);
}

static void test_edit_similarity(void) {
  const double tol = 1e-15;
  CHECK_NEAR(SCORE(EVTEXT_EDIT, "kitten", "sitting"), 1 - 3.0 / 7, tol); /* distance 3 */
  CHECK_NEAR(SCORE(EVTEXT_EDIT, "Paris", "paris"), 0.8, tol);            /* raw: case counts */
  CHECK_NEAR(SCORE(EVTEXT_EDIT, "北京", "北京市"), 1 - 1.0 / 3, tol);      /* code points, not bytes */
  CHECK_NEAR(SCORE(EVTEXT_EDIT, "café", "cafe"), 0.75, tol);            /* 4 code points, 1 edit */
  CHECK_NEAR(SCORE(EVTEXT_EDIT, "flaw", "lawn", "flaws"), 0.8, tol);     /* max(1/2, 4/5) */
  CHECK(SCORE(EVTEXT_EDIT_NORM, "The Paris!", "paris") == 1);
  /* "cats hat" vs "cat hat": one deletion over 8 code points */
  CHECK_NEAR(SCORE(EVTEXT_EDIT_NORM, "The cat's hat", "Cat hat"), 1 - 1.0 / 8, tol);
}

static size_t distance(const char *a, const char *b, size_t bound) {
  size_t d = 0;
  evtext_error err;
  if (evtext_edit_distance(ws, (evtext_str){a, strlen(a)}, (evtext_str){b, strlen(b)}, bound, &d, &err)) return 999;
  return d;
}

/* The full table (no bound) against the band: the band gives the same
 * distance when it is within the bound and bound + 1 when it is not, on
 * hand-worked pairs and on random strings over a small alphabet (many
 * near-matches, so paths leave and re-enter the band). */
static void test_edit_distance(void) {
  CHECK(distance("kitten", "sitting", SIZE_MAX) == 3);
  CHECK(distance("kitten", "sitting", 3) == 3);
  CHECK(distance("kitten", "sitting", 2) == 3); /* over the bound: bound + 1 */
  CHECK(distance("", "abc", 5) == 3);
  CHECK(distance("abc", "", 1) == 2);
  CHECK(distance("", "", 0) == 0);
  CHECK(distance("北京", "北京市", 1) == 1); /* code points */
  CHECK(distance("flaw", "lawn", SIZE_MAX) == 2);
  CHECK(distance("abcdef", "badcfe", 0) == 1);
  srand(7);
  char a[40], b[40];
  int agree = 1;
  for (int t = 0; t < 4000; t++) {
    size_t la = (size_t)rand() % 30, lb = (size_t)rand() % 30;
    for (size_t i = 0; i < la; i++) a[i] = (char)('a' + rand() % 3);
    for (size_t i = 0; i < lb; i++) b[i] = (char)('a' + rand() % 3);
    a[la] = b[lb] = 0;
    size_t full = distance(a, b, SIZE_MAX), bound = (size_t)rand() % 12;
    size_t banded = distance(a, b, bound);
    if (banded != (full <= bound ? full : bound + 1)) agree = 0;
  }
  CHECK(agree);
}

/* Long and repeated token lists: F1's hash-table count gives the same
 * numbers as pairing tokens off by hand. */
static void test_long_answers(void) {
  char pred[4096] = "", gold[4096] = "";
  for (int i = 0; i < 100; i++) { /* pred: w0..w99; gold: w50..w149 -> 50 shared */
    char w[16];
    snprintf(w, sizeof w, "w%d ", i);
    strcat(pred, w);
    snprintf(w, sizeof w, "w%d ", i + 50);
    strcat(gold, w);
  }
  CHECK_NEAR(SCORE(EVTEXT_F1, pred, gold), 0.5, 1e-15);
  CHECK_NEAR(SCORE(EVTEXT_ROUGE_L, pred, gold), 0.5, 1e-15); /* w50..w99 in order */
  /* 40 x "a b" against 20 x "b": pred [b]*40 (a is an article), gold [b]*20 -> P 1/2, R 1 -> 2/3 */
  char p2[512] = "", g2[512] = "";
  for (int i = 0; i < 40; i++) strcat(p2, "a b ");
  for (int i = 0; i < 20; i++) strcat(g2, "b ");
  CHECK_NEAR(SCORE(EVTEXT_F1, p2, g2), 2.0 / 3, 1e-15);
  /* the table grows past 2 x 1000 slots: pred w0..w999; gold w999 down to
   * w500 and x0..x9 (absent) -> 500 shared, P 500/1000, R 500/510 */
  static char p3[16384], g3[16384];
  p3[0] = g3[0] = '\0';
  for (int i = 0; i < 1000; i++) {
    char w[16];
    snprintf(w, sizeof w, "w%d ", i);
    strcat(p3, w);
    if (i < 500) snprintf(w, sizeof w, "w%d ", 999 - i), strcat(g3, w);
    if (i < 10) snprintf(w, sizeof w, "x%d ", i), strcat(g3, w);
  }
  double pr = 500.0 / 1000, re = 500.0 / 510;
  CHECK_NEAR(SCORE(EVTEXT_F1, p3, g3), 2 * pr * re / (pr + re), 1e-15);
}

static void test_invalid_utf8(void) {
  evtext_error err;
  double s;
  evtext_str golds[2] = {{"ok", 2}, {"ok\xC3", 3}};
  CHECK(evtext_score(ws, EVTEXT_F1, (evtext_str){"\xFF", 1}, golds, 1, &s, &err) == EVTEXT_EUTF8);
  CHECK(err.which == -1 && err.byte == 0);
  CHECK(evtext_score(ws, EVTEXT_F1, (evtext_str){"ok", 2}, golds, 2, &s, &err) == EVTEXT_EUTF8);
  CHECK(err.which == 1 && err.byte == 2);
  CHECK(evtext_score(ws, EVTEXT_EDIT, (evtext_str){"a\xED\xA0\x80", 4}, golds, 1, &s, &err) ==
        EVTEXT_EUTF8); /* an encoded surrogate */
  CHECK(err.which == -1 && err.byte == 1);
  CHECK(evtext_score(ws, EVTEXT_EXACT, (evtext_str){"\xFF", 1}, golds, 1, &s, &err) == EVTEXT_OK);
}

int main(void) {
  ws = evtext_ws_new();
  test_normalize_english();
  test_normalize_unicode();
  test_fast_paths();
  test_fast_paths_agree();
  test_tokens();
  test_squad_english();
  test_empty_answers();
  test_cjk_scores();
  test_rouge_l();
  test_edit_similarity();
  test_edit_distance();
  test_long_answers();
  test_invalid_utf8();
  evtext_ws_free(ws);
  return check_report();
}
