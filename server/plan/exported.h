/*
 * exported.h - the collectives a planned module runs: the export passes applied to a copy of
 * the searched module, each inserted collective priced with the plan's links.
 *
 * After the search has written its shardings (and the reshards its strategies read through,
 * sp_plan_insert_operand_reshards), a copy of the module goes through what the export stage
 * runs to make the plan executable: explicit reshard insertion (full version), reshard-of-
 * reshard folding and reshards to collectives (export_pipeline.h:
 * sp_export_explicit_collectives), then the canonicalizer's collective folds
 * (propagation/canonicalize.h: an all_reduce followed by a slice of its axes becomes a
 * reduce_scatter, chained all_to_alls over distinct dims one). Every sdy collective the copy
 * has that the module did not is one entry, priced by sp_cost_collective_op with the
 * summary's per-axis links, and addressed in the original module like the search's own list:
 *   - an sdy.all_reduce or sdy.reduce_scatter is the reduction of the op whose result it reads
 *     (through earlier inserted collectives): op = that op, operand = -1; unless every axis it
 *     reduces is an unreduced axis of that value (a partial sum carried on, read whole by a
 *     consumer): then it is a resharding, as below;
 *   - any other is a resharding of the value it reads (through earlier inserted collectives)
 *     for the first op in program order that reads its result (through later collectives and
 *     reshards; on a tie, its lowest operand): op = that consumer (a func.return for a result
 *     sent back in its argument's layout), operand = its operand; op = the value's producer,
 *     operand -1, when nothing reads it.
 * Entries are in the copy's program order.
 *
 * Memory: the list and its strings in the module's arena; the copy is freed before returning.
 * The module is not changed.
 */
#ifndef SP_PLAN_EXPORTED_H
#define SP_PLAN_EXPORTED_H

#include "ir/err.h"
#include "ir/ir.h"
#include "search/plan_search.h"

int sp_plan_exported_collectives(sp_module *m, const sp_plan_summary *s,
                                 sp_search_collective **out, int *n, sp_err *err);

/* Replaces the summary's collectives with sp_plan_exported_collectives' and its
 * communication totals with theirs (own reductions as collective_s, the rest as reshard_s). */
int sp_plan_use_exported_collectives(sp_module *m, sp_plan_summary *s, sp_err *err);

#endif /* SP_PLAN_EXPORTED_H */
