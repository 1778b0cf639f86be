/*
 * permutation_factors.h - Shardy's -sdy-resolve-permutation-factors: an op whose sharding
 * would move data between devices along a permutation factor (pad, slice, reverse,
 * convolution and reduce_window windows, concatenate of slices...) or across a non-divisible
 * reshape is made local by replicating those dimensions around it.
 *
 * Per op with a sharding rule and a result sharding, all tensors on one mesh:
 *   - a dimension that holds a permutation factor is resolved unless it is communication
 *     free: for pad, slice and reverse every device's result shard along the dimension must
 *     be computable from its own operand shard (shards are ceil(size/shards) elements, the
 *     last ones padded); other ops' permutation dimensions always need resolving;
 *   - a reshape with a dimension whose size its axes do not divide is cut into dimension
 *     groups (runs of operand and result dims with equal products); a group holding such a
 *     dimension is resolved unless every device's result elements of the group lie in its
 *     operand shard;
 *   - resolving: each operand dim (and result dim) concerned loses its axes; an operand that
 *     changes gets `sdy.reshard` to that sharding before the op; the result takes it and is
 *     resharded back to its old sharding right after the op.
 * With enable-halo-exchange=true an op that would be resolved is rewritten instead, when it is
 * of a form they handle, by export/reverse_halo.h (reverse: reversed mesh, halo shift for
 * non-divisible dims), export/pad_halo.h (pad and unit-stride slice: neighbour shards
 * exchanged and dynamic-sliced in a manual computation) or export/reshape_halo.h (a reshape
 * splitting one dim unevenly); other ops, and those forms' exceptions, are resolved by
 * replication as with false.
 *
 * Memory: new ops and shardings in the module's arena; scratch in a malloc'd arena.
 */
#ifndef SP_EXPORT_PERMUTATION_FACTORS_H
#define SP_EXPORT_PERMUTATION_FACTORS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_resolve_permutation_factors(sp_module *m, bool halo_exchange, sp_err *err);

#endif /* SP_EXPORT_PERMUTATION_FACTORS_H */
