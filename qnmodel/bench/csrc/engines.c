/* The engine registry, derived from the one engine table in engines/table.h: the array of
 * descriptors, lookup by name, and the --list-engines document. Nothing here names an engine. */
#include <stdio.h>
#include <string.h>

#include "qnbench.h"

#define QNB_ENGINE_ADDRESS(n) &qnb_engine_##n,
const struct qnb_engine *const qnb_engines[] = {QNB_ENGINE_TABLE(QNB_ENGINE_ADDRESS) NULL};

const struct qnb_engine *qnb_find_engine(const char *name)
{
    for (int i = 0; qnb_engines[i]; i++)
        if (strcmp(qnb_engines[i]->name, name) == 0)
            return qnb_engines[i];
    return NULL;
}

int qnb_engine_table_check(void)
{
    /* each descriptor's .name must be the name of its X(NAME) entry */
    const char *names = QNB_ENGINE_NAMES;
    for (int i = 0; qnb_engines[i]; i++) {
        size_t n = strlen(qnb_engines[i]->name);
        if (strncmp(names, qnb_engines[i]->name, n) != 0 || (names[n] != ',' && names[n] != '\0')) {
            qnb_diag("engine table: entry %d is named '%s' in its file, not as in %s", i,
                     qnb_engines[i]->name, QNB_ENGINE_NAMES);
            return -1;
        }
        names += n + (names[n] == ',');
    }
    return 0;
}

void qnb_engine_names_with(unsigned flags, char *buf, size_t len)
{
    int n = 0, k = 0;
    for (int i = 0; qnb_engines[i]; i++)
        n += (qnb_engines[i]->flags & flags) == flags;
    buf[0] = '\0';
    for (int i = 0; qnb_engines[i]; i++) {
        if ((qnb_engines[i]->flags & flags) != flags)
            continue;
        size_t used = strlen(buf);
        const char *sep = k == 0 ? "" : k == n - 1 ? " and " : ", ";
        snprintf(buf + used, len - used, "%s%s", sep, qnb_engines[i]->name);
        k++;
    }
}

static const struct {
    unsigned flag;
    const char *key;
} flag_keys[] = {
    {QNB_ENG_USES_BS, "sweeps_bs"},
    {QNB_ENG_NEEDS_DIR, "needs_dir"},
    {QNB_ENG_PROCESSES, "process_workers"},
    {QNB_ENG_OPLIST, "sweeps_ops"},
    {QNB_ENG_NEEDS_SERVER, "needs_server"},
    {QNB_ENG_FIXED_WORK, "fixed_work"},
    {QNB_ENG_NEEDS_MPI, "needs_mpi"},
};

void qnb_engines_json(struct qnb_json *j)
{
    qj_obj_begin(j);
    qj_kstr(j, "schema", "qnbench-engines");
    qj_kint(j, "schema_version", 1);
    qj_kstr(j, "tool_version", QNB_VERSION);
    qj_key(j, "engines");
    qj_arr_begin(j);
    for (int i = 0; qnb_engines[i]; i++) {
        const struct qnb_engine *e = qnb_engines[i];
        qj_obj_begin(j);
        qj_kstr(j, "name", e->name);
        qj_kstr(j, "help", e->help);
        for (size_t k = 0; k < sizeof flag_keys / sizeof flag_keys[0]; k++)
            qj_kbool(j, flag_keys[k].key, (e->flags & flag_keys[k].flag) != 0);
        qj_kbool(j, "standalone_role", e->standalone != NULL);
        qj_obj_end(j);
    }
    qj_arr_end(j);
    qj_obj_end(j);
}
