/*
 * test_import_passes.c - the import passes written for Shardy's import tests, each on a module
 * of its own: call-graph flattening, func data-flow edges (added and sunk), explicit
 * gather/scatter batching, func-call import (names, attributes, in_shardings, the warning,
 * edges optional), the import pipeline (its steps' order and effect, its options) and the
 * pass table (every flag reachable, options checked).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "pass_test.h"
#include "propagation/canonicalize.h"
#include "propagation/flatten_call_graph.h"
#include "propagation/func_calls.h"
#include "propagation/func_data_flow_edges.h"
#include "propagation/gather_scatter_batching.h"
#include "propagation/import_passes.h"
#include "propagation/mesh_import.h"
#include "propagation/pipeline.h"
#include "test_support.h"

static void assert_has(const char *out, const char *want) {
  ck_assert_msg(strstr(out, want) != NULL, "output lacks '%s':\n%s", want, out);
}

/* ------------------------------------------------------------------ flatten-call-graph */

/* leaf is called from two places, mid from two: every copy gets its own name, in order. */
START_TEST(flattening_copies_each_further_call_site_callees_first) {
  sp_module *m = pt_parse(
      "func.func @entry(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = call @mid(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = call @mid(%0) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  %2 = call @leaf(%1) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %2 : tensor<2xf32>\n"
      "}\n"
      "func.func private @mid(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = call @leaf(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n"
      "func.func private @leaf(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  return %arg0 : tensor<2xf32>\n"
      "}\n");
  pt_run(m, sp_flatten_call_graph);
  char *out = pt_print(m);
  /* mid keeps leaf; entry's second mid is a copy whose leaf is a copy (made first); entry's
   * own leaf call gets a third copy. */
  assert_has(out, "%1 = call @mid_1(%0)");
  assert_has(out, "%2 = call @leaf_2(%1)");
  assert_has(out, "func.func private @leaf_0(%arg0: tensor<2xf32>) -> tensor<2xf32> attributes {sdy.original_func_name = \"leaf\"}");
  assert_has(out, "func.func private @mid_1(%arg0: tensor<2xf32>) -> tensor<2xf32> attributes {sdy.original_func_name = \"mid\"} {\n    %0 = call @leaf_0(%arg0)");
  free(out);
  sp_module_free(m);
}
END_TEST

