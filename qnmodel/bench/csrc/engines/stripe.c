/* stripe engine: user-space RAID0 / RAID5 over --members members (emulated devices or files).
 *
 * Layout: chunk (stripe unit) of --chunk bytes; RAID0 stripes K data chunks over K members;
 * RAID5 stripes K-1 data chunks plus one parity chunk, the parity rotating left-symmetrically
 * (stripe s keeps parity on member K-1 - s mod K, data chunk d on member (parity + 1 + d) mod K).
 * A request of bs bytes is split into chunk pieces. Reads touch only data members. RAID5 writes
 * that cover whole stripes compute the parity from the new data and write K chunks; partial-stripe
 * writes do read-modify-write: read the old data and old parity, new parity = old parity XOR old
 * data XOR new data, then write data and parity (two dependent phases).
 *
 * With emulated members the member requests of one phase are issued in parallel (each queued on
 * its device's virtual schedule, see emu.c) and the client waits for the last one before it
 * issues the next phase; with TCP
 * members (block servers reached over the network, as in a networked RAID built on an IP block
 * protocol) the requests of a phase are sent to all members first and the replies collected
 * afterwards, so the members work in parallel too; with file members the client performs them
 * one after the other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "blockserver.h"

#define MAXM 16

#define NLOCKS 256

struct stripe_point {
    struct qnb_emu_set set;
    int emu;
    /* file members: a stripe is updated by one client at a time (as a RAID5 driver does), so
     * concurrent partial writes cannot leave data and parity inconsistent */
    pthread_mutex_t lock[NLOCKS];
};

struct stripe_run {
    int laid_out;
    int nsrv; /* --member tcp --tcp-role self: K loopback servers of this process */
    struct tcp_server srv[MAXM];
};

struct stripe_worker {
    int fd[MAXM];
    int sock[MAXM];
    unsigned char *buf;    /* request data (bs) */
    unsigned char *old;    /* old data of a partial write (bs) */
    unsigned char *parity; /* chunk */
    unsigned char **ptrs;
    long long off;
};

/* per-worker statistics slots in w->stat */
#define ST_OPS(m) (m)
#define ST_BYTES(m) (MAXM + (m))
#define ST_RMW (2 * MAXM)
#define ST_FULL (2 * MAXM + 1)

static int stripe_check(const struct qnb_config *c, char *err, size_t len)
{
    int k = (int)c->members;
    if (k < 2 || k > MAXM) {
        snprintf(err, len, "stripe: --members %lld must be between 2 and %d", c->members, MAXM);
        return 2;
    }
    if (c->raid == 5 && k < 3) {
        snprintf(err, len, "stripe: RAID5 needs --members >= 3, got %d", k);
        return 2;
    }
    if (c->chunk < 512 || c->chunk > c->size || c->size % c->chunk != 0) {
        snprintf(err, len,
                 "stripe: --chunk %lld must be >= 512 and divide the member --size %lld", c->chunk,
                 c->size);
        return 2;
    }
    long long dchunks = c->raid == 5 ? k - 1 : k, total;
    if (qnb_mul_size(c->size, k, &total)) {
        snprintf(err, len,
                 "stripe: --members %d x --size %lld bytes exceed the largest byte count qnbench "
                 "keeps (%lld)",
                 k, c->size, (long long)INT64_MAX);
        return 2;
    }
    long long capacity = (c->size / c->chunk) * dchunks * c->chunk; /* <= total */
    long long bs_max = 0;
    for (int i = 0; i < c->bs.n; i++)
        bs_max = c->bs.v[i] > bs_max ? c->bs.v[i] : bs_max;
    /* buffers of a client: the request and its old data (bs each) and a parity chunk */
    if (qnb_check_memory(c, "stripe: the buffers (2 x --bs + --chunk)",
                         2.0L * (long double)bs_max + (long double)c->chunk, err, len))
        return 2;
    for (int i = 0; i < c->bs.n; i++)
        if (c->bs.v[i] > capacity) {
            snprintf(err, len, "stripe: --bs %lld exceeds the array capacity %lld", c->bs.v[i],
                     capacity);
            return 2;
        }
    if (strcmp(c->member, "file") == 0 && !c->dir[0]) {
        snprintf(err, len, "stripe: --member file needs --dir (member files are created there)");
        return 2;
    }
    if (strcmp(c->member, "tcp") == 0 && strcmp(c->tcp_role, "server") == 0) {
        snprintf(err, len, "stripe: --member tcp uses --tcp-role self (loopback servers) or "
                           "client (servers on --host, ports --port .. --port+members-1)");
        return 2;
    }
    if (strcmp(c->member, "tcp") == 0 && strcmp(c->tcp_role, "client") == 0 && c->port <= 0) {
        snprintf(err, len, "stripe: --member tcp --tcp-role client needs --port (first member)");
        return 2;
    }
    if (strcmp(c->member, "tcp") == 0 && strcmp(c->serve, "file") == 0) {
        snprintf(err, len, "stripe: --member tcp serves from memory or an emulated device "
                           "(--serve mem or emu), not --serve file");
        return 2;
    }
    if (strcmp(c->member, "emu") == 0 && c->dev_latency <= 0 && c->dev_rate <= 0) {
        snprintf(err, len, "stripe: emulated members need --dev-latency > 0 or --dev-rate > 0");
        return 2;
    }
    if (strcmp(c->member, "emu") == 0 ||
        (strcmp(c->member, "tcp") == 0 && strcmp(c->serve, "emu") == 0)) {
        if (strcmp(c->member, "tcp") == 0 && c->dev_latency <= 0 && c->dev_rate <= 0) {
            snprintf(err, len, "stripe: --serve emu needs --dev-latency > 0 or --dev-rate > 0");
            return 2;
        }
        /* a member request is one piece of a chunk at most */
        return qnb_emu_check(c, bs_max < c->chunk ? bs_max : c->chunk,
                             "stripe: a member request (a --chunk piece of --bs)", err, len);
    }
    return 0;
}

