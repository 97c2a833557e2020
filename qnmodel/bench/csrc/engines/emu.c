/* emu engine: K emulated devices, each with m identical servers (--dev-servers, default 1)
 * behind one first-come-first-served queue, a request of B bytes taking a + B/r seconds (or an
 * exponential time with that mean): an M/M/m (or M/D/m) station per device.
 *
 * The device keeps a virtual schedule: a request takes the server that frees first,
 * start = max(arrival, that server free), finish = start + service. The client sleeps until `finish` with clock_nanosleep(TIMER_ABSTIME) and a short spin
 * (qnb_sleep_until_ns), so a late wake-up delays only that client's next request, never the
 * device's busy time: the service times are exact by construction.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

int qnb_emu_init(struct qnb_emu_set *s, int k, int servers)
{
    s->k = k;
    s->servers = servers < 1 ? 1 : servers;
    s->dev = calloc((size_t)k, sizeof *s->dev);
    if (!s->dev)
        return -1;
    for (int i = 0; i < k; i++) {
        pthread_mutex_init(&s->dev[i].m, NULL);
        s->dev[i].free_at_ns = calloc((size_t)s->servers, sizeof(int64_t));
        if (!s->dev[i].free_at_ns) {
            s->k = i + 1;
            qnb_emu_destroy(s);
            return -1;
        }
    }
    return 0;
}

void qnb_emu_destroy(struct qnb_emu_set *s)
{
    if (!s->dev)
        return;
    for (int i = 0; i < s->k; i++) {
        pthread_mutex_destroy(&s->dev[i].m);
        free(s->dev[i].iv);
        free(s->dev[i].free_at_ns);
    }
    free(s->dev);
    s->dev = NULL;
}

double qnb_emu_mean_service_s(const struct qnb_config *c, uint64_t bytes)
{
    return c->dev_latency + (c->dev_rate > 0 ? (double)bytes / c->dev_rate : 0.0);
}

int64_t qnb_emu_service_ns(const struct qnb_config *c, uint64_t bytes, struct qnb_rng *rng)
{
    double s = qnb_emu_mean_service_s(c, bytes);
    if (strcmp(c->dev_dist, "exp") == 0)
        s *= -log(qnb_rng_uniform(rng));
    return qnb_ns_of(s);
}

int qnb_emu_check(const struct qnb_config *c, long long max_bytes, const char *what, char *err,
                  size_t len)
{
    if (qnb_emu_check_servers(c, err, len))
        return 2;
    double s = qnb_emu_mean_service_s(c, (uint64_t)max_bytes);
    if (!(s <= QNB_MAX_SECONDS)) {
        snprintf(err, len,
                 "%s of %lld bytes takes --dev-latency %.9g s + bytes / --dev-rate %.9g B/s = "
                 "%.9g s on an emulated device, above the limit of %g s for any time in qnbench: "
                 "give a smaller --bs or a larger --dev-rate",
                 what, max_bytes, c->dev_latency, c->dev_rate, s, QNB_MAX_SECONDS);
        return 2;
    }
    return 0;
}

/* Each device keeps every (start, finish) of the point, up to a budget shared by the set's
 * devices: QNB_EMU_LOG_TOTAL intervals (128 MiB) in all, at most 2^22 per device. */
#define QNB_EMU_LOG_TOTAL ((size_t)1 << 23)
static size_t log_cap(const struct qnb_emu_set *s)
{
    size_t cap = QNB_EMU_LOG_TOTAL / (size_t)(s->k > 0 ? s->k : 1);
    return cap > ((size_t)1 << 22) ? (size_t)1 << 22 : cap;
}

