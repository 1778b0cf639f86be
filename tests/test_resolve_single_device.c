/*
 * test_resolve_single_device.c - -sdy-resolve-single-device-sharding
 * (export/resolve_single_device.h) on modules of its own: the partition-id guard, the if with
 * a zeros branch, the all-reduce over every axis of the main mesh, and modules it leaves alone.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESHES "sdy.mesh @m = <[\"p\"=2, \"q\"=3]>\nsdy.mesh @d3 = <[], device_ids=[3]>\n"
#define PASS "sdy-resolve-single-device-sharding"

START_TEST(an_op_on_device_three_runs_under_a_guard_and_is_all_reduced_over_every_axis) {
  char *out = et_run(MESHES
      "func.func @f(%x: tensor<6xi32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) -> tensor<6xi32> {\n"
      "  %0 = sdy.reshard %x <@d3, []> : tensor<6xi32>\n"
      "  %1 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@d3, []>]>} : tensor<6xi32>\n"
      "  %2 = sdy.reshard %1 <@m, [{}]> : tensor<6xi32>\n"
      "  %3 = stablehlo.negate %2 : tensor<6xi32>\n"
      "  return %3 : tensor<6xi32>\n}\n", PASS, NULL);
  static const char *const want[] = {
      "%0 = stablehlo.partition_id : tensor<ui32>",
      "%1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<i64>",
      "%c = stablehlo.constant dense<3> : tensor<i64>",
      "EQ, %1, %c : (tensor<i64>, tensor<i64>) -> tensor<i1>",
      "\"stablehlo.if\"(%2) ({",
      "stablehlo.multiply %arg0, %arg0 : tensor<6xi32>",
      "stablehlo.return %6 : tensor<6xi32>",
      "}, {",
      "stablehlo.constant dense<0> : tensor<6xi32>",
      "}) : (tensor<i1>) -> tensor<6xi32>",
      "%4 = sdy.all_reduce {\"p\", \"q\"} %3 out_sharding=<@m, [{}]> : tensor<6xi32>",
      "stablehlo.negate %4", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  et_lacks(out, "@d3, []>]");
  free(out);
}
END_TEST

START_TEST(a_reshard_to_another_sharding_of_the_result_stays) {
  char *out = et_run(MESHES
      "func.func @f(%x: tensor<6xf32>) -> tensor<6xf32> {\n"
      "  %0 = stablehlo.sine %x {sdy.sharding = #sdy.sharding_per_value<[<@d3, []>]>} : tensor<6xf32>\n"
      "  %1 = sdy.reshard %0 <@m, [{\"q\"}]> : tensor<6xf32>\n"
      "  return %1 : tensor<6xf32>\n}\n", PASS, NULL);
  static const char *const want[] = {
      "stablehlo.sine %arg0 : tensor<6xf32>", "stablehlo.constant dense<0.000000e+00> : tensor<6xf32>",
      "sdy.all_reduce {\"p\", \"q\"} %3 out_sharding=<@m, [{}]>", "sdy.reshard %4 <@m, [{\"q\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(a_module_without_single_device_shardings_is_unchanged) {
  const char *in = MESHES
      "func.func @f(%x: tensor<6xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}]>}) -> tensor<6xf32> {\n"
      "  %0 = stablehlo.sine %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}]>]>} : tensor<6xf32>\n"
      "  return %0 : tensor<6xf32>\n}\n";
  char *out = et_run(in, PASS, NULL);
  et_lacks(out, "stablehlo.if");
  et_lacks(out, "partition_id");
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("resolve_single_device");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, an_op_on_device_three_runs_under_a_guard_and_is_all_reduced_over_every_axis);
  tcase_add_test(tc, a_reshard_to_another_sharding_of_the_result_stays);
  tcase_add_test(tc, a_module_without_single_device_shardings_is_unchanged);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
