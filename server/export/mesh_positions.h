/*
 * mesh_positions.h - devices as positions of a mesh, and the shard of a tensor dim each one
 * holds: the arithmetic the export passes share when they reason per device.
 *
 * A mesh of axes n1..nk has n1*...*nk positions, numbered row-major over the axes (the first
 * axis is the most significant); a position's coordinates are its digits. The device at a
 * position is device_ids[pos] when the mesh lists them, else pos. A sub-axis "x":(p)s of an
 * axis of size n is the digit (c / (n/(p*s))) % s of the axis coordinate c (p counts the part
 * of x major to it). A tensor dim sharded by axes a1..am (major first) has S = |a1|*...*|am|
 * shards; a position's shard index is the mixed-radix number of its digits along a1..am.
 *
 * Memory: none; coordinate arrays are the caller's (mesh->naxes entries).
 */
#ifndef SP_EXPORT_MESH_POSITIONS_H
#define SP_EXPORT_MESH_POSITIONS_H

#include <stdint.h>

#include "ir/mesh.h"
#include "ir/sharding.h"

int64_t sp_mesh_positions(const sp_mesh *mesh);
void sp_mesh_position_coords(const sp_mesh *mesh, int64_t pos, int64_t *coord);
int64_t sp_mesh_position_of(const sp_mesh *mesh, const int64_t *coord);
int64_t sp_mesh_position_device(const sp_mesh *mesh, int64_t pos);
/* Shards of dim `d` of `s` (1 when `s` is NULL or the dim unsharded). */
int64_t sp_dim_shard_count(const sp_mesh *mesh, const sp_sharding *s, int d);
/* The shard of dim `d` of `s` the position at `coord` holds. */
int64_t sp_dim_shard_index(const sp_mesh *mesh, const sp_sharding *s, int d, const int64_t *coord);
/* Rewrites the digits of `coord` along dim `d`'s axes so that it holds shard `k`. */
void sp_dim_set_shard_index(const sp_mesh *mesh, const sp_sharding *s, int d, int64_t *coord, int64_t k);
/* Reverses the digits of `coord` along the axis part `r` (size - 1 - digit). */
void sp_mesh_coords_flip(const sp_mesh *mesh, const sp_axis_ref *r, int64_t *coord);

#endif /* SP_EXPORT_MESH_POSITIONS_H */
