/* The sweep over the points of a run (sweep.c) and the JSON document that reports it
 * (document.c). main() (qnbench.c) only parses, checks and calls these. */
#ifndef QNB_SWEEP_H
#define QNB_SWEEP_H
#include <stdio.h>

#include "qnbench.h"

struct qnb_sweep {
    int complete;        /* every point ran to its end */
    int ranks;           /* MPI ranks (1 without MPI) */
    char *results;       /* JSON array text: one result object per point (harness.c) */
    char *aggregate;     /* JSON array text: the aggregate over all ranks per point (mpi.c) */
    size_t results_len, aggregate_len;
    FILE *rf, *af;       /* the memory streams behind results and aggregate while open */
    struct qnb_json jr, ja;
};

/* 0, or -1 out of memory */
int qnb_sweep_open(struct qnb_sweep *s);
/* runs every point of jobs x bs x op x repeat (jobs slowest); stops at the first failure on any
 * rank or at a signal */
void qnb_sweep_run(struct qnb_sweep *s, struct qnb_run *r);
/* ends the JSON arrays; s->results and s->aggregate are complete texts afterwards */
void qnb_sweep_close(struct qnb_sweep *s);
void qnb_sweep_free(struct qnb_sweep *s);

/* the one JSON document of a run (schema qnbench/QNB_SCHEMA_VERSION); 0, or -1 on a write error */
int qnb_document_write(FILE *f, const char *timestamp, const struct qnb_run *r,
                       const struct qnb_sweep *s);
#endif
