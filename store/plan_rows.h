/*
 * plan_rows.h - a plan (server/plan) as the rows the plan cache keeps (store/store.h), so a
 * dashboard page reads one page of one table without loading the whole plan.
 *
 * Sections, each row's JSON being the plan's own per-element JSON (plan/plan.h):
 *   "summary"     idx 0: {"searched", "file", "costs", "solver", "mesh", "nwarnings",
 *                 "nvalues", "nops", "ncollectives", "nconflicts"} (costs/solver/mesh only
 *                 when the plan was searched; the counts let a page read rows by idx)
 *   "value"       idx = position in the plan's value list; label = the value's name; its
 *                 "sharding_origins" (Shardy's record of each axis, plan data, always there
 *                 when the plan has them); with "origins", where each axis of its sharding
 *                 came from along which ops (plan/provenance.h, each entry naming Shardy's
 *                 origin next to it), unless built with SP_PLAN_ROWS_NO_ORIGINS
 *   "origin"      (added after the plan is stored, see sp_plan_rows_store_origins) idx =
 *                 the value's position; JSON = its "origins" array
 *   "op"          idx = op number; label = "NAME #N"; the op's factor tables, plus its
 *                 "operands" ({"value", "name", "producer"}), "results" and "users" when the
 *                 plan knows them
 *   "collective"  idx = position; label = "KIND VALUE at OP"
 *   "conflict"    idx = position; label = "OPNAME #N factor F"
 *   "warning"     idx = position; label = the message
 *   "op_cost"     idx = rank, costliest first: {"op", "name", "compute_s", "comm_s" (the op's
 *                 own collectives), "reshard_s" (reshards into its operands)}; label "NAME #N"
 * The daemon stores these with the plan; the dashboard (web/) and `shardplan export` read them.
 *
 * Memory: an sp_plan_rows owns its JSON texts and labels (sp_plan_rows_free); the rows'
 * section names are static strings.
 */
#ifndef SP_STORE_PLAN_ROWS_H
#define SP_STORE_PLAN_ROWS_H

#include <stddef.h>

#include "ir/err.h"
#include "plan/plan.h"
#include "store/store.h"

typedef struct sp_plan_rows {
  sp_store_row *v;
  size_t n, cap;
} sp_plan_rows;

/* Every section above, the value rows with their "origins". */
int sp_plan_rows_build(const sp_plan *p, sp_plan_rows *out, sp_err *err);

/* sp_plan_rows_build without the provenance: value rows have no "origins" key (the daemon
 * stores these before answering, and the origins after; the provenance of a 100k-op plan
 * takes seconds). */
#define SP_PLAN_ROWS_NO_ORIGINS 0x1u
int sp_plan_rows_build_with(const sp_plan *p, unsigned flags, sp_plan_rows *out, sp_err *err);

/* The provenance as rows of section "origin": idx = the value's position, JSON = the
 * "origins" array its value row would have had. */
int sp_plan_rows_origins(const sp_plan *p, sp_plan_rows *out, sp_err *err);

/* Computes the "origin" rows of stored plan `key` and adds them to it (sp_store_add_rows: a
 * plan that has them already is left as it is). `p` is the plan, or NULL to read it from the
 * plan's "plan" row (the whole plan's JSON the daemon keeps). SP_ENOTFOUND when the plan or
 * its "plan" row is not there. */
int sp_plan_rows_store_origins(sp_store *s, const char *key, const sp_plan *p, sp_err *err);

void sp_plan_rows_free(sp_plan_rows *r);

#endif /* SP_STORE_PLAN_ROWS_H */