static int stripe_setup(struct qnb_run *r)
{
    const struct qnb_config *c = r->cfg;
    struct stripe_point *p = calloc(1, sizeof *p);
    if (!p) {
        qnb_run_error(r, "stripe: out of memory");
        return -1;
    }
    r->epriv = p;
    p->emu = strcmp(c->member, "emu") == 0;
    for (int i = 0; i < NLOCKS; i++)
        pthread_mutex_init(&p->lock[i], NULL);
    if (p->emu)
        return qnb_emu_init(&p->set, (int)c->members, (int)c->dev_servers);
    struct stripe_run *sr = r->erun;
    if (!sr) {
        sr = calloc(1, sizeof *sr);
        if (!sr)
            return -1;
        r->erun = sr;
    }
    if (strcmp(c->member, "tcp") == 0) {
        if (strcmp(c->tcp_role, "self") != 0)
            return 0;
        while (sr->nsrv < c->members) {
            if (qnb_tcp_server_start(r, &sr->srv[sr->nsrv], 0, 0))
                return -1;
            sr->nsrv++;
        }
        return 0;
    }
    char err[768];
    if (qnb_space_check(r, c->members - sr->laid_out, c->size, err, sizeof err)) {
        qnb_run_error(r, "stripe: %s", err);
        return -1;
    }
    while (sr->laid_out < c->members) {
        char name[32];
        snprintf(name, sizeof name, "member%d.dat", sr->laid_out);
        if (qnb_file_layout(r, name, c->size, 1, err, sizeof err)) {
            qnb_run_error(r, "stripe: %s", err);
            return -1;
        }
        sr->laid_out++;
    }
    return 0;
}

