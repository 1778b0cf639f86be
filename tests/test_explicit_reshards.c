/*
 * test_explicit_reshards.c - -sdy-insert-explicit-reshards=enable-full-version=true
 * (export/explicit_reshards.h) and the reshards/collectives it leaves, on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export/export_pipeline.h"
#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
#define FULL "enable-full-version=true"

START_TEST(compatible_op_is_left_alone) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) {\n"
      "  %0 = stablehlo.sqrt %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>} : tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(one_axis_on_two_factors_is_not_compatible) {
  /* Each factor is sharded alike wherever it appears, but "q" serves the operand's size-1
   * factor and the result's other one: the unary choice keeps the operand's, so the result is
   * built without "q" and resharded back. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<1x4xi32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<4x1xi32> {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>} : (tensor<1x4xi32>) -> tensor<4x1xi32>\n"
      "  return %0 : tensor<4x1xi32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>}",
      "sdy.reshard %0 <@m, [{}, {\"q\"}]>", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg0");
  free(out);
}
END_TEST

START_TEST(unreduced_operand_is_all_reduced_before_its_reshard) {
  /* The add keeps "p" unreduced; the multiply does not and wants "q" on dim 1: each use of the
   * add's result is all-reduced first, then resharded (the all-reduces, then the reshards). */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"p\"}>}) -> (tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}) {\n"
      "  %0 = stablehlo.add %x, %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}], unreduced={\"p\"}>]>} : tensor<2x8xf32>\n"
      "  %1 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>} : tensor<2x8xf32>\n"
      "  return %1 : tensor<2x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%1 = sdy.all_reduce {\"p\"} %0 out_sharding=<@m, [{}, {}]>",
      "%2 = sdy.all_reduce {\"p\"} %0 out_sharding=<@m, [{}, {}]>",
      "%3 = sdy.reshard %1 <@m, [{}, {\"q\"}]>", "%4 = sdy.reshard %2 <@m, [{}, {\"q\"}]>",
      "stablehlo.multiply %3, %4", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "[{}, {\"q\"}], unreduced");
  free(out);
}
END_TEST

