/*
 * sharding_constraints.h - Shardy's -sdy-apply-sharding-constraints and
 * sharding-constraint-to-reshard.
 *
 * Applying: a `sdy.sharding_constraint %x <S>` sets S as the sharding of %x itself when
 *   - %x has no sharding yet and can carry one (an op result, or an argument of a function),
 *   - S is fully closed (every dim closed), and
 *   - no other sharding_constraint (or manual computation operand) using %x asks for a
 *     different sharding.
 * When %x is the target of a data-flow edge (the result of an sdy.data_flow_edge, or a while
 * body or cond argument, whose sharding lives on the while's edge) the constraint is instead
 * moved right after %x (to the top of the block) and every other use of %x is redirected to
 * it; the constraint's unreduced axes still go to the edge (open dims) when it has no sharding.
 * Manual computation in_shardings are applied the same way to their operands (a new
 * constraint is made for an edge target). Independently, a chain %x -> c1 -> ... -> cn where
 * %x has no sharding, c1 is the only constraint using %x, each link's only use is the next
 * constraint and cn feeds no constraint or manual computation, makes the uses of %x that come
 * after cn in the same block (except func.return) use cn instead.
 *
 * To reshard: every sdy.sharding_constraint becomes an sdy.reshard with the same sharding.
 *
 * Options: debug-sharding-origins / debug-propagation-edge-sharding start the propagation trace
 * (propagation/trace.h) before applying, so that an applied sharding is recorded: its axes
 * take the constraint's (or computation input's) origin, and one step moves them from the
 * constraint to its input.
 *
 * Memory: the module's arena; scratch lists malloc'd.
 */
#ifndef SP_SHARDING_CONSTRAINTS_H
#define SP_SHARDING_CONSTRAINTS_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_sharding_constraints_apply(sp_module *m, sp_err *err);
int sp_sharding_constraints_to_reshard(sp_module *m, sp_err *err);

#endif /* SP_SHARDING_CONSTRAINTS_H */
