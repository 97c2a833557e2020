/* file engine: sequential/random reads and writes on files the run created itself.
 *
 * Each job j has its own file "job<j>.dat" of --size bytes inside the run's new directory, laid
 * out (filled and fsync'ed) before the first point that needs it and reused by later points.
 * Access paths: pread/pwrite (sync), fread/fwrite (stdio), mmap + memcpy (mmap), and O_DIRECT
 * with a 4096-byte aligned buffer (direct). For writes with --end-fsync (default) the final fsync
 * (msync for mmap, fflush + fsync for stdio) and close run inside the timed interval, because a
 * write is not done until it is on stable storage (the NFS close-to-open lesson of seed 001).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../qnbench.h"

enum access { A_SYNC, A_STDIO, A_MMAP, A_DIRECT };

struct file_run {
    int laid_out; /* files job0 .. job(laid_out-1) exist with the right size */
    int shared;   /* --file-layout shared: shared.dat exists */
};

struct file_worker {
    int fd;
    FILE *fp;
    unsigned char *map;
    unsigned char *buf;
    long long off;
    long long nblocks;
    long long writes; /* since the last --fsync */
    int write;
    int random;
    int mix;          /* --rwmix: percent of reads, or -1 */
    long long nth;    /* requests issued (shared layout: the interleave position) */
    enum access acc;
    char name[32];
};

static enum access access_of(const struct qnb_config *c)
{
    if (strcmp(c->access, "stdio") == 0)
        return A_STDIO;
    if (strcmp(c->access, "mmap") == 0)
        return A_MMAP;
    if (strcmp(c->access, "direct") == 0)
        return A_DIRECT;
    return A_SYNC;
}

static int shared_layout(const struct qnb_config *c)
{
    return strcmp(c->file_layout, "shared") == 0;
}

static int file_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->rwmix != -1 && strcmp(c->access, "stdio") == 0) {
        snprintf(err, len, "file: --rwmix needs --access sync, mmap or direct (a stdio stream "
                           "cannot switch between reading and writing without a seek)");
        return 2;
    }
    for (int i = 0; i < c->bs.n; i++) {
        if (c->bs.v[i] > c->size) {
            snprintf(err, len, "file: --bs %lld is larger than the file --size %lld", c->bs.v[i],
                     c->size);
            return 2;
        }
        if (strcmp(c->access, "direct") == 0 && c->bs.v[i] % 512 != 0) {
            snprintf(err, len,
                     "file: --access direct needs --bs a multiple of 512 bytes (O_DIRECT "
                     "alignment), got %lld",
                     c->bs.v[i]);
            return 2;
        }
    }
    if (c->fsync_every < 0) {
        snprintf(err, len, "file: --fsync %lld must be >= 0", c->fsync_every);
        return 2;
    }
    if (strcmp(c->access, "direct") == 0 && c->size % 4096 != 0) {
        snprintf(err, len, "file: --access direct needs --size a multiple of 4096, got %lld",
                 c->size);
        return 2;
    }
    long long bs = 0;
    for (int i = 0; i < c->bs.n; i++)
        bs = c->bs.v[i] > bs ? c->bs.v[i] : bs;
    if (qnb_check_memory(c, "file: the request buffers (--bs)", (long double)bs, err, len))
        return 2;
    if (c->drop_caches && geteuid() != 0) {
        snprintf(err, len,
                 "file: --drop-caches needs root (it writes /proc/sys/vm/drop_caches); run as root "
                 "or use --access direct to bypass the page cache");
        return 2;
    }
    return 0;
}

