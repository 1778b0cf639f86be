/*
 * sharding_groups.h - Shardy's sharding-group import and removal.
 *
 * `sdy.sharding_group %v group_id=N` puts %v in group N: all members of a group end with one
 * sharding (propagation keeps them in sync). Import normalises the groups:
 *   - groups that share a value are one group (union-find over the ids);
 *   - the merged groups are renumbered 0, 1, ... in the order their first sharding_group op
 *     appears (pre-order), and every op gets its group's new id;
 *   - a value that is in one group twice keeps only its first sharding_group op;
 *   - it is an error for a group to mix values of different shapes, or values whose nearest
 *     enclosing sdy.manual_computation differs ("cannot cross ManualComputationOp
 *     boundaries").
 * After the normalisation import syncs each group's initial shardings (sp_sharding_groups_sync,
 * which the propagation pass prologue runs too, propagate.h): members without a sharding or
 * with a fully open, empty one are ignored; if the others agree, every member gets that
 * sharding; if they differ, a warning ("The initial operand shardings on the sharding groups
 * of groupID: N do not match. ...") and a fully open sdy.sharding_constraint after every
 * member, which takes over all the member's uses, the group op included (Shardy's
 * replaceAllUsesExcept: later ops and the group see the constraint).
 * Removal (export) erases every sdy.sharding_group op.
 *
 * Memory: scratch tables malloc'd and freed; the module is edited in place.
 */
#ifndef SP_SHARDING_GROUPS_H
#define SP_SHARDING_GROUPS_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

int sp_sharding_groups_import(sp_module *m, sp_err *err);
/* The initial sync of the groups of the sdy.sharding_group ops ops[0..n) (pre-order, one
 * operand each), group by group in the order their first op appears; a member's sharding is
 * read and written where propagation keeps it (sp_propagate_slot). *inserted is set when
 * constraints were added (then ops were inserted into the module). */
int sp_sharding_groups_sync(sp_module *m, sp_op **ops, int n, bool *inserted, sp_err *err);
int sp_sharding_groups_remove(sp_module *m, sp_err *err);

#endif /* SP_SHARDING_GROUPS_H */
