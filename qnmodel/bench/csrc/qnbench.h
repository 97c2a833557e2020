/* qnbench: shared declarations (configuration, engines, workers, harness). */
#ifndef QNBENCH_H
#define QNBENCH_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define QNB_VERSION "0.1.0"
#define QNB_SCHEMA_VERSION 1
#define QNB_MAX_LIST 64
#define QNB_PATH_MAX 4096

/* ---- configuration: one struct, filled from the option table (options.c) ---- */
struct qnb_list {
    int n;
    long long v[QNB_MAX_LIST];
};

struct qnb_config {
    char engine[32];
    struct qnb_list jobs;
    struct qnb_list bs;
    char rw[16];
    long long size;
    double runtime;
    double warmup;
    long long ops;
    long long io_size;
    long long repeat;
    double interval;
    double think;
    char think_dist[8];
    long long seed;
    char dir[QNB_PATH_MAX];
    double spin;
    /* emu */
    double dev_latency;
    double dev_rate;
    long long devices;
    long long dev_servers;
    char dev_select[16];
    char dev_dist[8];
    /* file */
    char access[8];
    char workers[8];
    long long end_fsync;
    long long fsync_every;
    long long histogram;
    long long drop_caches;
    /* mem, cpu */
    char mem_op[64];
    char cpu_op[64];
    long long stripe_width;
    /* tcp */
    char tcp_role[8];
    char host[256];
    long long port;
    char serve[8];
    /* stripe */
    long long raid;
    long long members;
    char member[8];
    long long chunk;
    long long verify;
    /* nfs */
    char nfs_url[512];
    char nfs_prefix[128];
    long long rsize;
    long long wsize;
    long long nfs_cache;
    /* multi-node placement (netns.c): rank i joins the i-th network namespace */
    char netns[1024];
    /* workloads (workload.c, engines/meta.c): open loop, read/write mix, metadata, shared file */
    double rate;
    char arrivals[16];
    long long rwmix;
    char file_layout[16];
    long long files;
    char meta_tree[8];
    char meta_op[64];
    long long meta_bytes;
    /* misc */
    long long progress;
    long long realtime;
    unsigned char given[128]; /* given[i]: option i of the table was on the command line */
};

/* ---- units.c: units, and THE home of qnbench's numeric limits and checked conversions ----
 * Every time is kept in int64 nanoseconds. A time option is refused (usage error) unless it is 0
 * or between 1 ns and QNB_MAX_SECONDS, and every quantity derived from options (an emulated
 * request's service time, an open-loop client's mean time between arrivals) is held to the
 * same range by the checks of check.c, so with the saturating helpers below no conversion or
 * sum of times can overflow. */
#define QNB_MAX_SECONDS 1e6 /* longest time an option or an emulated request may take: 11.6 days */
#define QNB_NS_SATURATED (INT64_C(1) << 62) /* ~146 years: what a saturated time reads */
#define QNB_MAX_SAMPLES 200000 /* samples[] entries of one run's document, over all points */
#define QNB_MAX_POINTS 100000   /* points of one sweep (jobs x bs x operations x repeats) */
/* 0, or -1 with a message naming --option, the text typed, the value and the limit */
int qnb_check_seconds(const char *option, const char *text, double s, char *err, size_t errlen);
/* seconds -> nanoseconds, rounded to the nearest; saturates to [0, QNB_NS_SATURATED] (NaN: 0) */
int64_t qnb_ns_of(double s);
/* a + b for times in ns (>= 0), saturating at QNB_NS_SATURATED */
int64_t qnb_ns_add(int64_t a, int64_t b);
/* *out = a * b for sizes and counts >= 0: 0, or -1 when it exceeds LLONG_MAX */
int qnb_mul_size(long long a, long long b, long long *out);
int qnb_parse_size(const char *s, long long *out, char *err, size_t errlen);
int qnb_parse_time(const char *s, double *out, char *err, size_t errlen);
int qnb_parse_rate(const char *s, double *out, char *err, size_t errlen);
int qnb_parse_int(const char *s, long long *out, char *err, size_t errlen);
int qnb_parse_frequency(const char *s, double *out, char *err, size_t errlen); /* per second */

/* ---- options.c ---- */
/* ---- netns.c: --netns, each MPI rank in its own network namespace ---- */
int qnb_enter_netns(const struct qnb_config *c, char *err, size_t errlen);

