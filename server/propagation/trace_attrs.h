/*
 * trace_attrs.h - the propagation trace (trace.h) written as Shardy's debugging attributes.
 *
 *   sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [{"a" = operand-0 ->
 *       [result-0]}]}, ...]>            on each op with edges; a func's on its first result
 *   sdy.sharding_origins = {a = "self", "c:(1)4" = "input: 0"}
 *                                       on func arguments and results, and on ops whose one
 *                                       sharding is their own attribute (sharding_constraint,
 *                                       data_flow_edge, reshard)
 *   sdy.sharding_origins = [{...}, {...}]   on other ops, one dictionary per result
 * Dictionary keys are the axes as Shardy names them (a, "c:(1)4"), sorted; steps are listed
 * in order and, within a step, axes in mesh order.
 *
 * Sinking (-sdy-sink-data-flow-edges with sink-debug-*): before the edges go, their attributes
 * are gathered on the owning op as sdy.block_arg_sharding_origins / sdy.result_sharding_origins
 * and sdy.block_arg_propagation_edges / sdy.result_propagation_edges: one entry per owner
 * whose edge has the attribute, in owner order (owners without one are skipped).
 *
 * Memory: attribute text lives in the module's arena; scratch malloc'd.
 */
#ifndef SP_PROPAGATION_TRACE_ATTRS_H
#define SP_PROPAGATION_TRACE_ATTRS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

/* Writes (or rewrites) the attributes of everything the module's trace knows about. No trace:
 * nothing to do. */
int sp_trace_write_attrs(sp_module *m, sp_err *err);

/* Gathers the edges' debugging attributes on their owners (see above); call before the edges
 * are sunk. */
int sp_trace_sink_attrs(sp_module *m, bool origins, bool edges, sp_err *err);

#endif /* SP_PROPAGATION_TRACE_ATTRS_H */
