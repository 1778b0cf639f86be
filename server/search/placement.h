/*
 * placement.h - where a plan runs: the mesh's device placement and, on request, its shape,
 * chosen by planning each candidate and keeping the cheapest.
 *
 * Rank mapping (auto_devices): a mesh without device ids, and no placement from the caller,
 * is first planned on the devices 0..N-1 in mesh order. The plan's per-axis traffic (bytes a
 * device sends over each axis' groups, sp_plan_summary.axis_traffic) then orders the axes:
 * the heaviest varies fastest in physical order, so it stays inside a machine when it fits
 * (sp_cluster_map_ranks). When that placement prices the axes differently, the module is
 * planned again on it; this repeats until the mapping stops changing (at most max_rounds
 * plans). The cheapest plan wins; a placement other than 0..N-1 in order is written into the
 * mesh as its device_ids, so the printed module carries it.
 *
 * Shape search (auto_shape): every ordered factorisation of the mesh's device count (or of
 * num_devices) over its axes (factors >= 1, axis names kept) is planned, each with rank mapping when that is on. A
 * shape under which a given sharding does not divide its dimension, or nothing fits the
 * memory, is recorded with the reason and skipped. The winner's sizes replace the mesh's.
 *
 * Every configuration planned is a trial in the summary (sp_plan_trial), in order, with the
 * chosen one marked. Trials share the time limit: each gets the time left divided by the
 * trials still planned. When the deadline leaves configurations unplanned, the best plan so
 * far is cut short; before any plan priced with the cluster's links exists, the cheapest
 * probe's plan (rank mapping plans a shape first with uniform links) stands in, priced with
 * the links of its placement.
 *
 * The plan's bound and gap are over every configuration: the least bound among those planned
 * with the cluster's links. It is unknown (gap 1, no bound) when configurations were left out,
 * when one ended without a plan and without proof that it has none, or for a probe's plan; a
 * plan proven optimal under its own configuration is "optimal" only when no other
 * configuration's bound lies below it.
 *
 * Shardings are immutable (sharding.h), so trying a configuration and undoing it swaps
 * pointers: the main function's values and result shardings are saved before and restored
 * between trials; the winner's are installed at the end. Meshes and trial records live in
 * the module's arena.
 */
#ifndef SP_SEARCH_PLACEMENT_H
#define SP_SEARCH_PLACEMENT_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "search/plan_search.h"

typedef struct sp_placement_opts {
  bool auto_devices;  /* rank mapping, when the mesh has no device ids and the search options
                         give no device_of */
  bool auto_shape;    /* try every factorisation of the mesh's device count */
  int64_t num_devices;/* auto_shape: factorise this count instead (0: the mesh's) */
  int max_rounds;     /* plans per shape with rank mapping; 0: 3 */
  /* Snapshots: the best plan so far, handed out while the search goes on, once the module's
   * ctl says one is due (ir/run_ctl.h snapshot_at_us). Called on the searching thread with a
   * planned copy of the module (plan_search.h: sp_search_snapshot; the callee may change the
   * copy and its summary, which are freed after the call), or with NULL and the reason when
   * none could be made. The plan is the cheapest priced with the cluster's links, else the
   * cheapest probe's (see the top comment); status "timeout". NULL: none. */
  void (*on_snapshot)(void *ctx, sp_search_snapshot *snap, const sp_err *err);
  void *snapshot_ctx;
} sp_placement_opts;

/* auto_devices on, auto_shape off. */
void sp_placement_opts_init(sp_placement_opts *po);

/* Plans `m` with the search options `o` over the configurations `po` allows (see the top
 * comment) and writes the cheapest plan into `m`. Errors are sp_plan_search_module's; when
 * every shape fails, the error names each shape's reason. */
int sp_placement_search(sp_module *m, const sp_plan_search_opts *o, const sp_placement_opts *po,
                        sp_plan_summary *out, sp_err *err);

#endif /* SP_SEARCH_PLACEMENT_H */
