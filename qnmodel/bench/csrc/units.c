/* Unit parsing: sizes (bytes), times (seconds), rates (bytes per second); and the one home of
 * qnbench's numeric limits and checked conversions (seconds to nanoseconds, sums of times,
 * products of sizes), which every engine and the harness use instead of a bare cast.
 *
 * Binary prefixes (KiB, MiB, GiB, TiB, PiB, EiB) and decimal ones (kB, MB, GB, TB, PB, EB) are
 * both accepted and mean what the SI/IEC standards say. Bare "k", "K", "M", "KB" are refused as
 * ambiguous, as in qnmodel.units. A number without a unit is bytes, seconds or bytes per second.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnbench.h"

struct unit {
    const char *name;
    double factor; /* value = number * factor, or number / -factor when factor < 0 (exact
                      division by a power of ten: "5us" is 5e-06, not 4.9999999999999996e-06) */
};

static const struct unit time_units[] = {
    {"", 1.0},  {"s", 1.0},   {"ms", -1e3}, {"us", -1e6},
    {"ns", -1e9}, {"min", 60.0}, {NULL, 0.0},
};

static const struct unit rate_units[] = {
    {"", 1.0},           {"B/s", 1.0},          {"kB/s", 1e3},      {"MB/s", 1e6},
    {"GB/s", 1e9},       {"KiB/s", 1024.0},     {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
    {"bit/s", 0.125},    {"kbit/s", 125.0},     {"Mbit/s", 125e3},  {"Gbit/s", 125e6},
    {NULL, 0.0},
};

static const struct unit frequency_units[] = {
    {"", 1.0}, {"/s", 1.0}, {"1/s", 1.0}, {"ops/s", 1.0}, {"IOPS", 1.0},
    {"Hz", 1.0}, {"kHz", 1e3}, {"k/s", 1e3}, {NULL, 0.0},
};

static int parse_with(const char *s, const struct unit *units, const char *what, double *out,
                      char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v)) {
        snprintf(err, errlen, "cannot read a number in %s '%s'", what, s);
        return -1;
    }
    while (*end == ' ')
        end++;
    for (const struct unit *u = units; u->name; u++) {
        if (strcmp(end, u->name) == 0) {
            if (v < 0) {
                snprintf(err, errlen, "%s '%s' is negative; it must be >= 0", what, s);
                return -1;
            }
            v = u->factor < 0 ? v / -u->factor : v * u->factor;
            if (!isfinite(v)) {
                snprintf(err, errlen, "%s '%s' is too large to be represented", what, s);
                return -1;
            }
            *out = v + 0.0; /* -0 reads 0 */
            return 0;
        }
    }
    snprintf(err, errlen,
             "unknown or ambiguous unit '%s' in %s '%s' (use e.g. %s)", end, what, s,
             units == time_units ? "5ms, 250us, 2s"
                   : units == frequency_units ? "2000/s, 2000ops/s, 2kHz"
                                   : "50MB/s, 100MiB/s, 1Gbit/s");
    return -1;
}

/* Sizes are read exactly: the decimal number (at most QNB_SIZE_DIGITS significant digits, an
 * optional fraction and exponent) times the unit's whole factor, in 128-bit integers, so an
 * accepted size IS the value typed ("9000000000000000001" is that many bytes, "1.5KiB" is
 * 1536); a size that is not a whole number of bytes, or above 9e18, is refused. */
#define QNB_SIZE_DIGITS 20
#define QNB_SIZE_MAX 9000000000000000000ull
__extension__ typedef unsigned __int128 qnb_u128;

static const struct {
    const char *name;
    unsigned long long factor;
} size_factors[] = {
    {"", 1ull},           {"B", 1ull},           {"KiB", 1ull << 10},  {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},  {"TiB", 1ull << 40},   {"PiB", 1ull << 50},  {"EiB", 1ull << 60},
    {"kB", 1000ull},      {"MB", 1000000ull},    {"GB", 1000000000ull}, {"TB", 1000000000000ull},
    {"PB", 1000000000000000ull}, {"EB", 1000000000000000000ull}, {NULL, 0},
};

