/* The block server of the tcp engine and of the stripe engine's TCP members, and the client side
 * of its protocol.
 *
 * Protocol: every request starts with a 16-byte header: magic "QNB1", operation (1 read,
 * 2 write) and the payload size, big-endian. read: the server replies with `size` payload bytes
 * (from memory, or pread from a file it created in --dir with --serve file); write: the client
 * sends `size` payload bytes after the header and the server replies with a 16-byte
 * acknowledgement. The server accepts connections in one thread and serves each in its own.
 *
 * --serve emu: every request, once received whole (the header of a read; header and payload of
 * a write), queues at ONE emulated device of the server (emu.c: --dev-latency a, --dev-rate r,
 * --dev-dist, --dev-servers m), shared by all connections, first come first served; the reply
 * leaves when the device has served it. The server's disk is then a real FCFS station with the
 * configured service law, and the network path around it is real TCP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "blockserver.h"

#define HDR QNB_TCP_HDR
#define MAGIC 0x514e4231u /* "QNB1" */
#define SRV_BUF (1 << 20)

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Every socket of the protocol blocks for at most STOP_POLL_MS per call (SO_RCVTIMEO,
 * SO_SNDTIMEO), so a client or server thread waiting for a peer notices a stop signal within
 * that time; no extra system call is made while data flows. */
#define STOP_POLL_MS 100

static void stop_aware(int fd)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = STOP_POLL_MS * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* a call that returned n < 0: retry (1) while no stop signal arrived, else 0 (errno EINTR
 * for a stop) */