struct qnb_json;
struct qnb_engine;
void qnb_config_defaults(struct qnb_config *c);
/* returns 0 ok, 2 usage error (message printed), 3 help printed */
int qnb_parse_args(struct qnb_config *c, int argc, char **argv);
void qnb_options_json(const struct qnb_config *c, struct qnb_json *j);
/* ---- check.c: the whole configuration, after parsing (limits included); 0, or 2 with the
 * message printed ---- */
int qnb_check_config(const struct qnb_config *c, const struct qnb_engine *eng);
/* 1 when every point ends by --runtime (not only by --ops, --io-size or a fixed amount of work) */
int qnb_time_bounded(const struct qnb_config *c, const struct qnb_engine *eng);
/* 2 with a message when `per_job` bytes of buffers for each of the largest --jobs exceed the
 * machine's memory (MemTotal); `what` names them and the options behind them */
int qnb_check_memory(const struct qnb_config *c, const char *what, long double per_job, char *err,
                     size_t errlen);
/* ---- sweep.c: the number of points of the sweep (jobs x bs x operations x repeats) ---- */
long long qnb_sweep_points(const struct qnb_config *c, const struct qnb_engine *eng);
int qnb_list_contains(const char *commalist, const char *item);
int qnb_option_given(const struct qnb_config *c, const char *name);

/* ---- json.c: streaming writer with escaping and locale-independent numbers ---- */
struct qnb_json {
    FILE *f;
    int depth;
    int first[64];
    int after_key;
};
void qj_init(struct qnb_json *j, FILE *f);
void qj_obj_begin(struct qnb_json *j);
void qj_obj_end(struct qnb_json *j);
void qj_arr_begin(struct qnb_json *j);
void qj_arr_end(struct qnb_json *j);
void qj_key(struct qnb_json *j, const char *k);
void qj_str(struct qnb_json *j, const char *s);
void qj_int(struct qnb_json *j, long long v);
void qj_num(struct qnb_json *j, double v);
void qj_bool(struct qnb_json *j, int v);
void qj_null(struct qnb_json *j);
void qj_kstr(struct qnb_json *j, const char *k, const char *s);
void qj_kint(struct qnb_json *j, const char *k, long long v);
void qj_knum(struct qnb_json *j, const char *k, double v);
void qj_kbool(struct qnb_json *j, const char *k, int v);
void qj_raw(struct qnb_json *j, const char *text);
void qnb_format_double(char *buf, size_t len, double v);

/* ---- timing.c ---- */
int64_t qnb_now_ns(void);
/* Sleep until the CLOCK_MONOTONIC instant `deadline` (ns), busy-waiting the last spin_ns. Wakes
 * at once on a stop: returns 1 when a stop signal arrived (qnb_signal_wake) or, for
 * qnb_sleep_on, when *word holds `stop` (whoever changes it wakes the futex on it); else 0. */
int qnb_sleep_until_ns(int64_t deadline, int64_t spin_ns);
int qnb_sleep_on(_Atomic int *word, int stop, int64_t deadline, int64_t spin_ns);
void qnb_signal_wake(void); /* async-signal-safe: wakes every qnb_sleep_until_ns */
/* a short plain sleep that a stop does not cut: polling for threads to end, after a stop too */
void qnb_pause_ns(int64_t ns);
void qnb_thread_timer_slack(void);
int qnb_thread_realtime(void); /* SCHED_FIFO priority 1 for the calling thread; 0 or errno */
void qnb_cpu_times(double *user, double *sys, int children);

/* ---- stats.c: log-linear histogram of nanoseconds (HDR-histogram layout) ----
 * Values below QNB_HIST_SUB ns have one bucket each (exact); every power of two [2^e, 2^(e+1))
 * above is split into QNB_HIST_SUB equal sub-buckets, so a bucket is at most 1/QNB_HIST_SUB of
 * its lower edge wide. A quantile is reported as its bucket's midpoint (clamped to the exact min
 * and max): within QNB_HIST_REL_ERROR = 1/(2 QNB_HIST_SUB) = 2^-9 ~ 0.2 % of the exact sample
 * quantile (the ceil(q n)-th smallest value). */
