/* meta engine: mdtest-style metadata load. Each job creates --files small files, then stats
 * them, opens and closes them, and unlinks them: one point per phase (--meta-op), each phase a
 * fixed amount of work counted whole (no warm-up), so a point's throughput_ops_s is the phase's
 * rate (mdtest's "File creation", "File stat", "File read" open-close, "File removal") and
 * latency_s the latency of one such call.
 *
 * Tree (IO500's mdtest easy and hard): easy = one directory per job (mdtest.<job>/f<i>), hard =
 * one directory all jobs share (mdtest.shared/f<job>.<i>), which serialises on the directory's
 * lock in most file systems.
 *
 * Safety (files.c's rules): the directories are made with mkdirat in the run's own new directory
 * and opened with O_DIRECTORY|O_NOFOLLOW; files are created with O_CREAT|O_EXCL|O_NOFOLLOW, so a
 * planted name or symbolic link makes the point fail instead of being followed or reused; stat
 * refuses anything that is not a regular file; the end removes exactly the files and directories
 * this run created and leaves anything else in place, saying so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../qnbench.h"

#define META_MAX_JOBS 1024

enum { M_CREATE, M_STAT, M_OPEN, M_UNLINK };

struct meta_job {
    long long lo, hi;   /* live files: indexes lo .. hi-1 */
    long long cursor;   /* stat/open_close position; create: files made this point */
    int dfd;            /* its directory (easy) or -1 */
    int made_dir;       /* easy: mdtest.<job> was created by this run */
};

struct meta_run {
    struct meta_job job[META_MAX_JOBS];
    int shared_fd; /* hard: mdtest.shared */
    int made_shared;
    int hard;
    int phase;
    unsigned char *buf;
};

static const char *meta_ops(const struct qnb_config *c) { return c->meta_op; }

static int meta_check(const struct qnb_config *c, char *err, size_t len)
{
    if (c->files < 1 || c->files > 100000000) {
        snprintf(err, len, "meta: --files %lld must be between 1 and 1e8", c->files);
        return 2;
    }
    if (c->meta_bytes < 0 || c->meta_bytes > (1 << 24)) {
        snprintf(err, len, "meta: --meta-bytes %lld must be between 0 and 16 MiB", c->meta_bytes);
        return 2;
    }
    for (int i = 0; i < c->jobs.n; i++)
        if (c->jobs.v[i] > META_MAX_JOBS) {
            snprintf(err, len, "meta: --jobs %lld is more than %d", c->jobs.v[i], META_MAX_JOBS);
            return 2;
        }
    if (!qnb_list_contains(c->meta_op, "create")) {
        snprintf(err, len, "meta: --meta-op must include create (the other phases work on the "
                           "files it makes)");
        return 2;
    }
    return 0;
}

static void job_name(const struct meta_run *m, int id, long long i, char *buf, size_t len)
{
    if (m->hard)
        snprintf(buf, len, "f%d.%lld", id, i);
    else
        snprintf(buf, len, "f%lld", i);
}

/* make and open a directory of our own inside the run directory */
static int own_dir(struct qnb_run *r, const char *name, int *made)
{
    int top = qnb_rundir_fd();
    if (mkdirat(top, name, 0700) != 0) {
        int e = errno;
        qnb_run_error(r, "meta: cannot create %s/%s: %s (%s)", r->rundir, name, strerror(e),
                      qnb_errno_name(e));
        return -1;
    }
    *made = 1;
    int fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        qnb_run_error(r, "meta: cannot open %s/%s: %s (%s)", r->rundir, name, strerror(e),
                      qnb_errno_name(e));
    }
    return fd;
}

static int meta_setup(struct qnb_run *r)
{
    struct meta_run *m = r->erun;
    if (!m) {
        m = calloc(1, sizeof *m);
        if (!m) {
            qnb_run_error(r, "meta: out of memory");
            return -1;
        }
        m->shared_fd = -1;
        for (int i = 0; i < META_MAX_JOBS; i++)
            m->job[i].dfd = -1;
        m->hard = strcmp(r->cfg->meta_tree, "hard") == 0;
        r->erun = m;
        if (r->cfg->meta_bytes > 0) {
            m->buf = malloc((size_t)r->cfg->meta_bytes);
            if (!m->buf) {
                qnb_run_error(r, "meta: out of memory");
                return -1;
            }
            memset(m->buf, 0x5a, (size_t)r->cfg->meta_bytes);
        }
    }
    if (qnb_rundir_create(r))
        return -1;
    const char *op = r->pt.op;
    m->phase = strcmp(op, "create") == 0 ? M_CREATE
               : strcmp(op, "stat") == 0 ? M_STAT
               : strcmp(op, "open_close") == 0 ? M_OPEN
                                              : M_UNLINK;
    if (m->hard && m->shared_fd < 0 && (m->shared_fd = own_dir(r, "mdtest.shared",
                                                                &m->made_shared)) < 0)
        return -1;
    for (int i = 0; i < r->pt.jobs; i++) {
        struct meta_job *jb = &m->job[i];
        if (m->hard)
            jb->dfd = m->shared_fd;
        else if (jb->dfd < 0) {
            char name[32];
            snprintf(name, sizeof name, "mdtest.%d", i);
            if ((jb->dfd = own_dir(r, name, &jb->made_dir)) < 0)
                return -1;
        }
        jb->cursor = m->phase == M_CREATE ? 0 : jb->lo;
    }
    return 0;
}

