/*
 * canonicalize.h - `-canonicalize` for the sdy ops: the folds and simplifications Shardy
 * registers as canonicalization patterns, run to a fixed point, plus erasing dead ops that
 * have no side effects (stablehlo element-wise and shape ops, sdy.all_to_all, constants...;
 * the other sdy collectives and computations stay even when unused, as in Shardy).
 *
 *   collectives   all_gather / all_slice / reduce_scatter over no axes, all_reduce of no axes
 *                 and a collective_permute that keeps the layout are their input; an all_slice
 *                 of an all_gather over the same axes is the gather's input; an all_reduce of
 *                 what a replicated_to_unreduced made unreduced is that op's input, of a
 *                 sharded_to_unreduced an all_gather of the same axes; an all_reduce whose uses
 *                 are all the same all_slice, when the leading slicing axes that it reduces are
 *                 exactly its axes, becomes a reduce_scatter (same reduction kind) followed by
 *                 an all_slice of the rest; an all_to_all of an all_to_all used only there,
 *                 with no dim in common, is one all_to_all (params by source dim).
 *   manual_computation  operands whose body argument is unused are dropped; one without
 *                 operands and results is inlined when its body is empty or it has no manual
 *                 axes; one whose manual axes all have size 1 is inlined.
 *
 * Memory: new ops and attributes in the module's arena; a scratch list malloc'd per round.
 */
#ifndef SP_CANONICALIZE_H
#define SP_CANONICALIZE_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_canonicalize(sp_module *m, sp_err *err);

/* The same without the manual_computation patterns: the canonicalizer Shardy's export
 * pipeline runs, restricted to the collective patterns (dead pure ops still go). */
int sp_canonicalize_collectives(sp_module *m, sp_err *err);

#endif /* SP_CANONICALIZE_H */
