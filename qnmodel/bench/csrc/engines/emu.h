/* Emulated devices with a virtual FCFS schedule (shared by the emu and stripe engines). */
#ifndef QNB_EMU_H
#define QNB_EMU_H
#include "../qnbench.h"

struct qnb_emu_dev {
    pthread_mutex_t m;
    int64_t *free_at_ns; /* per server: the instant it finishes its last accepted request */
    /* every (start, finish) of the point, to intersect with the measured window exactly */
    int64_t *iv;
    size_t niv, cap;
    uint64_t dropped; /* intervals not logged (log full): utilisation then underestimated */
    char pad[64];
};

struct qnb_emu_set {
    int k;
    int servers; /* identical servers per device sharing one FCFS queue (--dev-servers) */
    int nolog;   /* keep no (start, finish) log: a standalone block server reports nothing */
    struct qnb_emu_dev *dev;
};

#define QNB_EMU_MAX_SERVERS 4096
/* 2 with a message when --dev-servers is out of 1..QNB_EMU_MAX_SERVERS, else 0 */
int qnb_emu_check_servers(const struct qnb_config *c, char *err, size_t len);
/* the check of every engine with emulated devices: --dev-servers, and the mean service time of
 * the largest request (max_bytes, `what` names it) within QNB_MAX_SECONDS; 2 with a message */
int qnb_emu_check(const struct qnb_config *c, long long max_bytes, const char *what, char *err,
                  size_t len);
/* k devices with `servers` servers each (0 on success, -1 out of memory) */
int qnb_emu_init(struct qnb_emu_set *s, int k, int servers);
void qnb_emu_destroy(struct qnb_emu_set *s);
/* service time in ns of a request of `bytes` bytes: a + B/r, or exponential with that mean */
double qnb_emu_mean_service_s(const struct qnb_config *c, uint64_t bytes);
int64_t qnb_emu_service_ns(const struct qnb_config *c, uint64_t bytes, struct qnb_rng *rng);
/* queue a request on device d, arriving at `arrival`; returns its finish instant. FCFS: the
 * request starts on the server that frees first, at max(arrival, that instant). */
int64_t qnb_emu_reserve(struct qnb_emu_set *s, int d, int64_t arrival, int64_t service_ns);
/* device_busy_s (server-seconds), device_ops, utilization (busy / (servers x window), per
 * server) and service_s_mean over the window [t0, t1] (ns) */
void qnb_emu_report(const struct qnb_emu_set *s, int64_t t0, int64_t t1, struct qnb_json *j);
#endif
