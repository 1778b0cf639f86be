/*
 * sg_heuristic_int.h - greedy construction and local search on a compact model (internal).
 *
 * The state is one strategy per node, the total cost, and the usage profile over
 * compressed time kept in a segment tree of (load - capacity), so that a move's memory
 * check costs O(segments * log T). Every plan the heuristic holds is valid: moves that
 * would exceed a capacity are never applied, except inside a tentative group of moves that
 * is checked and undone as a whole.
 *
 * Moves: one node to its best strategy; two adjacent nodes jointly; a path of nodes by
 * dynamic programming; and, to leave local optima, perturbations of a node's neighbourhood
 * followed by repair and descent, kept when not worse (iterated local search).
 *
 * Work is counted in cost entries read; every phase takes a work budget so that the result
 * does not depend on the clock. A deadline (absolute, seconds on the monotonic clock) still
 * stops a phase early; 0 means none.
 *
 * Memory: malloc'd, owned by the state; sp_sg_heur_free() releases it. The problem must
 * outlive the state.
 */
#ifndef SP_SOLVER_SG_HEURISTIC_INT_H
#define SP_SOLVER_SG_HEURISTIC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/run_ctl.h"
#include "solver/sg_model_int.h"

typedef struct sg_heur sg_heur;

/* Called when the best plan improves. */
typedef void (*sg_heur_cb)(void *ctx, const char *phase, int64_t cost);

int sp_sg_heur_new(const sg_prob *p, uint64_t seed, sg_heur **out);
void sp_sg_heur_free(sg_heur *h);
void sp_sg_heur_set_callback(sg_heur *h, sg_heur_cb cb, void *ctx);
/* A request's control (may be NULL): a set cancel flag or a passed (moving) deadline ends a
 * phase like its own deadline does. */
void sp_sg_heur_set_ctl(sg_heur *h, const sp_run_ctl *ctl);
/* Called at each of the heuristic's clock checks once it has a valid plan (may be NULL): the
 * solver's snapshot check. It may read the best plan, nothing else. */
void sp_sg_heur_set_poll(sg_heur *h, void (*poll)(void *ctx), void *ctx);
/* Offers a caller's plan before the greedy one (a warm start): reported as phase
 * "warm start" when taken. */
bool sp_sg_heur_seed(sg_heur *h, const int *plan);

/* Builds a first valid plan greedily. Returns SP_OK, or SP_ENOTFOUND when none was found. */
int sp_sg_heur_greedy(sg_heur *h, double deadline);
/* Offers a plan (model strategies, -1 = unknown); it becomes the current and best plan if
 * it is complete, valid and better. Returns whether it was taken. */
bool sp_sg_heur_offer(sg_heur *h, const int *plan);
/* Starts from `plan` (model strategies; it may exceed the limit or use forbidden pairs),
 * repairs it and improves it with one-node and pair moves; keeps it if it is the best.
 * Returns the best cost known (INT64_MAX if none). */
int64_t sp_sg_heur_from_plan(sg_heur *h, const int *plan, int64_t work, double deadline);
/* Local search to a local optimum (within the budget). */
void sp_sg_heur_descend(sg_heur *h, int64_t work, double deadline);
/* Iterated local search until the budget or deadline. */
void sp_sg_heur_improve(sg_heur *h, int64_t work, double deadline);

bool sp_sg_heur_has_plan(const sg_heur *h);
/* The best plan (model strategies, [p->n]) and its cost (without the model offset). */
const int *sp_sg_heur_best(const sg_heur *h, int64_t *cost);
int64_t sp_sg_heur_work(const sg_heur *h);


#endif /* SP_SOLVER_SG_HEURISTIC_INT_H */
