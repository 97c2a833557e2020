/* --netns: place each rank of a run in a network namespace of its own.
 *
 * A multi-node measurement on one machine (the testbed: client namespaces joined to servers by
 * shaped veth links) needs each MPI rank's traffic to leave through its own client's link. Rank i
 * joins the i-th namespace of the list (by its `ip netns` name, /run/netns/NAME) right after
 * MPI_Init and before any engine opens a socket. MPI keeps working: its connections were made
 * before, sockets stay in the namespace they were created in, and setns(2) moves only the
 * calling thread (the threads qnbench starts afterwards inherit it). Needs CAP_SYS_ADMIN.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qnbench.h"

int qnb_enter_netns(const struct qnb_config *c, char *err, size_t errlen)
{
    if (!c->netns[0])
        return 0;
    int rank = qnb_mpi_rank(), size = qnb_mpi_size();
    /* the rank-th name of the comma list */
    const char *p = c->netns;
    int count = 1;
    for (const char *q = p; *q; q++)
        count += *q == ',';
    if (count != size) {
        snprintf(err, errlen, "--netns names %d namespace(s) for %d rank(s): give one per rank",
                 count, size);
        return -1;
    }
    for (int i = 0; i < rank; i++)
        p = strchr(p, ',') + 1;
    size_t n = strcspn(p, ",");
    char name[256];
    if (n == 0 || n >= sizeof name || memchr(p, '/', n) || (n <= 2 && p[0] == '.')) {
        snprintf(err, errlen, "--netns: '%.*s' (rank %d) is not a namespace name", (int)n, p,
                 rank);
        return -1;
    }
    memcpy(name, p, n);
    name[n] = 0;
    char path[300];
    snprintf(path, sizeof path, "/run/netns/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "--netns: rank %d cannot open %s: %s (%s)", rank, path,
                 strerror(e), qnb_errno_name(e));
        return -1;
    }
    if (setns(fd, CLONE_NEWNET) != 0) {
        int e = errno;
        snprintf(err, errlen, "--netns: rank %d cannot join %s: %s (%s)%s", rank, name,
                 strerror(e), qnb_errno_name(e), e == EPERM ? "; it needs root" : "");
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}
