/*
 * test_verify_stablehlo_collective.c - the verifier's checks of StableHLO's collectives
 * (ir/verify_stablehlo_collective.c): dimensions, shapes, replica groups and source-target
 * pairs with StableHLO's messages, ids within the module's devices; valid collectives verify
 * and get their sharding rule.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mlir/mlir.h"
#include "rules/populate.h"
#include "test_support.h"

/* One op `op` (result %0 of `ret_type`) in a function of one 4x8xf32 argument on a 4-device
 * mesh. */
static const char *verify_op(const char *op, const char *ret_type) {
  static char text[4096];
  snprintf(text, sizeof text,
           "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
           "func.func @main(%%arg0: tensor<4x8xf32>) -> %s {\n"
           "  %%0 = %s\n"
           "  return %%0 : %s\n"
           "}\n",
           ret_type, op, ret_type);
  return sp_test_verify(text);
}

#define GROUPS "replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>"

START_TEST(valid_collectives_verify_and_get_their_rules) {
  static const char text[] =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
      "func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = \"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, " GROUPS "} : "
      "(tensor<4x8xf32>) -> tensor<4x16xf32>\n"
      "  %1 = \"stablehlo.reduce_scatter\"(%0) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {scatter_dimension = 1 : i64, " GROUPS "} : (tensor<4x16xf32>) -> tensor<4x8xf32>\n"
      "  %2 = \"stablehlo.all_to_all\"(%1) {split_dimension = 1 : i64, concat_dimension = 0 : "
      "i64, split_count = 2 : i64, " GROUPS "} : (tensor<4x8xf32>) -> tensor<8x4xf32>\n"
      "  %3 = \"stablehlo.collective_permute\"(%arg0) {source_target_pairs = dense<[[0, 1], "
      "[1, 0], [2, 3]]> : tensor<3x2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  %4 = \"stablehlo.collective_broadcast\"(%3) {replica_groups = dense<[[2, 1]]> : "
      "tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  %5 = \"stablehlo.all_reduce\"(%4) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>} : "
      "(tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  %6 = \"stablehlo.all_reduce\"(%5) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = "
      "[#stablehlo.axis_ref<name = \"y\">]>} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  return %6 : tensor<4x8xf32>\n"
      "}\n";
  ck_assert_str_eq(sp_test_verify(text), "");
  sp_module *m = sp_test_parse(text);
  sp_rules_options opts;
  sp_err err;
  ck_assert_int_eq(sp_rules_parse_options("", &opts, &err), SP_OK);
  ck_assert_msg(sp_rules_populate(m, &opts, NULL, NULL, NULL, &err) == SP_OK, "%s", err.msg);
  sp_module_free(m);
}
END_TEST

/* The audit's probes, each once verified and then refused by the op's sharding rule (or, for
 * collective_permute, planned over a device the mesh does not have). */
START_TEST(probes_with_dimensions_or_devices_out_of_range_are_rejected) {
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 7 : i64, replica_groups "
                             "= dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op all_gather_dim must be a valid index of "
                   "operand");
  ck_assert_str_eq(verify_op("\"stablehlo.all_to_all\"(%arg0) {split_dimension = 5 : i64, "
                             "concat_dimension = -1 : i64, split_count = 0 : i64, replica_groups = "
                             "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_to_all' op AllToAll split_count must be > 0");
  ck_assert_str_eq(verify_op("\"stablehlo.all_to_all\"(%arg0) {split_dimension = 5 : i64, "
                             "concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = "
                             "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_to_all' op AllToAll split_dimension 5 is "
                   "out-of-bounds for input rank 2");
  ck_assert_str_eq(verify_op("\"stablehlo.reduce_scatter\"(%arg0) ({\n"
                             "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                             "    %s = stablehlo.add %a, %b : tensor<f32>\n"
                             "    stablehlo.return %s : tensor<f32>\n"
                             "  }) {scatter_dimension = 9 : i64, replica_groups = dense<[[0, 1]]> : "
                             "tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
                             "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.reduce_scatter' op scatter dim should be less than "
                   "operand/result rank");
  ck_assert_str_eq(verify_op("\"stablehlo.collective_permute\"(%arg0) {source_target_pairs = "
                             "dense<[[0, 9]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.collective_permute' op source_target_pairs names "
                   "device 9, but the module's meshes have 4 devices");
}
END_TEST

START_TEST(replica_groups_and_pairs_are_checked_as_stablehlo_does) {
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, replica_groups "
                             "= dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x16xf32>", "tensor<4x16xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op replica id #1 seen more than once");
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, replica_groups "
                             "= dense<[[0, 2]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x16xf32>", "tensor<4x16xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op replica id #1 not seen in replica groups");
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, replica_groups "
                             "= dense<[0, 1]> : tensor<2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x16xf32>", "tensor<4x16xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op replica groups should be a rank 2 tensor");
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, replica_groups "
                             "= dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>} : "
                             "(tensor<4x8xf32>) -> tensor<4x64xf32>", "tensor<4x64xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op replica id #7 is not a device of the "
                   "module's meshes (4 devices)");
  ck_assert_str_eq(verify_op("\"stablehlo.all_gather\"(%arg0) {all_gather_dim = 1 : i64, " GROUPS "} "
                             ": (tensor<4x8xf32>) -> tensor<4x12xf32>", "tensor<4x12xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_gather' op result gather dimension has size 12, "
                   "expected to be a multiple of operand gather dimension size 8");
  ck_assert_str_eq(verify_op("\"stablehlo.all_to_all\"(%arg0) {split_dimension = 1 : i64, "
                             "concat_dimension = 0 : i64, split_count = 2 : i64, " GROUPS "} : "
                             "(tensor<4x8xf32>) -> tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_to_all' op inferred type(s) 'tensor<8x4xf32>' are "
                   "incompatible with return type(s) of operation 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_op("\"stablehlo.all_to_all\"(%arg0) {split_dimension = 1 : i64, "
                             "concat_dimension = 0 : i64, split_count = 4 : i64, " GROUPS "} : "
                             "(tensor<4x8xf32>) -> tensor<16x2xf32>", "tensor<16x2xf32>"),
                   "s.mlir:3:8: 'stablehlo.all_to_all' op group size of replica_groups must be 4");
  ck_assert_str_eq(verify_op("\"stablehlo.collective_permute\"(%arg0) {source_target_pairs = "
                             "dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.collective_permute' op duplicate sources not allowed.");
  ck_assert_str_eq(verify_op("\"stablehlo.collective_permute\"(%arg0) {source_target_pairs = "
                             "dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.collective_permute' op expect source_target_pairs "
                   "attribute of shape (N, 2), but got (1, 3)");
  ck_assert_str_eq(verify_op("\"stablehlo.collective_permute\"(%arg0) {source_target_pairs = "
                             "dense<[[0, -1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.collective_permute' op replica ids in "
                   "source_target_pairs must be >= 0.");
  ck_assert_str_eq(verify_op("\"stablehlo.collective_broadcast\"(%arg0) {replica_groups = "
                             "dense<[[1, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> "
                             "tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.collective_broadcast' op replica id #1 seen more than "
                   "once");
}
END_TEST

int main(void) {
  Suite *s = suite_create("verify_stablehlo_collective");
  TCase *tc = tcase_create("collectives");
  tcase_add_test(tc, valid_collectives_verify_and_get_their_rules);
  tcase_add_test(tc, probes_with_dimensions_or_devices_out_of_range_are_rejected);
  tcase_add_test(tc, replica_groups_and_pairs_are_checked_as_stablehlo_does);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
