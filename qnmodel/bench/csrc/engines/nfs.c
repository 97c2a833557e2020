/* nfs engine: reads and writes over NFSv3 with the user-space client libnfs (no kernel client).
 *
 * --nfs-url nfs://SERVER/EXPORT/[DIR] names a directory on the server; job j uses its own file
 * "qnbench-<pid>-job<j>.dat" of --size bytes there (laid out, untimed, before the first read point
 * that needs it; removed at the end of the run). With --nfs-prefix P job j uses "P-job<j>.dat",
 * read as it is when it already has --size bytes (files prepared on the server, e.g. evicted
 * from its page cache for a miss case) and never removed. Each request of --bs bytes is split into NFS
 * READ/WRITE calls of at most --rsize/--wsize bytes (and at most the server's maximum), issued one
 * after the other as a kernel client without read-ahead would. --nfs-cache 1 turns on libnfs' own
 * page cache (a real client-cache-hit case); 0 sends every read to the server. For writes the
 * final COMMIT (nfs_fsync) and close run inside the timed interval: close-to-open consistency
 * makes a write durable only then (seed 001's lesson).
 *
 * Built only when libnfs (Debian libnfs-dev) is found by CMake; otherwise the engine is listed
 * but refuses to run, naming the missing package. Written against libnfs 4.0, whose
 * nfs_pread(nfs, fh, offset, count, buf) argument order differs from libnfs 5.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../qnbench.h"

#ifdef QNBENCH_HAVE_LIBNFS
#include <nfsc/libnfs.h>
#include <sys/stat.h>

#define NFS_PAGE 4096 /* libnfs' page-cache page size */

struct nfs_worker {
    struct nfs_context *nfs;
    struct nfsfh *fh;
    unsigned char *buf;
    long long off;
    long long nblocks;
    uint64_t rmax, wmax;
    int write;
    int random;
    char path[512];
};

/* the mount of --nfs-url: server, export and directory inside it */
static int nfs_connect(const struct qnb_config *c, struct nfs_context **out, char *dir,
                       size_t dirlen, char *err, size_t errlen)
{
    struct nfs_context *nfs = nfs_init_context();
    if (!nfs) {
        snprintf(err, errlen, "nfs: cannot create a libnfs context");
        return -1;
    }
    struct nfs_url *u = nfs_parse_url_dir(nfs, c->nfs_url);
    if (!u || !u->server || !u->path) {
        snprintf(err, errlen, "nfs: --nfs-url '%s' is not nfs://SERVER/EXPORT[/DIR]: %s",
                 c->nfs_url, nfs_get_error(nfs));
        if (u)
            nfs_destroy_url(u);
        nfs_destroy_context(nfs);
        return -1;
    }
    nfs_set_autoreconnect(nfs, 0);
    if (nfs_mount(nfs, u->server, u->path) != 0) {
        snprintf(err, errlen, "nfs: mount %s:%s failed: %s", u->server, u->path,
                 nfs_get_error(nfs));
        nfs_destroy_url(u);
        nfs_destroy_context(nfs);
        return -1;
    }
    snprintf(dir, dirlen, "%s", u->file ? u->file : "");
    nfs_destroy_url(u);
    *out = nfs;
    return 0;
}

static void job_path(const struct qnb_config *c, const char *dir, int job, char *path,
                     size_t len)
{
    size_t n = strlen(dir);
    const char *sep = (n && dir[n - 1] == '/') ? "" : "/";
    if (c->nfs_prefix[0])
        snprintf(path, len, "%s%s%s-job%d.dat", dir, sep, c->nfs_prefix, job);
    else
        snprintf(path, len, "%s%sqnbench-%ld-job%d.dat", dir, sep, (long)getpid(), job);
}

static int nfs_check(const struct qnb_config *c, char *err, size_t len)
{
    if (strncmp(c->nfs_url, "nfs://", 6) != 0) {
        snprintf(err, len, "nfs: --nfs-url nfs://SERVER/EXPORT[/DIR] is required, got '%s'",
                 c->nfs_url);
        return 2;
    }
    if (c->rsize < 512 || c->wsize < 512) {
        snprintf(err, len, "nfs: --rsize and --wsize must be at least 512 bytes");
        return 2;
    }
    long long bs = 0;
    for (int i = 0; i < c->bs.n; i++) {
        if (c->bs.v[i] > c->size) {
            snprintf(err, len, "nfs: --bs %lld is larger than the file --size %lld", c->bs.v[i],
                     c->size);
            return 2;
        }
        bs = c->bs.v[i] > bs ? c->bs.v[i] : bs;
    }
    /* libnfs counts its page cache in 32-bit pages */
    if (c->nfs_cache && (c->size + NFS_PAGE - 1) / NFS_PAGE > (long long)UINT32_MAX) {
        snprintf(err, len, "nfs: --nfs-cache 1 holds at most %llu pages of %d bytes; --size %lld "
                           "needs more",
                 (unsigned long long)UINT32_MAX, NFS_PAGE, c->size);
        return 2;
    }
    long double per_job = (long double)bs;
    if (c->nfs_cache)
        per_job += (long double)c->size; /* the client's page cache holds the whole file */
    return qnb_check_memory(c, "nfs: the request buffer (--bs) and page cache (--size)", per_job,
                            err, len);
}

