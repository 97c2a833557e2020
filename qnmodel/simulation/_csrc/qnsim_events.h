/* qnsim_events.h: the event list of the simulator, a binary heap ordered by time (included
 * by qnsim.c only; A. M. Law, "Simulation Modeling and Analysis", 5th ed., 2015, ch. 1-2). */
#ifndef QNSIM_EVENTS_H
#define QNSIM_EVENTS_H

#include <stdint.h>
#include <stdlib.h>

#include "qnsim.h"

/* ---------------------------------------------------------------- event list */
enum { EV_ARRIVAL = 0, EV_THINK = 1, EV_DONE = 2 };

typedef struct {
    double t;
    int32_t task;  /* task index, or class for EV_ARRIVAL */
    int32_t where; /* station for EV_DONE */
    uint32_t epoch;
    int32_t type;
} ev_t;

typedef struct {
    ev_t *a;
    int64_t n, cap;
} heap_t;

static int heap_push(heap_t *h, ev_t e) {
    if (h->n == h->cap) {
        int64_t nc = h->cap ? 2 * h->cap : 64;
        ev_t *na = realloc(h->a, (size_t)nc * sizeof(ev_t));
        if (!na) return QNS_ENOMEM;
        h->a = na;
        h->cap = nc;
    }
    int64_t i = h->n++;
    while (i > 0) {
        int64_t p = (i - 1) >> 1;
        if (h->a[p].t <= e.t) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
    return QNS_OK;
}

static ev_t heap_pop(heap_t *h) {
    ev_t top = h->a[0];
    ev_t last = h->a[--h->n];
    int64_t i = 0, n = h->n;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h->a[c + 1].t < h->a[c].t) c++;
        if (last.t <= h->a[c].t) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (n > 0) h->a[i] = last;
    return top;
}

#endif
