/* The seeded random numbers of the resampling statistics: xoshiro256**
 * (Blackman and Vigna, 2018) with its state filled by splitmix64 from one
 * 64-bit seed. Integer arithmetic only, so a seed gives the same stream on
 * every platform. */
#include "evalua/stats.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void evstats_rng_seed(evstats_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t evstats_rng_next(evstats_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

/* Lemire's multiply-and-reject for n < 2^32 (one multiplication, rarely a
 * division), plain rejection above. */
uint64_t evstats_rng_below(evstats_rng *r, uint64_t n) {
  if (n <= UINT32_MAX) {
    uint32_t n32 = (uint32_t)n;
    uint64_t m = (evstats_rng_next(r) >> 32) * n32;
    if ((uint32_t)m < n32) {
      uint32_t threshold = (uint32_t)(-n32) % n32; /* 2^32 mod n */
      while ((uint32_t)m < threshold) m = (evstats_rng_next(r) >> 32) * n32;
    }
    return m >> 32;
  }
  uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* multiples of n below 2^64 */
  uint64_t x;
  do x = evstats_rng_next(r);
  while (x >= limit);
  return x % n;
}
