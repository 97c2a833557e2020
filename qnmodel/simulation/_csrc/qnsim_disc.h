/* qnsim_disc.h: the scheduling disciplines of a station (included by qnsim.c only).
 *
 * Three entry points, switched on the station kind:
 *   st_arrive(task, p, t)      a job joins station p;
 *   st_end(task, p, t, hold)   its service is complete: it leaves (hold = 0) or stays blocked
 *                              after service (hold = 1), keeping its place and its server;
 *   st_unhold(task, p, t)      a job blocked after service leaves.
 * A blocked job holds one server: at a FCFS, HOL or PRIO-PR station with m servers the others
 * go on; a single-server station (PS, LCFS-PR, a rate curve) serves no one meanwhile, as a
 * blocked server in "blocking after service" (I. F. Akyildiz, IEEE TSE 14(4):418-428, 1988);
 * a PS station with m servers shares the m - b servers left among the jobs in service.
 *
 * Processor sharing (L. Kleinrock, "Queueing Systems", vol. 2, Wiley 1976, sec. 4.4): every job
 * present receives work at the rate phi(n) = r(n) / n; the station keeps the virtual time V (the
 * work one job in service has received since the start) and each job's virtual finish time
 * V_arrival + work in a heap, so the next completion is the heap's least, at
 * t + (vf_min - V) / phi. LCFS-PR and PRIO-PR keep the remaining work of an interrupted job and
 * resume it (preemptive resume; Kleinrock vol. 2 sec. 3.7 for priorities). */
#ifndef QNSIM_DISC_H
#define QNSIM_DISC_H

#include "qnsim_state.h"

/* ---------------------------------------------------------------- FCFS, HOL, PRIO-PR */
static inline void serve(sim_t *S, int32_t h, int64_t p, double t) {
    int64_t i = S->T[h].cls * S->P + p;
    bump(S->busyc, S->lastb, S->a_busy, i, t, +1);
    push(S, t + sample(S, S->T[h].cls, p), EV_DONE, h, (int32_t)p, 0);
}

/* FCFS and HOL: a server is free; take the next waiting job, if any */
static void queue_next(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    s->busy--;
    if (S->st_kind[p] == QNS_ST_QUEUE) {
        if (s->f.len > 0) {
            s->busy++;
            serve(S, fifo_pop(&s->f), p, t);
        }
        return;
    }
    for (int64_t l = 0; l < S->L; l++)
        if (s->lv[l].len > 0) {
            s->busy++;
            serve(S, fifo_pop(&s->lv[l]), p, t);
            return;
        }
}

static void prio_start(sim_t *S, int32_t h, int64_t p, double t) {
    st_t *s = &S->st[p];
    task_t *j = &S->T[h];
    s->srv[s->nsrv++] = h;
    bump(S->busyc, S->lastb, S->a_busy, j->cls * S->P + p, t, +1);
    j->rem += t; /* from remaining work to finish time */
    push(S, j->rem, EV_DONE, h, (int32_t)p, ++j->ep);
}

/* PRIO-PR: start the most urgent waiting jobs on the free servers */
static void prio_fill(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    int64_t l = 0;
    while (s->nsrv + s->nblk < S->st_servers[p]) {
        while (l < S->L && s->lv[l].len == 0) l++;
        if (l == S->L) return;
        prio_start(S, fifo_pop(&s->lv[l]), p, t);
    }
}

