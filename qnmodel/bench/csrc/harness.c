/* The closed-loop driver: N clients per point, each issuing a request through the engine,
 * optionally thinking, repeating; warm-up excluded; per-interval samples. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

volatile sig_atomic_t qnb_stop_signal;

/* One diagnostic line on stderr. Values a user typed are echoed inside messages, so control
 * characters (a newline, an escape sequence) are written as \xNN: the message stays one line
 * and never drives the terminal. */
void qnb_diag(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("qnbench: ", stderr);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fprintf(stderr, "\\x%02x", *p);
        else
            fputc(*p, stderr);
    }
    fputc('\n', stderr);
}

void qnb_worker_error(struct qnb_worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
    w->failed = 1;
}

void qnb_run_error(struct qnb_run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->nerrors < 16) {
        vsnprintf(r->errors[r->nerrors], sizeof r->errors[0], fmt, ap);
        qnb_diag("%s", r->errors[r->nerrors]);
        r->nerrors++;
    }
    va_end(ap);
}

int qnb_stopping(const struct qnb_run *r)
{
    return qnb_stop_signal || atomic_load(&((struct qnb_run *)r)->phase) == QNB_PHASE_STOP;
}

/* The phase word is in shared memory (qnb_shared_alloc), so a futex on it wakes thread and
 * process workers alike. */
static void phase_wake(struct qnb_run *r)
{
    syscall(SYS_futex, (int *)&r->phase, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int qnb_run_sleep(struct qnb_run *r, int64_t deadline, int64_t spin_ns)
{
    return qnb_sleep_on(&r->phase, QNB_PHASE_STOP, deadline, spin_ns);
}

/* Block while the point is warming up; a 1 ms timeout re-checks a stop signal. */
static void wait_for_measure(struct qnb_run *r)
{
    while (atomic_load(&r->phase) == QNB_PHASE_WARMUP && !qnb_stop_signal) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};
        syscall(SYS_futex, (int *)&r->phase, FUTEX_WAIT, QNB_PHASE_WARMUP, &ts, NULL, 0);
    }
}

/* Ends the point: phase STOP, and every client sleeping on the phase word (qnb_run_sleep: a
 * think time, an emulated device, an open-loop arrival, the warm-up) wakes at once.
 * Async-signal-safe (lock-free atomics, clock_gettime, futex): qnb_signal_stop calls it. */
static void request_stop(struct qnb_run *r)
{
    int64_t now = qnb_now_ns();
    for (int expected = QNB_PHASE_WARMUP; expected <= QNB_PHASE_MEASURE; expected++) {
        int e = expected;
        if (atomic_compare_exchange_strong(&r->phase, &e, QNB_PHASE_STOP)) {
            atomic_store(&r->t_stop_ns, now);
            phase_wake(r);
            return;
        }
    }
}

/* the run a stop signal ends (shared memory, so a process worker's handler reaches it too) */
static struct qnb_run *_Atomic signal_run;

void qnb_signal_target(struct qnb_run *r) { atomic_store(&signal_run, r); }

void qnb_signal_stop(int sig)
{
    int saved = errno;
    struct qnb_run *r = atomic_load(&signal_run);
    if (r) /* first: a client that sees the signal sees the point stopped */
        request_stop(r);
    qnb_stop_signal = sig;
    qnb_signal_wake(); /* sleepers outside a run: a block server's device, the main thread */
    errno = saved;
}

