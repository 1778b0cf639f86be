/*
 * sg_reduce_int.h - exact reductions of a strategy-graph model (internal).
 *
 * Every rule keeps at least one optimal plan and maps valid plans of the reduced model to
 * valid plans of the input with the same cost (plus the model's constant offset):
 *   - memory normalisation: the least usage of each segment moves into the base (the
 *     capacity shrinks by it); a time where even the least usages exceed the limit proves
 *     the problem infeasible;
 *   - times where the largest possible usage fits cannot bind: segments that only cover
 *     such times are dropped;
 *   - strategies that cannot fit alone at some time, forbidden strategies, and strategies
 *     whose every pair on some edge is forbidden are removed;
 *   - an edge (a, b) that allows exactly one pair for every strategy of a and of b (a
 *     bijection, e.g. the planner's "same strategy index" ties between repeated layers;
 *     ends with one strategy are left to fixing)
 *     merges b into a: b's cost, the pair's cost and b's usage join a's under the
 *     permutation, and b's other edges move to a with their rows permuted (summed with
 *     edges a already has); b's strategy is read back from a's. It runs after the
 *     forbidden-pair pruning, which makes such edges square, and before dominance, which
 *     finds more in the merged node;
 *   - dominated strategies (cost, usage in every segment and every row of every incident
 *     edge no better than another strategy's) are removed;
 *   - separable edges (cost(a, b) = x(a) + y(b)) move into node costs;
 *   - single-strategy nodes and isolated memory-free nodes are fixed;
 *   - a leaf (one neighbour) is folded into its neighbour when, for every strategy of the
 *     neighbour, one of its cheapest responses also uses the least memory in every segment:
 *     the response's cost joins the neighbour's cost and its usage the neighbour's segments;
 *   - a memory-free node with two neighbours is replaced by an edge between them carrying
 *     the cost of its best response to each pair.
 * Rules repeat until nothing changes. The model records how to undo each elimination.
 */
#ifndef SP_SOLVER_SG_REDUCE_INT_H
#define SP_SOLVER_SG_REDUCE_INT_H

#include "solver/sg_model_int.h"

typedef struct sg_reduce_stats {
  int passes;
  int fixed, leaves, series, separable;
  int merged;                  /* nodes merged into another through a bijective edge */
  int64_t dominated, memory_pruned, forbidden_pruned;
  int64_t segments_dropped;
} sg_reduce_stats;

int sp_sg_reduce(sg_model *m, sg_reduce_stats *st /* OUT, may be NULL */, sp_err *err);

/* Splits the compact problem into parts that share no edge and no time of a segment:
 * comp[i] in [0, *ncomp). */
int sp_sg_prob_components(const sg_prob *p, int *comp /* OUT [n] */, int *ncomp /* OUT */);

#endif /* SP_SOLVER_SG_REDUCE_INT_H */
