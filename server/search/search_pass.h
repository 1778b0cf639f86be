/*
 * search_pass.h - the pass `-shardplan-search="cluster=FILE ..."` of shardplan-opt: parses its
 * options, loads the cluster and runs the placement search (placement.h), which plans the
 * module with sp_plan_search_module.
 *
 * Options (space separated): cluster=FILE (required), mesh=NAME, time-limit=SECONDS (for the
 * whole pass; the trials share it), gap=FRACTION, work-limit=N, seed=N,
 * devices=ID,ID,... (mesh coordinate order; fixes the placement), placement=auto|given (auto,
 * the default, maps ranks by traffic when the mesh has no device ids and devices= is absent),
 * mesh-shape=auto|given (auto tries every factorisation of the mesh's device count; given is
 * the default), num-devices=N (factorise N devices instead of the mesh's count; implies
 * mesh-shape=auto), mesh-axes=A,B,... (a module without an sdy.mesh gets `@mesh` with these
 * axes over num-devices, default every device of the cluster, and its shape is searched; the
 * mesh is taken out again if the pass fails), state=ARG:RESULT,..., max-strategies=N, mem-weight=UNITS, memory-limit=BYTES,
 * coarsen=true|false, reduce-scatter=true|false, share-layers=true|false, report=FILE
 * (returned in out->report_path; nothing is written here).
 *
 * Errors: SP_EINVAL naming the option for bad options, the cluster file's errors prefixed
 * with the pass name, and the search's.
 */
#ifndef SP_SEARCH_SEARCH_PASS_H
#define SP_SEARCH_SEARCH_PASS_H

#include "ir/err.h"
#include "ir/ir.h"
#include "search/plan_search.h"

int sp_search_pass(sp_module *m, const char *options, sp_plan_summary *out, sp_err *err);

/* What a caller that has the request in structured form sets over the option text: the
 * cluster itself (then cluster= is not needed and is ignored), and any of the time limit,
 * gap, placement and mesh-shape choices (negative = the text's, or the default). */
typedef struct sp_search_overrides {
  const sp_cluster *cluster;  /* not owned; NULL: load cluster=FILE */
  double time_limit;          /* seconds */
  double gap;
  int placement;              /* 1 auto, 0 given */
  int mesh_shape;             /* 1 auto, 0 given */
  double default_time_limit;  /* the time limit when neither the text nor time_limit gives
                                 one (0: none, the search is bounded by work); < 0: the
                                 search's own default */
  int nincumbent;             /* a warm start (sp_plan_search_opts.incumbent); 0: none */
  const int *incumbent;
  /* Snapshots of the best plan so far (placement.h: sp_placement_opts.on_snapshot); NULL:
   * none. */
  void (*on_snapshot)(void *ctx, sp_search_snapshot *snap, const sp_err *err);
  void *snapshot_ctx;
} sp_search_overrides;

/* Nothing overridden. */
void sp_search_overrides_init(sp_search_overrides *ov);
/* sp_search_pass with `ov` (may be NULL) applied after the options are parsed. */
int sp_search_pass_with(sp_module *m, const char *options, const sp_search_overrides *ov,
                        sp_plan_summary *out, sp_err *err);

#endif /* SP_SEARCH_SEARCH_PASS_H */
