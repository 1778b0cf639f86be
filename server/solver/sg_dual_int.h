/*
 * sg_dual_int.h - Lagrangian relaxation of the usage rows with a message-passing inner solver
 * (internal).
 *
 * With a price lambda_r >= 0 on each usage row, the problem without usage limits but with
 * node costs raised by price * usage is a pairwise min-sum problem; its minimum minus
 * sum_r lambda_r * cap_r is a lower bound on the constrained optimum. The inner problem is
 * attacked with sequential tree-reweighted message passing (TRW-S, Kolmogorov 2006), which
 * also yields a labelling; prices move by projected subgradient steps (Polyak's rule
 * against the best known plan). Each labelling is handed to a "primal" callback (the
 * heuristic repairs it to a valid plan and improves it), so the prices steer the search
 * towards plans that spend memory where it buys most.
 *
 * Numbers are doubles: bounds are reported with a relative safety margin.
 *
 * Memory: malloc'd, owned by the state (sp_sg_dual_free). The problem and rows must outlive
 * it.
 */
#ifndef SP_SOLVER_SG_DUAL_INT_H
#define SP_SOLVER_SG_DUAL_INT_H

#include <stdint.h>

#include "ir/clock.h"
#include "solver/sg_model_int.h"
#include "solver/sg_rows_int.h"

typedef struct sg_dual sg_dual;

/* Called with each labelling (model strategies, [p->n]); returns the cost of the best valid
 * plan known so far (INT64_MAX if none). */
typedef int64_t (*sg_dual_primal_fn)(void *ctx, const int *labels);

int sp_sg_dual_new(const sg_prob *p, const sg_rows *rows, sg_dual **out);
void sp_sg_dual_free(sg_dual *d);

/* Runs `iters` rounds (`passes` message passes, one primal call, a price update) or until
 * `deadline` (sp_clock_now seconds; 0: none). Stops early when the bound proves the primal's
 * best plan (costs are integers: bound > cost - 1), or when no price moves (no usage row
 * is violated or priced) and the bound has stopped rising: rounds without a price move
 * still pass messages, and on models whose rows do not bind that is what the bound needs.
 * Returns the best lower bound found (-inf if none; valid for the compact model without
 * its offset). */
double sp_sg_dual_run(sg_dual *d, int iters, int passes, double deadline,
                      sg_dual_primal_fn primal, void *ctx);

/* Reduced costs of the best dual found: a plan using strategy k of node i costs at least
 * bound + node[noff[i] + k], one using pair v of edge e at least bound + pair[poff[e] + v]
 * (in both cases for plans within the usage limit). Within one component, the same holds
 * with the component's share of the bound. */
typedef struct sg_excess {
  double bound;
  int64_t *noff, *poff;  /* [n + 1], [m + 1] */
  double *node, *pair;
  /* The bound split by node and edge (each row's price term charged to the node of its
   * first segment): the bound of a set of components is the sum over its nodes and
   * edges. */
  double *nshare, *eshare; /* [n], [m] */
} sg_excess;

/* Fills `ex` (malloc'd; sp_sg_excess_free) from the best dual of the runs so far; returns
 * SP_ENOTFOUND when there is none. */
int sp_sg_dual_excess(sg_dual *d, sg_excess *ex);
void sp_sg_excess_free(sg_excess *ex);

/* Work done so far (cost entries touched). */
int64_t sp_sg_dual_work(const sg_dual *d);

#endif /* SP_SOLVER_SG_DUAL_INT_H */
