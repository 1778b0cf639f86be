/*
 * export_pipeline.c - -sdy-export-pipeline (see export_pipeline.h).
 */
#include "export/export_pipeline.h"

#include <string.h>

#include "propagation/call_graph.h"
#include "export/debug_info.h"
#include "export/explicit_reshards.h"
#include "export/export_passes.h"
#include "export/meshes.h"
#include "export/remove_ag_rs_cmv1.h"
#include "export/reshard_to_collectives.h"
#include "propagation/canonicalize.h"
#include "propagation/constants.h"
#include "propagation/data_flow_edges.h"
#include "propagation/export_shardings.h"
#include "propagation/func_calls.h"
#include "propagation/mesh_import.h"
#include "propagation/pipeline.h"
#include "propagation/propagate.h"
#include "propagation/sharding_constraints.h"
#include "propagation/sharding_groups.h"

static const char PASS[] = "sdy-export-pipeline";

int sp_export_parse_options(const char *text, sp_export_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  static const char *const keys[] = {"enable-insert-explicit-collectives",
                                     "remove-all-gather-reduce-scatter-for-cmv1",
                                     "dedup-functions-fully", "keep-sharding-rules",
                                     "avoid-export-for-partitioning"};
  bool *outs[] = {&out->explicit_collectives, &out->remove_ag_rs_cmv1,
                  &out->dedup_functions_fully, &out->keep_sharding_rules,
                  &out->avoid_export_for_partitioning};
  return sp_options_parse_bools(PASS, text, keys, outs, 5, err);
}

/* A reshard whose operand is another reshard used only by it reads that reshard's operand
 * (as Shardy's canonicalizer folds reshard-of-reshard); the inner one goes. */
static bool fold_reshard_of_reshard(sp_op *op, void *ctx) {
  (void)ctx;
  if (op->kind != SP_OP_SDY_RESHARD) return true;
  sp_value *in = op->operands[0].value;
  sp_op *inner = in->def;
  if (!inner || inner->kind != SP_OP_SDY_RESHARD || sp_value_num_uses(in) != 1) return true;
  sp_op_set_operand(op, 0, inner->operands[0].value);
  sp_op_erase(inner);
  return true;
}

int sp_export_explicit_collectives(sp_module *m, sp_err *err) {
  int rc = sp_export_insert_explicit_reshards_full(m, err);
  if (rc) return rc;
  sp_op_walk(m->op, fold_reshard_of_reshard, NULL);
  return sp_export_reshard_to_collectives(m, false, err);
}

int sp_export_propagation_pipeline_pass(sp_module *m, const char *options, sp_err *err) {
  sp_pipeline_options o;
  int rc = sp_pipeline_parse_options(options, &o, err);
  if (rc) return rc;
  o.explicit_reshards = sp_export_explicit_collectives;
  return sp_pipeline_run(m, &o, err);
}

#define STEP(call)                 \
  do {                             \
    if ((rc = (call))) return rc;  \
  } while (0)

int sp_export_pipeline_run(sp_module *m, const sp_export_options *o, sp_err *err) {
  int rc;
  STEP(sp_sharding_groups_remove(m, err));
  STEP(sp_sharding_constraints_to_reshard(m, err));
  STEP(sp_data_flow_edges_sink(m, err));
  STEP(sp_call_graph_export_named(m, err));
  STEP(sp_call_graph_unflatten(m, o->dedup_functions_fully, err));
  STEP(sp_symbol_dce(m, err));
  STEP(sp_export_update_non_divisible(m, err));
  STEP(sp_export_remove_sub_axes_in_main(m, err));
  STEP(sp_export_close_shardings(m, err));
  STEP(sp_constants_merge(m, err));
  if (o->avoid_export_for_partitioning) {
    /* no reshards or collectives */
  } else if (o->explicit_collectives) {
    STEP(sp_export_explicit_collectives(m, err));
    STEP(sp_canonicalize(m, err)); /* collectives fused: all_reduce + all_slice, all_to_alls */
    if (o->remove_ag_rs_cmv1) STEP(sp_export_remove_ag_rs_cmv1(m, err));
  } else {
    STEP(sp_export_insert_explicit_reshards_default(m, err));
  }
  STEP(sp_func_calls_insert_reshards(m, err));
  STEP(sp_canonicalize_collectives(m, err));
  if (!o->keep_sharding_rules) sp_propagate_drop_rules(m);
  STEP(sp_export_inline_meshes(m, err));
  STEP(sp_export_remove_debug_info(m, err));
  STEP(sp_symbol_dce(m, err));
  return SP_OK;
}

#undef STEP

int sp_export_pipeline_pass(sp_module *m, const char *options, sp_err *err) {
  sp_export_options o;
  int rc = sp_export_parse_options(options, &o, err);
  return rc ? rc : sp_export_pipeline_run(m, &o, err);
}