static int stripe_worker_init(struct qnb_worker *w)
{
    struct qnb_run *r = w->run;
    const struct qnb_config *c = r->cfg;
    struct stripe_point *p = r->epriv;
    struct stripe_worker *s = calloc(1, sizeof *s);
    if (!s) {
        qnb_worker_error(w, "stripe: out of memory");
        return -1;
    }
    w->priv = s;
    for (int m = 0; m < MAXM; m++)
        s->fd[m] = s->sock[m] = -1;
    s->buf = malloc((size_t)r->pt.bs);
    s->old = malloc((size_t)r->pt.bs);
    s->parity = malloc((size_t)c->chunk);
    s->ptrs = calloc((size_t)c->members, sizeof *s->ptrs);
    if (!s->buf || !s->old || !s->parity || !s->ptrs) {
        qnb_worker_error(w, "stripe: out of memory");
        return -1;
    }
    for (long long i = 0; i < r->pt.bs; i++)
        s->buf[i] = (unsigned char)(i * 17 + w->id);
    memset(s->old, 0, (size_t)r->pt.bs);
    if (strcmp(c->member, "tcp") == 0) {
        struct stripe_run *sr = r->erun;
        for (int m = 0; m < c->members; m++) {
            char err[512];
            int port = sr && sr->nsrv ? sr->srv[m].port : (int)c->port + m;
            s->sock[m] = qnb_tcp_connect(c->host, port, err, sizeof err);
            if (s->sock[m] < 0) {
                qnb_worker_error(w, "stripe: member %d: %s", m, err);
                return -1;
            }
        }
    } else if (!p->emu) {
        for (int m = 0; m < c->members; m++) {
            char name[32];
            snprintf(name, sizeof name, "member%d.dat", m);
            s->fd[m] = qnb_file_open(r, name, O_RDWR);
            if (s->fd[m] < 0) {
                qnb_worker_error(w, "stripe: open %s/%s: %s", r->rundir, name, strerror(errno));
                return -1;
            }
        }
    }
    return 0;
}

struct ctx {
    struct qnb_worker *w;
    struct stripe_point *p;
    struct stripe_worker *s;
    int64_t arrival; /* emulated members: when this phase's requests arrive */
    int64_t done;    /* latest finish of this phase */
    int tcp;
    /* TCP members: the request sent to each member whose reply is still to be read */
    int pend[MAXM], pend_write[MAXM];
    unsigned char *pend_buf[MAXM];
    size_t pend_len[MAXM];
};

static int tcp_collect(struct ctx *x, int m)
{
    if (!x->pend[m])
        return 0;
    x->pend[m] = 0;
    if (qnb_tcp_recv_reply(x->s->sock[m], x->pend_write[m], x->pend_buf[m], x->pend_len[m])) {
        int e = errno;
        qnb_worker_error(x->w, "stripe: reply of member %d: %s (%s)", m, strerror(e),
                         qnb_errno_name(e));
        return -1;
    }
    return 0;
}

/* end of a phase: wait for every member's reply */
static int phase_end(struct ctx *x, int k)
{
    int rc = 0;
    if (x->tcp)
        for (int m = 0; m < k; m++)
            rc |= tcp_collect(x, m);
    return rc;
}

/* one member request; for emulated members it is queued at c->arrival */
static int member_io(struct ctx *x, int m, int write, unsigned char *data, long long moff,
                     size_t len)
{
    struct qnb_worker *w = x->w;
    if (w->counting) {
        w->stat[ST_OPS(m)] += 1;
        w->stat[ST_BYTES(m)] += (double)len;
    }
    if (x->tcp) {
        /* one outstanding request per member connection */
        if (tcp_collect(x, m))
            return -1;
        if (qnb_tcp_send_request(x->s->sock[m], write, data, len)) {
            int e = errno;
            qnb_worker_error(w, "stripe: request to member %d: %s (%s)", m, strerror(e),
                             qnb_errno_name(e));
            return -1;
        }
        x->pend[m] = 1;
        x->pend_write[m] = write;
        x->pend_buf[m] = data;
        x->pend_len[m] = len;
        return 0;
    }
    if (x->p->emu) {
        int64_t svc = qnb_emu_service_ns(w->run->cfg, len, &w->rng);
        int64_t fin = qnb_emu_reserve(&x->p->set, m, x->arrival, svc);
        if (fin > x->done)
            x->done = fin;
        return 0;
    }
    ssize_t n = write ? pwrite(x->s->fd[m], data, len, moff) : pread(x->s->fd[m], data, len, moff);
    if (n != (ssize_t)len) {
        int e = n < 0 ? errno : EIO;
        qnb_worker_error(w, "stripe: %s member%d.dat at offset %lld: %s (%s)",
                         write ? "pwrite" : "pread", m, moff, strerror(e), qnb_errno_name(e));
        return -1;
    }
    return 0;
}

