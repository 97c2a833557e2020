/* qnsim_state.h: the state of a simulation run and the small helpers every part of the event
 * loop uses: service-time sampling, time integrals, task slots, waiting lines and the
 * response-time histogram (included by qnsim.c only). */
#ifndef QNSIM_STATE_H
#define QNSIM_STATE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qnsim.h"
#include "qnsim_events.h"
#include "qnsim_rng.h"

/* where a blocked job waits (finite capacities, closed classes) */
enum { BLK_NONE = 0, BLK_STATION = 1, BLK_TERMINAL = 2, BLK_FORKJOIN = 3 };

typedef struct {
    double t_cycle, t_node; /* start of the response / of the current node visit */
    double rem;             /* LCFS-PR, PRIO-PR: remaining work when interrupted (PRIO-PR in
                             * service: its finish time); PS: virtual finish time */
    int32_t cls, pos;       /* class; index into the class route */
    int32_t parent;         /* -1 for a job, the job's index for a fork-join sub-job */
    int32_t need;           /* jobs: branch completions still needed to join */
    int32_t next_free;
    int32_t blk; /* BLK_*: blocked at its station, at the terminal or at its fork-join */
    uint32_t ep; /* LCFS-PR, PRIO-PR: completions carry it, an interruption bumps it (never reset,
                  * so a completion left over from an earlier use of the slot stays stale) */
    int32_t cls0; /* routed runs: the class the job had when its cycle started (pos is then
                   * the node it is at, cls its class now) */
    uint64_t gen; /* jobs: id of their latest fork (unique in the run); sub-jobs: their fork's */
} task_t;

/* a ring of task indices (capacity a power of two): FIFO, or a stack (LCFS-PR) */
typedef struct {
    int32_t *q;
    int64_t cap, head, len;
} fifo_t;

/* a job in service at a PS station, keyed by its virtual finish time */
typedef struct {
    double vf;
    int32_t task;
} psn_t;

typedef struct {
    int64_t n;    /* jobs present: in service, waiting and blocked after service */
    int64_t busy; /* servers taken (FCFS, HOL), blocked jobs' included */
    int64_t nblk; /* jobs blocked here after service, each holding its server */
    fifo_t f;     /* FCFS: waiting jobs; LD: all jobs present; LCFS-PR: the stack */
    fifo_t *lv;   /* HOL, PRIO-PR: one waiting line per priority level */
    fifo_t bq;    /* closed jobs elsewhere waiting for room here, in the order they blocked */
    int32_t *srv; /* PRIO-PR: the jobs in service */
    int64_t nsrv;
    psn_t *h; /* PS: jobs in service, a binary heap on the virtual finish time */
    int64_t hn, hcap;
    double work, t_upd, spd; /* LD: remaining work of the head; LD, LCFS-PR: last (re)start and
                              * speed of the job in service */
    double V, G, phi, g, t_v; /* PS: virtual time (work one job received), the busy integral of
                               * one job in service, their rates, last update */
    uint32_t epoch;
} st_t;

#define HSUB 128
#define HEXP 64
#define HOFF 32
#define HB (1 + HEXP * HSUB)

