/*
 * func_edges.h - Shardy's -sdy-sink-func-data-flow-edges (the counterpart of
 * -sdy-add-func-data-flow-edges, propagation/func_data_flow_edges.h).
 *
 * `sdy.func_data_flow_edge %v` ops sit on the arguments of functions and on the results of
 * calls while propagation runs; their sharding is the live one. Sinking writes it back and
 * removes the edges (every use of an edge becomes a use of its input):
 *   - an edge on a function argument gives the argument its sharding (when it has one);
 *   - the edges on a call's results rebuild the call's result shardings: an edge's sharding
 *     where it has one, a fully open sharding on the same mesh otherwise (the mesh of the first
 *     edge sharding, else of the call's own). A call with neither keeps no sharding.
 *
 * Memory: shardings in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_EXPORT_FUNC_EDGES_H
#define SP_EXPORT_FUNC_EDGES_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_sink_func_data_flow_edges(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_FUNC_EDGES_H */
