/*
 * unreduced_reshards.h - Shardy's lowering of a reshard that makes axes unreduced, shared by
 * both modes of -sdy-insert-explicit-reshards.
 *
 * A reshard whose target lists unreduced axes the operand does not have (same mesh, same
 * reduction kind, and every unreduced axis of the operand kept) becomes, in this order:
 *   1. `sdy.reshard` to the intermediate sharding (only when it differs from the operand's):
 *      the target's dimension axes plus, per dim, the axes that go from sharded to unreduced,
 *      with the operand's unreduced axes;
 *   2. `sdy.replicated_to_unreduced {axes}`: the target's unreduced axes that the operand
 *      neither has unreduced nor shards into them (sub-axis pieces, mesh order);
 *   3. `sdy.sharded_to_unreduced [per-dim axes]`: per dim whose target axes are a prefix of the
 *      operand's (sub-axes split where needed), the operand's further axes that the target
 *      makes unreduced, in the operand's order.
 * Each op's out_sharding is the sharding reached after it (adjacent sub-axes merged); the
 * last one's is the target. Other reshards are left alone.
 *
 * Memory: new ops and shardings in the module's arena; scratch lists malloc'd and freed.
 */
#ifndef SP_EXPORT_UNREDUCED_RESHARDS_H
#define SP_EXPORT_UNREDUCED_RESHARDS_H

#include "ir/err.h"
#include "ir/ir.h"

/* Lowers every such sdy.reshard of the module. */
int sp_export_lower_unreduced_reshards(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_UNREDUCED_RESHARDS_H */
