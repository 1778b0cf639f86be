/*
 * dead_ops.h - which ops may be erased once nothing uses them: MLIR's "trivially dead" as the
 * StableHLO and sdy dialects declare their ops' memory effects. One list for the three places
 * that erase dead ops: the propagation worklist (MLIR's greedy driver erases a dead op it
 * pops), the export pipeline's canonicalizer and the -canonicalize pass.
 *
 *   pure (no memory effects): element-wise math, select, clamp, bitcast_convert, constants,
 *     iota, broadcast_in_dim, concatenate, convolution, dot, dot_general, dynamic_slice,
 *     dynamic_update_slice, fft, gather, pad, reshape, reverse, slice, transpose, cholesky,
 *     triangular_solve, the batch norms, get_tuple_element, tuple, sdy.constant, sdy.reshard,
 *     sdy.propagation_barrier, sdy.all_to_all;
 *   pure when their bodies are (RecursiveMemoryEffects): reduce, reduce_window, scatter,
 *     select_and_scatter, sort;
 *   never erased: sdy.sharding_constraint (a dangling constraint still says how its input is
 *     sharded), sdy.data_flow_edge (kept until the edges are sunk), the other sdy collectives
 *     (a dead all_gather stays under -canonicalize, a dead all_to_all goes: Shardy's
 *     collective_canonicalization tests), manual and named computations, while, case, calls,
 *     custom calls, and any op not listed.
 *
 * Stateless; thread-safe.
 */
#ifndef SP_DEAD_OPS_H
#define SP_DEAD_OPS_H

#include <stdbool.h>

#include "ir/ir.h"

/* Whether `op` has no side effects (its bodies' ops included, for the ops listed above). */
bool sp_op_is_pure(const sp_op *op);
/* Whether `op` is pure, has results, and none of them is used: erasing it changes nothing.
 * Inline, and the uses looked at first: the propagation worklist asks this of every op it
 * visits in a session's first run, and nearly every op has a used result, which two loads
 * tell without a call. */
static inline bool sp_op_is_trivially_dead(const sp_op *op) {
  if (op->nresults == 0) return false;
  for (int i = 0; i < op->nresults; i++)
    if (op->results[i].uses) return false;
  return sp_op_is_pure(op);
}

#endif /* SP_DEAD_OPS_H */
