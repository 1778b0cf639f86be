/*
 * gather_scatter_batching.h - Shardy's -sdy-explicit-gather-scatter-batching: a gather or
 * scatter whose indices are a concatenation (along the index vector dim) in which a piece
 * counts 0, 1, 2, ... along a batch dim of the indices (an iota, possibly reshaped or
 * broadcast) gathers "row i from batch i": that operand dim becomes an explicit batching dim.
 *
 * For each such piece of width 1 at index-vector position p, mapping to operand dim
 * o = start_index_map[p] (scatter_dims_to_operand_dims) where o is collapsed (inserted) and has
 * the size of the indices' batch dim t: p leaves the index map, o leaves collapsed_slice_dims
 * (inserted_window_dims), (o, t) join operand_batching_dims / start_indices_batching_dims
 * (input_batching_dims / scatter_indices_batching_dims), and the piece leaves the indices (a
 * new concatenate of the rest, or the one piece left). Ops that already have batching dims,
 * or whose index vector would become empty, are left alone. Propagation then sees the batch
 * factor shared by operand, indices and result.
 *
 * Memory: new ops and attributes in the module's arena.
 */
#ifndef SP_GATHER_SCATTER_BATCHING_H
#define SP_GATHER_SCATTER_BATCHING_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_gather_scatter_explicit_batching(sp_module *m, sp_err *err);

#endif /* SP_GATHER_SCATTER_BATCHING_H */
