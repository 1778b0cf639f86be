/*
 * op_priority.h - Shardy's op-priority propagation (-sdy-op-priority-propagate).
 *
 * Five rounds p = 0..4, each a full fixed point of the configured strategy (aggressive by
 * default) in which the direction of every factor of every op is the union of the schedule
 * below over rounds 0..p, intersected with the caller's direction (BOTH when the caller gives
 * none):
 *   round 0: pass-through ops (element-wise, reshape, transpose, sharding constraints,
 *            reshards, barriers, data-flow edges, MoveToHost/MoveToDevice): BOTH unless some
 *            non-scalar operand has more than one use (then NONE); dynamic_slice and
 *            dynamic_update_slice: FORWARD under the same condition; others NONE;
 *   round 1: the same, ignoring uses;
 *   round 2: every op BOTH, but NONE along the factors of a rule that are not pass-through,
 *            and BACKWARD for broadcast_in_dim;
 *   round 3: BACKWARD for broadcast_in_dim, BOTH for everything else;
 *   round 4: BOTH.
 * With o->skip_op_priority the rounds are skipped and one plain fixed point runs.
 *
 * Memory: as sp_propagate_module (propagate.h).
 */
#ifndef SP_OP_PRIORITY_H
#define SP_OP_PRIORITY_H

#include "ir/err.h"
#include "ir/ir.h"
#include "propagation/propagate.h"

#define SP_OP_PRIORITY_ROUNDS 5

/* The direction op-priority round `round` (0..4) gives to each factor of `op` (union over the
 * rounds up to it), into out[0..rule->nfactors-1]. */
void sp_op_priority_directions(const sp_op *op, const sp_rule *rule, int round,
                               sp_prop_direction *out);

/* Runs the rounds on `m` (or one fixed point with o->skip_op_priority). A direction callback
 * in `o` is intersected with each round's. `stats` (may be NULL) sums over the rounds. */
int sp_op_priority_propagate(sp_module *m, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err);

/* One strategy level to a fixed point: o->strategy, or basic then aggressive when
 * o->basic_then_aggressive. */
int sp_propagate_strategy(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                          sp_err *err);

/* The same two within a pass's session (propagate.h), which keeps the numbering and rules
 * between rounds; `m` is the session's module. */
int sp_propagate_strategy_run(sp_propagate_session *s, const sp_propagate_options *o,
                              sp_propagate_stats *stats, sp_err *err);
int sp_op_priority_run(sp_propagate_session *s, sp_module *m, const sp_propagate_options *o,
                       sp_propagate_stats *stats, sp_err *err);

#endif /* SP_OP_PRIORITY_H */
