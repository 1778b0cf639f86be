/*
 * test_single_device.c - single-device (maximal) shardings in the full explicit reshards
 * (export/single_device.h), on modules of its own: operands brought to the device through
 * the replicated sharding, results replicated on the main mesh and resharded for their users,
 * and Shardy's errors.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESHES "sdy.mesh @main = <[\"r\"=4]>\nsdy.mesh @dev3 = <[], device_ids=[3]>\nsdy.mesh @dev1 = <[], device_ids=[1]>\n"
#define PASS "sdy-insert-explicit-reshards"
#define FULL "enable-full-version=true"

START_TEST(sharded_operand_goes_through_replicated_and_result_comes_back_sharded) {
  char *out = et_run(MESHES
      "func.func @f(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@main, [{}, {\"r\"}]>})"
      " -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@main, [{}, {\"r\"}]>}) {\n"
      "  %0 = stablehlo.cosine %x {sdy.sharding = #sdy.sharding_per_value<[<@dev3, []>]>} : tensor<8x4xf32>\n"
      "  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@main, [{}, {\"r\"}]>]>} : tensor<8x4xf32>\n"
      "  return %1 : tensor<8x4xf32>\n}\n", PASS, FULL);
  static const char *const want[] = {
      "sdy.reshard %arg0 <@main, [{}, {}]>", "sdy.reshard %0 <@dev3, []>",
      "stablehlo.cosine %1 {sdy.sharding = #sdy.sharding_per_value<[<@dev3, []>]>}",
      "sdy.reshard %2 <@main, [{}, {}]>", "sdy.reshard %3 <@main, [{}, {\"r\"}]>",
      "stablehlo.negate %4", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(chained_devices_and_mixed_results) {
  /* dev3's op feeds dev1's; its second result (on main, sharded) is placed on dev3 too. */
  char *out = et_run(MESHES
      "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@main, [{}]>}) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0:2 = stablehlo.custom_call @two(%x) {sdy.sharding = #sdy.sharding_per_value<[<@dev3, []>, <@main, [{\"r\"}]>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
      "  %1 = stablehlo.custom_call @one(%0#0) {sdy.sharding = #sdy.sharding_per_value<[<@dev1, []>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %1, %0#1 : tensor<8xf32>, tensor<8xf32>\n}\n", PASS, FULL);
  static const char *const want[] = {
      "sdy.reshard %arg0 <@dev3, []>",
      "sdy.sharding_per_value<[<@dev3, []>, <@dev3, []>]>",
      "sdy.reshard %1#0 <@main, [{}]>", "sdy.reshard %1#1 <@main, [{}]>",
      "sdy.reshard %3 <@main, [{\"r\"}]>", "sdy.reshard %2 <@dev1, []>",
      "stablehlo.custom_call @one(%5)", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(single_device_signature_and_conflicting_devices_are_errors) {
  et_run_fails(MESHES "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@dev1, []>}) -> tensor<8xf32> {\n"
               "  return %x : tensor<8xf32>\n}\n", PASS, FULL,
               "function argument 0 cannot have a single-device (maximal) sharding attribute");
  et_run_fails(MESHES "func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
               "  %0:2 = stablehlo.custom_call @two(%x) {sdy.sharding = #sdy.sharding_per_value<[<@dev3, []>, <@dev1, []>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
               "  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>\n}\n", PASS, FULL,
               "has conflicting single-device result shardings");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("single_device");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sharded_operand_goes_through_replicated_and_result_comes_back_sharded);
  tcase_add_test(tc, chained_devices_and_mixed_results);
  tcase_add_test(tc, single_device_signature_and_conflicting_devices_are_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
