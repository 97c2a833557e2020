/* tcp engine: request/response over TCP, one connection per job, to the block server of
 * blockserver.c (protocol described there).
 *
 * --tcp-role self runs the server as threads of this process on loopback (an ephemeral port by
 * default), so one command measures the loopback path; server and client split it over two hosts.
 * With --serve emu the server's requests queue at one emulated device (blockserver.c); with
 * --tcp-role self the point's engine_stats then hold the device's own busy time, operations,
 * utilisation and mean service (emu.c), beside the clients' response times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockserver.h"

#define HDR QNB_TCP_HDR

struct tcp_client {
    int fd;
    unsigned char *buf;
    int write;
};

static int tcp_check(const struct qnb_config *c, char *err, size_t len)
{
    if (strcmp(c->serve, "file") == 0 && strcmp(c->tcp_role, "client") != 0 && !c->dir[0]) {
        snprintf(err, len, "tcp: --serve file needs --dir (the served file is created there)");
        return 2;
    }
    if (strcmp(c->tcp_role, "client") == 0 && c->port <= 0) {
        snprintf(err, len, "tcp: --tcp-role client needs --port of the server");
        return 2;
    }
    if (c->port < 0 || c->port > 65535) {
        snprintf(err, len, "tcp: --port %lld is not a TCP port", c->port);
        return 2;
    }
    long long bs = 0;
    for (int i = 0; i < c->bs.n; i++)
        bs = c->bs.v[i] > bs ? c->bs.v[i] : bs;
    if (strcmp(c->tcp_role, "server") != 0 &&
        qnb_check_memory(c, "tcp: the request buffers (--bs)", (long double)bs + HDR, err, len))
        return 2;
    if (strcmp(c->serve, "emu") == 0 && strcmp(c->tcp_role, "client") != 0) {
        if (c->dev_latency <= 0 && c->dev_rate <= 0) {
            snprintf(err, len, "tcp: --serve emu needs --dev-latency > 0 or --dev-rate > 0 (both "
                               "are zero)");
            return 2;
        }
        /* a server alone serves any size a client asks for; it refuses a request beyond the
         * time limit when it comes (blockserver.c) */
        return qnb_emu_check(c, strcmp(c->tcp_role, "server") == 0 ? 0 : bs,
                             "tcp: a request (--bs)", err, len);
    }
    return 0;
}

/* --tcp-role server: serve until SIGINT/SIGTERM; no measurement (the document has no results) */
static int tcp_standalone(struct qnb_run *r)
{
    if (strcmp(r->cfg->tcp_role, "server") != 0)
        return -1;
    if (r->cfg->realtime) { /* the connection threads switch to SCHED_FIFO: say if they cannot */
        int e = qnb_thread_realtime();
        if (e)
            qnb_diag("tcp server: --realtime: cannot switch to SCHED_FIFO: %s (needs root or "
                     "CAP_SYS_NICE); serving without it, so replies may leave late on a loaded "
                     "machine",
                     strerror(e));
    }
    struct tcp_server *srv = calloc(1, sizeof *srv);
    if (!srv || qnb_tcp_server_start(r, srv, (int)r->cfg->port, 0)) {
        if (srv)
            qnb_tcp_server_stop(srv);
        free(srv);
        return 1;
    }
    qnb_diag("tcp server listening on %s port %d (stop with SIGINT or SIGTERM)", r->cfg->host,
             srv->port);
    while (!qnb_stop_signal)
        pause();
    qnb_tcp_server_stop(srv);
    free(srv);
    return 0;
}

static int tcp_setup(struct qnb_run *r)
{
    if (strcmp(r->cfg->tcp_role, "self") != 0 || r->erun)
        return 0;
    struct tcp_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        qnb_run_error(r, "tcp: out of memory");
        return -1;
    }
    if (qnb_tcp_server_start(r, srv, (int)r->cfg->port, 1)) {
        qnb_tcp_server_stop(srv);
        free(srv);
        return -1;
    }
    r->erun = srv;
    return 0;
}

static int tcp_worker_init(struct qnb_worker *w)
{
    struct qnb_run *r = w->run;
    const struct qnb_config *c = r->cfg;
    struct tcp_client *cl = calloc(1, sizeof *cl);
    char err[512];
    if (!cl) {
        qnb_worker_error(w, "tcp: out of memory");
        return -1;
    }
    w->priv = cl;
    cl->fd = -1;
    cl->write = strstr(c->rw, "write") != NULL;
    cl->buf = malloc((size_t)r->pt.bs + HDR);
    if (!cl->buf) {
        qnb_worker_error(w, "tcp: out of memory");
        return -1;
    }
    memset(cl->buf, 0xa5, (size_t)r->pt.bs + HDR);
    int port = r->erun ? ((struct tcp_server *)r->erun)->port : (int)c->port;
    cl->fd = qnb_tcp_connect(c->host, port, err, sizeof err);
    if (cl->fd < 0) {
        qnb_worker_error(w, "%s", err);
        return -1;
    }
    return 0;
}

static int tcp_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct tcp_client *cl = w->priv;
    uint64_t size = (uint64_t)w->run->pt.bs;
    if (qnb_tcp_send_request(cl->fd, cl->write, cl->buf, size) ||
        qnb_tcp_recv_reply(cl->fd, cl->write, cl->buf, size)) {
        int e = errno;
        qnb_worker_error(w, "tcp: request of %llu bytes failed: %s (%s)",
                         (unsigned long long)size, strerror(e), qnb_errno_name(e));
        return -1;
    }
    *bytes = size;
    return 0;
}

static void tcp_cleanup(struct qnb_worker *w)
{
    struct tcp_client *cl = w->priv;
    if (!cl)
        return;
    if (cl->fd >= 0)
        close(cl->fd);
    free(cl->buf);
    free(cl);
    w->priv = NULL;
}

static void tcp_report(struct qnb_run *r, struct qnb_json *j)
{
    qj_kint(j, "connections", r->pt.jobs);
    qj_kint(j, "port", r->erun ? ((struct tcp_server *)r->erun)->port : r->cfg->port);
    struct tcp_server *srv = r->erun;
    if (srv && srv->emu) {
        qj_knum(j, "service_s", qnb_emu_mean_service_s(r->cfg, (uint64_t)r->pt.bs));
        qnb_emu_report(&srv->dev, r->t_start_ns, atomic_load(&r->t_stop_ns), j);
    }
}

static void tcp_run_teardown(struct qnb_run *r)
{
    if (r->erun) {
        qnb_tcp_server_stop(r->erun);
        free(r->erun);
        r->erun = NULL;
    }
}

const struct qnb_engine qnb_engine_tcp = {
    .name = "tcp",
    .help = "request/response over TCP (loopback server thread, or client/server roles)",
    .flags = QNB_ENG_USES_BS,
    .check = tcp_check,
    .point_setup = tcp_setup,
    .worker_init = tcp_worker_init,
    .op = tcp_op,
    .worker_cleanup = tcp_cleanup,
    .point_report = tcp_report,
    .run_teardown = tcp_run_teardown,
    .standalone = tcp_standalone,
};