/* One piece of a request: the part of it that falls into one chunk of one stripe. */
struct piece {
    int m;          /* member */
    long long in;   /* offset inside the chunk (and inside the member's chunk) */
    long long len;  /* bytes */
    long long boff; /* offset inside the request buffers */
};

/* Splits [pos, send) of the stripe starting at sstart into its pieces (the one piece loop);
 * returns how many. pm is the stripe's parity member (-1 for RAID0). */
static int split_pieces(const struct qnb_config *c, long long pos, long long send,
                        long long sstart, long long off, int pm, struct piece *pc)
{
    int n = 0, k = (int)c->members;
    long long chunk = c->chunk;
    for (long long q = pos; q < send; n++) {
        long long d = (q - sstart) / chunk;
        pc[n].in = (q - sstart) % chunk;
        pc[n].len = chunk - pc[n].in < send - q ? chunk - pc[n].in : send - q;
        pc[n].m = pm >= 0 ? (int)((pm + 1 + d) % k) : (int)d;
        pc[n].boff = q - off;
        q += pc[n].len;
    }
    return n;
}

/* One member request per piece, with the piece's bytes of buf; chunk_off: the stripe's offset
 * in every member. */
static int pieces_io(struct ctx *x, const struct piece *pc, int n, int write, unsigned char *buf,
                     long long chunk_off)
{
    for (int i = 0; i < n; i++)
        if (member_io(x, pc[i].m, write, buf + pc[i].boff, chunk_off + pc[i].in,
                      (size_t)pc[i].len))
            return -1;
    return 0;
}

/* One stripe of a request: its member requests, in one phase (reads, RAID0 writes, RAID5
 * full-stripe writes with the parity computed from the new data) or in two dependent phases
 * (RAID5 partial-stripe write: read old data and parity; write new data and parity). Returns 0,
 * -1 (error), or 1 when a stop woke the client between the phases. */
static int stripe_one(struct ctx *x, long long pos, long long send, long long off, int write)
{
    struct qnb_worker *w = x->w;
    struct stripe_worker *s = x->s;
    const struct qnb_config *c = w->run->cfg;
    int k = (int)c->members, raid5 = c->raid == 5;
    long long chunk = c->chunk, dchunks = raid5 ? k - 1 : k, stripe_bytes = dchunks * chunk;
    long long sidx = pos / stripe_bytes, sstart = sidx * stripe_bytes;
    int pm = raid5 ? (k - 1) - (int)(sidx % k) : -1;
    int full = raid5 && pos == sstart && send == sstart + stripe_bytes;
    struct piece pc[MAXM];
    int n = split_pieces(c, pos, send, sstart, off, pm, pc);
    if (!write || !raid5 || full) {
        if (pieces_io(x, pc, n, write, s->buf, sidx * chunk))
            return -1;
        if (write && full) {
            for (long long d = 0; d < dchunks; d++)
                s->ptrs[d] = s->buf + (sstart - off) + d * chunk;
            qnb_xor_parity(s->parity, s->ptrs, (int)dchunks, (size_t)chunk);
            if (member_io(x, pm, 1, s->parity, sidx * chunk, (size_t)chunk))
                return -1;
            if (w->counting)
                w->stat[ST_FULL] += 1;
        }
        return 0;
    }
    /* RAID5 partial-stripe write: read-modify-write of the parity range [lo, hi) */
    long long lo = chunk, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = pc[i].in < lo ? pc[i].in : lo;
        hi = pc[i].in + pc[i].len > hi ? pc[i].in + pc[i].len : hi;
    }
    /* phase 1: old data and old parity, needed for the new parity */
    if (pieces_io(x, pc, n, 0, s->old, sidx * chunk) ||
        member_io(x, pm, 0, s->parity + lo, sidx * chunk + lo, (size_t)(hi - lo)) ||
        phase_end(x, k))
        return -1;
    /* new parity = old parity ^ old data ^ new data, over each piece's range */
    for (int i = 0; i < n; i++) {
        unsigned char *pp = s->parity + pc[i].in;
        const unsigned char *od = s->old + pc[i].boff, *nd = s->buf + pc[i].boff;
        for (long long b = 0; b < pc[i].len; b++)
            pp[b] ^= (unsigned char)(od[b] ^ nd[b]);
    }
    /* phase 2 starts when phase 1 is complete. Emulated members: the client waits for the
     * old data and parity before it queues the writes, as a RAID5 driver does; queueing them
     * at once (at the future instant phase 1 ends) would put them ahead, in each member's
     * FCFS schedule, of other clients' requests that arrive earlier, and leave the member
     * idle until then (not work-conserving). */
    if (x->p->emu) {
        if (qnb_run_sleep(w->run, x->done, qnb_ns_of(c->spin)))
            return 1; /* stopped: the request is not complete */
        x->arrival = x->done;
        x->done = 0;
    }
    if (pieces_io(x, pc, n, 1, s->buf, sidx * chunk) ||
        member_io(x, pm, 1, s->parity + lo, sidx * chunk + lo, (size_t)(hi - lo)))
        return -1;
    if (w->counting)
        w->stat[ST_RMW] += 1;
    return 0;
}

