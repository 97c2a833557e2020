/* The one JSON document of a run (docs/reference/qnbench-schema.md): the header, the effective
 * options, the results and MPI aggregate collected by the sweep, and the run's errors. */
#include <stdio.h>

#include "sweep.h"

int qnb_document_write(FILE *f, const char *timestamp, const struct qnb_run *r,
                       const struct qnb_sweep *s)
{
    struct qnb_json j;
    qj_init(&j, f);
    qj_obj_begin(&j);
    qj_kstr(&j, "schema", "qnbench");
    qj_kint(&j, "schema_version", QNB_SCHEMA_VERSION);
    qj_kstr(&j, "tool_version", QNB_VERSION);
    qj_kstr(&j, "timestamp", timestamp);
    qj_kbool(&j, "complete", s->complete && r->nerrors == 0);
    qj_key(&j, "host");
    qnb_host_json(&j);
    qj_kstr(&j, "engine", r->eng->name);
    qj_key(&j, "options");
    qnb_options_json(r->cfg, &j);
    qj_key(&j, "results");
    qj_raw(&j, s->results);
    if (s->ranks > 1) {
        qj_key(&j, "mpi");
        qj_obj_begin(&j);
        qj_kint(&j, "ranks", s->ranks);
        qj_key(&j, "aggregate");
        qj_raw(&j, s->aggregate);
        qj_obj_end(&j);
    }
    qj_key(&j, "errors");
    qj_arr_begin(&j);
    for (int i = 0; i < r->nerrors; i++)
        qj_str(&j, r->errors[i]);
    qj_arr_end(&j);
    qj_obj_end(&j);
    fputc('\n', f);
    return fflush(f) == 0 ? 0 : -1;
}
