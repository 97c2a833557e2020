/* The sweep: every point of --jobs x --bs x operation x --repeat, in that order (jobs varies
 * slowest, repetitions fastest). Each point starts after a barrier on every MPI rank; its result
 * object goes to the results array, the aggregate over all ranks to the aggregate array. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sweep.h"

int qnb_sweep_open(struct qnb_sweep *s)
{
    memset(s, 0, sizeof *s);
    s->complete = 1;
    s->ranks = qnb_mpi_size();
    s->rf = open_memstream(&s->results, &s->results_len);
    s->af = open_memstream(&s->aggregate, &s->aggregate_len);
    if (!s->rf || !s->af) {
        qnb_sweep_close(s);
        qnb_sweep_free(s);
        return -1;
    }
    qj_init(&s->jr, s->rf);
    qj_arr_begin(&s->jr);
    qj_init(&s->ja, s->af);
    qj_arr_begin(&s->ja);
    return 0;
}

/* the operations of the sweep: the engine's list (mem, cpu) or --rw; returns how many */
static int split_ops(const struct qnb_config *c, const struct qnb_engine *e, char ops[][32],
                     int max)
{
    char list[256];
    snprintf(list, sizeof list, "%s", e->op_list ? e->op_list(c) : c->rw);
    int n = 0;
    for (char *sv = NULL, *op = strtok_r(list, ",", &sv); op && n < max;
         op = strtok_r(NULL, ",", &sv))
        snprintf(ops[n++], 32, "%s", op);
    return n;
}

long long qnb_sweep_points(const struct qnb_config *c, const struct qnb_engine *e)
{
    char ops[QNB_MAX_LIST][32];
    long long nbs = (e->flags & QNB_ENG_USES_BS) ? c->bs.n : 1;
    return (long long)c->jobs.n * nbs * split_ops(c, e, ops, QNB_MAX_LIST) * c->repeat;
}

void qnb_sweep_run(struct qnb_sweep *s, struct qnb_run *r)
{
    const struct qnb_config *c = r->cfg;
    int uses_bs = (r->eng->flags & QNB_ENG_USES_BS) != 0;
    char ops[QNB_MAX_LIST][32];
    int nops = split_ops(c, r->eng, ops, QNB_MAX_LIST);
    int nbs = uses_bs ? c->bs.n : 1;
    int nrep = (int)c->repeat;
    int npoints = c->jobs.n * nbs * nops * nrep;
    for (int index = 0; index < npoints && s->complete; index++) {
        int rep = index % nrep, iop = index / nrep % nops;
        int ib = index / (nrep * nops) % nbs, ij = index / (nrep * nops * nbs);
        r->pt.index = index;
        r->pt.repeat = rep;
        r->pt.npoints = npoints;
        r->pt.jobs = (int)c->jobs.v[ij];
        r->pt.bs = uses_bs ? c->bs.v[ib] : 0;
        snprintf(r->pt.op, sizeof r->pt.op, "%s", ops[iop]);
        r->ops_total = r->bytes_total = 0;
        r->elapsed_s = 0;
        r->point_complete = 0;
        qnb_mpi_barrier(); /* synchronised start of the point on every rank */
        if (qnb_run_point(r, &s->jr) || qnb_stop_signal)
            s->complete = 0;
        qnb_mpi_point_json(r, &s->ja);
        /* every rank stops the sweep when any rank failed (collectives stay matched) */
        s->complete = !qnb_mpi_any(!s->complete);
    }
}

void qnb_sweep_close(struct qnb_sweep *s)
{
    if (s->rf) {
        qj_arr_end(&s->jr);
        fclose(s->rf);
        s->rf = NULL;
    }
    if (s->af) {
        qj_arr_end(&s->ja);
        fclose(s->af);
        s->af = NULL;
    }
}

void qnb_sweep_free(struct qnb_sweep *s)
{
    free(s->results);
    free(s->aggregate);
    s->results = s->aggregate = NULL;
}
