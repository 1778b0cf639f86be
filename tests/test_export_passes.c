/*
 * test_export_passes.c - the export stage's small passes (export/export_passes.h), each on a
 * module of its own: debug info, sharding rules, groups, constraints, meshes, the unreduced
 * verifier, named computations and the call graph, func data-flow edges, call reshards,
 * return reshards, the export pipeline, and option errors.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"a\"=2, \"b\"=4]>\n"

START_TEST(remove_debug_info_strips_origins_and_edges_everywhere) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>, sdy.sharding_origins = {a = \"self\"}})"
      " -> (tensor<4xf32> {sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [{\"a\" = operand-0 -> [result-0]}]}]>}) {\n"
      "  %0 = stablehlo.sine %x {sdy.sharding_origins = [{a = \"input: 0\"}]} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      "sdy-remove-propagation-debug-info", NULL);
  et_lacks(out, "origins");
  et_lacks(out, "propagation_edges");
  static const char *const want[] = {"#sdy.sharding<@m, [{\"a\"}]>", "stablehlo.sine", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(drop_sharding_rules_keeps_custom_rules) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
      "  %0 = stablehlo.cosine %x {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=2}>} : tensor<4x2xf32>\n"
      "  %1 = stablehlo.custom_call @mine(%0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=2}, custom>} : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "  return %1 : tensor<4x2xf32>\n}\n",
      "sdy-drop-sharding-rules", NULL);
  static const char *const want[] = {"stablehlo.cosine %arg0 : tensor<4x2xf32>", "custom>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(constraint_becomes_reshard_and_groups_go) {
  const char *in = MESH
      "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.sharding_constraint %x <@m, [{\"b\"}]> : tensor<4xf32>\n"
      "  sdy.sharding_group %0 group_id = 3 : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n";
  char *out = et_run(in, "sdy-sharding-constraint-to-reshard", NULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{\"b\"}]>", "sdy.sharding_group", NULL};
  et_has_in_order(out, want);
  free(out);
  out = et_run(in, "sdy-remove-sharding-groups", NULL);
  et_lacks(out, "sharding_group");
  free(out);
}
END_TEST

START_TEST(inline_meshes_writes_every_mesh_in_place) {
  char *out = et_run(MESH "sdy.mesh @one = <[], device_ids=[5]>\n"
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}]>}) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.abs %x {sdy.sharding = #sdy.sharding_per_value<[<@one, []>]>} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      "sdy-inline-meshes", NULL);
  et_lacks(out, "sdy.mesh");
  static const char *const want[] = {"#sdy.sharding<mesh<[\"a\"=2, \"b\"=4]>, [{\"b\"}]>",
                                     "<mesh<[], device_ids=[5]>, []>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

#define HLO_A2A(mesh) \
  "\"stablehlo.all_to_all\"(%x) <{concat_dimension = 1 : i64, replica_groups = " \
  "#stablehlo.replica_group_mesh_axes<mesh = @" mesh ", axes = [#stablehlo.axis_ref<name = \"q\">]>, " \
  "split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<2x8xi8>) -> tensor<2x8xi8>\n"

START_TEST(inline_meshes_writes_stablehlo_replica_group_meshes) {
  char *out = et_run("sdy.mesh @g = <[\"p\"=2, \"q\"=2], device_ids=[3, 2, 1, 0]>\n"
      "sdy.mesh @h = <[\"q\"=4]>\n"
      "func.func @f(%x: tensor<2x8xi8>) -> (tensor<2x8xi8>, tensor<2x8xi8>) {\n"
      "  %0 = " HLO_A2A("g") "  %1 = " HLO_A2A("h")
      "  return %0, %1 : tensor<2x8xi8>, tensor<2x8xi8>\n}\n",
      "sdy-inline-meshes", NULL);
  static const char *const want[] = {
      "mesh = #stablehlo.mesh<axes=[<name = \"p\", size = 2>, <name = \"q\", size = 2>], "
      "device_ids=dense<[3, 2, 1, 0]> : tensor<4xi64>>, axes = [#stablehlo.axis_ref<name = \"q\">]>",
      "mesh = #stablehlo.mesh<axes=[<name = \"q\", size = 4>]>, axes =", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "@g");
  et_lacks(out, "sdy.mesh");
  free(out);
  et_run_fails("func.func @f(%x: tensor<2x8xi8>) -> tensor<2x8xi8> {\n"
               "  %0 = " HLO_A2A("gone") "  return %0 : tensor<2x8xi8>\n}\n",
               "sdy-inline-meshes", NULL, "unknown mesh: @gone");
}
END_TEST

START_TEST(drop_sharding_and_mesh_keeps_reshards) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}]>}) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.abs %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\"}]>]>} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      "sdy-drop-sharding-and-mesh", NULL);
  et_lacks(out, "sdy.");
  free(out);
}
END_TEST

START_TEST(verify_unreduced_reports_dropped_axis_and_kind_change) {
  et_run_fails(MESH
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced={\"b\"}>}) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.exponential %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>]>} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      "sdy-verify-unreduced-axes", NULL, "t.mlir:3:8: 'stablehlo.exponential' op dropped unreduced axis 'b'");
  et_run_fails(MESH
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced=min{\"a\"}>}) -> tensor<4xf32> {\n"
      "  %0 = sdy.reshard %x <@m, [{}], unreduced={\"a\"}> : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n",
      "sdy-verify-unreduced-axes", NULL, "from min to sum");
  /* A reshard may drop unreduced axes. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced={\"b\"}>}) -> tensor<4xf32> {\n"
      "  %0 = sdy.reshard %x <@m, [{}]> : tensor<4xf32>\n"
      "  %1 = stablehlo.exponential %0 : tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n",
      "sdy-verify-unreduced-axes", NULL);
  free(out);
}
END_TEST

/* Each module holds one invalid transition; the message names the op and what is wrong. */
START_TEST(verify_unreduced_reports_collectives_calls_and_returns) {
  static const char *const cases[][2] = {
      {"func.func @f(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced=min{\"a\"}>}) -> tensor<4x2xf32> {\n"
       "  %0 = sdy.all_reduce {\"a\"} %x out_sharding=<@m, [{}, {}]> : tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n",
       "'sdy.all_reduce' op cannot reduce 'min' unreduced axes. Expected 'sum'."},
      {"func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
       "  %0 = sdy.all_reduce {\"b\"} %x out_sharding=<@m, [{}, {}]> : tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n",
       "'sdy.all_reduce' op operand must be sharded."},
      {"func.func @f(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"b\"}>}) -> tensor<4x2xf32> {\n"
       "  %0 = \"stablehlo.all_reduce\"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({\n"
       "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
       "    %1 = stablehlo.maximum %p, %q : tensor<f32>\n"
       "    stablehlo.return %1 : tensor<f32>\n"
       "  }) : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n",
       "'stablehlo.all_reduce' op cannot reduce 'sum' unreduced axes. Expected 'max'."},
      {"func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
       "  %0 = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}], unreduced=max{\"a\"}>]>} : tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n",
       "'stablehlo.negate' op cannot introduce 'max' unreduced axes. Expected 'sum'."},
      {"func.func @f(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"b\":(2)2}>}) -> tensor<4x2xf32> {\n"
       "  %0 = call @g(%x) : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n"
       "func.func private @g(%y: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
       "  return %y : tensor<4x2xf32>\n}\n",
       "'func.call' op has unreduced axes mismatch for 'b:(2)2' at call argument 0."},
      {"func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
       "  %0 = call @g(%x) : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n"
       "func.func private @g(%y: tensor<4x2xf32>) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"a\"}>}) {\n"
       "  %0 = sdy.reshard %y <@m, [{}, {}], unreduced={\"a\"}> : tensor<4x2xf32>\n"
       "  return %0 : tensor<4x2xf32>\n}\n",
       "'func.call' op has unreduced axes mismatch for 'a' at call result 0."},
      {"func.func @f(%x: tensor<4x2xf32>) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"b\"}>}) {\n"
       "  return %x : tensor<4x2xf32>\n}\n",
       "'func.return' op has unreduced axes mismatch for 'b' at return value 0 without a blessed operation"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *in = malloc(strlen(MESH) + strlen(cases[i][0]) + 1);
    ck_assert_ptr_nonnull(in);
    strcpy(in, MESH);
    strcat(in, cases[i][0]);
    et_run_fails(in, "sdy-verify-unreduced-axes", NULL, cases[i][1]);
    free(in);
  }
}
END_TEST

START_TEST(named_computations_become_private_functions_then_merge) {
  const char *in = MESH
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.named_computation<\"body\">(%x) in_shardings=[<@m, [{\"a\"}]>] out_shardings=[<@m, [{\"a\"}]>] (%y: tensor<4xf32>) {\n"
      "    %1 = stablehlo.tanh %y : tensor<4xf32>\n"
      "    sdy.return %1 : tensor<4xf32>\n"
      "  } {tag = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %2 = sdy.named_computation<\"body\">(%0) in_shardings=[<@m, [{\"a\"}]>] out_shardings=[<@m, [{\"a\"}]>] (%y: tensor<4xf32>) {\n"
      "    %3 = stablehlo.tanh %y : tensor<4xf32>\n"
      "    sdy.return %3 : tensor<4xf32>\n"
      "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %2 : tensor<4xf32>\n}\n";
  char *out = et_run(in, "sdy-export-named-computations", NULL);
  static const char *const want[] = {"call @body(%arg0) {sdy.sharding", "tag = 7", "call @body_0(",
                                     "func.func private @body(", "sdy.original_func_name = \"body\"",
                                     "func.func private @body_0(", NULL};
  et_has_in_order(out, want);
  free(out);
  /* Un-flattening the result merges the two copies (same shardings). */
  sp_module *m = pt_parse(in);
  sp_err err;
  const sp_pass_info *p = sp_export_passes;
  while (strcmp(p->flag, "sdy-export-named-computations") != 0) p++;
  ck_assert_int_eq(p->run(m, NULL, &err), SP_OK);
  out = pt_print(m);
  sp_module_free(m);
  char *merged = et_run(out, "sdy-unflatten-call-graph", NULL);
  static const char *const want2[] = {"call @body(%arg0)", "call @body(%0)", "func.func private @body(",
                                      "func.func private @body_0(", NULL};
  et_has_in_order(merged, want2);
  et_lacks(merged, "call @body_0");
  et_lacks(merged, "original_func_name");
  free(out);
  free(merged);
}
END_TEST

/* Name clashes are numbered by one counter for the whole run (MLIR's SymbolTable): the
 * second "u" takes u_0, so the second "w" takes w_1 and the third w_2. */
#define NC(name, in) \
  "  %" in "_r = sdy.named_computation<\"" name "\">(%" in ") (%y: tensor<2xi8>) {\n" \
  "    sdy.return %y : tensor<2xi8>\n" \
  "  } : (tensor<2xi8>) -> tensor<2xi8>\n"

START_TEST(named_computation_clashes_share_one_suffix_counter) {
  char *out = et_run(MESH
      "func.func @main(%x: tensor<2xi8>) -> tensor<2xi8> {\n"
      NC("u", "x") NC("u", "x_r") NC("w", "x_r_r") NC("w", "x_r_r_r") NC("w", "x_r_r_r_r")
      "  return %x_r_r_r_r_r : tensor<2xi8>\n}\n",
      "sdy-export-named-computations", NULL);
  static const char *const want[] = {"call @u(%arg0)", "call @u_0(%0)", "call @w(%1)", "call @w_1(%2)",
                                     "call @w_2(%3)", "func.func private @u(", "func.func private @u_0(",
                                     "func.func private @w(", "func.func private @w_1(",
                                     "func.func private @w_2(", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "@w_0");
  free(out);
}
END_TEST

START_TEST(unflatten_keeps_copies_with_other_shardings_unless_fully) {
  const char *in = MESH
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = call @g_1(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n"
      "func.func private @g(%y: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<4xf32> {\n"
      "  return %y : tensor<4xf32>\n}\n"
      "func.func private @g_1(%y: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}]>}) -> tensor<4xf32> attributes {sdy.original_func_name = \"g\"} {\n"
      "  return %y : tensor<4xf32>\n}\n";
  char *out = et_run(in, "sdy-unflatten-call-graph", NULL);
  static const char *const want[] = {"call @g(%arg0)", "call @g_1(%0)", NULL};
  et_has_in_order(out, want);
  free(out);
  out = et_run(in, "sdy-unflatten-call-graph", "dedup-functions-fully=true");
  static const char *const want2[] = {"call @g(%arg0)", "call @g(%0)", NULL};
  et_has_in_order(out, want2);
  free(out);
}
END_TEST

/* Three copies of @k: @k returns its result on "a" (one call), @k_0 and @k_1 on "b" (one call
 * each). Plain un-flattening sends @k_1's call to @k_0 and keeps every function; fully, the
 * "b" class overtakes @k's class at the call of @k_1, which then takes every call. The two
 * copies of @p share one class: its first callee @p keeps every call. */
#define THREE_COPIES MESH \
  "func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {\n" \
  "  %0 = call @k(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>\n" \
  "  %1 = call @p(%0) : (tensor<2x8xf32>) -> tensor<2x8xf32>\n" \
  "  %2 = call @k_0(%1) : (tensor<2x8xf32>) -> tensor<2x8xf32>\n" \
  "  %3 = call @p_5(%2) : (tensor<2x8xf32>) -> tensor<2x8xf32>\n" \
  "  %4 = call @k_1(%3) : (tensor<2x8xf32>) -> tensor<2x8xf32>\n" \
  "  return %4 : tensor<2x8xf32>\n}\n" \
  "func.func private @k(%y: tensor<2x8xf32>) -> (tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"a\"}]>}) {\n" \
  "  return %y : tensor<2x8xf32>\n}\n" \
  "func.func private @p(%y: tensor<2x8xf32>) -> tensor<2x8xf32> {\n" \
  "  return %y : tensor<2x8xf32>\n}\n" \
  "func.func private @k_0(%y: tensor<2x8xf32>) -> (tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"b\"}]>}) attributes {sdy.original_func_name = \"k\"} {\n" \
  "  return %y : tensor<2x8xf32>\n}\n" \
  "func.func private @p_5(%y: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {sdy.original_func_name = \"p\"} {\n" \
  "  return %y : tensor<2x8xf32>\n}\n" \
  "func.func private @k_1(%y: tensor<2x8xf32>) -> (tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"b\"}]>}) attributes {sdy.original_func_name = \"k\"} {\n" \
  "  return %y : tensor<2x8xf32>\n}\n"

START_TEST(unflatten_merges_into_first_called_copy_and_erases_nothing) {
  char *out = et_run(THREE_COPIES, "sdy-unflatten-call-graph", NULL);
  static const char *const want[] = {"call @k(%arg0)", "call @p(%0)", "call @k_0(%1)", "call @p(%2)",
                                     "call @k_0(%3)", "func.func private @k(", "func.func private @p(",
                                     "func.func private @k_0(", "func.func private @p_5(",
                                     "func.func private @k_1(", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "original_func_name");
  free(out);
}
END_TEST

START_TEST(unflatten_fully_follows_the_class_that_overtakes) {
  char *out = et_run(THREE_COPIES, "sdy-unflatten-call-graph", "dedup-functions-fully=true");
  static const char *const want[] = {"call @k_1(%arg0)", "call @p(%0)", "call @k_1(%1)", "call @p(%2)",
                                     "call @k_1(%3)", "func.func private @k(", "func.func private @k_0(",
                                     NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(sink_func_edges_writes_back_argument_and_call_shardings) {
  char *out = et_run(MESH
      "func.func private @g(%y: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.func_data_flow_edge %y {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"b\"}]>]>} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n"
      "func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %0:2 = call @h(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
      "  %1 = sdy.func_data_flow_edge %0#1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\"}]>]>} : tensor<4xf32>\n"
      "  return %0#0, %1 : tensor<4xf32>, tensor<4xf32>\n}\n"
      "func.func private @h(%y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  return %y, %y : tensor<4xf32>, tensor<4xf32>\n}\n",
      "sdy-sink-func-data-flow-edges", NULL);
  et_lacks(out, "func_data_flow_edge");
  static const char *const want[] = {"@g(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}]>})",
                                     "call @h(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>, <@m, [{\"a\"}]>]>}",
                                     "return %0#0, %0#1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(call_reshards_put_later_results_first) {
  char *out = et_run(MESH
      "func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0:2 = call @h(%x) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\"}]>, <@m, [{\"b\"}]>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
      "  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>\n}\n"
      "func.func private @h(%y: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}, tensor<8xf32>) {\n"
      "  return %y, %y : tensor<8xf32>, tensor<8xf32>\n}\n",
      "sdy-insert-func-call-reshards", NULL);
  static const char *const want[] = {"call @h(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>, <@m, [{}]>]>}",
                                     "sdy.reshard %0#1 <@m, [{\"b\"}]>", "sdy.reshard %0#0 <@m, [{\"a\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(export_pipeline_closes_inlines_and_reshards_returns) {
  char *out = et_run(MESH
      "func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\", ?}]>}) {\n"
      "  %0 = sdy.sharding_constraint %x <@m, [{\"b\"}]> : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n",
      "sdy-export-pipeline", NULL);
  static const char *const want[] = {"#sdy.sharding<mesh<[\"a\"=2, \"b\"=4]>, [{\"a\"}]>",
                                     "sdy.reshard %arg0 <mesh<[\"a\"=2, \"b\"=4]>, [{\"b\"}]>", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "?");
  et_lacks(out, "sdy.mesh");
  free(out);
}
END_TEST

START_TEST(export_pipeline_folds_the_all_reduce_of_what_it_made_unreduced) {
  /* The constraint makes "b" unreduced and the result reduces it again: the all_reduce of the
   * replicated_to_unreduced gives %arg0 back; the collective stays (not erasable), the dead
   * negate goes. */
  char *out = et_run(MESH
      "func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) {\n"
      "  %0 = sdy.sharding_constraint %x <@m, [{\"a\"}], unreduced={\"b\"}> : tensor<8xf32>\n"
      "  %1 = stablehlo.negate %0 : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n",
      "sdy-export-pipeline", NULL);
  static const char *const want[] = {"%0 = sdy.replicated_to_unreduced {\"b\"} %arg0", "return %arg0", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "all_reduce");
  et_lacks(out, "negate");
  free(out);
}
END_TEST

START_TEST(export_pipeline_with_explicit_collectives_lowers_a_folded_reshard_chain) {
  /* Two constraints in a row: the reshards they become fold into one ({"a"} on dim 0 to
   * {"a"} on dim 1), which becomes one all_to_all. */
  char *out = et_run(MESH
      "func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"a\"}]>}) {\n"
      "  %0 = sdy.sharding_constraint %x <@m, [{\"b\"}, {}]> : tensor<8x8xf32>\n"
      "  %1 = sdy.sharding_constraint %0 <@m, [{}, {\"a\"}]> : tensor<8x8xf32>\n"
      "  return %1 : tensor<8x8xf32>\n}\n",
      "sdy-export-pipeline", "enable-insert-explicit-collectives=true");
  static const char *const want[] = {"%0 = sdy.all_to_all [{\"a\"}: 0->1] %arg0", "return %0", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  et_lacks(out, "\"b\"}");
  free(out);
}
END_TEST

START_TEST(inline_meshes_names_an_unknown_mesh) {
  et_run_fails("func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@absent, [{\"a\"}]>}) -> tensor<8xf32> {\n"
               "  return %x : tensor<8xf32>\n}\n",
               "sdy-inline-meshes", NULL, "-sdy-inline-meshes: unknown mesh: @absent");
}
END_TEST

START_TEST(unknown_options_are_errors_naming_them) {
  et_run_fails(MESH "func.func @f() {\n  return\n}\n", "sdy-unflatten-call-graph", "dedup=true",
               "unknown option 'dedup'");
  et_run_fails(MESH "func.func @f() {\n  return\n}\n", "sdy-insert-explicit-reshards",
               "enable-full-version=maybe", "expects true or false");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("export_passes");
  TCase *tc = tcase_create("passes");
  tcase_add_test(tc, remove_debug_info_strips_origins_and_edges_everywhere);
  tcase_add_test(tc, drop_sharding_rules_keeps_custom_rules);
  tcase_add_test(tc, constraint_becomes_reshard_and_groups_go);
  tcase_add_test(tc, inline_meshes_writes_every_mesh_in_place);
  tcase_add_test(tc, inline_meshes_writes_stablehlo_replica_group_meshes);
  tcase_add_test(tc, drop_sharding_and_mesh_keeps_reshards);
  tcase_add_test(tc, verify_unreduced_reports_dropped_axis_and_kind_change);
  tcase_add_test(tc, verify_unreduced_reports_collectives_calls_and_returns);
  tcase_add_test(tc, named_computations_become_private_functions_then_merge);
  tcase_add_test(tc, named_computation_clashes_share_one_suffix_counter);
  tcase_add_test(tc, unflatten_keeps_copies_with_other_shardings_unless_fully);
  tcase_add_test(tc, unflatten_merges_into_first_called_copy_and_erases_nothing);
  tcase_add_test(tc, unflatten_fully_follows_the_class_that_overtakes);
  tcase_add_test(tc, sink_func_edges_writes_back_argument_and_call_shardings);
  tcase_add_test(tc, call_reshards_put_later_results_first);
  tcase_add_test(tc, export_pipeline_closes_inlines_and_reshards_returns);
  tcase_add_test(tc, export_pipeline_folds_the_all_reduce_of_what_it_made_unreduced);
  tcase_add_test(tc, export_pipeline_with_explicit_collectives_lowers_a_folded_reshard_chain);
  tcase_add_test(tc, inline_meshes_names_an_unknown_mesh);
  tcase_add_test(tc, unknown_options_are_errors_naming_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
