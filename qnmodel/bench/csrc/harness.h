#ifndef QNB_HARNESS_H
#define QNB_HARNESS_H
#include "qnbench.h"
int qnb_run_point(struct qnb_run *r, struct qnb_json *j);
void *qnb_shared_alloc(size_t size);
void qnb_shared_free(void *p, size_t size);
#endif
