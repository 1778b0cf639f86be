/*
 * explicit_reshards.h - Shardy's -sdy-insert-explicit-reshards with enable-full-version=true:
 * after it, every op's operands and results agree on one sharding per factor of its rule, so
 * that a partitioner can run each op locally, plus the all-reduces the op's sharded reduction
 * factors need.
 *
 * Per op with a sharding rule whose tensors share one mesh (ops without any sharding, sdy ops,
 * calls, returns and data-flow ops are left alone, and so are ops whose rule is a user's
 * `custom` one: it says how shardings flow, not how to partition the op):
 *   0. operands' unreduced axes the op does not keep are all-reduced before it (a manual
 *      computation's block argument counts with the unreduced axes of its in_sharding that are
 *      not manual);
 *   1. the op's shardings are projected onto its factors, regrouped
 *      (sp_factor_table_build_regrouped in propagation/factor_projection.h: axis parts that
 *      do not split along a dimension's factors are dealt by divisibility, not left as
 *      overflow); a tensor whose cells rebuild another device order than its own sharding
 *      counts as differing in step 3;
 *   2. when the tensors already agree on every factor (no tensor shards a need-replication
 *      factor, no axis serves two factors) nothing changes; otherwise one list of axes per factor is chosen:
 *        - an op with exactly two non-scalar tensors, no need-replication factor and one
 *          factor per dimension takes the factor shardings of the larger of the two
 *          (by element count; on a tie the one sharding more devices along non-permutation
 *          factors, then the one with fewer devices on permutation factors, then the first);
 *        - otherwise greedily: every (factor, axes) a tensor has is a candidate weighted by
 *          the element count of the tensors that have exactly it; the heaviest (then by kind:
 *          pass-through, need-replication, reduction, permutation; then the one sharding more
 *          devices; then the later factor; then the longer list / later mesh axis) among the
 *          factors that do not wait on a not fully sharded factor before them in some
 *          dimension (export/factor_dependencies.h) is taken, grown into the longest live
 *          candidate of its factor that extends it with unused axes when every tensor
 *          sharded along the factor by a prefix of that one gets there by slicing (none of its
 *          other factors uses the extra axes); candidates of the same factor are dropped and the others are cut before the first axis the chosen one uses;
 *          need-replication factors get no axes, and per need-replication factor all tensors
 *          share, the list most elements have (then over more devices) moves to the first
 *          pass-through factors whose size it still divides (sub-axes merged);
 *        - then factors after a factor left not fully sharded in some dimension lose their
 *          axes (no strided views);
 *   3. an operand whose sharding differs from the chosen one gets `sdy.reshard` to it right
 *      before the op; a result that differs takes the chosen sharding and is resharded back
 *      to its own right after the op;
 *   4. the axes chosen for reduction factors, unless the result keeps them unreduced, are
 *      all-reduced right after the op (before the result reshard), also for a result that
 *      has no sharding (the all-reduce's is replicated then).
 * The unreduced-operand all-reduces and call reshards of the default mode run as well
 * (propagation/export_shardings.h). Returned values are resharded to the function's result
 * shardings. Last, reshards that make axes unreduced are lowered (unreduced_reshards.h).
 *
 * Memory: new ops and shardings in the module's arena; factor tables in a scratch arena.
 */
#ifndef SP_EXPORT_EXPLICIT_RESHARDS_H
#define SP_EXPORT_EXPLICIT_RESHARDS_H

#include <stdbool.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/rule.h"

int sp_export_insert_explicit_reshards_full(sp_module *m, sp_err *err);

/* Steps 1-4 above for one op, as data, without changing the module: what the pass does to
 * `op` when its operands read sharded `in` (after step 0; NULL: no sharding) and its results
 * are sharded `outs`. The cost search asks it for the ops it cannot enumerate, so that it
 * prices the reshards the pass will insert around them. */
typedef struct sp_export_op_plan {
  bool applies;              /* false: the pass leaves the op alone (nothing below is set) */
  sp_sharding **operands;    /* [noperands]: the sharding operand i is resharded to before the
                                op; NULL: it is read as it is */
  sp_sharding **results;     /* [nresults]: the sharding result j is computed and all-reduced
                                in; NULL: nothing happens to it */
  bool *differs;             /* [nresults]: results[j] is not outs[j]: the result takes it,
                                and is resharded back to outs[j] (when set) after its
                                all-reduce */
  int *nreduce;              /* [nresults] */
  sp_axis_ref **reduce;      /* [nresults]: the axes all-reduced right after the op, mesh order */
} sp_export_op_plan;

/* Shardings and axis lists of the plan come from `a`, factor tables from `scratch`.
 * SP_ENOMEM, or an error of the op's sharding rule. */
int sp_export_plan_op(sp_module *m, sp_arena *a, sp_arena *scratch, const sp_op *op,
                      sp_sharding *const *in, sp_sharding *const *outs, sp_export_op_plan *plan,
                      sp_err *err);
/* The same with the op's rule and mesh given (every tensor on `mesh`, `mesh_ref` a sharding
 * naming it): what the search asks per strategy, its rule built once. */
int sp_export_plan_op_rule(sp_arena *a, sp_arena *scratch, const sp_op *op, const sp_rule *rule,
                           const sp_mesh *mesh, const sp_sharding *mesh_ref,
                           sp_sharding *const *in, sp_sharding *const *outs,
                           sp_export_op_plan *plan, sp_err *err);

/* enable-full-version=false: a dot's result resharded to what its operands imply in Shardy's
 * narrow case (see reshard_dot_result in the .c), a concatenate with an operand placed unlike
 * its result reconciled as in the full version, returned values resharded to function
 * results that add unreduced axes, the all-reduces of unreduced operands and call reshards
 * (propagation/export_shardings.h), and reshards to unreduced lowered
 * (unreduced_reshards.h). */
int sp_export_insert_explicit_reshards_default(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_EXPLICIT_RESHARDS_H */
