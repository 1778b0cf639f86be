/*
 * reshard_to_collectives.h - Shardy's -sdy-reshard-to-collectives: every sdy.reshard becomes
 * the collectives that move its operand's sharding to its own, or goes away when nothing
 * moves.
 *
 * The collectives and their order are Shardy's (all_slice, collective_permute, all_to_all,
 * all_gather, repeated while something moves), planned by export/reshard_layout.h; each
 * collective's out_sharding is the sharding reached after it. A reshard between two
 * replicated shardings, or whose shardings place data alike, is removed (unless
 * keep-redundant-reshards); a reshard to a replicated sharding of another mesh becomes one
 * all_gather (replicated on the operand's mesh); a reshard to a mesh with the same axes in
 * another device order is lowered with a collective_permute that switches the mesh; other
 * reshards across meshes, and reshards that change unreduced axes, are kept. The operand's
 * sharding is read through propagation barriers (the collectives then read the barrier's
 * operand) and, for a while's block argument, from the while's result.
 *
 * Memory: new ops and shardings in the module's arena; scratch lists malloc'd.
 */
#ifndef SP_EXPORT_RESHARD_TO_COLLECTIVES_H
#define SP_EXPORT_RESHARD_TO_COLLECTIVES_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"

int sp_export_reshard_to_collectives(sp_module *m, bool keep_redundant, sp_err *err);

/* One collective of a reshard's lowering, as data: the op it would be ("sdy.all_slice",
 * "sdy.collective_permute", "sdy.all_to_all", "sdy.all_gather"), the sharding it reads and the
 * one it produces, and its axes attribute (slicing_axes, params, gathering_axes; kind 0 for a
 * permute). */
typedef struct sp_reshard_step {
  const char *op;
  const sp_sharding *before, *after;
  sp_attr axes;
} sp_reshard_step;

/* The collectives the pass lowers a reshard from `from` to `to` (NULL: unsharded; both on
 * `mesh`, rank `rank`, no unreduced axes changing) of a tensor of dims `shape` (NULL, or a
 * dim <= 0: room for any slice) into, in order, without creating ops: what the cost search
 * prices. *n = 0 when the reshard is redundant. Shardings and attributes are allocated from
 * `a`. SP_EUNSUPPORTED when the pass would keep the reshard (or it needs more than `cap`
 * steps), SP_ENOMEM. */
int sp_reshard_to_collectives_steps(sp_arena *a, const sp_mesh *mesh, const sp_sharding *from,
                                    const sp_sharding *to, int rank, const int64_t *shape,
                                    sp_reshard_step *steps, int cap, int *n);

#endif /* SP_EXPORT_RESHARD_TO_COLLECTIVES_H */
