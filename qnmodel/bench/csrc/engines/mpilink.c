/* mpilink engine (MPI build only): bandwidth and latency between random pairs of ranks, as seed
 * 004 measured its InfiniBand fabric with the OSU micro-benchmarks (osu_latency, osu_bw) and
 * found cables running at the wrong rate.
 *
 * Every point pairs the ranks by a random permutation that all ranks draw alike from --seed and
 * the point index: (perm[0], perm[1]), (perm[2], perm[3]), ...; an odd rank out idles. One client
 * per rank exchanges --ops ping-pongs of --bs bytes with its partner (send then receive on the
 * first rank of the pair, receive then send on the second): latency_s is the round trip (half of
 * it is osu_latency's one-way figure), throughput_B_s the bytes both ways over the point. The
 * number of exchanges is fixed and never cut by time (no --runtime), so partners stay matched.
 * The pairs of every point are listed in engine_stats.pairs; the MPI aggregate's per_rank list
 * gives each rank's figures.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../qnbench.h"

#ifdef QNBENCH_HAVE_MPI
#include <mpi.h>
#endif

struct link_point {
    int n;
    int *perm;
    int partner; /* -1: idle this point */
    int first;   /* this rank starts each exchange */
};

struct link_worker {
    unsigned char *buf;
};

static int link_check(const struct qnb_config *c, char *err, size_t len)
{
    for (int i = 0; i < c->jobs.n; i++)
        if (c->jobs.v[i] != 1) {
            snprintf(err, len, "mpilink: one client per rank (--jobs 1), got %lld", c->jobs.v[i]);
            return 2;
        }
    if (c->ops <= 0 || qnb_option_given(c, "runtime")) {
        snprintf(err, len, "mpilink: give a fixed number of exchanges per pair (--ops N) and no "
                           "--runtime: a pair cut by time would leave its partner waiting");
        return 2;
    }
    if (!qnb_mpi_threads_ok()) {
        snprintf(err, len, "mpilink: this MPI library does not allow MPI calls from a worker "
                           "thread (MPI_THREAD_SERIALIZED)");
        return 2;
    }
    return 0;
}

static int link_setup(struct qnb_run *r)
{
    struct link_point *p = calloc(1, sizeof *p);
    int n = qnb_mpi_size(), me = qnb_mpi_rank();
    if (!p || !(p->perm = malloc((size_t)n * sizeof *p->perm))) {
        free(p);
        qnb_run_error(r, "mpilink: out of memory");
        return -1;
    }
    p->n = n;
    struct qnb_rng rng; /* the same draws on every rank */
    qnb_rng_seed(&rng, (uint64_t)r->cfg->seed * 7919u + (uint64_t)r->pt.index);
    for (int i = 0; i < n; i++)
        p->perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int k = (int)qnb_rng_below(&rng, (uint64_t)i + 1);
        int t = p->perm[i];
        p->perm[i] = p->perm[k];
        p->perm[k] = t;
    }
    p->partner = -1;
    for (int i = 0; i + 1 < n; i += 2) {
        if (p->perm[i] == me) {
            p->partner = p->perm[i + 1];
            p->first = 1;
        } else if (p->perm[i + 1] == me) {
            p->partner = p->perm[i];
        }
    }
    r->epriv = p;
    return 0;
}

static int link_worker_init(struct qnb_worker *w)
{
    struct link_worker *lw = calloc(1, sizeof *lw);
    if (!lw || !(lw->buf = calloc(1, (size_t)w->run->pt.bs))) {
        free(lw);
        qnb_worker_error(w, "mpilink: out of memory for a %lld-byte message", w->run->pt.bs);
        return -1;
    }
    w->priv = lw;
    return 0;
}

static int link_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct link_point *p = w->run->epriv;
    if (p->partner < 0)
        return 1;
#ifdef QNBENCH_HAVE_MPI
    struct link_worker *lw = w->priv;
    int count = (int)w->run->pt.bs, tag = w->run->pt.index % 32000;
    int rc;
    if (p->first) {
        rc = MPI_Send(lw->buf, count, MPI_BYTE, p->partner, tag, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            rc = MPI_Recv(lw->buf, count, MPI_BYTE, p->partner, tag, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Recv(lw->buf, count, MPI_BYTE, p->partner, tag, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(lw->buf, count, MPI_BYTE, p->partner, tag, MPI_COMM_WORLD);
    }
    if (rc != MPI_SUCCESS) {
        qnb_worker_error(w, "mpilink: exchange with rank %d failed (MPI error %d)", p->partner,
                         rc);
        return -1;
    }
    *bytes = 2 * (uint64_t)count;
    return 0;
#else
    (void)bytes;
    qnb_worker_error(w, "mpilink: needs the MPI build");
    return -1;
#endif
}

static void link_cleanup(struct qnb_worker *w)
{
    struct link_worker *lw = w->priv;
    if (lw)
        free(lw->buf);
    free(lw);
    w->priv = NULL;
}

static void link_report(struct qnb_run *r, struct qnb_json *j)
{
    struct link_point *p = r->epriv;
    qj_kint(j, "rank", qnb_mpi_rank());
    qj_kint(j, "partner", p->partner);
    qj_key(j, "pairs");
    qj_arr_begin(j);
    for (int i = 0; i + 1 < p->n; i += 2) {
        qj_arr_begin(j);
        qj_int(j, p->perm[i]);
        qj_int(j, p->perm[i + 1]);
        qj_arr_end(j);
    }
    qj_arr_end(j);
}

static void link_teardown(struct qnb_run *r)
{
    struct link_point *p = r->epriv;
    if (p)
        free(p->perm);
    free(p);
    r->epriv = NULL;
}

const struct qnb_engine qnb_engine_mpilink = {
    .name = "mpilink",
    .help = "MPI build: ping-pong bandwidth and latency between random pairs of ranks (OSU)",
    .flags = QNB_ENG_USES_BS | QNB_ENG_FIXED_WORK | QNB_ENG_NEEDS_MPI,
    .check = link_check,
    .point_setup = link_setup,
    .worker_init = link_worker_init,
    .op = link_op,
    .worker_cleanup = link_cleanup,
    .point_report = link_report,
    .point_teardown = link_teardown,
};
