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

/* evstats_rng_next and evstats_rng_below are inline in stats.h: the
 * bootstrap calls them once per draw. */