int qnb_parse_size(const char *s, long long *out, char *err, size_t errlen)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    int negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    /* mantissa m (significant digits), value = m x 10^e10 */
    qnb_u128 m = 0;
    int ndig = 0, sig = 0, lost = 0, dot = 0;
    long e10 = 0;
    for (;; p++) {
        if (*p == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (*p < '0' || *p > '9')
            break;
        int d = *p - '0';
        ndig++;
        if (sig == 0 && d == 0) { /* a leading zero: after the point it shifts the value */
            e10 -= dot;
        } else if (sig < QNB_SIZE_DIGITS) {
            m = m * 10 + (qnb_u128)d;
            sig++;
            e10 -= dot;
        } else { /* beyond the digits kept: only zeros keep the value exact */
            lost |= d != 0;
            e10 += !dot;
        }
    }
    if (ndig == 0) {
        snprintf(err, errlen, "cannot read a number in size '%s'", s);
        return -1;
    }
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') ||
         ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        p++;
        int esign = *p == '-' ? -1 : 1;
        if (*p == '+' || *p == '-')
            p++;
        long e = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if (e < 100000)
                e = e * 10 + (*p - '0');
        e10 += esign * e;
    }
    while (*p == ' ')
        p++;
    unsigned long long factor = 0;
    for (int i = 0; size_factors[i].name; i++)
        if (strcmp(p, size_factors[i].name) == 0)
            factor = size_factors[i].factor;
    if (!factor) {
        snprintf(err, errlen,
                 "unknown or ambiguous unit '%s' in size '%s' (use e.g. 4KiB, 1MiB (binary) or "
                 "4kB, 1MB (decimal))",
                 p, s);
        return -1;
    }
    if (negative && m != 0) {
        snprintf(err, errlen, "size '%s' is negative; it must be >= 0", s);
        return -1;
    }
    if (lost) {
        snprintf(err, errlen,
                 "size '%s' has more than %d significant digits: write it as a whole number of "
                 "bytes below 9e18",
                 s, QNB_SIZE_DIGITS);
        return -1;
    }
    /* exact: m (< 10^20 < 2^67) x factor (<= 2^60) < 2^127 */
    qnb_u128 v = m * factor;
    int whole = 1;
    if (v != 0 && e10 > 0) {
        for (long i = 0; i < e10 && v <= QNB_SIZE_MAX; i++)
            v *= 10;
    } else if (v != 0 && e10 < 0) {
        if (e10 < -38) {
            whole = 0; /* v < 2^127 < 10^39: a fraction of a byte remains */
        } else {
            qnb_u128 d = 1;
            for (long i = 0; i < -e10; i++)
                d *= 10;
            whole = v % d == 0;
            v /= d;
        }
    }
    if (!whole || v > QNB_SIZE_MAX) {
        snprintf(err, errlen, "size '%s' must be a whole number of bytes below 9e18", s);
        return -1;
    }
    *out = (long long)v;
    return 0;
}

/* ---- limits and checked conversions ---- */

int qnb_check_seconds(const char *option, const char *text, double s, char *err, size_t errlen)
{
    if (!(s >= 0) || s > QNB_MAX_SECONDS) {
        snprintf(err, errlen,
                 "--%s: '%s' is %.9g s, above the limit of %g s (11.6 days) for any time in "
                 "qnbench (times are kept in 64-bit nanoseconds)",
                 option, text, s, QNB_MAX_SECONDS);
        return -1;
    }
    if (s > 0 && s < 1e-9) {
        snprintf(err, errlen,
                 "--%s: '%s' is %.9g s, below the clock's resolution of 1 ns (give 0 or at "
                 "least 1ns)",
                 option, text, s);
        return -1;
    }
    return 0;
}

/* The nearest nanosecond of s exactly, not of the rounded product s * 1e9: the product is
 * split into hi + lo with one fma (lo is exactly the rounding error of hi), and the integer
 * nearest to hi + lo is formed from the integer nearest to hi and the rest. */
int64_t qnb_ns_of(double s)
{
    if (!(s > 0)) /* zero, negative, NaN */
        return 0;
    double hi = s * 1e9;
    if (!(hi < (double)QNB_NS_SATURATED))
        return QNB_NS_SATURATED;
    double lo = fma(s, 1e9, -hi);
    double r = nearbyint(hi);
    double rest = (hi - r) + lo; /* hi - r is exact; |rest| < 1 + ulp(hi) */
    int64_t ns = (int64_t)r + (int64_t)nearbyint(rest);
    return ns < 0 ? 0 : ns > QNB_NS_SATURATED ? QNB_NS_SATURATED : ns;
}

int64_t qnb_ns_add(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum) || sum > QNB_NS_SATURATED)
        return QNB_NS_SATURATED;
    return sum < 0 ? 0 : sum;
}

int qnb_mul_size(long long a, long long b, long long *out)
{
    long long p;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p))
        return -1;
    *out = p;
    return 0;
}

int qnb_parse_time(const char *s, double *out, char *err, size_t errlen)
{
    return parse_with(s, time_units, "time", out, err, errlen);
}

int qnb_parse_rate(const char *s, double *out, char *err, size_t errlen)
{
    return parse_with(s, rate_units, "rate", out, err, errlen);
}

int qnb_parse_frequency(const char *s, double *out, char *err, size_t errlen)
{
    return parse_with(s, frequency_units, "rate", out, err, errlen);
}

int qnb_parse_int(const char *s, long long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) {
        snprintf(err, errlen, "'%s' is not an integer", s);
        return -1;
    }
    *out = v;
    return 0;
}
