/*
 * data_flow_reshards.h - explicit reshards around Shardy's data-flow ops (stablehlo.while,
 * stablehlo.case, stablehlo.optimization_barrier) in the full version of explicit reshard
 * insertion: every value that flows into result i (a while or barrier operand, what a while
 * body or a case branch returns at position i) is resharded to result i's sharding when it
 * differs (a result without sharding takes the replicated sharding of the value's mesh; a value
 * without sharding counts as replicated). Meshes may differ: the reshard crosses them.
 *
 * Memory: new ops in the module's arena.
 */
#ifndef SP_EXPORT_DATA_FLOW_RESHARDS_H
#define SP_EXPORT_DATA_FLOW_RESHARDS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

bool sp_export_is_data_flow_op(const sp_op *op);
int sp_export_data_flow_reshards(sp_module *m, sp_op *op, sp_err *err);

#endif /* SP_EXPORT_DATA_FLOW_RESHARDS_H */