static int nfs_io_error(struct qnb_worker *w, const char *what, long long off, int rc)
{
    struct nfs_worker *f = w->priv;
    qnb_worker_error(w, "nfs: %s %s at offset %lld: %s (%s)", what, f->path, off,
                     nfs_get_error(f->nfs), qnb_errno_name(rc < 0 ? -rc : EIO));
    return -1;
}

/* one request: calls of at most `max` bytes, one after the other */
static int transfer(struct qnb_worker *w, long long off, size_t bs, uint64_t max)
{
    struct nfs_worker *f = w->priv;
    size_t done = 0;
    while (done < bs) {
        uint64_t n = bs - done < max ? bs - done : max;
        int rc = f->write ? nfs_pwrite(f->nfs, f->fh, (uint64_t)(off + (long long)done), n,
                                       f->buf + done)
                          : nfs_pread(f->nfs, f->fh, (uint64_t)(off + (long long)done), n,
                                      f->buf + done);
        if (rc <= 0)
            return nfs_io_error(w, f->write ? "WRITE" : "READ", off + (long long)done, rc);
        done += (size_t)rc;
    }
    return 0;
}

static int nfs_worker_init(struct qnb_worker *w)
{
    struct qnb_run *r = w->run;
    const struct qnb_config *c = r->cfg;
    struct nfs_worker *f = calloc(1, sizeof *f);
    char err[768], dir[256];
    if (!f) {
        qnb_worker_error(w, "nfs: out of memory");
        return -1;
    }
    w->priv = f;
    f->write = strstr(c->rw, "write") != NULL;
    f->random = strncmp(c->rw, "rand", 4) == 0;
    f->nblocks = c->size / r->pt.bs;
    if (nfs_connect(c, &f->nfs, dir, sizeof dir, err, sizeof err)) {
        qnb_worker_error(w, "%s", err);
        return -1;
    }
    if (c->nfs_cache)
        nfs_set_pagecache(f->nfs, (uint32_t)((c->size + NFS_PAGE - 1) / NFS_PAGE));
    f->rmax = nfs_get_readmax(f->nfs);
    f->wmax = nfs_get_writemax(f->nfs);
    if (!f->rmax || (uint64_t)c->rsize < f->rmax)
        f->rmax = (uint64_t)c->rsize;
    if (!f->wmax || (uint64_t)c->wsize < f->wmax)
        f->wmax = (uint64_t)c->wsize;
    f->buf = malloc((size_t)r->pt.bs);
    if (!f->buf) {
        qnb_worker_error(w, "nfs: out of memory for a %lld-byte buffer", r->pt.bs);
        return -1;
    }
    for (long long i = 0; i < r->pt.bs; i++)
        f->buf[i] = (unsigned char)(i * 31 + w->id);
    job_path(c, dir, w->id, f->path, sizeof f->path);
    struct nfs_stat_64 st;
    int exists = nfs_stat64(f->nfs, f->path, &st) == 0 && (long long)st.nfs_size == c->size;
    if (f->write || !exists) {
        /* create or truncate; reads lay the whole file out first (untimed) */
        if (nfs_open(f->nfs, f->path, O_RDWR | O_CREAT | O_TRUNC, &f->fh) != 0 &&
            nfs_creat(f->nfs, f->path, 0644, &f->fh) != 0) {
            qnb_worker_error(w, "nfs: create %s: %s", f->path, nfs_get_error(f->nfs));
            return -1;
        }
        if (!f->write) {
            int wr = f->write;
            f->write = 1;
            for (long long off = 0; off < c->size; off += r->pt.bs) {
                if (qnb_stop_signal) { /* every step of the layout checks for a stop */
                    qnb_worker_error(w, "nfs: laying out %s: interrupted by signal %d",
                                     f->path, (int)qnb_stop_signal);
                    return -1;
                }
                size_t n = (size_t)(c->size - off < r->pt.bs ? c->size - off : r->pt.bs);
                if (transfer(w, off, n, f->wmax))
                    return -1;
            }
            f->write = wr;
            if (nfs_fsync(f->nfs, f->fh) != 0)
                return nfs_io_error(w, "COMMIT", 0, -EIO);
            nfs_close(f->nfs, f->fh);
            f->fh = NULL;
        }
    }
    if (!f->fh && nfs_open(f->nfs, f->path, f->write ? O_RDWR : O_RDONLY, &f->fh) != 0) {
        qnb_worker_error(w, "nfs: open %s: %s", f->path, nfs_get_error(f->nfs));
        return -1;
    }
    return 0;
}

