/*
 * cost_model.h - what a sharded program costs on a cluster: compute, collectives, resharding
 * and per-device bytes. The formulas are in docs/cost-model.md.
 *
 * A layout is a tensor's sharding as the search sees it: per dimension the mesh axes (or
 * sub-axes) that split it, major first. A mesh placed on a cluster gets, per axis, the alpha
 * (latency, s) and bandwidth (bytes/s) of the slowest link its groups cross
 * (sp_cluster_axis_costs). Every collective follows an alpha-beta formula (DESIGN.md section
 * 5), with n the devices of one group and B the bytes given per kind:
 *   all-gather          alpha + (n-1)/n   * B / bw   (B: the gathered tensor of one group)
 *   reduce-scatter      alpha + (n-1)/n   * B / bw   (B: the unreduced tensor of one device)
 *   all-reduce          alpha + 2(n-1)/n  * B / bw   (B: the tensor a device reduces)
 *   all-to-all          alpha + (n-1)/n^2 * B / bw   (B: the group's whole tensor, n x a shard)
 *   collective-permute  alpha + B / bw               (B: the shard each device sends)
 *   all-slice           0                            (B = 0: each device keeps a part)
 * A collective over several axes runs as one collective over their product group: n is the
 * product of the sizes, alpha the largest and bw the smallest of the axes' (the group crosses
 * every link those axes cross, so it runs at the slowest one). A sub-axis is priced with the
 * link of its axis. A collective_permute's axes are the mesh axes whose place in the layout
 * changes (sp_collective_shape).
 *
 * Resharding from one layout to another (sp_cost_reshard) is priced as the collectives the
 * export lowers that reshard into (export/reshard_to_collectives.h: all_slice, then
 * collective_permute, all_to_all, all_gather, collective_permute, each when needed), found once
 * per distinct pair of layouts (search/reshard_memo.h): the search prices exactly what the plan
 * will run. A layout with unreduced axes (partial sums) going to one that keeps fewer of them
 * is what Shardy's explicit reshards lower an `sdy.reshard` of an unreduced value into: first
 * `sdy.all_reduce` of the axes no longer unreduced (B: the bytes a device holds in the source
 * layout), then the change of dims as above; when that change starts with an all_slice whose
 * leading axes per dim are exactly the reduced ones, the canonicalizer makes the pair one
 * reduce_scatter (and an all_slice of the rest). A layout that gains unreduced axes is not
 * priced: the search never asks for it (sp_cost_reshard returns SP_COST_NEVER, which the
 * strategy graph forbids).
 *
 * Compute: FLOPs / devices sharing the work / the peak FLOP/s of the mesh's device type for
 * the element type (sp_cluster_device_flops). Element-wise work is priced the same way (the
 * model has no memory-bandwidth term).
 *
 * Memory: plain structs and caller-owned arrays; layouts built here are allocated from the
 * arena passed in. A model owns its reshard memo: sp_cost_model_free releases it. No printing.
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
  SP_COLL_ALL_TO_ALL,
  SP_COLL_ALL_SLICE,
  SP_COLL_COLLECTIVE_PERMUTE
} sp_collective_kind;

/* "all-gather", "reduce-scatter", "all-reduce", "all-to-all", "all-slice",
 * "collective-permute". */
const char *sp_collective_name(sp_collective_kind k);

/* The formula for one group of `n` devices (n <= 1 costs nothing), `bytes` = B as above; NaN
 * for a bandwidth that is not positive (no cluster the reader accepts has one). */
double sp_collective_seconds(sp_collective_kind k, int64_t n, double alpha, double bandwidth,
                             double bytes);

/* ------------------------------------------------------------------ layouts */

typedef struct sp_layout {
  int rank;
  int *start;          /* [rank + 1]: dim d has axes[start[d] .. start[d+1]) */
  sp_ft_axis *axes;    /* [start[rank]], major first within each dim */
  uint32_t unreduced;  /* bit a: the tensor holds partial sums over whole mesh axis a (Shardy's
                          unreduced axes, sum kind); never an axis the dims use */
  uint64_t hash;       /* sp_layout_dims_hash's cache, 0 until asked (a layout's dims never
                          change once built; a copy with other unreduced axes keeps it) */
} sp_layout;

