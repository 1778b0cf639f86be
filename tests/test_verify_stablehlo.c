/*
 * test_verify_stablehlo.c - the StableHLO op checks of the verifier (ir/verify_stablehlo.c):
 * what StableHLO's own verifier rejects is rejected with a message naming the op and place.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/verify.h"
#include "mlir/mlir.h"
#include "test_support.h"

/* Parses `text` as s.mlir and verifies it; returns "" or the verifier's message. */
static const char *verify_text(const char *text) {
  static char msg[SP_ERR_MSG_MAX];
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "s.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse: %s", err.msg);
  rc = sp_verify_module(m, &err);
  snprintf(msg, sizeof msg, "%s", rc == SP_OK ? "" : err.msg);
  sp_module_free(m);
  return msg;
}

START_TEST(valid_ops_verify) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "  %2 = stablehlo.reshape %1 : (tensor<4x8xf32>) -> tensor<32xf32>\n"
      "  %3 = stablehlo.reshape %2 : (tensor<32xf32>) -> tensor<4x8xf32>\n"
      "  %4 = stablehlo.slice %3 [0:4, 0:8:2] : (tensor<4x8xf32>) -> tensor<4x4xf32>\n"
      "  %5 = stablehlo.concatenate %4, %4, dim = 1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>\n"
      "  %6 = stablehlo.add %5, %3 : tensor<4x8xf32>\n"
      "  return %6 : tensor<4x8xf32>\n"
      "}\n"), "");
}
END_TEST

START_TEST(reshape_with_another_element_count_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4x4xf32>) -> tensor<12xf32> {\n"
      "  %0 = stablehlo.reshape %a : (tensor<4x4xf32>) -> tensor<12xf32>\n"
      "  return %0 : tensor<12xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.reshape' op number of output elements (12) doesn't match expected "
      "number of elements (16)");
}
END_TEST

START_TEST(dot_general_with_unequal_contracting_sizes_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<32x4xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.dot_general' op contracting dimension sizes must match: lhs dim 1 "
      "is 16, rhs dim 0 is 32");
}
END_TEST

START_TEST(dot_general_with_a_wrong_result_shape_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.dot_general' op result dim 1 has size 8, expected 4");
}
END_TEST

START_TEST(transpose_needs_a_permutation) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [1, 1] : (tensor<4x8xf32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.transpose' op permutation entry 1 is used twice");
}
END_TEST

START_TEST(broadcast_of_a_dim_that_is_neither_one_nor_equal_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<3xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<4x8xf32>\n"
      "  return %0 : tensor<4x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.broadcast_in_dim' op size of operand dimension 0 (3) is not equal "
      "to 1 or size of result dimension 1 (8)");
}
END_TEST

START_TEST(element_wise_op_with_operands_of_another_shape_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "  return %0 : tensor<4x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.add' op requires the same shape for all operands and results: "
      "operand 1 is tensor<8x4xf32>, result tensor<4x8xf32>");
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.negate\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.negate' op expected 1 operand, but found 2");
}
END_TEST

START_TEST(slice_out_of_bounds_is_rejected) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.slice %a [2:6] : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.slice' op dim 0: start 2 and limit 6 must satisfy 0 <= start <= "
      "limit <= 4");
}
END_TEST

START_TEST(function_must_return_its_result_types) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {\n"
      "  return %a : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:3: 'func.return' op type of return operand 0 (tensor<4xf32>) doesn't match "
      "function result type (tensor<8xf32>) in function @main");
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  return %a : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:3: 'func.return' op has 1 operands, but enclosing function (@main) returns 2");
}
END_TEST

START_TEST(tensor_too_large_to_count_is_rejected_naming_the_value) {
  ck_assert_str_eq(verify_text(
      "func.func @main(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {\n"
      "  return %a : tensor<4294967296x4294967296xf32>\n"
      "}\n"),
      "s.mlir:1:1: 'func.func' op arg 0 - tensor<4294967296x4294967296xf32> holds more than 2^63 "
      "elements or bytes");
  /* 2^62 elements fit, 2^62 four-byte elements do not. */
  ck_assert_str_ne(verify_text(
      "func.func @main(%a: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {\n"
      "  return %a : tensor<4611686018427387904xf32>\n"
      "}\n"), "");
}
END_TEST

int main(void) {
  Suite *s = suite_create("verify_stablehlo");
  TCase *tc = tcase_create("ops");
  tcase_add_test(tc, valid_ops_verify);
  tcase_add_test(tc, reshape_with_another_element_count_is_rejected);
  tcase_add_test(tc, dot_general_with_unequal_contracting_sizes_is_rejected);
  tcase_add_test(tc, dot_general_with_a_wrong_result_shape_is_rejected);
  tcase_add_test(tc, transpose_needs_a_permutation);
  tcase_add_test(tc, broadcast_of_a_dim_that_is_neither_one_nor_equal_is_rejected);
  tcase_add_test(tc, element_wise_op_with_operands_of_another_shape_is_rejected);
  tcase_add_test(tc, slice_out_of_bounds_is_rejected);
  tcase_add_test(tc, function_must_return_its_result_types);
  tcase_add_test(tc, tensor_too_large_to_count_is_rejected_naming_the_value);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
