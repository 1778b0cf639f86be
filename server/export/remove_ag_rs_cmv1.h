/*
 * remove_ag_rs_cmv1.h - Shardy's -sdy-remove-all-gather-reduce-scatter-for-cmv1: the
 * collectives around a dot are left to the partitioner's collective matmul (CMV1), which wants
 * the dot on its sharded operands and with its sharded result.
 *
 * For every stablehlo.dot and stablehlo.dot_general:
 *   - an operand defined by an sdy.all_gather used by nothing else reads the all-gather's
 *     operand instead, and the all-gather goes;
 *   - when the dot's result has no unreduced axes and its only user is an
 *     sdy.reduce_scatter, the dot takes the reduce-scatter's out sharding, the
 *     reduce-scatter's users read the dot, and the reduce-scatter goes.
 * All-gathers and reduce-scatters anywhere else, and ones with other users, stay.
 *
 * Memory: changes the module in place; nothing is allocated but a scratch list.
 */
#ifndef SP_EXPORT_REMOVE_AG_RS_CMV1_H
#define SP_EXPORT_REMOVE_AG_RS_CMV1_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_remove_ag_rs_cmv1(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_REMOVE_AG_RS_CMV1_H */
