/* histcheck: feeds latencies to qnbench's histogram (stats.c) and prints what qnbench would
 * report, so the tests can compare it with the exact sample quantiles.
 *
 *   histcheck PARTS Q1 [Q2 ...] < values
 *
 * Reads whitespace-separated latencies in nanoseconds (unsigned integers) from stdin, adds value
 * i to histogram i mod PARTS (as qnbench's workers do), merges the PARTS histograms (as the
 * harness does) and prints one JSON object: count, min, max, the bound QNB_HIST_REL_ERROR, and
 * the quantile in nanoseconds for every Q given. Built by tests/bench/test_qnbench_quantiles.py
 * (target qnbench_histcheck, never installed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../qnbench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: histcheck PARTS Q1 [Q2 ...] < nanoseconds\n");
        return 2;
    }
    int parts = atoi(argv[1]);
    if (parts < 1 || parts > 64) {
        fprintf(stderr, "histcheck: PARTS must be 1..64\n");
        return 2;
    }
    struct qnb_hist *h = calloc((size_t)parts + 1, sizeof *h);
    if (!h)
        return 1;
    for (int i = 0; i <= parts; i++)
        qnb_hist_reset(&h[i]);
    unsigned long long v;
    unsigned long long n = 0;
    while (scanf("%llu", &v) == 1)
        qnb_hist_add(&h[1 + n++ % (unsigned long long)parts], (uint64_t)v);
    if (!feof(stdin)) {
        fprintf(stderr, "histcheck: stdin holds something other than unsigned integers\n");
        return 2;
    }
    for (int i = 1; i <= parts; i++)
        qnb_hist_merge(&h[0], &h[i]);
    printf("{\"count\": %llu, \"min\": %llu, \"max\": %llu, \"rel_error\": %.17g, \"quantiles\": [",
           (unsigned long long)h[0].count, (unsigned long long)h[0].min_ns,
           (unsigned long long)h[0].max_ns, QNB_HIST_REL_ERROR);
    for (int i = 2; i < argc; i++) {
        double q = qnb_hist_quantile_ns(&h[0], atof(argv[i]));
        printf("%s[%.17g, ", i > 2 ? ", " : "", atof(argv[i]));
        printf(isfinite(q) ? "%.17g]" : "null]", q);
    }
    printf("]}\n");
    free(h);
    return 0;
}