#define QNB_HIST_SUB_BITS 8
#define QNB_HIST_SUB (1 << QNB_HIST_SUB_BITS)
#define QNB_HIST_BUCKETS ((64 - QNB_HIST_SUB_BITS + 1) * QNB_HIST_SUB)
#define QNB_HIST_REL_ERROR (0.5 / QNB_HIST_SUB)
struct qnb_hist {
    uint64_t count;
    double sum_ns;
    uint64_t min_ns, max_ns;
    uint64_t b[QNB_HIST_BUCKETS];
};
void qnb_hist_reset(struct qnb_hist *h);
void qnb_hist_add(struct qnb_hist *h, uint64_t ns);
void qnb_hist_merge(struct qnb_hist *dst, const struct qnb_hist *src);
double qnb_hist_quantile_ns(const struct qnb_hist *h, double q);
void qnb_hist_bucket_range(unsigned idx, double *lo_ns, double *hi_ns); /* [lo, hi) */

/* ---- rng: splitmix64 seeding + xoshiro256** ---- */
struct qnb_rng {
    uint64_t s[4];
};
void qnb_rng_seed(struct qnb_rng *r, uint64_t seed);
uint64_t qnb_rng_next(struct qnb_rng *r);
double qnb_rng_uniform(struct qnb_rng *r); /* in (0, 1) */
uint64_t qnb_rng_below(struct qnb_rng *r, uint64_t n);
/* Offset of the next request of size bs in a file of nblocks blocks: a uniformly random
 * block, or the sequential cursor *cursor (advanced, wrapping to 0 at the end). The one
 * access-pattern rule of the engines that read and write files (file, nfs). */
long long qnb_next_offset(struct qnb_rng *r, int random, long long *cursor, long long nblocks,
                          long long bs);

/* ---- engines ---- */
struct qnb_run;
struct qnb_worker;

enum {
    QNB_ENG_USES_BS = 1u << 0,      /* sweep over --bs */
    QNB_ENG_NEEDS_DIR = 1u << 1,    /* needs --dir (creates files) */
    QNB_ENG_PROCESSES = 1u << 2,    /* supports --workers process */
    QNB_ENG_OPLIST = 1u << 3,       /* sweep over an engine operation list (op_list) */
    QNB_ENG_NO_MEASURE = 1u << 4,   /* run() replaces the harness (tcp server) */
    QNB_ENG_NEEDS_SERVER = 1u << 5, /* measures a server started elsewhere (nfs: --nfs-url) */
    /* each worker does a fixed amount of work (op returns 1 when it has no more): no warm-up,
     * a point ends when every worker is done (meta: mdtest-style phases; mpilink: exchanges) */
    QNB_ENG_FIXED_WORK = 1u << 6,
    QNB_ENG_NEEDS_MPI = 1u << 7, /* runs only in the MPI build (mpilink) */
};

struct qnb_engine {
    const char *name;
    const char *help;
    unsigned flags;
    /* comma list of operations for QNB_ENG_OPLIST engines */
    const char *(*op_list)(const struct qnb_config *c);
    /* once per run, after option parsing: validate engine options (return 2 + message on usage error) */
    int (*check)(const struct qnb_config *c, char *err, size_t errlen);
    /* once per point, in the main thread, before workers start */
    int (*point_setup)(struct qnb_run *r);
    /* per worker, in the worker (thread or process) */
    int (*worker_init)(struct qnb_worker *w);
    /* one request; *bytes = payload bytes moved; return 0, -1 with qnb_worker_error(), or 1:
     * the client stops without counting the request (a QNB_ENG_FIXED_WORK engine has no more
     * work; a stop woke the client before the request completed, see qnb_run_sleep) */
    int (*op)(struct qnb_worker *w, uint64_t *bytes);
    /* per worker after the last measured op; timed (e.g. fsync + close) */
    int (*worker_finish)(struct qnb_worker *w);
    /* per worker, untimed, always called if worker_init succeeded */
    void (*worker_cleanup)(struct qnb_worker *w);
    /* in the main thread after all workers ended: write engine_stats keys */
    void (*point_report)(struct qnb_run *r, struct qnb_json *j);
    /* in the main thread after the point */
    void (*point_teardown)(struct qnb_run *r);
    /* whole-run cleanup */
    void (*run_teardown)(struct qnb_run *r);
    /* replaces the measurement loop (tcp server role); returns exit status */
    int (*standalone)(struct qnb_run *r);
    /* comma list of operation classes an op may set in w->op_class (e.g. "read,write" with
     * --rwmix): the harness keeps one latency histogram per class (workload.c); NULL: none */
    const char *(*op_classes)(const struct qnb_config *c);
};

