/* mem engine: STREAM-style kernels (copy, scale, add, triad) over per-job arrays of doubles.
 *
 * Each job owns three arrays a, b, c of --size bytes. One operation is one pass of the kernel
 * over the whole arrays; `bytes` follows STREAM's convention: copy and scale move 2 arrays
 * (read one, write one), add and triad 3 (read two, write one).
 *   copy:  c[i] = a[i]            scale: b[i] = q * c[i]
 *   add:   c[i] = a[i] + b[i]     triad: a[i] = b[i] + q * c[i]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../qnbench.h"

struct mem_worker {
    double *a, *b, *c;
    size_t n;
    int kernel;
};

static const char *mem_ops(const struct qnb_config *c) { return c->mem_op; }

static int mem_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->size < 8 * 1024) {
        snprintf(err, len, "mem: --size %lld is too small (at least 8KiB per array)", c->size);
        return 2;
    }
    return qnb_check_memory(c, "mem: three arrays of --size bytes", 3.0L * (long double)c->size,
                            err, len);
}

static int mem_worker_init(struct qnb_worker *w)
{
    struct mem_worker *m = calloc(1, sizeof *m);
    if (!m) {
        qnb_worker_error(w, "mem: out of memory");
        return -1;
    }
    w->priv = m;
    m->n = (size_t)w->run->cfg->size / sizeof(double);
    const char *op = w->run->pt.op;
    m->kernel = strcmp(op, "copy") == 0 ? 0 : strcmp(op, "scale") == 0 ? 1
                                         : strcmp(op, "add") == 0   ? 2
                                                                    : 3;
    if (posix_memalign((void **)&m->a, 64, m->n * sizeof(double)) ||
        posix_memalign((void **)&m->b, 64, m->n * sizeof(double)) ||
        posix_memalign((void **)&m->c, 64, m->n * sizeof(double))) {
        qnb_worker_error(w, "mem: cannot allocate 3 x %lld bytes", w->run->cfg->size);
        return -1;
    }
    for (size_t i = 0; i < m->n; i++) {
        m->a[i] = 1.0;
        m->b[i] = 2.0;
        m->c[i] = 0.0;
    }
    return 0;
}

static void copy_k(double *restrict c, const double *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i];
}

static void scale_k(double *restrict b, const double *restrict c, double q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = q * c[i];
}

static void add_k(double *restrict c, const double *restrict a, const double *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

static void triad_k(double *restrict a, const double *restrict b, const double *restrict c,
                    double q, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + q * c[i];
}

static int mem_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct mem_worker *m = w->priv;
    size_t sz = m->n * sizeof(double);
    switch (m->kernel) {
    case 0: copy_k(m->c, m->a, m->n); *bytes = 2 * sz; break;
    case 1: scale_k(m->b, m->c, 3.0, m->n); *bytes = 2 * sz; break;
    case 2: add_k(m->c, m->a, m->b, m->n); *bytes = 3 * sz; break;
    default: triad_k(m->a, m->b, m->c, 3.0, m->n); *bytes = 3 * sz; break;
    }
    return 0;
}

static void mem_cleanup(struct qnb_worker *w)
{
    struct mem_worker *m = w->priv;
    if (!m)
        return;
    free(m->a);
    free(m->b);
    free(m->c);
    free(m);
    w->priv = NULL;
}

static void mem_report(struct qnb_run *r, struct qnb_json *j)
{
    qj_kint(j, "array_bytes", r->cfg->size);
}

const struct qnb_engine qnb_engine_mem = {
    .name = "mem",
    .help = "STREAM-style copy/scale/add/triad memory bandwidth",
    .flags = QNB_ENG_OPLIST,
    .op_list = mem_ops,
    .check = mem_check,
    .worker_init = mem_worker_init,
    .op = mem_op,
    .worker_cleanup = mem_cleanup,
    .point_report = mem_report,
};