static void prio_arrive(sim_t *S, int32_t task, int64_t p, double t) {
    st_t *s = &S->st[p];
    task_t *j = &S->T[task];
    int64_t lev = S->cls_level[j->cls];
    j->rem = sample(S, j->cls, p);
    if (s->nsrv + s->nblk < S->st_servers[p]) {
        prio_start(S, task, p, t);
        return;
    }
    /* all servers taken: interrupt the least urgent job in service (the latest arrival among
     * them) if it is less urgent than this one; it waits at the head of its level */
    int64_t v = -1;
    for (int64_t x = 0; x < s->nsrv; x++) {
        const task_t *a = &S->T[s->srv[x]];
        if (v < 0) {
            v = x;
            continue;
        }
        const task_t *b = &S->T[s->srv[v]];
        int64_t la = S->cls_level[a->cls], lb = S->cls_level[b->cls];
        if (la > lb || (la == lb && a->t_node > b->t_node)) v = x;
    }
    if (v < 0 || S->cls_level[S->T[s->srv[v]].cls] <= lev) {
        fifo_push(S, &s->lv[lev], task);
        return;
    }
    int32_t w = s->srv[v];
    task_t *wj = &S->T[w];
    s->srv[v] = s->srv[--s->nsrv];
    wj->rem = wj->rem > t ? wj->rem - t : 0.0; /* from finish time to remaining work */
    wj->ep++;
    bump(S->busyc, S->lastb, S->a_busy, wj->cls * S->P + p, t, -1);
    fifo_push_front(S, &s->lv[S->cls_level[wj->cls]], w);
    prio_start(S, task, p, t);
}

static void prio_remove(st_t *s, int32_t task) {
    for (int64_t x = 0; x < s->nsrv; x++)
        if (s->srv[x] == task) {
            s->srv[x] = s->srv[--s->nsrv];
            return;
        }
}

/* ---------------------------------------------------------------- load-dependent FCFS */
static void ld_start_head(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    int32_t h = s->f.q[s->f.head];
    int64_t ch = S->T[h].cls;
    s->work = sample(S, ch, p);
    s->t_upd = t;
    bump(S->busyc, S->lastb, S->a_busy, ch * S->P + p, t, +1);
    push(S, t + s->work / speed(S, p, s->n), EV_DONE, h, (int32_t)p, ++s->epoch);
}

/* ---------------------------------------------------------------- LCFS-PR */
static void lcfs_serve(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    int32_t h = fifo_back(&s->f);
    task_t *j = &S->T[h];
    bump(S->busyc, S->lastb, S->a_busy, j->cls * S->P + p, t, +1);
    s->t_upd = t;
    s->spd = speed(S, p, s->n);
    push(S, t + j->rem / s->spd, EV_DONE, h, (int32_t)p, ++j->ep);
}

/* ---------------------------------------------------------------- PS */
static inline void ps_sync(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    double dt = t - s->t_v;
    s->V += s->phi * dt;
    s->G += s->g * dt;
    s->t_v = t;
}

/* busy integral of class c at p up to now (after ps_sync), then change its jobs in service */
static inline void ps_busy(sim_t *S, int64_t i, int64_t p, int d) {
    double G = S->st[p].G;
    S->a_busy[i] += (double)S->busyc[i] * (G - S->gl[i]);
    S->gl[i] = G;
    S->busyc[i] += d;
}

static void ps_rates(sim_t *S, int64_t p) {
    st_t *s = &S->st[p];
    int64_t na = s->hn, m = S->st_servers[p];
    if (na == 0) {
        s->phi = s->g = 0.0;
    } else if (s->nblk == 0) {
        s->phi = speed(S, p, na) / (double)na;
        s->g = m > 1 ? s->phi : 1.0 / (double)na; /* m servers: servers in use; else time */
    } else if (m > 1) {
        int64_t free = m - s->nblk, use = na < free ? na : free;
        s->phi = s->g = use > 0 ? (double)use / (double)na : 0.0;
    } else {
        s->phi = s->g = 0.0; /* its one server is held by a blocked job */
    }
}

static void ps_schedule(sim_t *S, int64_t p, double t) {
    st_t *s = &S->st[p];
    ++s->epoch;
    if (s->hn == 0 || !(s->phi > 0.0)) return;
    double dv = s->h[0].vf - s->V;
    push(S, t + (dv > 0.0 ? dv : 0.0) / s->phi, EV_DONE, s->h[0].task, (int32_t)p, s->epoch);
}

