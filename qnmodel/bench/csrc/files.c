/* Safe file handling: every file lives in a new directory this run created itself.
 *
 * The directory is made with mkdir (a unique name; EEXIST means somebody else's and we pick another
 * name), opened with O_DIRECTORY|O_NOFOLLOW, and files are created relative to it with
 * openat(O_CREAT|O_EXCL|O_NOFOLLOW): an existing file or a planted symlink makes creation fail
 * rather than being reused. Cleanup unlinks exactly the names we created and then removes the
 * directory; a directory holding anything else is left in place with a message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "qnbench.h"

#define MAX_CREATED 1100
static int dirfd_ = -1;
static int ncreated;
static char created[MAX_CREATED][32];

const char *qnb_errno_name(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EIO: return "EIO";
    case EINVAL: return "EINVAL";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ELOOP: return "ELOOP";
    case EROFS: return "EROFS";
    case ENOTDIR: return "ENOTDIR";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ECONNRESET: return "ECONNRESET";
    case EPIPE: return "EPIPE";
    case EINTR: return "EINTR";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    default: return "errno";
    }
}

int qnb_rundir_create(struct qnb_run *r)
{
    if (r->rundir[0])
        return 0;
    const char *parent = r->cfg->dir;
    struct stat st;
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
        qnb_run_error(r, "--dir '%s' is not an existing directory", parent);
        return -1;
    }
    struct qnb_rng rng;
    qnb_rng_seed(&rng, (uint64_t)qnb_now_ns() ^ ((uint64_t)getpid() << 32));
    for (int attempt = 0; attempt < 100; attempt++) {
        char path[QNB_PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/qnbench-%ld-%08llx", parent, (long)getpid(),
                         (unsigned long long)(qnb_rng_next(&rng) & 0xffffffffull));
        if (n < 0 || (size_t)n >= sizeof path) {
            qnb_run_error(r, "--dir '%s' is too long", parent);
            return -1;
        }
        if (mkdir(path, 0700) == 0) {
            dirfd_ = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (dirfd_ < 0) {
                qnb_run_error(r, "cannot open the directory just created %s: %s", path,
                              strerror(errno));
                rmdir(path);
                return -1;
            }
            snprintf(r->rundir, sizeof r->rundir, "%s", path);
            return 0;
        }
        if (errno != EEXIST) {
            int e = errno;
            qnb_run_error(r, "cannot create a directory in --dir '%s': %s (%s)", parent,
                          strerror(e), qnb_errno_name(e));
            return -1;
        }
    }
    qnb_run_error(r, "could not find an unused directory name in '%s'", parent);
    return -1;
}

/* Create `name` O_EXCL in the run directory; on failure the message is in err (not recorded). */
static int create_in_rundir(struct qnb_run *r, const char *name, int extra_flags, char *path_out,
                            size_t pathlen, char *err, size_t errlen)
{
    if (qnb_rundir_create(r)) { /* recorded by qnb_rundir_create */
        snprintf(err, errlen, "%s", r->nerrors ? r->errors[r->nerrors - 1] : "no run directory");
        return -2;
    }
    if (ncreated >= MAX_CREATED) {
        snprintf(err, errlen, "too many files");
        return -1;
    }
    int fd = openat(dirfd_, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags,
                    0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s/%s: %s (%s)", r->rundir, name, strerror(e),
                 qnb_errno_name(e));
        return -1;
    }
    snprintf(created[ncreated++], sizeof created[0], "%s", name);
    if (path_out)
        snprintf(path_out, pathlen, "%s/%s", r->rundir, name);
    return fd;
}

int qnb_file_create(struct qnb_run *r, const char *name, int extra_flags, char *path_out,
                    size_t pathlen)
{
    char err[QNB_PATH_MAX + 128];
    int fd = create_in_rundir(r, name, extra_flags, path_out, pathlen, err, sizeof err);
    if (fd == -1)
        qnb_run_error(r, "%s", err);
    return fd < 0 ? -1 : fd;
}

/* Open a file we created earlier (refuses names we did not create). */
int qnb_file_open(struct qnb_run *r, const char *name, int flags)
{
    int ours = 0;
    for (int i = 0; i < ncreated; i++)
        if (strcmp(created[i], name) == 0)
            ours = 1;
    if (!ours || dirfd_ < 0) {
        errno = EPERM;
        return -1;
    }
    (void)r;
    return openat(dirfd_, name, flags | O_NOFOLLOW | O_CLOEXEC);
}

