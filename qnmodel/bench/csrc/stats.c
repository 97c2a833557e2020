/* Log-bucket latency histogram (nanoseconds) and the pseudo-random generator.
 *
 * Bucket layout: values below 2^6 ns have one bucket each; above, every power of two
 * [2^e, 2^(e+1)) is split into 64 equal sub-buckets, so a bucket's width is at most 1/64 of its
 * lower edge and its midpoint is within 0.8% of any value in it.
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
