/* libFuzzer target: the arithmetic of qnbench's durations, sizes and rates, from option values
 * to the nanoseconds and bytes the harness and the engines compute with.
 *
 * Input: lines (split at NUL or newline). The first byte of the first line picks an engine
 * (null, emu, stripe over emulated members, tcp serving an emulated device, file); every other
 * line is one option: its first byte picks the option (a duration, size, rate or count that
 * takes part in arithmetic), the rest is the value as typed. The target parses the command line
 * and checks the whole configuration as main() does (qnb_parse_args, qnb_check_config).
 *
 * Claims checked, for every configuration qnbench accepts (the build has UBSan: any signed
 * overflow or out-of-range float conversion on the way aborts too):
 *  - every time converts exactly: qnb_ns_of(t) is the integer nearest to t x 1e9 (checked with
 *    one fma, independently of how qnb_ns_of rounds), within [0, QNB_MAX_SECONDS x 1e9];
 *  - every size is the value typed: a plain integer times the unit's factor, exactly (128-bit),
 *    or within half a byte of the typed decimal (long double) otherwise;
 *  - the derived times are in range: an emulated request's service time (the largest request,
 *    mean and an exponential draw), an open-loop client's time between arrivals, the warm-up,
 *    runtime and think deadlines added to the clock in plain int64 arithmetic;
 *  - the run's output is bounded: points <= QNB_MAX_POINTS and, for a run ended by --runtime,
 *    samples <= QNB_MAX_SAMPLES.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engines/emu.h"
#include "../qnbench.h"

static const char *const engines[][8] = {
    {"null"},
    {"emu"},
    {"stripe", "--member", "emu"},
    {"tcp", "--serve", "emu"},
    {"file", "--dir", "/nonexistent-qnbench-fuzz"},
};
#define NENG (sizeof engines / sizeof engines[0])

enum kind { K_TIME, K_SIZE, K_SIZELIST, K_RATE, K_FREQ, K_INT, K_INTLIST, K_DIST };
static const struct {
    const char *name;
    enum kind kind;
} options[] = {
    {"runtime", K_TIME},   {"warmup", K_TIME},       {"think", K_TIME},
    {"interval", K_TIME},  {"spin", K_TIME},         {"dev-latency", K_TIME},
    {"bs", K_SIZELIST},    {"size", K_SIZE},         {"chunk", K_SIZE},
    {"io-size", K_SIZE},   {"dev-rate", K_RATE},     {"rate", K_FREQ},
    {"jobs", K_INTLIST},   {"ops", K_INT},           {"repeat", K_INT},
    {"members", K_INT},    {"think-dist", K_DIST},   {"dev-dist", K_DIST},
};
#define NOPTS (sizeof options / sizeof options[0])

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int fd = open("/dev/null", O_WRONLY); /* --help and the like print to stdout */
    if (fd >= 0) {
        dup2(fd, 1);
        close(fd);
    }
    return 0;
}

/* t x 1e9 - ns rounded once: |exact| <= 0.5 <=> |this| <= 0.5 (0.5 is representable) */
static void check_ns(double t)
{
    int64_t ns = qnb_ns_of(t);
    if (ns < 0 || (double)ns > QNB_MAX_SECONDS * 1e9 + 0.5)
        abort();
    if (fabs(fma(t, 1e9, -(double)ns)) > 0.5)
        abort(); /* not the nearest nanosecond */
}

__extension__ typedef unsigned __int128 u128;

/* the value of a size typed as text: exactly for a plain integer with a unit, else to within
 * half a byte of the decimal read in long double */
