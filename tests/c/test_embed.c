/* The offline embedder; expected similarities worked out by hand from the
 * definitions in evalua/embed.h (smoothed IDF over the texts added). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "evalua/embed.h"

static evembed *embed_all(const char *const *texts, size_t n, double char_weight, evtext_ws *ws) {
  evembed_opts o;
  evembed_defaults(&o);
  o.char_weight = char_weight;
  evembed *e = evembed_new(&o);
  evtext_error err;
  for (size_t i = 0; i < n; i++) CHECK(evembed_add(e, ws, (evtext_str){texts[i], strlen(texts[i])}, &err) == EVTEXT_OK);
  CHECK(evembed_fit(e) == EVTEXT_OK);
  return e;
}

/* Runs the two halves one after the other: the split and the merge of the
 * vocabularies without a second thread (the host's threads run them in
 * tests/lua/test_sas.lua). */
static void one_then_other(void (*job)(void *), void *args[2]) {
  job(args[0]);
  job(args[1]);
}

/* A batch split in two gives the same vectors as adding text after text. */
static void batch_equals_one_by_one(evtext_ws *ws) {
  enum { N = 700 };
  static char buf[N][64];
  evtext_str texts[N];
  const char *words[] = {"cat", "dogs", "fish", "the", "分片", "上传", "Refunds", "valid", "week", "7"};
  for (size_t i = 0; i < N; i++) {
    int len = snprintf(buf[i], sizeof buf[i], "%s %s %s", words[i % 10], words[(i / 10) % 10], words[(i * 7) % 10]);
    texts[i] = (evtext_str){buf[i], (size_t)len};
  }
  evembed *one = evembed_new(NULL), *two = evembed_new(NULL);
  evtext_error err;
  for (size_t i = 0; i < N; i++) CHECK(evembed_add(one, ws, texts[i], &err) == EVTEXT_OK);
  evtext_ws *w2 = evtext_ws_new();
  size_t failed = 99;
  CHECK(evembed_add_batch(two, (evtext_ws *[]){ws, w2}, texts, N, one_then_other, &failed, &err) == EVTEXT_OK);
  CHECK(evembed_count(two) == N && failed == 99);
  CHECK(evembed_fit(one) == EVTEXT_OK && evembed_fit(two) == EVTEXT_OK);
  size_t first[N / 2 + 1];
  for (size_t i = 0; i <= N / 2; i++) first[i] = N / 2 + i; /* text i against text N/2 + i */
  double out[N / 2];
  CHECK(evembed_similarity(two, first, N / 2, out, one_then_other) == EVTEXT_OK);
  int same = 1;
  for (size_t i = 0; i < N / 2; i++) {
    double c = evembed_cosine(one, i, N / 2 + i);
    if (fabs(evembed_cosine(two, i, N / 2 + i) - c) > 1e-12 || fabs(out[i] - c) > 1e-12) same = 0;
  }
  CHECK(same);
  CHECK_NEAR(evembed_cosine(two, 3, 3), 1, 1e-12);
  evembed_free(one);
  evembed_free(two);

  /* an invalid text in the second half is named by its place in the batch */
  texts[451] = (evtext_str){"ok\xc3(", 4};
  evembed *bad = evembed_new(NULL);
  CHECK(evembed_add_batch(bad, (evtext_ws *[]){ws, w2}, texts, N, one_then_other, &failed, &err) == EVTEXT_EUTF8);
  CHECK(failed == 451 && err.byte == 2);
  evembed_free(bad);
  /* and the first of two, in the first half */
  texts[20] = (evtext_str){"\xff", 1};
  bad = evembed_new(NULL);
  CHECK(evembed_add_batch(bad, (evtext_ws *[]){ws, w2}, texts, N, one_then_other, &failed, &err) == EVTEXT_EUTF8);
  CHECK(failed == 20 && err.byte == 0);
  evembed_free(bad);
  evtext_ws_free(w2);
}

int main(void) {
  evtext_ws *ws = evtext_ws_new();

  /* words only: df(cat) = 2, df(dog) = df(fish) = 1 among 3 texts */
  const char *words[] = {"Cat cat, dog!", "the cat", "fish"};
  evembed *e = embed_all(words, 3, 0, ws);
  double icat = log(4.0 / 3) + 1, idog = log(4.0 / 2) + 1, tf2 = 1 + log(2.0);
  CHECK_NEAR(evembed_cosine(e, 0, 1), tf2 * icat / sqrt(tf2 * icat * tf2 * icat + idog * idog), 1e-12);
  CHECK(evembed_cosine(e, 0, 2) == 0);
  CHECK_NEAR(evembed_cosine(e, 1, 1), 1, 1e-12);
  evembed_free(e);

  /* characters only: "<cat>" has 6 n-grams of 3-5, "<cats>" 9; 3 shared
   * (<ca, cat, <cat) with idf 1, the others idf ln(3/2) + 1 */
  const char *chars[] = {"cat", "cats"};
  e = embed_all(chars, 2, 1, ws);
  double k = log(1.5) + 1;
  CHECK_NEAR(evembed_cosine(e, 0, 1), 3 / sqrt((3 + 3 * k * k) * (3 + 6 * k * k)), 1e-12);
  evembed_free(e);

  /* CJK: words are characters and adjacent pairs; 分 片 分片 are shared */
  const char *cjk[] = {"分片", "分片上传。"};
  e = embed_all(cjk, 2, 0, ws);
  CHECK_NEAR(evembed_cosine(e, 0, 1), 3 / (sqrt(3.0) * sqrt(3 + 4 * k * k)), 1e-12);
  /* and 1- to 3-grams of the run as characters: 分 片 分片 shared again */
  evembed_free(e);
  e = embed_all(cjk, 2, 1, ws);
  CHECK_NEAR(evembed_cosine(e, 0, 1), 3 / (sqrt(3.0) * sqrt(3 + 6 * k * k)), 1e-12);
  evembed_free(e);

  /* an empty text has no direction; the parts mix by char_weight */
  const char *mixed[] = {"", "cat", "cats"};
  e = embed_all(mixed, 3, 0.25, ws);
  CHECK(evembed_cosine(e, 0, 1) == 0);
  CHECK(evembed_cosine(e, 1, 2) > 0 && evembed_cosine(e, 1, 2) < 0.25); /* no shared word */
  double v[64], w[64], dot = 0, norm = 0;
  evembed_dense(e, 1, v, 64);
  evembed_dense(e, 1, w, 64);
  for (int d = 0; d < 64; d++) dot += v[d] * w[d], norm += v[d] * v[d];
  CHECK_NEAR(norm, 1, 1e-12);
  CHECK_NEAR(dot, 1, 1e-12);
  evembed_dense(e, 0, v, 64);
  norm = 0;
  for (int d = 0; d < 64; d++) norm += v[d] * v[d];
  CHECK(norm == 0);
  evembed_free(e);

  /* invalid UTF-8 is refused with its offset */
  e = evembed_new(NULL);
  evtext_error err;
  CHECK(evembed_add(e, ws, (evtext_str){"ab\xff", 3}, &err) == EVTEXT_EUTF8 && err.byte == 2);
  evembed_free(e);
  batch_equals_one_by_one(ws);
  evtext_ws_free(ws);
  return check_report();
}
