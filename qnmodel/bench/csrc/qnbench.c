/* qnbench main(): parse and check the options, select the engine, run the sweep (sweep.c), print
 * one JSON document (document.c). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sweep.h"

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
    {
        char err[512] = "";
        if (qnb_workload_check(c, eng, err, sizeof err)) {
            qnb_diag("%s", err);
            return 2;
        }
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
    char nserr[512];
    if (qnb_enter_netns(&cfg, nserr, sizeof nserr)) {
        qnb_diag("%s", nserr);
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

    struct qnb_sweep sw;
    if (qnb_sweep_open(&sw)) {
        qnb_diag("out of memory");
        return 1;
    }
    /* a standalone role (tcp server) serves instead of measuring; its document has no results */
    int standalone = eng->standalone ? eng->standalone(r) : -1;
    if (standalone < 0)
        qnb_sweep_run(&sw, r);
    else
        sw.complete = standalone == 0;
    qnb_sweep_close(&sw);
    if (eng->run_teardown)
        eng->run_teardown(r);
    qnb_rundir_cleanup(r);
    if (qnb_stop_signal && r->nerrors == 0 && standalone < 0)
        qnb_run_error(r, "interrupted by signal %d", (int)qnb_stop_signal);

    rc = (sw.complete && r->nerrors == 0) ? 0 : 1;
    /* only rank 0 prints the document */
    if (qnb_mpi_rank() == 0 && qnb_document_write(stdout, stamp, r, &sw))
        rc = 1;
    qnb_sweep_free(&sw);
    return rc;
}
