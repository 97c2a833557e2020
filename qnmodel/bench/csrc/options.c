/* The option table: ONE table drives parsing, --help and the JSON echo of effective options. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnbench.h"

enum opt_type { T_STR, T_INT, T_BOOL, T_SIZE, T_TIME, T_RATE, T_FREQ, T_INTLIST, T_SIZELIST,
                T_STRLIST };

struct opt {
    const char *name;   /* --name */
    enum opt_type type;
    size_t off;         /* offsetof(struct qnb_config, field) */
    size_t len;         /* buffer length for strings */
    const char *def;    /* default, as typed on the command line */
    const char *choices; /* comma list of allowed values (T_STR, T_STRLIST), or NULL */
    const char *group;
    const char *help;
};

#define F(field) offsetof(struct qnb_config, field), sizeof(((struct qnb_config *)0)->field)

static const struct opt table[] = {
    {"engine", T_STR, F(engine), "null", QNB_ENGINE_NAMES, "general",
     "engine that serves each request"},
    {"jobs", T_INTLIST, F(jobs), "1", NULL, "general",
     "concurrency sweep: closed-loop clients per point, e.g. 1,2,4,8"},
    {"bs", T_SIZELIST, F(bs), "4KiB", NULL, "general", "request size sweep, e.g. 4KiB,64KiB,1MiB"},
    {"rw", T_STR, F(rw), "read", "read,write,randread,randwrite", "general", "access pattern"},
    {"size", T_SIZE, F(size), "16MiB", NULL, "general",
     "file size per job (file), array size (mem), member size (stripe)"},
    {"runtime", T_TIME, F(runtime), "1s", NULL, "general", "measured time per point"},
    {"warmup", T_TIME, F(warmup), "100ms", NULL, "general",
     "warm-up per point, excluded from all numbers (0: clients start with the measured time)"},
    {"ops", T_INT, F(ops), "0", NULL, "general",
     "stop a point after this many measured operations (0: only --runtime)"},
    {"io-size", T_SIZE, F(io_size), "0", NULL, "general",
     "stop a point after this many measured bytes (0: only --runtime)"},
    {"repeat", T_INT, F(repeat), "1", NULL, "general",
     "measure every point this many times (one result each)"},
    {"interval", T_TIME, F(interval), "100ms", NULL, "general", "sampling interval of samples[]"},
    {"think", T_TIME, F(think), "0", NULL, "general", "mean think time Z between requests"},
    {"think-dist", T_STR, F(think_dist), "const", "const,exp", "general",
     "think-time distribution"},
    {"seed", T_INT, F(seed), "1", NULL, "general", "seed of all pseudo-random choices"},
    {"dir", T_STR, F(dir), "", NULL, "general",
     "parent directory; qnbench creates and removes its own new directory inside"},
    {"spin", T_TIME, F(spin), "20us", NULL, "general",
     "busy-wait this long at the end of every timed sleep (default 100us with --realtime)"},
    {"progress", T_BOOL, F(progress), "0", NULL, "general", "progress lines on stderr"},
    {"histogram", T_BOOL, F(histogram), "0", NULL, "general",
     "add the non-empty latency histogram buckets to every result"},
    {"realtime", T_BOOL, F(realtime), "0", NULL, "general",
     "run clients with SCHED_FIFO priority 1 (root or CAP_SYS_NICE) for precise wake-ups"},
    {"rate", T_FREQ, F(rate), "0", NULL, "workload",
     "open loop: requests arrive at this total rate, e.g. 2000/s (0: closed loop)"},
    {"arrivals", T_STR, F(arrivals), "poisson", "poisson,constant", "workload",
     "open loop: Poisson arrivals or evenly spaced ones"},
    {"rwmix", T_INT, F(rwmix), "-1", NULL, "workload",
     "file: percent of requests that read, the others write, e.g. 70 (-1: --rw alone)"},
    {"file-layout", T_STR, F(file_layout), "per-job", "per-job,shared", "workload",
     "file: one file per job, or one shared file all jobs write interleaved (IOR hard)"},
    {"files", T_INT, F(files), "1000", NULL, "workload",
     "meta: files per job (mdtest -n)"},
    {"meta-tree", T_STR, F(meta_tree), "easy", "easy,hard", "workload",
     "meta: easy = a directory per job, hard = one directory shared by all jobs"},
    {"meta-op", T_STRLIST, F(meta_op), "create,stat,open_close,unlink",
     "create,stat,open_close,unlink", "workload", "meta: the phases to measure, in this order"},
    {"meta-bytes", T_SIZE, F(meta_bytes), "0", NULL, "workload",
     "meta: bytes written into each file when it is created (mdtest -w)"},
    {"dev-latency", T_TIME, F(dev_latency), "1ms", NULL, "emu",
     "a: fixed time per request of an emulated device"},
    {"dev-rate", T_RATE, F(dev_rate), "100MB/s", NULL, "emu",
     "r: transfer rate of an emulated device (0: infinite)"},
    {"devices", T_INT, F(devices), "1", NULL, "emu", "number of emulated devices K"},
    {"dev-servers", T_INT, F(dev_servers), "1", NULL, "emu",
     "m: identical servers per emulated device behind its one FCFS queue"},
    {"dev-select", T_STR, F(dev_select), "random", "random,roundrobin", "emu",
     "how a request picks its device"},
    {"dev-dist", T_STR, F(dev_dist), "const", "const,exp", "emu",
     "service time: constant a + B/r, or exponential with that mean"},
    {"access", T_STR, F(access), "sync", "sync,stdio,mmap,direct", "file",
     "access path: pread/pwrite, fread/fwrite, mmap, O_DIRECT"},
    {"workers", T_STR, F(workers), "thread", "thread,process", "file",
     "clients as threads or processes"},
    {"end-fsync", T_BOOL, F(end_fsync), "1", NULL, "file",
     "writes: fsync and close inside the timed interval"},
    {"fsync", T_INT, F(fsync_every), "0", NULL, "file",
     "writes: fsync after every N writes, timed within that write (0: never)"},
    {"drop-caches", T_BOOL, F(drop_caches), "0", NULL, "file",
     "drop the page cache before each point (root only)"},
    {"mem-op", T_STRLIST, F(mem_op), "copy,scale,add,triad", "copy,scale,add,triad", "mem",
     "STREAM kernels to measure"},
    {"cpu-op", T_STRLIST, F(cpu_op), "memcpy,xor,checksum", "memcpy,xor,checksum,cachehit", "cpu",
     "per-unit processing kernels to measure"},
    {"stripe-width", T_INT, F(stripe_width), "3", NULL, "cpu",
     "units per stripe for the xor (parity) kernel"},
    {"tcp-role", T_STR, F(tcp_role), "self", "self,client,server", "tcp",
     "self: loopback server thread + clients; client; server"},
    {"host", T_STR, F(host), "127.0.0.1", NULL, "tcp", "server address"},
    {"netns", T_STR, F(netns), "", NULL, "general",
     "comma list of network namespaces (ip netns names): rank i of an MPI run joins the i-th "
     "before it measures, so each rank's traffic crosses its own links"},
    {"port", T_INT, F(port), "0", NULL, "tcp", "TCP port (0 with self: ephemeral)"},
    {"serve", T_STR, F(serve), "mem", "mem,file,emu", "tcp",
     "server replies from memory, a file, or after one emulated device (--dev-*) shared by all "
     "its connections"},
    {"raid", T_INT, F(raid), "0", "0,5", "stripe", "RAID level: 0 or 5"},
    {"members", T_INT, F(members), "4", NULL, "stripe", "number of members"},
    {"member", T_STR, F(member), "emu", "emu,file,tcp", "stripe",
     "member kind: emulated device (--dev-*), file in --dir, or TCP server (--tcp-role)"},
    {"chunk", T_SIZE, F(chunk), "64KiB", NULL, "stripe", "chunk (stripe unit) size"},
    {"verify", T_BOOL, F(verify), "0", NULL, "stripe",
     "RAID5 over files: after each point check that every stripe's parity is consistent"},
    {"nfs-url", T_STR, F(nfs_url), "", NULL, "nfs",
     "directory on an NFS server: nfs://SERVER/EXPORT[/DIR]"},
    {"rsize", T_SIZE, F(rsize), "1MiB", NULL, "nfs", "largest NFS READ call (and the server's)"},
    {"wsize", T_SIZE, F(wsize), "1MiB", NULL, "nfs", "largest NFS WRITE call (and the server's)"},
    {"nfs-prefix", T_STR, F(nfs_prefix), "", NULL, "nfs",
     "job j uses PREFIX-job<j>.dat, kept after the run (prepared files; default: own files)"},
    {"nfs-cache", T_BOOL, F(nfs_cache), "0", NULL, "nfs",
     "libnfs' client page cache: 1 on (client hits), 0 off (every read goes to the server)"},
};

