/* qnsim.c: the event loop of qnmodel.simulate; see qnsim.h for the interface.
 *
 * Method: next-event time advance over a binary-heap event list (A. M. Law, "Simulation Modeling
 * and Analysis", 5th ed., McGraw-Hill 2015, ch. 1-2); time averages of jobs present and servers
 * busy are integrated exactly between events.
 *
 * Random numbers: xoshiro256** 1.0 seeded through splitmix64, replications on disjoint streams
 * obtained with the generator's jump function (2^128 steps apart): D. Blackman, S. Vigna,
 * "Scrambled linear pseudorandom number generators", ACM TOMS 47(4):36, 2021. Written here from
 * the algorithm's description in that paper. Normal variates by Marsaglia's polar method
 * (G. Marsaglia, T. A. Bray, SIAM Review 6(3):260-264, 1964).
 *
 * A run is bit-for-bit a function of its inputs, seed and stream: no clock, no threads, no
 * platform-dependent ordering (ties in the event list are broken by the heap's fixed rules). */
#include "qnsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qnsim_events.h"
#include "qnsim_rng.h"

/* ---------------------------------------------------------------- state */
typedef struct {
    double t_cycle, t_node; /* start of the response / of the current node visit */
    int32_t cls, pos;       /* class; index into the class route */
    int32_t parent;         /* -1 for a job, the job's index for a fork-join sub-job */
    int32_t need;           /* jobs: branch completions still needed to join */
    int32_t next_free;
    uint64_t gen; /* jobs: id of their latest fork (unique in the run); sub-jobs: their fork's */
} task_t;

typedef struct {
    int64_t n;    /* tasks present */
    int64_t busy; /* busy servers (queue, delay) */
    int32_t *q;   /* FIFO ring (capacity a power of two) of waiting tasks (queue) or of all
                   * tasks present (LD) */
    int64_t qcap, qhead, qlen;
    double work, t_upd; /* LD: remaining work of the head, time of last update */
    uint32_t epoch;
} st_t;

#define HSUB 128
#define HEXP 64
#define HOFF 32
#define HB (1 + HEXP * HSUB)

typedef struct {
    /* model */
    int64_t C, K, P;
    const int64_t *node_kind, *node_first, *node_count, *node_k, *node_fan;
    const int64_t *st_kind, *st_servers, *st_ld_off, *st_ld_len;
    const double *ld_rates;
    const int64_t *cls_open;
    const double *cls_think, *cls_rate;
    const int64_t *route_off, *route_len, *routes;
    const int64_t *svc_kind, *svc_tab_off, *svc_tab_len;
    const double *svc_mean, *svc_p1, *svc_p2, *svc_tab;
    double r_scale;
    int64_t max_tasks;
    /* state */
    rng_t rng;
    heap_t heap;
    task_t *T;
    int64_t ntask, capt;
    int32_t free_head;
    uint64_t forks; /* forks so far: fork ids are never reused, so a straggler of an old fork
                     * never counts towards a later join in a reused job slot */
    st_t *st;
    int64_t *cnt, *busyc, *ncnt; /* (C,P), (C,P), (C,K) */
    double *last, *lastb, *nlast;
    /* current accumulators (a batch of the output, or the warm-up scratch) */
    double *a_done, *a_rsum, *a_area, *a_busy, *a_narea, *a_visits, *a_resid;
    double *hist; /* (C, HB) */
    double *hmin, *hmax;
    int err;
} sim_t;

static inline double speed(const sim_t *S, int64_t p, int64_t n) {
    int64_t len = S->st_ld_len[p];
    return S->ld_rates[S->st_ld_off[p] + (n < len ? n : len) - 1];
}