/* A recursive function has no finite set of copies: an error at the call closing the cycle. */
START_TEST(flattening_a_recursive_call_graph_is_an_error_at_the_call) {
  pt_expect_error("func.func @entry(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  %0 = call @even(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
                  "  return %0 : tensor<2xf32>\n"
                  "}\n"
                  "func.func private @even(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  %0 = call @odd(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
                  "  return %0 : tensor<2xf32>\n"
                  "}\n"
                  "func.func private @odd(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                  "  %0 = call @even(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
                  "  return %0 : tensor<2xf32>\n"
                  "}\n",
                  sp_flatten_call_graph, SP_EUNSUPPORTED,
                  "t.mlir:10:8: recursive call to @even: the call graph cannot be flattened");
}
END_TEST

/* ------------------------------------------------------------------ func data-flow edges */

START_TEST(func_edges_go_on_callee_arguments_and_call_results_and_sink_back) {
  const char *in =
      "sdy.mesh @m = <[\"x\"=2]>\n"
      "func.func @main(%arg0: tensor<4xf32>, %arg1: !stablehlo.token) -> tensor<4xf32> {\n"
      "  %0:2 = call @f(%arg0, %arg1) : (tensor<4xf32>, !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)\n"
      "  return %0#0 : tensor<4xf32>\n"
      "}\n"
      "func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}, %arg1: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {\n"
      "  %0 = stablehlo.abs %arg0 : tensor<4xf32>\n"
      "  return %0, %arg1 : tensor<4xf32>, !stablehlo.token\n"
      "}\n";
  sp_module *m = pt_parse(in);
  pt_run(m, sp_func_data_flow_edges_add);
  char *out = pt_print(m);
  assert_has(out, "%1 = sdy.func_data_flow_edge %0#0 : tensor<4xf32>\n    return %1");
  assert_has(out, "%0 = sdy.func_data_flow_edge %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}]>]>} : tensor<4xf32>\n    %1 = stablehlo.abs %0");
  ck_assert_ptr_null(strstr(out, "func_data_flow_edge %arg1")); /* tokens get none */
  free(out);
  pt_run(m, sp_func_data_flow_edges_sink);
  out = pt_print(m);
  ck_assert_ptr_null(strstr(out, "func_data_flow_edge"));
  assert_has(out, "return %0#0 : tensor<4xf32>");
  free(out);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ gather/scatter batching */

/* A 3-d operand whose dim 1 is indexed by a broadcast iota placed last in the index vector. */
START_TEST(batch_iota_in_gather_indices_becomes_an_explicit_batching_dim) {
  const char *in =
      "func.func @g(%arg0: tensor<2x6x5xf32>, %arg1: tensor<6x1xi32>) -> tensor<6x5xf32> {\n"
      "  %0 = stablehlo.iota dim = 0 : tensor<6xi32>\n"
      "  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>\n"
      "  %2 = stablehlo.concatenate %arg1, %1, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>\n"
      "  %3 = \"stablehlo.gather\"(%arg0, %2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 5>}> : (tensor<2x6x5xf32>, tensor<6x2xi32>) -> tensor<6x5xf32>\n"
      "  return %3 : tensor<6x5xf32>\n"
      "}\n";
  sp_module *m = pt_parse(in);
  pt_run(m, sp_gather_scatter_explicit_batching);
  char *out = pt_print(m);
  assert_has(out, "\"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], operand_batching_dims = [1], start_indices_batching_dims = [0], start_index_map = [0], index_vector_dim = 1>");
  free(out);
  sp_module_free(m);
}
END_TEST

START_TEST(gather_without_a_matching_batch_size_is_left_alone) {
  const char *in =
      "func.func @g(%arg0: tensor<5x6xf32>, %arg1: tensor<6x1xi32>) -> tensor<6x1xf32> {\n"
      "  %0 = stablehlo.iota dim = 0 : tensor<6x1xi32>\n"
      "  %1 = stablehlo.concatenate %0, %arg1, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>\n"
      "  %2 = \"stablehlo.gather\"(%arg0, %1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<5x6xf32>, tensor<6x2xi32>) -> tensor<6x1xf32>\n"
      "  return %2 : tensor<6x1xf32>\n"
      "}\n";
  sp_module *m = pt_parse(in);
  char *before = pt_print(m);
  pt_run(m, sp_gather_scatter_explicit_batching);
  char *after = pt_print(m);
  ck_assert_str_eq(after, before);
  free(before);
  free(after);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ import-func-calls */

static const char *const IMPORT_IN =
    "sdy.mesh @m = <[\"x\"=2]>\n"
    "sdy.mesh @one = <[], device_ids=[3]>\n"
    "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = call @g(%arg0, %arg0) {tag = \"t\"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  %1 = call @g(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %1 : tensor<4xf32>\n"
    "}\n"
    "func.func private @g(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@one, []>}, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}) -> tensor<4xf32> attributes {sdy.original_func_name = \"orig\"} {\n"
    "  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

static int import_without_edges(sp_module *m, sp_err *err) {
  return sp_func_calls_import(m, false, err);
}

START_TEST(imported_calls_keep_their_attributes_and_the_original_name) {
  sp_module *m = pt_parse(IMPORT_IN);
  sp_diag_list diags;
  sp_diag_list_init(&diags);
  m->diags = &diags;
  pt_run(m, import_without_edges);
  char *out = pt_print(m);
  assert_has(out, "sdy.named_computation<\"orig\">(%arg0, %arg0) in_shardings=[<@one, []>, <@m, [{\"x\"}]>]");
  assert_has(out, "} {tag = \"t\"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>");
  ck_assert_ptr_null(strstr(out, "data_flow_edge"));
  ck_assert_ptr_null(strstr(out, "func.func private @g")); /* imported, then erased */
  /* The second call of a sharded function is worth a warning, at that call. */
  ck_assert_int_eq(diags.n, 1);
  ck_assert_int_eq(diags.v[0].loc.line, 5);
  ck_assert_str_eq(diags.v[0].msg, "function @g has multiple call ops, we need to clone the function body for each call");
  free(out);
  sp_diag_list_free(&diags);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ canonicalize */

START_TEST(canonicalize_fuses_reduce_and_slice_and_drops_null_collectives) {
  sp_module *m = pt_parse(
      "sdy.mesh @m = <[\"p\"=2, \"q\"=2, \"r\"=2]>\n"
      "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = sdy.all_gather [{}, {}] %arg0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n"
      "  %1 = sdy.all_reduce min {\"q\", \"p\"} %0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n"
      "  %2 = sdy.all_slice [{\"p\", \"r\"}, {\"q\"}] %1 out_sharding=<@m, [{\"p\", \"r\"}, {\"q\"}]> : tensor<8x8xf32>\n"
      "  %3 = stablehlo.negate %2 : tensor<8x8xf32>\n"
      "  return %2 : tensor<8x8xf32>\n"
      "}\n");
  pt_run(m, sp_canonicalize);
  char *out = pt_print(m);
  assert_has(out, "%0 = sdy.reduce_scatter min [{\"p\"}, {\"q\"}] %arg0 out_sharding=<@m, [{\"p\"}, {\"q\"}]>");
  assert_has(out, "%1 = sdy.all_slice [{\"r\"}, {}] %0 out_sharding=<@m, [{\"p\", \"r\"}, {\"q\"}]>");
  assert_has(out, "return %1");
  ck_assert_ptr_null(strstr(out, "negate")); /* dead and pure */
  ck_assert_ptr_null(strstr(out, "all_gather"));
  free(out);
  sp_module_free(m);
}
END_TEST

START_TEST(canonicalize_inlines_a_manual_computation_over_size_one_axes) {
  sp_module *m = pt_parse(
      "sdy.mesh @m = <[\"one\"=1, \"two\"=2]>\n"
      "func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@m, [{\"two\"}]>, <@m, [{\"two\"}]>] out_shardings=[<@m, [{\"two\"}]>] manual_axes={\"two\"} (%arg2: tensor<2xf32>, %arg3: tensor<2xf32>) {\n"
      "    %1 = sdy.manual_computation(%arg2) in_shardings=[<@m, [{\"one\"}]>] out_shardings=[<@m, [{\"one\"}]>] manual_axes={\"one\"} (%arg4: tensor<2xf32>) {\n"
      "      %2 = stablehlo.abs %arg4 : tensor<2xf32>\n"
      "      sdy.return %2 : tensor<2xf32>\n"
      "    } : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    sdy.return %1 : tensor<2xf32>\n"
      "  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n");
  pt_run(m, sp_canonicalize);
  char *out = pt_print(m);
  /* The outer one keeps its real manual axis but loses the unused operand; the inner one is
   * inlined. */
  assert_has(out, "sdy.manual_computation(%arg0) in_shardings=[<@m, [{\"two\"}]>] out_shardings=[<@m, [{\"two\"}]>] manual_axes={\"two\"} (%arg2: tensor<2xf32>) {\n      %1 = stablehlo.abs %arg2");
  free(out);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ mesh import */

START_TEST(manual_axes_without_shardings_around_a_body_are_an_error) {
  pt_expect_error(
      "func.func @f() {\n"
      "  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={\"q\"} () {\n"
      "    %0 = stablehlo.constant dense<0.0> : tensor<2xf32>\n"
      "    sdy.return\n"
      "  } : () -> ()\n"
      "  return\n"
      "}\n",
      sp_mesh_manual_axes_cleanup, SP_EINVAL,
      "t.mlir:2:3: 'sdy.manual_computation' op has manual_axes when there are no in/out shardings "
      "and the body is not empty");
}
END_TEST

START_TEST(size_one_axes_leave_shardings_but_not_manual_axes) {
  sp_module *m = pt_parse(
      "sdy.mesh @m = <[\"one\"=1, \"two\"=2]>\n"
      "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{\"one\", \"two\"}]>] out_shardings=[<@m, [{\"one\", \"two\"}]>] manual_axes={\"one\", \"two\"} (%arg1: tensor<2xf32>) {\n"
      "    sdy.return %arg1 : tensor<2xf32>\n"
      "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n");
  pt_run(m, sp_mesh_remove_size_one_axes);
  char *out = pt_print(m);
  assert_has(out, "in_shardings=[<@m, [{\"two\"}]>] out_shardings=[<@m, [{\"two\"}]>] manual_axes={\"one\", \"two\"}");
  free(out);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ the import pipeline */

/* One module for every step: an inline mesh, a size-one axis in a constraint, a constant with
 * two users, a sharded function called twice, a sharding group, a gather indexed by a batch
 * iota. */
static const char *const PIPELINE_IN =
    "sdy.mesh @m = <[\"x\"=2, \"one\"=1]>\n"
    "func.func private @twice(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\", \"one\", ?}, {?}]>}) -> tensor<8x4xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32>\n"
    "  return %0 : tensor<8x4xf32>\n"
    "}\n"
    "func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<mesh<[\"x\"=2, \"y\"=2]>, [{\"x\"}, {}]>}, %arg1: tensor<2x6x5xf32>, %arg2: tensor<6x1xi32>) -> (tensor<8x4xf32>, tensor<6x5xf32>) {\n"
    "  %c = stablehlo.constant dense<1.0> : tensor<8x4xf32>\n"
    "  %0 = stablehlo.add %arg0, %c : tensor<8x4xf32>\n"
    "  %1 = call @twice(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %2 = call @twice(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %3 = stablehlo.multiply %2, %c : tensor<8x4xf32>\n"
    "  %4 = sdy.sharding_constraint %3 <@m, [{\"x\", \"one\"}, {}]> : tensor<8x4xf32>\n"
    "  sdy.sharding_group %4 group_id=42 : tensor<8x4xf32>\n"
    "  %5 = stablehlo.iota dim = 0 : tensor<6xi32>\n"
    "  %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>\n"
    "  %7 = stablehlo.concatenate %arg2, %6, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>\n"
    "  %8 = \"stablehlo.gather\"(%arg1, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 5>}> : (tensor<2x6x5xf32>, tensor<6x2xi32>) -> tensor<6x5xf32>\n"
    "  return %4, %8 : tensor<8x4xf32>, tensor<6x5xf32>\n"
    "}\n";

static int import_pipeline(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_import(m, NULL, err);
}

/* The steps in Shardy's order, each seeing what the earlier made: the inline mesh is lifted
 * (@mesh) before size-one axes go ("one" leaves the constraint, not the mesh); the constant
 * is split, one per user; the call graph is flattened before the calls are imported (each copy
 * has one call: no warning about cloning, and both computations take the original's name and
 * its argument sharding); the constraint is applied to its unsharded input before the group
 * is imported (renumbered 0); the gather gets its batching dims. */
START_TEST(import_pipeline_runs_every_step_in_shardys_order) {
  sp_module *m = pt_parse(PIPELINE_IN);
  sp_diag_list diags;
  sp_diag_list_init(&diags);
  m->diags = &diags;
  pt_run(m, import_pipeline);
  char *out = pt_print(m);
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"x\"=2, \"one\"=1]>\n"
      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}, %arg1: tensor<2x6x5xf32>, %arg2: tensor<6x1xi32>) -> (tensor<8x4xf32>, tensor<6x5xf32>) {\n"
      "    %0 = sdy.constant dense<1.000000e+00> : tensor<8x4xf32>\n"
      "    %1 = sdy.constant dense<1.000000e+00> : tensor<8x4xf32>\n"
      "    %2 = stablehlo.add %arg0, %0 : tensor<8x4xf32>\n"
      "    %3 = sdy.named_computation<\"twice\">(%2) in_shardings=[<@m, [{\"x\", ?}, {?}]>] (%arg3: tensor<8x4xf32>) {\n"
      "      %13 = sdy.data_flow_edge %arg3 sharding=<@m, [{\"x\", ?}, {?}]> : tensor<8x4xf32>\n"
      "      %14 = stablehlo.add %13, %13 : tensor<8x4xf32>\n"
      "      sdy.return %14 : tensor<8x4xf32>\n"
      "    } : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %4 = sdy.data_flow_edge %3 : tensor<8x4xf32>\n"
      "    %5 = sdy.named_computation<\"twice\">(%4) in_shardings=[<@m, [{\"x\", ?}, {?}]>] (%arg3: tensor<8x4xf32>) {\n"
      "      %13 = sdy.data_flow_edge %arg3 sharding=<@m, [{\"x\", ?}, {?}]> : tensor<8x4xf32>\n"
      "      %14 = stablehlo.add %13, %13 : tensor<8x4xf32>\n"
      "      sdy.return %14 : tensor<8x4xf32>\n"
      "    } : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %6 = sdy.data_flow_edge %5 : tensor<8x4xf32>\n"
      "    %7 = stablehlo.multiply %6, %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : tensor<8x4xf32>\n"
      "    %8 = sdy.sharding_constraint %7 <@m, [{\"x\"}, {}]> : tensor<8x4xf32>\n"
      "    sdy.sharding_group %8 group_id=0 : tensor<8x4xf32>\n"
      "    %9 = stablehlo.iota dim = 0 : tensor<6xi32>\n"
      "    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>\n"
      "    %11 = stablehlo.concatenate %arg2, %10, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>\n"
      "    %12 = \"stablehlo.gather\"(%arg1, %arg2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], operand_batching_dims = [1], start_indices_batching_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 5>}> : (tensor<2x6x5xf32>, tensor<6x1xi32>) -> tensor<6x5xf32>\n"
      "    return %8, %12 : tensor<8x4xf32>, tensor<6x5xf32>\n"
      "  }\n"
      "}\n";
  ck_assert_str_eq(out, want);
  ck_assert_int_eq(diags.n, 0);
  free(out);
  sp_diag_list_free(&diags);
  sp_module_free(m);
}
END_TEST

static int import_skip_inline(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_import(m, "skip-inline=true", err);
}

static int import_debug_origins(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_import(m, "debug-sharding-origins=true", err);
}

static int import_dump(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_import(m, "module-dump-directory=/tmp", err);
}

START_TEST(import_pipeline_takes_the_pipelines_import_options) {
  /* skip-inline: the calls stay calls (nothing flattened either), the rest runs. */
  char *out = pt_output(PIPELINE_IN, import_skip_inline);
  assert_has(out, "%3 = call @twice(%2) : (tensor<8x4xf32>) -> tensor<8x4xf32>");
  assert_has(out, "%4 = call @twice(%3) : (tensor<8x4xf32>) -> tensor<8x4xf32>");
  ck_assert_ptr_null(strstr(out, "named_computation"));
  assert_has(out, "sdy.sharding_group %6 group_id=0");
  free(out);
  /* debug-sharding-origins: the constraint is named and what it gave is recorded. */
  out = pt_output(PIPELINE_IN, import_debug_origins);
  assert_has(out, "sdy.sharding_constraint %7 <@m, [{\"x\"}, {}]> {sdy.sharding_origin_name = \"constraint_0\", sdy.sharding_origins = {x = \"self\"}}");
  assert_has(out, "%7 = stablehlo.multiply %6, %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>, sdy.sharding_origins = [{x = \"constraint_0\"}]}");
  free(out);
  pt_expect_error(PIPELINE_IN, import_dump, SP_EUNSUPPORTED,
                  "-sdy-import-pipeline: module-dump-directory is not supported");
}
END_TEST

/* ------------------------------------------------------------------ the pass table */

START_TEST(every_import_flag_runs_and_rejects_unknown_options) {
  for (const sp_pass_info *p = sp_import_passes; p->flag; p++) {
    sp_module *m = pt_parse(IMPORT_IN);
    sp_err err;
    ck_assert_msg(p->run(m, NULL, &err) == SP_OK, "-%s: %s", p->flag, err.msg);
    sp_module_free(m);
    m = pt_parse(IMPORT_IN);
    ck_assert_int_eq(p->run(m, "no-such-option=1", &err), SP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown option 'no-such-option'"));
    sp_module_free(m);
  }
}
END_TEST

static Suite *import_suite(void) {
  Suite *s = suite_create("import_passes");
  TCase *tc = tcase_create("passes");
  tcase_add_test(tc, flattening_copies_each_further_call_site_callees_first);
  tcase_add_test(tc, flattening_a_recursive_call_graph_is_an_error_at_the_call);
  tcase_add_test(tc, func_edges_go_on_callee_arguments_and_call_results_and_sink_back);
  tcase_add_test(tc, batch_iota_in_gather_indices_becomes_an_explicit_batching_dim);
  tcase_add_test(tc, gather_without_a_matching_batch_size_is_left_alone);
  tcase_add_test(tc, imported_calls_keep_their_attributes_and_the_original_name);
  tcase_add_test(tc, canonicalize_fuses_reduce_and_slice_and_drops_null_collectives);
  tcase_add_test(tc, canonicalize_inlines_a_manual_computation_over_size_one_axes);
  tcase_add_test(tc, manual_axes_without_shardings_around_a_body_are_an_error);
  tcase_add_test(tc, size_one_axes_leave_shardings_but_not_manual_axes);
  tcase_add_test(tc, every_import_flag_runs_and_rejects_unknown_options);
  tcase_add_test(tc, import_pipeline_runs_every_step_in_shardys_order);
  tcase_add_test(tc, import_pipeline_takes_the_pipelines_import_options);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(import_suite()); }