/* The engine table (engines/table.h) is the one list of engines; engines.c derives the rest. */
#include "engines/table.h"
#define QNB_ENGINE_DECLARE(n) extern const struct qnb_engine qnb_engine_##n;
QNB_ENGINE_TABLE(QNB_ENGINE_DECLARE)
#define QNB_ENGINE_NAME_ITEM(n) "," #n
/* "null,emu,...": the comma list of engine names, a string constant derived from the table */
#define QNB_ENGINE_NAMES (&(QNB_ENGINE_TABLE(QNB_ENGINE_NAME_ITEM))[1])
extern const struct qnb_engine *const qnb_engines[]; /* the table, NULL-terminated */
const struct qnb_engine *qnb_find_engine(const char *name);
int qnb_engine_table_check(void); /* 0, or -1 (message printed) if a .name differs from its entry */
/* names of the engines with all of `flags`, as "a", "a and b" or "a, b and c" */
void qnb_engine_names_with(unsigned flags, char *buf, size_t len);
/* --list-engines: one JSON document describing every engine of the table */
void qnb_engines_json(struct qnb_json *j);

/* ---- workers and runs (harness.c) ---- */
enum { QNB_PHASE_WARMUP = 0, QNB_PHASE_MEASURE = 1, QNB_PHASE_STOP = 2 };

struct qnb_worker {
    struct qnb_run *run;
    int id;
    int counting;       /* the current op was issued in the measured phase */
    struct qnb_rng rng; /* seeded per point and worker */
    void *priv;         /* engine per-worker state */
    /* counters of the measured phase, read by the sampler */
    _Atomic uint64_t ops;
    _Atomic uint64_t bytes;
    struct qnb_hist hist;
    double think_sum_ns;
    uint64_t think_count;
    double finish_ns; /* duration of worker_finish */
    int failed;
    char errmsg[512];
    pthread_t tid;
    int pid;
    int reaped; /* process workers: waited for (by the sampler's poll or at the end) */
    /* engine per-worker statistics, in shared memory for process workers */
    double stat[64];
    int op_class; /* class of the current op (index into the engine's op_classes), set by op */
    int done;     /* QNB_ENG_FIXED_WORK: the worker had no more work */
    /* open loop (workload.c): next scheduled arrival and the measured queueing before issue */
    int64_t ol_next_ns;
    int64_t ol_sched_ns; /* scheduled arrival of the current request (0: closed loop) */
    uint64_t ol_issued, ol_behind;
    double ol_wait_sum_ns, ol_wait_max_ns;
    uint64_t ol_backlog_end;
};

struct qnb_point {
    int index;
    int npoints; /* points in the whole sweep (for progress) */
    int repeat;  /* repetition index of this configuration */
    int jobs;
    long long bs;
    char op[32];
};

struct qnb_run {
    const struct qnb_config *cfg;
    const struct qnb_engine *eng;
    struct qnb_point pt;
    _Atomic int phase;
    _Atomic uint64_t issued;    /* measured ops issued (for --ops) */
    _Atomic uint64_t completed; /* measured ops completed (for --ops) */
    _Atomic uint64_t completed_bytes; /* measured bytes completed (for --io-size) */
    _Atomic int ready;          /* workers whose worker_init is done */
    _Atomic int done_workers;   /* QNB_ENG_FIXED_WORK workers that finished their work */
    struct qnb_hist *class_hist; /* jobs x nclass histograms (workload.c), or NULL */
    int nclass;
    char classes[8][24];
    int64_t t_start_ns;
    _Atomic int64_t t_stop_ns;
    struct qnb_worker *workers; /* pt.jobs entries (shared memory) */
    void *epriv;                /* engine per-point state */
    void *erun;                 /* engine per-run state */
    char rundir[QNB_PATH_MAX];  /* our own directory ("" until created) */
    double elapsed_s;  /* measured interval of the point just run (for point_report) */
    double finish_s;   /* longest worker_finish (fsync + close) */
    uint64_t ops_total;
    uint64_t bytes_total;
    int point_complete;
    int nerrors;
    char errors[16][512];
};