static void ps_insert(sim_t *S, st_t *s, double vf, int32_t task) {
    if (s->hn == s->hcap) {
        int64_t nc = s->hcap ? 2 * s->hcap : 16;
        psn_t *nh = realloc(s->h, (size_t)nc * sizeof(psn_t));
        if (!nh) {
            S->err = QNS_ENOMEM;
            return;
        }
        s->h = nh;
        s->hcap = nc;
    }
    int64_t i = s->hn++;
    while (i > 0) {
        int64_t up = (i - 1) >> 1;
        if (s->h[up].vf <= vf) break;
        s->h[i] = s->h[up];
        i = up;
    }
    s->h[i].vf = vf;
    s->h[i].task = task;
}

static void ps_pop(st_t *s) {
    psn_t last = s->h[--s->hn];
    int64_t i = 0, n = s->hn;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && s->h[c + 1].vf < s->h[c].vf) c++;
        if (last.vf <= s->h[c].vf) break;
        s->h[i] = s->h[c];
        i = c;
    }
    if (n > 0) s->h[i] = last;
}

/* ---------------------------------------------------------------- entry points */
static void st_arrive_other(sim_t *S, int32_t task, int64_t p, double t) {
    int64_t c = S->T[task].cls, i = c * S->P + p;
    st_t *s = &S->st[p];
    bump(S->cnt, S->last, S->a_area, i, t, +1);
    s->n++;
    switch (S->st_kind[p]) {
    case QNS_ST_DELAY:
        serve(S, task, p, t);
        break;
    case QNS_ST_HOL:
        if (s->busy < S->st_servers[p]) {
            s->busy++;
            serve(S, task, p, t);
        } else {
            fifo_push(S, &s->lv[S->cls_level[c]], task);
        }
        break;
    case QNS_ST_LD: /* the head is served at speed r(n) */
        fifo_push(S, &s->f, task);
        if (s->n == 1) {
            ld_start_head(S, p, t);
        } else if (s->nblk == 0) {
            double v_old = speed(S, p, s->n - 1), v_new = speed(S, p, s->n);
            s->work -= (t - s->t_upd) * v_old;
            if (s->work < 0.0) s->work = 0.0;
            s->t_upd = t;
            if (v_new != v_old)
                push(S, t + s->work / v_new, EV_DONE, s->f.q[s->f.head], (int32_t)p, ++s->epoch);
        }
        break;
    case QNS_ST_PS:
        ps_sync(S, p, t);
        ps_busy(S, i, p, +1);
        ps_insert(S, s, s->V + sample(S, c, p), task);
        ps_rates(S, p);
        ps_schedule(S, p, t);
        break;
    case QNS_ST_LCFS:
        S->T[task].rem = sample(S, c, p);
        if (s->nblk == 0 && s->f.len > 0) { /* interrupt the job in service */
            int32_t w = fifo_back(&s->f);
            task_t *wj = &S->T[w];
            wj->rem -= (t - s->t_upd) * s->spd;
            if (wj->rem < 0.0) wj->rem = 0.0;
            wj->ep++;
            bump(S->busyc, S->lastb, S->a_busy, wj->cls * S->P + p, t, -1);
        }
        fifo_push(S, &s->f, task);
        if (s->nblk == 0) lcfs_serve(S, p, t);
        break;
    default: /* QNS_ST_PRIO */
        prio_arrive(S, task, p, t);
        break;
    }
}

