/* qndelay: a user-space delay line between two TAP devices (the testbed's link delay).
 *
 *   qndelay --a TAP_A --b TAP_B --delay SECONDS [--slots N] [--mtu BYTES]
 *
 * Attaches to two existing TAP devices (ip tuntap add mode tap ...) of the current network
 * namespace and forwards every Ethernet frame read from one to the other after a fixed delay,
 * in FIFO order per direction: a wire of fixed propagation delay. This kernel has no netem, so
 * the testbed splices this program into a node's link (the node's address on TAP_A; TAP_B and
 * the node's veth in one bridge). A frame that finds its direction's queue full (--slots
 * frames in flight) is dropped, like a full transmit ring. Each direction is one FIFO ring of
 * fixed-size slots; the loop sleeps in ppoll() until just before the next frame is due (then
 * busy-waits the last tens of microseconds) or until one arrives (timer slack 1 us; SCHED_FIFO
 * when allowed, so a busy machine delays it less). A frame is stamped when the line reads it:
 * the kernel's TAP path and the line's wake-up on arrival (tens of microseconds each) come on
 * top of the delay.
 *
 * Prints "ready" on stdout once both devices are attached; on SIGTERM/SIGINT prints one JSON
 * line of counters on stderr and exits 0. Exit 2: usage; 1: a device cannot be attached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

struct ring {
    unsigned char *buf; /* slots x slot bytes */
    uint32_t *len;
    int64_t *due; /* ns, CLOCK_MONOTONIC */
    size_t slot, n, head, count;
    uint64_t frames, bytes, drops;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int tap_attach(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "qndelay: cannot open /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        fprintf(stderr, "qndelay: cannot attach to TAP device '%s': %s\n", name,
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int ring_init(struct ring *r, size_t slots, size_t slot)
{
    memset(r, 0, sizeof *r);
    r->slot = slot;
    r->n = slots;
    r->buf = malloc(slots * slot); /* untouched pages cost nothing until frames queue up */
    r->len = calloc(slots, sizeof *r->len);
    r->due = calloc(slots, sizeof *r->due);
    return r->buf && r->len && r->due ? 0 : -1;
}

/* read every frame waiting on fd into the ring, due at now + delay */
static void ring_fill(struct ring *r, int fd, int64_t delay)
{
    unsigned char spill[65536];
    for (;;) {
        unsigned char *dst = r->count < r->n ? r->buf + ((r->head + r->count) % r->n) * r->slot
                                             : spill;
        ssize_t got = read(fd, dst, r->count < r->n ? r->slot : sizeof spill);
        if (got <= 0)
            return; /* EAGAIN: nothing more now */
        if (r->count >= r->n) {
            r->drops++;
            continue;
        }
        size_t i = (r->head + r->count) % r->n;
        r->len[i] = (uint32_t)got;
        r->due[i] = now_ns() + delay;
        r->count++;
    }
}

/* write the frames that are due (busy-waiting up to `spin` ns for one about to be due);
 * returns the due time of the next one (INT64_MAX: none) */
static int64_t ring_drain(struct ring *r, int fd, int64_t spin)
{
    while (r->count) {
        int64_t t = now_ns();
        if (r->due[r->head] > t + spin)
            return r->due[r->head];
        while (r->due[r->head] > t)
            t = now_ns();
        ssize_t put = write(fd, r->buf + r->head * r->slot, r->len[r->head]);
        if (put < 0 && (errno == EAGAIN || errno == EINTR))
            return now_ns() + 20000; /* the kernel side is busy: retry in 20 us */
        if (put < 0)
            r->drops++;
        else {
            r->frames++;
            r->bytes += r->len[r->head];
        }
        r->head = (r->head + 1) % r->n;
        r->count--;
    }
    return INT64_MAX;
}

static void usage(void)
{
    fprintf(stderr, "usage: qndelay --a TAP_A --b TAP_B --delay SECONDS [--slots N] "
                    "[--mtu BYTES]\n");
}

int main(int argc, char **argv)
{
    const char *a = NULL, *b = NULL;
    double delay = NAN;
    long slots = 4096, mtu = 9000;
    for (int i = 1; i < argc; i += 2) { /* --option value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        char *end = NULL;
        if (!strcmp(argv[i], "--a"))
            a = v;
        else if (!strcmp(argv[i], "--b"))
            b = v;
        else if (!strcmp(argv[i], "--delay"))
            delay = strtod(v, &end);
        else if (!strcmp(argv[i], "--slots"))
            slots = strtol(v, &end, 10);
        else if (!strcmp(argv[i], "--mtu"))
            mtu = strtol(v, &end, 10);
        else {
            usage();
            return 2;
        }
        if (end && *end) {
            fprintf(stderr, "qndelay: %s '%s' is not a number\n", argv[i], v);
            return 2;
        }
    }
    if (!a || !b) {
        usage();
        return 2;
    }
    if (!(delay >= 0.0) || delay > 10.0) {
        fprintf(stderr, "qndelay: --delay must be a number of seconds in [0, 10], got %g\n",
                delay);
        return 2;
    }
    if (slots < 16 || slots > 1000000 || mtu < 68 || mtu > 65000) {
        fprintf(stderr, "qndelay: --slots must be 16..1000000 and --mtu 68..65000\n");
        return 2;
    }
    int fa = tap_attach(a), fb = tap_attach(b);
    if (fa < 0 || fb < 0)
        return 1;
    struct ring ab, ba;
    size_t slot = (size_t)mtu + 64; /* Ethernet header, VLAN tag and slack */
    if (ring_init(&ab, (size_t)slots, slot) || ring_init(&ba, (size_t)slots, slot)) {
        fprintf(stderr, "qndelay: out of memory for %ld slots of %zu bytes\n", slots, slot);
        return 1;
    }
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    struct sched_param sp = {.sched_priority = 5};
    int rt = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    const int64_t d = (int64_t)llround(delay * 1e9);
    printf("ready\n");
    fflush(stdout);
    /* A timed wake-up comes late by the machine's timer latency (~50 us here under SCHED_FIFO,
     * more when busy): the line wakes `lead` ns early -- lead follows the measured lateness
     * (exponential average, capped at 300 us) -- and busy-waits the rest, so frames leave on
     * time without spinning between frames. */
    int64_t lead = 50000, target = 0;
    while (!stop_flag) {
        int64_t next1 = ring_drain(&ab, fb, lead), next2 = ring_drain(&ba, fa, lead);
        int64_t next = next1 < next2 ? next1 : next2;
        struct pollfd p[2] = {{.fd = fa, .events = POLLIN}, {.fd = fb, .events = POLLIN}};
        struct timespec ts, *tp = NULL;
        target = 0;
        if (next != INT64_MAX) {
            target = next - lead;
            int64_t wait = target - now_ns();
            if (wait < 0)
                wait = 0;
            ts.tv_sec = wait / 1000000000LL;
            ts.tv_nsec = wait % 1000000000LL;
            tp = &ts;
        }
        int n = ppoll(p, 2, tp, NULL);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "qndelay: ppoll: %s\n", strerror(errno));
            return 1;
        }
        if (n == 0 && target) {
            int64_t late = now_ns() - target;
            lead += (late - lead) / 8;
            lead = lead < 0 ? 0 : lead > 300000 ? 300000 : lead;
        }
        if (n > 0) {
            if (p[0].revents & POLLIN)
                ring_fill(&ab, fa, d);
            if (p[1].revents & POLLIN)
                ring_fill(&ba, fb, d);
        }
    }
    fprintf(stderr,
            "{\"delay_s\": %.9g, \"realtime\": %s, \"a_to_b\": {\"frames\": %llu, \"bytes\": "
            "%llu, \"drops\": %llu}, \"b_to_a\": {\"frames\": %llu, \"bytes\": %llu, "
            "\"drops\": %llu}}\n",
            delay, rt ? "true" : "false", (unsigned long long)ab.frames,
            (unsigned long long)ab.bytes, (unsigned long long)ab.drops,
            (unsigned long long)ba.frames, (unsigned long long)ba.bytes,
            (unsigned long long)ba.drops);
    return 0;
}