static double sample(sim_t *S, int64_t c, int64_t p) {
    int64_t i = c * S->P + p;
    switch (S->svc_kind[i]) {
    case QNS_SVC_DET:
        return S->svc_mean[i];
    case QNS_SVC_LOGN:
        return exp(S->svc_p1[i] + S->svc_p2[i] * std_normal(&S->rng));
    case QNS_SVC_EMP: {
        const double *tab = S->svc_tab + 3 * S->svc_tab_off[i];
        int64_t lo = 0, hi = S->svc_tab_len[i] - 1;
        double u = u01(&S->rng);
        while (lo < hi) { /* first bucket whose cumulative probability reaches u */
            int64_t mid = (lo + hi) >> 1;
            if (tab[3 * mid] >= u) hi = mid;
            else lo = mid + 1;
        }
        double c0 = lo ? tab[3 * (lo - 1)] : 0.0, c1 = tab[3 * lo];
        double f = c1 > c0 ? (u - c0) / (c1 - c0) : 0.5;
        return tab[3 * lo + 1] + f * (tab[3 * lo + 2] - tab[3 * lo + 1]);
    }
    default:
        return -S->svc_mean[i] * log(u01(&S->rng));
    }
}

static inline void push(sim_t *S, double t, int type, int32_t task, int32_t where, uint32_t ep) {
    ev_t e = {t, task, where, ep, type};
    if (heap_push(&S->heap, e) != QNS_OK) S->err = QNS_ENOMEM;
}

/* time integral of a counter up to t, then change it by d */
static inline void bump(int64_t *cnt, double *last, double *acc, int64_t i, double t, int d) {
    acc[i] += (double)cnt[i] * (t - last[i]);
    last[i] = t;
    cnt[i] += d;
}

static int32_t task_alloc(sim_t *S) {
    if (S->free_head >= 0) {
        int32_t i = S->free_head;
        S->free_head = S->T[i].next_free;
        return i;
    }
    if (S->ntask == S->capt) {
        if (S->capt >= S->max_tasks) {
            S->err = QNS_ETOOMANY;
            return -1;
        }
        int64_t nc = 2 * S->capt;
        if (nc > S->max_tasks) nc = S->max_tasks;
        task_t *nt = realloc(S->T, (size_t)nc * sizeof(task_t));
        if (!nt) {
            S->err = QNS_ENOMEM;
            return -1;
        }
        S->T = nt;
        S->capt = nc;
    }
    int32_t i = (int32_t)S->ntask++;
    S->T[i].gen = 0;
    S->T[i].need = 0;
    return i;
}

static void task_free(sim_t *S, int32_t i) {
    S->T[i].next_free = S->free_head;
    S->free_head = i;
}

static int q_push(st_t *s, int32_t v) {
    if (s->qlen == s->qcap) {
        int64_t nc = s->qcap ? 2 * s->qcap : 16;
        int32_t *nq = malloc((size_t)nc * sizeof(int32_t));
        if (!nq) return QNS_ENOMEM;
        for (int64_t i = 0; i < s->qlen; i++) nq[i] = s->q[(s->qhead + i) & (s->qcap - 1)];
        free(s->q);
        s->q = nq;
        s->qcap = nc;
        s->qhead = 0;
    }
    s->q[(s->qhead + s->qlen) & (s->qcap - 1)] = v;
    s->qlen++;
    return QNS_OK;
}

static int32_t q_pop(st_t *s) {
    int32_t v = s->q[s->qhead];
    s->qhead = (s->qhead + 1) & (s->qcap - 1);
    s->qlen--;
    return v;
}

static void hist_add(sim_t *S, int64_t c, double r) {
    double v = r / S->r_scale;
    int64_t idx = 0;
    if (v > 0.0) {
        int e;
        double m = frexp(v, &e); /* v = m 2^e, m in [0.5, 1) */
        int64_t ei = (int64_t)e + HOFF;
        if (ei >= HEXP) idx = HB - 1;
        else if (ei >= 0) idx = 1 + ei * HSUB + (int64_t)((m - 0.5) * 2.0 * HSUB);
    }
    S->hist[c * HB + idx] += 1.0;
    if (r < S->hmin[c]) S->hmin[c] = r;
    if (r > S->hmax[c]) S->hmax[c] = r;
}

/* Quantile by rank, linear within the bucket (relative bucket width <= 1/HSUB), clamped to the
 * exact minimum and maximum of the batch. */
