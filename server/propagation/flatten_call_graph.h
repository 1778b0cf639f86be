/*
 * flatten_call_graph.h - Shardy's -sdy-flatten-call-graph: every function is called from at
 * most one call site, so that each copy of a function may be sharded on its own.
 *
 * Functions are visited callees first (a post-order of the call graph from each function
 * nobody calls, in module order). In each, the calls are visited in walk order: the first call
 * to a function keeps it; any later call gets a deep copy of it (the functions it calls copied
 * first, recursively, since they already have a caller). A copy is private, appended to the
 * module, named `<name>_<N>` with N a module-wide counter (skipping names in use) and carries
 * `sdy.original_func_name` (the original's, or the original's own name). Argument and result
 * shardings and attributes are copied with the body. A call graph with a cycle (recursion)
 * cannot be flattened: SP_EUNSUPPORTED at the first call found closing one.
 *
 * Memory: copies in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_FLATTEN_CALL_GRAPH_H
#define SP_FLATTEN_CALL_GRAPH_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_flatten_call_graph(sp_module *m, sp_err *err);

#endif /* SP_FLATTEN_CALL_GRAPH_H */
