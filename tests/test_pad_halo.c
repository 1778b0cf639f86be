/*
 * test_pad_halo.c - -sdy-resolve-permutation-factors=enable-halo-exchange=true on sharded pads
 * and slices (export/pad_halo.h), on modules of its own: the neighbour permutes, the padded
 * buffer and the dynamic-slice start per shard, and the forms that fall back to replication.
 * (tests/halo_exchange_sim.py checks the values the rewrites compute.)
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @g = <[\"p\"=3, \"q\"=2]>\n"
#define PASS "sdy-resolve-permutation-factors"
#define HALO "enable-halo-exchange=true"
#define SH "{sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {\"q\"}]>]>}"

START_TEST(low_padding_on_three_shards_takes_one_left_hop_and_slices_at_i_plus_three) {
  /* 6 rows on p (shards of 2) padded low by 2 to 8 (shards of 3): shard i reads rows
   * [3i-2, 3i+1), so shard 1 needs row 1 of shard 0. Buffer: X = 3 rows of padding each side
   * of [left neighbour, own]; start = X - L + 1*2 + i*(3 - 2) = i + 3. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {\"q\"}]>}) -> tensor<8x4xf32> {\n"
      "  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %0 = stablehlo.pad %x, %c, low = [2, 0], high = [0, 0], interior = [0, 0] " SH " : (tensor<6x4xf32>, tensor<f32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n}\n", PASS, HALO);
  static const char *const want[] = {
      "sdy.manual_computation(%arg0, %cst) in_shardings=[<@g, [{\"p\"}, {\"q\"}]>, <@g, []>] out_shardings=[<@g, [{\"p\"}, {\"q\"}]>] manual_axes={\"p\", \"q\"} (%arg1: tensor<2x2xf32>, %arg2: tensor<f32>)",
      "source_target_pairs = dense<[[0, 2], [1, 3], [2, 4], [3, 5]]> : tensor<4x2xi64>",
      "stablehlo.concatenate %2, %arg1, dim = 0",
      "stablehlo.pad %3, %arg2, low = [3, 0], high = [3, 0], interior = [0, 0]",
      "stablehlo.divide %6, %c : tensor<i64>", "stablehlo.constant dense<3> : tensor<i64>",
      "stablehlo.remainder %7, %c_0", "stablehlo.constant dense<1> : tensor<i64>",
      "stablehlo.constant dense<3> : tensor<i64>", "stablehlo.multiply %8, %c_1", "stablehlo.add %9, %c_2",
      "stablehlo.maximum %10, %c_3", "stablehlo.dynamic_slice %4, %11, %c_3, sizes = [3, 2]",
      "sdy.return %12 : tensor<3x2xf32>", "} : (tensor<6x4xf32>, tensor<f32>) -> tensor<9x4xf32>",
      "stablehlo.slice %0 [0:8, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {\"q\"}]>]>}", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(a_slice_shifted_by_one_row_takes_one_right_hop_and_slices_the_unsharded_dim_last) {
  /* Rows [1:6) of 6 on p: shard i reads rows [2i+1, 2i+3), one past its own; columns [1:3)
   * of the unsharded... q shards columns, so only the row dim is exchanged. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4x5xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {}, {}]>}) -> tensor<5x4x2xf32> {\n"
      "  %0 = stablehlo.slice %x [1:6, 0:4, 1:3] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {}, {}]>]>} : (tensor<6x4x5xf32>) -> tensor<5x4x2xf32>\n"
      "  return %0 : tensor<5x4x2xf32>\n}\n", PASS, HALO);
  static const char *const want[] = {
      "stablehlo.constant dense<0.000000e+00> : tensor<f32>",
      "manual_axes={\"p\"} (%arg1: tensor<2x4x5xf32>, %arg2: tensor<f32>)",
      "source_target_pairs = dense<[[2, 0], [3, 1], [4, 2], [5, 3]]>",
      "stablehlo.concatenate %arg1, %2, dim = 0",
      "stablehlo.pad %3, %arg2, low = [2, 0, 0], high = [2, 0, 0]",
      "stablehlo.dynamic_slice %4, %11, %c_3, %c_3, sizes = [2, 4, 5]",
      "stablehlo.slice %12 [0:2, 0:4, 1:3]", "sdy.return %13 : tensor<2x4x2xf32>",
      "stablehlo.slice %0 [0:5, 0:4, 0:2]", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(a_dim_on_two_axes_combines_their_indices) {
  /* Dim 0 on {"p", "q"} (6 shards of 2, 13 results in shards of 3: two right hops): the
   * shard index is p*2 + q, q read from the position without a divide (the minor axis). */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<12xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\", \"q\"}]>}) -> tensor<13xf32> {\n"
      "  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %0 = stablehlo.pad %x, %c, low = [1], high = [0], interior = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\", \"q\"}]>]>} : (tensor<12xf32>, tensor<f32>) -> tensor<13xf32>\n"
      "  return %0 : tensor<13xf32>\n}\n", PASS, HALO);
  static const char *const want[] = {
      "source_target_pairs = dense<[[1, 0], [2, 1], [3, 2], [4, 3], [5, 4]]>",
      "source_target_pairs = dense<[[2, 0], [3, 1], [4, 2], [5, 3]]>", "stablehlo.concatenate %arg1, %2, %3, dim = 0",
      "stablehlo.divide %7, %c : tensor<i64>", "stablehlo.remainder %8, %c_0", "stablehlo.remainder %7, %c_1",
      "stablehlo.multiply %9, %c_2", "stablehlo.add %11, %10", "sizes = [3]", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(nonzero_padding_strided_slices_and_far_hops_are_replicated) {
  /* A padding value of 1 (devices without a neighbour would read zeros), a slice of stride 4,
   * and a slice whose first shard needs rows 3 hops away on 3 shards: all resolved by
   * replication. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}]>}) -> (tensor<7xf32>, tensor<2xf32>, tensor<1xf32>) {\n"
      "  %c = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n"
      "  %0 = stablehlo.pad %x, %c, low = [1], high = [0], interior = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}]>]>} : (tensor<6xf32>, tensor<f32>) -> tensor<7xf32>\n"
      "  %1 = stablehlo.slice %x [1:6:4] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}]>]>} : (tensor<6xf32>) -> tensor<2xf32>\n"
      "  %2 = stablehlo.slice %x [5:6] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}]>]>} : (tensor<6xf32>) -> tensor<1xf32>\n"
      "  return %0, %1, %2 : tensor<7xf32>, tensor<2xf32>, tensor<1xf32>\n}\n", PASS, HALO);
  et_lacks(out, "manual_computation");
  static const char *const want[] = {"sdy.reshard %arg0 <@g, [{}]>", "stablehlo.pad",
                                     "sdy.reshard %arg0 <@g, [{}]>", "stablehlo.slice",
                                     "sdy.reshard %arg0 <@g, [{}]>", "stablehlo.slice", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("pad_halo");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, low_padding_on_three_shards_takes_one_left_hop_and_slices_at_i_plus_three);
  tcase_add_test(tc, a_slice_shifted_by_one_row_takes_one_right_hop_and_slices_the_unsharded_dim_last);
  tcase_add_test(tc, a_dim_on_two_axes_combines_their_indices);
  tcase_add_test(tc, nonzero_padding_strided_slices_and_far_hops_are_replicated);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
