/* The TCP block server (blockserver.c) and its client side, used by the tcp and stripe engines. */
#ifndef QNB_BLOCKSERVER_H
#define QNB_BLOCKSERVER_H
#include "../qnbench.h"
#include "emu.h"

#define QNB_TCP_HDR 16 /* bytes of a request header and of a write acknowledgement */

struct tcp_server {
    int lfd;
    int port;
    int file_fd; /* --serve file */
    long long file_size;
    pthread_t accept_tid;
    _Atomic int stop;
    _Atomic int nconn;
    /* --serve emu: one emulated device (--dev-*) that every connection's requests queue at */
    int emu;
    struct qnb_emu_set dev;
    const struct qnb_config *cfg;
    int64_t spin_ns;
    _Atomic uint64_t conn_seq; /* seeds each connection's service-time generator */
    uint64_t seed_base;        /* --seed, this server's port and instance (see serve_conn) */
};

/* listen on --host:port (0: ephemeral), serve from memory, --serve file or --serve emu, in
 * threads; `log`: keep the emulated device's intervals for qnb_emu_report */
int qnb_tcp_server_start(struct qnb_run *r, struct tcp_server *srv, int port, int log);
void qnb_tcp_server_stop(struct tcp_server *srv);
/* connected socket with TCP_NODELAY, or -1 with a message in err */
int qnb_tcp_connect(const char *host, int port, char *err, size_t errlen);
/* one request: read `size` bytes, or write `payload` of `size` bytes (then a 16-byte ack) */
int qnb_tcp_send_request(int fd, int write, const unsigned char *payload, uint64_t size);
int qnb_tcp_recv_reply(int fd, int write, unsigned char *buf, uint64_t size);
#endif
