/*
 * constants.h - Shardy's constant-or-scalar splitter (import) and merger (export).
 *
 * Splitter: every stablehlo.constant becomes an sdy.constant (same value and attributes).
 * Then, per function, a *constant expression* is an sdy.constant, an iota, or a pure
 * element-wise / broadcast_in_dim / reshape / slice op (no regions) whose operands are all
 * constant expressions; a *scalar expansion* is a broadcast_in_dim of a rank-0 value that is
 * not itself a constant expression. Every use of one of these by an op that is not a constant
 * expression (terminators included) gets its own copy of the whole expression (for a scalar
 * expansion only the broadcast is copied; the scalar stays shared), inserted right before the
 * original, copies in the order of the uses; originals left without uses are erased. So each
 * use can be sharded on its own during propagation. Scalars are never cloned: a rank-0
 * constant expression keeps all its uses, and the copy of a larger expression uses the
 * original of each rank-0 sub-expression (what JAX's Shardy does: run on a rank-0
 * `convert` of a constant with two users, its splitter keeps the one convert).

 * Merger: within one block, a constant (sdy.constant or stablehlo.constant) with the same value, type, attributes and sharding
 * as an earlier one, or a broadcast_in_dim of the same operand with the same dimensions, type
 * and sharding as an earlier one, is replaced by the earlier one and erased.
 *
 * Memory: copies in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_CONSTANTS_H
#define SP_CONSTANTS_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_constants_split(sp_module *m, sp_err *err);
int sp_constants_merge(sp_module *m, sp_err *err);

#endif /* SP_CONSTANTS_H */
