/*
 * test_verify_stablehlo_ops.c - the verifier's checks of bitcast_convert, dot, fft, reverse,
 * cholesky, triangular_solve, batch_norm, rng_bit_generator, top-k, the custom calls with a
 * rule, and the chlo element-wise ops (ir/verify_stablehlo_ops.c, verify_stablehlo.c): each
 * probe that once verified and went on into propagation (or was refused there by its sharding
 * rule) is refused by the verifier with StableHLO's message; the valid forms of each op verify
 * and get their sharding rule.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/verify.h"
#include "mlir/mlir.h"
#include "rules/populate.h"
#include "test_support.h"

/* A function of one 4x8xf32 argument on a 2x2 mesh whose body is `body` (ops %0.. then a
 * return of `ret` typed `ret_type`). */
static const char *verify_body(const char *body, const char *ret, const char *ret_type) {
  static char text[4096];
  snprintf(text, sizeof text,
           "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
           "func.func @main(%%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
           "[{\"x\"}, {\"y\"}]>}) -> %s {\n"
           "%s\n"
           "  return %s : %s\n"
           "}\n",
           ret_type, body, ret, ret_type);
  return sp_test_verify(text);
}

/* The module verifies and every op gets its sharding rule without an error. */
static void verifies_and_gets_rules(const char *text) {
  ck_assert_str_eq(sp_test_verify(text), "");
  sp_module *m = sp_test_parse(text);
  sp_rules_options opts;
  sp_err err;
  ck_assert_int_eq(sp_rules_parse_options("", &opts, &err), SP_OK);
  ck_assert_msg(sp_rules_populate(m, &opts, NULL, NULL, NULL, &err) == SP_OK, "%s", err.msg);
  sp_module_free(m);
}

START_TEST(valid_forms_verify_and_get_their_rules) {
  verifies_and_gets_rules(
      "func.func @main(%a: tensor<4x8xf32>, %v: tensor<8xf32>, %c: tensor<4x8xcomplex<f32>>, "
      "%m: tensor<3x8x8xf32>, %b: tensor<3x8x4xf32>, %s: tensor<2xui64>, %u: tensor<8xf32>) "
      "-> tensor<4x8xf32> {\n"
      "  %0 = stablehlo.bitcast_convert %a : (tensor<4x8xf32>) -> tensor<4x8xi32>\n"
      "  %1 = stablehlo.bitcast_convert %a : (tensor<4x8xf32>) -> tensor<4x8x4xi8>\n"
      "  %2 = stablehlo.bitcast_convert %1 : (tensor<4x8x4xi8>) -> tensor<4x8xf32>\n"
      "  %3 = stablehlo.dot %a, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>\n"
      "  %4 = stablehlo.dot %v, %v : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>\n"
      "  %5 = stablehlo.fft %c, type = FFT, length = [8] : (tensor<4x8xcomplex<f32>>) -> "
      "tensor<4x8xcomplex<f32>>\n"
      "  %6 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<4x8xf32>) -> "
      "tensor<4x5xcomplex<f32>>\n"
      "  %7 = stablehlo.fft %6, type = IRFFT, length = [8] : (tensor<4x5xcomplex<f32>>) -> "
      "tensor<4x8xf32>\n"
      "  %8 = stablehlo.reverse %a, dims = [1, 0] : tensor<4x8xf32>\n"
      "  %9 = stablehlo.cholesky %m, lower = true : tensor<3x8x8xf32>\n"
      "  %10 = \"stablehlo.triangular_solve\"(%m, %b) {left_side = true, lower = true, "
      "unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : "
      "(tensor<3x8x8xf32>, tensor<3x8x4xf32>) -> tensor<3x8x4xf32>\n"
      "  %11 = \"stablehlo.batch_norm_inference\"(%a, %u, %u, %u, %u) {epsilon = 1.0e-3 : f32, "
      "feature_index = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, "
      "tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>\n"
      "  %12:3 = \"stablehlo.batch_norm_training\"(%a, %u, %u) {epsilon = 1.0e-3 : f32, "
      "feature_index = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> "
      "(tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)\n"
      "  %13:3 = \"stablehlo.batch_norm_grad\"(%a, %u, %u, %u, %a) {epsilon = 1.0e-3 : f32, "
      "feature_index = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, "
      "tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)\n"
      "  %14:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm "
      "DEFAULT>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4x8xui32>)\n"
      "  %15:2 = chlo.top_k(%a, k = 3) : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)\n"
      "  %16:2 = \"chlo.top_k\"(%a) {k = 8 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, "
      "tensor<4x8xi32>)\n"
      "  %17:2 = stablehlo.custom_call @mhlo.topk(%a) {mhlo.attributes = {k = 2 : i64, largest = "
      "true}, mhlo.version = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n"
      "  %18:2 = stablehlo.custom_call @Eigh(%m) : (tensor<3x8x8xf32>) -> (tensor<3x8x8xf32>, "
      "tensor<3x8xf32>)\n"
      "  %19 = chlo.erf %a : tensor<4x8xf32> -> tensor<4x8xf32>\n"
      "  %20 = chlo.is_inf %a : tensor<4x8xf32> -> tensor<4x8xi1>\n"
      "  %21 = chlo.zeta %a, %19 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>\n"
      "  return %21 : tensor<4x8xf32>\n"
      "}\n");
}
END_TEST