static void check_size(const char *text, long long v)
{
    if (v < 0 || v > 9000000000000000000ll)
        abort();
    static const struct {
        const char *unit;
        unsigned long long f;
    } units[] = {{"", 1},         {"B", 1},          {"KiB", 1ull << 10}, {"MiB", 1ull << 20},
                 {"GiB", 1ull << 30}, {"TiB", 1ull << 40}, {"PiB", 1ull << 50},
                 {"EiB", 1ull << 60}, {"kB", 1000ull}, {"MB", 1000000ull},
                 {"GB", 1000000000ull}, {"TB", 1000000000000ull}, {"PB", 1000000000000000ull},
                 {"EB", 1000000000000000000ull}};
    const char *p = text;
    while (*p == ' ' || *p == '+')
        p++;
    char *end;
    long double x = strtold(p, &end);
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        int plain = end > p;
        for (const char *q = p; q < end; q++)
            plain &= (*q >= '0' && *q <= '9') || *q == ' ';
        if (plain) { /* digits only: the exact integer */
            u128 n = 0;
            for (const char *q = p; q < end; q++)
                if (*q != ' ' && n < ((u128)1 << 100))
                    n = n * 10 + (unsigned)(*q - '0');
            if (n * units[i].f != (u128)v)
                abort();
        } else if (fabsl(x * (long double)units[i].f - (long double)v) >
                   0.5L + fabsl(x) * (long double)units[i].f * 0x1p-62L) {
            abort();
        }
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 2048)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *lines[64];
    int nl = 0;
    char *start = buf;
    for (size_t i = 0; i <= size && nl < 64; i++)
        if (buf[i] == 0 || buf[i] == '\n') {
            buf[i] = 0;
            lines[nl++] = start;
            start = buf + i + 1;
        }

    const char *argv[200];
    const char *typed[NOPTS] = {0}; /* the last value given to each option */
    int argc = 0;
    argv[argc++] = "qnbench";
    argv[argc++] = "--engine";
    unsigned e = (unsigned char)lines[0][0] % NENG;
    for (int k = 0; k < 8 && engines[e][k]; k++)
        argv[argc++] = engines[e][k];
    for (int i = 1; i < nl; i++) {
        if (!lines[i][0])
            continue;
        unsigned o = (unsigned char)lines[i][0] % NOPTS;
        const char *val = lines[i] + 1;
        if (options[o].kind == K_DIST) /* the distribution decides the longest draw */
            val = (*val & 1) ? "exp" : "const";
        static char flags[NOPTS][32];
        snprintf(flags[o], sizeof flags[o], "--%s", options[o].name);
        argv[argc++] = flags[o];
        argv[argc++] = val;
        typed[o] = val;
    }
    argv[argc] = NULL;

    static struct qnb_config cfg;
    int rc = qnb_parse_args(&cfg, argc, (char **)argv);
    if (rc != 0 && rc != 2 && rc != 3)
        abort();
    const struct qnb_engine *eng = rc == 0 ? qnb_find_engine(cfg.engine) : NULL;
    if (rc == 0 && !eng)
        abort();
    int ok = rc == 0 && qnb_check_config(&cfg, eng) == 0;
    if (!ok) {
        free(buf);
        return 0;
    }

    /* times: exact nanoseconds, in range */
    const double times[] = {cfg.runtime, cfg.warmup, cfg.think, cfg.interval, cfg.spin,
                            cfg.dev_latency};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        check_ns(times[i]);
    if (cfg.interval > 0 && qnb_ns_of(cfg.interval) < 1)
        abort();

    /* sizes: the values typed */
    for (size_t o = 0; o < NOPTS; o++) {
        if (!typed[o])
            continue;
        if (options[o].kind == K_SIZE) {
            long long v = strcmp(options[o].name, "size") == 0    ? cfg.size
                          : strcmp(options[o].name, "chunk") == 0 ? cfg.chunk
                                                                  : cfg.io_size;
            check_size(typed[o], v);
        } else if (options[o].kind == K_SIZELIST && !strchr(typed[o], ',')) {
            check_size(typed[o], cfg.bs.v[0]);
        }
    }

    /* the points and the samples of the document */
    long long npoints = qnb_sweep_points(&cfg, eng);
    if (npoints < 1 || npoints > QNB_MAX_POINTS)
        abort();
    if (qnb_time_bounded(&cfg, eng)) {
        long long per_point = qnb_ns_of(cfg.runtime) / qnb_ns_of(cfg.interval) + 1;
        if (per_point * npoints > QNB_MAX_SAMPLES)
            abort();
    }

    /* deadlines in plain int64 arithmetic (UBSan checks it): now + warm-up + runtime, and a
     * think time of the longest exponential draw (-log of the smallest uniform, 2^-54) */
    int64_t now = qnb_now_ns();
    int64_t think_max = qnb_ns_of(cfg.think * -log(0x1p-54));
    int64_t deadline = now + qnb_ns_of(cfg.warmup) + qnb_ns_of(cfg.runtime) + think_max;
    if (deadline < now)
        abort();

    /* emulated devices: the largest request's service, mean and a draw */
    if (e == 1 || e == 2 || e == 3) {
        long long bs = 0;
        for (int i = 0; i < cfg.bs.n; i++)
            bs = cfg.bs.v[i] > bs ? cfg.bs.v[i] : bs;
        if (e == 2 && cfg.chunk < bs)
            bs = cfg.chunk; /* a stripe member serves one chunk piece at most */
        double mean = qnb_emu_mean_service_s(&cfg, (uint64_t)bs);
        if (!(mean >= 0 && mean <= QNB_MAX_SECONDS))
            abort();
        check_ns(mean);
        struct qnb_rng rng;
        qnb_rng_seed(&rng, (uint64_t)size);
        int64_t svc = qnb_emu_service_ns(&cfg, (uint64_t)bs, &rng);
        if (svc < 0 || svc > qnb_ns_of(mean * -log(0x1p-54)) + 1)
            abort();
        /* a device queue: the saturating schedule never runs backwards */
        struct qnb_emu_set set;
        if (qnb_emu_init(&set, 1, 1) == 0) {
            set.nolog = 1;
            int64_t t = now;
            for (int i = 0; i < 4; i++) {
                int64_t fin = qnb_emu_reserve(&set, 0, now, svc);
                if (fin < t)
                    abort();
                t = fin;
            }
            qnb_emu_destroy(&set);
        }
    }

    /* open loop: each client's mean time between arrivals is a time qnbench keeps */
    if (cfg.rate > 0)
        for (int i = 0; i < cfg.jobs.n; i++) {
            double mean = qnb_openloop_mean_s(&cfg, cfg.jobs.v[i]);
            if (!(mean >= 1e-9 && mean <= QNB_MAX_SECONDS))
                abort();
            check_ns(mean);
        }
    free(buf);
    return 0;
}
