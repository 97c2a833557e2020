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
 * platform-dependent ordering (ties in the event list are broken by the heap's fixed rules).
 *
 * Layout: qnsim_state.h (the run's state and small helpers), qnsim_disc.h (what a station
 * does with its jobs, per discipline), this file (jobs moving between nodes, fork and join,
 * finite capacities, batches and the run). Finite capacity (QNS_ST_* with st_cap > 0): an open
 * job that finds its next station full is lost; a closed job is blocked after service (it
 * stays, holding its server, until the station has room; Akyildiz, IEEE TSE 14(4), 1988), at
 * its terminal after a think time, or at its join; jobs blocked on a station move in, in the
 * order they blocked, as places free up, each move possibly releasing another (a cascade). */
#include "qnsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qnsim_disc.h"
#include "qnsim_events.h"
#include "qnsim_rng.h"
#include "qnsim_state.h"

/* ---------------------------------------------------------------- job movement */
static void enter_node(sim_t *S, int32_t task, double t);
static void release(sim_t *S, int64_t p, double t);

/* the node job j is at: its route's pos-th node, or pos itself in a routed run */
static inline int64_t node_at(const sim_t *S, const task_t *j) {
    return S->routed ? j->pos : S->routes[S->route_off[j->cls] + j->pos];
}

/* ---------------------------------------------------------------- routed runs
 * With a routing matrix a job leaving node k as class c goes to node k' as class c' with
 * probability M[c, k, c', k'] (route_draw); node K is the outside: a closed job thinks there
 * (the think time of the class it arrives as), an open job leaves. A cycle runs from leaving
 * the outside to coming back; its response time is counted for the class the job had when it
 * left the outside (cls0). No fork-join node and no finite capacity in a routed run. */
static void cycle_end(sim_t *S, int32_t task, double t, double r);

/* job `task`, at the outside as class cls, starts a cycle at t */
static void start_cycle(sim_t *S, int32_t task, double t) {
    task_t *j = &S->T[task];
    int64_t K1 = S->K + 1;
    j->cls0 = j->cls;
    j->t_cycle = t;
    int64_t s = route_draw(S, j->cls * K1 + S->K);
    j->cls = (int32_t)(s / K1);
    if (s % K1 < S->K) {
        j->pos = (int32_t)(s % K1);
        enter_node(S, task, t);
    } else {
        cycle_end(S, task, t, 0.0); /* straight back outside: a zero response */
    }
}

/* job `task` is back outside as class cls after a cycle of response time r */
static void cycle_end(sim_t *S, int32_t task, double t, double r) {
    task_t *j = &S->T[task];
    int64_t c0 = j->cls0, c = j->cls;
    S->a_done[c0] += 1.0;
    S->a_rsum[c0] += r;
    hist_add(S, c0, r);
    if (S->cls_open[c]) task_free(S, task);
    else if (S->cls_think[c] > 0.0)
        push(S, t - S->cls_think[c] * log(u01(&S->rng)), EV_THINK, task, -1, 0);
    else start_cycle(S, task, t); /* terminates: a class without think time has demand */
}

static void leave_routed(sim_t *S, int32_t task, double t) {
    task_t *j = &S->T[task];
    int64_t K1 = S->K + 1, i = j->cls * S->K + j->pos;
    S->a_visits[i] += 1.0;
    S->a_resid[i] += t - j->t_node;
    int64_t s = route_draw(S, j->cls * K1 + j->pos);
    j->cls = (int32_t)(s / K1);
    if (s % K1 < S->K) {
        j->pos = (int32_t)(s % K1);
        enter_node(S, task, t);
    } else {
        cycle_end(S, task, t, t - j->t_cycle);
    }
}

/* The finite-capacity station a closed job goes to when it leaves its current node, or -1: an
 * unlimited node, its think time, or its own station again (a route of one station without
 * think time: leaving and re-entering changes nothing, as a self-loop in a Markov chain). */
static int64_t next_capped(const sim_t *S, const task_t *j) {
    int64_t c = j->cls, np = j->pos + 1;
    if (np >= S->route_len[c]) {
        if (S->cls_think[c] > 0.0) return -1;
        np = 0;
    }
    if (np == j->pos) return -1;
    int64_t k = S->routes[S->route_off[c] + np]; /* never a routed run: no capacities */
    if (S->node_kind[k] != QNS_NODE_STATION) return -1;
    int64_t p = S->node_first[k];
    return S->st_cap[p] > 0 ? p : -1;
}

/* a closed job whose next station is full waits for room there (blocking after service) */
static int blocked_ahead(sim_t *S, int32_t task, int how) {
    task_t *j = &S->T[task];
    if (S->cls_open[j->cls]) return 0;
    int64_t q = next_capped(S, j);
    if (q < 0 || S->st[q].n < S->st_cap[q]) return 0;
    j->blk = how;
    fifo_push(S, &S->st[q].bq, task);
    return 1;
}

static void leave_node(sim_t *S, int32_t task, double t) {
    if (S->routed) {
        leave_routed(S, task, t);
        return;
    }
    task_t *j = &S->T[task];
    int64_t c = j->cls, k = S->routes[S->route_off[c] + j->pos];
    int64_t i = c * S->K + k;
    if (S->node_kind[k] != QNS_NODE_STATION) {
        if (S->has_cap && blocked_ahead(S, task, BLK_FORKJOIN)) return; /* waits at the join */
        bump(S->ncnt, S->nlast, S->a_narea, i, t, -1);
    }
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
    int64_t c = S->T[task].cls, k = node_at(S, &S->T[task]);
    if (S->node_kind[k] == QNS_NODE_STATION) { /* its jobs are counted at the station */
        int64_t p = S->node_first[k];
        if (S->has_cap && S->st_cap[p] > 0 && S->st[p].n >= S->st_cap[p]) {
            if (S->cls_open[c]) { /* lost */
                S->a_lost[c * S->K + k] += 1.0;
                task_free(S, task);
            } else { /* from its think time: it waits at the terminal */
                S->T[task].blk = BLK_TERMINAL;
                fifo_push(S, &S->st[p].bq, task);
            }
            return;
        }
        S->T[task].t_node = t;
        st_arrive(S, task, p, t);
        return;
    }
    S->T[task].t_node = t;
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
        S->T[sub].t_node = t;
        st_arrive(S, sub, p, t);
    }
    if (need <= 0) leave_node(S, task, t);
}

