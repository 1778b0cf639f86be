/*
 * test_constants.c - the constant-or-scalar splitter and merger (propagation/constants.h),
 * text in, text out.
 */
#include <check.h>

#include "pass_test.h"
#include "propagation/constants.h"
#include "test_support.h"

START_TEST(constant_expressions_and_scalar_broadcasts_get_one_copy_per_use) {
  const char *in =
      "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>\n"
      "  %1 = stablehlo.constant dense<2.0> : tensor<8x8xf32>\n"
      "  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>\n"
      "  %3 = stablehlo.multiply %2, %arg0 : tensor<8x8xf32>\n"
      "  %4 = stablehlo.subtract %2, %arg0 : tensor<8x8xf32>\n"
      "  %5 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>\n"
      "  %6 = stablehlo.add %5, %5 : tensor<8x8xf32>\n"
      "  %7 = stablehlo.iota dim = 0 : tensor<8x8xf32>\n"
      "  return %3, %4, %6, %7 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "    %0 = sdy.constant dense<1.000000e+00> : tensor<8x8xf32>\n"
      "    %1 = sdy.constant dense<2.000000e+00> : tensor<8x8xf32>\n"
      "    %2 = stablehlo.add %0, %1 : tensor<8x8xf32>\n"
      "    %3 = sdy.constant dense<1.000000e+00> : tensor<8x8xf32>\n"
      "    %4 = sdy.constant dense<2.000000e+00> : tensor<8x8xf32>\n"
      "    %5 = stablehlo.add %3, %4 : tensor<8x8xf32>\n"
      "    %6 = stablehlo.multiply %2, %arg0 : tensor<8x8xf32>\n"
      "    %7 = stablehlo.subtract %5, %arg0 : tensor<8x8xf32>\n"
      "    %8 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>\n"
      "    %9 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>\n"
      "    %10 = stablehlo.add %8, %9 : tensor<8x8xf32>\n"
      "    %11 = stablehlo.iota dim = 0 : tensor<8x8xf32>\n"
      "    return %6, %7, %10, %11 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_constants_split, want);
}
END_TEST

START_TEST(copies_for_uses_in_nested_regions_go_before_the_original) {
  const char *in =
      "func.func @main(%arg0: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %0 = stablehlo.constant dense<1> : tensor<4xi32>\n"
      "  %1 = stablehlo.constant dense<8> : tensor<i32>\n"
      "  %2:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<4xi32>, tensor<4xi32>\n"
      "    cond {\n"
      "    %3 = stablehlo.compare LT, %iterArg, %iterArg : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
      "    %4 = stablehlo.compare LT, %1, %1 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %4 : tensor<i1>\n"
      "  } do {\n"
      "    %3 = stablehlo.add %iterArg, %0 : tensor<4xi32>\n"
      "    stablehlo.return %3, %iterArg_0 : tensor<4xi32>, tensor<4xi32>\n"
      "  }\n"
      "  return %2#0 : tensor<4xi32>\n"
      "}\n";
  /* The rank-1 constant gets a copy per use (the while operand, the add in the body), both
   * before the original; the scalar keeps its uses. */
  const char *want =
      "module {\n"
      "  func.func @main(%arg0: tensor<4xi32>) -> tensor<4xi32> {\n"
      "    %0 = sdy.constant dense<1> : tensor<4xi32>\n"
      "    %1 = sdy.constant dense<1> : tensor<4xi32>\n"
      "    %2 = sdy.constant dense<8> : tensor<i32>\n"
      "    %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<4xi32>, tensor<4xi32>\n"
      "     cond {\n"
      "      %4 = stablehlo.compare  LT, %iterArg, %iterArg : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
      "      %5 = stablehlo.compare  LT, %2, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %5 : tensor<i1>\n"
      "    } do {\n"
      "      %4 = stablehlo.add %iterArg, %1 : tensor<4xi32>\n"
      "      stablehlo.return %4, %iterArg_0 : tensor<4xi32>, tensor<4xi32>\n"
      "    }\n"
      "    return %3#0 : tensor<4xi32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_constants_split, want);
}
END_TEST

/* Found by the JAX corpus (keras' layer norm): JAX's Shardy keeps one `convert` of a scalar
 * constant, and one scalar expression, for all their uses, and copies only what is not a
 * scalar (here the broadcasts of the scalar, one per use). */
