/* Clocks: CLOCK_MONOTONIC nanoseconds, precise absolute sleeps, process CPU time. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

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

/* Sleep until the absolute CLOCK_MONOTONIC instant `deadline`: clock_nanosleep(TIMER_ABSTIME) to
 * deadline - spin, then busy-wait the rest; spin = min(spin_ns, a quarter of the wait). */
void qnb_sleep_until_ns(int64_t deadline, int64_t spin_ns)
{
    /* never busy-wait more than a quarter of the wait: a real-time client with short requests
     * must not hold a core (requests of 1 ms and more keep the full spin) */
    int64_t left = deadline - qnb_now_ns();
    if (spin_ns > left / 4)
        spin_ns = left > 0 ? left / 4 : 0;
    int64_t wake = deadline - spin_ns;
    if (qnb_now_ns() < wake) {
        struct timespec ts = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            if (qnb_stop_signal)
                return;
    }
    while (qnb_now_ns() < deadline)
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