static int retry(ssize_t n)
{
    if (n >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
        return 0;
    if (qnb_stop_signal) {
        errno = EINTR;
        return 0;
    }
    return 1;
}

static int send_all(int fd, const void *buf, size_t len, int more)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
        if (retry(n))
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0 ok, 1 orderly end of stream before the first byte, -1 error */
static int recv_all(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(fd, p + got, len - got, 0);
        if (retry(n))
            continue;
        if (n == 0) {
            if (got == 0)
                return 1;
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

struct conn_arg {
    struct tcp_server *srv;
    int fd;
};

/* --serve emu: queue a request of `size` bytes at the server's device, arriving now, and wait
 * until the device has served it. Returns -1 (the connection is closed) for a request whose
 * service would take longer than QNB_MAX_SECONDS (a peer's header asks for any size up to
 * 2^64 - 1 bytes: it must not hold the shared device for years) and when a stop signal
 * interrupts the wait. */
static int device_serve(struct tcp_server *srv, struct qnb_rng *rng, uint64_t size)
{
    double mean = qnb_emu_mean_service_s(srv->cfg, size);
    if (!(mean <= QNB_MAX_SECONDS)) {
        qnb_diag("tcp server: a request of %llu bytes would take %.9g s on its emulated device, "
                 "above the limit of %g s: connection closed",
                 (unsigned long long)size, mean, QNB_MAX_SECONDS);
        return -1;
    }
    int64_t svc = qnb_emu_service_ns(srv->cfg, size, rng);
    int64_t finish = qnb_emu_reserve(&srv->dev, 0, qnb_now_ns(), svc);
    return qnb_sleep_until_ns(finish, srv->spin_ns) ? -1 : 0;
}

static void *serve_conn(void *arg)
{
    struct conn_arg *ca = arg;
    struct tcp_server *srv = ca->srv;
    int fd = ca->fd;
    free(ca);
    unsigned char *buf = malloc(SRV_BUF);
    unsigned char hdr[HDR];
    long long foff = 0;
    struct qnb_rng rng;
    /* precise device wake-ups: no timer slack, and SCHED_FIFO with --realtime like the clients
     * (a normal thread on a loaded machine wakes up to milliseconds late, and every late
     * wake-up adds to its client's response time) */
    qnb_thread_timer_slack();
    if (srv->cfg->realtime)
        qnb_thread_realtime();
    if (srv->emu)
        qnb_rng_seed(&rng, srv->seed_base + atomic_fetch_add(&srv->conn_seq, 1) + 1);
    if (!buf)
        goto out;
    memset(buf, 0x5a, SRV_BUF);
    for (;;) {
        if (recv_all(fd, hdr, HDR) != 0)
            break;
        if (get32(hdr) != MAGIC)
            break;
        uint32_t op = get32(hdr + 4);
        uint64_t size = ((uint64_t)get32(hdr + 8) << 32) | get32(hdr + 12);
        if (op == 1) {
            if (srv->emu && device_serve(srv, &rng, size))
                break;
            uint64_t left = size;
            while (left > 0) {
                size_t chunk = left < SRV_BUF ? (size_t)left : SRV_BUF;
                if (srv->file_fd >= 0) {
                    if (foff + (long long)chunk > srv->file_size)
                        foff = 0;
                    if (pread(srv->file_fd, buf, chunk, foff) != (ssize_t)chunk)
                        goto out;
                    foff += (long long)chunk;
                }
                if (send_all(fd, buf, chunk, left > chunk))
                    goto out;
                left -= chunk;
            }
        } else if (op == 2) {
            uint64_t left = size;
            while (left > 0) {
                size_t chunk = left < SRV_BUF ? (size_t)left : SRV_BUF;
                if (recv_all(fd, buf, chunk) != 0)
                    goto out;
                left -= chunk;
            }
            if (srv->emu && device_serve(srv, &rng, size))
                break;
            if (send_all(fd, hdr, HDR, 0))
                break;
        } else {
            break;
        }
    }
out:
    free(buf);
    close(fd);
    atomic_fetch_sub(&srv->nconn, 1);
    return NULL;
}

static void *accept_loop(void *arg)
{
    struct tcp_server *srv = arg;
    while (!atomic_load(&srv->stop)) {
        int fd = accept(srv->lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        stop_aware(fd);
        struct conn_arg *ca = malloc(sizeof *ca);
        pthread_t t;
        if (!ca) {
            close(fd);
            continue;
        }
        ca->srv = srv;
        ca->fd = fd;
        atomic_fetch_add(&srv->nconn, 1);
        if (pthread_create(&t, NULL, serve_conn, ca) != 0) {
            atomic_fetch_sub(&srv->nconn, 1);
            close(fd);
            free(ca);
            continue;
        }
        pthread_detach(t);
    }
    return NULL;
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len,
                   char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int e = getaddrinfo(host, ps, &hints, &res);
    if (e != 0 || !res) {
        snprintf(err, errlen, "tcp: cannot resolve --host '%s': %s", host, gai_strerror(e));
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* servers started by this process (the K loopback members of stripe --tcp-role self) */
static _Atomic uint64_t server_instances;

int qnb_tcp_server_start(struct qnb_run *r, struct tcp_server *srv, int port, int log)
{
    const struct qnb_config *c = r->cfg;
    char err[512];
    struct sockaddr_storage ss;
    socklen_t sl;
    srv->file_fd = -1;
    srv->lfd = -1;
    srv->cfg = c;
    if (strcmp(c->serve, "emu") == 0) {
        srv->dev.nolog = !log;
        if (qnb_emu_init(&srv->dev, 1, (int)c->dev_servers)) {
            qnb_run_error(r, "tcp: out of memory");
            return -1;
        }
        srv->emu = 1;
        srv->spin_ns = qnb_ns_of(c->spin);
        /* Independent service times on every server: the same connection index on two
         * servers (a striping client's connections to its K members) must not draw the same
         * sequence, or the members of a stripe would be perfectly correlated. The seed mixes
         * --seed, the requested port (servers in separate processes listen on different
         * ports, or are given different --seed) and this process's server count. */
        uint64_t inst = atomic_fetch_add(&server_instances, 1);
        srv->seed_base = (uint64_t)c->seed * 0x9E3779B97F4A7C15ull ^
                         ((uint64_t)port << 32) ^ (inst * 0xBF58476D1CE4E5B9ull);
    }
    if (strcmp(c->serve, "file") == 0) {
        if (qnb_space_check(r, 1, c->size, err, sizeof err) ||
            qnb_file_layout(r, "serve.dat", c->size, 0, err, sizeof err)) {
            qnb_run_error(r, "tcp: %s", err);
            return -1;
        }
        srv->file_fd = qnb_file_open(r, "serve.dat", O_RDONLY);
        srv->file_size = c->size;
        if (srv->file_fd < 0) {
            qnb_run_error(r, "tcp: cannot open the served file: %s", strerror(errno));
            return -1;
        }
    }
    if (resolve(c->host, port, &ss, &sl, err, sizeof err)) {
        qnb_run_error(r, "%s", err);
        return -1;
    }
    srv->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (srv->lfd >= 0)
        setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (srv->lfd < 0 || bind(srv->lfd, (struct sockaddr *)&ss, sl) != 0 ||
        listen(srv->lfd, 1024) != 0) {
        int e = errno;
        qnb_run_error(r, "tcp: cannot listen on %s port %d: %s (%s)", c->host, port,
                      strerror(e), qnb_errno_name(e));
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    getsockname(srv->lfd, (struct sockaddr *)&bound, &bl);
    srv->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                   : ((struct sockaddr_in *)&bound)->sin_port);
    if (pthread_create(&srv->accept_tid, NULL, accept_loop, srv) != 0) {
        qnb_run_error(r, "tcp: cannot start the server thread");
        return -1;
    }
    return 0;
}

void qnb_tcp_server_stop(struct tcp_server *srv)
{
    atomic_store(&srv->stop, 1);
    if (srv->lfd >= 0) {
        shutdown(srv->lfd, SHUT_RDWR);
        pthread_join(srv->accept_tid, NULL);
        close(srv->lfd);
        srv->lfd = -1;
    }
    /* connection threads end when their clients close (or, after a stop signal, within
     * STOP_POLL_MS); wait up to 2 s for them, a stop signal included */
    for (int i = 0; i < 2000 && atomic_load(&srv->nconn) > 0; i++)
        qnb_pause_ns(1000000);
    if (srv->file_fd >= 0)
        close(srv->file_fd);
    srv->file_fd = -1;
    /* a connection thread still waiting on the device would use it: keep it then (the process
     * is ending; the threads' clients are gone or stuck) */
    if (srv->emu && atomic_load(&srv->nconn) == 0) {
        qnb_emu_destroy(&srv->dev);
        srv->emu = 0;
    }
}

int qnb_tcp_connect(const char *host, int port, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (resolve(host, port, &ss, &sl, err, errlen))
        return -1;
    /* non-blocking connect, waited for in slices: an unreachable host (SYN retries for about
     * two minutes) does not hold a client past a stop signal */
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&ss, sl);
    if (rc != 0 && fd >= 0 && errno == EINPROGRESS) {
        for (;;) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int n = poll(&pf, 1, STOP_POLL_MS);
            if (n > 0) {
                int e = 0;
                socklen_t el = sizeof e;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
                    e = errno;
                rc = e ? -1 : 0;
                errno = e;
                break;
            }
            if (qnb_stop_signal) {
                errno = EINTR;
                break;
            }
            if (n < 0 && errno != EINTR)
                break;
        }
    }
    if (rc == 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
            rc = -1;
    }
    if (rc != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "tcp: connect to %s port %d: %s (%s)", host, port, strerror(e),
                 qnb_errno_name(e));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    stop_aware(fd);
    return fd;
}

int qnb_tcp_send_request(int fd, int write, const unsigned char *payload, uint64_t size)
{
    unsigned char hdr[HDR];
    put32(hdr, MAGIC);
    put32(hdr + 4, write ? 2u : 1u);
    put32(hdr + 8, (uint32_t)(size >> 32));
    put32(hdr + 12, (uint32_t)size);
    if (write)
        return (send_all(fd, hdr, HDR, 1) || send_all(fd, payload, size, 0)) ? -1 : 0;
    return send_all(fd, hdr, HDR, 0) ? -1 : 0;
}

int qnb_tcp_recv_reply(int fd, int write, unsigned char *buf, uint64_t size)
{
    unsigned char hdr[HDR];
    int rc = write ? recv_all(fd, hdr, HDR) : recv_all(fd, buf, size);
    if (rc == 1) /* the server closed the connection before replying: no errno of its own */
        errno = ECONNRESET;
    return rc != 0 ? -1 : 0;
}