#define NOPT (sizeof(table) / sizeof(table[0]))
_Static_assert(NOPT <= sizeof(((struct qnb_config *)0)->given), "enlarge qnb_config.given");

static const char *suffix(enum opt_type t)
{
    switch (t) {
    case T_SIZE:
    case T_SIZELIST: return "_bytes";
    case T_TIME: return "_s";
    case T_RATE: return "_B_s";
    case T_FREQ: return "_per_s";
    default: return "";
    }
}

int qnb_list_contains(const char *commalist, const char *item)
{
    size_t n = strlen(item);
    const char *p = commalist;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, item, n) == 0)
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

static int set_value(struct qnb_config *c, const struct opt *o, const char *val)
{
    char err[512];
    char *base = (char *)c + o->off;
    switch (o->type) {
    case T_STR:
        if (o->choices && !qnb_list_contains(o->choices, val)) {
            qnb_diag("--%s: '%s' is not one of %s", o->name, val, o->choices);
            return -1;
        }
        if (strlen(val) >= o->len) {
            qnb_diag("--%s: value longer than %zu characters", o->name,
                    o->len - 1);
            return -1;
        }
        strcpy(base, val);
        return 0;
    case T_STRLIST: {
        if (strlen(val) >= o->len || !*val) {
            qnb_diag("--%s: empty or too long list '%s'", o->name, val);
            return -1;
        }
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s", val);
        for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (!qnb_list_contains(o->choices, t)) {
                qnb_diag("--%s: '%s' is not one of %s", o->name, t, o->choices);
                return -1;
            }
        strcpy(base, val);
        return 0;
    }
    case T_INT:
    case T_BOOL: {
        long long v;
        if (qnb_parse_int(val, &v, err, sizeof err)) {
            qnb_diag("--%s: %s", o->name, err);
            return -1;
        }
        if (o->type == T_BOOL && v != 0 && v != 1) {
            qnb_diag("--%s: '%s' must be 0 or 1", o->name, val);
            return -1;
        }
        if (o->choices && !qnb_list_contains(o->choices, val)) {
            qnb_diag("--%s: '%s' is not one of %s", o->name, val, o->choices);
            return -1;
        }
        *(long long *)base = v;
        return 0;
    }
    case T_SIZE:
        if (qnb_parse_size(val, (long long *)base, err, sizeof err)) {
            qnb_diag("--%s: %s", o->name, err);
            return -1;
        }
        return 0;
    case T_TIME:
        if (qnb_parse_time(val, (double *)base, err, sizeof err)) {
            qnb_diag("--%s: %s", o->name, err);
            return -1;
        }
        if (qnb_check_seconds(o->name, val, *(double *)base, err, sizeof err)) {
            qnb_diag("%s", err);
            return -1;
        }
        return 0;
    case T_FREQ:
        if (qnb_parse_frequency(val, (double *)base, err, sizeof err)) {
            qnb_diag("--%s: %s", o->name, err);
            return -1;
        }
        return 0;
    case T_RATE:
        if (qnb_parse_rate(val, (double *)base, err, sizeof err)) {
            qnb_diag("--%s: %s", o->name, err);
            return -1;
        }
        return 0;
    case T_INTLIST:
    case T_SIZELIST: {
        struct qnb_list *l = (struct qnb_list *)base;
        char tmp[1024];
        if (strlen(val) >= sizeof tmp) {
            qnb_diag("--%s: list too long", o->name);
            return -1;
        }
        snprintf(tmp, sizeof tmp, "%s", val);
        l->n = 0;
        for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (l->n >= QNB_MAX_LIST) {
                qnb_diag("--%s: more than %d values", o->name, QNB_MAX_LIST);
                return -1;
            }
            long long v;
            int rc = o->type == T_INTLIST ? qnb_parse_int(t, &v, err, sizeof err)
                                          : qnb_parse_size(t, &v, err, sizeof err);
            if (rc) {
                qnb_diag("--%s: %s", o->name, err);
                return -1;
            }
            if (v < 1) {
                qnb_diag("--%s: %lld must be >= 1", o->name, v);
                return -1;
            }
            l->v[l->n++] = v;
        }
        if (l->n == 0) {
            qnb_diag("--%s: empty list", o->name);
            return -1;
        }
        return 0;
    }
    }
    return -1;
}

