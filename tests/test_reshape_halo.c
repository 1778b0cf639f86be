/*
 * test_reshape_halo.c - -sdy-resolve-permutation-factors=enable-halo-exchange=true on reshapes
 * that split a dim unevenly (export/reshape_halo.h), on modules of its own: the neighbour
 * permute, the table of slice starts per mesh position, the block reshaped to the result's
 * local shape, and the reshapes left to replication. (tests/halo_exchange_sim.py checks the
 * values the rewrite computes.)
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @g = <[\"p\"=4, \"q\"=2]>\n"
#define PASS "sdy-resolve-permutation-factors"
#define HALO "enable-halo-exchange=true"

START_TEST(splitting_ten_rows_into_two_by_five_reads_one_left_neighbour_at_tabled_starts) {
  /* 10 rows on p (shards of 3, padded to 12) into 2x5 on p:(1)2 x p:(2)2 (blocks of 1x3).
   * Device p = 2*p1 + p2 takes rows 5*p1 + 3*p2 + [0, 3); p = 2, 3 need the shard before.
   * Start in [pad 3 | shard p-1 | shard p | pad 3]: 3 + lin - (p - 1)*3 = 6, 6, 5, 5 for
   * p = 0..3, each for both q. The q-sharded dim stays outside the manual axes. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<10x4xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {\"q\"}]>}) -> tensor<2x5x4xf32> {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\":(1)2}, {\"p\":(2)2}, {\"q\"}]>]>} : (tensor<10x4xf32>) -> tensor<2x5x4xf32>\n"
      "  return %0 : tensor<2x5x4xf32>\n}\n", PASS, HALO);
  static const char *const want[] = {
      "stablehlo.pad %arg0, %cst, low = [0, 0], high = [2, 0], interior = [0, 0]",
      "out_shardings=[<@g, [{\"p\":(1)2}, {\"p\":(2)2}, {\"q\"}]>] manual_axes={\"p\"} (%arg1: tensor<3x4xf32>, %arg2: tensor<f32>)",
      "source_target_pairs = dense<[[0, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5, 7]]>",
      "stablehlo.concatenate %3, %arg1, dim = 0", "stablehlo.pad %4, %arg2, low = [3, 0], high = [3, 0]",
      "stablehlo.constant dense<[6, 6, 6, 6, 5, 5, 5, 5]> : tensor<8xi64>",
      "stablehlo.dynamic_slice %c, %7, sizes = [1]", "stablehlo.reshape %8 : (tensor<1xi64>) -> tensor<i64>",
      "stablehlo.dynamic_slice %5, %9, %c_0, sizes = [3, 4]",
      "stablehlo.reshape %10 {sdy.sharding = #sdy.sharding_per_value<[<@g, [{}, {}, {}]>]>} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>",
      "} : (tensor<12x4xf32>, tensor<f32>) -> tensor<2x6x4xf32>", "stablehlo.slice %1 [0:2, 0:5, 0:4]", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(a_merge_and_a_split_with_wide_leading_blocks_are_replicated) {
  /* 2x5 -> 10 merges dims; 12 -> 4x3 on p:(1)2 x p:(2)2 gives blocks of 2x2, not one run of
   * the operand dim. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x5xf32> {sdy.sharding = #sdy.sharding<@g, [{}, {\"q\"}]>}, %y: tensor<12xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}]>}) -> (tensor<10xf32>, tensor<4x3xf32>) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"q\"}]>]>} : (tensor<2x5xf32>) -> tensor<10xf32>\n"
      "  %1 = stablehlo.reshape %y {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\":(1)2}, {\"p\":(2)2}]>]>} : (tensor<12xf32>) -> tensor<4x3xf32>\n"
      "  return %0, %1 : tensor<10xf32>, tensor<4x3xf32>\n}\n", PASS, HALO);
  et_lacks(out, "manual_computation");
  static const char *const want[] = {"sdy.reshard %arg0 <@g, [{}, {}]>", "stablehlo.reshape",
                                     "sdy.reshard %arg1 <@g, [{}]>", "stablehlo.reshape", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reshape_halo");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, splitting_ten_rows_into_two_by_five_reads_one_left_neighbour_at_tabled_starts);
  tcase_add_test(tc, a_merge_and_a_split_with_wide_leading_blocks_are_replicated);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