int64_t qnb_emu_reserve(struct qnb_emu_set *s, int d, int64_t arrival, int64_t service_ns)
{
    struct qnb_emu_dev *dv = &s->dev[d];
    pthread_mutex_lock(&dv->m);
    int first = 0; /* the server that frees first (FCFS over the shared queue) */
    for (int i = 1; i < s->servers; i++)
        if (dv->free_at_ns[i] < dv->free_at_ns[first])
            first = i;
    int64_t start = arrival > dv->free_at_ns[first] ? arrival : dv->free_at_ns[first];
    int64_t finish = qnb_ns_add(start, service_ns);
    dv->free_at_ns[first] = finish;
    if (s->nolog) {
        pthread_mutex_unlock(&dv->m);
        return finish;
    }
    size_t max = log_cap(s);
    if (dv->niv == dv->cap && dv->cap < max) {
        size_t cap = dv->cap ? 2 * dv->cap : 1024;
        if (cap > max)
            cap = max;
        int64_t *iv = realloc(dv->iv, cap * 2 * sizeof *iv);
        if (iv) {
            dv->iv = iv;
            dv->cap = cap;
        }
    }
    if (dv->niv < dv->cap) {
        dv->iv[2 * dv->niv] = start;
        dv->iv[2 * dv->niv + 1] = finish;
        dv->niv++;
    } else {
        dv->dropped++;
    }
    pthread_mutex_unlock(&dv->m);
    return finish;
}

void qnb_emu_report(const struct qnb_emu_set *s, int64_t t0, int64_t t1, struct qnb_json *j)
{
    double elapsed = (double)(t1 - t0);
    double *busy = calloc((size_t)s->k, sizeof *busy);
    double svc_sum = 0;
    long long svc_n = 0;
    long long *ops = calloc((size_t)s->k, sizeof *ops);
    for (int i = 0; busy && ops && i < s->k; i++) {
        const struct qnb_emu_dev *dv = &s->dev[i];
        for (size_t n = 0; n < dv->niv; n++) {
            int64_t a = dv->iv[2 * n], b = dv->iv[2 * n + 1];
            if (b > t0 && b <= t1) {
                ops[i]++;
                svc_n++;
                svc_sum += (double)(b - a);
            }
            if (a < t0)
                a = t0;
            if (b > t1)
                b = t1;
            if (b > a)
                busy[i] += (double)(b - a);
        }
    }
    qj_key(j, "device_busy_s");
    qj_arr_begin(j);
    for (int i = 0; i < s->k; i++)
        qj_num(j, busy ? busy[i] / 1e9 : 0.0);
    qj_arr_end(j);
    qj_key(j, "device_ops");
    qj_arr_begin(j);
    for (int i = 0; i < s->k; i++)
        qj_int(j, ops ? ops[i] : 0);
    qj_arr_end(j);
    qj_key(j, "utilization");
    qj_arr_begin(j);
    for (int i = 0; i < s->k; i++)
        qj_num(j, busy && elapsed > 0 ? busy[i] / (elapsed * s->servers) : 0.0);
    qj_arr_end(j);
    qj_kint(j, "servers", s->servers);
    qj_knum(j, "service_s_mean", svc_n ? svc_sum / (double)svc_n / 1e9 : 0.0);
    uint64_t dropped = 0;
    for (int i = 0; i < s->k; i++)
        dropped += s->dev[i].dropped;
    if (dropped) {
        qj_kint(j, "intervals_dropped", (long long)dropped);
        qnb_diag("emu: %llu device intervals were not logged (more than %zu requests per "
                 "device in one point): device_busy_s, device_ops and utilization are "
                 "underestimated; use a shorter --runtime",
                 (unsigned long long)dropped, log_cap(s));
    }
    free(busy);
    free(ops);
}

struct emu_point {
    struct qnb_emu_set set;
    _Atomic uint64_t rr;
    int roundrobin;
    int64_t spin_ns;
};

int qnb_emu_check_servers(const struct qnb_config *c, char *err, size_t len)
{
    if (c->dev_servers < 1 || c->dev_servers > QNB_EMU_MAX_SERVERS) {
        snprintf(err, len, "--dev-servers %lld must be between 1 and %d", c->dev_servers,
                 QNB_EMU_MAX_SERVERS);
        return 2;
    }
    return 0;
}