static double hist_quantile(const sim_t *S, int64_t c, double q) {
    const double *h = S->hist + c * HB;
    double n = 0.0;
    for (int64_t i = 0; i < HB; i++) n += h[i];
    if (n <= 0.0) return NAN;
    double target = q * n, seen = 0.0;
    for (int64_t i = 0; i < HB; i++) {
        if (h[i] <= 0.0) continue;
        if (seen + h[i] >= target) {
            double lo, hi;
            if (i == 0) {
                lo = 0.0;
                hi = ldexp(0.5, -HOFF) * S->r_scale;
            } else {
                int64_t ei = (i - 1) / HSUB, j = (i - 1) % HSUB;
                lo = ldexp(0.5 + (double)j / (2.0 * HSUB), (int)(ei - HOFF)) * S->r_scale;
                hi = ldexp(0.5 + (double)(j + 1) / (2.0 * HSUB), (int)(ei - HOFF)) * S->r_scale;
            }
            double v = lo + (target - seen) / h[i] * (hi - lo);
            if (v < S->hmin[c]) v = S->hmin[c];
            if (v > S->hmax[c]) v = S->hmax[c];
            return v;
        }
        seen += h[i];
    }
    return S->hmax[c];
}

/* ---------------------------------------------------------------- job movement */
static void enter_node(sim_t *S, int32_t task, double t);

static void station_arrive(sim_t *S, int32_t task, int64_t p, double t) {
    int64_t c = S->T[task].cls, i = c * S->P + p;
    st_t *s = &S->st[p];
    bump(S->cnt, S->last, S->a_area, i, t, +1);
    s->n++;
    switch (S->st_kind[p]) {
    case QNS_ST_QUEUE:
        if (s->busy < S->st_servers[p]) {
            s->busy++;
            bump(S->busyc, S->lastb, S->a_busy, i, t, +1);
            push(S, t + sample(S, c, p), EV_DONE, task, (int32_t)p, 0);
        } else if (q_push(s, task) != QNS_OK) {
            S->err = QNS_ENOMEM;
        }
        break;
    case QNS_ST_DELAY:
        s->busy++;
        bump(S->busyc, S->lastb, S->a_busy, i, t, +1);
        push(S, t + sample(S, c, p), EV_DONE, task, (int32_t)p, 0);
        break;
    default: /* load-dependent: the head is served at speed(n) */
        if (q_push(s, task) != QNS_OK) S->err = QNS_ENOMEM;
        if (s->n == 1) {
            s->work = sample(S, c, p);
            s->t_upd = t;
            bump(S->busyc, S->lastb, S->a_busy, i, t, +1);
            push(S, t + s->work / speed(S, p, 1), EV_DONE, task, (int32_t)p, ++s->epoch);
        } else {
            double v_old = speed(S, p, s->n - 1), v_new = speed(S, p, s->n);
            s->work -= (t - s->t_upd) * v_old;
            if (s->work < 0.0) s->work = 0.0;
            s->t_upd = t;
            if (v_new != v_old)
                push(S, t + s->work / v_new, EV_DONE, s->q[s->qhead], (int32_t)p, ++s->epoch);
        }
        break;
    }
}

static void leave_node(sim_t *S, int32_t task, double t) {
    task_t *j = &S->T[task];
    int64_t c = j->cls, k = S->routes[S->route_off[c] + j->pos];
    int64_t i = c * S->K + k;
    if (S->node_kind[k] != QNS_NODE_STATION) bump(S->ncnt, S->nlast, S->a_narea, i, t, -1);
    S->a_visits[i] += 1.0;
    S->a_resid[i] += t - j->t_node;
    j->pos++;
    if (j->pos < S->route_len[c]) {
        enter_node(S, task, t);
        return;
    }
    double r = t - j->t_cycle;
    S->a_done[c] += 1.0;
    S->a_rsum[c] += r;
    hist_add(S, c, r);
    if (S->cls_open[c]) {
        task_free(S, task);
    } else if (S->cls_think[c] > 0.0) {
        push(S, t - S->cls_think[c] * log(u01(&S->rng)), EV_THINK, task, -1, 0);
    } else {
        j->t_cycle = t;
        j->pos = 0;
        if (S->route_len[c] > 0) enter_node(S, task, t);
    }
}

