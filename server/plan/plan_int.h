/*
 * plan_int.h - shared by the files of the plan stage only (not part of its interface).
 */
#ifndef SP_PLAN_PLAN_INT_H
#define SP_PLAN_PLAN_INT_H

#include "ir/ptr_map.h"
#include "plan/plan.h"
#include "search/plan_search.h"

/* An empty plan with its own arena; NULL on out-of-memory. */
sp_plan *sp__plan_new(void);
/* Gives every op of `m` not yet in `map` the next number (pre-order, module op excluded). */
int sp__plan_number_ops(sp_module *m, sp_ptr_map *map, int *next, sp_err *err);
/* sp_plan_from_module with the op numbers taken before the passes (NULL: numbered now); ops
 * without one are numbered from `next` on (-1: after those in `numbers`). */
int sp__plan_build(sp_module *m, sp_ptr_map *numbers, int next, cJSON *report,
                   const sp_plan_summary *summary, sp_plan **out, sp_err *err);

/* plan_snapshot.c: what finishing a snapshot of the search needs from the run (plan.c). */
struct sp_prop_report;
struct sp_conflict_log;
typedef struct sp__plan_snapshots {
  const sp_plan_options *o;      /* the host's snapshot_at_us and on_snapshot */
  sp_module *m;                  /* the module planned (its warnings and latches so far) */
  sp_ptr_map *numbers;           /* its op numbers, and the next one to give */
  int next;
  struct sp_prop_report *rep;    /* NULL without tables */
  const struct sp_conflict_log *log;
  bool close_after;              /* the run closes every sharding after the search */
} sp__plan_snapshots;

/* The search's snapshot hook (search/placement.h: sp_placement_opts.on_snapshot; ctx an
 * sp__plan_snapshots): finishes the planned copy into a plan for the host's on_snapshot. */
void sp__plan_snapshot(void *ctx, sp_search_snapshot *snap, const sp_err *why);

#endif /* SP_PLAN_PLAN_INT_H */
