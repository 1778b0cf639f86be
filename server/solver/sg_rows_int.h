/*
 * sg_rows_int.h - the usage rows of a compact model (internal): which times need a memory
 * constraint, and which segments are live there.
 *
 * A row at compressed time t says: sum over the segments live at t of use[chosen] <= cap[t].
 * The "plain" set has a row at every time some segment starts (the textbook model). The
 * reduced set keeps only times that can bind (the largest possible usage exceeds the
 * capacity), drops a time implied by a neighbouring one (no segment ends at t+1 and
 * cap(t) >= cap(t+1), or none starts at t and cap(t) > cap(t-1): the neighbour has the
 * same segments or more and no more capacity), and drops duplicates.
 *
 * Memory: the arrays are malloc'd; sp_sg_rows_free() releases them.
 */
#ifndef SP_SOLVER_SG_ROWS_INT_H
#define SP_SOLVER_SG_ROWS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/sg_model_int.h"

typedef struct sg_rows {
  int n;           /* rows, by increasing time */
  int *t;          /* [n] compressed time */
  int64_t *cap;    /* [n] */
  int *off;        /* [n + 1] CSR into seg (lists only) */
  int *seg;        /* indices into p->seg, sorted within a row (lists only) */
  int *some;       /* [n] one segment live in the row */
  int64_t entries; /* sum over rows of the strategies of their segments (matrix entries) */
} sg_rows;

/* Rows over the segments of the nodes with in_part[i] (all nodes when NULL). Without
 * `lists`, only the times, capacities, one live segment per row and the entry count are
 * computed (in O(S log S + T), without the rows' segment lists, which can be very long),
 * and duplicates are kept. */
int sp_sg_rows_build(const sg_prob *p, const uint8_t *in_part, bool plain, bool lists,
                     sg_rows *out);
void sp_sg_rows_free(sg_rows *r);

#endif /* SP_SOLVER_SG_ROWS_INT_H */
