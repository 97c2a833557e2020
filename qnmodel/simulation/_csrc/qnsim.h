/* qnsim: compiled discrete-event simulation of closed/open/mixed multi-class queueing networks
 * with FCFS (one or m servers), infinite-server, load-dependent, processor-sharing, LCFS-PR,
 * static-priority (non-preemptive and preemptive-resume) and fork-join (k of n) elements, and
 * finite capacities (open jobs lost, closed jobs blocked after service).
 * Loaded with ctypes by qnmodel/simulation/_engine.py; see that module for the array layout.
 *
 * Every array argument is C-contiguous; sizes are given by C (classes), K (top-level nodes),
 * P (physical stations: non-fork-join nodes and every fork-join branch), B (batches), NQ
 * (requested quantiles). Outputs are written for every batch b = 0..B-1 after the warm-up. */
#ifndef QNSIM_H
#define QNSIM_H

#include <stdint.h>

#if defined(_WIN32)
#define QNS_API __declspec(dllexport)
#else
#define QNS_API __attribute__((visibility("default")))
#endif

#define QNS_ABI_VERSION 4
/* largest fork-join with a fan-out below its branch count (random subsets) */
#define QNS_MAX_FAN 64

/* node kinds */
#define QNS_NODE_STATION 0
#define QNS_NODE_FORKJOIN 1
/* station kinds (the order matters: kinds >= QNS_ST_LD check the epoch of completions) */
#define QNS_ST_QUEUE 0 /* FCFS, st_servers[p] identical servers */
#define QNS_ST_DELAY 1 /* infinite server */
#define QNS_ST_HOL 2   /* static priority, non-preemptive (FCFS within a level), m servers */
#define QNS_ST_LD 3    /* FCFS, one job served at speed r(j) = rates[min(j,len)-1], j present */
#define QNS_ST_PS 4    /* processor sharing: the total speed r(j) shared equally by the j jobs
                        * in service (m servers: the curve is min(j, m)) */
#define QNS_ST_LCFS 5  /* LCFS preemptive resume, one server at speed r(j) */
#define QNS_ST_PRIO 6  /* static priority, preemptive resume, m servers */
/* service distributions */
#define QNS_SVC_EXP 0
#define QNS_SVC_DET 1
#define QNS_SVC_LOGN 2 /* p1 = mu, p2 = sigma of the underlying normal */
#define QNS_SVC_EMP 3  /* table of (cdf, lo, hi) triples, sampled inverse-CDF, linear in buckets */

/* return codes */
#define QNS_OK 0
#define QNS_ENOMEM (-1)
#define QNS_ETOOMANY (-2) /* more than max_tasks jobs in the system: an unstable open class */
#define QNS_EDEADLOCK (-3) /* no event left: every closed job blocked (finite capacities) */

QNS_API int qns_abi_version(void);

QNS_API int qns_run(
    /* sizes */
    int64_t C, int64_t K, int64_t P,
    /* nodes (K) */
    const int64_t *node_kind, const int64_t *node_first, const int64_t *node_count,
    const int64_t *node_k, const int64_t *node_fan,
    /* physical stations (P) */
    const int64_t *st_kind, const int64_t *st_servers, const int64_t *st_ld_off,
    const int64_t *st_ld_len, const double *ld_rates,
    const int64_t *st_cap, /* most jobs held (in service, waiting or blocked); 0 unlimited */
    /* classes (C) */
    const int64_t *cls_open, const int64_t *cls_pop, const double *cls_think,
    const double *cls_rate, const int64_t *route_off, const int64_t *route_len,
    const int64_t *routes,
    /* routing (routed != 0): state s = c (K + 1) + k, node K the outside; row s holds entries
     * rt_off[s] .. rt_off[s + 1] - 1 (rt_off has C (K + 1) + 1 entries), each a destination
     * state rt_dst and the row's cumulative probability rt_cum up to it (the last one 1) */
    int64_t routed, const int64_t *rt_off, const double *rt_cum, const int64_t *rt_dst,
    const int64_t *cls_level, int64_t L, /* priority level 0..L-1 of each class, 0 first */
    /* service distribution of class c at station p, index c*P + p */
    const int64_t *svc_kind, const double *svc_mean, const double *svc_p1, const double *svc_p2,
    const int64_t *svc_tab_off, const int64_t *svc_tab_len, const double *svc_tab,
    /* run control */
    uint64_t seed, uint64_t stream, double t_warm, double t_batch, int64_t B, double r_scale,
    int64_t NQ, const double *qs, int64_t max_tasks,
    /* outputs */
    double *o_done,   /* (B, C)  completed responses (class throughput x t_batch) */
    double *o_rsum,   /* (B, C)  sum of their response times */
    double *o_quant,  /* (B, C, NQ) response-time quantiles of the batch */
    double *o_area,   /* (B, C, P) time integral of class-c jobs at station p */
    double *o_busy,   /* (B, C, P) time integral of servers busy with class c at p */
    double *o_narea,  /* (B, C, K) time integral of class-c jobs at fork-join node k (parents);
                       * 0 for other nodes, whose jobs are in o_area */
    double *o_visits, /* (B, C, K) completed visits of class c to node k */
    double *o_resid,  /* (B, C, K) sum of their residence times */
    double *o_arr,    /* (B, C)  arrivals of open classes */
    double *o_lost,   /* (B, C, K) open jobs lost at node k (found it full) */
    int64_t *o_events /* (1) events processed, warm-up included */
);

#endif