/* The unsharded layout of a rank-`rank` tensor (allocated from `a`; NULL on out-of-memory). */
sp_layout *sp_layout_new_unsharded(sp_arena *a, int rank);
/* A layout from per-dim axis lists: dims[d] holds axes of dim d (copied). */
sp_layout *sp_layout_from_dims(sp_arena *a, int rank, const sp_ft_axes *dims);
/* The layout of sharding `s` (NULL = unsharded) for a tensor of rank `rank`. Errors name
 * the axis that is not in `mesh` or the rank mismatch. */
int sp_layout_from_sharding(sp_arena *a, const sp_sharding *s, int rank, const sp_mesh *mesh,
                            sp_layout **out, sp_err *err);
/* A sharding of `l` on the mesh named `mesh_name`, every dim closed; replicated axes and
 * per-dim priorities are taken from `old` (may be NULL); the unreduced axes are the layout's
 * (mesh order) when it has any, else `old`'s. NULL on out-of-memory. */
sp_sharding *sp_layout_to_sharding(sp_arena *a, const sp_layout *l, const sp_mesh *mesh,
                                   const char *mesh_name, const sp_sharding *old);

static inline int sp_layout_dim_naxes(const sp_layout *l, int d) {
  return l->start[d + 1] - l->start[d];
}
bool sp_layout_equal(const sp_layout *x, const sp_layout *y);
/* A hash of the dims (rank and axes, not the unreduced axes), computed once per layout. */
uint64_t sp_layout_dims_hash(const sp_layout *l);
/* Product of the sizes of dim d's axes / of every axis. */
int64_t sp_layout_dim_shards(const sp_layout *l, const sp_mesh *mesh, int d);
int64_t sp_layout_shards(const sp_layout *l, const sp_mesh *mesh);
/* Whether some axis of the layout is (part of) mesh axis `axis`. */
bool sp_layout_uses_axis(const sp_layout *l, int axis);
/* [{"data"}, {}, {"model"}], then ` unreduced={"x"}` when it has unreduced axes */
void sp_layout_print(sp_strbuf *sb, const sp_layout *l, const sp_mesh *mesh);

/* ------------------------------------------------------------------ the model */

struct sp_reshard_memo;

typedef struct sp_cost_model {
  const sp_cluster *cluster;
  const sp_mesh *mesh;
  int device0;          /* the cluster device of mesh coordinate 0 (its type prices compute) */
  sp_axis_cost axis[SP_MAX_MESH_AXES_CLUSTER];
  double memory_bytes;  /* of device0 */
  bool no_reduce_scatter;  /* the runtime runs a reduce_scatter as the all_reduce it is made of,
                              then each device keeps its part (the cluster's "reduce_scatter":
                              false, or the search's reduce-scatter=false) */
  struct sp_reshard_memo *memo;  /* the lowered layout changes (owned) */
  const sp_type *bytes_type;     /* a cache of the last tensor priced (types never change): */
  double bytes;                  /*   its bytes */
} sp_cost_model;

/* Places `mesh` on `c` (device_of: see sp_cluster_axis_costs; NULL = the mesh's device ids or
 * the identity) and reads the per-axis link costs. SP_EINVAL when the mesh does not fit the
 * cluster or has more than SP_MAX_MESH_AXES_CLUSTER axes, SP_ENOMEM. Free with
 * sp_cost_model_free (also after a failed init). */
int sp_cost_model_init(sp_cost_model *cm, const sp_cluster *c, const sp_mesh *mesh,
                       const int64_t *device_of, sp_err *err);
void sp_cost_model_free(sp_cost_model *cm);

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

/* Bytes of the whole tensor (elements x element bits / 8, at least one byte per element: XLA
 * stores an i1 as a byte; unknown element types count 4 bytes; 0 for anything that is not a
 * static tensor). */
double sp_cost_tensor_bytes(const sp_type *type);
/* Bytes one device holds of a tensor of `type` laid out as `l`. */
double sp_cost_local_bytes(const sp_cost_model *cm, const sp_type *type, const sp_layout *l);