static int stripe_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct qnb_run *r = w->run;
    const struct qnb_config *c = r->cfg;
    struct stripe_point *p = r->epriv;
    struct stripe_worker *s = w->priv;
    int k = (int)c->members;
    int raid5 = c->raid == 5;
    long long stripe_bytes = (raid5 ? k - 1 : k) * c->chunk;
    long long capacity = (c->size / c->chunk) * stripe_bytes;
    long long bs = r->pt.bs;
    int write = strstr(c->rw, "write") != NULL;
    long long off;
    if (strncmp(c->rw, "rand", 4) == 0) {
        off = (long long)qnb_rng_below(&w->rng, (uint64_t)(capacity / bs)) * bs;
    } else {
        if (s->off + bs > capacity)
            s->off = 0;
        off = s->off;
        s->off += bs;
    }
    struct ctx x = {.w = w, .p = p, .s = s, .arrival = qnb_now_ns(), .done = 0};
    x.tcp = s->sock[0] >= 0;
    int64_t final = 0;
    for (long long pos = off, end = off + bs; pos < end;) {
        long long sidx = pos / stripe_bytes;
        long long send = (sidx + 1) * stripe_bytes < end ? (sidx + 1) * stripe_bytes : end;
        /* file members: a RAID5 stripe is written by one client at a time */
        pthread_mutex_t *lk =
            (!p->emu && !x.tcp && write && raid5) ? &p->lock[sidx % NLOCKS] : NULL;
        if (lk)
            pthread_mutex_lock(lk);
        x.done = 0;
        int rc = stripe_one(&x, pos, send, off, write);
        if (!rc)
            rc = phase_end(&x, k);
        if (lk)
            pthread_mutex_unlock(lk);
        if (rc)
            return rc;
        if (x.done > final)
            final = x.done;
        pos = send;
    }
    if (p->emu && final > 0 && qnb_run_sleep(r, final, qnb_ns_of(c->spin)))
        return 1; /* stopped: the request is not complete and not counted */
    *bytes = (uint64_t)bs;
    return 0;
}

static void stripe_cleanup(struct qnb_worker *w)
{
    struct stripe_worker *s = w->priv;
    if (!s)
        return;
    for (int m = 0; m < MAXM; m++) {
        if (s->fd[m] >= 0)
            close(s->fd[m]);
        if (s->sock[m] >= 0)
            close(s->sock[m]);
    }
    free(s->buf);
    free(s->old);
    free(s->parity);
    free(s->ptrs);
    free(s);
    w->priv = NULL;
}

/* RAID5 over files: every stripe's K chunks (data and parity) must XOR to zero. Returns the
 * number of inconsistent stripes, or -1 when the members cannot be read. */