static int emu_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->devices < 1 || c->devices > 4096) {
        snprintf(err, len, "--devices %lld must be between 1 and 4096", c->devices);
        return 2;
    }
    if (c->dev_latency <= 0 && c->dev_rate <= 0) {
        snprintf(err, len, "emu: give --dev-latency > 0 or --dev-rate > 0 (both are zero)");
        return 2;
    }
    long long bs = 0;
    for (int i = 0; i < c->bs.n; i++)
        bs = c->bs.v[i] > bs ? c->bs.v[i] : bs;
    return qnb_emu_check(c, bs, "a request (--bs)", err, len);
}

static int emu_setup(struct qnb_run *r)
{
    struct emu_point *p = calloc(1, sizeof *p);
    if (!p || qnb_emu_init(&p->set, (int)r->cfg->devices, (int)r->cfg->dev_servers)) {
        free(p);
        qnb_run_error(r, "emu: out of memory");
        return -1;
    }
    p->roundrobin = strcmp(r->cfg->dev_select, "roundrobin") == 0;
    p->spin_ns = qnb_ns_of(r->cfg->spin);
    r->epriv = p;
    return 0;
}

static int emu_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct qnb_run *r = w->run;
    struct emu_point *p = r->epriv;
    int k = p->set.k;
    int d = p->roundrobin ? (int)(atomic_fetch_add(&p->rr, 1) % (uint64_t)k)
                          : (int)qnb_rng_below(&w->rng, (uint64_t)k);
    uint64_t b = (uint64_t)r->pt.bs;
    int64_t svc = qnb_emu_service_ns(r->cfg, b, &w->rng);
    /* open loop: the request reaches the device at its scheduled arrival (the client is only
     * the queue in front of it), so a late wake-up of the client never delays the device */
    int64_t arrival = w->ol_sched_ns ? w->ol_sched_ns : qnb_now_ns();
    int64_t finish = qnb_emu_reserve(&p->set, d, arrival, svc);
    /* a stop wakes the client at once: the request is not complete and not counted */
    if (qnb_run_sleep(r, finish, p->spin_ns))
        return 1;
    if (w->counting) {
        double late = (double)(qnb_now_ns() - finish);
        w->stat[0] += late;
        w->stat[1] += 1;
        if (late > w->stat[2])
            w->stat[2] = late;
    }
    *bytes = b;
    return 0;
}

static void emu_report(struct qnb_run *r, struct qnb_json *j)
{
    struct emu_point *p = r->epriv;
    const struct qnb_config *c = r->cfg;
    qj_knum(j, "service_s", qnb_emu_mean_service_s(c, (uint64_t)r->pt.bs));
    qnb_emu_report(&p->set, r->t_start_ns, atomic_load(&r->t_stop_ns), j);
    double late = 0, n = 0, late_max = 0;
    for (int i = 0; i < r->pt.jobs; i++) {
        late += r->workers[i].stat[0];
        n += r->workers[i].stat[1];
        if (r->workers[i].stat[2] > late_max)
            late_max = r->workers[i].stat[2];
    }
    qj_knum(j, "wakeup_late_s_mean", n > 0 ? late / n / 1e9 : 0.0);
    qj_knum(j, "wakeup_late_s_max", late_max / 1e9);
}

static void emu_teardown(struct qnb_run *r)
{
    struct emu_point *p = r->epriv;
    if (p) {
        qnb_emu_destroy(&p->set);
        free(p);
    }
    r->epriv = NULL;
}

const struct qnb_engine qnb_engine_emu = {
    .name = "emu",
    .help = "emulated devices: a + B/r seconds per request, one at a time per device",
    .flags = QNB_ENG_USES_BS,
    .check = emu_check,
    .point_setup = emu_setup,
    .op = emu_op,
    .point_report = emu_report,
    .point_teardown = emu_teardown,
};
