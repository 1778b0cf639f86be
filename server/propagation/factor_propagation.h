/*
 * factor_propagation.h - propagation of sharding axes through one op, along its factors.
 *
 * Input: the op's factor table (factor_projection.h), a direction per factor, the strategy,
 * the conservative flag and whether the op is element-wise. Output: the same table with
 * cells expanded, plus conflict records. Nothing else is read or written, so the function
 * is deterministic and the caller can keep a copy of the table as "before".
 *
 * Basic strategy, for each factor in index order:
 *   (a) the compatible major axes: fold the tensors' axes along the factor, the "leading"
 *       side first (operands for BOTH/FORWARD, results for BACKWARD), keeping the longest
 *       list every tensor agrees with; the other side may only shorten it unless the
 *       direction is BOTH. An empty list never blocks; a tensor without the factor is
 *       skipped.
 *   (b) cuts: walking the candidate major first, an axis is cut back (or dropped, with all
 *       after it) where a tensor already uses it for another factor (overflow axes count),
 *       has it replicated or unreduced, is closed without holding it, or cannot divide a
 *       factor that is not minor-most; in conservative mode the walk stops at a sub-axis.
 *   (c) expansion: every tensor whose axes are a strict prefix of the candidate takes it.
 *       Closed cells therefore never change.
 * Aggressive strategy: the candidates of every factor are computed as in (a) without cuts;
 * each factor's source is the largest tensor (product of its factor sizes) whose axes hold
 * the candidate; factors are ordered by source size (then, for element-wise ops, by the
 * candidate's size), source index, factor index; then results first, then operands, each
 * tensor takes each factor's candidate as far as that tensor alone allows (its own closed,
 * replicated, divisibility limits, then the axes its other factors hold now). For an
 * element-wise op an operand takes no more than the results took.
 * A blocked factor always has direction NONE.
 *
 * Memory: scratch space and grown cells come from the table's arena; conflict records from
 * the log's arena. Returns SP_ENOMEM if an allocation fails (the table may then be partly
 * updated).
 */
#ifndef SP_FACTOR_PROPAGATION_H
#define SP_FACTOR_PROPAGATION_H

#include <stdbool.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/mesh.h"
#include "ir/rule.h"
#include "ir/sharding.h"
#include "propagation/conflict.h"
#include "propagation/factor_projection.h"

/* Bits: FORWARD = operands to results, BACKWARD = results to operands. Union is `|`,
 * intersection `&` (FORWARD & BACKWARD = NONE), as the op-priority rounds need. */
typedef enum sp_prop_direction {
  SP_DIR_NONE = 0,
  SP_DIR_FORWARD = 1,
  SP_DIR_BACKWARD = 2,
  SP_DIR_BOTH = 3
} sp_prop_direction;

typedef enum sp_prop_strategy {
  SP_PROP_BASIC = 0,
  SP_PROP_AGGRESSIVE
} sp_prop_strategy;

typedef struct sp_prop_options {
  sp_prop_strategy strategy;
  bool conservative;      /* never propagate sub-axes */
  bool elementwise;       /* the op is element-wise (aggressive ordering and operand limit) */
  /* Per factor; NULL means BOTH for every factor. Blocked factors are NONE regardless. */
  const sp_prop_direction *directions;
} sp_prop_options;

/* Propagates along every factor of `t`, in place. rows[r].updated tells which rows changed.
 * `o` NULL = basic, not conservative, BOTH everywhere. Conflicts are appended to `log`
 * (may be NULL: no records, no extra work). */
int sp_factor_propagate(sp_factor_table *t, const sp_prop_options *o, sp_conflict_log *log,
                        sp_err *err);

/* Step (a) alone: the compatible major axes along factor `f` in direction `dir`, into `out`
 * (grown from t->arena). *disagree (may be NULL) tells whether some tensors' axes do not
 * extend one another. */
int sp_factor_compatible_axes(const sp_factor_table *t, int f, sp_prop_direction dir,
                              sp_ft_axes *out, bool *disagree);

/* One op from end to end: projects the shardings (NULL = none) onto `rule`, propagates and
 * re-projects. new_operands[i] / new_results[i] get a new sharding (allocated in `a`) for
 * each tensor whose sharding changed, NULL otherwise; a tensor without a sharding that would
 * get one without any axis stays without. `mesh_ref` gives the mesh reference of new
 * shardings (NULL: the first sharding given). Nothing happens on a maximal mesh or when no
 * tensor has a sharding. The table lives in `scratch` (may equal `a`). *nupdated (may be
 * NULL) = number of tensors that changed. */
int sp_factor_propagate_op(sp_arena *a, sp_arena *scratch, const sp_rule *rule,
                           const sp_mesh *mesh, const sp_sharding *mesh_ref,
                           sp_sharding *const *operands, sp_sharding *const *results,
                           const sp_prop_options *o, sp_sharding **new_operands,
                           sp_sharding **new_results, int *nupdated, sp_conflict_log *log,
                           sp_err *err);

#endif /* SP_FACTOR_PROPAGATION_H */
