/*
 * user_priority.h - Shardy's user-priority propagation (-sdy-user-priority-propagate), the top
 * of the strategy hierarchy and the propagation step of -sdy-propagation-pipeline.
 *
 * Every sharding in the module (func arguments and results, op results, data-flow edges,
 * constraints, reshards) is read in pre-order. Dimensions with a priority above 0 are hidden
 * for round 0: they become closed and empty, and their axes are added to the tensor's
 * replicated list, so nothing can take them or override them. Round 0 runs op-priority
 * propagation (op_priority.h; or one strategy fixed point when o->skip_op_priority). Then, for
 * each priority p met, in increasing order, the dimensions of priority p get their axes and
 * open/closed state back (without the suffix), those axes leave the replicated list, and
 * op-priority propagation runs again. The output carries no priority suffixes.
 *
 * Memory: as sp_propagate_module (propagate.h); the saved shardings live in a scratch arena
 * freed before returning.
 */
#ifndef SP_USER_PRIORITY_H
#define SP_USER_PRIORITY_H

#include "ir/err.h"
#include "ir/ir.h"
#include "propagation/propagate.h"

/* The whole pass on `m`: sp_propagate_prepare, the rounds, sp_propagate_finish (rules dropped
 * unless o->keep_sharding_rules). Callers set o->strategy = SP_PROP_AGGRESSIVE (Shardy's
 * default) unless told otherwise. Warnings go to m->diags; conflicts to o->conflicts or
 * m->conflicts. `stats` (may be NULL) is reset, then summed over all rounds. */
int sp_user_priority_propagate(sp_module *m, const sp_propagate_options *o,
                               sp_propagate_stats *stats, sp_err *err);

#endif /* SP_USER_PRIORITY_H */