static long long verify_parity(struct qnb_run *r, long long *checked)
{
    const struct qnb_config *c = r->cfg;
    int k = (int)c->members;
    size_t chunk = (size_t)c->chunk;
    long long nstripes = c->size / c->chunk, bad = 0;
    int fd[MAXM];
    unsigned char *acc = malloc(chunk), *buf = malloc(chunk);
    int ok = acc && buf;
    for (int m = 0; m < k; m++) {
        char name[32];
        snprintf(name, sizeof name, "member%d.dat", m);
        fd[m] = ok ? qnb_file_open(r, name, O_RDONLY) : -1;
        if (fd[m] < 0)
            ok = 0;
    }
    for (long long s = 0; ok && s < nstripes; s++) {
        if (qnb_stop_signal) { /* a stop ends the check; what was not read is not counted */
            nstripes = s;
            break;
        }
        memset(acc, 0, chunk);
        for (int m = 0; m < k && ok; m++) {
            if (pread(fd[m], buf, chunk, s * c->chunk) != (ssize_t)chunk) {
                ok = 0;
                break;
            }
            for (size_t i = 0; i < chunk; i++)
                acc[i] ^= buf[i];
        }
        int zero = 1;
        for (size_t i = 0; ok && i < chunk && zero; i++)
            zero = acc[i] == 0;
        bad += ok && !zero;
    }
    for (int m = 0; m < k; m++)
        if (fd[m] >= 0)
            close(fd[m]);
    free(acc);
    free(buf);
    *checked = nstripes;
    return ok ? bad : -1;
}

static void stripe_report(struct qnb_run *r, struct qnb_json *j)
{
    struct stripe_point *p = r->epriv;
    int k = (int)r->cfg->members;
    double ops[MAXM] = {0}, bytes[MAXM] = {0}, rmw = 0, full = 0;
    for (int i = 0; i < r->pt.jobs; i++) {
        const struct qnb_worker *w = &r->workers[i];
        for (int m = 0; m < k; m++) {
            ops[m] += w->stat[ST_OPS(m)];
            bytes[m] += w->stat[ST_BYTES(m)];
        }
        rmw += w->stat[ST_RMW];
        full += w->stat[ST_FULL];
    }
    qj_kint(j, "raid", r->cfg->raid);
    qj_kint(j, "data_members", r->cfg->raid == 5 ? k - 1 : k);
    qj_key(j, "member_ops");
    qj_arr_begin(j);
    for (int m = 0; m < k; m++)
        qj_int(j, (long long)ops[m]);
    qj_arr_end(j);
    qj_key(j, "member_bytes");
    qj_arr_begin(j);
    for (int m = 0; m < k; m++)
        qj_int(j, (long long)bytes[m]);
    qj_arr_end(j);
    qj_kint(j, "rmw_ops", (long long)rmw);
    qj_kint(j, "full_stripe_writes", (long long)full);
    if (p && p->emu)
        qnb_emu_report(&p->set, r->t_start_ns, atomic_load(&r->t_stop_ns), j);
    if (p && !p->emu && r->cfg->raid == 5 && r->cfg->verify) {
        long long checked = 0, bad = verify_parity(r, &checked);
        if (bad < 0) {
            qnb_run_error(r, "stripe: --verify could not read the member files");
        } else {
            qj_kint(j, "stripes_verified", checked);
            qj_kint(j, "parity_errors", bad);
            if (bad)
                qnb_run_error(r, "stripe: %lld of %lld stripes have inconsistent parity", bad,
                              checked);
        }
    }
}

static void stripe_teardown(struct qnb_run *r)
{
    struct stripe_point *p = r->epriv;
    if (p) {
        if (p->emu)
            qnb_emu_destroy(&p->set);
        for (int i = 0; i < NLOCKS; i++)
            pthread_mutex_destroy(&p->lock[i]);
        free(p);
    }
    r->epriv = NULL;
}

static void stripe_run_teardown(struct qnb_run *r)
{
    struct stripe_run *sr = r->erun;
    for (int i = 0; sr && i < sr->nsrv; i++)
        qnb_tcp_server_stop(&sr->srv[i]);
    free(r->erun);
    r->erun = NULL;
}

const struct qnb_engine qnb_engine_stripe = {
    .name = "stripe",
    .help = "user-space RAID0/RAID5 (parity, read-modify-write) over emulated devices, files or "
            "TCP block servers",
    .flags = QNB_ENG_USES_BS,
    .check = stripe_check,
    .point_setup = stripe_setup,
    .worker_init = stripe_worker_init,
    .op = stripe_op,
    .worker_cleanup = stripe_cleanup,
    .point_report = stripe_report,
    .point_teardown = stripe_teardown,
    .run_teardown = stripe_run_teardown,
};
