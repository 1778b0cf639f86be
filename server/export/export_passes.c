/*
 * export_passes.c - option parsing and the flag table of the export passes (see
 * export_passes.h).
 */
#include "export/export_passes.h"

#include <string.h>

#include "propagation/call_graph.h"
#include "export/debug_info.h"
#include "export/explicit_reshards.h"
#include "export/permutation_factors.h"
#include "export/export_pipeline.h"
#include "export/func_edges.h"
#include "export/meshes.h"
#include "export/remove_ag_rs_cmv1.h"
#include "export/reshard_to_collectives.h"
#include "export/resolve_single_device.h"
#include "export/verify_unreduced.h"
#include "ir/pass_options.h"
#include "propagation/constants.h"
#include "propagation/export_shardings.h"
#include "propagation/func_calls.h"
#include "propagation/propagate.h"
#include "propagation/sharding_constraints.h"
#include "propagation/sharding_groups.h"


static int drop_rules(sp_module *m, sp_err *err) {
  (void)err;
  sp_propagate_drop_rules(m);
  return SP_OK;
}

SP_NO_OPTION_PASS(pass_remove_debug_info, "sdy-remove-propagation-debug-info", sp_export_remove_debug_info)
SP_NO_OPTION_PASS(pass_drop_rules, "sdy-drop-sharding-rules", drop_rules)
SP_NO_OPTION_PASS(pass_remove_groups, "sdy-remove-sharding-groups", sp_sharding_groups_remove)
SP_NO_OPTION_PASS(pass_constraint_to_reshard, "sdy-sharding-constraint-to-reshard", sp_sharding_constraints_to_reshard)
SP_NO_OPTION_PASS(pass_constant_merger, "sdy-constant-or-scalar-merger", sp_constants_merge)
SP_NO_OPTION_PASS(pass_drop_sharding_and_mesh, "sdy-drop-sharding-and-mesh", sp_export_drop_sharding_and_mesh)
SP_NO_OPTION_PASS(pass_inline_meshes, "sdy-inline-meshes", sp_export_inline_meshes)
SP_NO_OPTION_PASS(pass_verify_unreduced, "sdy-verify-unreduced-axes", sp_export_verify_unreduced_axes)
SP_NO_OPTION_PASS(pass_export_named, "sdy-export-named-computations", sp_call_graph_export_named)
SP_NO_OPTION_PASS(pass_results_from_returns, "sdy-propagate-to-func-results", sp_func_calls_results_from_returns)
SP_NO_OPTION_PASS(pass_func_call_reshards, "sdy-insert-func-call-reshards", sp_func_calls_insert_reshards)
SP_NO_OPTION_PASS(pass_non_divisible, "sdy-update-non-divisible-input-output-shardings", sp_export_update_non_divisible)
SP_NO_OPTION_PASS(pass_remove_sub_axes, "sdy-remove-sub-axes-in-input-output-shardings", sp_export_remove_sub_axes_in_main)
SP_NO_OPTION_PASS(pass_sink_func_edges, "sdy-sink-func-data-flow-edges", sp_export_sink_func_data_flow_edges)
SP_NO_OPTION_PASS(pass_close, "sdy-close-shardings", sp_export_close_shardings)
SP_NO_OPTION_PASS(pass_resolve_single_device, "sdy-resolve-single-device-sharding", sp_export_resolve_single_device)
SP_NO_OPTION_PASS(pass_remove_ag_rs_cmv1, "sdy-remove-all-gather-reduce-scatter-for-cmv1", sp_export_remove_ag_rs_cmv1)

static int pass_unflatten(sp_module *m, const char *options, sp_err *err) {
  bool fully = false;
  static const char *const keys[] = {"dedup-functions-fully"};
  bool *outs[] = {&fully};
  int rc = sp_options_parse_bools("sdy-unflatten-call-graph", options, keys, outs, 1, err);
  return rc ? rc : sp_call_graph_unflatten(m, fully, err);
}

static int pass_explicit_reshards(sp_module *m, const char *options, sp_err *err) {
  bool full = false;
  static const char *const keys[] = {"enable-full-version"};
  bool *outs[] = {&full};
  int rc = sp_options_parse_bools("sdy-insert-explicit-reshards", options, keys, outs, 1, err);
  if (rc) return rc;
  return full ? sp_export_insert_explicit_reshards_full(m, err) : sp_export_insert_explicit_reshards_default(m, err);
}

