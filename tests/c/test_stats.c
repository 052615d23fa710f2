/* Statistics with exact expected values. Sources of the expected numbers:
 *   [hand]  worked out by hand in the comment next to the check;
 *   [np]    numpy 1.24.2 / scipy 1.10.1 / scikit-learn 1.2.1 (Debian 12
 *           packages) on the same inputs, printed with repr();
 *   [pub]   published test vectors: splitmix64 from seed 1234567 (Rosetta
 *           Code, "Pseudo-random numbers/Splitmix64") and xoshiro256** from
 *           the state {1, 2, 3, 4} (the rand_xoshiro reference test, values
 *           produced with the authors' C implementation);
 *   [model] an independent Python transcription of the documented
 *           algorithms (docs/stats.md), used where the value depends on the
 *           random stream (bootstrap, Monte Carlo p);
 *   [ref]   an independent Python computation of a distribution or an
 *           interval from its definition: the incomplete beta and the t
 *           distribution function integrated numerically (Simpson's rule,
 *           compensated sums), quantiles found by bisection, and the
 *           interval's published formula on top. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "evalua/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_descriptive(void) {
  const double x[] = {2, 4, 4, 4, 5, 5, 7, 9}; /* the classic sd example */
  double v = 0;
  CHECK(evstats_mean(x, N(x)) == 5);                         /* [hand] 40 / 8 */
  CHECK(evstats_variance(x, N(x), 0, &v) == EVSTATS_OK && v == 4);       /* [hand] 32 / 8 */
  CHECK(evstats_variance(x, N(x), 1, &v) == EVSTATS_OK);
  CHECK_NEAR(v, 32.0 / 7, 1e-15);                           /* [hand] 32 / 7 */
  CHECK(evstats_variance(x, 1, 1, &v) == EVSTATS_UNDEFINED); /* one value has no sample variance */
  const double tenth[] = {0.1, 0.1, 0.1};
  CHECK(evstats_mean(tenth, 3) == 0.1); /* a naive sum / 3 gives 0.09999999999999999 */
  CHECK(evstats_variance(tenth, 3, 1, &v) == EVSTATS_OK && v == 0);
  const double cancel[] = {1e100, 1, -1e100};
  CHECK(evstats_sum(cancel, 3) == 1); /* [hand] compensated summation keeps the 1 */
}

static void test_percentiles(void) {
  const double a[] = {1, 2, 3, 4};
  /* [np] np.percentile([1,2,3,4], [0,25,50,75,90,100]) */
  CHECK(evstats_quantile_sorted(a, 4, 0) == 1);
  CHECK(evstats_quantile_sorted(a, 4, 0.25) == 1.75); /* [hand] h = 0.75 */
  CHECK(evstats_quantile_sorted(a, 4, 0.5) == 2.5);
  CHECK(evstats_quantile_sorted(a, 4, 0.75) == 3.25);
  CHECK_NEAR(evstats_quantile_sorted(a, 4, 0.9), 3.7, 1e-15);
  CHECK(evstats_quantile_sorted(a, 4, 1) == 4);
  const double y[] = {15, 20, 35, 40, 50};
  /* [np] np.percentile(y, [5, 30, 40, 50, 95, 99.9]) = 16, 23, 29, 35, 48, 49.96000000000001 */
  const double q[] = {0.05, 0.30, 0.40, 0.50, 0.95, 0.999};
  const double want[] = {16, 23, 29, 35, 48, 49.96000000000001};
  for (size_t i = 0; i < N(q); i++) CHECK_NEAR(evstats_quantile_sorted(y, 5, q[i]), want[i], 1e-12);
  const double one[] = {7};
  CHECK(evstats_quantile_sorted(one, 1, 0.3) == 7);
  double s[] = {3, -1, 2, 2, 0};
  evstats_sort(s, 5);
  CHECK(s[0] == -1 && s[1] == 0 && s[2] == 2 && s[3] == 2 && s[4] == 3);
}

static void test_order_is_stable(void) {
  const double x[] = {0.5, 0.1, 0.5, 0.1, 0.9};
  size_t idx[5];
  CHECK(evstats_order(x, 5, 0, idx) == EVSTATS_OK);
  CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 0 && idx[3] == 2 && idx[4] == 4);
  CHECK(evstats_order(x, 5, 1, idx) == EVSTATS_OK);
  CHECK(idx[0] == 4 && idx[1] == 0 && idx[2] == 2 && idx[3] == 1 && idx[4] == 3);
}

