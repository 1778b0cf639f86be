/*
 * reverse_halo.h - a sharded stablehlo.reverse made local by a halo exchange, the
 * enable-halo-exchange=true form of -sdy-resolve-permutation-factors for reverse.
 *
 * Reversing a dim whose shards hold s = ceil(n/S) elements (S shards) maps shard k onto shard
 * S-1-k, which is what placing the result on a mesh whose device order is reversed along the
 * dim's axes gives for free when S divides n. Otherwise (p = S*s - n > 0):
 *   1. the operand is padded by p at the end of the dim (a zero constant is made first);
 *   2. a sdy.manual_computation over the axes of those dims shifts each dim right by p
 *      elements: with q = p / s and r = p % s, shard k takes the last r elements of shard
 *      k-q-1 and the first s-r of shard k-q (its own when q = 0), each fetched by a
 *      stablehlo.collective_permute from the shard q+1 (and q) before it;
 * then the reverse runs on the reversed mesh (an sdy.mesh `<name>_reversed[_i]`, reused when an
 * equal mesh exists), `sdy.reshard` takes the result back to the original mesh, and a slice
 * drops the padding. Device ids in collective permutes are the mesh's (its device_ids).
 *
 * Memory: new ops, meshes and attributes in the module's arena.
 */
#ifndef SP_EXPORT_REVERSE_HALO_H
#define SP_EXPORT_REVERSE_HALO_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

/* Rewrites `op` (a stablehlo.reverse whose operand and result shardings agree on a named mesh)
 * as above; *done is false, and nothing changes, when the op is not of that form. */
int sp_export_reverse_halo(sp_module *m, sp_op *op, bool *done, sp_err *err);

#endif /* SP_EXPORT_REVERSE_HALO_H */
