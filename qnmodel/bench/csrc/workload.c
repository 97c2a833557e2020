/* Workload shapes the harness applies to every engine: the open loop (requests arrive at a given
 * rate, Poisson or evenly spaced, whatever the system's state) and latency per operation class
 * (reads and writes of a --rwmix, the phases of an engine).
 *
 * Open loop: each of the J clients serves its own arrival stream of rate lambda/J (a Poisson
 * stream split at random is again Poisson, so the whole offered load is Poisson of rate
 * lambda). A client issues its next request at the request's scheduled arrival instant, or at
 * once when it is already behind; the response time is measured FROM THE SCHEDULED ARRIVAL, so
 * the time a request waited behind its predecessors counts (a closed-loop benchmark that
 * measures from issue hides it: "coordinated omission"). With J = 1 a client in front of one
 * emulated device with exponential service is the M/M/1 queue: mean response 1/(mu - lambda)
 * (Kleinrock, Queueing Systems vol. 1, 1975, eq. 3.26), and the share of arrivals that find the
 * client busy is rho = lambda/mu (PASTA, Wolff 1982).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int qnb_openloop_on(const struct qnb_config *c) { return c->rate > 0; }

double qnb_openloop_mean_s(const struct qnb_config *c, long long jobs)
{
    return (double)jobs / c->rate; /* within [1 ns, QNB_MAX_SECONDS] (qnb_workload_check) */
}

static int64_t interarrival_ns(struct qnb_worker *w)
{
    const struct qnb_config *c = w->run->cfg;
    double mean = qnb_openloop_mean_s(c, w->run->pt.jobs);
    if (strcmp(c->arrivals, "poisson") == 0)
        return qnb_ns_of(-log(qnb_rng_uniform(&w->rng)) * mean);
    return qnb_ns_of(mean);
}

void qnb_openloop_start(struct qnb_worker *w)
{
    const struct qnb_config *c = w->run->cfg;
    int64_t now = qnb_now_ns();
    /* constant arrivals: the clients' streams are staggered evenly over one period */
    if (strcmp(c->arrivals, "constant") == 0)
        w->ol_next_ns = qnb_ns_add(now, qnb_ns_of((double)w->id / c->rate));
    else
        w->ol_next_ns = qnb_ns_add(now, interarrival_ns(w));
}

int64_t qnb_openloop_wait(struct qnb_worker *w, int64_t spin_ns)
{
    struct qnb_run *r = w->run;
    int64_t sched = w->ol_next_ns;
    int behind = qnb_now_ns() > sched;
    /* the sleep wakes at once when the run stops */
    if (qnb_stopping(r) || qnb_run_sleep(r, sched, spin_ns))
        return 0;
    int64_t now = qnb_now_ns();
    w->ol_next_ns = qnb_ns_add(sched, interarrival_ns(w));
    w->ol_sched_ns = sched;
    if (atomic_load(&r->phase) == QNB_PHASE_MEASURE) {
        double wait = (double)(now - sched);
        w->ol_issued++;
        w->ol_behind += (uint64_t)behind;
        w->ol_wait_sum_ns += wait;
        if (wait > w->ol_wait_max_ns)
            w->ol_wait_max_ns = wait;
    }
    return sched;
}

/* Arrivals of the client's stream due in [ol_next_ns, t_stop]. Constant arrivals: counted
 * exactly. Poisson: drawn one by one (the stream's own draws) up to QNB_BACKLOG_DRAWS; the rest
 * of a longer backlog is counted as its expectation, (t_stop - t) / mean (a Poisson count of
 * mean n beyond 10^5 is within a relative 1/sqrt(n) < 0.3 % of n), so the loop stays short
 * (it runs in every client at the end of every point). */
