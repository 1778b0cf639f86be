/*
 * data_flow_edges.h - Shardy's -sdy-add-data-flow-edges and -sdy-sink-data-flow-edges.
 *
 * A data-flow op ties values that must share one sharding: result i of stablehlo.while (with
 * its operand i, the body's returned value i and the cond/body block argument i), result i of
 * stablehlo.case (with every branch's returned value i), result i of
 * stablehlo.optimization_barrier (with its operand i), and for sdy.named_computation and
 * sdy.manual_computation both body argument i (with operand i) and result i (with the
 * returned value i). The result or body argument is the edge's *owner*.
 *
 * Adding edges: for each owner of static tensor type (tokens and dynamic shapes are skipped),
 *   %e = sdy.data_flow_edge %owner sharding=<owner's sharding>
 * is inserted right after the op (results, in result order) or at the top of the body block
 * (arguments, in argument order), and every other use of the owner is redirected to %e. The
 * edge's sharding is a copy of the owner's current one: the op result's sharding, the
 * in_sharding of a named computation argument, or for a manual computation argument its
 * *local* view (the in_sharding without the manual axes, in dims, replicated and unreduced).
 * During propagation the edge holds the live sharding; the owning op's own is stale.
 *
 * Sinking edges: each edge is replaced by its owner, and the edges' shardings are written back
 * into the owning op, per kind (results / body arguments): owners without an edge or whose edge
 * has no sharding get a fully open sharding on the mesh of the first edge that has one; if no
 * edge of that kind has a sharding the op keeps what it had. A manual computation gets back
 * the manual axes its original in/out sharding started each dim with (closedness from the
 * edge, replicated/unreduced from the original).
 *
 * Memory: ops and shardings in the module's arena; scratch lists malloc'd and freed.
 */
#ifndef SP_DATA_FLOW_EDGES_H
#define SP_DATA_FLOW_EDGES_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

/* Adds edges for every data-flow op of the module. */
int sp_data_flow_edges_add(sp_module *m, sp_err *err);
/* Adds edges for the data-flow ops in `op` and nested in it (e.g. a new named computation). */
int sp_data_flow_edges_add_within(sp_module *m, sp_op *op, sp_err *err);
/* Sinks every sdy.data_flow_edge of the module. */
int sp_data_flow_edges_sink(sp_module *m, sp_err *err);

/* Whether `op` is one of the data-flow ops listed above. */
bool sp_data_flow_is_data_flow_op(const sp_op *op);
/* The sdy.data_flow_edge op whose input is `owner`, or NULL. */
sp_op *sp_data_flow_edge_of(const sp_value *owner);

/* The local view of a manual computation's in/out sharding: `s` without the manual axes. */
sp_sharding *sp_data_flow_strip_manual_axes(sp_arena *a, const sp_sharding *s,
                                            const sp_axis_ref *manual, int nmanual);

#endif /* SP_DATA_FLOW_EDGES_H */