int qnb_space_check(const struct qnb_run *r, long long nfiles, long long size, char *err,
                    size_t errlen)
{
    const char *dir = r->rundir[0] ? r->rundir : r->cfg->dir;
    long long need;
    if (nfiles <= 0)
        return 0;
    if (qnb_mul_size(nfiles, size, &need)) {
        snprintf(err, errlen,
                 "%lld file(s) of --size %lld bytes exceed the largest byte count qnbench keeps "
                 "(%lld); nothing was written to %s",
                 nfiles, size, (long long)INT64_MAX, dir);
        return -1;
    }
    struct statvfs st;
    if (statvfs(dir, &st) != 0 || st.f_blocks == 0)
        return 0; /* no figure (a file system without one, tmpfs without a size): try */
    /* the blocks available to an unprivileged user: root may be allowed some of the reserved
     * ones too, or not (a file system mounted with its reserve for another user) */
    long double avail = (long double)st.f_bavail * (long double)st.f_frsize;
    if ((long double)need > avail) {
        snprintf(err, errlen,
                 "not enough free space in %s for %lld file(s) of --size %lld bytes (%lld bytes): "
                 "%.0Lf bytes are free (%s, ENOSPC); nothing was written: give a smaller --size, "
                 "fewer --jobs, or another --dir",
                 dir, nfiles, size, need, avail, strerror(ENOSPC));
        return -1;
    }
    return 0;
}

/* Create `name` and fill it with `size` bytes (a non-zero pattern, or zeros), then fsync it. */
int qnb_file_layout(struct qnb_run *r, const char *name, long long size, int zero, char *err,
                    size_t errlen)
{
    /* the caller reports err (once, with its engine's name) */
    int fd = create_in_rundir(r, name, 0, NULL, 0, err, errlen);
    if (fd < 0)
        return -1;
    size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < chunk; i++)
        buf[i] = zero ? 0 : (unsigned char)(i * 131u + 7u);
    long long done = 0;
    while (done < size) {
        if (qnb_stop_signal) { /* every step checks: a stop ends the layout at once */
            snprintf(err, errlen, "laying out %s/%s (%lld of %lld bytes written): interrupted by "
                     "signal %d",
                     r->rundir, name, done, size, (int)qnb_stop_signal);
            free(buf);
            close(fd);
            return -1;
        }
        size_t n = (size - done) < (long long)chunk ? (size_t)(size - done) : chunk;
        ssize_t w = pwrite(fd, buf, n, done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            snprintf(err, errlen, "laying out %s/%s (%lld of %lld bytes written): %s (%s)",
                     r->rundir, name, done, size, strerror(e), qnb_errno_name(e));
            free(buf);
            close(fd);
            return -1;
        }
        done += w;
    }
    free(buf);
    if (qnb_stop_signal) {
        snprintf(err, errlen, "laying out %s/%s: interrupted by signal %d before its fsync",
                 r->rundir, name, (int)qnb_stop_signal);
        close(fd);
        return -1;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int e = errno;
        snprintf(err, errlen, "fsync %s/%s: %s (%s)", r->rundir, name, strerror(e),
                 qnb_errno_name(e));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Remove every file qnbench created, then its directory. A file of ours that cannot be removed
 * (a directory made read-only under it, a file system gone read-only) is a run error: the
 * document says what was left where. A file somebody else put there is left with the directory,
 * which is not an error of the measurement (a diagnostic only). */
void qnb_rundir_cleanup(struct qnb_run *r)
{
    if (!r->rundir[0])
        return;
    int left = 0;
    for (int i = 0; i < ncreated; i++)
        if (unlinkat(dirfd_, created[i], 0) != 0 && errno != ENOENT) {
            int e = errno;
            qnb_run_error(r, "cannot remove its file %s/%s: %s (%s); it is left in place",
                          r->rundir, created[i], strerror(e), qnb_errno_name(e));
            left++;
        }
    ncreated = 0;
    if (dirfd_ >= 0)
        close(dirfd_);
    dirfd_ = -1;
    if (rmdir(r->rundir) != 0) {
        int e = errno;
        if (left)
            qnb_run_error(r, "left its directory %s in place with the %d file(s) it could not "
                             "remove",
                          r->rundir, left);
        else if (e == ENOTEMPTY || e == EEXIST)
            qnb_diag("left directory %s in place: %s (it holds files qnbench did not create)",
                     r->rundir, strerror(e));
        else
            qnb_run_error(r, "cannot remove its directory %s: %s (%s)", r->rundir, strerror(e),
                          qnb_errno_name(e));
    }
    r->rundir[0] = '\0';
}

/* The descriptor of the run's own directory (-1 before qnb_rundir_create): engines that build
 * their own tree (meta) work relative to it with *at() calls and O_NOFOLLOW. */
int qnb_rundir_fd(void) { return dirfd_; }