typedef struct {
    /* model */
    int64_t C, K, P, L;
    const int64_t *node_kind, *node_first, *node_count, *node_k, *node_fan;
    const int64_t *st_kind, *st_servers, *st_ld_off, *st_ld_len, *st_cap;
    const double *ld_rates;
    const int64_t *cls_open, *cls_level;
    const double *cls_think, *cls_rate;
    const int64_t *route_off, *route_len, *routes;
    int routed; /* jobs follow the routing matrix (rt_*), not the class routes */
    const int64_t *rt_off, *rt_dst;
    const double *rt_cum;
    const int64_t *svc_kind, *svc_tab_off, *svc_tab_len;
    const double *svc_mean, *svc_p1, *svc_p2, *svc_tab;
    double r_scale;
    int64_t max_tasks;
    int has_cap; /* some station has a finite capacity */
    /* state */
    rng_t rng;
    heap_t heap;
    task_t *T;
    int64_t ntask, capt;
    int32_t free_head;
    uint64_t forks; /* forks so far: fork ids are never reused, so a straggler of an old fork
                     * never counts towards a later join in a reused job slot */
    st_t *st;
    int64_t *cnt, *busyc, *ncnt; /* (C,P), (C,P), (C,K); busyc at PS: jobs in service */
    double *last, *lastb, *nlast;
    double *gl; /* (C,P) PS: the station's G when busyc last changed */
    /* current accumulators (a batch of the output, or the warm-up scratch) */
    double *a_done, *a_rsum, *a_area, *a_busy, *a_narea, *a_visits, *a_resid, *a_arr, *a_lost;
    double *hist; /* (C, HB) */
    double *hmin, *hmax;
    int err;
} sim_t;

/* r(n): the speed of a load-dependent, PS or LCFS-PR station with n jobs (n >= 1) */
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

/* routed runs: the next state c' (K + 1) + k' of a job leaving state s = c (K + 1) + k (node
 * k = K: outside), drawn by inversion of the row's cumulative probabilities (a linear scan: rows
 * are short); a row with one destination draws no random number. */
static inline int64_t route_draw(sim_t *S, int64_t s) {
    int64_t lo = S->rt_off[s], hi = S->rt_off[s + 1] - 1;
    if (lo < hi) {
        double u = u01(&S->rng);
        while (lo < hi && S->rt_cum[lo] < u) lo++;
    }
    return S->rt_dst[lo];
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
    S->T[i].ep = 0;
    S->T[i].blk = BLK_NONE;
    return i;
}

static void task_free(sim_t *S, int32_t i) {
    S->T[i].next_free = S->free_head;
    S->free_head = i;
}

/* ---------------------------------------------------------------- waiting lines */
static int fifo_grow(fifo_t *s) {
    int64_t nc = s->cap ? 2 * s->cap : 16;
    int32_t *nq = malloc((size_t)nc * sizeof(int32_t));
    if (!nq) return QNS_ENOMEM;
    for (int64_t i = 0; i < s->len; i++) nq[i] = s->q[(s->head + i) & (s->cap - 1)];
    free(s->q);
    s->q = nq;
    s->cap = nc;
    s->head = 0;
    return QNS_OK;
}

static inline void fifo_push(sim_t *S, fifo_t *s, int32_t v) {
    if (s->len == s->cap && fifo_grow(s) != QNS_OK) {
        S->err = QNS_ENOMEM;
        return;
    }
    s->q[(s->head + s->len) & (s->cap - 1)] = v;
    s->len++;
}

static inline void fifo_push_front(sim_t *S, fifo_t *s, int32_t v) {
    if (s->len == s->cap && fifo_grow(s) != QNS_OK) {
        S->err = QNS_ENOMEM;
        return;
    }
    s->head = (s->head - 1) & (s->cap - 1);
    s->q[s->head] = v;
    s->len++;
}

static inline int32_t fifo_pop(fifo_t *s) {
    int32_t v = s->q[s->head];
    s->head = (s->head + 1) & (s->cap - 1);
    s->len--;
    return v;
}

static inline int32_t fifo_back(const fifo_t *s) {
    return s->q[(s->head + s->len - 1) & (s->cap - 1)];
}

static inline int32_t fifo_pop_back(fifo_t *s) {
    s->len--;
    return s->q[(s->head + s->len) & (s->cap - 1)];
}

/* ---------------------------------------------------------------- response-time histogram */
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

static void hist_reset(sim_t *S) {
    memset(S->hist, 0, (size_t)(S->C * HB) * sizeof(double));
    for (int64_t c = 0; c < S->C; c++) {
        S->hmin[c] = INFINITY;
        S->hmax[c] = -INFINITY;
    }
}

#endif