#define QNB_BACKLOG_DRAWS 100000u
void qnb_openloop_end(struct qnb_worker *w)
{
    const struct qnb_config *c = w->run->cfg;
    int64_t t_stop = atomic_load(&w->run->t_stop_ns);
    int64_t t = w->ol_next_ns;
    uint64_t n = 0;
    double mean_s = qnb_openloop_mean_s(c, w->run->pt.jobs);
    if (t > t_stop) {
        w->ol_backlog_end = 0;
        return;
    }
    if (strcmp(c->arrivals, "constant") == 0) {
        int64_t step = qnb_ns_of(mean_s);
        w->ol_backlog_end = step > 0 ? (uint64_t)((t_stop - t) / step) + 1 : 1;
        return;
    }
    for (; t <= t_stop && n < QNB_BACKLOG_DRAWS; t = qnb_ns_add(t, interarrival_ns(w)))
        n++;
    if (t <= t_stop)
        n += (uint64_t)llround((double)(t_stop - t) / (mean_s * 1e9));
    w->ol_backlog_end = n;
}

void qnb_openloop_json(const struct qnb_run *r, struct qnb_json *j)
{
    const struct qnb_config *c = r->cfg;
    uint64_t issued = 0, behind = 0, backlog = 0;
    double wsum = 0, wmax = 0;
    for (int i = 0; i < r->pt.jobs; i++) {
        const struct qnb_worker *w = &r->workers[i];
        issued += w->ol_issued;
        behind += w->ol_behind;
        backlog += w->ol_backlog_end;
        wsum += w->ol_wait_sum_ns;
        if (w->ol_wait_max_ns > wmax)
            wmax = w->ol_wait_max_ns;
    }
    qj_key(j, "open_loop");
    qj_obj_begin(j);
    qj_knum(j, "rate_ops_s", c->rate);
    qj_kstr(j, "arrivals", c->arrivals);
    qj_kint(j, "issued", (long long)issued);
    qj_knum(j, "behind_fraction", issued ? (double)behind / (double)issued : 0.0);
    qj_knum(j, "wait_s_mean", issued ? wsum / (double)issued / 1e9 : 0.0);
    qj_knum(j, "wait_s_max", wmax / 1e9);
    qj_kint(j, "backlog_end", (long long)backlog);
    qj_obj_end(j);
}

