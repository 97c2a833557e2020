/* Unit parsing: sizes (bytes), times (seconds), rates (bytes per second).
 *
 * Binary prefixes (KiB, MiB, GiB, TiB) and decimal ones (kB, MB, GB, TB) are both accepted and
 * mean what the SI/IEC standards say. Bare "k", "K", "M", "KB" are refused as ambiguous, as in
 * qnmodel.units. A number without a unit is bytes, seconds or bytes per second.
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

static const struct unit size_units[] = {
    {"", 1.0},           {"B", 1.0},           {"KiB", 1024.0},   {"MiB", 1048576.0},
    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"kB", 1e3}, {"MB", 1e6},
    {"GB", 1e9},         {"TB", 1e12},         {NULL, 0.0},
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
            *out = u->factor < 0 ? v / -u->factor : v * u->factor;
            return 0;
        }
    }
    snprintf(err, errlen,
             "unknown or ambiguous unit '%s' in %s '%s' (use e.g. %s)", end, what, s,
             units == size_units   ? "4KiB, 1MiB (binary) or 4kB, 1MB (decimal)"
             : units == time_units ? "5ms, 250us, 2s"
                   : units == frequency_units ? "2000/s, 2000ops/s, 2kHz"
                                   : "50MB/s, 100MiB/s, 1Gbit/s");
    return -1;
}

int qnb_parse_size(const char *s, long long *out, char *err, size_t errlen)
{
    double v;
    if (parse_with(s, size_units, "size", &v, err, errlen))
        return -1;
    if (v > 9.0e18 || v != floor(v)) {
        snprintf(err, errlen, "size '%s' must be a whole number of bytes below 9e18", s);
        return -1;
    }
    *out = (long long)v;
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
