/* Clocks: CLOCK_MONOTONIC nanoseconds, precise absolute sleeps that wake on a stop, process CPU
 * time. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "qnbench.h"

int64_t qnb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reduce this thread's timer slack to 1 ns so that clock_nanosleep wakes when asked. */
void qnb_thread_timer_slack(void)
{
#ifdef PR_SET_TIMERSLACK
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
}

/* Bumped by qnb_signal_wake: a stop signal arrived. Sleepers without a word of their own
 * (qnb_sleep_until_ns) wait on it. */
static _Atomic int signal_word;

void qnb_signal_wake(void)
{
    atomic_fetch_add(&signal_word, 1);
    syscall(SYS_futex, (int *)&signal_word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleep until the absolute CLOCK_MONOTONIC instant `deadline`: a futex wait with an absolute
 * timeout (FUTEX_WAIT_BITSET measures it on CLOCK_MONOTONIC, with the thread's timer slack, as
 * clock_nanosleep(TIMER_ABSTIME) does) to deadline - spin, then busy-wait the rest; spin =
 * min(spin_ns, a quarter of the wait). The futex is *word, so whoever changes the word wakes the
 * sleeper at once: the harness sets a run's phase word to STOP (a signal handler included, see
 * qnb_signal_stop), qnb_signal_wake bumps the signal word. Reading the word before checking
 * for a stop and letting the kernel compare it again loses no wake-up: a change in between
 * makes the wait return at once. */
int qnb_sleep_on(_Atomic int *word, int stop, int64_t deadline, int64_t spin_ns)
{
    int watch = word != NULL;
    if (!word)
        word = &signal_word;
    /* never busy-wait more than a quarter of the wait: a real-time client with short requests
     * must not hold a core (requests of 1 ms and more keep the full spin) */
    int64_t left = deadline - qnb_now_ns();
    if (spin_ns > left / 4)
        spin_ns = left > 0 ? left / 4 : 0;
    int64_t wake = deadline - spin_ns;
    for (;;) {
        int v = atomic_load(word);
        if (qnb_stop_signal || (watch && v == stop))
            return 1;
        if (qnb_now_ns() >= wake)
            break;
        struct timespec ts = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000};
        syscall(SYS_futex, (int *)word, FUTEX_WAIT_BITSET, v, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
    }
    while (qnb_now_ns() < deadline)
        if (qnb_stop_signal || (watch && atomic_load(word) == stop))
            return 1;
    return 0;
}

int qnb_sleep_until_ns(int64_t deadline, int64_t spin_ns)
{
    return qnb_sleep_on(NULL, 0, deadline, spin_ns);
}

void qnb_pause_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void qnb_cpu_times(double *user, double *sys, int children)
{
    struct rusage ru, rc;
    getrusage(RUSAGE_SELF, &ru);
    *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
    *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    if (children) {
        getrusage(RUSAGE_CHILDREN, &rc);
        *user += rc.ru_utime.tv_sec + rc.ru_utime.tv_usec * 1e-6;
        *sys += rc.ru_stime.tv_sec + rc.ru_stime.tv_usec * 1e-6;
    }
}

int qnb_thread_realtime(void)
{
    struct sched_param sp;
    sp.sched_priority = 1;
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}