static int meta_fail(struct qnb_worker *w, const char *what, const char *name, int e)
{
    struct meta_run *m = w->run->erun;
    qnb_worker_error(w, "meta: %s %s/mdtest.%s/%s: %s (%s)", what, w->run->rundir,
                     m->hard ? "shared" : "<job>", name, strerror(e), qnb_errno_name(e));
    return -1;
}

static int meta_op(struct qnb_worker *w, uint64_t *bytes)
{
    struct qnb_run *r = w->run;
    struct meta_run *m = r->erun;
    struct meta_job *jb = &m->job[w->id];
    char name[48];
    *bytes = 0;
    switch (m->phase) {
    case M_CREATE: {
        if (jb->cursor >= r->cfg->files)
            return 1;
        job_name(m, w->id, jb->hi, name, sizeof name);
        int fd = openat(jb->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (fd < 0)
            return meta_fail(w, "create", name, errno);
        jb->hi++; /* ours from here on: removed at the end whatever happens next */
        jb->cursor++;
        long long n = r->cfg->meta_bytes;
        if (n > 0 && write(fd, m->buf, (size_t)n) != (ssize_t)n) {
            int e = errno ? errno : ENOSPC;
            close(fd);
            return meta_fail(w, "write", name, e);
        }
        if (close(fd) != 0)
            return meta_fail(w, "close", name, errno);
        *bytes = (uint64_t)n;
        return 0;
    }
    case M_STAT: {
        if (jb->cursor >= jb->hi)
            return 1;
        job_name(m, w->id, jb->cursor++, name, sizeof name);
        struct stat st;
        if (fstatat(jb->dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return meta_fail(w, "stat", name, errno);
        if (!S_ISREG(st.st_mode))
            return meta_fail(w, "stat (not the regular file it created)", name, EEXIST);
        return 0;
    }
    case M_OPEN: {
        if (jb->cursor >= jb->hi)
            return 1;
        job_name(m, w->id, jb->cursor++, name, sizeof name);
        int fd = openat(jb->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return meta_fail(w, "open", name, errno);
        if (close(fd) != 0)
            return meta_fail(w, "close", name, errno);
        return 0;
    }
    default:
        if (jb->lo >= jb->hi)
            return 1;
        job_name(m, w->id, jb->lo, name, sizeof name);
        if (unlinkat(jb->dfd, name, 0) != 0)
            return meta_fail(w, "unlink", name, errno);
        jb->lo++;
        return 0;
    }
}

static void meta_report(struct qnb_run *r, struct qnb_json *j)
{
    struct meta_run *m = r->erun;
    long long live = 0;
    for (int i = 0; i < META_MAX_JOBS; i++)
        live += m->job[i].hi - m->job[i].lo;
    qj_kstr(j, "tree", m->hard ? "hard" : "easy");
    qj_kint(j, "files_per_job", r->cfg->files);
    qj_kint(j, "files_live", live);
    qj_kint(j, "bytes_per_file", r->cfg->meta_bytes);
}

/* remove exactly what this run made: its live files, then its directories */
static void meta_run_teardown(struct qnb_run *r)
{
    struct meta_run *m = r->erun;
    if (!m)
        return;
    int top = qnb_rundir_fd();
    for (int i = 0; i < META_MAX_JOBS; i++) {
        struct meta_job *jb = &m->job[i];
        char name[48];
        for (long long k = jb->lo; k < jb->hi && jb->dfd >= 0; k++) {
            job_name(m, i, k, name, sizeof name);
            if (unlinkat(jb->dfd, name, 0) != 0 && errno != ENOENT)
                qnb_diag("meta: cannot remove %s: %s", name, strerror(errno));
        }
        if (!m->hard && jb->dfd >= 0)
            close(jb->dfd);
        if (jb->made_dir) {
            snprintf(name, sizeof name, "mdtest.%d", i);
            if (unlinkat(top, name, AT_REMOVEDIR) != 0)
                qnb_diag("meta: left directory %s/%s in place: %s (it holds files qnbench did "
                         "not create)", r->rundir, name, strerror(errno));
        }
    }
    if (m->shared_fd >= 0)
        close(m->shared_fd);
    if (m->made_shared && unlinkat(top, "mdtest.shared", AT_REMOVEDIR) != 0)
        qnb_diag("meta: left directory %s/mdtest.shared in place: %s (it holds files qnbench "
                 "did not create)", r->rundir, strerror(errno));
    free(m->buf);
    free(m);
    r->erun = NULL;
}

const struct qnb_engine qnb_engine_meta = {
    .name = "meta",
    .help = "mdtest-style metadata phases: create, stat, open-close, unlink of small files",
    .flags = QNB_ENG_NEEDS_DIR | QNB_ENG_OPLIST | QNB_ENG_FIXED_WORK,
    .op_list = meta_ops,
    .check = meta_check,
    .point_setup = meta_setup,
    .op = meta_op,
    .point_report = meta_report,
    .run_teardown = meta_run_teardown,
};
