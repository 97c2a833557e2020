/* Optional multi-node mode (built with -DQNBENCH_MPI=ON): every rank runs the same sweep, each
 * point starts after an MPI_Barrier (a synchronised start, as IOR and Mpbbonnie do), and rank 0
 * reports the aggregate of all ranks per point beside its own measurement. Without MPI the
 * functions below describe a single process (rank 0 of 1) and do nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "qnbench.h"

#ifdef QNBENCH_HAVE_MPI
#include <mpi.h>

static int mpi_on, mpi_threads;

void qnb_mpi_init(int *argc, char ***argv)
{
    int provided;
    /* SERIALIZED: the main thread's collectives (barrier, aggregate) never overlap the points,
     * so one worker thread may exchange messages during a point (engines/mpilink.c) */
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    mpi_threads = provided >= MPI_THREAD_SERIALIZED;
    mpi_on = 1;
}

int qnb_mpi_built(void) { return 1; }
int qnb_mpi_threads_ok(void) { return mpi_threads; }

/* every rank's (ops, bytes, elapsed) on rank 0: out holds 3 x size doubles there */
static void gather_ranks(const struct qnb_mpi_point *p, double *out)
{
    double mine[3] = {(double)p->ops, (double)p->bytes, p->elapsed_s};
    MPI_Gather(mine, 3, MPI_DOUBLE, out, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

int qnb_mpi_rank(void)
{
    int r = 0;
    if (mpi_on)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int qnb_mpi_size(void)
{
    int n = 1;
    if (mpi_on)
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void qnb_mpi_barrier(void)
{
    if (mpi_on)
        MPI_Barrier(MPI_COMM_WORLD);
}

void qnb_mpi_aggregate(struct qnb_mpi_point *p)
{
    if (!mpi_on)
        return;
    double sums[2] = {(double)p->ops, (double)p->bytes}, tot[2];
    double mx = p->elapsed_s, gmx;
    int ok = p->complete, gok;
    MPI_Reduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mx, &gmx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&ok, &gok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    if (qnb_mpi_rank() == 0) {
        p->ops = (uint64_t)tot[0];
        p->bytes = (uint64_t)tot[1];
        p->elapsed_s = gmx;
        p->complete = gok;
    }
}

int qnb_mpi_any(int flag)
{
    if (!mpi_on)
        return flag;
    int out;
    MPI_Allreduce(&flag, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

void qnb_mpi_finalize(void)
{
    if (mpi_on)
        MPI_Finalize();
    mpi_on = 0;
}

#else

void qnb_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
}
int qnb_mpi_built(void) { return 0; }
int qnb_mpi_threads_ok(void) { return 0; }
static void gather_ranks(const struct qnb_mpi_point *p, double *out)
{
    out[0] = (double)p->ops;
    out[1] = (double)p->bytes;
    out[2] = p->elapsed_s;
}
int qnb_mpi_rank(void) { return 0; }
int qnb_mpi_size(void) { return 1; }
void qnb_mpi_barrier(void) {}
void qnb_mpi_aggregate(struct qnb_mpi_point *p) { (void)p; }
int qnb_mpi_any(int flag) { return flag; }
void qnb_mpi_finalize(void) {}

#endif

/* The aggregate over all ranks of the point just run, as one JSON object. Collective: every
 * rank calls it after every point; rank 0's object holds the sums (the one that is printed). */
void qnb_mpi_point_json(const struct qnb_run *r, struct qnb_json *j)
{
    struct qnb_mpi_point agg = {r->ops_total, r->bytes_total, r->elapsed_s, r->point_complete};
    int n = qnb_mpi_size();
    double *per = calloc((size_t)n * 3, sizeof *per);
    if (!per) { /* a collective cannot be skipped on one rank */
        qnb_diag("out of memory for the per-rank figures of %d ranks", n);
        abort();
    }
    gather_ranks(&agg, per);
    qnb_mpi_aggregate(&agg);
    qj_obj_begin(j);
    qj_kint(j, "point", r->pt.index);
    qj_kint(j, "ranks", qnb_mpi_size());
    qj_kbool(j, "complete", agg.complete);
    qj_kint(j, "ops", (long long)agg.ops);
    qj_kint(j, "bytes", (long long)agg.bytes);
    qj_knum(j, "elapsed_s", agg.elapsed_s);
    qj_knum(j, "throughput_ops_s", agg.elapsed_s > 0 ? agg.ops / agg.elapsed_s : 0.0);
    qj_knum(j, "throughput_B_s", agg.elapsed_s > 0 ? agg.bytes / agg.elapsed_s : 0.0);
    {
        /* each rank's own figures, to compare ranks (median and MAD: qnmodel.check) */
        qj_key(j, "per_rank");
        qj_arr_begin(j);
        for (int i = 0; i < n; i++) {
            double e = per[3 * i + 2];
            qj_obj_begin(j);
            qj_kint(j, "rank", i);
            qj_kint(j, "ops", (long long)per[3 * i]);
            qj_kint(j, "bytes", (long long)per[3 * i + 1]);
            qj_knum(j, "elapsed_s", e);
            qj_knum(j, "throughput_ops_s", e > 0 ? per[3 * i] / e : 0.0);
            qj_knum(j, "throughput_B_s", e > 0 ? per[3 * i + 1] / e : 0.0);
            qj_obj_end(j);
        }
        qj_arr_end(j);
    }
    qj_obj_end(j);
    free(per);
}
