/*
 * sharding_walk.h - visiting every place of a module that holds a sharding, and the small
 * sharding edits the import/export passes share.
 *
 * A "slot" is a `sp_sharding *` stored somewhere in the IR: a func argument (its entry block
 * argument) or declaration argument attribute, a func result, an op result (this covers
 * `sdy.sharding` lists, sharding_constraint / reshard / data_flow_edge / collective shardings and
 * the out_shardings of manual and named computations), a block argument of a nested region,
 * and attributes of kind SHARDING or SHARDINGS (in_shardings, the `sdy.sharding` of a result-less
 * op). The walk visits them in pre-order (an op's slots before those nested in its regions;
 * a func's arguments and results before its body). A callback may store a new sharding into
 * the slot (never edit the pointed-to sharding in place: shardings may be shared, see
 * sharding.h). NULL slots (no sharding) are skipped.
 *
 * Memory: new shardings come from the module's arena.
 */
#ifndef SP_SHARDING_WALK_H
#define SP_SHARDING_WALK_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

typedef struct sp_sharding_slot {
  sp_sharding **slot;     /* never NULL; *slot is never NULL when the callback runs */
  const sp_type *type;    /* the value's type, NULL when unknown (result-less op lists) */
  sp_op *op;              /* the op that holds the slot (the func.func for args/results) */
  sp_value *value;        /* the value it describes, NULL for func results and attributes */
} sp_sharding_slot;

typedef int (*sp_sharding_slot_fn)(sp_module *m, const sp_sharding_slot *s, void *ctx,
                                   sp_err *err);

/* Calls `fn` on every non-NULL slot of the module; stops at the first error. */
int sp_sharding_walk(sp_module *m, sp_sharding_slot_fn fn, void *ctx, sp_err *err);

/* The mesh a sharding names (inline or by symbol), NULL if unknown. */
const sp_mesh *sp_sharding_mesh(const sp_module *m, const sp_sharding *s);

/* Whether two shardings name the same mesh: the same symbol, or equal meshes (inline or
 * looked up). */
bool sp_sharding_same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b);

/* Same axes in every dim, in order (meshes, open/closed, priorities, replicated and unreduced
 * axes are ignored). */
bool sp_sharding_same_dim_axes(const sp_sharding *a, const sp_sharding *b);

/* Size of the mesh axis a reference names (0 if unknown). */
int64_t sp_sharding_axis_size(const sp_mesh *mesh, const sp_axis_ref *r);

/* Product of the sizes of `n` axis references. */
int64_t sp_sharding_axes_product(const sp_mesh *mesh, const sp_axis_ref *v, int n);

/* A fully open sharding without axes of `rank` dims on the mesh `like` refers to (its name or
 * inline mesh). */
sp_sharding *sp_sharding_open_like(sp_arena *a, const sp_sharding *like, int rank);

/* Rank of a value type for shardings: tensor rank, 0 for tokens and other non-tensor types,
 * -1 for unranked tensors and tuples. */
int sp_sharding_rank_of(const sp_type *t);

/* Sorts `v` (n refs) in mesh order (sp_axis_compare); insertion sort, lists are short. */
void sp_sharding_sort_axes(sp_axis_ref *v, int n, const sp_mesh *mesh);

/* True if some dim, the replicated or the unreduced list of `s` uses axis `name` (whole or
 * part). */
bool sp_sharding_uses_axis_name(const sp_sharding *s, const char *name);

/* Whether x and y place data alike: same mesh, same axes in each dim, same unreduced axes
 * (open/closed, priorities and replicated lists are ignored). NULL means no axes at all. */
bool sp_sharding_same_axes(const sp_sharding *x, const sp_sharding *y);

#endif /* SP_SHARDING_WALK_H */
