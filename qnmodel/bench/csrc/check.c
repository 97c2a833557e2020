/* The check of a whole configuration after parsing: the rules that tie options together, the
 * limits that keep the run's arithmetic and output bounded (the sweep's points, the samples of
 * the document, the buffers the engines allocate), the workload's and the engine's own checks.
 * main() and the fuzz target of the limits (fuzz/fuzz_limits.c) call the same function. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "qnbench.h"

int qnb_time_bounded(const struct qnb_config *c, const struct qnb_engine *eng)
{
    /* a fixed amount of work (meta, mpilink) is cut by time only when --runtime is given */
    if ((eng->flags & QNB_ENG_FIXED_WORK) && !qnb_option_given(c, "runtime"))
        return 0;
    return c->runtime > 0;
}

int qnb_check_memory(const struct qnb_config *c, const char *what, long double per_job, char *err,
                     size_t errlen)
{
    long long jobs = 1;
    for (int i = 0; i < c->jobs.n; i++)
        if (c->jobs.v[i] > jobs)
            jobs = c->jobs.v[i];
    long long mem = qnb_host_mem_total();
    long double need = per_job * (long double)jobs;
    if (mem > 0 && need > (long double)mem) {
        snprintf(err, errlen,
                 "%s: %.4Lg bytes for each of --jobs %lld clients, %.4Lg bytes in all, exceed "
                 "this machine's memory (%lld bytes, MemTotal): give smaller sizes or fewer "
                 "--jobs",
                 what, per_job, jobs, need, mem);
        return 2;
    }
    return 0;
}

/* A point that ends by --runtime keeps floor(runtime / interval) samples plus the last, partial
 * one; the points of a run share QNB_MAX_SAMPLES. */
static int check_samples(const struct qnb_config *c, const struct qnb_engine *eng,
                         long long npoints)
{
    if (!qnb_time_bounded(c, eng))
        return 0; /* ended by a count: the harness coarsens the interval when it must */
    long long share = QNB_MAX_SAMPLES / npoints;
    int64_t runtime = qnb_ns_of(c->runtime), interval = qnb_ns_of(c->interval);
    long long per_point = runtime / interval + 1;
    if (per_point > share) {
        qnb_diag("--interval %.9g s: each of the %lld point(s) of --runtime %.9g s would keep "
                 "%lld samples, and a run keeps at most %d samples (%lld a point here): give "
                 "--interval >= %.9g s",
                 c->interval, npoints, c->runtime, per_point, QNB_MAX_SAMPLES, share,
                 c->runtime / (double)(share - 1));
        return 2;
    }
    return 0;
}

int qnb_check_config(const struct qnb_config *c, const struct qnb_engine *eng)
{
    if (c->runtime <= 0 && c->ops <= 0 && c->io_size <= 0) {
        qnb_diag("--runtime must be > 0 (or give --ops N > 0 or --io-size SIZE > 0)");
        return 2;
    }
    if (c->repeat < 1 || c->repeat > 1000) {
        qnb_diag("--repeat %lld must be between 1 and 1000", c->repeat);
        return 2;
    }
    if (c->ops < 0) {
        qnb_diag("--ops %lld must be >= 0", c->ops);
        return 2;
    }
    if (c->interval <= 0) {
        qnb_diag("--interval must be > 0");
        return 2;
    }
    for (int i = 0; i < c->jobs.n; i++)
        if (c->jobs.v[i] > 1024) {
            qnb_diag("--jobs %lld is more than 1024", c->jobs.v[i]);
            return 2;
        }
    long long npoints = qnb_sweep_points(c, eng);
    if (npoints > QNB_MAX_POINTS) {
        qnb_diag("the sweep has %lld points (--jobs x --bs x operations x --repeat), more than "
                 "the %d a run may have: split it into several runs",
                 npoints, QNB_MAX_POINTS);
        return 2;
    }
    if (npoints >= 1 && check_samples(c, eng, npoints))
        return 2;
    if ((eng->flags & QNB_ENG_NEEDS_DIR) && !c->dir[0]) {
        qnb_diag("engine %s creates files: give --dir DIR (qnbench makes its own new directory "
                 "inside DIR and removes it at the end)",
                 eng->name);
        return 2;
    }
    if (strcmp(c->workers, "process") == 0 && !(eng->flags & QNB_ENG_PROCESSES)) {
        char names[256];
        qnb_engine_names_with(QNB_ENG_PROCESSES, names, sizeof names);
        qnb_diag("--workers process is supported by the %s engine only (engine %s uses threads)",
                 names, eng->name);
        return 2;
    }
    char err[768] = "";
    if (qnb_workload_check(c, eng, err, sizeof err)) {
        qnb_diag("%s", err);
        return 2;
    }
    if (eng->check && eng->check(c, err, sizeof err)) {
        qnb_diag("%s", err);
        return 2;
    }
    return 0;
}