static void *worker_main(void *arg)
{
    struct qnb_worker *w = arg;
    struct qnb_run *r = w->run;
    const struct qnb_engine *eng = r->eng;
    const struct qnb_config *c = r->cfg;
    int64_t spin = qnb_ns_of(c->spin);
    int64_t think_ns = qnb_ns_of(c->think);
    int exp_think = strcmp(c->think_dist, "exp") == 0;
    /* the bytes one client may count: the sum over the point's clients stays a 64-bit count */
    uint64_t byte_limit = (uint64_t)INT64_MAX / (uint64_t)r->pt.jobs;

    qnb_thread_timer_slack();
    if (c->realtime) {
        int e = qnb_thread_realtime();
        if (e) {
            qnb_worker_error(w,
                             "--realtime: cannot switch to SCHED_FIFO: %s (needs root or "
                             "CAP_SYS_NICE; run without --realtime)",
                             strerror(e));
            request_stop(r);
            atomic_fetch_add(&r->ready, 1);
            return NULL;
        }
    }
    if (eng->worker_init && eng->worker_init(w)) {
        w->failed = 1;
        request_stop(r);
        atomic_fetch_add(&r->ready, 1);
        if (eng->worker_cleanup)
            eng->worker_cleanup(w);
        return NULL;
    }
    atomic_fetch_add(&r->ready, 1);
    int fixed = (eng->flags & QNB_ENG_FIXED_WORK) != 0, open_loop = qnb_openloop_on(c);
    /* A fixed amount of work is counted whole: it starts with the measured interval. So does
     * every client when there is no warm-up (--warmup 0): otherwise a client would issue
     * uncounted requests while the main thread opens the interval, drawing from its seeded
     * random stream and leaving a request in flight across the interval's start, so the
     * device sequence and the counts would depend on that race (measured: 3 runs in 25 counted
     * 199 device operations for --ops 200 with both cores loaded); and what such a request set
     * going (a server's read-ahead) would serve the interval, a head start its bytes / time
     * cannot see (4 NFS readers behind a 6 MB/s disk throttle measured 7.0 MB/s). */
    if (fixed || c->warmup <= 0)
        wait_for_measure(r);
    if (open_loop)
        qnb_openloop_start(w);
    while (!qnb_stopping(r)) {
        /* open loop: wait for the request's scheduled arrival; its response counts from there */
        int64_t sched = open_loop ? qnb_openloop_wait(w, spin) : 0;
        if (open_loop && sched == 0)
            break;
        int ph = atomic_load(&r->phase);
        w->counting = ph == QNB_PHASE_MEASURE;
        if (w->counting && c->ops > 0 &&
            atomic_fetch_add(&r->issued, 1) >= (uint64_t)c->ops)
            break;
        uint64_t b = 0;
        w->op_class = 0;
        int64_t t0 = open_loop ? sched : qnb_now_ns();
        int rc = eng->op(w, &b);
        if (rc > 0) /* a fixed-work engine has done its work, or a stop cut the request */
            break;
        if (rc && qnb_stop_signal) {
            /* cut by the stop signal (a wait interrupted, a server of this process gone): the
             * point says it was interrupted, not that the request failed */
            w->failed = 0;
            w->errmsg[0] = '\0';
            break;
        }
        if (rc) {
            w->failed = 1;
            request_stop(r);
            break;
        }
        int64_t t1 = qnb_now_ns();
        if (atomic_load(&r->phase) == QNB_PHASE_MEASURE) {
            if (b > byte_limit - atomic_load_explicit(&w->bytes, memory_order_relaxed)) {
                qnb_worker_error(w,
                                 "the bytes moved by one of the %d clients would exceed %llu, "
                                 "the most a 64-bit count of the point holds: give a smaller "
                                 "--bs or a shorter --runtime",
                                 r->pt.jobs, (unsigned long long)byte_limit);
                request_stop(r);
                break;
            }
            qnb_hist_add(&w->hist, (uint64_t)(t1 - t0));
            qnb_opclass_add(w, (uint64_t)(t1 - t0));
            atomic_fetch_add_explicit(&w->bytes, b, memory_order_relaxed);
            uint64_t done = atomic_fetch_add(&w->ops, 1) + 1;
            (void)done;
            if (c->ops > 0 && atomic_fetch_add(&r->completed, 1) + 1 >= (uint64_t)c->ops)
                request_stop(r);
            if (c->io_size > 0 &&
                atomic_fetch_add(&r->completed_bytes, b) + b >= (uint64_t)c->io_size)
                request_stop(r);
        }
        if (think_ns > 0 && !qnb_stopping(r)) {
            int64_t z = think_ns;
            if (exp_think)
                z = qnb_ns_of(-log(qnb_rng_uniform(&w->rng)) * c->think);
            int64_t ts = qnb_now_ns();
            if (qnb_run_sleep(r, qnb_ns_add(ts, z), spin))
                break; /* stopped while thinking: the think time is not complete */
            if (w->counting) {
                w->think_sum_ns += (double)(qnb_now_ns() - ts);
                w->think_count++;
            }
        }
    }
    /* a fixed-work client leaving the loop (its work done, or the --ops limit reached) is
     * done: the point ends when every client is */
    if (fixed && !w->failed) {
        w->done = 1;
        if (atomic_fetch_add(&r->done_workers, 1) + 1 >= r->pt.jobs)
            request_stop(r);
    }
    if (open_loop)
        qnb_openloop_end(w);
    if (!w->failed && eng->worker_finish) {
        int64_t t = qnb_now_ns();
        if (eng->worker_finish(w)) {
            w->failed = 1;
            request_stop(r);
        }
        w->finish_ns = (double)(qnb_now_ns() - t);
    }
    if (eng->worker_cleanup)
        eng->worker_cleanup(w);
    return NULL;
}

