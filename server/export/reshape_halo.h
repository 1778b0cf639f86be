/*
 * reshape_halo.h - a sharded stablehlo.reshape that splits one dim unevenly made local by a
 * halo exchange: the enable-halo-exchange=true form of -sdy-resolve-permutation-factors for
 * it. Also the reshape's dimension groups, which the pass shares.
 *
 * A reshape's dims fall into groups: runs of operand dims [i0, i1) and result dims [j0, j1)
 * with equal element counts, found left to right. The rewrite applies when the one group to
 * resolve splits a single operand dim I (sharded on S shards, s_in = ceil(I/S)) into result
 * dims D_j0..D_j1-1 of which only the last holds more than one element per shard
 * (E = ceil(D_last/N_last)), and every other group is one operand dim to one result dim
 * sharded alike. A device's result block is then E consecutive elements of the operand dim,
 * from `lin` (its row-major index); its left and right halo in shards give nl and nr hops
 * (at most S/2 each way). The rewrite:
 *   1. a zero scalar is made; the operand is padded at the high end to S*s_in when S does not
 *      divide I;
 *   2. an sdy.manual_computation over the axes of the group (operand dim and result dims)
 *      takes both; inside, the shards nl..1 before and 1..nr after are collective-permuted in
 *      and concatenated around the local shard, which is padded by E at both ends; the device
 *      looks up its start X + lin - (k - nl)*s_in (k its operand shard) in a table indexed by
 *      its mesh position, dynamic-slices E elements there and reshapes them to its result
 *      block;
 *   3. the result, padded to N_j * ceil(D_j/N_j) on the group's dims, is sliced back to the
 *      op's type when that differs.
 * Otherwise nothing changes (the caller resolves the group by replication).
 *
 * Memory: new ops in the module's arena.
 */
#ifndef SP_EXPORT_RESHAPE_HALO_H
#define SP_EXPORT_RESHAPE_HALO_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

typedef struct sp_reshape_group {
  int i0, i1, j0, j1; /* operand dims [i0, i1), result dims [j0, j1) */
} sp_reshape_group;

/* The groups of a reshape from `ti` to `to` (static, same element count) into `out` (room for
 * ti->rank + to->rank + 1); returns their number. */
int sp_reshape_groups(const sp_type *ti, const sp_type *to, sp_reshape_group *out);

/* Rewrites the reshape `op` whose operand dims `resolve` marks (one group's) as above; *done
 * is false, and nothing changes, when the op is not of that form. */
int sp_export_reshape_halo(sp_module *m, sp_op *op, const bool *resolve, bool *done, sp_err *err);

#endif /* SP_EXPORT_RESHAPE_HALO_H */