static void test_rng(void) {
  evstats_rng r;
  evstats_rng_seed(&r, 1234567); /* [pub] the state is splitmix64's first four outputs */
  CHECK(r.s[0] == 6457827717110365317u && r.s[1] == 3203168211198807973u);
  CHECK(r.s[2] == 9817491932198370423u && r.s[3] == 4593380528125082431u);
  r.s[0] = 1, r.s[1] = 2, r.s[2] = 3, r.s[3] = 4; /* [pub] xoshiro256** */
  const uint64_t want[] = {11520u, 0u, 1509978240u, 1215971899390074240u, 1216172134540287360u,
                           607988272756665600u, 16172922978634559625u, 8476171486693032832u};
  for (size_t i = 0; i < N(want); i++) CHECK(evstats_rng_next(&r) == want[i]);
  evstats_rng_seed(&r, 7); /* [model] below(10) draws */
  const uint64_t draws[] = {7, 2, 8, 9, 9, 8, 0, 1, 4, 1};
  for (size_t i = 0; i < N(draws); i++) CHECK(evstats_rng_below(&r, 10) == draws[i]);
  /* every value of a small range comes up, none outside it */
  int seen[3] = {0, 0, 0}, outside = 0;
  for (int i = 0; i < 3000; i++) {
    uint64_t k = evstats_rng_below(&r, 3);
    if (k < 3) seen[k]++;
    else outside++;
  }
  CHECK(outside == 0 && seen[0] > 900 && seen[1] > 900 && seen[2] > 900);
}

static const double sys_a[] = {0.62, 0.81, 0.44, 0.90, 0.57, 0.73, 0.68, 0.51, 0.79, 0.66};
static const double sys_b[] = {0.55, 0.78, 0.47, 0.81, 0.50, 0.69, 0.70, 0.42, 0.74, 0.60};

static void test_bootstrap(void) {
  double lo = 0, hi = 0;
  /* [model] 1000 resamples, level 0.95, seed 1 */
  CHECK(evstats_bootstrap_mean_ci(sys_a, 10, 1000, 0.95, 1, &lo, &hi) == EVSTATS_OK);
  CHECK_NEAR(lo, 0.5880000000000001, 1e-15);
  CHECK_NEAR(hi, 0.7480249999999999, 1e-15);
  /* [model] 200 resamples, level 0.9, seed 99 */
  CHECK(evstats_bootstrap_mean_ci(sys_a, 10, 200, 0.9, 99, &lo, &hi) == EVSTATS_OK);
  CHECK_NEAR(lo, 0.6069, 1e-15);
  CHECK_NEAR(hi, 0.7372, 1e-15);
  const double c[] = {0.25, 0.25, 0.25};
  CHECK(evstats_bootstrap_mean_ci(c, 3, 100, 0.95, 3, &lo, &hi) == EVSTATS_OK && lo == 0.25 && hi == 0.25);
  /* [hand] 0/1 scores, n = 2000, mean 0.3: the normal approximation is
   * 0.3 +- 1.96 sqrt(0.21 / 2000) = [0.27992, 0.32008]; the percentile
   * interval must land within a few thousandths of it */
  double *x = malloc(2000 * sizeof *x);
  for (int i = 0; i < 2000; i++) x[i] = i % 10 < 3;
  CHECK(evstats_bootstrap_mean_ci(x, 2000, 1000, 0.95, 11, &lo, &hi) == EVSTATS_OK);
  CHECK_NEAR(lo, 0.27992, 0.003);
  CHECK_NEAR(hi, 0.32008, 0.003);
  free(x);
}

static void test_permutation(void) {
  evstats_permutation r;
  /* [hand] d = 1, 2, 3: the eight sums of +-1 +-2 +-3 are 6 4 2 0 0 -2 -4 -6,
   * two reach |6| -> p = 2/8 */
  const double a[] = {1, 2, 3}, z[] = {0, 0, 0};
  CHECK(evstats_paired_permutation(a, z, 3, 1000, 1, 20, &r) == EVSTATS_OK);
  CHECK(r.exact && r.patterns == 8 && r.p == 0.25 && r.mean_diff == 2);
  /* [hand] d = 1, 1, 1, 1 (ties): only all-plus and all-minus reach 4 -> 2/16 */
  const double ones[] = {1, 1, 1, 1}, zeros[] = {0, 0, 0, 0};
  CHECK(evstats_paired_permutation(ones, zeros, 4, 1000, 1, 20, &r) == EVSTATS_OK && r.p == 0.125);
  /* [hand] equal systems: p = 1 */
  CHECK(evstats_paired_permutation(sys_a, sys_a, 10, 1000, 1, 20, &r) == EVSTATS_OK && r.p == 1);
  /* [np] scipy.stats.permutation_test(..., permutation_type='samples',
   * n_resamples=inf) on the two systems: 0.015625 (16 of 1024 patterns) */
  CHECK(evstats_paired_permutation(sys_a, sys_b, 10, 1000, 1, 20, &r) == EVSTATS_OK);
  CHECK(r.exact && r.patterns == 1024 && r.p == 0.015625);
  CHECK_NEAR(r.mean_diff, 0.045, 1e-15); /* [hand] 0.45 / 10 */
  /* [model] Monte Carlo, 999 resamples, seed 5: 0.018 = (17 + 1) / 1000 */
  CHECK(evstats_paired_permutation(sys_a, sys_b, 10, 999, 5, 0, &r) == EVSTATS_OK);
  CHECK(!r.exact && r.patterns == 999 && r.p == 0.018);
}

