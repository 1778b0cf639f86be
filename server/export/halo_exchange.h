/*
 * halo_exchange.h - the pieces the halo-exchange rewrites of -sdy-resolve-permutation-factors
 * (enable-halo-exchange=true) share: a manual computation around the exchange, collective
 * permutes of whole shards between neighbours along a dim, and the per-device index
 * arithmetic on partition_id.
 *
 * Devices are mesh positions (export/mesh_positions.h). Inside the manual computation every
 * device holds its shard; `sp_halo_permute` sends each shard k of a dim to shard k + shift
 * (devices with no sender receive zeros, as stablehlo.collective_permute gives), and
 * `sp_halo_position` turns partition_id into the device's mesh position (through a lookup
 * table when the mesh lists its device ids), from which `sp_halo_shard_index` computes the
 * shard index of a dim with one divide (skipped when the divisor is 1) and one remainder per
 * axis.
 *
 * Memory: ops, types, shardings and attributes in the module's arena.
 */
#ifndef SP_EXPORT_HALO_EXCHANGE_H
#define SP_EXPORT_HALO_EXCHANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "export/op_build.h"
#include "ir/ir.h"

/* The closed replicated sharding of `rank` dims on the mesh `like` names. */
sp_sharding *sp_halo_replicated(sp_arena *a, const sp_sharding *like, int rank);

/* The full axes (mesh order) of the dims of `s` that `dims` marks (every dim when NULL);
 * *n is their count. NULL on out-of-memory. */
sp_axis_ref *sp_halo_axes_of(sp_arena *a, const sp_mesh *mesh, const sp_sharding *s, const bool *dims, int *n);

/* An sdy.manual_computation placed by `outer` over `n` inputs (each with its in sharding),
 * manual over `axes`, returning one value of type `out_type` sharded `out`. *body is its
 * block, whose arguments are the inputs' local types; the caller fills it and ends it with
 * sdy.return. NULL on out-of-memory. */
sp_op *sp_halo_manual(sp_builder *outer, sp_value *const *ins, sp_sharding *const *in_shardings, int n,
                      sp_type *out_type, sp_sharding *out, const sp_axis_ref *axes, int naxes,
                      sp_block **body);

/* stablehlo.collective_permute of `v` sending shard k of dim `d` of `s` to shard k + shift
 * (every mesh position, in position order). `channel` is the next channel handle. */
sp_value *sp_halo_permute(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, int64_t shift,
                          sp_value *v, int *channel);

/* The local shard `x` of dim `d` with the whole shards nl..1 before it and 1..nr after it
 * (collective permutes, in that order) concatenated around it along `d`, replicated; `x`
 * itself when there are no hops. */
sp_value *sp_halo_with_neighbours(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, int64_t nl,
                                  int64_t nr, sp_value *x, int *channel);

/* The device's mesh position as a scalar i64. */
sp_value *sp_halo_position(sp_builder *b, const sp_mesh *mesh);

/* The shard index of dim `d` of `s` at mesh position `pos` (a scalar i64). */
sp_value *sp_halo_shard_index(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, sp_value *pos);

/* `v` (an op result) gets the closed replicated sharding of `like`'s mesh; false on
 * out-of-memory. */
bool sp_halo_set_replicated(sp_module *m, sp_value *v, const sp_sharding *like);

#endif /* SP_EXPORT_HALO_EXCHANGE_H */
