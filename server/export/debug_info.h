/*
 * debug_info.h - Shardy's -sdy-remove-propagation-debug-info.
 *
 * Propagation's debugging options leave attributes behind: `sdy.propagation_edges`,
 * `sdy.block_arg_propagation_edges`, `sdy.result_propagation_edges`, `sdy.sharding_origins`,
 * `sdy.block_arg_sharding_origins`, `sdy.result_sharding_origins` and
 * `sdy.sharding_origin_name`. The pass removes every one of them, wherever it sits: on ops,
 * on function arguments and on function results.
 *
 * Memory: nothing allocated; attributes are unlinked from their dictionaries.
 */
#ifndef SP_EXPORT_DEBUG_INFO_H
#define SP_EXPORT_DEBUG_INFO_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_remove_debug_info(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_DEBUG_INFO_H */