static void test_ttest(void) {
  evstats_ttest r;
  /* [np] scipy.stats.ttest_rel(a, b): t 3.412530939367525, p 0.007718628398093086 */
  CHECK(evstats_paired_ttest(sys_a, sys_b, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r.t, 3.412530939367525, 1e-12);
  CHECK_NEAR(r.p, 0.007718628398093086, 1e-14);
  CHECK(r.df == 9);
  CHECK(evstats_paired_ttest(sys_a, sys_a, 10, &r) == EVSTATS_OK && r.t == 0 && r.p == 1);
  const double up[] = {1, 2, 3}, down[] = {0, 1, 2};
  CHECK(evstats_paired_ttest(up, down, 3, &r) == EVSTATS_OK && r.p == 0 && r.t > 1e308);
  CHECK(evstats_paired_ttest(up, down, 1, &r) == EVSTATS_UNDEFINED);
}

static void test_distributions(void) {
  /* [hand] I_x(1/2, 1/2) = (2/pi) asin(sqrt x); I_0.4(2, 3) = sum_{j=2..4} C(4,j) .4^j .6^(4-j) = 0.5248 */
  CHECK_NEAR(evstats_betainc(0.5, 0.5, 0.3), 0.3690101195655454, 1e-14);
  CHECK_NEAR(evstats_betainc(2, 3, 0.4), 0.5248, 1e-14);
  /* [np] scipy.special.betainc */
  CHECK_NEAR(evstats_betainc(5, 0.5, 0.9), 0.316642915020012, 1e-14);
  CHECK_NEAR(evstats_betainc(10, 20, 0.2), 0.049263517304212585, 1e-14);
  CHECK_NEAR(evstats_betainc(0.5, 50, 0.001), 0.2476309800346232, 1e-14);
  CHECK_NEAR(evstats_betainc(100, 0.5, 0.999), 0.6550435163244297, 1e-13);
  CHECK_NEAR(evstats_betainc(2.5, 0.5, 0.02) / 1.9345561852223504e-05, 1, 1e-12);
  CHECK(evstats_betainc(3, 4, 0) == 0 && evstats_betainc(3, 4, 1) == 1);
  /* [hand] df = 1 is Cauchy: p = 1 - (2/pi) atan|t|; df = 2: p = 1 - |t| / sqrt(2 + t^2) */
  CHECK_NEAR(evstats_t_two_sided(0.5, 1), 0.7048327646991336, 1e-14);
  CHECK_NEAR(evstats_t_two_sided(1.5, 2), 1 - 1.5 / sqrt(4.25), 1e-14);
  /* [np] 2 * scipy.stats.t.sf(|t|, df) and scipy.stats.t.cdf(t, df) */
  CHECK_NEAR(evstats_t_two_sided(2.0, 10), 0.07338803477074039, 1e-14);
  CHECK_NEAR(evstats_t_two_sided(-1.5, 3), 0.23058386524482283, 1e-14);
  CHECK_NEAR(evstats_t_two_sided(3.2, 29), 0.0033184424634817478, 1e-15);
  CHECK_NEAR(evstats_t_two_sided(10.0, 5), 0.00017094757574296357, 1e-16);
  CHECK_NEAR(evstats_t_two_sided(1.96, 1000), 0.05027318495574871, 1e-13);
  CHECK_NEAR(evstats_t_two_sided(40.0, 7) / 1.5902179984850428e-09, 1, 1e-11);
  CHECK_NEAR(evstats_t_cdf(2.0, 10), 0.9633059826146297, 1e-14);
  CHECK_NEAR(evstats_t_cdf(-1.5, 3), 0.11529193262241141, 1e-14);
  CHECK(evstats_t_two_sided(0, 4) == 1);
}

static void test_correlation(void) {
  double r = 0;
  /* [np] scipy.stats pearsonr / spearmanr / kendalltau; no ties:
   * [hand] d^2 = 1+1+1+1+4+1+1+1+1+4 = 16 -> rho = 1 - 6*16/990 = 0.90303...;
   * 6 discordant pairs of 45 -> tau = (39 - 6) / 45 = 0.7333 */
  const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[] = {2, 1, 4, 3, 7, 5, 6, 9, 10, 8};
  CHECK(evstats_pearson(x, y, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.9030303030303031, 1e-14);
  CHECK(evstats_spearman(x, y, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 1 - 6.0 * 16 / 990, 1e-14);
  CHECK(evstats_kendall(x, y, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 33.0 / 45, 1e-14);
  /* ties in x, in y and in both: [np] 0.875, 0.9182389937106918, 0.7999999999999999 */
  const double xt[] = {1, 2, 2, 3, 3, 3, 4, 5, 5, 6}, yt[] = {2, 2, 1, 3, 4, 4, 4, 6, 5, 5};
  CHECK(evstats_pearson(xt, yt, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.875, 1e-14);
  CHECK(evstats_spearman(xt, yt, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.9182389937106918, 1e-14);
  CHECK(evstats_kendall(xt, yt, 10, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.8, 1e-14);
  const double xf[] = {0.3, 1.7, -2.2, 4.1, 0.0, 3.3, 2.5}, yf[] = {1.1, 2.0, -0.5, 3.9, 0.2, 2.2, 3.0};
  CHECK(evstats_pearson(xf, yf, 7, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.9478117368552584, 1e-14);
  CHECK(evstats_spearman(xf, yf, 7, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.9642857142857145, 1e-14);
  CHECK(evstats_kendall(xf, yf, 7, &r) == EVSTATS_OK);
  CHECK_NEAR(r, 0.9047619047619049, 1e-14);
  double ranks[10];
  CHECK(evstats_ranks(xt, 10, ranks) == EVSTATS_OK);
  CHECK(ranks[0] == 1 && ranks[1] == 2.5 && ranks[3] == 5 && ranks[8] == 8.5 && ranks[9] == 10);
  const double flat[] = {3, 3, 3};
  CHECK(evstats_pearson(flat, x, 3, &r) == EVSTATS_UNDEFINED);
  CHECK(evstats_spearman(x, flat, 3, &r) == EVSTATS_UNDEFINED);
  CHECK(evstats_kendall(flat, x, 3, &r) == EVSTATS_UNDEFINED);
  CHECK(evstats_pearson(x, y, 1, &r) == EVSTATS_UNDEFINED);
}

/* Knight's algorithm against the O(n^2) definition on tie-heavy data. */
static void test_kendall_against_definition(void) {
  evstats_rng rng;
  evstats_rng_seed(&rng, 2024);
  enum { n = 300 };
  double x[n], y[n];
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < n; i++) {
      x[i] = (double)evstats_rng_below(&rng, 6);
      y[i] = (double)evstats_rng_below(&rng, 4) + (round % 2 ? x[i] : 0);
    }
    double c = 0, d = 0, tx = 0, ty = 0;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) {
        double s = (x[i] - x[j]) * (y[i] - y[j]);
        c += s > 0, d += s < 0;
        tx += x[i] == x[j] && y[i] != y[j];
        ty += y[i] == y[j] && x[i] != x[j];
      }
    double want = (c - d) / sqrt((c + d + tx) * (c + d + ty)), got = 0;
    CHECK(evstats_kendall(x, y, n, &got) == EVSTATS_OK);
    CHECK_NEAR(got, want, 1e-12);
  }
}

static void test_kappa(void) {
  double k = 0;
  /* [hand] 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15: po = 0.7,
   * pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5 -> kappa = 0.2 / 0.5 = 0.4 */
  size_t a[50], b[50];
  for (int i = 0; i < 50; i++) {
    a[i] = i < 25 ? 0 : 1;
    b[i] = (i < 20 || (i >= 25 && i < 35)) ? 0 : 1;
  }
  CHECK(evstats_cohen_kappa(a, b, 50, 2, NULL, EVSTATS_UNWEIGHTED, &k) == EVSTATS_OK);
  CHECK_NEAR(k, 0.4, 1e-15);
  /* [np] sklearn cohen_kappa_score(r1, r2, weights=None|linear|quadratic) */
  const double r1[] = {1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 4}, r2[] = {1, 2, 2, 4, 4, 3, 3, 5, 5, 2, 3, 3};
  size_t c1[12], c2[12], kc = 0;
  double values[24];
  CHECK(evstats_categories(r1, r2, 12, c1, c2, values, &kc) == EVSTATS_OK);
  CHECK(kc == 5 && values[0] == 1 && values[4] == 5 && c1[4] == 4 && c2[2] == 1);
  CHECK(evstats_cohen_kappa(c1, c2, 12, kc, values, EVSTATS_UNWEIGHTED, &k) == EVSTATS_OK);
  CHECK_NEAR(k, 0.368421052631579, 1e-14);
  CHECK(evstats_cohen_kappa(c1, c2, 12, kc, values, EVSTATS_LINEAR, &k) == EVSTATS_OK);
  CHECK_NEAR(k, 0.6470588235294117, 1e-14);
  CHECK(evstats_cohen_kappa(c1, c2, 12, kc, values, EVSTATS_QUADRATIC, &k) == EVSTATS_OK);
  CHECK_NEAR(k, 0.8414096916299559, 1e-14);
  /* both raters always say the same single category: nothing to improve on */
  const size_t same[3] = {0, 0, 0};
  CHECK(evstats_cohen_kappa(same, same, 3, 1, NULL, EVSTATS_UNWEIGHTED, &k) == EVSTATS_UNDEFINED);
  /* perfect agreement over two categories: 1; systematic disagreement: -1 */
  const size_t p[4] = {0, 1, 0, 1}, q[4] = {1, 0, 1, 0};
  CHECK(evstats_cohen_kappa(p, p, 4, 2, NULL, EVSTATS_UNWEIGHTED, &k) == EVSTATS_OK && k == 1);
  CHECK(evstats_cohen_kappa(p, q, 4, 2, NULL, EVSTATS_UNWEIGHTED, &k) == EVSTATS_OK && k == -1);
}

/* evstats_mean_sd is evstats_mean and evstats_sd to the bit, at the
 * magnitudes where their scalings act, and says the same when sd is not
 * defined (one value) or beyond a double. */
static void test_mean_sd_together(void) {
  const double sets[][3] = {{1e308, 1e308, -1e308}, {1e-200, 2e-200, 3e-200}, {1, 1 + 0x1p-52, 1 + 0x1p-51},
                            {0.1, 0.2, 0.7}, {4, 4, 4}, {-1.7e308, 1.7e308, 1.7e308}};
  for (size_t k = 0; k < sizeof sets / sizeof *sets; k++)
    for (size_t n = 1; n <= 3; n++) {
      double m = -1, sd = -1, sd1 = -1;
      int rc = evstats_mean_sd(sets[k], n, 1, &m, &sd);
      CHECK(m == evstats_mean(sets[k], n));
      CHECK(rc == evstats_sd(sets[k], n, 1, &sd1) && (rc != EVSTATS_OK || sd == sd1));
      CHECK(n > 1 || rc == EVSTATS_UNDEFINED);
    }
}

/* Point 10 of issue 25: finite input gives a finite, correct result at
 * any magnitude (values are scaled by powers of two where sums, squares
 * or products would overflow or underflow), or says that the result
 * itself is beyond a double. */
static void test_extreme_magnitudes(void) {
  double v = 0;
  const double big2[] = {1e308, 1e308};
  CHECK(evstats_mean(big2, 2) == 1e308);                /* [hand] was NaN */
  CHECK(evstats_sum(big2, 2) == INFINITY);             /* [hand] 2e308 is beyond a double (was NaN) */
  const double big3[] = {1e308, 1e308, -1e308};
  CHECK(evstats_sum(big3, 3) == 1e308);                /* [hand] */
  const double wide[] = {1.7e308, -1.7e308, 1.7e308};
  CHECK_NEAR(evstats_mean(wide, 3) / (1.7e308 / 3), 1, 1e-15); /* [hand] was -inf */
  const double pm[] = {-1e308, 1e308};
  CHECK(evstats_sd(pm, 2, 1, &v) == EVSTATS_OK);
  CHECK_NEAR(v / 1e308, sqrt(2), 1e-15);               /* [hand] sqrt((1e308^2 + 1e308^2) / 1) */
  CHECK(evstats_variance(pm, 2, 1, &v) == EVSTATS_RANGE); /* 2e616 */
  const double tiny[] = {1e-200, 2e-200, 3e-200};
  CHECK(evstats_sd(tiny, 3, 1, &v) == EVSTATS_OK);
  CHECK_NEAR(v / 1e-200, 1, 1e-15);                    /* [hand] sqrt(2e-400 / 2); was 0 */
  CHECK(evstats_variance(tiny, 3, 1, &v) == EVSTATS_RANGE); /* 1e-400: below the smallest double */
  const double near_one[] = {1, 1 + 0x1p-52, 1 + 0x1p-51};
  CHECK(evstats_sd(near_one, 3, 1, &v) == EVSTATS_OK && v == 0x1p-52); /* [hand] deviations -1, 0, 1 ulp */
  const double gap[] = {-1.7e308, 1.7e308};
  CHECK(evstats_quantile_sorted(gap, 2, 0.5) == 0); /* [hand] the midpoint; was inf */

  /* [hand] x = 1..5, y = 2 1 4 3 5: deviations -2..2 and -1 -2 1 0 2, so
   * r = 8 / sqrt(10 * 10) = 0.8, at any scale of x and of y (was NaN) */
  const double x[] = {1, 2, 3, 4, 5}, y[] = {2, 1, 4, 3, 5};
  const double scales[] = {1, 1e-200, 1e160, 1e300};
  for (size_t i = 0; i < N(scales); i++)
    for (size_t j = 0; j < N(scales); j++) {
      double xs[5], ys[5], r = 0;
      for (int k = 0; k < 5; k++) xs[k] = x[k] * scales[i], ys[k] = y[k] * scales[j];
      CHECK(evstats_pearson(xs, ys, 5, &r) == EVSTATS_OK);
      CHECK_NEAR(r, 0.8, 1e-15);
    }

  /* [hand] the bootstrap of x * 2^1023 is the bootstrap of x times 2^1023,
   * bit for bit: scaling by a power of two is exact (was NaN) */
  const double small[] = {1, 1, 1.5};
  double big[3], lo = 0, hi = 0, blo = 0, bhi = 0;
  for (int k = 0; k < 3; k++) big[k] = small[k] * 0x1p1023;
  CHECK(evstats_bootstrap_mean_ci(small, 3, 500, 0.95, 4, &lo, &hi) == EVSTATS_OK);
  CHECK(evstats_bootstrap_mean_ci(big, 3, 500, 0.95, 4, &blo, &bhi) == EVSTATS_OK);
  CHECK(blo == lo * 0x1p1023 && bhi == hi * 0x1p1023 && lo < hi);

  /* [hand] d = 1e308 three times: of the 8 sign patterns, +++ and ---
   * reach |3e308|, so p = 2/8 (was 0: the sums overflowed) */
  evstats_permutation pr;
  const double a3[] = {1e308, 1e308, 1e308}, z3[] = {0, 0, 0};
  CHECK(evstats_paired_permutation(a3, z3, 3, 100, 1, 20, &pr) == EVSTATS_OK);
  CHECK(pr.exact && pr.p == 0.25 && pr.mean_diff == 1e308);
  /* [hand] differences beyond a double (2e308, -2e308) sum to 0, which
   * every sign pattern reaches: p = 1, mean 0 (was NaN) */
  const double a2[] = {1e308, -1e308}, b2[] = {-1e308, 1e308};
  CHECK(evstats_paired_permutation(a2, b2, 2, 100, 1, 20, &pr) == EVSTATS_OK);
  CHECK(pr.p == 1 && pr.mean_diff == 0);
  const double up[] = {1e308, 1.2e308, 1.5e308}, down[] = {-1e308, -1e308, -1e308};
  CHECK(evstats_paired_permutation(up, down, 3, 100, 1, 20, &pr) == EVSTATS_RANGE); /* mean 2.23e308 */
  CHECK(pr.p == 0.25);                                 /* [hand] as for 1, 2, 3 above */
  /* [hand] d = (1, 2, 4) e-200: mean 7/3, sd sqrt(7/3), t = sqrt 7 and,
   * with 2 degrees of freedom, p = 1 - t / sqrt(2 + t^2) = 1 - sqrt(7) / 3
   * (was t = inf, p = 0: the variance underflowed) */
  evstats_ttest tr;
  const double d3[] = {1e-200, 2e-200, 4e-200};
  CHECK(evstats_paired_ttest(d3, z3, 3, &tr) == EVSTATS_OK);
  CHECK_NEAR(tr.t, sqrt(7), 1e-14);
  CHECK_NEAR(tr.p, 1 - sqrt(7) / 3, 1e-14);
  CHECK_NEAR(tr.mean_diff / 1e-200, 7.0 / 3, 1e-15);
  CHECK(evstats_paired_ttest(up, down, 3, &tr) == EVSTATS_RANGE && isfinite(tr.t) && tr.p > 0);
}

static void test_quantiles(void) {
  /* [hand] closed forms: Beta(a, 1) is x^a, Beta(1, b) is 1 - (1-x)^b,
   * Beta(1/2, 1/2) is (2/pi) asin(sqrt x); df = 1 is Cauchy, tan(pi (p - 1/2));
   * df = 2: t = (2p - 1) / sqrt(2 p (1 - p)) */
  CHECK_NEAR(evstats_beta_quantile(0.025, 13, 1), pow(0.025, 1.0 / 13), 1e-15);
  CHECK_NEAR(evstats_beta_quantile(0.975, 1, 10), 1 - pow(0.025, 0.1), 1e-15);
  CHECK_NEAR(evstats_beta_quantile(0.3, 0.5, 0.5), pow(sin(0.3 * M_PI / 2), 2), 1e-15);
  /* a J-shaped beta: the quantile is where I_x (checked against scipy above) reaches p */
  CHECK_NEAR(evstats_betainc(0.3, 20, evstats_beta_quantile(0.025, 0.3, 20)), 0.025, 1e-15);
  CHECK_NEAR(evstats_t_quantile(0.975, 1), tan(0.475 * M_PI), 1e-12);
  CHECK_NEAR(evstats_t_quantile(0.975, 2), 0.95 / sqrt(2 * 0.975 * 0.025), 1e-13);
  CHECK_NEAR(evstats_t_quantile(0.025, 2), -0.95 / sqrt(2 * 0.975 * 0.025), 1e-13);
  /* [ref] df 5 and df 14 */
  CHECK_NEAR(evstats_t_quantile(0.975, 5), 2.5705818356363173, 1e-13);
  CHECK_NEAR(evstats_t_quantile(0.975, 14), 2.144786687917807, 1e-13);
  /* [hand] large df: z + (z^3 + z) / (4 df) + ..., whose next term is 3e-12 at df = 10^6 */
  double z = evstats_norm_quantile(0.975);
  CHECK_NEAR(z, 1.959963984540054, 1e-15); /* [np] scipy.stats.norm.ppf(0.975) */
  CHECK_NEAR(evstats_t_quantile(0.975, 1e6), z + (z * z * z + z) / 4e6, 5e-12);
  CHECK_NEAR(evstats_norm_quantile(1e-10), -6.361340902404056, 1e-13); /* [np] norm.ppf(1e-10) */
  CHECK(evstats_norm_quantile(0.5) == 0 && evstats_t_quantile(0.5, 3) == 0);
}

/* Intervals of a mean (docs/stats.md, issue 25 point 9); the bootstrap's
 * [ref] is a Python transcription of the documented algorithm
 * (xoshiro256**, Lemire's draws, scaled deviations, type-7 quantiles). */
static void test_intervals(void) {
  evstats_ci c;
  /* [hand/R binom.test] 0/1 values: Clopper-Pearson. 13 of 13 bounds the
   * rate below by 0.025^(1/13) = 0.753 (the percentile bootstrap printed
   * [1, 1]); 0 of 10 above by 1 - 0.025^(1/10); 13 of 15 [ref] */
  double ones[15], x13[15];
  for (int i = 0; i < 15; i++) ones[i] = 1, x13[i] = i < 13;
  CHECK(evstats_mean_ci(ones, 13, 1, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK(c.method == EVSTATS_CI_CLOPPER_PEARSON && c.hi == 1);
  CHECK_NEAR(c.lo, pow(0.025, 1.0 / 13), 1e-15);
  double zeros[10] = {0};
  CHECK(evstats_mean_ci(zeros, 10, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.lo == 0);
  CHECK_NEAR(c.hi, 1 - pow(0.025, 0.1), 1e-15);
  CHECK(evstats_mean_ci(x13, 15, 1, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK_NEAR(c.lo, 0.5953973033966278, 1e-14);
  CHECK_NEAR(c.hi, 0.9834240865599171, 1e-14);
  /* [ref] other scores in [0, 1]: Korn-Graubard. 0.2 0.5 0.9 1 0.7 0.6:
   * mean 0.65, sd^2 0.079, n* = 0.65 * 0.35 / (0.079 / 6) * (z / t5)^2 = 9.5607 */
  const double kg[] = {0.2, 0.5, 0.9, 1.0, 0.7, 0.6};
  CHECK(evstats_mean_ci(kg, 6, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_KORN_GRAUBARD);
  CHECK_NEAR(c.lo, 0.29595284578256176, 1e-13);
  CHECK_NEAR(c.hi, 0.9113329141867723, 1e-13);
  /* [hand] scores in [0, 1] at 1e-200: sd^2 underflows, the effective size
   * must not (the interval was NaN); the ends straddle the mean, above 0 */
  const double tiny[] = {1e-200, 2e-200, 3e-200, 4e-200, 5e-200};
  CHECK(evstats_mean_ci(tiny, 5, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_KORN_GRAUBARD);
  CHECK(c.lo > 1e-200 && c.lo < 3e-200 && c.hi > 3e-200 && c.hi < 1e-199);
  /* [hand] every value equal: constant, zero width; one value: none */
  const double same[] = {0.7, 0.7, 0.7};
  CHECK(evstats_mean_ci(same, 3, 1, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK(c.method == EVSTATS_CI_CONSTANT && c.lo == 0.7 && c.hi == 0.7);
  CHECK(evstats_mean_ci(same, 1, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_NONE);
  /* [ref] beyond [0, 1]: the studentized bootstrap, bit for bit */
  const double lat[] = {3, 7, 1, 12, 5, 2, 30, 4};
  CHECK(evstats_mean_ci(lat, 8, 0, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_BOOTSTRAP_T);
  CHECK_NEAR(c.lo, 2.339208210725503, 1e-13);
  CHECK_NEAR(c.hi, 31.829753310874676, 1e-13);
  CHECK(evstats_mean_ci(lat, 8, 0, 200, 0.9, 7, &c) == EVSTATS_OK);
  CHECK_NEAR(c.lo, 3.856006691392478, 1e-13);
  CHECK_NEAR(c.hi, 31.879973493031287, 1e-13);
  /* [hand] fourteen 5s and a 1: a resample of 5s alone has no spread, and
   * its rounding (about n ulps) must not pass for spread (the lower end was
   * -6.9e7); the interval stays near the values */
  const double fives[] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1};
  CHECK(evstats_mean_ci(fives, 15, 0, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK(c.lo > 4 && c.lo < 4.7333 && c.hi > 4.7334 && c.hi < 5.5);
  /* [hand] ... and at any scale: the interval of x * 2^1000 is 2^1000 times */
  double big[8];
  evstats_ci cb;
  for (int i = 0; i < 8; i++) big[i] = lat[i] * 0x1p1000;
  CHECK(evstats_mean_ci(big, 8, 0, 1000, 0.95, 1, &cb) == EVSTATS_OK);
  CHECK(evstats_mean_ci(lat, 8, 0, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK_NEAR(cb.lo / 0x1p1000, c.lo, 1e-12);
  CHECK_NEAR(cb.hi / 0x1p1000, c.hi, 1e-12);
  /* [hand] Student's t: mean 5, sd sqrt(68/5), t(0.975, 5) */
  evstats_summary s = {6, 5, sqrt(68.0 / 5), 1, 10, 0, 0};
  evstats_student_t_ci(&s, 0.95, &c);
  CHECK_NEAR(c.hi - 5, 2.5705818356363173 * sqrt(68.0 / 5) / sqrt(6), 1e-12);
  /* [ref] paired 0/1 differences: MOVER with Wilson's sides and Pearson's
   * r = 0.50918 (Newcombe's method 10) */
  const double pa[] = {1, 1, 0, 1, 0, 1, 1, 1, 1, 0}, pb[] = {1, 1, 1, 1, 0, 1, 1, 1, 1, 1};
  CHECK(evstats_paired_ci(pa, pb, 10, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_MOVER);
  CHECK_NEAR(c.lo, -0.06442085610807952, 1e-14);
  CHECK_NEAR(c.hi, 0.47079352078172393, 1e-14);
  /* [hand] two systems that agree on every item are not known to be equal:
   * 10 of 10 on both sides gives Wilson's [0.722, 1] on each, so the
   * difference lies within +-0.278 (a t interval gives [0, 0]) */
  double all1[10];
  for (int i = 0; i < 10; i++) all1[i] = 1;
  CHECK(evstats_paired_ci(all1, all1, 10, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_MOVER);
  double wl = 0, wh = 0;
  evstats_wilson(1, 10, 0.95, &wl, &wh);
  CHECK_NEAR(wl, 10 / (10 + 1.959963984540054 * 1.959963984540054), 1e-15); /* [hand] n / (n + z^2) */
  CHECK_NEAR(c.lo, -(1 - wl), 1e-15);
  CHECK_NEAR(c.hi, 1 - wl, 1e-15);
  /* [hand] MOVER at 1e-200: each side's distances to its ends square to 0
   * unscaled, which gave a zero-width interval; b = a + 1e-200 */
  double ta[5], tb[5];
  for (int i = 0; i < 5; i++) ta[i] = tiny[i], tb[i] = tiny[i] + 1e-200;
  CHECK(evstats_paired_ci(ta, tb, 5, 1, 1000, 0.95, 1, &c) == EVSTATS_OK && c.method == EVSTATS_CI_MOVER);
  CHECK(c.lo < 1e-200 && c.hi > 1e-200 && c.hi - c.lo > 1e-201);
  /* [hand] beyond [0, 1]: the interval of the differences as one sample */
  const double la[] = {10, 20, 30, 40}, lb[] = {12, 22, 32, 42};
  CHECK(evstats_paired_ci(la, lb, 4, 0, 1000, 0.95, 1, &c) == EVSTATS_OK);
  CHECK(c.method == EVSTATS_CI_CONSTANT && c.lo == 2 && c.hi == 2);
}

int main(void) {
  test_descriptive();
  test_percentiles();
  test_order_is_stable();
  test_rng();
  test_bootstrap();
  test_permutation();
  test_ttest();
  test_distributions();
  test_correlation();
  test_kendall_against_definition();
  test_kappa();
  test_extreme_magnitudes();
  test_mean_sd_together();
  test_quantiles();
  test_intervals();
  return check_report();
}