static int drop_caches(struct qnb_run *r)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "1\n", 2) != 2) {
        int e = errno;
        qnb_run_error(r, "file: cannot drop the page cache via /proc/sys/vm/drop_caches: %s",
                      strerror(e));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static int file_setup(struct qnb_run *r)
{
    struct file_run *fr = r->erun;
    if (!fr) {
        fr = calloc(1, sizeof *fr);
        if (!fr) {
            qnb_run_error(r, "file: out of memory");
            return -1;
        }
        r->erun = fr;
    }
    /* room for every file this point lays out, before anything is written */
    char err[768];
    long long nfiles = shared_layout(r->cfg) ? !fr->shared : r->pt.jobs - fr->laid_out;
    if (qnb_space_check(r, nfiles, r->cfg->size, err, sizeof err)) {
        qnb_run_error(r, "file: %s", err);
        return -1;
    }
    if (qnb_rundir_create(r))
        return -1;
    if (shared_layout(r->cfg)) {
        if (!fr->shared && qnb_file_layout(r, "shared.dat", r->cfg->size, 0, err, sizeof err)) {
            qnb_run_error(r, "file: %s", err);
            return -1;
        }
        fr->shared = 1;
    }
    while (!shared_layout(r->cfg) && fr->laid_out < r->pt.jobs) {
        char name[32];
        snprintf(name, sizeof name, "job%d.dat", fr->laid_out);
        if (qnb_stop_signal)
            return -1;
        if (qnb_file_layout(r, name, r->cfg->size, 0, err, sizeof err)) {
            qnb_run_error(r, "file: %s", err);
            return -1;
        }
        fr->laid_out++;
    }
    if (r->cfg->drop_caches && drop_caches(r))
        return -1;
    return 0;
}

static int file_worker_init(struct qnb_worker *w)
{
    struct qnb_run *r = w->run;
    const struct qnb_config *c = r->cfg;
    struct file_worker *f = calloc(1, sizeof *f);
    if (!f) {
        qnb_worker_error(w, "file: out of memory");
        return -1;
    }
    w->priv = f;
    f->fd = -1;
    f->acc = access_of(c);
    f->mix = (int)c->rwmix;
    f->write = strstr(c->rw, "write") != NULL || (f->mix >= 0 && f->mix < 100);
    f->random = strncmp(c->rw, "rand", 4) == 0;
    f->nblocks = c->size / r->pt.bs;
    if (shared_layout(c))
        snprintf(f->name, sizeof f->name, "shared.dat");
    else
        snprintf(f->name, sizeof f->name, "job%d.dat", w->id);
    if (posix_memalign((void **)&f->buf, 4096, (size_t)r->pt.bs)) {
        qnb_worker_error(w, "file: out of memory for a %lld-byte buffer", r->pt.bs);
        return -1;
    }
    for (long long i = 0; i < r->pt.bs; i++)
        f->buf[i] = (unsigned char)(i * 31 + w->id);
    int flags = (f->write || f->acc == A_MMAP) ? O_RDWR : O_RDONLY;
    if (f->acc == A_DIRECT)
        flags |= O_DIRECT;
    f->fd = qnb_file_open(r, f->name, flags);
    if (f->fd < 0) {
        int e = errno;
        if (f->acc == A_DIRECT && e == EINVAL)
            qnb_worker_error(w,
                             "file: open %s/%s with O_DIRECT: %s (EINVAL): this filesystem "
                             "does not support O_DIRECT (tmpfs does not); use another --dir or "
                             "another --access",
                             r->rundir, f->name, strerror(e));
        else
            qnb_worker_error(w, "file: open %s/%s: %s (%s)", r->rundir, f->name, strerror(e),
                             qnb_errno_name(e));
        return -1;
    }
    if (f->acc == A_STDIO) {
        f->fp = fdopen(f->fd, f->write ? "r+b" : "rb");
        if (!f->fp) {
            qnb_worker_error(w, "file: fdopen: %s", strerror(errno));
            return -1;
        }
    } else if (f->acc == A_MMAP) {
        f->map = mmap(NULL, (size_t)c->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            qnb_worker_error(w, "file: mmap %s/%s: %s", r->rundir, f->name, strerror(errno));
            return -1;
        }
    }
    /* spread sequential jobs' start so they do not all begin at offset 0 of the cache */
    f->off = 0;
    return 0;
}

static int io_error(struct qnb_worker *w, const char *what, long long off, int e)
{
    struct file_worker *f = w->priv;
    qnb_worker_error(w, "file: %s %s/%s at offset %lld: %s (%s)", what, w->run->rundir, f->name,
                     off, strerror(e), qnb_errno_name(e));
    return -1;
}

static int file_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct file_worker *f = w->priv;
    size_t bs = (size_t)w->run->pt.bs;
    long long off;
    if (shared_layout(w->run->cfg) && !f->random) /* IOR "hard": jobs interleave block by block */
        off = (f->nth * w->run->pt.jobs + w->id) % f->nblocks * (long long)bs;
    else
        off = qnb_next_offset(&w->rng, f->random, &f->off, f->nblocks, (long long)bs);
    f->nth++;
    int wr = f->write;
    if (f->mix >= 0) { /* --rwmix: each request reads with probability mix/100 */
        wr = (int)qnb_rng_below(&w->rng, 100) >= f->mix;
        w->op_class = wr; /* op classes "read,write" */
    }
    switch (f->acc) {
    case A_SYNC:
    case A_DIRECT: {
        size_t done = 0;
        while (done < bs) {
            ssize_t n = wr ? pwrite(f->fd, f->buf + done, bs - done, off + (long long)done)
                                 : pread(f->fd, f->buf + done, bs - done, off + (long long)done);
            if (n < 0 && errno == EINTR && !qnb_stop_signal)
                continue;
            if (n < 0)
                return io_error(w, wr ? "pwrite" : "pread", off, errno);
            if (n == 0)
                return io_error(w, wr ? "pwrite" : "pread (unexpected end of file)", off,
                                wr ? ENOSPC : EIO);
            done += (size_t)n;
        }
        break;
    }
    case A_STDIO:
        if ((f->random || off == 0) && fseeko(f->fp, off, SEEK_SET) != 0)
            return io_error(w, "fseeko", off, errno);
        if (wr) {
            if (fwrite(f->buf, 1, bs, f->fp) != bs)
                return io_error(w, "fwrite", off, errno ? errno : EIO);
        } else if (fread(f->buf, 1, bs, f->fp) != bs) {
            return io_error(w, "fread", off, ferror(f->fp) ? errno : EIO);
        }
        break;
    case A_MMAP:
        if (wr)
            memcpy(f->map + off, f->buf, bs);
        else
            memcpy(f->buf, f->map + off, bs);
        break;
    }
    if (wr && w->run->cfg->fsync_every > 0 && ++f->writes >= w->run->cfg->fsync_every) {
        f->writes = 0;
        int rc = 0;
        if (f->acc == A_STDIO)
            rc = fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
        else if (f->acc == A_MMAP)
            rc = msync(f->map, (size_t)w->run->cfg->size, MS_SYNC) != 0;
        else
            rc = fsync(f->fd) != 0;
        if (rc)
            return io_error(w, "fsync (--fsync)", off, errno);
    }
    *bytes = bs;
    return 0;
}

