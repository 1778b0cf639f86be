/*
 * passes.c - the pass registry (see passes.h): one row per pass flag.
 */
#include "plan/passes.h"

#include <string.h>

#include "export/export_passes.h"
#include "export/export_pipeline.h"
#include "plan/exported.h"
#include "propagation/import_passes.h"
#include "propagation/pipeline.h"
#include "propagation/prop_passes.h"
#include "search/search_pass.h"

/* -shardplan-search="cluster=FILE ...": the cost-model search (search/search_pass.h) shards
 * every value; its summary is handed back in ctx. */
static int run_search(sp_module *m, const char *options, sp_pass_ctx *ctx, sp_err *err) {
  sp_pass_ctx local;
  if (!ctx) {
    memset(&local, 0, sizeof local);
    ctx = &local;
  }
  sp_search_overrides ov;
  sp_search_overrides_init(&ov);
  ov.cluster = ctx->cluster;
  ctx->has_summary = false;
  int rc = sp_search_pass_with(m, options, &ov, &ctx->summary, err);
  /* The plan's collectives are the ones the export inserts (plan/exported.h). */
  if (!rc) rc = sp_plan_use_exported_collectives(m, &ctx->summary, err);
  ctx->has_summary = rc == SP_OK;
  return rc;
}

static const sp_pass_info passes[] = {
    {"shardplan-search", NULL,
     "search every open sharding by cost (\"cluster=FILE [time-limit=S] [gap=G] [report=FILE] "
     "...\")", run_search},
    {"sdy-populate-op-sharding-rules", sp_prop_pass_populate_rules, "attach every op's sharding rule (conservative-propagation)", NULL},
    {"sdy-basic-propagate", sp_prop_pass_basic, "basic propagation (conservative-propagation, keep-sharding-rules)", NULL},
    {"sdy-aggressive-propagate", sp_prop_pass_aggressive, "aggressive propagation (+ propagation-strategy=basic|aggressive|basic-then-aggressive)", NULL},
    {"sdy-op-priority-propagate", sp_prop_pass_op_priority, "op-priority propagation (+ run-op-priority-propagation)", NULL},
    {"sdy-user-priority-propagate", sp_prop_pass_user_priority, "user-priority propagation (same options)", NULL},
    {"sdy-propagation-pipeline", sp_export_propagation_pipeline_pass, "import, user-priority propagation and export, as Shardy's pipeline (see propagation/pipeline.h for options; enable-insert-explicit-collectives runs export/export_pipeline.h's explicit collectives)", NULL},
    {"sdy-add-data-flow-edges", sp_pipeline_pass_add_data_flow_edges, "insert sdy.data_flow_edge ops on while/case/optimization_barrier/named and manual computation owners", NULL},
    {"sdy-sink-data-flow-edges", sp_pipeline_pass_sink_data_flow_edges, "write data-flow edge shardings back to their ops and remove the edges (sink-debug-*)", NULL},
    {"sdy-apply-sharding-constraints", sp_pipeline_pass_apply_sharding_constraints, "give sharding_constraint inputs the constraint's closed sharding (debug-*)", NULL},
    {NULL, NULL, NULL, NULL} /* end */
};

#define NPASSES ((int)(sizeof passes / sizeof passes[0]) - 1)

bool sp_pass_at(int i, sp_pass_info *out) {
  if (i < 0) return false;
  if (i < NPASSES) {
    *out = passes[i];
    return true;
  }
  int k = i - NPASSES;
  for (int j = 0; sp_import_passes[j].flag; j++, k--)
    if (k == 0) {
      *out = sp_import_passes[j];
      return true;
    }
  for (int j = 0; sp_export_passes[j].flag; j++, k--)
    if (k == 0) {
      *out = sp_export_passes[j];
      return true;
    }
  return false;
}

bool sp_pass_find(const char *flag, size_t n, sp_pass_info *out) {
  sp_pass_info p;
  for (int i = 0; sp_pass_at(i, &p); i++)
    if (strlen(p.flag) == n && memcmp(p.flag, flag, n) == 0) {
      *out = p;
      return true;
    }
  return false;
}

int sp_pass_run(const sp_pass_info *p, sp_module *m, const char *options, sp_pass_ctx *ctx,
                sp_err *err) {
  if (p->run_ctx) return p->run_ctx(m, options, ctx, err);
  return p->run(m, options, err);
}