static void enter_node(sim_t *S, int32_t task, double t) {
    int64_t c = S->T[task].cls, k = S->routes[S->route_off[c] + S->T[task].pos];
    S->T[task].t_node = t;
    if (S->node_kind[k] == QNS_NODE_STATION) { /* its jobs are counted at the station */
        station_arrive(S, task, S->node_first[k], t);
        return;
    }
    bump(S->ncnt, S->nlast, S->a_narea, c * S->K + k, t, +1);
    /* fork: one sub-job per branch with work for this class; a branch without work for it
     * counts as finished at once (the route skips nodes where that alone reaches k). With a
     * fan-out f < n the job forks to a uniformly random f of the n branches (selection
     * sampling, Knuth TAOCP vol. 2 sec. 3.4.2 algorithm S; at most QNS_MAX_FAN branches). */
    uint64_t gen = ++S->forks;
    S->T[task].gen = gen;
    int32_t need = (int32_t)S->node_k[k];
    int64_t cnt = S->node_count[k], fan = S->node_fan[k], nsel = 0;
    int64_t sel[QNS_MAX_FAN];
    if (fan < cnt) {
        for (int64_t b = 0, left = fan; b < cnt && left > 0; b++)
            if (u01(&S->rng) * (double)(cnt - b) <= (double)left) sel[nsel++] = b, left--;
    }
    int64_t nb = fan < cnt ? nsel : cnt;
    for (int64_t i = 0; i < nb; i++) {
        int64_t p = S->node_first[k] + (fan < cnt ? sel[i] : i);
        if (!(S->svc_mean[c * S->P + p] > 0.0)) need--;
    }
    S->T[task].need = need;
    for (int64_t i = 0; i < nb; i++) {
        int64_t p = S->node_first[k] + (fan < cnt ? sel[i] : i);
        if (!(S->svc_mean[c * S->P + p] > 0.0)) continue;
        int32_t sub = task_alloc(S);
        if (sub < 0) return;
        S->T[sub].cls = (int32_t)c;
        S->T[sub].parent = task;
        S->T[sub].gen = gen;
        S->T[sub].pos = -1;
        station_arrive(S, sub, p, t);
    }
    if (need <= 0) leave_node(S, task, t);
}

static void station_done(sim_t *S, int32_t task, int64_t p, double t) {
    int64_t c = S->T[task].cls, i = c * S->P + p;
    st_t *s = &S->st[p];
    bump(S->cnt, S->last, S->a_area, i, t, -1);
    s->n--;
    bump(S->busyc, S->lastb, S->a_busy, i, t, -1);
    switch (S->st_kind[p]) {
    case QNS_ST_QUEUE:
        s->busy--;
        if (s->qlen > 0) {
            int32_t h = q_pop(s);
            int64_t ch = S->T[h].cls;
            s->busy++;
            bump(S->busyc, S->lastb, S->a_busy, ch * S->P + p, t, +1);
            push(S, t + sample(S, ch, p), EV_DONE, h, (int32_t)p, 0);
        }
        break;
    case QNS_ST_DELAY:
        s->busy--;
        break;
    default:
        q_pop(s); /* the head, which is `task` */
        if (s->n > 0) {
            int32_t h = s->q[s->qhead];
            int64_t ch = S->T[h].cls;
            s->work = sample(S, ch, p);
            s->t_upd = t;
            bump(S->busyc, S->lastb, S->a_busy, ch * S->P + p, t, +1);
            push(S, t + s->work / speed(S, p, s->n), EV_DONE, h, (int32_t)p, ++s->epoch);
        }
        break;
    }
    int32_t par = S->T[task].parent;
    if (par < 0) {
        leave_node(S, task, t);
        return;
    }
    uint64_t gen = S->T[task].gen;
    task_free(S, task);
    task_t *pj = &S->T[par];
    if (pj->parent < 0 && pj->gen == gen && pj->need > 0 && --pj->need == 0) leave_node(S, par, t);
}

/* ---------------------------------------------------------------- batches */
static void flush(sim_t *S, double t) {
    int64_t CP = S->C * S->P, CK = S->C * S->K;
    for (int64_t i = 0; i < CP; i++) {
        S->a_area[i] += (double)S->cnt[i] * (t - S->last[i]);
        S->last[i] = t;
        S->a_busy[i] += (double)S->busyc[i] * (t - S->lastb[i]);
        S->lastb[i] = t;
    }
    for (int64_t i = 0; i < CK; i++) {
        S->a_narea[i] += (double)S->ncnt[i] * (t - S->nlast[i]);
        S->nlast[i] = t;
    }
}

