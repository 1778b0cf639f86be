/*
 * call_graph.h - functions and calls after propagation: Shardy's
 * -sdy-export-named-computations and -sdy-unflatten-call-graph, as the export pipeline
 * (export/export_pipeline.h) and -sdy-propagation-pipeline (pipeline.h) both run them.
 *
 *   sp_call_graph_export_named: each sdy.named_computation (innermost first, then in module
 *     order) becomes a private func.func named after it (made unique as MLIR's
 *     SymbolTable does: _N with one counter for the whole run, so a second "bar" is bar_0
 *     and a later second "foo" foo_1; appended to the module) carrying `sdy.original_func_name = "<name>"`, whose arguments
 *     take the in_shardings (results carry none), and a func.call to it replaces the
 *     computation, with the out_shardings as its `sdy.sharding` and the computation's other
 *     attributes. Data-flow edges on the computation's arguments and results are removed,
 *     their shardings (when they have one) taking the place of the in/out shardings. Every
 *     computation gets its own function: merging them is the un-flattening
 *     pass's job.
 *   sp_call_graph_unflatten: functions that are copies of one original (a group: same
 *     `sdy.original_func_name`, or the function's own name without one; same
 *     `sdy.func_manual_axes`; same types) are merged. Walking the calls in module order
 *     (pre-order), a call is redirected to the first function of its group called before
 *     with the same argument and result shardings. With dedup_fully every call of a group
 *     goes to one function: the first callee of the group, replaced by a later call's callee
 *     only when that call gives its sharding class strictly more calls so far than the class
 *     of the function in place (the result shardings are then reconciled by call reshards).
 *     No function is erased (as Shardy's pass; a symbol DCE follows in the pipeline), and
 *     every function loses both attributes.
 *
 * Memory: new ops in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_CALL_GRAPH_H
#define SP_CALL_GRAPH_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

int sp_call_graph_export_named(sp_module *m, sp_err *err);
int sp_call_graph_unflatten(sp_module *m, bool dedup_fully, sp_err *err);

#endif /* SP_CALL_GRAPH_H */
