/*
 * test_reverse_halo.c - -sdy-resolve-permutation-factors=enable-halo-exchange=true on a
 * sharded reverse (export/reverse_halo.h), on modules of its own: the reversed mesh, the halo
 * shift of a non-divisible dim and its collective permutes, and reuse of an equal mesh.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @g = <[\"p\"=3, \"q\"=2]>\n"
#define PASS "sdy-resolve-permutation-factors"
#define HALO "enable-halo-exchange=true"

START_TEST(divisible_reverse_runs_on_the_mesh_reversed_along_its_axes) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {\"q\"}]>}) -> tensor<6x4xf32> {\n"
      "  %0 = stablehlo.reverse %x, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {\"q\"}]>]>} : tensor<6x4xf32>\n"
      "  %1 = stablehlo.reverse %0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {\"q\"}]>]>} : tensor<6x4xf32>\n"
      "  return %1 : tensor<6x4xf32>\n}\n", PASS, HALO);
  /* Position (p, q) takes the device at (2 - p, q). Both reverses share the one mesh. */
  static const char *const want[] = {
      "sdy.mesh @g_reversed = <[\"p\"=3, \"q\"=2], device_ids=[4, 5, 2, 3, 0, 1]>",
      "stablehlo.reverse %arg0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g_reversed, [{\"p\"}, {\"q\"}]>]>}",
      "sdy.reshard %0 <@g, [{\"p\"}, {\"q\"}]> : tensor<6x4xf32>",
      "stablehlo.reverse %1, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g_reversed,",
      NULL};
  et_has_in_order(out, want);
  et_lacks(out, "g_reversed_0");
  et_lacks(out, "manual_computation");
  free(out);
}
END_TEST

START_TEST(non_divisible_reverse_pads_shifts_by_the_padding_and_slices) {
  /* 5 rows on p (shards of 2, padding 1): q = 0, r = 1: each shard takes the last row of the
   * shard before it and its own first row. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<5x4xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {}]>}) -> tensor<5x4xf32> {\n"
      "  %0 = stablehlo.reverse %x, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {}]>]>} : tensor<5x4xf32>\n"
      "  return %0 : tensor<5x4xf32>\n}\n", PASS, HALO);
  static const char *const want[] = {
      "stablehlo.constant dense<0.000000e+00> : tensor<f32>",
      "stablehlo.pad %arg0, %cst, low = [0, 0], high = [1, 0], interior = [0, 0]",
      "sdy.manual_computation(%0) in_shardings=[<@g, [{\"p\"}, {}]>] out_shardings=[<@g, [{\"p\"}, {}]>] manual_axes={\"p\"} (%arg1: tensor<2x4xf32>)",
      "source_target_pairs = dense<[[0, 2], [1, 3], [2, 4], [3, 5]]> : tensor<4x2xi64>",
      "stablehlo.slice %5 [1:2, 0:4]", "stablehlo.slice %arg1 [0:1, 0:4]",
      "stablehlo.concatenate %6, %7, dim = 0", "sdy.return %8",
      "stablehlo.reverse %1, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g_reversed, [{\"p\"}, {}]>]>} : tensor<6x4xf32>",
      "sdy.reshard %2 <@g, [{\"p\"}, {}]> : tensor<6x4xf32>",
      "stablehlo.slice %3 [0:5, 0:4]", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(without_halo_exchange_the_reverse_is_replicated) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}, {}]>}) -> tensor<6x4xf32> {\n"
      "  %0 = stablehlo.reverse %x, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@g, [{\"p\"}, {}]>]>} : tensor<6x4xf32>\n"
      "  return %0 : tensor<6x4xf32>\n}\n", PASS, "enable-halo-exchange=false");
  et_lacks(out, "reversed");
  static const char *const want[] = {"sdy.reshard %arg0 <@g, [{}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reverse_halo");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, divisible_reverse_runs_on_the_mesh_reversed_along_its_axes);
  tcase_add_test(tc, non_divisible_reverse_pads_shifts_by_the_padding_and_slices);
  tcase_add_test(tc, without_halo_exchange_the_reverse_is_replicated);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
