/*
 * func_calls.h - functions and calls around propagation: Shardy's
 * propagate-sharding-from-func-to-call, import-func-calls, pre-order-funcs,
 * propagate-to-func-results and insert-func-call-reshards (the way back, named computations
 * to functions and un-flattening, is call_graph.h).
 *
 *   sp_func_calls_shardings_to_calls: a func.call none of whose results has a sharding takes
 *     the callee's result shardings (missing ones become fully open on the same mesh).
 *   sp_func_calls_import: every func.call to a function with a single-block body becomes
 *     `sdy.named_computation<"callee">` holding a private copy of the callee's body (so a
 *     function called from several places gets one copy per call site: the call graph is
 *     flattened), with in_shardings from the callee's argument shardings, out_shardings from
 *     the call's result shardings, and (with add_edges) data-flow edges on its arguments and
 *     results. The computation is named after the callee's `sdy.original_func_name` when it
 *     has one, keeps the call's other attributes, and its in_shardings are the callee's
 *     argument shardings, missing ones fully open on the mesh of the first non-maximal one
 *     (none when there is no such sharding). A function with argument or result shardings that
 *     is called more than once gets a warning at each further call. Calls inside the copied bodies are imported too. A call cycle is
 *     an error. Imported callees left without callers are erased.
 *   sp_func_calls_pre_order: moves the functions to the end of the module, callers before
 *     their callees (module order otherwise).
 *   sp_func_calls_results_from_returns: every function but the main one takes the shardings
 *     of the values it returns as its result shardings (where they have one).
 *   sp_func_calls_insert_reshards: where a call result's sharding differs from the callee's
 *     result sharding, `sdy.reshard` to the call's sharding is inserted after the call (for
 *     the other uses), and the call's result sharding becomes the callee's.
 *
 * Memory: new ops in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_FUNC_CALLS_H
#define SP_FUNC_CALLS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/op_list.h"

int sp_func_calls_shardings_to_calls(sp_module *m, sp_err *err);
int sp_func_calls_import(sp_module *m, bool add_edges, sp_err *err);
int sp_func_calls_pre_order(sp_module *m, sp_err *err);
int sp_func_calls_results_from_returns(sp_module *m, sp_err *err);
int sp_func_calls_insert_reshards(sp_module *m, sp_err *err);

#endif /* SP_FUNC_CALLS_H */