static int nfs_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct nfs_worker *f = w->priv;
    size_t bs = (size_t)w->run->pt.bs;
    long long off = qnb_next_offset(&w->rng, f->random, &f->off, f->nblocks, (long long)bs);
    if (transfer(w, off, bs, f->write ? f->wmax : f->rmax))
        return -1;
    *bytes = bs;
    return 0;
}

/* timed for writes: COMMIT and close (close-to-open); reads just close */
static int nfs_finish(struct qnb_worker *w)
{
    struct nfs_worker *f = w->priv;
    int rc = 0;
    if (f->write && nfs_fsync(f->nfs, f->fh) != 0)
        rc = nfs_io_error(w, "COMMIT", 0, -EIO);
    if (nfs_close(f->nfs, f->fh) != 0 && rc == 0)
        rc = nfs_io_error(w, "close", 0, -EIO);
    f->fh = NULL;
    return rc;
}

static void nfs_cleanup(struct qnb_worker *w)
{
    struct nfs_worker *f = w->priv;
    if (!f)
        return;
    if (f->nfs) {
        if (f->fh)
            nfs_close(f->nfs, f->fh);
        /* written files are not reused; one that cannot be removed is said (the first error
         * of a worker is kept: a server gone mid-request already failed it) */
        if (f->write && !w->run->cfg->nfs_prefix[0]) {
            int e = nfs_unlink(f->nfs, f->path);
            if (e < 0 && e != -ENOENT && !w->failed)
                qnb_worker_error(w, "nfs: cannot remove its file %s: %s; it is left on the server",
                                 f->path, nfs_get_error(f->nfs));
        }
        nfs_umount(f->nfs);
        nfs_destroy_context(f->nfs);
    }
    free(f->buf);
    free(f);
    w->priv = NULL;
}

static void nfs_report(struct qnb_run *r, struct qnb_json *j)
{
    qj_knum(j, "commit_close_s", r->finish_s);
    qj_kint(j, "file_size_bytes", r->cfg->size);
    qj_kint(j, "rsize_bytes", r->cfg->rsize);
    qj_kint(j, "wsize_bytes", r->cfg->wsize);
    qj_kbool(j, "client_cache", r->cfg->nfs_cache != 0);
}

/* remove the read files laid out for the largest --jobs */
static void nfs_run_teardown(struct qnb_run *r)
{
    const struct qnb_config *c = r->cfg;
    struct nfs_context *nfs;
    char err[768], dir[256], path[512];
    if (strstr(c->rw, "write") || c->nfs_prefix[0])
        return; /* --nfs-prefix: the caller's prepared files stay */
    if (nfs_connect(c, &nfs, dir, sizeof dir, err, sizeof err)) {
        qnb_run_error(r, "nfs: cannot remove its files qnbench-%ld-job*.dat on %s (%s); they are "
                         "left on the server",
                      (long)getpid(), c->nfs_url, err);
        return;
    }
    long long most = 0;
    for (int i = 0; i < c->jobs.n; i++)
        most = c->jobs.v[i] > most ? c->jobs.v[i] : most;
    for (int job = 0; job < most; job++) {
        job_path(c, dir, job, path, sizeof path);
        int e = nfs_unlink(nfs, path);
        if (e < 0 && e != -ENOENT)
            qnb_run_error(r, "nfs: cannot remove its file %s on %s: %s; it is left on the server",
                          path, c->nfs_url, nfs_get_error(nfs));
    }
    nfs_umount(nfs);
    nfs_destroy_context(nfs);
}

const struct qnb_engine qnb_engine_nfs = {
    .name = "nfs",
    .help = "reads/writes over NFSv3 with the user-space client libnfs (--nfs-url)",
    .flags = QNB_ENG_USES_BS | QNB_ENG_NEEDS_SERVER,
    .check = nfs_check,
    .worker_init = nfs_worker_init,
    .op = nfs_op,
    .worker_finish = nfs_finish,
    .worker_cleanup = nfs_cleanup,
    .point_report = nfs_report,
    .run_teardown = nfs_run_teardown,
};

#else /* built without libnfs: the engine is listed and says what is missing */

static int nfs_check(const struct qnb_config *c, char *err, size_t len)
{
    (void)c;
    snprintf(err, len,
             "nfs: engine not built: qnbench was compiled without libnfs (install Debian's "
             "libnfs-dev and rebuild, e.g. pip install . again)");
    return 2;
}

const struct qnb_engine qnb_engine_nfs = {
    .name = "nfs",
    .help = "NFSv3 over libnfs: NOT BUILT (needs libnfs-dev at build time)",
    .flags = QNB_ENG_USES_BS | QNB_ENG_NEEDS_SERVER,
    .check = nfs_check,
};

#endif