static void st_end_other(sim_t *S, int32_t task, int64_t p, double t, int hold) {
    int64_t c = S->T[task].cls, i = c * S->P + p;
    st_t *s = &S->st[p];
    int64_t kind = S->st_kind[p];
    if (kind == QNS_ST_PS) {
        ps_sync(S, p, t);
        ps_pop(s); /* the least virtual finish: `task` */
        ps_busy(S, i, p, -1);
    } else {
        bump(S->busyc, S->lastb, S->a_busy, i, t, -1);
        if (kind == QNS_ST_LCFS) fifo_pop_back(&s->f);
        else if (kind == QNS_ST_PRIO) prio_remove(s, task);
    }
    if (hold) {
        s->nblk++;
        if (kind == QNS_ST_PS) {
            ps_rates(S, p);
            ps_schedule(S, p, t);
        }
        return;
    }
    bump(S->cnt, S->last, S->a_area, i, t, -1);
    s->n--;
    switch (kind) {
    case QNS_ST_QUEUE:
    case QNS_ST_HOL:
        queue_next(S, p, t);
        break;
    case QNS_ST_DELAY:
        break;
    case QNS_ST_LD:
        fifo_pop(&s->f); /* the head, which is `task` */
        if (s->n > 0) ld_start_head(S, p, t);
        break;
    case QNS_ST_PS:
        ps_rates(S, p);
        ps_schedule(S, p, t);
        break;
    case QNS_ST_LCFS:
        if (s->f.len > 0) lcfs_serve(S, p, t);
        break;
    default:
        prio_fill(S, p, t);
        break;
    }
}

/* FCFS stations, the common case, take the short way */
static inline void st_arrive(sim_t *S, int32_t task, int64_t p, double t) {
    if (S->st_kind[p] != QNS_ST_QUEUE) {
        st_arrive_other(S, task, p, t);
        return;
    }
    int64_t i = S->T[task].cls * S->P + p;
    st_t *s = &S->st[p];
    bump(S->cnt, S->last, S->a_area, i, t, +1);
    s->n++;
    if (s->busy < S->st_servers[p]) {
        s->busy++;
        serve(S, task, p, t);
    } else {
        fifo_push(S, &s->f, task);
    }
}

static inline void st_end(sim_t *S, int32_t task, int64_t p, double t, int hold) {
    if (S->st_kind[p] != QNS_ST_QUEUE || hold) {
        st_end_other(S, task, p, t, hold);
        return;
    }
    int64_t i = S->T[task].cls * S->P + p;
    st_t *s = &S->st[p];
    bump(S->cnt, S->last, S->a_area, i, t, -1);
    s->n--;
    if (s->f.len == 0) {
        bump(S->busyc, S->lastb, S->a_busy, i, t, -1);
        s->busy--;
        return;
    }
    int32_t h = fifo_pop(&s->f); /* the server goes to the next job */
    int64_t ch = S->T[h].cls, ih = ch * S->P + p;
    if (ih != i) { /* (a job of the same class keeps the class's busy count as it is) */
        bump(S->busyc, S->lastb, S->a_busy, i, t, -1);
        bump(S->busyc, S->lastb, S->a_busy, ih, t, +1);
    }
    push(S, t + sample(S, ch, p), EV_DONE, h, (int32_t)p, 0);
}

static void st_unhold(sim_t *S, int32_t task, int64_t p, double t) {
    int64_t i = S->T[task].cls * S->P + p;
    st_t *s = &S->st[p];
    if (S->st_kind[p] == QNS_ST_PS) ps_sync(S, p, t);
    bump(S->cnt, S->last, S->a_area, i, t, -1);
    s->n--;
    s->nblk--;
    switch (S->st_kind[p]) {
    case QNS_ST_QUEUE:
    case QNS_ST_HOL:
        queue_next(S, p, t);
        break;
    case QNS_ST_DELAY:
        break;
    case QNS_ST_LD:
        fifo_pop(&s->f); /* the blocked job was the head */
        if (s->n > 0) ld_start_head(S, p, t);
        break;
    case QNS_ST_PS:
        ps_rates(S, p);
        ps_schedule(S, p, t);
        break;
    case QNS_ST_LCFS:
        if (s->f.len > 0) lcfs_serve(S, p, t);
        break;
    default:
        prio_fill(S, p, t);
        break;
    }
}

#endif
