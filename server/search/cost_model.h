/*
 * cost_model.h - what a sharded program costs on a cluster: compute, collectives, resharding
 * and per-device bytes.
 *
 * A layout is a tensor's sharding as the search sees it: per dimension the mesh axes (or
 * sub-axes) that split it, major first. A mesh placed on a cluster gets, per axis, the alpha
 * (latency, s) and bandwidth (bytes/s) of the slowest link its groups cross
 * (sp_cluster_axis_costs). Every collective follows the alpha-beta formulas of DESIGN.md
 * section 5, with n the devices of one group and B the bytes of the whole tensor the group
 * moves:
 *   all-gather, reduce-scatter   alpha + (n-1)/n   * B / bw   (B: the gathered / unreduced tensor)
 *   all-reduce                   alpha + 2(n-1)/n  * B / bw   (B: the tensor being reduced)
 *   all-to-all                   alpha + (n-1)/n^2 * B / bw   (B: the group's whole tensor)
 * A collective over several axes runs as one collective over their product group: n is the
 * product of the sizes, alpha the largest and bw the smallest of the axes' (the group crosses
 * every link those axes cross, so it runs at the slowest one). A sub-axis is priced with the
 * link of its axis.
 *
 * Resharding from one layout to another (sp_cost_reshard) is priced as: first slice every
 * target axis the source does not use at all (free: each device keeps a part of what it holds),
 * then move each source axis that must leave its place: to another dimension that wants it
 * (one all-to-all over all such axes), else away (one all-gather over all such axes); the
 * target's remaining axes are then sliced (free). The axes a dimension keeps are the common
 * prefix of its source and target lists.
 *
 * Compute: FLOPs / devices sharing the work / the peak FLOP/s of the mesh's device type for
 * the element type (sp_cluster_device_flops). Element-wise work is priced the same way (the
 * model has no memory-bandwidth term).
 *
 * Memory: plain structs and caller-owned arrays; layouts built here are allocated from the
 * arena passed in. Pure functions, no printing.
 */
#ifndef SP_SEARCH_COST_MODEL_H
#define SP_SEARCH_COST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/mesh.h"
#include "ir/sharding.h"
#include "ir/strbuf.h"
#include "propagation/factor_projection.h"
#include "search/cluster.h"

/* ------------------------------------------------------------------ collectives */

typedef enum sp_collective_kind {
  SP_COLL_ALL_GATHER = 0,
  SP_COLL_REDUCE_SCATTER,
  SP_COLL_ALL_REDUCE,
  SP_COLL_ALL_TO_ALL
} sp_collective_kind;

/* "all-gather", "reduce-scatter", "all-reduce", "all-to-all". */
const char *sp_collective_name(sp_collective_kind k);

/* The formula for one group of `n` devices (n <= 1 costs nothing), `bytes` = B as above. */
double sp_collective_seconds(sp_collective_kind k, int64_t n, double alpha, double bandwidth,
                             double bytes);

/* ------------------------------------------------------------------ layouts */

typedef struct sp_layout {
  int rank;
  int *start;          /* [rank + 1]: dim d has axes[start[d] .. start[d+1]) */
  sp_ft_axis *axes;    /* [start[rank]], major first within each dim */
} sp_layout;

/* The unsharded layout of a rank-`rank` tensor (allocated from `a`; NULL on out-of-memory). */
sp_layout *sp_layout_new_unsharded(sp_arena *a, int rank);
/* A layout from per-dim axis lists: dims[d] holds axes of dim d (copied). */
sp_layout *sp_layout_from_dims(sp_arena *a, int rank, const sp_ft_axes *dims);
/* The layout of sharding `s` (NULL = unsharded) for a tensor of rank `rank`. Errors name
 * the axis that is not in `mesh` or the rank mismatch. */
int sp_layout_from_sharding(sp_arena *a, const sp_sharding *s, int rank, const sp_mesh *mesh,
                            sp_layout **out, sp_err *err);
/* A sharding of `l` on the mesh named `mesh_name`, every dim closed; replicated/unreduced
 * axes and per-dim priorities are taken from `old` (may be NULL). NULL on out-of-memory. */
sp_sharding *sp_layout_to_sharding(sp_arena *a, const sp_layout *l, const sp_mesh *mesh,
                                   const char *mesh_name, const sp_sharding *old);

static inline int sp_layout_dim_naxes(const sp_layout *l, int d) {
  return l->start[d + 1] - l->start[d];
}
bool sp_layout_equal(const sp_layout *x, const sp_layout *y);
/* Product of the sizes of dim d's axes / of every axis. */
int64_t sp_layout_dim_shards(const sp_layout *l, const sp_mesh *mesh, int d);
int64_t sp_layout_shards(const sp_layout *l, const sp_mesh *mesh);
/* Whether some axis of the layout is (part of) mesh axis `axis`. */
bool sp_layout_uses_axis(const sp_layout *l, int axis);
/* [{"data"}, {}, {"model"}] */
void sp_layout_print(sp_strbuf *sb, const sp_layout *l, const sp_mesh *mesh);

/* ------------------------------------------------------------------ the model */

typedef struct sp_cost_model {
  const sp_cluster *cluster;
  const sp_mesh *mesh;
  int device0;          /* the cluster device of mesh coordinate 0 (its type prices compute) */
  sp_axis_cost axis[SP_MAX_MESH_AXES_CLUSTER];
  double memory_bytes;  /* of device0 */
} sp_cost_model;

/* Places `mesh` on `c` (device_of: see sp_cluster_axis_costs; NULL = the mesh's device ids or
 * the identity) and reads the per-axis link costs. SP_EINVAL when the mesh does not fit the
 * cluster or has more than SP_MAX_MESH_AXES_CLUSTER axes. */
int sp_cost_model_init(sp_cost_model *cm, const sp_cluster *c, const sp_mesh *mesh,
                       const int64_t *device_of, sp_err *err);

/* One collective over a group of mesh axes. */
typedef struct sp_collective {
  sp_collective_kind kind;
  int naxes;
  sp_ft_axis axes[SP_MAX_MESH_AXES_CLUSTER];
  int64_t n;            /* devices in one group */
  double bytes;         /* B */
  double seconds;
} sp_collective;

/* Prices a collective of kind `k` over `axes` (naxes >= 0; none costs nothing) moving B =
 * `bytes`; fills `out` (may be NULL) and returns the seconds. */
double sp_cost_collective(const sp_cost_model *cm, sp_collective_kind k, const sp_ft_axis *axes,
                          int naxes, double bytes, sp_collective *out);

/* Seconds for `flops` split over `devices` on the mesh's device type for element type
 * `dtype` (0 when the device lists no rate). */
double sp_cost_compute(const sp_cost_model *cm, double flops, int64_t devices, const char *dtype);

/* Bytes of the whole tensor (elements x element bits / 8; unknown element types count 4 bytes;
 * 0 for anything that is not a static tensor). */
double sp_cost_tensor_bytes(const sp_type *type);
/* Bytes one device holds of a tensor of `type` laid out as `l`. */
double sp_cost_local_bytes(const sp_cost_model *cm, const sp_type *type, const sp_layout *l);

/* Resharding `from` -> `to` of a tensor of `type` (see the top comment). */
typedef struct sp_reshard {
  int nsteps;
  sp_collective steps[2];   /* an all-to-all and/or an all-gather, in that order */
  double seconds;           /* their sum */
} sp_reshard;

int sp_cost_reshard(const sp_cost_model *cm, const sp_type *type, const sp_layout *from,
                    const sp_layout *to, sp_reshard *out);

#endif /* SP_SEARCH_COST_MODEL_H */