START_TEST(scalar_constant_expressions_are_never_cloned) {
  const char *in =
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<f32>) {\n"
      "  %c = stablehlo.constant dense<7> : tensor<i32>\n"
      "  %0 = stablehlo.convert %c : (tensor<i32>) -> tensor<f32>\n"
      "  %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "  %2 = stablehlo.add %arg0, %1 : tensor<8xf32>\n"
      "  %3 = stablehlo.multiply %arg0, %1 : tensor<8xf32>\n"
      "  %4 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>\n"
      "  %5 = stablehlo.subtract %0, %4 : tensor<f32>\n"
      "  return %2, %3, %5 : tensor<8xf32>, tensor<8xf32>, tensor<f32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<f32>) {\n"
      "    %0 = sdy.constant dense<7> : tensor<i32>\n"
      "    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<f32>\n"
      "    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "    %3 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "    %4 = stablehlo.add %arg0, %2 : tensor<8xf32>\n"
      "    %5 = stablehlo.multiply %arg0, %3 : tensor<8xf32>\n"
      "    %6 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>\n"
      "    %7 = stablehlo.subtract %1, %6 : tensor<f32>\n"
      "    return %4, %5, %7 : tensor<8xf32>, tensor<8xf32>, tensor<f32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_constants_split, want);
}
END_TEST

START_TEST(merger_keeps_the_first_of_identical_constants_and_scalar_broadcasts) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0 = sdy.constant dense<1.0> : tensor<8xf32>\n"
      "  %1 = sdy.constant dense<1.0> : tensor<8xf32>\n"
      "  %2 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} dense<1.0> : tensor<8xf32>\n"
      "  %3 = sdy.constant dense<2.0> : tensor<8xf32>\n"
      "  %4 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "  %5 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "  return %0, %1, %2, %3, %4, %5 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]>\n"
      "  func.func @main(%arg0: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = sdy.constant dense<1.000000e+00> : tensor<8xf32>\n"
      "    %1 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} dense<1.000000e+00> : tensor<8xf32>\n"
      "    %2 = sdy.constant dense<2.000000e+00> : tensor<8xf32>\n"
      "    %3 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "    return %0, %0, %1, %2, %3, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_constants_merge, want);
}
END_TEST

START_TEST(merger_merges_stablehlo_constants_but_not_with_sdy_constants) {
  const char *in =
      "func.func @main() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {\n"
      "  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>\n"
      "  %1 = stablehlo.constant dense<[3, 5]> : tensor<2xi32>\n"
      "  %2 = sdy.constant dense<[3, 4]> : tensor<2xi32>\n"
      "  %3 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>\n"
      "  return %3, %1, %2, %0 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  func.func @main() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {\n"
      "    %c = stablehlo.constant dense<[3, 4]> : tensor<2xi32>\n"
      "    %c_0 = stablehlo.constant dense<[3, 5]> : tensor<2xi32>\n"
      "    %0 = sdy.constant dense<[3, 4]> : tensor<2xi32>\n"
      "    return %c, %c_0, %0, %c : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_constants_merge, want);
}
END_TEST

START_TEST(split_then_merge_restores_one_constant_per_value) {
  const char *in =
      "func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %0 = stablehlo.constant dense<3.0> : tensor<4xf32>\n"
      "  %1 = stablehlo.add %0, %arg0 : tensor<4xf32>\n"
      "  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>\n"
      "  return %1, %2 : tensor<4xf32>, tensor<4xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "    %0 = sdy.constant dense<3.000000e+00> : tensor<4xf32>\n"
      "    %1 = stablehlo.add %0, %arg0 : tensor<4xf32>\n"
      "    %2 = stablehlo.multiply %0, %1 : tensor<4xf32>\n"
      "    return %1, %2 : tensor<4xf32>, tensor<4xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {sp_constants_split, sp_constants_merge, NULL};
  pt_expect(in, passes, want);
}
END_TEST

static Suite *constants_suite(void) {
  Suite *s = suite_create("constants");
  TCase *tc = tcase_create("split");
  tcase_add_test(tc, constant_expressions_and_scalar_broadcasts_get_one_copy_per_use);
  tcase_add_test(tc, copies_for_uses_in_nested_regions_go_before_the_original);
  tcase_add_test(tc, scalar_constant_expressions_are_never_cloned);
  suite_add_tcase(s, tc);
  tc = tcase_create("merge");
  tcase_add_test(tc, merger_keeps_the_first_of_identical_constants_and_scalar_broadcasts);
  tcase_add_test(tc, merger_merges_stablehlo_constants_but_not_with_sdy_constants);
  tcase_add_test(tc, split_then_merge_restores_one_constant_per_value);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(constants_suite()); }
