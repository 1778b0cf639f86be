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

static Suite *suite(void) {
  Suite *s = suite_create("explicit_reshards");
  TCase *tc = tcase_create("full");
  tcase_add_test(tc, compatible_op_is_left_alone);
  tcase_add_test(tc, binary_op_takes_the_majority_and_reshards_the_rest);
  tcase_add_test(tc, sharded_contraction_gets_all_reduce_then_result_reshard);
  tcase_add_test(tc, need_replication_axes_move_to_a_batch_dimension);
  tcase_add_test(tc, returned_value_is_resharded_to_the_result_sharding);
  tcase_add_test(tc, propagation_pipeline_makes_collectives_explicit_on_request);
  tcase_add_test(tc, reshard_to_unreduced_becomes_replicated_and_sharded_to_unreduced);
  tcase_add_test(tc, default_mode_reshards_a_small_dot_result_to_what_its_operands_imply);
  tcase_add_test(tc, op_on_meshes_differing_only_in_device_order_runs_on_the_majority_mesh);
  tcase_add_test(tc, unary_op_prefers_the_tensor_that_shards_no_permutation_dim);
  tcase_add_test(tc, scalar_operands_do_not_keep_need_replication_axes_from_moving);
  tcase_add_test(tc, scalar_operands_leave_an_op_unary);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
