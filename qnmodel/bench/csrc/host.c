/* Host description for the JSON document. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "qnbench.h"

static void cpu_model(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static long long mem_total(void)
{
    long long kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib * 1024;
}

long long qnb_host_mem_total(void)
{
    static long long cached = -1; /* read once: the options check asks for it per engine */
    if (cached < 0)
        cached = mem_total();
    return cached;
}

int qnb_host_cpu(struct qnb_host_cpu *h)
{
    /* the first line of /proc/stat: the whole machine's time in USER_HZ ticks, per state:
     * user nice system idle iowait irq softirq steal (guest and guest_nice are already in
     * user and nice); steal is time the hypervisor ran something else while this machine's
     * virtual CPUs were ready to run (proc(5)) */
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 8 || hz <= 0)
        return -1;
    unsigned long long total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    h->total = total;
    h->idle = v[3] + v[4];
    h->steal = v[7];
    h->hz = hz;
    return 0;
}

void qnb_host_json(struct qnb_json *j)
{
    struct utsname u;
    char model[256];
    memset(&u, 0, sizeof u);
    uname(&u);
    cpu_model(model, sizeof model);
    qj_obj_begin(j);
    qj_kstr(j, "hostname", u.nodename);
    qj_kstr(j, "sysname", u.sysname);
    qj_kstr(j, "release", u.release);
    qj_kstr(j, "machine", u.machine);
    qj_kstr(j, "cpu_model", model);
    qj_kint(j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
    qj_kint(j, "mem_total_bytes", mem_total());
    qj_obj_end(j);
}
