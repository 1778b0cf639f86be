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
 * Removal (export) erases every sdy.sharding_group op.
 *
 * Memory: scratch tables malloc'd and freed; the module is edited in place.
 */
#ifndef SP_SHARDING_GROUPS_H
#define SP_SHARDING_GROUPS_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_sharding_groups_import(sp_module *m, sp_err *err);
int sp_sharding_groups_remove(sp_module *m, sp_err *err);

#endif /* SP_SHARDING_GROUPS_H */