/* The probes of the audit: each verified and went all the way through the search. */
START_TEST(probes_that_once_reached_the_search_are_rejected) {
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.bitcast_convert\"(%arg0) : (tensor<4x8xf32>) -> "
                               "tensor<2x8x7xf32>", "%0", "tensor<2x8x7xf32>"),
                   "s.mlir:3:8: 'stablehlo.bitcast_convert' op operand and result shapes must "
                   "match except for the innermost dimension of the shape with the smaller "
                   "element type. Got: 'tensor<4x8xf32>' and 'tensor<2x8x7xf32>'.");
  ck_assert_str_eq(verify_body("  %0 = \"chlo.erf\"() : () -> tensor<4x8xf32>", "%0",
                               "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'chlo.erf' op expected 1 operand, but found 0");
  ck_assert_str_eq(verify_body("  %0 = \"chlo.square\"(%arg0, %arg0) : (tensor<4x8xf32>, "
                               "tensor<4x8xf32>) -> tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'chlo.square' op expected 1 operand, but found 2");
  ck_assert_str_eq(verify_body("  %0:2 = \"chlo.top_k\"(%arg0) {k = 99 : i64} : (tensor<4x8xf32>) -> "
                               "(tensor<4x99xf32>, tensor<4x99xi32>)", "%0#0", "tensor<4x99xf32>"),
                   "s.mlir:3:10: 'chlo.top_k' op operand's last dimension must be at least 99");
  ck_assert_str_eq(verify_body("  %0 = \"chlo.top_k\"(%arg0) {k = 99 : i64} : (tensor<4x8xf32>) -> "
                               "tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'chlo.top_k' op expected 2 results, but found 1");
}
END_TEST

/* Modules that verified and were then refused by the sharding rule of their op. */
START_TEST(probes_once_refused_by_their_rule_are_rejected_by_the_verifier) {
  ck_assert_str_eq(verify_body("  %0 = stablehlo.reverse %arg0, dims = [5] : tensor<4x8xf32>", "%0",
                               "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.reverse' op all dimensions should be between [0, 2). "
                   "Got dimension: 5.");
  ck_assert_str_eq(verify_body("  %0 = stablehlo.reverse %arg0, dims = [-3] : tensor<4x8xf32>", "%0",
                               "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.reverse' op all dimensions should be non-negative. "
                   "Got dimension: -3.");
  ck_assert_str_eq(verify_body("  %0 = stablehlo.dot %arg0, %arg0 : (tensor<4x8xf32>, "
                               "tensor<4x8xf32>) -> tensor<4x4xf32>", "%0", "tensor<4x4xf32>"),
                   "s.mlir:3:8: 'stablehlo.dot' op expected the size of lhs dimension 1 (8) to "
                   "match the size of rhs dimension 0 (4)");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.batch_norm_inference\"(%arg0, %arg0, %arg0, "
                               "%arg0, %arg0) {epsilon = 1.0e-3 : f32, feature_index = 9 : i64} : "
                               "(tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, "
                               "tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>", "%0",
                               "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.batch_norm_inference' op expects featureIndex to be "
                   "smaller than the rank of multi-dimensional operands; got featureIndex 9, and "
                   "rank 2.");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.batch_norm_inference\"(%arg0, %arg0, %arg0, "
                               "%arg0, %arg0) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : "
                               "(tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, "
                               "tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>", "%0",
                               "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.batch_norm_inference' op operand #1 must be 1D "
                   "tensor, but got 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.fft\"(%arg0) {fft_type = #stablehlo<fft_type RFFT>, "
                               "fft_length = array<i64: 16, 16, 16>} : (tensor<4x8xf32>) -> "
                               "tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.fft' op operand rank must not be less than fft rank "
                   "of 3 for operand of type 'tensor<4x8xf32>'.");
  ck_assert_str_eq(verify_body("  %0 = stablehlo.fft %arg0, type = RFFT, length = [8] : "
                               "(tensor<4x8xf32>) -> tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.fft' op inferred type(s) 'tensor<4x5xcomplex<f32>>' "
                   "are incompatible with return type(s) of operation 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.triangular_solve\"(%arg0, %arg0) {left_side = "
                               "true, lower = true, unit_diagonal = false, transpose_a = "
                               "#stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x8xf32>, "
                               "tensor<4x8xf32>) -> tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.triangular_solve' op two minor dimensions of operand "
                   "'a' must have equal size, but got 'tensor<4x8xf32>'");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.cholesky\"(%arg0) {lower = true} : "
                               "(tensor<4x8xf32>) -> tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.cholesky' op minor dimensions of 'a' must have equal "
                   "size, got shape 4, 8.");
  ck_assert_str_eq(verify_body("  %0 = \"stablehlo.rng_bit_generator\"(%arg0) {rng_algorithm = "
                               "#stablehlo<rng_algorithm DEFAULT>} : (tensor<4x8xf32>) -> "
                               "tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'stablehlo.rng_bit_generator' op expected 2 results, but found 1");
  ck_assert_str_eq(verify_body("  %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = "
                               "{k = 2 : i64}} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, "
                               "tensor<4x3xi32>)", "%0#0", "tensor<4x3xf32>"),
                   "s.mlir:3:10: 'stablehlo.custom_call' op inferred type(s) 'tensor<4x2xf32>' "
                   "are incompatible with return type(s) of operation 'tensor<4x3xf32>'");
  ck_assert_str_eq(verify_body("  %0:2 = stablehlo.custom_call @Qr(%arg0) : (tensor<4x8xf32>) -> "
                               "(tensor<4x8xf32>, tensor<4x8xf32>)", "%0#0", "tensor<4x8xf32>"),
                   "s.mlir:3:10: 'stablehlo.custom_call' op custom call @Qr: result 1 has rank 2, "
                   "expected 1");
}
END_TEST

START_TEST(chlo_element_wise_ops_check_shapes_and_element_types) {
  ck_assert_str_eq(verify_body("  %0 = chlo.erf %arg0 : tensor<4x8xf32> -> tensor<4x4xf32>", "%0",
                               "tensor<4x4xf32>"),
                   "s.mlir:3:8: 'chlo.erf' op requires the same shape for all operands and "
                   "results: operand 0 is tensor<4x8xf32>, result tensor<4x4xf32>");
  ck_assert_str_eq(verify_body("  %0 = chlo.lgamma %arg0 : tensor<4x8xf32> -> tensor<4x8xf16>", "%0",
                               "tensor<4x8xf16>"),
                   "s.mlir:3:8: 'chlo.lgamma' op requires the same element type for all operands "
                   "and results: operand 0 is f32, result f16");
  ck_assert_str_eq(verify_body("  %0 = \"chlo.next_after\"(%arg0) : (tensor<4x8xf32>) -> "
                               "tensor<4x8xf32>", "%0", "tensor<4x8xf32>"),
                   "s.mlir:3:8: 'chlo.next_after' op expected 2 operands, but found 1");
}
END_TEST

int main(void) {
  Suite *s = suite_create("verify_stablehlo_ops");
  TCase *tc = tcase_create("ops");
  tcase_add_test(tc, valid_forms_verify_and_get_their_rules);
  tcase_add_test(tc, probes_that_once_reached_the_search_are_rejected);
  tcase_add_test(tc, probes_once_refused_by_their_rule_are_rejected_by_the_verifier);
  tcase_add_test(tc, chlo_element_wise_ops_check_shapes_and_element_types);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