static void station_done(sim_t *S, int32_t task, int64_t p, double t) {
    int32_t par = S->T[task].parent;
    /* blocked after service: it keeps its place and its server */
    int hold = S->has_cap && par < 0 && blocked_ahead(S, task, BLK_STATION);
    st_end(S, task, p, t, hold);
    if (hold) return;
    if (par < 0) {
        leave_node(S, task, t);
        if (S->has_cap && S->st_cap[p] > 0) release(S, p, t);
        return;
    }
    uint64_t gen = S->T[task].gen;
    task_free(S, task);
    task_t *pj = &S->T[par];
    if (pj->parent < 0 && pj->gen == gen && pj->need > 0 && --pj->need == 0) leave_node(S, par, t);
}

/* Station p has room: the jobs blocked on it move in, in the order they blocked; each frees a
 * place where it was, which may release a job blocked there in turn (a cascade). */
static void release(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    while (s->bq.len > 0 && s->n < S->st_cap[p] && S->err == QNS_OK) {
        int32_t w = fifo_pop(&s->bq);
        task_t *j = &S->T[w];
        int how = j->blk;
        j->blk = BLK_NONE;
        if (how == BLK_TERMINAL) {
            enter_node(S, w, t);
        } else if (how == BLK_FORKJOIN) {
            leave_node(S, w, t);
        } else {
            int64_t from = S->node_first[node_at(S, j)];
            st_unhold(S, w, from, t);
            leave_node(S, w, t);
            if (S->st_cap[from] > 0) release(S, from, t);
        }
    }
}

/* ---------------------------------------------------------------- batches */
static void flush(sim_t *S, double t) {
    int64_t CP = S->C * S->P, CK = S->C * S->K;
    for (int64_t p = 0; p < S->P; p++)
        if (S->st_kind[p] == QNS_ST_PS) ps_sync(S, p, t);
    for (int64_t i = 0; i < CP; i++) {
        S->a_area[i] += (double)S->cnt[i] * (t - S->last[i]);
        S->last[i] = t;
        if (S->st_kind[i % S->P] == QNS_ST_PS) {
            ps_busy(S, i, i % S->P, 0);
        } else {
            S->a_busy[i] += (double)S->busyc[i] * (t - S->lastb[i]);
            S->lastb[i] = t;
        }
    }
    for (int64_t i = 0; i < CK; i++) {
        S->a_narea[i] += (double)S->ncnt[i] * (t - S->nlast[i]);
        S->nlast[i] = t;
    }
}

/* the first node of the route with room (closed jobs starting without think time) */
static int32_t first_room(const sim_t *S, int64_t c) {
    int64_t off = S->route_off[c], len = S->route_len[c];
    for (int64_t pos = 0; pos < len; pos++) {
        int64_t k = S->routes[off + pos];
        if (S->node_kind[k] != QNS_NODE_STATION) return (int32_t)pos;
        int64_t p = S->node_first[k];
        if (S->st_cap[p] == 0 || S->st[p].n < S->st_cap[p]) return (int32_t)pos;
    }
    return 0; /* all full: it waits at the terminal for its first station */
}

