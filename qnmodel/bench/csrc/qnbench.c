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

/* SIGINT, SIGTERM: the run stops at once (every sleeping client wakes), prints the points
 * measured so far (complete: false) and exits with status 1 */
static void on_signal(int sig) { qnb_signal_stop(sig); }

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
    rc = qnb_check_config(&cfg, eng);
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
    qnb_signal_target(r);

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
