/*
 * verify_unreduced.h - Shardy's -sdy-verify-unreduced-axes: partial sums may only become full
 * sums through an operation meant for it.
 *
 * Unreduced axes (sharding.h) say a tensor holds partial results over those axes. The pass
 * checks, op by op, every transition between an operand's unreduced axes and a result's
 * (operand and result on the same mesh; different meshes are not compared):
 *   - "blessed" ops may drop unreduced axes: sdy.reshard, sdy.sharding_constraint, sdy
 *     collectives and stablehlo.all_reduce. A reshard/constraint must keep the reduction kind
 *     of the axes it keeps ("cannot change the reduction operator of kept unreduced axes from
 *     max to sum."); an all-reduce (sdy or stablehlo) may not reduce axes of another kind than
 *     its own (sum for sdy.all_reduce; the body's for stablehlo.all_reduce), and sdy.all_reduce
 *     needs a sharded operand;
 *   - any other op that drops an operand's unreduced axis fails ("dropped unreduced axis 'y'
 *     without a blessed operation ..."), and so does one that keeps it under another kind; it
 *     may introduce new unreduced axes only of its own reduction kind (a reduce's body kind,
 *     sum otherwise: "cannot introduce 'max' unreduced axes. Expected 'sum'.");
 *   - func.call: each operand's unreduced axes must equal the callee argument's, each call
 *     result's the callee result's; func.return: each returned value's must equal the function
 *     result's.
 * Every violation is reported (all but the last as error diagnostics on m->diags, the last as
 * the returned error), at the op's place, in Shardy's words.
 *
 * Memory: nothing kept.
 */
#ifndef SP_EXPORT_VERIFY_UNREDUCED_H
#define SP_EXPORT_VERIFY_UNREDUCED_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_verify_unreduced_axes(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_VERIFY_UNREDUCED_H */
