/*
 * test_permutation_factors.c - -sdy-resolve-permutation-factors
 * (export/permutation_factors.h) on modules of its own: local pads and slices stay, moving
 * ones are replicated along the permutation dim only, window ops always are, non-divisible
 * reshape groups are replicated unless every device keeps its elements.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"u\"=2, \"v\"=3]>\n"
#define PASS "sdy-resolve-permutation-factors"

START_TEST(pad_that_keeps_every_shard_local_is_left_alone) {
  /* 4 rows on u (shards of 2) padded 2 low and 2 high: result shard 0 = rows [0, 4) reads
   * operand rows 0..1, shard 1 = [4, 8) reads 2..3: both local. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x5xf32> {sdy.sharding = #sdy.sharding<@m, [{\"u\"}, {}]>}, %c: tensor<f32>) -> tensor<8x5xf32> {\n"
      "  %0 = stablehlo.pad %x, %c, low = [2, 0], high = [2, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"u\"}, {}]>]>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<8x5xf32>\n"
      "  return %0 : tensor<8x5xf32>\n}\n", PASS, NULL);
  et_lacks(out, "sdy.reshard");
  free(out);
  /* 3 rows (shards [0, 2) and [2, 3)) with interior padding 1 and high 1: result shard 1 =
   * [3, 6) starts on the padding after row 1 and counts row 1 (Shardy maps a shard's ends down
   * to operand rows), which shard 1 does not hold: replicated. */
  out = et_run(MESH
      "func.func @f(%x: tensor<3x5xf32> {sdy.sharding = #sdy.sharding<@m, [{\"u\"}, {}]>}, %c: tensor<f32>) -> tensor<6x5xf32> {\n"
      "  %0 = stablehlo.pad %x, %c, low = [0, 0], high = [1, 0], interior = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"u\"}, {}]>]>} : (tensor<3x5xf32>, tensor<f32>) -> tensor<6x5xf32>\n"
      "  return %0 : tensor<6x5xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{}, {}]>", "stablehlo.pad %0, %arg1",
                                     "sdy.reshard %1 <@m, [{\"u\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(slice_that_moves_rows_replicates_only_that_dim) {
  /* Rows [3:9) of 12 on v: result shard k = rows 3+2k.., operand shard k holds 4k..4k+3: shard
   * 0 needs rows 3..4, row 4 is on shard 1. Dim 1 (u) is not a permutation dim and stays. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<12x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"v\"}, {\"u\"}]>}) -> tensor<6x4xf32> {\n"
      "  %0 = stablehlo.slice %x [3:9, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"v\"}, {\"u\"}]>]>} : (tensor<12x4xf32>) -> tensor<6x4xf32>\n"
      "  return %0 : tensor<6x4xf32>\n}\n", PASS, "enable-halo-exchange=false");
  static const char *const want[] = {
      "sdy.reshard %arg0 <@m, [{}, {\"u\"}]> : tensor<12x4xf32>",
      "stablehlo.slice %0 [3:9, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"u\"}]>]>}",
      "sdy.reshard %1 <@m, [{\"v\"}, {\"u\"}]> : tensor<6x4xf32>", "return %2", NULL};
  et_has_in_order(out, want);
  free(out);
  /* Rows [0:11): result shard k = rows 4k.., inside operand shard k: local. */
  out = et_run(MESH
      "func.func @f(%x: tensor<12x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"v\"}, {}]>}) -> tensor<11x4xf32> {\n"
      "  %0 = stablehlo.slice %x [0:11, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"v\"}, {}]>]>} : (tensor<12x4xf32>) -> tensor<11x4xf32>\n"
      "  return %0 : tensor<11x4xf32>\n}\n", PASS, NULL);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(reverse_of_a_sharded_dim_is_replicated) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"v\"}, {\"u\"}]>}) -> tensor<6x4xf32> {\n"
      "  %0 = stablehlo.reverse %x, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"v\"}, {\"u\"}]>]>} : tensor<6x4xf32>\n"
      "  return %0 : tensor<6x4xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{\"v\"}, {}]>",
                                     "stablehlo.reverse %0, dims = [1]",
                                     "sdy.reshard %1 <@m, [{\"v\"}, {\"u\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(non_divisible_reshape_group_is_replicated_unless_local) {
  /* 10 on u*v=6 devices (shards of 2, padded to 12) into 2x5 on u, v: device (u=0, v=2) holds
   * operand elements 4..5 but result row 0 cols 4.. = element 4 only; device (1, 0) holds 6..7
   * and needs 5..6: not local. The trailing 4 (on nothing) is its own divisible group. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<10x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"u\", \"v\"}, {}]>}) -> tensor<2x5x4xf32> {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"u\"}, {\"v\"}, {}]>]>} : (tensor<10x4xf32>) -> tensor<2x5x4xf32>\n"
      "  return %0 : tensor<2x5x4xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@m, [{}, {}]>",
                                     "<@m, [{}, {}, {}]>",
                                     "sdy.reshard %1 <@m, [{\"u\"}, {\"v\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
  /* 9 on v (shards of 3) into 3x3 on v: device k holds elements 3k..3k+2 = row k: local. */
  out = et_run(MESH
      "func.func @f(%x: tensor<9xf32> {sdy.sharding = #sdy.sharding<@m, [{\"v\"}]>}) -> tensor<3x3xf32> {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"v\"}, {}]>]>} : (tensor<9xf32>) -> tensor<3x3xf32>\n"
      "  return %0 : tensor<3x3xf32>\n}\n", PASS, NULL);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(unknown_option_is_an_error_naming_it) {
  et_run_fails(MESH "func.func @f() {\n  return\n}\n", PASS, "halo=true", "halo");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("permutation_factors");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, pad_that_keeps_every_shard_local_is_left_alone);
  tcase_add_test(tc, slice_that_moves_rows_replicates_only_that_dim);
  tcase_add_test(tc, reverse_of_a_sharded_dim_is_replicated);
  tcase_add_test(tc, non_divisible_reshape_group_is_replicated_unless_local);
  tcase_add_test(tc, unknown_option_is_an_error_naming_it);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