void qnb_worker_error(struct qnb_worker *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void qnb_run_error(struct qnb_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void qnb_diag(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
extern volatile sig_atomic_t qnb_stop_signal;
int qnb_stopping(const struct qnb_run *r);
/* the SIGINT/SIGTERM handler's work (async-signal-safe): records the signal, stops the run given
 * to qnb_signal_target (its phase word), and wakes every sleeping client and thread */
void qnb_signal_stop(int sig);
void qnb_signal_target(struct qnb_run *r);
/* a client's sleep: until `deadline`, or 1 at once when the run stops (phase STOP, a signal) */
int qnb_run_sleep(struct qnb_run *r, int64_t deadline, int64_t spin_ns);

/* ---- safe files (files.c): only inside our own new directory ---- */
int qnb_rundir_create(struct qnb_run *r);
int qnb_file_create(struct qnb_run *r, const char *name, int extra_flags, char *path_out,
                    size_t pathlen);
int qnb_file_open(struct qnb_run *r, const char *name, int flags);
void qnb_rundir_cleanup(struct qnb_run *r);
int qnb_file_layout(struct qnb_run *r, const char *name, long long size, int zero, char *err,
                    size_t errlen);
/* before laying out `nfiles` files of `size` bytes in the run directory (or --dir before it
 * exists): 0 when the file system has room for them, else -1 with a message naming the
 * directory, the bytes needed and the bytes free (statvfs); nothing is written */
int qnb_space_check(const struct qnb_run *r, long long nfiles, long long size, char *err,
                    size_t errlen);
const char *qnb_errno_name(int e);

/* ---- engines/cpu.c: XOR of n units into parity (also used by stripe) ---- */
void qnb_xor_parity(unsigned char *parity, unsigned char *const *units, int n, size_t len);

/* ---- mpi.c: optional multi-node mode (single process without MPI) ---- */
struct qnb_mpi_point {
    uint64_t ops, bytes;
    double elapsed_s;
    int complete;
};
void qnb_mpi_init(int *argc, char ***argv);
int qnb_mpi_rank(void);
int qnb_mpi_size(void);
void qnb_mpi_barrier(void);
void qnb_mpi_aggregate(struct qnb_mpi_point *p); /* sums ops/bytes, max elapsed, on rank 0 */
int qnb_mpi_any(int flag);                      /* logical OR over all ranks */
void qnb_mpi_point_json(const struct qnb_run *r, struct qnb_json *j); /* collective */
void qnb_mpi_finalize(void);
int qnb_mpi_built(void);      /* 1 in the MPI build (qnbench-mpi) */
int qnb_mpi_threads_ok(void); /* worker threads may call MPI (MPI_THREAD_SERIALIZED or better) */

/* ---- workload.c: open-loop arrivals and per-class latency (hooks of harness.c) ---- */
int qnb_openloop_on(const struct qnb_config *c);
/* worker start: schedule the first arrival */
void qnb_openloop_start(struct qnb_worker *w);
/* one client's mean time between arrivals (s) at --rate with `jobs` clients */
double qnb_openloop_mean_s(const struct qnb_config *c, long long jobs);
/* the scheduled arrival of the next request: sleeps until it (woken by a stop); 0 when
 * stopping. Records how long the request waited behind its schedule when counting. */
int64_t qnb_openloop_wait(struct qnb_worker *w, int64_t spin_ns);
/* after the loop: arrivals due before the end of the measured interval that were never issued */
void qnb_openloop_end(struct qnb_worker *w);
void qnb_openloop_json(const struct qnb_run *r, struct qnb_json *j);
int qnb_opclass_setup(struct qnb_run *r); /* allocates r->class_hist when the engine has classes */
void qnb_opclass_add(struct qnb_worker *w, uint64_t ns);
void qnb_opclass_json(const struct qnb_run *r, struct qnb_json *j);
void qnb_opclass_free(struct qnb_run *r);
void qnb_latency_json(const struct qnb_hist *h, struct qnb_json *j); /* the latency_s keys */
int qnb_workload_check(const struct qnb_config *c, const struct qnb_engine *e, char *err,
                       size_t len);

/* ---- files.c: the run directory's descriptor (for engines that make their own tree) ---- */
int qnb_rundir_fd(void);

/* ---- host.c ---- */
void qnb_host_json(struct qnb_json *j);
/* The whole machine's CPU time so far (all CPUs, from /proc/stat): total, idle (with iowait)
 * and stolen by the hypervisor, in clock ticks of 1/hz s; -1 when /proc/stat cannot be read. */
struct qnb_host_cpu {
    unsigned long long total, idle, steal;
    long hz;
};
int qnb_host_cpu(struct qnb_host_cpu *h);
long long qnb_host_mem_total(void); /* MemTotal of /proc/meminfo in bytes, 0 when unknown */

#endif