void *qnb_shared_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, size);
    return p;
}

void qnb_shared_free(void *p, size_t size)
{
    if (p)
        munmap(p, size);
}

/* Sleep until `deadline`, waking every 5 ms to notice a stop. Returns 1 if stopping. */
/* Process workers that have ended are waited for here. One that was killed by a signal (or
 * exited with a failure it could not report) ends the point: its share of the load is gone, so
 * the point's numbers would describe fewer clients than the document says. Returns how many
 * died that way; `block` waits for every worker (at the end of a point). */
static int reap_workers(struct qnb_run *r, int started, int block)
{
    int died = 0;
    for (int i = 0; i < started; i++) {
        struct qnb_worker *w = &r->workers[i];
        if (w->reaped || w->pid <= 0)
            continue;
        int st;
        pid_t p;
        while ((p = waitpid(w->pid, &st, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
            ;
        if (p != w->pid)
            continue;
        w->reaped = 1;
        if (WIFSIGNALED(st)) {
            qnb_run_error(r, "worker process %d (point %d, job %d) was killed by signal %d (%s)",
                          w->pid, r->pt.index, i, WTERMSIG(st), strsignal(WTERMSIG(st)));
            died++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && !w->failed) {
            qnb_run_error(r, "worker process %d (point %d, job %d) exited with status %d",
                          w->pid, r->pt.index, i, WEXITSTATUS(st));
            died++;
        }
    }
    if (died)
        request_stop(r);
    return died;
}

/* Sleep until `deadline`, waking every 5 ms to notice a stop (and, with process workers, one
 * that died: `*died` counts them). Returns 1 if stopping. */
static int wait_until(struct qnb_run *r, int64_t deadline, int proc_started, int *died)
{
    for (;;) {
        if (proc_started)
            *died += reap_workers(r, proc_started, 0);
        if (qnb_stopping(r))
            return 1;
        int64_t now = qnb_now_ns();
        if (now >= deadline)
            return 0;
        int64_t step = deadline - now;
        if (step > 5000000)
            step = 5000000;
        qnb_run_sleep(r, now + step, 0);
    }
}

struct sample {
    double t_s;
    uint64_t ops, bytes;
};

struct samples {
    struct sample *v;
    size_t n, cap;
    size_t max; /* most samples of this point: its share of QNB_MAX_SAMPLES */
};

/* Append one sample. At the point's maximum (or when memory runs out) it is merged into the
 * previous one instead: totals and end times stay exact. */
static void add_sample(struct samples *s, double t_s, uint64_t ops, uint64_t bytes)
{
    if (s->n && s->n >= s->max) {
        s->v[s->n - 1].t_s = t_s;
        s->v[s->n - 1].ops += ops;
        s->v[s->n - 1].bytes += bytes;
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct sample *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            if (s->n) {
                s->v[s->n - 1].t_s = t_s;
                s->v[s->n - 1].ops += ops;
                s->v[s->n - 1].bytes += bytes;
            }
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct sample){t_s, ops, bytes};
}

/* Halve the samples: neighbours merged pairwise, each pair ending where its second ended, so
 * the sums and the times stay exact (an interval of twice the length). */
static void coarsen(struct samples *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i += 2, k++) {
        struct sample m = s->v[i];
        if (i + 1 < s->n) {
            m.t_s = s->v[i + 1].t_s;
            m.ops += s->v[i + 1].ops;
            m.bytes += s->v[i + 1].bytes;
        }
        s->v[k] = m;
    }
    s->n = k;
}

static void sum_counters(struct qnb_run *r, uint64_t *ops, uint64_t *bytes)
{
    *ops = *bytes = 0;
    for (int i = 0; i < r->pt.jobs; i++) {
        *ops += atomic_load(&r->workers[i].ops);
        *bytes += atomic_load(&r->workers[i].bytes);
    }
}

int qnb_run_point(struct qnb_run *r, struct qnb_json *j)
{
    const struct qnb_config *c = r->cfg;
    const struct qnb_engine *eng = r->eng;
    int jobs = r->pt.jobs;
    int use_proc = strcmp(c->workers, "process") == 0 && (eng->flags & QNB_ENG_PROCESSES);
    size_t wsize = sizeof(struct qnb_worker) * (size_t)jobs;
    int ok = 1;

    r->workers = qnb_shared_alloc(wsize);
    if (!r->workers) {
        qnb_run_error(r, "out of memory for %d workers", jobs);
        return -1;
    }
    atomic_store(&r->phase, QNB_PHASE_WARMUP);
    atomic_store(&r->issued, 0);
    atomic_store(&r->completed, 0);
    atomic_store(&r->completed_bytes, 0);
    atomic_store(&r->t_stop_ns, 0);
    atomic_store(&r->ready, 0);
    atomic_store(&r->done_workers, 0);
    r->t_start_ns = 0;
    for (int i = 0; i < jobs; i++) {
        struct qnb_worker *w = &r->workers[i];
        w->run = r;
        w->id = i;
        qnb_hist_reset(&w->hist);
        qnb_rng_seed(&w->rng, (uint64_t)c->seed * 1000003u + (uint64_t)r->pt.index * 65537u +
                                  (uint64_t)i);
    }
    if (qnb_opclass_setup(r) || (eng->point_setup && eng->point_setup(r))) {
        if (eng->point_teardown) /* what a failed setup made (every teardown takes NULL) */
            eng->point_teardown(r);
        qnb_opclass_free(r);
        qnb_shared_free(r->workers, wsize);
        r->workers = NULL;
        return -1;
    }

    int started = 0;
    int64_t t_w0 = qnb_now_ns();
    for (int i = 0; i < jobs; i++) {
        struct qnb_worker *w = &r->workers[i];
        if (use_proc) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0) {
                worker_main(w);
                _exit(w->failed ? 1 : 0);
            }
            if (pid < 0) {
                qnb_run_error(r, "fork: %s", strerror(errno));
                break;
            }
            w->pid = pid;
        } else {
            int e = pthread_create(&w->tid, NULL, worker_main, w);
            if (e) {
                qnb_run_error(r, "pthread_create: %s", strerror(e));
                break;
            }
        }
        started++;
    }
    if (started < jobs)
        request_stop(r);
    /* the warm-up starts once every worker has set itself up (allocated, opened, connected) */
    int died = 0;
    int proc_started = use_proc ? started : 0;
    while (atomic_load(&r->ready) < started && !qnb_stopping(r)) {
        if (proc_started)
            died += reap_workers(r, proc_started, 0);
        qnb_sleep_until_ns(qnb_now_ns() + 200000, 0);
    }
    t_w0 = qnb_now_ns();

    /* warm-up, then the measured interval */
    struct samples ss = {NULL, 0, 0, 0};
    /* the run's samples are shared by its points; a point that ends by --runtime fits its
     * share (check.c refuses an --interval that would not), one that ends by a count of
     * operations or bytes coarsens its interval when it reaches it */
    ss.max = (size_t)QNB_MAX_SAMPLES / (size_t)(r->pt.npoints > 0 ? r->pt.npoints : 1);
    if (ss.max < 2)
        ss.max = 2;
    double cu0 = 0, cs0 = 0, cu1 = 0, cs1 = 0;
    struct qnb_host_cpu hc0, hc1;
    int host_ok = 0;
    int timed_out = 0;
    /* a fixed amount of work (meta, mpilink) is cut by time only when --runtime is given */
    int limit_only = !qnb_time_bounded(c, eng);
    if (c->warmup > 0 && !(eng->flags & QNB_ENG_FIXED_WORK))
        wait_until(r, qnb_ns_add(t_w0, qnb_ns_of(c->warmup)), proc_started, &died);
    double warm_s = (qnb_now_ns() - t_w0) / 1e9;
    qnb_cpu_times(&cu0, &cs0, use_proc);
    host_ok = qnb_host_cpu(&hc0) == 0;
    int expected = QNB_PHASE_WARMUP;
    r->t_start_ns = qnb_now_ns();
    if (atomic_compare_exchange_strong(&r->phase, &expected, QNB_PHASE_MEASURE))
        phase_wake(r);
    int64_t t_end = qnb_ns_add(r->t_start_ns, qnb_ns_of(c->runtime));
    int64_t step = qnb_ns_of(c->interval); /* >= 1 ns (options.c) */
    if (step < 1)
        step = 1;
    int64_t next = qnb_ns_add(r->t_start_ns, step);
    uint64_t prev_ops = 0, prev_bytes = 0;
    for (;;) {
        int64_t until = next < t_end ? next : t_end;
        if (limit_only)
            until = next;
        if (wait_until(r, until, proc_started, &died))
            break;
        int64_t now = qnb_now_ns();
        if (now >= next) {
            uint64_t o, b;
            sum_counters(r, &o, &b);
            /* a sample ends when its counters were read: a late wake-up makes it longer, never
             * mislabels it; the boundaries it slept through are skipped */
            int64_t t = qnb_now_ns();
            add_sample(&ss, (double)(t - r->t_start_ns) / 1e9, o - prev_ops, b - prev_bytes);
            prev_ops = o;
            prev_bytes = b;
            next = qnb_ns_add(next, step * ((t - next) / step + 1));
            if (ss.n >= ss.max) {
                coarsen(&ss);
                step = qnb_ns_add(step, step);
                next = qnb_ns_add(r->t_start_ns, step * ((t - r->t_start_ns) / step + 1));
                static int said;
                if (!said++)
                    qnb_diag("point %d reached %zu samples (a run keeps at most %d, shared by "
                             "its %d points): its sampling interval doubles to %.9g s "
                             "(neighbouring samples merged; sums and times stay exact)",
                             r->pt.index, ss.max, QNB_MAX_SAMPLES, r->pt.npoints,
                             (double)step / 1e9);
            }
        }
        if (now >= t_end && !limit_only) {
            timed_out = 1;
            request_stop(r);
            break;
        }
    }
    if (qnb_stop_signal)
        request_stop(r);

    for (int i = 0; i < started; i++) {
        struct qnb_worker *w = &r->workers[i];
        if (!use_proc)
            pthread_join(w->tid, NULL);
    }
    if (use_proc)
        died += reap_workers(r, started, 1);
    qnb_cpu_times(&cu1, &cs1, use_proc);
    host_ok = host_ok && qnb_host_cpu(&hc1) == 0;

    int64_t t_stop = atomic_load(&r->t_stop_ns);
    if (t_stop < r->t_start_ns)
        t_stop = r->t_start_ns;
    double finish_max = 0;
    static struct qnb_hist hbuf; /* merged histogram; the main thread runs one point at a time */
    struct qnb_hist *h = &hbuf;
    qnb_hist_reset(h);
    double think_sum = 0;
    uint64_t think_n = 0;
    for (int i = 0; i < jobs; i++) {
        struct qnb_worker *w = &r->workers[i];
        if (w->finish_ns > finish_max)
            finish_max = w->finish_ns;
        qnb_hist_merge(h, &w->hist);
        think_sum += w->think_sum_ns;
        think_n += w->think_count;
        if (w->failed) {
            ok = 0;
            qnb_run_error(r, "%s (point %d, job %d)", w->errmsg[0] ? w->errmsg : "worker failed",
                          r->pt.index, i);
        }
    }
    uint64_t ops, bytes;
    sum_counters(r, &ops, &bytes);
    double elapsed = ((double)(t_stop - r->t_start_ns) + finish_max) / 1e9;
    if (ss.n && ss.v[ss.n - 1].t_s >= elapsed) {
        /* read just after a stop: the last sample ends with the measured interval */
        ss.v[ss.n - 1].t_s = elapsed;
        ss.v[ss.n - 1].ops += ops - prev_ops;
        ss.v[ss.n - 1].bytes += bytes - prev_bytes;
    } else if (ops > prev_ops || ss.n == 0) {
        add_sample(&ss, elapsed, ops - prev_ops, bytes - prev_bytes);
    }
    if (died)
        ok = 0; /* reap_workers said which worker and how */
    if (qnb_stop_signal) {
        ok = 0;
        qnb_run_error(r, "interrupted by a signal during point %d", r->pt.index);
    }
    int reached = timed_out || (c->ops > 0 && ops >= (uint64_t)c->ops) ||
                  (c->io_size > 0 && bytes >= (uint64_t)c->io_size) ||
                  atomic_load(&r->done_workers) >= jobs;
    int complete = ok && reached && started == jobs;

    /* the result object */
    qj_obj_begin(j);
    qj_kint(j, "point", r->pt.index);
    qj_kint(j, "repeat", r->pt.repeat);
    qj_kint(j, "jobs", jobs);
    if (eng->flags & QNB_ENG_USES_BS)
        qj_kint(j, "bs_bytes", r->pt.bs);
    qj_kstr(j, "op", r->pt.op);
    qj_knum(j, "think_s", c->think);
    qj_kbool(j, "complete", complete);
    qj_kint(j, "ops", (long long)ops);
    qj_kint(j, "bytes", (long long)bytes);
    qj_knum(j, "elapsed_s", elapsed);
    qj_knum(j, "warmup_s", warm_s);
    qj_knum(j, "throughput_ops_s", elapsed > 0 ? ops / elapsed : NAN);
    qj_knum(j, "throughput_B_s", elapsed > 0 ? bytes / elapsed : NAN);
    qj_key(j, "latency_s");
    qj_obj_begin(j);
    qnb_latency_json(h, j);
    qj_knum(j, "quantile_rel_error", QNB_HIST_REL_ERROR); /* bound of p50/p90/p99, stats.c */
    if (c->histogram) {
        /* [lower_s, upper_s, count] of every non-empty bucket, in increasing order */
        qj_key(j, "histogram");
        qj_arr_begin(j);
        for (unsigned i = 0; i < QNB_HIST_BUCKETS; i++) {
            if (!h->b[i])
                continue;
            double lo, hi;
            qnb_hist_bucket_range(i, &lo, &hi);
            qj_arr_begin(j);
            qj_num(j, lo / 1e9);
            qj_num(j, hi / 1e9);
            qj_int(j, (long long)h->b[i]);
            qj_arr_end(j);
        }
        qj_arr_end(j);
    }
    qj_obj_end(j);
    qnb_opclass_json(r, j);
    if (qnb_openloop_on(c))
        qnb_openloop_json(r, j);
    qj_knum(j, "think_s_mean", think_n ? think_sum / think_n / 1e9 : 0.0);
    qj_key(j, "cpu");
    qj_obj_begin(j);
    qj_knum(j, "user_s", cu1 - cu0);
    qj_knum(j, "sys_s", cs1 - cs0);
    if (host_ok) {
        double hz = (double)hc0.hz;
        qj_knum(j, "host_total_s", (double)(hc1.total - hc0.total) / hz);
        qj_knum(j, "host_idle_s", (double)(hc1.idle - hc0.idle) / hz);
        qj_knum(j, "host_steal_s", (double)(hc1.steal - hc0.steal) / hz);
    }
    qj_obj_end(j);
    qj_key(j, "samples");
    qj_arr_begin(j);
    const struct sample *samp = ss.v;
    for (size_t i = 0; i < ss.n; i++) {
        double dt = i == 0 ? samp[0].t_s : samp[i].t_s - samp[i - 1].t_s;
        qj_obj_begin(j);
        qj_knum(j, "t_s", samp[i].t_s);
        qj_kint(j, "ops", (long long)samp[i].ops);
        qj_kint(j, "bytes", (long long)samp[i].bytes);
        qj_knum(j, "throughput_ops_s", dt > 0 ? samp[i].ops / dt : NAN);
        qj_knum(j, "throughput_B_s", dt > 0 ? samp[i].bytes / dt : NAN);
        qj_obj_end(j);
    }
    qj_arr_end(j);
    qj_key(j, "engine_stats");
    qj_obj_begin(j);
    r->elapsed_s = elapsed;
    r->finish_s = finish_max / 1e9;
    r->ops_total = ops;
    r->bytes_total = bytes;
    r->point_complete = complete;
    if (eng->point_report)
        eng->point_report(r, j);
    qj_obj_end(j);
    qj_obj_end(j);

    if (c->progress) {
        char bsbuf[48] = "";
        if (eng->flags & QNB_ENG_USES_BS)
            snprintf(bsbuf, sizeof bsbuf, " bs=%lld", r->pt.bs);
        qnb_diag("point %d/%d: jobs=%d%s op=%s: %.6g ops/s, %.6g B/s, mean latency %.6g s",
                 r->pt.index + 1, r->pt.npoints, jobs, bsbuf, r->pt.op, elapsed > 0 ? ops / elapsed : 0.0,
                 elapsed > 0 ? bytes / elapsed : 0.0,
                 h->count ? h->sum_ns / h->count / 1e9 : 0.0);
    }
    free(ss.v);
    if (eng->point_teardown)
        eng->point_teardown(r);
    qnb_opclass_free(r);
    qnb_shared_free(r->workers, wsize);
    r->workers = NULL;
    return complete ? 0 : -1;
}
