/*
 * test_verify_stablehlo_tuple.c - the verifier's checks of optimization_barrier, tuples and
 * tokens (ir/verify_stablehlo_tuple.c): results are what StableHLO infers from the operands,
 * with MLIR's messages.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mlir/mlir.h"
#include "test_support.h"

/* A function of a 4x8xf32 and a token argument whose body is `body`, returning %0 of `type`. */
static const char *verify_body(const char *body, const char *type) {
  static char text[4096];
  snprintf(text, sizeof text,
           "func.func @main(%%arg0: tensor<4x8xf32>, %%t: !stablehlo.token) -> %s {\n"
           "%s\n"
           "  return %%0 : %s\n"
           "}\n",
           type, body, type);
  return sp_test_verify(text);
}

START_TEST(valid_tuple_and_token_ops_verify) {
  ck_assert_str_eq(verify_body("  %1 = stablehlo.tuple %arg0, %t : tuple<tensor<4x8xf32>, !stablehlo.token>\n"
                               "  %2 = stablehlo.get_tuple_element %1[0] : (tuple<tensor<4x8xf32>, "
                               "!stablehlo.token>) -> tensor<4x8xf32>\n"
                               "  %3:2 = stablehlo.optimization_barrier %2, %arg0 : tensor<4x8xf32>, "
                               "tensor<4x8xf32>\n"
                               "  %4 = stablehlo.after_all %t, %t : !stablehlo.token\n"
                               "  %5 = stablehlo.create_token : !stablehlo.token\n"
                               "  %6 = \"stablehlo.outfeed\"(%3#0, %4) {outfeed_config = \"\"} : "
                               "(tensor<4x8xf32>, !stablehlo.token) -> !stablehlo.token\n"
                               "  %0 = stablehlo.add %3#0, %3#1 : tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "");
}
END_TEST

/* The audit's probes: both verified and went all the way through the search. */
START_TEST(barrier_and_get_tuple_element_of_the_wrong_types_are_rejected) {
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.optimization_barrier\"(%arg0, %arg0) : "
                               "(tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>",
                               "tensor<4x8xf32>"),
                   "s.mlir:2:8: 'stablehlo.optimization_barrier' op inferred type(s) "
                   "'tensor<4x8xf32>', 'tensor<4x8xf32>' are incompatible with return type(s) of "
                   "operation 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.get_tuple_element\"(%arg0) {index = 5 : i32} : "
                               "(tensor<4x8xf32>) -> tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:2:8: 'stablehlo.get_tuple_element' op operand #0 must be tuple of "
                   "ranked tensor or token values, but got 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %1 = stablehlo.tuple %arg0 : tuple<tensor<4x8xf32>>\n"
                               "  %0 = stablehlo.get_tuple_element %1[1] : (tuple<tensor<4x8xf32>>) "
                               "-> tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.get_tuple_element' op index 1 is out of bounds of "
                   "operand with size 1");
  ck_assert_str_eq(verify_body("  %1 = stablehlo.tuple %arg0 : tuple<tensor<4x8xf32>>\n"
                               "  %0 = stablehlo.get_tuple_element %1[0] : (tuple<tensor<4x8xf32>>) "
                               "-> tensor<8x4xf32>", "tensor<8x4xf32>"),
                   "s.mlir:3:8: 'stablehlo.get_tuple_element' op inferred type(s) "
                   "'tensor<4x8xf32>' are incompatible with return type(s) of operation "
                   "'tensor<8x4xf32>'");
}
END_TEST

START_TEST(token_ops_need_their_tokens) {
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.after_all\"(%arg0) : (tensor<4x8xf32>) -> "
                               "!stablehlo.token", "!stablehlo.token"),
                   "s.mlir:2:8: 'stablehlo.after_all' op operand #0 must be a token");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.outfeed\"(%arg0) {outfeed_config = \"\"} : "
                               "(tensor<4x8xf32>) -> !stablehlo.token", "!stablehlo.token"),
                   "s.mlir:2:8: 'stablehlo.outfeed' op last element of operand types is expected "
                   "to be of token type, but got 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.infeed\"(%t) {infeed_config = \"\"} : "
                               "(!stablehlo.token) -> tensor<4x8xf32>", "tensor<4x8xf32>"),
                   "s.mlir:2:8: 'stablehlo.infeed' op last element of result types is expected "
                   "to be of token type, but got 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.partition_id\"(%arg0) : (tensor<4x8xf32>) -> "
                               "tensor<ui32>", "tensor<ui32>"),
                   "s.mlir:2:8: 'stablehlo.partition_id' op expected 0 operands, but found 1");
}
END_TEST

int main(void) {
  Suite *s = suite_create("verify_stablehlo_tuple");
  TCase *tc = tcase_create("tuple");
  tcase_add_test(tc, valid_tuple_and_token_ops_verify);
  tcase_add_test(tc, barrier_and_get_tuple_element_of_the_wrong_types_are_rejected);
  tcase_add_test(tc, token_ops_need_their_tokens);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
