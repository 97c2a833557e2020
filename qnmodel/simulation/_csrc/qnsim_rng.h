/* qnsim_rng.h: the random numbers of the simulator (included by qnsim.c only).
 *
 * xoshiro256** 1.0 seeded through splitmix64, replications on disjoint streams obtained with
 * the generator's jump function (2^128 steps apart): D. Blackman, S. Vigna, "Scrambled linear
 * pseudorandom number generators", ACM TOMS 47(4):36, 2021. Normal variates by Marsaglia's
 * polar method (G. Marsaglia, T. A. Bray, SIAM Review 6(3):260-264, 1964). Static inline:
 * the event loop draws several numbers per event. */
#ifndef QNSIM_RNG_H
#define QNSIM_RNG_H

#include <math.h>
#include <stdint.h>

/* ---------------------------------------------------------------- random numbers */
typedef struct {
    uint64_t s[4];
    int has_spare;
    double spare;
} rng_t;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    const uint64_t out = rotl(s[1] * 5u, 7) * 9u;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* Advance by 2^128 steps (the jump polynomial of xoshiro256, Blackman & Vigna 2021). */
static void rng_jump(rng_t *r) {
    static const uint64_t J[4] = {0x180ec6d33cfd0abaull, 0xd5a61266f0c9392cull,
                                  0xa9582618e03fc9aaull, 0x39abdc4529b1661cull};
    uint64_t a[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 64; b++) {
            if (J[i] & ((uint64_t)1 << b))
                for (int w = 0; w < 4; w++) a[w] ^= r->s[w];
            rng_next(r);
        }
    memcpy(r->s, a, sizeof a);
}

static void rng_seed(rng_t *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    for (uint64_t j = 0; j < stream; j++) rng_jump(r);
    r->has_spare = 0;
    r->spare = 0.0;
}

/* Uniform on (0, 1]: never 0, so -log(u) is finite. */
static inline double u01(rng_t *r) { return (double)((rng_next(r) >> 11) + 1) * 0x1.0p-53; }

static double std_normal(rng_t *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double v1, v2, s;
    do {
        v1 = 2.0 * u01(r) - 1.0;
        v2 = 2.0 * u01(r) - 1.0;
        s = v1 * v1 + v2 * v2;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    r->spare = v2 * f;
    r->has_spare = 1;
    return v1 * f;
}

#endif
