/* null engine: does nothing per request; measures the harness itself (fio's null, IOR's DUMMY). */
#include "../qnbench.h"

static int null_op(struct qnb_worker *w, uint64_t *bytes)
{
    *bytes = (uint64_t)w->run->pt.bs;
    return 0;
}

static void null_report(struct qnb_run *r, struct qnb_json *j)
{
    qj_knum(j, "overhead_s_per_op",
            r->ops_total ? r->elapsed_s * r->pt.jobs / (double)r->ops_total : 0.0);
}

const struct qnb_engine qnb_engine_null = {
    .name = "null",
    .help = "does nothing per request: harness overhead",
    .flags = QNB_ENG_USES_BS,
    .op = null_op,
    .point_report = null_report,
};