static void hist_reset(sim_t *S) {
    memset(S->hist, 0, (size_t)(S->C * HB) * sizeof(double));
    for (int64_t c = 0; c < S->C; c++) {
        S->hmin[c] = INFINITY;
        S->hmax[c] = -INFINITY;
    }
}

int qns_abi_version(void) { return QNS_ABI_VERSION; }

int qns_run(int64_t C, int64_t K, int64_t P, const int64_t *node_kind, const int64_t *node_first,
            const int64_t *node_count, const int64_t *node_k, const int64_t *node_fan,
            const int64_t *st_kind,
            const int64_t *st_servers, const int64_t *st_ld_off, const int64_t *st_ld_len,
            const double *ld_rates, const int64_t *cls_open, const int64_t *cls_pop,
            const double *cls_think, const double *cls_rate, const int64_t *route_off,
            const int64_t *route_len, const int64_t *routes, const int64_t *svc_kind,
            const double *svc_mean, const double *svc_p1, const double *svc_p2,
            const int64_t *svc_tab_off, const int64_t *svc_tab_len, const double *svc_tab,
            uint64_t seed, uint64_t stream, double t_warm, double t_batch, int64_t B,
            double r_scale, int64_t NQ, const double *qs, int64_t max_tasks, double *o_done,
            double *o_rsum, double *o_quant, double *o_area, double *o_busy, double *o_narea,
            double *o_visits, double *o_resid, int64_t *o_events) {
    sim_t S0;
    sim_t *S = &S0;
    memset(S, 0, sizeof *S);
    S->C = C, S->K = K, S->P = P;
    S->node_kind = node_kind, S->node_first = node_first, S->node_count = node_count;
    S->node_k = node_k, S->node_fan = node_fan;
    S->st_kind = st_kind, S->st_servers = st_servers, S->st_ld_off = st_ld_off;
    S->st_ld_len = st_ld_len, S->ld_rates = ld_rates;
    S->cls_open = cls_open, S->cls_think = cls_think, S->cls_rate = cls_rate;
    S->route_off = route_off, S->route_len = route_len, S->routes = routes;
    S->svc_kind = svc_kind, S->svc_mean = svc_mean, S->svc_p1 = svc_p1, S->svc_p2 = svc_p2;
    S->svc_tab_off = svc_tab_off, S->svc_tab_len = svc_tab_len, S->svc_tab = svc_tab;
    S->r_scale = r_scale > 0.0 ? r_scale : 1.0;
    S->max_tasks = max_tasks;
    S->free_head = -1;
    rng_seed(&S->rng, seed, stream);

    int64_t CP = C * P, CK = C * K, pop = 0;
    for (int64_t c = 0; c < C; c++) pop += cls_open[c] ? 0 : cls_pop[c];
    S->capt = pop + 64;
    if (S->capt > max_tasks) S->capt = max_tasks > pop ? max_tasks : pop;
    S->T = malloc((size_t)S->capt * sizeof(task_t));
    S->st = calloc((size_t)P, sizeof(st_t));
    S->cnt = calloc((size_t)(2 * CP + CK), sizeof(int64_t));
    S->last = calloc((size_t)(2 * CP + CK), sizeof(double));
    double *scratch = calloc((size_t)(2 * C + 2 * CP + 3 * CK), sizeof(double));
    S->hist = malloc((size_t)(C * HB + 2 * C) * sizeof(double));
    int rc = QNS_OK;
    if (!S->T || !S->st || !S->cnt || !S->last || !scratch || !S->hist) {
        rc = QNS_ENOMEM;
        goto out;
    }
    S->busyc = S->cnt + CP, S->ncnt = S->cnt + 2 * CP;
    S->lastb = S->last + CP, S->nlast = S->last + 2 * CP;
    S->hmin = S->hist + C * HB, S->hmax = S->hmin + C;
    /* warm-up accumulates into the scratch buffers */
    S->a_done = scratch, S->a_rsum = scratch + C, S->a_area = scratch + 2 * C;
    S->a_busy = S->a_area + CP, S->a_narea = S->a_busy + CP, S->a_visits = S->a_narea + CK;
    S->a_resid = S->a_visits + CK;
    hist_reset(S);
    memset(o_done, 0, (size_t)(B * C) * sizeof(double));
    memset(o_rsum, 0, (size_t)(B * C) * sizeof(double));
    memset(o_area, 0, (size_t)(B * CP) * sizeof(double));
    memset(o_busy, 0, (size_t)(B * CP) * sizeof(double));
    memset(o_narea, 0, (size_t)(B * CK) * sizeof(double));
    memset(o_visits, 0, (size_t)(B * CK) * sizeof(double));
    memset(o_resid, 0, (size_t)(B * CK) * sizeof(double));

    /* initial state: closed jobs start thinking (or at their first node when Z = 0) */
    for (int64_t c = 0; c < C; c++) {
        if (cls_open[c]) {
            if (cls_rate[c] > 0.0)
                push(S, -log(u01(&S->rng)) / cls_rate[c], EV_ARRIVAL, (int32_t)c, -1, 0);
            continue;
        }
        for (int64_t n = 0; n < cls_pop[c]; n++) {
            int32_t j = task_alloc(S);
            if (j < 0) break;
            S->T[j].cls = (int32_t)c;
            S->T[j].parent = -1;
            S->T[j].pos = 0;
            S->T[j].t_cycle = 0.0;
            if (cls_think[c] > 0.0)
                push(S, -cls_think[c] * log(u01(&S->rng)), EV_THINK, j, -1, 0);
            else if (route_len[c] > 0)
                enter_node(S, j, 0.0);
        }
    }

    int64_t b = -1, events = 0;
    double bound = t_warm;
    while (S->err == QNS_OK) {
        double tn = S->heap.n ? S->heap.a[0].t : INFINITY;
        while (tn >= bound && b < B) { /* close the warm-up or batch b at `bound` */
            flush(S, bound);
            if (b >= 0)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t q = 0; q < NQ; q++)
                        o_quant[(b * C + c) * NQ + q] = hist_quantile(S, c, qs[q]);
            hist_reset(S);
            b++;
            if (b == B) break;
            S->a_done = o_done + b * C, S->a_rsum = o_rsum + b * C;
            S->a_area = o_area + b * CP, S->a_busy = o_busy + b * CP;
            S->a_narea = o_narea + b * CK, S->a_visits = o_visits + b * CK;
            S->a_resid = o_resid + b * CK;
            bound = t_warm + (double)(b + 1) * t_batch;
        }
        if (b >= B || S->heap.n == 0) break;
        ev_t e = heap_pop(&S->heap);
        switch (e.type) {
        case EV_DONE:
            if (st_kind[e.where] == QNS_ST_LD && e.epoch != S->st[e.where].epoch) continue;
            events++;
            station_done(S, e.task, e.where, e.t);
            break;
        case EV_THINK:
            events++;
            S->T[e.task].t_cycle = e.t;
            S->T[e.task].pos = 0;
            if (route_len[S->T[e.task].cls] > 0) enter_node(S, e.task, e.t);
            else { /* nothing to visit: a zero response, then think again */
                int64_t c = S->T[e.task].cls;
                S->a_done[c] += 1.0;
                hist_add(S, c, 0.0);
                push(S, e.t - cls_think[c] * log(u01(&S->rng)), EV_THINK, e.task, -1, 0);
            }
            break;
        default: { /* open arrival of class e.task */
            events++;
            int64_t c = e.task;
            push(S, e.t - log(u01(&S->rng)) / cls_rate[c], EV_ARRIVAL, (int32_t)c, -1, 0);
            int32_t j = task_alloc(S);
            if (j < 0) break;
            S->T[j].cls = (int32_t)c;
            S->T[j].parent = -1;
            S->T[j].pos = 0;
            S->T[j].t_cycle = e.t;
            if (route_len[c] > 0) enter_node(S, j, e.t);
            else {
                S->a_done[c] += 1.0;
                hist_add(S, c, 0.0);
                task_free(S, j);
            }
            break;
        }
        }
    }
    rc = S->err;
    *o_events = events;
out:
    if (S->st)
        for (int64_t p = 0; p < P; p++) free(S->st[p].q);
    free(S->st);
    free(S->T);
    free(S->heap.a);
    free(S->cnt);
    free(S->last);
    free(scratch);
    free(S->hist);
    return rc;
}
