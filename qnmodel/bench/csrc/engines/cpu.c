/* cpu engine: per-unit processing cost, the T_mpro / T_snpro quantities of seed 002.
 *
 *   memcpy:   copy one unit of bs bytes
 *   xor:      parity of a stripe: XOR of --stripe-width units of bs bytes into a parity unit
 *   checksum: Internet checksum (RFC 1071, 16-bit one's complement sum) of a bs-byte buffer
 * One operation processes one unit (one stripe for xor); latency_s.mean is the cost per unit
 * (it includes the two clock reads of the harness, see the null engine's overhead_s_per_op).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../qnbench.h"

struct cpu_worker {
    unsigned char *src, *dst;
    unsigned char **units;
    int width;
    int kernel;
    volatile uint32_t sink;
};

static const char *cpu_ops(const struct qnb_config *c) { return c->cpu_op; }

static int cpu_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->stripe_width < 2 || c->stripe_width > 64) {
        snprintf(err, len, "cpu: --stripe-width %lld must be between 2 and 64", c->stripe_width);
        return 2;
    }
    for (int i = 0; i < c->bs.n; i++)
        if (c->bs.v[i] > (1ll << 30)) {
            snprintf(err, len, "cpu: --bs %lld is above 1GiB", c->bs.v[i]);
            return 2;
        }
    return 0;
}

static int cpu_worker_init(struct qnb_worker *w)
{
    struct cpu_worker *p = calloc(1, sizeof *p);
    size_t bs = (size_t)w->run->pt.bs;
    if (!p) {
        qnb_worker_error(w, "cpu: out of memory");
        return -1;
    }
    w->priv = p;
    const char *op = w->run->pt.op;
    p->kernel = strcmp(op, "memcpy") == 0 ? 0 : strcmp(op, "xor") == 0 ? 1 : 2;
    p->width = (int)w->run->cfg->stripe_width;
    p->src = malloc(bs);
    p->dst = malloc(bs);
    p->units = calloc((size_t)p->width, sizeof *p->units);
    if (!p->src || !p->dst || !p->units) {
        qnb_worker_error(w, "cpu: out of memory");
        return -1;
    }
    for (int u = 0; u < p->width; u++) {
        p->units[u] = malloc(bs);
        if (!p->units[u]) {
            qnb_worker_error(w, "cpu: out of memory");
            return -1;
        }
        for (size_t i = 0; i < bs; i++)
            p->units[u][i] = (unsigned char)(i * 7 + (size_t)u * 13);
    }
    for (size_t i = 0; i < bs; i++)
        p->src[i] = (unsigned char)(i * 11 + 3);
    return 0;
}

/* XOR of n units of len bytes into parity; 8 bytes at a time, then the tail. */
void qnb_xor_parity(unsigned char *parity, unsigned char *const *units, int n, size_t len)
{
    size_t words = len / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t x, y;
        memcpy(&x, units[0] + 8 * i, 8);
        for (int u = 1; u < n; u++) {
            memcpy(&y, units[u] + 8 * i, 8);
            x ^= y;
        }
        memcpy(parity + 8 * i, &x, 8);
    }
    for (size_t i = 8 * words; i < len; i++) {
        unsigned char x = units[0][i];
        for (int u = 1; u < n; u++)
            x ^= units[u][i];
        parity[i] = x;
    }
}

static uint16_t inet_checksum(const unsigned char *p, size_t len)
{
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        sum += (uint32_t)((p[i] << 8) | p[i + 1]);
    if (i < len)
        sum += (uint32_t)(p[i] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static int cpu_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct cpu_worker *p = w->priv;
    size_t bs = (size_t)w->run->pt.bs;
    switch (p->kernel) {
    case 0:
        memcpy(p->dst, p->src, bs);
        p->sink += p->dst[bs / 2];
        *bytes = bs;
        break;
    case 1:
        qnb_xor_parity(p->dst, p->units, p->width, bs);
        p->sink += p->dst[bs / 2];
        *bytes = bs * (size_t)p->width;
        break;
    default:
        p->sink += inet_checksum(p->src, bs);
        *bytes = bs;
        break;
    }
    return 0;
}

static void cpu_cleanup(struct qnb_worker *w)
{
    struct cpu_worker *p = w->priv;
    if (!p)
        return;
    if (p->units)
        for (int u = 0; u < p->width; u++)
            free(p->units[u]);
    free(p->units);
    free(p->src);
    free(p->dst);
    free(p);
    w->priv = NULL;
}

static void cpu_report(struct qnb_run *r, struct qnb_json *j)
{
    double busy = 0;
    uint64_t ops = 0, bytes = 0;
    for (int i = 0; i < r->pt.jobs; i++) {
        busy += r->workers[i].hist.sum_ns;
        ops += r->workers[i].hist.count;
        bytes += atomic_load(&r->workers[i].bytes);
    }
    qj_knum(j, "cost_s_per_unit", ops ? busy / (double)ops / 1e9 : 0.0);
    qj_knum(j, "cost_s_per_byte", bytes ? busy / (double)bytes / 1e9 : 0.0);
}

const struct qnb_engine qnb_engine_cpu = {
    .name = "cpu",
    .help = "per-unit processing cost: memcpy, XOR parity of a stripe, Internet checksum",
    .flags = QNB_ENG_USES_BS | QNB_ENG_OPLIST,
    .op_list = cpu_ops,
    .check = cpu_check,
    .worker_init = cpu_worker_init,
    .op = cpu_op,
    .worker_cleanup = cpu_cleanup,
    .point_report = cpu_report,
};
