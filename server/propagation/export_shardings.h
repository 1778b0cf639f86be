/*
 * export_shardings.h - the sharding clean-ups at the end of Shardy's propagation pipeline.
 *
 *   sp_export_update_non_divisible: on every func argument and result, call result and manual
 *     computation in/out sharding, each dim keeps the longest prefix of its axes whose product
 *     divides the dim size; the first axis that does not divide is cut to its major part of
 *     size gcd(axis size, what is left of the dim) when that is > 1.
 *   sp_export_remove_sub_axes_in_main: on the main function's arguments and results (main =
 *     the only func, else @main), an open dim is cut at its first sub-axis.
 *   sp_export_close_shardings: every sharding of the module becomes closed (no `?`) and loses
 *     its replicated list (unreduced axes stay).
 *   sp_export_insert_explicit_reshards: the default (not "full") explicit-reshard step:
 *       - where a value with unreduced axes U is used by an op that does not keep all of them
 *         unreduced (the target set T is the reshard/constraint's own unreduced axes, the func
 *         result's for a return, the callee argument's for a call, else what every result of
 *         the user has unreduced in common), `sdy.all_reduce {U \ T} %v` is inserted before the
 *         user, with out_sharding = the value's sharding with unreduced U n T;
 *       - after an op a result of which already has unreduced axes, the axes sharding the op's
 *         reduction factors (dims mapped to one reduction factor) get `sdy.all_reduce` right
 *         after the op, one per result with a sharding (in result order), less the axes that
 *         result lists as unreduced (out_sharding = the result's);
 *       - where a call operand's sharding differs from the callee's argument sharding (a
 *         missing sharding counts as replicated), `sdy.reshard` to the argument's sharding is
 *         inserted before the call.
 *   sp_export_canonicalize: the canonicalizer restricted to collective patterns: sdy collectives
 *     over no axes are removed, and pure ops whose results are all unused are erased (as MLIR's
 *     canonicalizer erases dead ops).
 *
 * Memory: new shardings and ops in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_EXPORT_SHARDINGS_H
#define SP_EXPORT_SHARDINGS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_update_non_divisible(sp_module *m, sp_err *err);
int sp_export_remove_sub_axes_in_main(sp_module *m, sp_err *err);
int sp_export_close_shardings(sp_module *m, sp_err *err);
int sp_export_insert_explicit_reshards(sp_module *m, sp_err *err);
/* The same, the all-reduces after ops whose result has unreduced axes only when
 * `reduce_after_ops` (the full version, export/explicit_reshards.h, inserts its own). */
int sp_export_insert_explicit_reshards_mode(sp_module *m, bool reduce_after_ops, sp_err *err);
/* The first step above for operand `i` of `user`, whose value has sharding `s` (its own, or
 * what a manual computation's body sees of its block argument): the all-reduce of the
 * unreduced axes the user does not keep, inserted before the user, which then reads it.
 * SP_OK when there is nothing to reduce; SP_ENOMEM. */
int sp_export_all_reduce_operand(sp_module *m, sp_op *user, int i, const sp_sharding *s);
int sp_export_canonicalize(sp_module *m, sp_err *err);

/* The main function: the only func.func of the module, else @main; NULL if neither. */
sp_op *sp_export_main_func(const sp_module *m);

/* A copy of `s` with every dim closed and no replicated axes (s itself if already so). */
sp_sharding *sp_export_closed(sp_arena *a, const sp_sharding *s);

#endif /* SP_EXPORT_SHARDINGS_H */