void qnb_config_defaults(struct qnb_config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < NOPT; i++)
        if (set_value(c, &table[i], table[i].def))
            abort(); /* a bad default is a programming error */
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: qnbench --engine NAME [options]\n"
            "Measures one engine over a sweep of concurrency (--jobs) and request size (--bs)\n"
            "with a closed-loop driver, and writes one JSON document (schema qnbench/%d) on\n"
            "stdout. Sizes: 4KiB, 1MiB, 4kB, 1MB (whole bytes, at most 9e18); times: 5ms,\n"
            "250us, 2s (0, or 1ns to %gs); rates: 50MB/s, 1Gbit/s. Exit status: 0 ok, 1 runtime\n"
            "error (also after SIGINT or SIGTERM, which stop the run at once: the document\n"
            "then holds the points measured so far), 2 usage error.\n",
            QNB_SCHEMA_VERSION, QNB_MAX_SECONDS);
    const char *group = "";
    for (size_t i = 0; i < NOPT; i++) {
        const struct opt *o = &table[i];
        if (strcmp(group, o->group) != 0) {
            group = o->group;
            fprintf(f, "\n%s options:\n", group);
        }
        char left[64];
        snprintf(left, sizeof left, "--%s", o->name);
        fprintf(f, "  %-16s %s [default: %s]", left, o->help, *o->def ? o->def : "none");
        if (o->choices)
            fprintf(f, " {%s}", o->choices);
        fputc('\n', f);
    }
    fprintf(f, "\nengines:\n");
    for (int i = 0; qnb_engines[i]; i++)
        fprintf(f, "  %-8s %s\n", qnb_engines[i]->name, qnb_engines[i]->help);
    fprintf(f, "\n  --help           this text\n  --list-engines   the engines as one JSON document\n"
               "  --version        print the version\n");
}