static int pass_reshard_to_collectives(sp_module *m, const char *options, sp_err *err) {
  bool keep = false;
  static const char *const keys[] = {"keep-redundant-reshards"};
  bool *outs[] = {&keep};
  int rc = sp_options_parse_bools("sdy-reshard-to-collectives", options, keys, outs, 1, err);
  return rc ? rc : sp_export_reshard_to_collectives(m, keep, err);
}

static int pass_permutation_factors(sp_module *m, const char *options, sp_err *err) {
  bool halo = false;
  static const char *const keys[] = {"enable-halo-exchange"};
  bool *outs[] = {&halo};
  int rc = sp_options_parse_bools("sdy-resolve-permutation-factors", options, keys, outs, 1, err);
  return rc ? rc : sp_export_resolve_permutation_factors(m, halo, err);
}

const sp_pass_info sp_export_passes[] = {
    {"sdy-remove-propagation-debug-info", pass_remove_debug_info, "remove propagation's debugging attributes", NULL},
    {"sdy-drop-sharding-rules", pass_drop_rules, "remove non-custom sdy.sharding_rule attributes", NULL},
    {"sdy-remove-sharding-groups", pass_remove_groups, "erase sdy.sharding_group ops", NULL},
    {"sdy-sharding-constraint-to-reshard", pass_constraint_to_reshard, "turn sharding constraints into reshards", NULL},
    {"sdy-constant-or-scalar-merger", pass_constant_merger, "merge identical constants and scalar broadcasts", NULL},
    {"sdy-drop-sharding-and-mesh", pass_drop_sharding_and_mesh, "remove every sdy.sharding and the meshes", NULL},
    {"sdy-inline-meshes", pass_inline_meshes, "write meshes inline into shardings, erase sdy.mesh ops", NULL},
    {"sdy-verify-unreduced-axes", pass_verify_unreduced, "check unreduced-axis transitions", NULL},
    {"sdy-export-named-computations", pass_export_named, "named computations to private functions and calls", NULL},
    {"sdy-propagate-to-func-results", pass_results_from_returns, "non-main functions take their returned values' shardings", NULL},
    {"sdy-unflatten-call-graph", pass_unflatten, "merge calls to equivalent copies of one function (dedup-functions-fully)", NULL},
    {"sdy-insert-func-call-reshards", pass_func_call_reshards, "reshard call results to the callee's result shardings", NULL},
    {"sdy-update-non-divisible-input-output-shardings", pass_non_divisible, "cut I/O shardings to divisible prefixes", NULL},
    {"sdy-remove-sub-axes-in-input-output-shardings", pass_remove_sub_axes, "cut main's open I/O dims at the first sub-axis", NULL},
    {"sdy-sink-func-data-flow-edges", pass_sink_func_edges, "write func data-flow edge shardings back to arguments and calls", NULL},
    {"sdy-close-shardings", pass_close, "close every sharding, drop replicated lists", NULL},
    {"sdy-insert-explicit-reshards", pass_explicit_reshards, "explicit reshards and all-reduces (enable-full-version)", NULL},
    {"sdy-reshard-to-collectives", pass_reshard_to_collectives, "reshards to all_slice/all_to_all/all_gather/collective_permute (keep-redundant-reshards)", NULL},
    {"sdy-resolve-permutation-factors", pass_permutation_factors, "replicate dims that permutation factors or non-divisible reshapes would move (enable-halo-exchange)", NULL},
    {"sdy-remove-all-gather-reduce-scatter-for-cmv1", pass_remove_ag_rs_cmv1, "drop all-gathers into and reduce-scatters out of dots (collective matmul v1)", NULL},
    {"sdy-resolve-single-device-sharding", pass_resolve_single_device, "run single-device ops under a partition-id guard and all-reduce their results", NULL},
    {"sdy-export-pipeline", sp_export_pipeline_pass, "Shardy's export passes in order (see export/export_pipeline.h for options)", NULL},
    {NULL, NULL, NULL, NULL}};