/* timed: make written data durable and close, inside the measured interval */
static int file_finish(struct qnb_worker *w)
{
    struct file_worker *f = w->priv;
    const struct qnb_config *c = w->run->cfg;
    if (!f->write || !c->end_fsync)
        return 0;
    int rc = 0;
    if (f->acc == A_STDIO) {
        if (fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0)
            rc = io_error(w, "fflush/fsync", 0, errno);
        if (fclose(f->fp) != 0 && rc == 0)
            rc = io_error(w, "fclose", 0, errno);
        f->fp = NULL;
        f->fd = -1;
    } else {
        if (f->acc == A_MMAP) {
            if (msync(f->map, (size_t)c->size, MS_SYNC) != 0)
                rc = io_error(w, "msync", 0, errno);
            munmap(f->map, (size_t)c->size);
            f->map = NULL;
        }
        if (rc == 0 && fsync(f->fd) != 0)
            rc = io_error(w, "fsync", 0, errno);
        if (close(f->fd) != 0 && rc == 0)
            rc = io_error(w, "close", 0, errno);
        f->fd = -1;
    }
    w->stat[0] = 1;
    return rc;
}

static void file_cleanup(struct qnb_worker *w)
{
    struct file_worker *f = w->priv;
    if (!f)
        return;
    if (f->map)
        munmap(f->map, (size_t)w->run->cfg->size);
    if (f->fp)
        fclose(f->fp);
    else if (f->fd >= 0)
        close(f->fd);
    free(f->buf);
    free(f);
    w->priv = NULL;
}

static void file_report(struct qnb_run *r, struct qnb_json *j)
{
    qj_knum(j, "fsync_close_s", r->finish_s);
    qj_kint(j, "file_size_bytes", r->cfg->size);
    qj_kstr(j, "file_layout", r->cfg->file_layout);
    if (r->cfg->rwmix >= 0)
        qj_kint(j, "rwmix_read_percent", r->cfg->rwmix);
}

static const char *file_classes(const struct qnb_config *c)
{
    return c->rwmix >= 0 ? "read,write" : NULL;
}

static void file_run_teardown(struct qnb_run *r)
{
    free(r->erun);
    r->erun = NULL;
}

const struct qnb_engine qnb_engine_file = {
    .name = "file",
    .help = "reads/writes on files it creates in --dir (sync, stdio, mmap, O_DIRECT)",
    .flags = QNB_ENG_USES_BS | QNB_ENG_NEEDS_DIR | QNB_ENG_PROCESSES,
    .check = file_check,
    .point_setup = file_setup,
    .worker_init = file_worker_init,
    .op = file_op,
    .worker_finish = file_finish,
    .worker_cleanup = file_cleanup,
    .point_report = file_report,
    .run_teardown = file_run_teardown,
    .op_classes = file_classes,
};