/* One collective apart from the tensor it moves: its kind, axes, and the shards the tensor has
 * before and after it. */
typedef struct sp_reshard_shape {
  sp_collective_kind kind;
  int naxes;
  sp_ft_axis axes[SP_MAX_MESH_AXES_CLUSTER];
  int8_t dim[SP_MAX_MESH_AXES_CLUSTER];  /* the tensor dim of each axis for per-dim collectives
                                            (all_gather, all_slice, reduce_scatter), else -1 */
  int64_t shards_before, shards_after;
} sp_reshard_shape;

/* The shape of the sdy collective op named `op_name` ("sdy.all_gather", "sdy.all_slice",
 * "sdy.all_to_all", "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter") whose
 * axes attribute is `axes` (gathering_axes, slicing_axes, params, reduction_axes,
 * reduce_scatter_axes; NULL for a permute), reading a rank-`rank` tensor sharded `before` and
 * producing it sharded `after` (NULL: unsharded). Scratch layouts come from `scratch` (NULL: an
 * arena of its own, freed before returning). SP_EINVAL naming what is wrong (another op, an
 * axis not in `mesh`). */
int sp_collective_shape(sp_arena *scratch, const sp_mesh *mesh, const char *op_name,
                        const sp_attr *axes, const sp_sharding *before, const sp_sharding *after,
                        int rank, sp_reshard_shape *out, sp_err *err);

/* Prices shape `sh` for a tensor of `type` (B from the bytes a device holds before and after,
 * see the top comment); fills `out` (may be NULL) and returns the seconds. */
double sp_cost_shape(const sp_cost_model *cm, const sp_type *type, const sp_reshard_shape *sh,
                     sp_collective *out);

/* Prices an sdy collective op of a module (sdy.all_gather, ...): its shape from its attribute,
 * operand and result shardings (sp_collective_shape), its bytes from its result type. What the
 * plan reports for the collectives the export inserted. SP_EINVAL for an op that is not one. */
int sp_cost_collective_op(const sp_cost_model *cm, const sp_op *op, sp_collective *out,
                          sp_err *err);

/* Resharding `from` -> `to` of a tensor of `type`: the collectives the export lowers it into
 * (see the top comment), in order. */
#define SP_RESHARD_MAX_STEPS 40
/* The seconds of a change of layout the plan may not make (finite, so that sums of it stay
 * apart from an overflow to infinity); any time at or above it is forbidden. */
#define SP_COST_NEVER 1e300
typedef struct sp_reshard {
  int nsteps;
  sp_collective steps[SP_RESHARD_MAX_STEPS];
  double seconds;           /* their sum */
} sp_reshard;

/* SP_OK; SP_EINVAL for layouts of different ranks; SP_ENOMEM. `to` with an unreduced axis
 * `from` lacks: seconds = SP_COST_NEVER and no steps (see the top comment). So is a change the
 * search cannot record as the export lowers it (more than SP_RESHARD_MAX_STEPS - 2
 * collectives, or one collective over more than SP_MAX_MESH_AXES_CLUSTER axis parts; the
 * export's planner itself lowers every change of layout on a valid mesh, docs/cost-model.md):
 * the plan never makes it, rather than make it priced as something else. */
int sp_cost_reshard(const sp_cost_model *cm, const sp_type *type, const sp_layout *from,
                    const sp_layout *to, sp_reshard *out);

/* The same for an op's own reduction followed by a change of layout, as the export's explicit
 * reshards insert them after an op: `red` (nred axes, sub-axes allowed, mesh order; none: no
 * reduction) all-reduced in `from`'s dims, then `from` -> `to` (dims only; unreduced masks are
 * ignored), the all-reduce fused with a leading all_slice into a reduce_scatter as above.
 * SP_EINVAL for layouts of different ranks or too many axes; SP_ENOMEM. */
int sp_cost_reshard_reducing(const sp_cost_model *cm, const sp_type *type, const sp_ft_axis *red,
                             int nred, const sp_layout *from, const sp_layout *to,
                             sp_reshard *out);

#endif /* SP_SEARCH_COST_MODEL_H */
