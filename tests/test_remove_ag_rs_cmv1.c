/*
 * test_remove_ag_rs_cmv1.c - -sdy-remove-all-gather-reduce-scatter-for-cmv1
 * (export/remove_ag_rs_cmv1.h) on modules of its own: all-gathers feeding only a dot_general
 * go, a reduce-scatter that is a dot's only user is folded into the dot's sharding, and
 * collectives with other users or around other ops stay.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=4, \"q\"=2]>\n"
#define PASS "sdy-remove-all-gather-reduce-scatter-for-cmv1"

START_TEST(both_gathers_into_a_dot_general_go_and_its_reduce_scatter_folds) {
  char *out = et_run(MESH
      "func.func @f(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>},\n"
      "             %b: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<4x12xf32> {\n"
      "  %0 = sdy.all_gather [{}, {\"q\"}] %a out_sharding=<@m, [{}, {}]> : tensor<4x8xf32>\n"
      "  %1 = sdy.all_gather [{\"q\"}, {}] %b out_sharding=<@m, [{}, {}]> : tensor<8x12xf32>\n"
      "  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>\n"
      "  %3 = sdy.reduce_scatter [{\"p\"}, {}] %2 out_sharding=<@m, [{\"p\"}, {}]> : tensor<4x12xf32>\n"
      "  %4 = stablehlo.negate %3 : tensor<4x12xf32>\n"
      "  return %4 : tensor<4x12xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {
      "stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>}",
      "stablehlo.negate %0", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.all_gather");
  et_lacks(out, "sdy.reduce_scatter");
  free(out);
}
END_TEST

START_TEST(collectives_with_other_users_or_around_other_ops_stay) {
  char *out = et_run(MESH
      "func.func @f(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = sdy.all_gather [{\"p\"}, {}] %a out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n"
      "  %1 = stablehlo.dot %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : tensor<8x8xf32>\n"
      "  %3 = sdy.reduce_scatter [{\"q\"}, {}] %2 out_sharding=<@m, [{\"q\"}, {}]> : tensor<8x8xf32>\n"
      "  return %1, %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n}\n", PASS, NULL);
  /* The all-gather has two uses (both dot operands), the reduce-scatter follows an add. */
  static const char *const want[] = {
      "sdy.all_gather [{\"p\"}, {}] %arg0", "stablehlo.dot %0, %0", "stablehlo.add %1, %1",
      "sdy.reduce_scatter [{\"q\"}, {}] %2", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(a_dot_with_unreduced_axes_keeps_its_reduce_scatter) {
  char *out = et_run(MESH
      "func.func @f(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>},\n"
      "             %b: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}]>}) -> tensor<4x12xf32> {\n"
      "  %0 = stablehlo.dot %a, %b {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}], unreduced={\"q\"}>]>} : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>\n"
      "  %1 = sdy.reduce_scatter [{\"q\"}, {}] %0 out_sharding=<@m, [{\"q\"}, {}]> : tensor<4x12xf32>\n"
      "  return %1 : tensor<4x12xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {"unreduced={\"q\"}", "sdy.reduce_scatter [{\"q\"}, {}] %0", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("remove_ag_rs_cmv1");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, both_gathers_into_a_dot_general_go_and_its_reduce_scatter_folds);
  tcase_add_test(tc, collectives_with_other_users_or_around_other_ops_stay);
  tcase_add_test(tc, a_dot_with_unreduced_axes_keeps_its_reduce_scatter);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