int qns_abi_version(void) { return QNS_ABI_VERSION; }

int qns_run(int64_t C, int64_t K, int64_t P, const int64_t *node_kind, const int64_t *node_first,
            const int64_t *node_count, const int64_t *node_k, const int64_t *node_fan,
            const int64_t *st_kind, const int64_t *st_servers, const int64_t *st_ld_off,
            const int64_t *st_ld_len, const double *ld_rates, const int64_t *st_cap,
            const int64_t *cls_open, const int64_t *cls_pop, const double *cls_think,
            const double *cls_rate, const int64_t *route_off, const int64_t *route_len,
            const int64_t *routes, int64_t routed, const int64_t *rt_off, const double *rt_cum,
            const int64_t *rt_dst, const int64_t *cls_level, int64_t L, const int64_t *svc_kind,
            const double *svc_mean, const double *svc_p1, const double *svc_p2,
            const int64_t *svc_tab_off, const int64_t *svc_tab_len, const double *svc_tab,
            uint64_t seed, uint64_t stream, double t_warm, double t_batch, int64_t B,
            double r_scale, int64_t NQ, const double *qs, int64_t max_tasks, double *o_done,
            double *o_rsum, double *o_quant, double *o_area, double *o_busy, double *o_narea,
            double *o_visits, double *o_resid, double *o_arr, double *o_lost,
            int64_t *o_events) {
    sim_t S0;
    sim_t *S = &S0;
    memset(S, 0, sizeof *S);
    S->C = C, S->K = K, S->P = P, S->L = L > 0 ? L : 1;
    S->node_kind = node_kind, S->node_first = node_first, S->node_count = node_count;
    S->node_k = node_k, S->node_fan = node_fan;
    S->st_kind = st_kind, S->st_servers = st_servers, S->st_ld_off = st_ld_off;
    S->st_ld_len = st_ld_len, S->ld_rates = ld_rates, S->st_cap = st_cap;
    S->cls_open = cls_open, S->cls_think = cls_think, S->cls_rate = cls_rate;
    S->cls_level = cls_level;
    S->route_off = route_off, S->route_len = route_len, S->routes = routes;
    S->routed = routed != 0, S->rt_off = rt_off, S->rt_cum = rt_cum, S->rt_dst = rt_dst;
    S->svc_kind = svc_kind, S->svc_mean = svc_mean, S->svc_p1 = svc_p1, S->svc_p2 = svc_p2;
    S->svc_tab_off = svc_tab_off, S->svc_tab_len = svc_tab_len, S->svc_tab = svc_tab;
    S->r_scale = r_scale > 0.0 ? r_scale : 1.0;
    S->max_tasks = max_tasks;
    S->free_head = -1;
    for (int64_t p = 0; p < P; p++) S->has_cap |= st_cap[p] > 0;
    rng_seed(&S->rng, seed, stream);

    int64_t CP = C * P, CK = C * K, pop = 0;
    for (int64_t c = 0; c < C; c++) pop += cls_open[c] ? 0 : cls_pop[c];
    S->capt = pop + 64;
    if (S->capt > max_tasks) S->capt = max_tasks > pop ? max_tasks : pop;
    S->T = malloc((size_t)S->capt * sizeof(task_t));
    S->st = calloc((size_t)P, sizeof(st_t));
    S->cnt = calloc((size_t)(2 * CP + CK), sizeof(int64_t));
    S->last = calloc((size_t)(3 * CP + CK), sizeof(double));
    double *scratch = calloc((size_t)(3 * C + 2 * CP + 4 * CK), sizeof(double));
    S->hist = malloc((size_t)(C * HB + 2 * C) * sizeof(double));
    int rc = QNS_OK;
    if (!S->T || !S->st || !S->cnt || !S->last || !scratch || !S->hist) {
        rc = QNS_ENOMEM;
        goto out;
    }
    for (int64_t p = 0; p < P; p++) { /* waiting lines per priority level, servers in use */
        if (st_kind[p] != QNS_ST_HOL && st_kind[p] != QNS_ST_PRIO) continue;
        S->st[p].lv = calloc((size_t)S->L, sizeof(fifo_t));
        S->st[p].srv = malloc((size_t)st_servers[p] * sizeof(int32_t));
        if (!S->st[p].lv || !S->st[p].srv) {
            rc = QNS_ENOMEM;
            goto out;
        }
    }
    S->busyc = S->cnt + CP, S->ncnt = S->cnt + 2 * CP;
    S->lastb = S->last + CP, S->nlast = S->last + 2 * CP, S->gl = S->nlast + CK;
    S->hmin = S->hist + C * HB, S->hmax = S->hmin + C;
    /* warm-up accumulates into the scratch buffers */
    S->a_done = scratch, S->a_rsum = scratch + C, S->a_arr = scratch + 2 * C;
    S->a_area = scratch + 3 * C, S->a_busy = S->a_area + CP, S->a_narea = S->a_busy + CP;
    S->a_visits = S->a_narea + CK, S->a_resid = S->a_visits + CK, S->a_lost = S->a_resid + CK;
    hist_reset(S);
    memset(o_done, 0, (size_t)(B * C) * sizeof(double));
    memset(o_rsum, 0, (size_t)(B * C) * sizeof(double));
    memset(o_arr, 0, (size_t)(B * C) * sizeof(double));
    memset(o_area, 0, (size_t)(B * CP) * sizeof(double));
    memset(o_busy, 0, (size_t)(B * CP) * sizeof(double));
    memset(o_narea, 0, (size_t)(B * CK) * sizeof(double));
    memset(o_visits, 0, (size_t)(B * CK) * sizeof(double));
    memset(o_resid, 0, (size_t)(B * CK) * sizeof(double));
    memset(o_lost, 0, (size_t)(B * CK) * sizeof(double));

    /* initial state: closed jobs start thinking, or without think time at the first node of
     * their route with room (stations filled in route order) */
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
            if (cls_think[c] > 0.0) {
                push(S, -cls_think[c] * log(u01(&S->rng)), EV_THINK, j, -1, 0);
            } else if (S->routed) {
                start_cycle(S, j, 0.0);
            } else if (route_len[c] > 0) {
                if (S->has_cap) S->T[j].pos = first_room(S, c);
                enter_node(S, j, 0.0);
            }
        }
    }

    int64_t b = -1, events = 0;
    double bound = t_warm;
    while (S->err == QNS_OK) {
        if (S->heap.n == 0) { /* nothing will ever happen: every job is blocked */
            S->err = QNS_EDEADLOCK;
            break;
        }
        double tn = S->heap.a[0].t;
        while (tn >= bound && b < B) { /* close the warm-up or batch b at `bound` */
            flush(S, bound);
            if (b >= 0)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t q = 0; q < NQ; q++)
                        o_quant[(b * C + c) * NQ + q] = hist_quantile(S, c, qs[q]);
            hist_reset(S);
            b++;
            if (b == B) break;
            S->a_done = o_done + b * C, S->a_rsum = o_rsum + b * C, S->a_arr = o_arr + b * C;
            S->a_area = o_area + b * CP, S->a_busy = o_busy + b * CP;
            S->a_narea = o_narea + b * CK, S->a_visits = o_visits + b * CK;
            S->a_resid = o_resid + b * CK, S->a_lost = o_lost + b * CK;
            bound = t_warm + (double)(b + 1) * t_batch;
        }
        if (b >= B) break;
        ev_t e = heap_pop(&S->heap);
        switch (e.type) {
        case EV_DONE: {
            int64_t kd = st_kind[e.where];
            if (kd >= QNS_ST_LD &&
                e.epoch != (kd <= QNS_ST_PS ? S->st[e.where].epoch : S->T[e.task].ep))
                continue; /* superseded: the station's speed changed or the job was interrupted */
            events++;
            station_done(S, e.task, e.where, e.t);
            break;
        }
        case EV_THINK:
            events++;
            S->T[e.task].t_cycle = e.t;
            S->T[e.task].pos = 0;
            if (S->routed) start_cycle(S, e.task, e.t);
            else if (route_len[S->T[e.task].cls] > 0) enter_node(S, e.task, e.t);
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
            S->a_arr[c] += 1.0;
            push(S, e.t - log(u01(&S->rng)) / cls_rate[c], EV_ARRIVAL, (int32_t)c, -1, 0);
            int32_t j = task_alloc(S);
            if (j < 0) break;
            S->T[j].cls = (int32_t)c;
            S->T[j].parent = -1;
            S->T[j].pos = 0;
            S->T[j].t_cycle = e.t;
            if (S->routed) start_cycle(S, j, e.t);
            else if (route_len[c] > 0) enter_node(S, j, e.t);
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
        for (int64_t p = 0; p < P; p++) {
            st_t *s = &S->st[p];
            free(s->f.q);
            free(s->bq.q);
            free(s->h);
            free(s->srv);
            if (s->lv)
                for (int64_t l = 0; l < S->L; l++) free(s->lv[l].q);
            free(s->lv);
        }
    free(S->st);
    free(S->T);
    free(S->heap.a);
    free(S->cnt);
    free(S->last);
    free(scratch);
    free(S->hist);
    return rc;
}
