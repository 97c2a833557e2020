/* qnbench main(): parse options, select the engine, run the sweep, print one JSON document. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static void on_signal(int sig)
{
    qnb_stop_signal = sig;
}

static int check_common(const struct qnb_config *c, const struct qnb_engine *eng)
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
    if (eng->check) {
        char err[512] = "";
        if (eng->check(c, err, sizeof err)) {
            qnb_diag("%s", err);
            return 2;
        }
    }
    return 0;
}

static int run_main(int argc, char **argv);

int main(int argc, char **argv)
{
    qnb_mpi_init(&argc, &argv);
    int rc = run_main(argc, argv);
    qnb_mpi_finalize();
    return rc;
}

static int run_main(int argc, char **argv)
{
    static struct qnb_config cfg;
    if (qnb_engine_table_check())
        return 1;
    int rc = qnb_parse_args(&cfg, argc, argv);
    if (rc == 3)
        return 0;
    if (rc)
        return 2;
    const struct qnb_engine *eng = qnb_find_engine(cfg.engine);
    if (!eng) {
        qnb_diag("unknown engine '%s'", cfg.engine);
        return 2;
    }
    rc = check_common(&cfg, eng);
    if (rc)
        return rc;
    /* A real-time client is woken by clock_nanosleep 30-50 us late on virtual machines; a
     * 100 us spin brings that to a few microseconds. An explicit --spin is kept as given. */
    if (cfg.realtime && !qnb_option_given(&cfg, "spin"))
        cfg.spin = 100e-6;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);

    struct qnb_run *r = qnb_shared_alloc(sizeof *r);
    if (!r) {
        qnb_diag("out of memory");
        return 1;
    }
    r->cfg = &cfg;
    r->eng = eng;

    /* a standalone role (tcp server) serves instead of measuring; its document has no results */
    int standalone = eng->standalone ? eng->standalone(r) : -1;

    /* results are collected in memory and printed in one document at the end */
    char *rbuf = NULL;
    size_t rlen = 0;
    FILE *rf = open_memstream(&rbuf, &rlen);
    if (!rf) {
        qnb_diag("out of memory");
        return 1;
    }
    struct qnb_json jr;
    qj_init(&jr, rf);
    qj_arr_begin(&jr);

    char oplist[256];
    if (eng->op_list)
        snprintf(oplist, sizeof oplist, "%s", eng->op_list(&cfg));
    else
        snprintf(oplist, sizeof oplist, "%s", cfg.rw);
    int nbs = (eng->flags & QNB_ENG_USES_BS) ? cfg.bs.n : 1;
    /* with several MPI ranks: the aggregate of all ranks per point, collected on rank 0 */
    int ranks = qnb_mpi_size();
    char *abuf = NULL;
    size_t alen = 0;
    FILE *af = open_memstream(&abuf, &alen);
    if (!af) {
        qnb_diag("out of memory");
        return 1;
    }
    struct qnb_json ja;
    qj_init(&ja, af);
    qj_arr_begin(&ja);
    int nops = 1;
    for (const char *p = oplist; *p; p++)
        nops += *p == ',';
    int npoints = cfg.jobs.n * nbs * nops * (int)cfg.repeat;
    int index = 0, complete = 1;
    if (standalone > 0)
        complete = 0;
    for (int ij = 0; ij < cfg.jobs.n && complete && standalone < 0; ij++) {
        for (int ib = 0; ib < nbs && complete; ib++) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%s", oplist);
            for (char *sv = NULL, *op = strtok_r(tmp, ",", &sv); op && complete;
                 op = strtok_r(NULL, ",", &sv))
            for (int rep = 0; rep < cfg.repeat && complete; rep++) {
                r->pt.index = index++;
                r->pt.repeat = rep;
                r->pt.npoints = npoints;
                r->pt.jobs = (int)cfg.jobs.v[ij];
                r->pt.bs = (eng->flags & QNB_ENG_USES_BS) ? cfg.bs.v[ib] : 0;
                snprintf(r->pt.op, sizeof r->pt.op, "%s", op);
                r->ops_total = r->bytes_total = 0;
                r->elapsed_s = 0;
                r->point_complete = 0;
                qnb_mpi_barrier(); /* synchronised start of the point on every rank */
                if (qnb_run_point(r, &jr))
                    complete = 0;
                if (qnb_stop_signal)
                    complete = 0;
                struct qnb_mpi_point agg = {r->ops_total, r->bytes_total, r->elapsed_s,
                                            r->point_complete};
                qnb_mpi_aggregate(&agg);
                qj_obj_begin(&ja);
                qj_kint(&ja, "point", r->pt.index);
                qj_kint(&ja, "ranks", ranks);
                qj_kbool(&ja, "complete", agg.complete);
                qj_kint(&ja, "ops", (long long)agg.ops);
                qj_kint(&ja, "bytes", (long long)agg.bytes);
                qj_knum(&ja, "elapsed_s", agg.elapsed_s);
                qj_knum(&ja, "throughput_ops_s", agg.elapsed_s > 0 ? agg.ops / agg.elapsed_s : 0.0);
                qj_knum(&ja, "throughput_B_s", agg.elapsed_s > 0 ? agg.bytes / agg.elapsed_s : 0.0);
                qj_obj_end(&ja);
                /* every rank stops the sweep when any rank failed (collectives stay matched) */
                complete = !qnb_mpi_any(!complete);
            }
        }
    }
    qj_arr_end(&jr);
    fclose(rf);
    qj_arr_end(&ja);
    fclose(af);
    if (eng->run_teardown)
        eng->run_teardown(r);
    qnb_rundir_cleanup(r);
    if (qnb_stop_signal && r->nerrors == 0 && standalone < 0)
        qnb_run_error(r, "interrupted by signal %d", (int)qnb_stop_signal);

    if (qnb_mpi_rank() != 0) { /* only rank 0 prints the document */
        free(rbuf);
        free(abuf);
        return (complete && r->nerrors == 0) ? 0 : 1;
    }
    struct qnb_json j;
    qj_init(&j, stdout);
    qj_obj_begin(&j);
    qj_kstr(&j, "schema", "qnbench");
    qj_kint(&j, "schema_version", QNB_SCHEMA_VERSION);
    qj_kstr(&j, "tool_version", QNB_VERSION);
    qj_kstr(&j, "timestamp", stamp);
    qj_kbool(&j, "complete", complete && r->nerrors == 0);
    qj_key(&j, "host");
    qnb_host_json(&j);
    qj_kstr(&j, "engine", eng->name);
    qj_key(&j, "options");
    qnb_options_json(&cfg, &j);
    qj_key(&j, "results");
    qj_raw(&j, rbuf);
    if (ranks > 1) {
        qj_key(&j, "mpi");
        qj_obj_begin(&j);
        qj_kint(&j, "ranks", ranks);
        qj_key(&j, "aggregate");
        qj_raw(&j, abuf);
        qj_obj_end(&j);
    }
    qj_key(&j, "errors");
    qj_arr_begin(&j);
    for (int i = 0; i < r->nerrors; i++)
        qj_str(&j, r->errors[i]);
    qj_arr_end(&j);
    qj_obj_end(&j);
    fputc('\n', stdout);
    free(rbuf);
    free(abuf);
    if (fflush(stdout) != 0)
        return 1;
    return (complete && r->nerrors == 0) ? 0 : 1;
}
