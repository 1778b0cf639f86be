/*
 * reshard_layout.h - the order of collectives that moves a tensor from one sharding to another
 * on the same mesh axes: Shardy's CollectiveInserter, as a planner over axis pieces.
 *
 * Both shardings are cut into pieces (sub-axes split wherever either side has a boundary, and
 * further where a size must be matched), so that two pieces are either equal or disjoint. The
 * planner keeps the current layout (pieces per dim, major first) and the target's, and reports
 * each collective through a callback, with the layout it reaches. In order:
 *   1. all_slice (at most one): a missing target piece is sliced on the source dim of the
 *      all_to_all that will carry it when it follows that dim's last piece in the target (and
 *      the source dim keeps its own target prefix, the target dim holds a target prefix, the
 *      tensor dim has room); otherwise each dim grows towards its target size (factor
 *      target / gcd(current, target)), first with its own missing pieces (major parts when only
 *      a part fits), then with others'.
 *   2. collective_permute: each dim keeps its size; it gets the longest prefix of its target
 *      whose size divides its size (pieces brought in by swapping with a piece of the same
 *      size, several smaller ones, or a part of a bigger one: the major part, the minor one in
 *      a dim the slice grew); the rest of each target dim is assigned to source dims (where
 *      the pieces are when that is one run per source dim, else in dim order by room) and
 *      placed after the pieces that stay (leftovers, in their order), grouped by target dim.
 *      Emitted when the layout changes, or always when `force_permute` (device order changes).
 *   3. all_to_all: while a source dim ends with the pieces its target dim needs next.
 *   4. all_gather: the trailing pieces no target dim has.
 *   Then steps 2-4 repeat (with an all_to_all into a dim that is not a target prefix when
 *   nothing else moves) until the target is reached; a final all_gather + all_slice covers
 *   what is left.
 *
 * Memory: the planner allocates its scratch with malloc and frees it; callbacks get views that
 * live until they return.
 */
#ifndef SP_EXPORT_RESHARD_LAYOUT_H
#define SP_EXPORT_RESHARD_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

#define SP_RL_MAX_PIECES 64

typedef enum { SP_RL_ALL_SLICE, SP_RL_PERMUTE, SP_RL_ALL_TO_ALL, SP_RL_ALL_GATHER } sp_rl_kind;

/* One dim's pieces, major first (adjacent parts of one axis are not merged). */
typedef struct sp_rl_dim {
  int n;
  sp_axis_ref v[SP_RL_MAX_PIECES];
} sp_rl_dim;

/* One collective: the layout after it (rank dims); for all_slice / all_gather `axes` holds the
 * sliced / gathered pieces per dim (rank dims); for all_to_all `axes[0]` holds the moved
 * pieces, from `src` to `tgt`. */
typedef struct sp_rl_step {
  sp_rl_kind kind;
  const sp_rl_dim *after;
  const sp_rl_dim *axes;
  int src, tgt;
} sp_rl_step;

typedef int (*sp_rl_emit_fn)(void *ctx, const sp_rl_step *step);

/* Plans from `from` to `to` (NULL: unsharded) over `mesh`, `rank` dims; `shape` the tensor's
 * dim sizes (NULL: unknown, every size has room). Calls `emit` per collective in order and
 * stops at its first non-zero return, which it returns. SP_EUNSUPPORTED when a sharding has
 * more pieces than the planner holds or an axis the mesh lacks, SP_ENOMEM. */
int sp_rl_plan(const sp_mesh *mesh, const sp_sharding *from, const sp_sharding *to, int rank,
               const int64_t *shape, bool force_permute, sp_rl_emit_fn emit, void *ctx);

#endif /* SP_EXPORT_RESHARD_LAYOUT_H */
