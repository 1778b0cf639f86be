/*
 * import_passes.c - the import passes' flags and the import pipeline (see import_passes.h).
 */
#include "propagation/import_passes.h"

#include <stddef.h>

#include "ir/pass_options.h"
#include "propagation/canonicalize.h"
#include "propagation/constants.h"
#include "propagation/flatten_call_graph.h"
#include "propagation/func_calls.h"
#include "propagation/gather_scatter_batching.h"
#include "propagation/func_data_flow_edges.h"
#include "propagation/mesh_import.h"
#include "propagation/pipeline.h"
#include "propagation/sharding_groups.h"


SP_NO_OPTION_PASS(pass_lift_meshes, "sdy-lift-inlined-meshes", sp_mesh_lift_inlined)
SP_NO_OPTION_PASS(pass_size_one_axes, "sdy-remove-size-one-axes", sp_mesh_remove_size_one_axes)
SP_NO_OPTION_PASS(pass_manual_cleanup, "sdy-manual-axes-cleanup", sp_mesh_manual_axes_cleanup)
SP_NO_OPTION_PASS(pass_func_to_call, "sdy-propagate-sharding-from-func-to-call",
                  sp_func_calls_shardings_to_calls)

static int pass_import_calls(sp_module *m, const char *options, sp_err *err) {
  bool edges = true;
  static const char *const keys[] = {"add-data-flow-edges-on-named-computations"};
  bool *const outs[] = {&edges};
  int rc = sp_options_parse_bools("sdy-import-func-calls", options, keys, outs, 1, err);
  return rc ? rc : sp_func_calls_import(m, edges, err);
}
SP_NO_OPTION_PASS(pass_func_edges, "sdy-add-func-data-flow-edges", sp_func_data_flow_edges_add)
SP_NO_OPTION_PASS(pass_flatten, "sdy-flatten-call-graph", sp_flatten_call_graph)
SP_NO_OPTION_PASS(pass_batching, "sdy-explicit-gather-scatter-batching", sp_gather_scatter_explicit_batching)
SP_NO_OPTION_PASS(pass_canonicalize, "canonicalize", sp_canonicalize)
SP_NO_OPTION_PASS(pass_pre_order, "sdy-pre-order-funcs", sp_func_calls_pre_order)
SP_NO_OPTION_PASS(pass_splitter, "sdy-constant-or-scalar-splitter", sp_constants_split)
SP_NO_OPTION_PASS(pass_group_import, "sdy-sharding-group-import", sp_sharding_groups_import)

const sp_pass_info sp_import_passes[] = {
    {"sdy-lift-inlined-meshes", pass_lift_meshes, "inline meshes become module meshes (deduplicated)", NULL},
    {"sdy-remove-size-one-axes", pass_size_one_axes, "drop mesh axes of size one from every sharding", NULL},
    {"sdy-manual-axes-cleanup", pass_manual_cleanup, "manual computations' manual axes in mesh order, free axes closed", NULL},
    {"sdy-propagate-sharding-from-func-to-call", pass_func_to_call, "calls take their callee's result shardings", NULL},
    {"sdy-import-func-calls", pass_import_calls, "calls become sdy.named_computation ops", NULL},
    {"sdy-add-func-data-flow-edges", pass_func_edges, "sdy.func_data_flow_edge on non-main function arguments and call results", NULL},
    {"sdy-flatten-call-graph", pass_flatten, "one call site per function (later calls get copies)", NULL},
    {"sdy-explicit-gather-scatter-batching", pass_batching, "batch iotas in gather/scatter indices become explicit batching dims", NULL},
    {"sdy-pre-order-funcs", pass_pre_order, "functions ordered callers before callees", NULL},
    {"sdy-constant-or-scalar-splitter", pass_splitter, "one constant (or scalar broadcast) per use", NULL},
    {"sdy-sharding-group-import", pass_group_import, "merge and check sharding groups", NULL},
    {"canonicalize", pass_canonicalize, "fold and simplify the sdy ops (collectives, manual computations), erase dead pure ops", NULL},
    {"sdy-import-pipeline", sp_pipeline_pass_import, "every import pass in Shardy's order, as -sdy-propagation-pipeline runs them (skip-inline, debug-sharding-origins, debug-propagation-edge-sharding)", NULL},
    {NULL, NULL, NULL, NULL}};
