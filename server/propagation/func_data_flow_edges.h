/*
 * func_data_flow_edges.h - Shardy's -sdy-add-func-data-flow-edges: edges that let propagation
 * run through functions that stay functions (a call graph that is not flattened). They are
 * passes of their own: Shardy's propagation pipeline flattens the call graph instead, in every
 * mode (dedup-functions-fully changes only the un-flattening, pipeline.h), and so does
 * shardplan's; the pipeline still sinks edges a module arrives with.
 *
 * Every function but the main one gets an `sdy.func_data_flow_edge` on each of its arguments
 * (at the top of its body, in argument order, carrying the argument's sharding), and every
 * func.call gets one on each of its results (right after the call, in result order, carrying
 * the result's sharding); all other uses of the value go through the edge. Values that are not
 * static-shaped tensors (tokens) get none.
 *
 * Sinking (Shardy's -sdy-sink-func-data-flow-edges, export/func_edges.h) writes the edges'
 * live shardings back and removes them: an argument takes its edge's sharding (when it has
 * one); a call's result shardings are rebuilt from its edges (an edge's sharding, else fully
 * open on the mesh of the first edge sharding, else of the call's own; a call with neither
 * keeps none); every use of an edge becomes a use of its input.
 *
 * Memory: new ops in the module's arena; a scratch list malloc'd.
 */
#ifndef SP_FUNC_DATA_FLOW_EDGES_H
#define SP_FUNC_DATA_FLOW_EDGES_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_func_data_flow_edges_add(sp_module *m, sp_err *err);
int sp_func_data_flow_edges_sink(sp_module *m, sp_err *err);

#endif /* SP_FUNC_DATA_FLOW_EDGES_H */
