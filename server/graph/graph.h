/*
 * graph.h - the structured-graph front-end: shardplan.v1.Graph (proto/shardplan/v1/graph.proto)
 * to the IR and back. A front-end beside the MLIR reader: for every op the engine knows, a
 * module written as a Graph builds the same IR as its MLIR text (same canonical hash, so the
 * same cache key), and sp_graph_from_module() writes any module as a Graph that reads back to
 * it.
 *
 * Reading checks what the message itself can get wrong and names the place ("graph: op 12
 * (stablehlo.add) operand 1: value 37 is not defined before this op"): op names, unique value
 * ids, every operand defined earlier (a cycle or a dangling id is an error), types (rank,
 * negative or huge sizes, element type), shardings and rules (shape of the message), attribute
 * kinds, limits of ir/sp_limits.h. Everything else (axes in the mesh, rank of a sharding,
 * op-specific rules) is the verifier's job, as for MLIR text. Op numbers in messages count the
 * module body's ops in pre-order from 0, nested ops included, as plan addresses do.
 *
 * sp_graph_from_module numbers the ops in their pass_index scratch field (ir.h), which is
 * why it takes a non-const module; nothing else is changed.
 *
 * Memory: sp_graph_to_module returns a module owning its arena; the message is not kept.
 * sp_graph_from_module returns a message tree allocated in `*arena_out` (free it with
 * sp_arena_free; do not use protobuf-c's free_unpacked on it).
 */
#ifndef SP_GRAPH_H
#define SP_GRAPH_H

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "shardplan/v1/graph.pb-c.h"

int sp_graph_to_module(const Shardplan__V1__Graph *g, const char *filename, sp_module **out,
                       sp_err *err);

int sp_graph_from_module(sp_module *m, Shardplan__V1__Graph **out, sp_arena **arena_out,
                         sp_err *err);

#endif /* SP_GRAPH_H */
