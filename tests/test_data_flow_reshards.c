/*
 * test_data_flow_reshards.c - reshards into the results of data-flow ops
 * (export/data_flow_reshards.h) in the full explicit reshards, on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @k = <[\"s\"=2, \"t\"=4]>\n"
#define PASS "sdy-insert-explicit-reshards"
#define FULL "enable-full-version=true"

START_TEST(barrier_operand_takes_the_result_sharding_even_across_meshes) {
  char *out = et_run(MESH "sdy.mesh @k2 = <[\"u\"=8]>\n"
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@k, [{\"t\"}]>}, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {\n"
      "  %0:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@k2, [{\"u\"}]>, <@k, [{}]>]>} %x, %y : tensor<16xf32>, tensor<16xf32>\n"
      "  return %0#0, %0#1 : tensor<16xf32>, tensor<16xf32>\n}\n", PASS, FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@k2, [{\"u\"}]>",
                                     "stablehlo.optimization_barrier", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg1");
  free(out);
}
END_TEST

START_TEST(while_init_and_body_return_are_resharded_to_the_loop_sharding) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@k, [{\"s\"}]>}, %n: tensor<i32>) -> tensor<16xf32> {\n"
      "  %0:2 = stablehlo.while(%a = %x, %i = %n) : tensor<16xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"t\"}]>, <@k, []>]>}\n"
      "   cond {\n"
      "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %1 = stablehlo.sine %a {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"s\"}]>]>} : tensor<16xf32>\n"
      "    stablehlo.return %1, %i : tensor<16xf32>, tensor<i32>\n"
      "  }\n"
      "  return %0#0 : tensor<16xf32>\n}\n", PASS, FULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@k, [{\"t\"}]>", "stablehlo.while",
                                     "stablehlo.sine", "sdy.reshard", "<@k, [{\"t\"}]>",
                                     "stablehlo.return", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST


START_TEST(branch_returning_an_outside_value_reshards_it_after_its_definition) {
  /* One branch gives back the function's argument, the other a value of its own: the first
   * reshard goes to the function's start (after the argument's definition), the second
   * stays right before its branch's return. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@k, [{\"s\"}]>}, %p: tensor<i32>) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@k, [{\"t\"}]>}) {\n"
      "  %0 = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"s\"}]>]>} : tensor<16xf32>\n"
      "  %1 = \"stablehlo.case\"(%p) ({\n"
      "    stablehlo.return %x : tensor<16xf32>\n"
      "  }, {\n"
      "    %2 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"s\"}]>]>} : tensor<16xf32>\n"
      "    stablehlo.return %2 : tensor<16xf32>\n"
      "  }) {sdy.sharding = #sdy.sharding_per_value<[<@k, [{\"t\"}]>]>} : (tensor<i32>) -> tensor<16xf32>\n"
      "  return %1 : tensor<16xf32>\n}\n", PASS, FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@k, [{\"t\"}]> : tensor<16xf32>", "%1 = stablehlo.negate %arg0",
      "stablehlo.return %0 : tensor<16xf32>", "stablehlo.abs %1",
      "sdy.reshard %3 <@k, [{\"t\"}]> : tensor<16xf32>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("data_flow_reshards");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, barrier_operand_takes_the_result_sharding_even_across_meshes);
  tcase_add_test(tc, while_init_and_body_return_are_resharded_to_the_loop_sharding);
  tcase_add_test(tc, branch_returning_an_outside_value_reshards_it_after_its_definition);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
