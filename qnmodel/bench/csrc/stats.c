/* Log-linear latency histogram (nanoseconds) and the pseudo-random generator.
 *
 * Bucket layout (the HDR histogram's, Tene 2012, with 2^8 sub-buckets per octave): values below
 * 2^8 ns have one bucket each; above, every power of two [2^e, 2^(e+1)) is split into 256 equal
 * sub-buckets of width 2^(e-8), so a bucket's width is at most 1/256 of its lower edge. The full
 * 64-bit range takes 57 * 256 buckets (117 KiB of counts per histogram).
 *
 * Quantile error bound: the exact sample quantile x (the ceil(q n)-th smallest value) lies in
 * the bucket [lo, lo + w) that the rank falls into; the reported midpoint m = lo + w/2 (or x
 * itself below 2^8 ns) satisfies |m - x| <= w/2 <= lo/512 <= x/512, and clamping m to the exact
 * [min, max] only moves it towards x. So |reported - exact| <= 2^-9 x (0.195 %), whatever the
 * distribution and the number of values (tests/bench/test_qnbench_quantiles.py measures it). Two
 * latencies more than 1/256 (0.4 %) apart never share a bucket. The former 64 sub-buckets per
 * octave gave 0.78 % and let runs of 71.4 ms and 72.0 ms both report a p99 of 71.83 ms.
 */
#include <math.h>
#include <string.h>

#include "qnbench.h"

void qnb_hist_reset(struct qnb_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

static unsigned bucket_of(uint64_t v)
{
    if (v < QNB_HIST_SUB)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - QNB_HIST_SUB_BITS;
    unsigned sub = (unsigned)((v >> shift) & (QNB_HIST_SUB - 1));
    unsigned idx = (shift + 1) * QNB_HIST_SUB + sub;
    return idx < QNB_HIST_BUCKETS ? idx : QNB_HIST_BUCKETS - 1;
}

void qnb_hist_bucket_range(unsigned idx, double *lo, double *hi)
{
    if (idx < QNB_HIST_SUB) {
        *lo = idx;
        *hi = idx + 1.0;
        return;
    }
    unsigned shift = idx / QNB_HIST_SUB - 1;
    unsigned sub = idx % QNB_HIST_SUB;
    double w = ldexp(1.0, (int)shift);
    *lo = (QNB_HIST_SUB + sub) * w;
    *hi = *lo + w;
}

void qnb_hist_add(struct qnb_hist *h, uint64_t ns)
{
    h->count++;
    h->sum_ns += (double)ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->b[bucket_of(ns)]++;
}

void qnb_hist_merge(struct qnb_hist *dst, const struct qnb_hist *src)
{
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
    for (unsigned i = 0; i < QNB_HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
}

/* Quantile q in [0,1]: the midpoint of the bucket holding the ceil(q*count)-th value, clamped to
 * the exact min and max. */
double qnb_hist_quantile_ns(const struct qnb_hist *h, double q)
{
    if (h->count == 0)
        return NAN;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < QNB_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            double lo, hi;
            qnb_hist_bucket_range(i, &lo, &hi);
            double mid = i < QNB_HIST_SUB ? lo : 0.5 * (lo + hi);
            if (mid < (double)h->min_ns)
                mid = (double)h->min_ns;
            if (mid > (double)h->max_ns)
                mid = (double)h->max_ns;
            return mid;
        }
    }
    return (double)h->max_ns;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void qnb_rng_seed(struct qnb_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t qnb_rng_next(struct qnb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double qnb_rng_uniform(struct qnb_rng *r)
{
    return ((double)(qnb_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

long long qnb_next_offset(struct qnb_rng *r, int random, long long *cursor, long long nblocks,
                          long long bs)
{
    if (random)
        return (long long)qnb_rng_below(r, (uint64_t)nblocks) * bs;
    if (*cursor + bs > nblocks * bs)
        *cursor = 0;
    long long off = *cursor;
    *cursor += bs;
    return off;
}

uint64_t qnb_rng_below(struct qnb_rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = qnb_rng_next(r);
    while (v >= limit);
    return v % n;
}