START_TEST(free_unreduced_axis_of_a_manual_block_argument_is_all_reduced_in_the_body) {
  /* Inside the body "p" is manual: only the free axis "q" is left unreduced, and the abs,
   * which keeps nothing unreduced, reads it all-reduced. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced={\"p\", \"q\"}>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {\n"
      "  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{}], unreduced={\"p\", \"q\"}>] out_shardings=[<@m, [{}]>] manual_axes={\"p\"} (%a: tensor<16xf32>) {\n"
      "    %1 = stablehlo.abs %a : tensor<16xf32>\n"
      "    sdy.return %1 : tensor<16xf32>\n"
      "  } : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.all_reduce {\"q\"} %arg1 out_sharding=<@m, [{}]>",
                                     "stablehlo.abs %1", "sdy.return", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.all_reduce {\"p\"");
  free(out);
}
END_TEST

START_TEST(chosen_axes_grow_into_a_longer_list_the_others_reach_by_slicing) {
  /* The rhs's "p" outweighs the lhs's ["p", "q":(1)2] on the batch dim, but the rhs gets to
   * the longer list by slicing its shard (it uses "q" nowhere else): the longer one wins. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x8x32xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\", \"q\":(1)2}, {}, {}]>}, %y: tensor<4x32x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}, {}]>}) -> tensor<4x8x16xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}, {}]>]>} : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>\n"
      "  return %0 : tensor<4x8x16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg1 <@m, [{\"p\", \"q\":(1)2}, {}, {}]>",
      "stablehlo.dot_general %arg0, %0", "<@m, [{\"p\", \"q\":(1)2}, {}, {}]>",
      "sdy.reshard %1 <@m, [{}, {}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(chosen_axes_do_not_grow_where_a_tensor_uses_the_extra_axis_elsewhere) {
  /* "q":(1)2 wins the batch factor; growing it to "q" would move the "q":(2)2 that the
   * operand and the result hold on another factor, so it stays "q":(1)2. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x12x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\":(1)2}, {\"p\"}, {\"q\":(2)2}]>}, %t: tensor<8x5xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> (tensor<8x12x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\":(1)2}, {\"p\"}, {\"q\":(2)2}]>}) {\n"
      "  %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%x, %t) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\":(1)2}, {\"p\"}, {\"q\":(2)2}]>]>} : (tensor<8x12x16xf32>, tensor<8x5xf32>) -> tensor<8x12x16xf32>\n"
      "  return %0 : tensor<8x12x16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "sdy.reshard %arg0 <@m, [{\"q\":(1)2}, {}, {}]>", "sdy.reshard %arg1 <@m, [{\"q\":(1)2}, {}]>",
      "@ProductOfElementaryHouseholderReflectors(%0, %1) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\":(1)2}, {}, {}]>]>}",
      NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(unary_op_keeps_the_sharding_of_its_larger_tensor) {
  /* The broadcast's result is far larger than its sharded operand: the operand is resharded
   * to what the (replicated) result implies, and the result is left as it is. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}]>}) -> tensor<2x3x16xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x16xf32>\n"
      "  return %0 : tensor<2x3x16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"%0 = sdy.reshard %arg0 <@m, [{}, {}]>",
                                     "stablehlo.broadcast_in_dim %0", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %1");
  free(out);
}
END_TEST

START_TEST(op_with_a_users_custom_rule_keeps_its_shardings) {
  /* The result does not match what the operand implies through the rule, but a custom rule
   * does not say how to partition the op: no reshard either side. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {\"p\"}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\":(1)2}, {\"p\"}]>}) {\n"
      "  %0 = stablehlo.custom_call @foo(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=2}, custom>, sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\":(1)2}, {\"p\"}]>]>} : (tensor<4x2xf32>) -> tensor<2x4xf32>\n"
      "  return %0 : tensor<2x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"stablehlo.custom_call @foo(%arg0)", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(reshape_with_coprime_axis_parts_regroups_them_over_its_factors) {
  /* [x=6, y=4] over the reshape's factors 4 and 6: the operand's own order would leave "x":(2)3
   * as overflow; regrouped, each factor is fully sharded and the operand is resharded to that
   * device order, the result built from it and resharded back. */
  char *out = et_run("sdy.mesh @n = <[\"x\"=6, \"y\"=4]>\n"
      "func.func @f(%a: tensor<24x5xf32> {sdy.sharding = #sdy.sharding<@n, [{\"x\", \"y\"}, {}]>}) -> (tensor<4x30xf32> {sdy.sharding = #sdy.sharding<@n, [{}, {\"x\", \"y\"}]>}) {\n"
      "  %0 = stablehlo.reshape %a {sdy.sharding = #sdy.sharding_per_value<[<@n, [{}, {\"x\", \"y\"}]>]>} : (tensor<24x5xf32>) -> tensor<4x30xf32>\n"
      "  return %0 : tensor<4x30xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@n, [{\"x\":(1)2, \"y\":(1)2, \"x\":(2)3, \"y\":(2)2}, {}]>",
      "stablehlo.reshape %0 {sdy.sharding = #sdy.sharding_per_value<[<@n, [{\"x\":(1)2, \"y\":(1)2}, {\"x\":(2)3, \"y\":(2)2}]>]>}",
      "%2 = sdy.reshard %1 <@n, [{}, {\"x\", \"y\"}]>", "return %2", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(axis_part_no_factor_of_a_split_dim_takes_moves_to_the_last_factor) {
  /* Dim 0's factors 3 and 2 take only "q":(1)2 of "q"=4, and that one waits on the factor of
   * 3 (never sharded); the rest, "q":(2)2, belongs to the tensor's last factor: the operand is
   * resharded to hold just that. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<1x1x1xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}, {}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@m, []>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k, l])->([]) {i=3, j=2, k=1, l=1}>} : (tensor<1x1x1xf32>) -> tensor<f32>\n"
      "  return %0 : tensor<f32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"%0 = sdy.reshard %arg0 <@m, [{}, {}, {\"q\":(2)2}]>",
                                     "stablehlo.reshape %0", "return %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(binary_op_takes_the_majority_and_reshards_the_rest) {
  /* Two operands on "q" outweigh the result on "p": the result is resharded after the op. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}, %y: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.subtract %x, %y {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>} : tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "stablehlo.subtract %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>}",
      "sdy.reshard %0 <@m, [{\"p\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(sharded_contraction_gets_all_reduce_then_result_reshard) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}, %w: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<16x8xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>} : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>\n"
      "  return %0 : tensor<16x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  /* "p" joins the lhs's free dim, "q" stays on the contraction: all-reduced after it; the
   * unsharded function result then asks for a replicated value. */
  static const char *const want[] = {
      "sdy.reshard %arg0 <@m, [{\"p\"}, {\"q\"}]>", "stablehlo.dot_general %0, %arg1",
      "<@m, [{\"p\"}, {}]>", "sdy.all_reduce {\"q\"} %1 out_sharding=<@m, [{\"p\"}, {}]>",
      "sdy.reshard %2 <@m, [{}, {}]>", "return %3", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(need_replication_axes_move_to_a_batch_dimension) {
  /* Cholesky's matrix dims need replication: "p" moves to the batch dim. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"p\"}, {}]>}) -> tensor<8x4x4xf32> {\n"
      "  %0 = stablehlo.cholesky %x, lower = true {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}, {}]>]>} : tensor<8x4x4xf32>\n"
      "  return %0 : tensor<8x4x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{\"p\"}, {}, {}]>",
                                     "stablehlo.cholesky", "sdy.reshard %1 <@m, [{}, {}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(returned_value_is_resharded_to_the_result_sharding) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}) -> (tensor<8xf32>, tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}]>}) {\n"
      "  return %x, %x : tensor<8xf32>, tensor<8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{}]>", "sdy.reshard %arg0 <@m, [{\"p\"}]>",
                                     "return %0, %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(reshard_to_unreduced_becomes_replicated_and_sharded_to_unreduced) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}) -> tensor<8x8xf32> {\n"
      "  %0 = sdy.reshard %x <@m, [{}, {}], unreduced={\"p\", \"q\"}> : tensor<8x8xf32>\n"
      "  %1 = sdy.all_reduce {\"p\", \"q\"} %0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n"
      "  return %1 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "sdy.replicated_to_unreduced {\"p\"} %arg0 out_sharding=<@m, [{}, {\"q\"}], unreduced={\"p\"}>",
      "sdy.sharded_to_unreduced [{}, {\"q\"}] %0 out_sharding=<@m, [{}, {}], unreduced={\"p\", \"q\"}>",
      "sdy.all_reduce", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(default_mode_reshards_a_small_dot_result_to_what_its_operands_imply) {
  /* The operands agree (m on p, k on q); the result puts the reduction axis q on m instead of
   * p: the dot computes [{p}, {?}] and a reshard restores [{q}, {?}]. */
  const char *in = MESH
      "func.func @f(%x: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"q\"}]>},"
      " %y: tensor<64x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<16x8xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {?}]>]>} : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>\n"
      "  return %0 : tensor<16x8xf32>\n}\n";
  char *out = et_run(in, "sdy-insert-explicit-reshards", NULL);
  static const char *const want[] = {
      "stablehlo.dot_general %arg0, %arg1", "sdy.sharding_per_value<[<@m, [{\"p\"}, {?}]>]>",
      "sdy.reshard %0 <@m, [{\"q\"}, {?}]>", NULL};
  et_has_in_order(out, want);
  free(out);
  /* A result larger than the operand that has the factor keeps its sharding. */
  out = et_run(MESH
      "func.func @f(%x: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"q\"}]>},"
      " %y: tensor<2x64xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<16x64xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>} : (tensor<16x2xf32>, tensor<2x64xf32>) -> tensor<16x64xf32>\n"
      "  return %0 : tensor<16x64xf32>\n}\n", "sdy-insert-explicit-reshards", NULL);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(default_mode_reconciles_a_concatenate_whose_operands_differ_from_its_result) {
  /* The larger operand's "p" on dim 1 wins: %x is resharded to it, the concatenate computes on
   * it and a reshard restores the replicated result; the add with mixed shardings and the
   * concatenate of operands placed like its result are left alone. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>},"
      " %y: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"p\"}]>}) -> (tensor<8x16xf32>, tensor<6x16xf32>, tensor<12x16xf32>) {\n"
      "  %0 = stablehlo.concatenate %x, %y, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<2x16xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = stablehlo.add %y, %y {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>} : tensor<6x16xf32>\n"
      "  %2 = stablehlo.concatenate %y, %y, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"p\"}]>]>} : (tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<12x16xf32>\n"
      "  return %0, %1, %2 : tensor<8x16xf32>, tensor<6x16xf32>, tensor<12x16xf32>\n}\n",
      "sdy-insert-explicit-reshards", NULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{}, {\"p\"}]> : tensor<2x16xf32>",
      "%1 = stablehlo.concatenate %0, %arg1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"p\"}]>]>}",
      "%2 = sdy.reshard %1 <@m, [{}, {}]> : tensor<8x16xf32>",
      "%3 = stablehlo.add %arg1, %arg1 {", "%4 = stablehlo.concatenate %arg1, %arg1, dim = 0 {",
      "return %2, %3, %4", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(op_on_meshes_differing_only_in_device_order_runs_on_the_majority_mesh) {
  char *out = et_run("sdy.mesh @k = <[\"s\"=2, \"t\"=4]>\n" "sdy.mesh @kr = <[\"s\"=2, \"t\"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>\n"
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@kr, [{\"t\"}]>}, %y: tensor<16xf32> {sdy.sharding = #sdy.sharding<@kr, [{\"t\"}]>}) -> tensor<16xf32> {\n"
      "  %0 = stablehlo.add %x, %y {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"t\"}]>]>} : tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@kr, [{\"t\"}]>]>}",
      "sdy.reshard %0 <@k, [{\"t\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(unary_op_prefers_the_tensor_that_shards_no_permutation_dim) {
  /* The operand shards the reversed dim on q (4 devices), the result only dim 1 on p (2): the
   * result's sharding wins although it uses fewer devices. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.reverse %x, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"p\"}]>]>} : tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{}, {\"p\"}]>", "stablehlo.reverse %0", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(scalar_operands_do_not_keep_need_replication_axes_from_moving) {
  /* dynamic_slice's sliced dims need replication; their axes move to the kept dim 0 even though
   * the scalar start indices have no factors. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}, %i: tensor<i32>, %j: tensor<i32>) -> tensor<16x2xf32> {\n"
      "  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [16, 2] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<16x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x2xf32>\n"
      "  return %0 : tensor<16x2xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{\"q\"}, {}]>",
                                     "stablehlo.dynamic_slice %0", "sdy.reshard %1 <@m, [{}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(scalar_operands_leave_an_op_unary) {
  /* clamp with scalar bounds has one non-scalar operand: the result, on more devices, wins
   * whole instead of a mix of both. */
  char *out = et_run(MESH
      "func.func @f(%lo: tensor<f32>, %x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}]>}, %hi: tensor<f32>) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.clamp %lo, %x, %hi {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>} : (tensor<f32>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {"sdy.reshard %arg1 <@m, [{}, {\"q\"}]>",
                                     "stablehlo.clamp %arg0, %0, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>}",
                                     NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(propagation_pipeline_makes_collectives_explicit_on_request) {
  sp_module *m = pt_parse("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {\"b\"}]>}, %w: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"b\"}]>}) {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n");
  sp_err err;
  ck_assert_int_eq(sp_export_propagation_pipeline_pass(m, "enable-insert-explicit-collectives=true", &err), SP_OK);
  char *out = pt_print(m);
  static const char *const want[] = {"sdy.all_gather [{}, {\"b\"}] %arg0", "stablehlo.dot_general %0, %arg1",
                                     "sdy.all_gather [{\"a\"}, {}] %1 out_sharding=<@m, [{}, {\"b\"}]>", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
  sp_module_free(m);
}
END_TEST

START_TEST(tensors_sharded_exactly_alike_outweigh_a_shared_prefix) {
  /* One operand on ["q"], the other and the result on ["q", "p"]: two tensors hold ["q", "p"]
   * exactly, so the first operand is resharded to it and the result is left alone (["q"] is
   * only a prefix of theirs and does not count their sizes). */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}, %y: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\", \"p\"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\", \"p\"}]>}) {\n"
      "  %0 = stablehlo.add %x, %y {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\", \"p\"}]>]>} : tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"q\", \"p\"}]> : tensor<16xf32>",
      "%1 = stablehlo.add %0, %arg1", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %1");
  free(out);
}
END_TEST

START_TEST(full_tie_goes_to_the_later_mesh_axis) {
  /* 2x16 -> 32: for the major factor (2), the operand's ["p"] and the result's ["q":(1)2]
   * weigh and divide alike; the later mesh axis wins, so the operand is resharded to the
   * result's factor shardings and the reshape keeps ["q", "p"]. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"q\"}]>}) -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\", \"p\"}]>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\", \"p\"}]>]>} : (tensor<2x16xf32>) -> tensor<32xf32>\n"
      "  return %0 : tensor<32xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"q\":(1)2}, {\"q\":(2)2, \"p\"}]> : tensor<2x16xf32>",
      "%1 = stablehlo.reshape %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\", \"p\"}]>]>}",
      "return %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(pass_through_factor_beats_contraction_on_a_tie) {
  /* A rule whose contraction factor comes last: the lhs's contraction on "q" and the rhs's
   * free dim on "q" weigh the same, and the pass-through factor wins over the later reduction
   * factor: the lhs is made replicated, no all-reduce is needed, and the result is resharded
   * after the op. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}, %w: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=8, k=16} reduction={k}>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{}, {}]> : tensor<8x16xf32>",
      "%1 = stablehlo.dot_general %0, %arg1", "<@m, [{}, {\"q\"}]>",
      "%2 = sdy.reshard %1 <@m, [{\"q\"}, {}]> : tensor<8x8xf32>", "return %2", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.all_reduce");
  free(out);
}
END_TEST

START_TEST(full_tie_between_factors_goes_to_the_later_factor) {
  /* The lhs's free dim and the rhs's free dim both on "q", same sizes: the later factor (the
   * rhs's) keeps "q", the lhs is made replicated, the result resharded after the dot. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}, %w: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}) {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{}, {}]> : tensor<8x16xf32>",
      "%1 = stablehlo.dot_general %0, %arg1", "<@m, [{}, {\"q\"}]>",
      "%2 = sdy.reshard %1 <@m, [{}, {}]> : tensor<8x8xf32>", "return %2", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(result_without_sharding_still_gets_the_all_reduce) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}, %w: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.dot_general %arg0, %arg1",
      "%1 = sdy.all_reduce {\"q\"} %0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>", "return %1",
      NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(unary_tie_goes_to_the_tensor_without_sharded_permutation_dims) {
  /* Both tensors put "q" on the kept dim; the operand also puts "p" on the reversed dim. The
   * result's sharding moves no data across the reversal, so the operand takes it. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {\"p\"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) {\n"
      "  %0 = stablehlo.reverse %x, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>} : tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"q\"}, {}]> : tensor<8x4xf32>",
      "%1 = stablehlo.reverse %0, dims = [1]", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %1");
  free(out);
}
END_TEST

START_TEST(one_need_replication_list_moves_to_the_batch_dim) {
  /* The operand has "q" and the result "p" on a matrix dim of the cholesky: only the list over
   * more devices ("q") moves to the batch dim, though "p" would divide it too. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}, {\"q\"}]>}) -> (tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}, {\"p\"}]>}) {\n"
      "  %0 = stablehlo.cholesky %x, lower = true {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}, {\"p\"}]>]>} : tensor<8x4x4xf32>\n"
      "  return %0 : tensor<8x4x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"q\"}, {}, {}]> : tensor<8x4x4xf32>",
      "%1 = stablehlo.cholesky %0, lower = true {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}, {}]>]>}",
      "%2 = sdy.reshard %1 <@m, [{}, {}, {\"p\"}]> : tensor<8x4x4xf32>", "return %2", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(moved_sub_axes_of_one_axis_merge_into_it) {
  /* "q":(1)2 and "q":(2)2 on the two matrix dims both move to the batch dim: as "q". */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\":(1)2}, {\"q\":(2)2}]>}) -> (tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\":(1)2}, {\"q\":(2)2}]>}) {\n"
      "  %0 = stablehlo.cholesky %x, lower = true {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\":(1)2}, {\"q\":(2)2}]>]>} : tensor<8x4x4xf32>\n"
      "  return %0 : tensor<8x4x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"q\"}, {}, {}]> : tensor<8x4x4xf32>",
      "%1 = stablehlo.cholesky %0", "%2 = sdy.reshard %1 <@m, [{}, {\"q\":(1)2}, {\"q\":(2)2}]>",
      "return %2", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(scalar_operands_leave_a_unary_choice) {
  /* clamp with scalar bounds has two non-scalar tensors: the one over more devices (the
   * operand on "q") gives its whole sharding, the result is resharded after the op (pieces of
   * both, ["p"] and ["q"], are not mixed). */
  char *out = et_run(MESH
      "func.func @f(%lo: tensor<f32>, %x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}, %hi: tensor<f32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}]>}) {\n"
      "  %0 = stablehlo.clamp %lo, %x, %hi {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>} : (tensor<f32>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.clamp %arg0, %arg1, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>}",
      "%1 = sdy.reshard %0 <@m, [{\"p\"}, {}]> : tensor<8x4xf32>", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg1");
  free(out);
}
END_TEST

START_TEST(result_keeping_a_sub_axis_unreduced_all_reduces_the_rest_of_it) {
  /* The reduced dim is on ["q", "p"]; the result keeps "q":(1)2 unreduced: the all-reduce
   * covers the rest of "q" and all of "p". */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\", \"p\"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced={\"q\":(1)2}>}) {\n"
      "  %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %1 = stablehlo.reduce(%x init: %0) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}], unreduced={\"q\":(1)2}>]>} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.reduce(%arg0 init: %cst)",
      "%1 = sdy.all_reduce {\"p\", \"q\":(2)2} %0 out_sharding=<@m, [{}], unreduced={\"q\":(1)2}> : tensor<4xf32>",
      "return %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("explicit_reshards");
  TCase *tc = tcase_create("full");
  tcase_add_test(tc, compatible_op_is_left_alone);
  tcase_add_test(tc, tensors_sharded_exactly_alike_outweigh_a_shared_prefix);
  tcase_add_test(tc, full_tie_goes_to_the_later_mesh_axis);
  tcase_add_test(tc, pass_through_factor_beats_contraction_on_a_tie);
  tcase_add_test(tc, full_tie_between_factors_goes_to_the_later_factor);
  tcase_add_test(tc, one_need_replication_list_moves_to_the_batch_dim);
  tcase_add_test(tc, moved_sub_axes_of_one_axis_merge_into_it);
  tcase_add_test(tc, scalar_operands_leave_a_unary_choice);
  tcase_add_test(tc, result_keeping_a_sub_axis_unreduced_all_reduces_the_rest_of_it);
  tcase_add_test(tc, result_without_sharding_still_gets_the_all_reduce);
  tcase_add_test(tc, unary_tie_goes_to_the_tensor_without_sharded_permutation_dims);
  tcase_add_test(tc, binary_op_takes_the_majority_and_reshards_the_rest);
  tcase_add_test(tc, axis_part_no_factor_of_a_split_dim_takes_moves_to_the_last_factor);
  tcase_add_test(tc, reshape_with_coprime_axis_parts_regroups_them_over_its_factors);
  tcase_add_test(tc, chosen_axes_grow_into_a_longer_list_the_others_reach_by_slicing);
  tcase_add_test(tc, chosen_axes_do_not_grow_where_a_tensor_uses_the_extra_axis_elsewhere);
  tcase_add_test(tc, unary_op_keeps_the_sharding_of_its_larger_tensor);
  tcase_add_test(tc, op_with_a_users_custom_rule_keeps_its_shardings);
  tcase_add_test(tc, unreduced_operand_is_all_reduced_before_its_reshard);
  tcase_add_test(tc, free_unreduced_axis_of_a_manual_block_argument_is_all_reduced_in_the_body);
  tcase_add_test(tc, one_axis_on_two_factors_is_not_compatible);
  tcase_add_test(tc, sharded_contraction_gets_all_reduce_then_result_reshard);
  tcase_add_test(tc, need_replication_axes_move_to_a_batch_dimension);
  tcase_add_test(tc, returned_value_is_resharded_to_the_result_sharding);
  tcase_add_test(tc, propagation_pipeline_makes_collectives_explicit_on_request);
  tcase_add_test(tc, reshard_to_unreduced_becomes_replicated_and_sharded_to_unreduced);
  tcase_add_test(tc, default_mode_reshards_a_small_dot_result_to_what_its_operands_imply);
  tcase_add_test(tc, default_mode_reconciles_a_concatenate_whose_operands_differ_from_its_result);
  tcase_add_test(tc, op_on_meshes_differing_only_in_device_order_runs_on_the_majority_mesh);
  tcase_add_test(tc, unary_op_prefers_the_tensor_that_shards_no_permutation_dim);
  tcase_add_test(tc, scalar_operands_do_not_keep_need_replication_axes_from_moving);
  tcase_add_test(tc, scalar_operands_leave_an_op_unary);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