int qnb_parse_args(struct qnb_config *c, int argc, char **argv)
{
    qnb_config_defaults(c);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 3;
        }
        if (strcmp(a, "--list-engines") == 0) {
            struct qnb_json j;
            qj_init(&j, stdout);
            qnb_engines_json(&j);
            fputc('\n', stdout);
            return 3;
        }
        if (strcmp(a, "--version") == 0) {
            printf("qnbench %s (%s)\n", QNB_VERSION,
                   qnb_mpi_built() ? "MPI build" : "single-node build; MPI build: qnbench-mpi");
            return 3;
        }
        if (strncmp(a, "--", 2) != 0) {
            qnb_diag("unexpected argument '%s' (options start with --; see --help)",
                    a);
            return 2;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt *o = NULL;
        for (size_t k = 0; k < NOPT; k++)
            if (strlen(table[k].name) == nlen && strncmp(table[k].name, name, nlen) == 0)
                o = &table[k];
        if (!o) {
            qnb_diag("unknown option '--%.*s' (see --help)", (int)nlen, name);
            return 2;
        }
        const char *val;
        if (eq)
            val = eq + 1;
        else if (o->type == T_BOOL && (i + 1 >= argc || (strcmp(argv[i + 1], "0") != 0 &&
                                                           strcmp(argv[i + 1], "1") != 0)))
            val = "1";
        else if (i + 1 < argc)
            val = argv[++i];
        else {
            qnb_diag("option --%s needs a value", o->name);
            return 2;
        }
        if (set_value(c, o, val))
            return 2;
        c->given[o - table] = 1;
    }
    return 0;
}

int qnb_option_given(const struct qnb_config *c, const char *name)
{
    for (size_t k = 0; k < NOPT; k++)
        if (strcmp(table[k].name, name) == 0)
            return c->given[k];
    return 0;
}

void qnb_options_json(const struct qnb_config *c, struct qnb_json *j)
{
    qj_obj_begin(j);
    for (size_t i = 0; i < NOPT; i++) {
        const struct opt *o = &table[i];
        const char *base = (const char *)c + o->off;
        char key[64];
        size_t k = 0;
        for (const char *p = o->name; *p && k < 40; p++)
            key[k++] = *p == '-' ? '_' : *p;
        key[k] = '\0';
        strcat(key, suffix(o->type));
        qj_key(j, key);
        switch (o->type) {
        case T_STR: qj_str(j, base); break;
        case T_STRLIST: {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%s", base);
            qj_arr_begin(j);
            for (char *s = NULL, *t = strtok_r(tmp, ",", &s); t; t = strtok_r(NULL, ",", &s))
                qj_str(j, t);
            qj_arr_end(j);
            break;
        }
        case T_INT:
        case T_SIZE: qj_int(j, *(const long long *)base); break;
        case T_BOOL: qj_bool(j, *(const long long *)base != 0); break;
        case T_TIME:
        case T_RATE:
        case T_FREQ: qj_num(j, *(const double *)base); break;
        case T_INTLIST:
        case T_SIZELIST: {
            const struct qnb_list *l = (const struct qnb_list *)base;
            qj_arr_begin(j);
            for (int n = 0; n < l->n; n++)
                qj_int(j, l->v[n]);
            qj_arr_end(j);
            break;
        }
        }
    }
    qj_obj_end(j);
}
