/*
 * strategies.h - the sharding strategies of one op (or one value) that the search picks from.
 *
 * A strategy of an op is an assignment of mesh axes to the factors of its OpShardingRule:
 * every mesh axis of size > 1 shards at most one factor, or none. Axes on one factor are
 * taken in mesh order. From the assignment follow the layout of every operand and result
 * (per dimension, its factors' axes major factor first), the number of devices that share
 * the op's work (the product of every assigned axis), and the op's own collective: axes on
 * reduction factors leave the results partial over them, so they are all-reduced, or, as a
 * variant of the same assignment, reduce-scattered onto one result dimension (the axes are
 * appended, minor-most, to that dimension), or, with `partial` (the caller decides for which
 * ops: those whose sum is linear in what follows, plan_search.c), kept partial: the results
 * carry the reduction axes as unreduced axes (Shardy's partial sums) and the op pays nothing;
 * whoever reads the sums later pays the all-reduce (cost_model.h). An assignment is kept when:
 *   - only pass-through and reduction factors are sharded (need-replication and permutation
 *     factors never are), and each sharded factor's size is divisible by its axes' product;
 *   - every dimension is a plain blocked split: in a dimension made of several factors
 *     (a reshape's compound `kl`), a factor may carry axes only if every factor before it in
 *     the dimension is split completely;
 *   - every result agrees with the result value's given sharding, as propagation left it:
 *     a closed dimension keeps exactly its axes; an open one keeps its axes as a prefix and
 *     may be extended (propagated shardings are kept, the search only adds to them); axes in
 *     `replicated` never shard the value nor are unreduced in it. Operands are free: a consumer may want a layout its
 *     producer does not give, and the edge between them pays the resharding.
 * With `fixed` every given sharding counts as closed (for evaluating a given plan).
 *
 * The strategies of a value without an op to follow (a function argument, a constant) are
 * its layouts: each mesh axis on one dimension (in mesh order within the dimension) or on
 * none, the dimension size divisible by its axes' product, under the same agreement rule.
 *
 * Enumeration order (and so the strategies' indices) is deterministic: mesh axes in mesh
 * order, each trying "none" first, then factors (or dims) in index order.
 *
 * Memory: strategies, layouts and axis lists are allocated from the arena passed in.
 */
#ifndef SP_SEARCH_STRATEGIES_H
#define SP_SEARCH_STRATEGIES_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/mesh.h"
#include "ir/rule.h"
#include "search/cost_model.h"

/* Enumerations larger than this (before filtering) are refused with SP_ELIMIT. */
#define SP_STRATEGY_MAX_ENUM (1 << 20)

typedef struct sp_strategy_opts {
  bool fixed;             /* every given sharding is final: open dims count as closed */
  bool no_reduce_scatter; /* offer only the all-reduce form of a sharded reduction */
  bool partial;           /* also offer the keep-partial form of a sharded reduction */
} sp_strategy_opts;

typedef struct sp_strategy {
  int8_t *axis_factor;    /* [mesh naxes]: the factor (op) or dim (value) each mesh axis
                             shards, -1 for none; NULL for a fixed strategy */
  sp_layout *operands;    /* [noperands]: the layout each operand is consumed in */
  sp_layout *results;     /* [nresults] */
  int64_t devices;        /* devices sharing the op's work */
  int nreduce;            /* axes on reduction factors: the results are partial over them */
  sp_ft_axis *reduce_axes;
  int scatter_dim;        /* -1: all-reduce; else the result dim they are scattered onto */
  bool partial;           /* keep partial: the results carry the reduction axes as unreduced
                             (sp_layout.unreduced) and the op pays no collective */
  sp_layout *reduced;     /* [nresults] partial strategies: the results without their unreduced
                             axes (what a consumer that needs the sums reads); NULL otherwise */
  const sp_layout *plain; /* reduce-scatter strategies: the result before the scatter (all-reduced,
                             as the export computes it before slicing); NULL otherwise */
} sp_strategy;

/* Result r of `st`, or its reduced form (no unreduced axes) when `reduced`. */
static inline const sp_layout *sp_strategy_result(const sp_strategy *st, int r, bool reduced) {
  return reduced && st->reduced ? &st->reduced[r] : &st->results[r];
}

typedef struct sp_strategy_set {
  int n, cap;
  sp_strategy *v;
  int noperands, nresults;
} sp_strategy_set;

/* The strategies of `op` under `rule` on `mesh` (see the top comment). `o` may be NULL.
 * The set may come out empty (the given shardings admit no whole-axis assignment, e.g. they
 * use sub-axes); the caller then falls back to sp_strategies_fixed. Errors: SP_EINVAL for a
 * rule that does not match the op or a sharding naming an axis not in `mesh`, SP_ELIMIT
 * above SP_STRATEGY_MAX_ENUM assignments, SP_ENOMEM. */
int sp_strategies_for_op(sp_arena *a, const sp_op *op, const sp_rule *rule, const sp_mesh *mesh,
                         const sp_strategy_opts *o, sp_strategy_set *out, sp_err *err);

/* The layouts of value `v` (a ranked static tensor), as one-result strategies with no
 * operands and devices 1. */
int sp_strategies_for_value(sp_arena *a, const sp_value *v, const sp_mesh *mesh,
                            const sp_strategy_opts *o, sp_strategy_set *out, sp_err *err);

/* One strategy: operands and results exactly as their values are sharded now (no sharding =
 * unsharded), devices = the shards of result 0, no reduction. For ops the enumeration cannot
 * express. */
int sp_strategies_fixed(sp_arena *a, const sp_op *op, const sp_mesh *mesh, sp_strategy_set *out,
                        sp_err *err);

/* Whether layout `l` agrees with the given sharding `s` (NULL agrees with anything). */
bool sp_layout_agrees(const sp_layout *l, const sp_sharding *s, const sp_mesh *mesh, bool fixed);

/* "data->i model->k, all-reduce" style text of a strategy, for logs and tests. */
void sp_strategy_print(sp_strbuf *sb, const sp_strategy *st, const sp_mesh *mesh,
                       const sp_rule *rule);

#endif /* SP_SEARCH_STRATEGIES_H */
