/* cpu engine: per-unit processing cost, the T_mpro / T_snpro quantities of seed 002.
 *
 *   memcpy:   copy one unit of bs bytes
 *   xor:      parity of a stripe: XOR of --stripe-width units of bs bytes into a parity unit
 *   checksum: Internet checksum (RFC 1071, 16-bit one's complement sum) of a bs-byte buffer
 *   cachehit: serve one bs-byte read from a user-space page cache holding --size bytes in
 *             4 KiB pages, the memory work of a client-cache hit in a user-space NFS client
 *             (libnfs keeps such a cache): each page of the request is looked up in a hash
 *             table of page slots (Knuth's multiplicative hash of the page number), its age
 *             checked against the cache's time-to-live (one coarse clock read per page, as a
 *             cache whose pages expire does), copied into a reassembly buffer, and the buffer
 *             copied into the caller's -- every byte moves twice. Consecutive reads walk
 *             the cached file and wrap. bs must be a multiple of 4 KiB and at most --size.
 * One operation processes one unit (one stripe for xor); latency_s.mean is the cost per unit
 * (it includes the two clock reads of the harness, see the null engine's overhead_s_per_op).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../qnbench.h"

#define CACHE_PAGE 4096
#define CACHE_TTL_S 3600 /* every page stays fresh for the whole run */
#ifndef CLOCK_MONOTONIC_COARSE
#define CLOCK_MONOTONIC_COARSE 6 /* Linux: the tick-resolution clock (vDSO, no system call) */
#endif

static uint64_t coarse_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (uint64_t)t.tv_sec;
}

/* one slot of the page cache's hash table: the page and the file offset it holds */
struct cache_slot {
    unsigned char data[CACHE_PAGE];
    uint64_t offset;
    uint64_t stamp; /* when it was cached, coarse-clock seconds + 1 (0: empty) */
};

struct cpu_worker {
    unsigned char *src, *dst;
    unsigned char **units;
    int width;
    int kernel;
    volatile uint32_t sink;
    /* cachehit: the table (a power of two of slots), the cached bytes, the next offset */
    struct cache_slot *slots;
    uint64_t nslots, cached, next;
    unsigned char *reasm;
};

static uint64_t cache_hash(uint64_t offset, uint64_t nslots)
{
    return (2654435761ull * (1 + offset / CACHE_PAGE)) & (nslots - 1);
}

static const char *cpu_ops(const struct qnb_config *c) { return c->cpu_op; }

static int cachehit_check(const struct qnb_config *c, char *err, size_t len)
{
    for (int i = 0; i < c->bs.n; i++)
        if (c->bs.v[i] % CACHE_PAGE || c->bs.v[i] > c->size) {
            snprintf(err, len,
                     "cpu: --cpu-op cachehit needs --bs a multiple of 4KiB and at most --size "
                     "(%lld), got --bs %lld", c->size, c->bs.v[i]);
            return 2;
        }
    if (c->size > (1ll << 32)) {
        snprintf(err, len, "cpu: --cpu-op cachehit: --size %lld is above 4GiB", c->size);
        return 2;
    }
    return 0;
}

static int cpu_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->stripe_width < 2 || c->stripe_width > 64) {
        snprintf(err, len, "cpu: --stripe-width %lld must be between 2 and 64", c->stripe_width);
        return 2;
    }
    long long bs = 0;
    for (int i = 0; i < c->bs.n; i++) {
        if (c->bs.v[i] > (1ll << 30)) {
            snprintf(err, len, "cpu: --bs %lld is above 1GiB", c->bs.v[i]);
            return 2;
        }
        bs = c->bs.v[i] > bs ? c->bs.v[i] : bs;
    }
    if (qnb_list_contains(c->cpu_op, "cachehit") && cachehit_check(c, err, len))
        return 2;
    /* a client's buffers: source, destination and --stripe-width units of --bs bytes; with
     * cachehit a page cache of --size bytes (rounded up to a power of two of pages) and a
     * reassembly buffer */
    long double per_job = (long double)bs * (long double)(c->stripe_width + 2);
    if (qnb_list_contains(c->cpu_op, "cachehit")) {
        long double pages = 1;
        while (pages * CACHE_PAGE < (long double)c->size)
            pages *= 2;
        per_job += pages * (long double)sizeof(struct cache_slot) + (long double)bs;
    }
    return qnb_check_memory(c, "cpu: the buffers (--bs, --stripe-width, --size)", per_job, err,
                            len);
}

/* cachehit: fill the table with the pages of a file of --size bytes (whole pages) */
static int cachehit_init(struct qnb_worker *w, struct cpu_worker *p, size_t bs)
{
    uint64_t pages = ((uint64_t)w->run->cfg->size + CACHE_PAGE - 1) / CACHE_PAGE;
    p->nslots = 1;
    while (p->nslots < pages)
        p->nslots <<= 1;
    p->cached = pages * CACHE_PAGE;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    p->reasm = malloc(bs);
    if (!p->slots || !p->reasm) {
        qnb_worker_error(w, "cpu: cannot allocate a page cache of %lld bytes",
                         (long long)p->cached);
        return -1;
    }
    uint64_t now = coarse_s() + 1;
    for (uint64_t off = 0; off < p->cached; off += CACHE_PAGE) {
        struct cache_slot *s = &p->slots[cache_hash(off, p->nslots)];
        s->offset = off;
        s->stamp = now;
        memset(s->data, (int)(off / CACHE_PAGE) & 0xff, CACHE_PAGE);
    }
    return 0;
}

/* cachehit: one read of bs bytes at the next offset, every page a hit */
static int cachehit_op(struct qnb_worker *w, struct cpu_worker *p, size_t bs)
{
    if (p->next + bs > p->cached)
        p->next = 0;
    for (size_t k = 0; k < bs; k += CACHE_PAGE) {
        uint64_t off = p->next + k;
        const struct cache_slot *s = &p->slots[cache_hash(off, p->nslots)];
        if (s->offset != off || !s->stamp || coarse_s() + 1 - s->stamp > CACHE_TTL_S) {
            qnb_worker_error(w, "cpu: cachehit: page at %llu not in the cache or expired",
                             (unsigned long long)off);
            return -1;
        }
        memcpy(p->reasm + k, s->data, CACHE_PAGE);
    }
    memcpy(p->dst, p->reasm, bs);
    p->sink += p->dst[bs / 2];
    p->next += bs;
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
    p->kernel = strcmp(op, "memcpy") == 0 ? 0 : strcmp(op, "xor") == 0 ? 1
                : strcmp(op, "checksum") == 0 ? 2
                                              : 3;
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
    return p->kernel == 3 ? cachehit_init(w, p, bs) : 0;
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
    case 2:
        p->sink += inet_checksum(p->src, bs);
        *bytes = bs;
        break;
    default:
        if (cachehit_op(w, p, bs))
            return -1;
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
    free(p->slots);
    free(p->reasm);
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
    .help = "per-unit processing cost: memcpy, XOR parity of a stripe, Internet checksum, a "
            "hit in a user-space page cache",
    .flags = QNB_ENG_USES_BS | QNB_ENG_OPLIST,
    .op_list = cpu_ops,
    .check = cpu_check,
    .worker_init = cpu_worker_init,
    .op = cpu_op,
    .worker_cleanup = cpu_cleanup,
    .point_report = cpu_report,
};