int qnb_opclass_setup(struct qnb_run *r)
{
    r->nclass = 0;
    r->class_hist = NULL;
    const char *list = r->eng->op_classes ? r->eng->op_classes(r->cfg) : NULL;
    if (!list || !*list)
        return 0;
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", list);
    for (char *sv = NULL, *t = strtok_r(tmp, ",", &sv); t && r->nclass < 8;
         t = strtok_r(NULL, ",", &sv))
        snprintf(r->classes[r->nclass++], sizeof r->classes[0], "%s", t);
    size_t n = (size_t)r->pt.jobs * (size_t)r->nclass;
    r->class_hist = qnb_shared_alloc(n * sizeof *r->class_hist);
    if (!r->class_hist) {
        qnb_run_error(r, "out of memory for %zu latency histograms", n);
        r->nclass = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        qnb_hist_reset(&r->class_hist[i]);
    return 0;
}

void qnb_opclass_add(struct qnb_worker *w, uint64_t ns)
{
    struct qnb_run *r = w->run;
    if (r->class_hist && w->op_class >= 0 && w->op_class < r->nclass)
        qnb_hist_add(&r->class_hist[(size_t)w->id * (size_t)r->nclass + (size_t)w->op_class], ns);
}

void qnb_latency_json(const struct qnb_hist *h, struct qnb_json *j)
{
    qj_kint(j, "count", (long long)h->count);
    qj_knum(j, "mean", h->count ? h->sum_ns / h->count / 1e9 : NAN);
    qj_knum(j, "min", h->count ? h->min_ns / 1e9 : NAN);
    qj_knum(j, "p50", qnb_hist_quantile_ns(h, 0.50) / 1e9);
    qj_knum(j, "p90", qnb_hist_quantile_ns(h, 0.90) / 1e9);
    qj_knum(j, "p99", qnb_hist_quantile_ns(h, 0.99) / 1e9);
    qj_knum(j, "max", h->count ? h->max_ns / 1e9 : NAN);
}

void qnb_opclass_json(const struct qnb_run *r, struct qnb_json *j)
{
    if (!r->class_hist)
        return;
    static struct qnb_hist h; /* the main thread reports one point at a time */
    qj_key(j, "latency_by_op_s");
    qj_obj_begin(j);
    for (int k = 0; k < r->nclass; k++) {
        qnb_hist_reset(&h);
        for (int i = 0; i < r->pt.jobs; i++)
            qnb_hist_merge(&h, &r->class_hist[(size_t)i * (size_t)r->nclass + (size_t)k]);
        qj_key(j, r->classes[k]);
        qj_obj_begin(j);
        qnb_latency_json(&h, j);
        qj_obj_end(j);
    }
    qj_obj_end(j);
}

void qnb_opclass_free(struct qnb_run *r)
{
    if (r->class_hist)
        qnb_shared_free(r->class_hist,
                        (size_t)r->pt.jobs * (size_t)r->nclass * sizeof *r->class_hist);
    r->class_hist = NULL;
    r->nclass = 0;
}

int qnb_workload_check(const struct qnb_config *c, const struct qnb_engine *e, char *err,
                       size_t len)
{
    if (c->rate < 0) {
        snprintf(err, len, "--rate must be >= 0 (0: closed loop)");
        return 2;
    }
    /* each of J clients serves a stream of rate/J: its mean time between arrivals, J/rate,
     * must be a time qnbench keeps (1 ns to QNB_MAX_SECONDS) */
    for (int i = 0; c->rate > 0 && i < c->jobs.n; i++) {
        double mean = qnb_openloop_mean_s(c, c->jobs.v[i]);
        if (!(mean <= QNB_MAX_SECONDS) || mean < 1e-9) {
            char why[96];
            if (mean < 1e-9)
                snprintf(why, sizeof why, "below the clock's resolution of 1 ns");
            else
                snprintf(why, sizeof why, "above the limit of %g s for any time in qnbench",
                         QNB_MAX_SECONDS);
            snprintf(err, len,
                     "--rate %.9g/s: with --jobs %lld each client's mean time between "
                     "arrivals (jobs / rate) is %.9g s, %s; give --rate between %.9g/s and "
                     "%.9g/s",
                     c->rate, c->jobs.v[i], mean, why,
                     (double)c->jobs.v[i] / QNB_MAX_SECONDS, (double)c->jobs.v[i] * 1e9);
            return 2;
        }
    }
    if (c->rate > 0 && c->think > 0) {
        snprintf(err, len,
                 "--rate (open loop: requests arrive on a schedule) and --think (closed loop: a "
                 "client thinks between requests) exclude each other; give one of them");
        return 2;
    }
    if (c->rate > 0 && (e->flags & (QNB_ENG_FIXED_WORK | QNB_ENG_NO_MEASURE))) {
        snprintf(err, len, "--rate: engine %s does a fixed amount of work, not an open loop",
                 e->name);
        return 2;
    }
    if (c->rwmix != -1 && (c->rwmix < 0 || c->rwmix > 100)) {
        snprintf(err, len, "--rwmix %lld must be a percentage of reads between 0 and 100",
                 c->rwmix);
        return 2;
    }
    if (c->rwmix != -1 && !e->op_classes) {
        snprintf(err, len, "--rwmix: engine %s has no read/write mix (the file engine has)",
                 e->name);
        return 2;
    }
    if ((e->flags & QNB_ENG_NEEDS_MPI) && !qnb_mpi_built()) {
        snprintf(err, len,
                 "engine %s needs the MPI build of qnbench (qnbench-mpi, run under mpirun); "
                 "this is the single-node build",
                 e->name);
        return 2;
    }
    return 0;
}
