/*
 * func_calls.h - functions and calls around propagation: Shardy's
 * propagate-sharding-from-func-to-call, flatten-call-graph + import-func-calls,
 * pre-order-funcs, export-named-computations + unflatten-call-graph,
 * propagate-to-func-results and insert-func-call-reshards.
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
 *   sp_func_calls_export: each sdy.named_computation (innermost first) becomes a private
 *     func.func named after it (made unique with _0, _1, ...; appended to the module) whose
 *     argument and result shardings are the in/out shardings, and a func.call carrying the
 *     out shardings replaces it. Then the call graph is un-flattened: walking the calls in
 *     module order, a call to a function exported from a computation of the same name and with
 *     the same argument and result shardings and types as one met before is redirected to
 *     that earlier function; functions left unused are erased.
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
int sp_func_calls_export(sp_module *m, sp_err *err);
int sp_func_calls_results_from_returns(sp_module *m, sp_err *err);
/* One named computation to a private function and a call (the function, `nc` itself when it
 * is left alone, NULL on out-of-memory). shardy_export: Shardy's export-named-computations
 * (export/call_graph.h): the function is marked with sdy.original_func_name and carries no
 * result shardings, the call keeps the computation's other attributes, and data-flow edges on
 * the computation's arguments and results go, their shardings taking the in/out shardings'
 * place; otherwise the pipeline's form (result shardings on the function). A clashing name
 * gets the suffix sp_module_unique_symbol_counted picks with `counter`, shared by the run. */
sp_op *sp_func_calls_export_one(sp_module *m, sp_op *nc, bool shardy_export, unsigned *counter);
int sp_func_calls_insert_reshards(sp_module *m, sp_err *err);
/* Appends the sdy.named_computation ops at and below `op` to `l`, innermost first (post-order,
 * the order they are exported in); false when memory ran out (l->oom). */
bool sp_func_calls_collect_named(sp_op *op, sp_op_list *l);

#endif /* SP_FUNC_CALLS_H */
