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

START_TEST(valid_ops_verify) {
  ck_assert_str_eq(sp_test_verify(
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
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4x4xf32>) -> tensor<12xf32> {\n"
      "  %0 = stablehlo.reshape %a : (tensor<4x4xf32>) -> tensor<12xf32>\n"
      "  return %0 : tensor<12xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.reshape' op number of output elements (12) doesn't match expected "
      "number of elements (16)");
}
END_TEST

START_TEST(dot_general_with_unequal_contracting_sizes_is_rejected) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<32x4xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.dot_general' op contracting dimension sizes must match: lhs dim 1 "
      "is 16, rhs dim 0 is 32");
}
END_TEST

START_TEST(dot_general_with_a_wrong_result_shape_is_rejected) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.dot_general' op result dim 1 has size 8, expected 4");
}
END_TEST

START_TEST(transpose_needs_a_permutation) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [1, 1] : (tensor<4x8xf32>) -> tensor<8x4xf32>\n"
      "  return %0 : tensor<8x4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.transpose' op permutation entry 1 is used twice");
}
END_TEST

START_TEST(broadcast_of_a_dim_that_is_neither_one_nor_equal_is_rejected) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<3xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<4x8xf32>\n"
      "  return %0 : tensor<4x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.broadcast_in_dim' op size of operand dimension 0 (3) is not equal "
      "to 1 or size of result dimension 1 (8)");
}
END_TEST

START_TEST(element_wise_op_with_operands_of_another_shape_is_rejected) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x8xf32> {\n"
      "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "  return %0 : tensor<4x8xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.add' op requires the same shape for all operands and results: "
      "operand 1 is tensor<8x4xf32>, result tensor<4x8xf32>");
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.negate\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.negate' op expected 1 operand, but found 2");
}
END_TEST

START_TEST(slice_out_of_bounds_is_rejected) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.slice %a [2:6] : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:8: 'stablehlo.slice' op dim 0: start 2 and limit 6 must satisfy 0 <= start <= "
      "limit <= 4");
}
END_TEST

START_TEST(function_must_return_its_result_types) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {\n"
      "  return %a : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:3: 'func.return' op type of return operand 0 (tensor<4xf32>) doesn't match "
      "function result type (tensor<8xf32>) in function @main");
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  return %a : tensor<4xf32>\n"
      "}\n"),
      "s.mlir:2:3: 'func.return' op has 1 operands, but enclosing function (@main) returns 2");
}
END_TEST

START_TEST(tensor_too_large_to_count_is_rejected_naming_the_value) {
  ck_assert_str_eq(sp_test_verify(
      "func.func @main(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {\n"
      "  return %a : tensor<4294967296x4294967296xf32>\n"
      "}\n"),
      "s.mlir:1:1: 'func.func' op arg 0 - tensor<4294967296x4294967296xf32> holds more than 2^63 "
      "elements or bytes");
  /* 2^62 elements fit, 2^62 four-byte elements do not. */
  ck_assert_str_ne(sp_test_verify(
      "func.func @main(%a: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {\n"
      "  return %a : tensor<4611686018427387904xf32>\n"
      "}\n"), "");
}
END_TEST

/* ---------------------------------------------------------------- indexing, window and region ops */

/* A module with one valid op of each kind below; each bad module replaces one piece of it. */
static const char *const OPS =
    "func.func @main(%a: tensor<8x16xf32>, %i: tensor<i32>, %p: tensor<i1>, %idx: tensor<4x1xi32>, %img: tensor<2x9x9x3xf32>, %ker: tensor<3x3x3x4xf32>) -> tensor<8x16xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %0 = stablehlo.pad %a, %z, low = [1, 0], high = [0, 2], interior = [1, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16x18xf32>\n"
    "  %1 = stablehlo.dynamic_slice %0, %i, %i, sizes = [8, 16] : (tensor<16x18xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>\n"
    "  %2 = stablehlo.dynamic_update_slice %a, %1, %i, %i : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>\n"
    "  %3 = \"stablehlo.gather\"(%a, %idx) {\n"
    "    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,\n"
    "    slice_sizes = array<i64: 1, 16>, indices_are_sorted = false\n"
    "  } : (tensor<8x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>\n"
    "  %4 = \"stablehlo.scatter\"(%a, %idx, %3) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %s = stablehlo.add %x, %y : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {\n"
    "    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
    "    indices_are_sorted = false, unique_indices = false\n"
    "  } : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>\n"
    "  %5 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %m = stablehlo.maximum %x, %y : tensor<f32>\n"
    "      stablehlo.return %m : tensor<f32>\n"
    "  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<4x16xf32>\n"
    "  %6 = \"stablehlo.select_and_scatter\"(%a, %5, %z) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      stablehlo.return %c : tensor<i1>\n"
    "  }, {\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %s = stablehlo.add %x, %y : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>} : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<f32>) -> tensor<8x16xf32>\n"
    "  %7 = stablehlo.convolution(%img, %ker) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x9x9x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>\n"
    "  %8 = \"stablehlo.sort\"(%6) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      stablehlo.return %c : tensor<i1>\n"
    "  }) {dimension = 1 : i64, is_stable = true} : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
    "  %9 = stablehlo.while(%w = %8) : tensor<8x16xf32>\n"
    "    cond {\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %n = stablehlo.add %w, %w : tensor<8x16xf32>\n"
    "      stablehlo.return %n : tensor<8x16xf32>\n"
    "    }\n"
    "  %10 = \"stablehlo.if\"(%p) ({\n"
    "    stablehlo.return %9 : tensor<8x16xf32>\n"
    "  }, {\n"
    "    stablehlo.return %2 : tensor<8x16xf32>\n"
    "  }) : (tensor<i1>) -> tensor<8x16xf32>\n"
    "  %11 = \"stablehlo.case\"(%i) ({\n"
    "    stablehlo.return %10 : tensor<8x16xf32>\n"
    "  }, {\n"
    "    stablehlo.return %4 : tensor<8x16xf32>\n"
    "  }) : (tensor<i32>) -> tensor<8x16xf32>\n"
    "  return %11 : tensor<8x16xf32>\n"
    "}\n";

/* OPS with each `from` replaced by its `to` (pairs; NULL-terminated), then verified. */
static const char *verify_variant(const char *const *subst) {
  static char text[8192];
  snprintf(text, sizeof text, "%s", OPS);
  for (int i = 0; subst[i]; i += 2) {
    char *at = strstr(text, subst[i]);
    ck_assert_msg(at, "the template has no \"%s\"", subst[i]);
    size_t from = strlen(subst[i]), to = strlen(subst[i + 1]);
    ck_assert(strlen(text) - from + to < sizeof text);
    memmove(at + to, at + from, strlen(at + from) + 1);
    memcpy(at, subst[i + 1], to);
  }
  return sp_test_verify(text);
}

#define VARIANT(...) verify_variant((const char *const[]){__VA_ARGS__, NULL})

START_TEST(valid_indexing_window_and_region_ops_verify) {
  ck_assert_str_eq(sp_test_verify(OPS), "");
}
END_TEST

START_TEST(pad_with_bad_padding_or_result_is_rejected) {
  ck_assert_str_eq(VARIANT("-> tensor<16x18xf32>", "-> tensor<16x19xf32>",
                           "(tensor<16x18xf32>, tensor<i32>", "(tensor<16x19xf32>, tensor<i32>"),
                   "s.mlir:3:8: 'stablehlo.pad' op inferred type(s) 'tensor<16x18xf32>' are "
                   "incompatible with return type(s) of operation 'tensor<16x19xf32>'");
  ck_assert_str_eq(VARIANT("interior = [1, 0]", "interior = [-1, 0]"),
                   "s.mlir:3:8: 'stablehlo.pad' op Interior padding cannot be negative: -1");
  ck_assert_str_eq(VARIANT("low = [1, 0]", "low = [1]"),
                   "s.mlir:3:8: 'stablehlo.pad' op edge_padding_low length (1) must match "
                   "operand rank (2)");
  ck_assert_str_eq(VARIANT("low = [1, 0], high = [0, 2]", "low = [-20, 0], high = [0, 2]"),
                   "s.mlir:3:8: 'stablehlo.pad' op Padding result in negative size for "
                   "dimension 0");
  ck_assert_str_eq(VARIANT("interior = [1, 0]", "interior = [4611686018427387904, 0]"),
                   "s.mlir:3:8: 'stablehlo.pad' op the padded size of dimension 0 does not fit "
                   "in 64 bits");
}
END_TEST

START_TEST(dynamic_slices_out_of_the_operand_are_rejected) {
  ck_assert_str_eq(VARIANT("sizes = [8, 16]", "sizes = [8, 19]"),
                   "s.mlir:4:8: 'stablehlo.dynamic_slice' op has slice size 19 greater than "
                   "dimension size 18 in dimension 1 of operand");
  ck_assert_str_eq(VARIANT("sizes = [8, 16]", "sizes = [8, -1]"),
                   "s.mlir:4:8: 'stablehlo.dynamic_slice' op has negative size index to dynamic "
                   "slice: -1");
  ck_assert_str_eq(VARIANT("sizes = [8, 16]", "sizes = [8]"),
                   "s.mlir:4:8: 'stablehlo.dynamic_slice' op has mismatched number of slice "
                   "sizes (1) and number of start indices (2)");
  ck_assert_str_eq(VARIANT("%1, %i, %i : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<i32>, "
                           "tensor<i32>)",
                           "%1, %i : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<i32>)"),
                   "s.mlir:5:8: 'stablehlo.dynamic_update_slice' op expects number of "
                   "start_indices to match operand rank: 1 vs 2.");
  ck_assert_str_eq(VARIANT("%2 = stablehlo.dynamic_update_slice %a, %1",
                           "%2 = stablehlo.dynamic_update_slice %1, %a"),
                   "");   /* same shapes: still valid */
}
END_TEST

START_TEST(gather_and_scatter_with_bad_dimension_numbers_are_rejected) {
  ck_assert_str_eq(VARIANT("slice_sizes = array<i64: 1, 16>", "slice_sizes = array<i64: 2, 16>"),
                   "s.mlir:6:8: 'stablehlo.gather' op slice_sizes collapsed or batching "
                   "dimension 0 should <= 1 but got 2");
  ck_assert_str_eq(VARIANT("slice_sizes = array<i64: 1, 16>", "slice_sizes = array<i64: 1, 17>"),
                   "s.mlir:6:8: 'stablehlo.gather' op slice size (17) is out of bounds for "
                   "operand dimension (16) at index 1");
  ck_assert_str_eq(VARIANT("slice_sizes = array<i64: 1, 16>", "slice_sizes = array<i64: 1>"),
                   "s.mlir:6:8: 'stablehlo.gather' op slice_sizes size (1) not equal to "
                   "(implied) operand rank (2)");
  ck_assert_str_eq(VARIANT("start_index_map = [0], index_vector_dim = 1>,\n    slice_sizes",
                           "start_index_map = [0], index_vector_dim = 3>,\n    slice_sizes"),
                   "s.mlir:6:8: 'stablehlo.gather' op index_vector_dim 3 is out of bounds for "
                   "start indices with rank 2");
  ck_assert_str_eq(VARIANT("start_index_map = [0]", "start_index_map = [0, 1]"),
                   "s.mlir:6:8: 'stablehlo.gather' op start_index_map size (2) is not equal to "
                   "size of index dimension (1) of start_indices (1)");
  ck_assert_str_eq(VARIANT("slice_sizes = array<i64: 1, 16>", "slice_sizes = array<i64: 1, 8>"),
                   "s.mlir:6:8: 'stablehlo.gather' op inferred type(s) 'tensor<4x8xf32>' are "
                   "incompatible with return type(s) of operation 'tensor<4x16xf32>'");
  ck_assert_str_eq(VARIANT("inserted_window_dims = [0]", "inserted_window_dims = []"),
                   "s.mlir:10:8: 'stablehlo.scatter' op Expects rank-of operand to match "
                   "size-of('update_window_dims') + size-of('inserted_window_dims') + "
                   "size-of('input_batching_dims') i.e. 1 but got 2.");
  ck_assert_str_eq(VARIANT("inserted_window_dims = [0]", "inserted_window_dims = [2]"),
                   "s.mlir:10:8: 'stablehlo.scatter' op inserted_window_dims entry 2 is out of "
                   "range for rank 2");
  ck_assert_str_eq(VARIANT("scatter_dims_to_operand_dims = [0]",
                           "scatter_dims_to_operand_dims = [0, 1]"),
                   "s.mlir:10:8: 'stablehlo.scatter' op Scatter op has 2 elements in "
                   "scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=1 "
                   "of scatter_indices is 1. These two numbers must be equal.");
  ck_assert_str_eq(VARIANT("update_window_dims = [1]", "update_window_dims = [2]"),
                   "s.mlir:10:8: 'stablehlo.scatter' op update_window_dims entry 2 is out of "
                   "range for rank 2");
}
END_TEST

START_TEST(windows_and_convolutions_of_a_wrong_shape_are_rejected) {
  ck_assert_str_eq(VARIANT("window_strides = array<i64: 2, 1>", "window_strides = array<i64: 1, 1>"),
                   "s.mlir:18:8: 'stablehlo.reduce_window' op inferred type(s) "
                   "'tensor<7x16xf32>' are incompatible with return type(s) of operation "
                   "'tensor<4x16xf32>'");
  ck_assert_str_eq(VARIANT("window_dimensions = array<i64: 2, 3>",
                           "window_dimensions = array<i64: 2, 0>"),
                   "s.mlir:18:8: 'stablehlo.reduce_window' op expects window_dimensions to have "
                   "positive value for 1-th window dimension, but got 0.");
  ck_assert_str_eq(VARIANT("window_dimensions = array<i64: 2, 3>",
                           "window_dimensions = array<i64: 2>"),
                   "s.mlir:18:8: 'stablehlo.reduce_window' op expects window-dimensions size == "
                   "input rank, but got window-dimensions size: 1 and input: tensor<8x16xf32> "
                   "with rank = 2.");
  /* the second window (select_and_scatter's) with stride 1 */
  ck_assert_str_eq(VARIANT("window_strides = array<i64: 2, 1>, padding = dense<[[0, 0], [1, 1]]> "
                           ": tensor<2x2xi64>} : (tensor<8x16xf32>, tensor<4x16xf32>",
                           "window_strides = array<i64: 1, 1>, padding = dense<[[0, 0], [1, 1]]> "
                           ": tensor<2x2xi64>} : (tensor<8x16xf32>, tensor<4x16xf32>"),
                   "s.mlir:23:8: 'stablehlo.select_and_scatter' op expects source-type to be "
                   "tensor<7x16xf32>, but got: tensor<4x16xf32>");
  ck_assert_str_eq(VARIANT("-> tensor<2x4x4x4xf32>", "-> tensor<2x5x4x4xf32>"),
                   "s.mlir:32:8: 'stablehlo.convolution' op inferred type(s) "
                   "'tensor<2x4x4x4xf32>' are incompatible with return type(s) of operation "
                   "'tensor<2x5x4x4xf32>'");
  ck_assert_str_eq(VARIANT("feature_group_count = 1 : i64", "feature_group_count = 2 : i64"),
                   "s.mlir:32:8: 'stablehlo.convolution' op expects input feature dimension (3) "
                   "to be a multiple of feature_group_count. Got feature_group_count = 2.");
  ck_assert_str_eq(VARIANT("feature_group_count = 1 : i64", "feature_group_count = 0 : i64"),
                   "s.mlir:32:8: 'stablehlo.convolution' op expects feature_group_count to be a "
                   "positive number, got 0.");
  ck_assert_str_eq(VARIANT("%ker: tensor<3x3x3x4xf32>", "%ker: tensor<3x3x2x4xf32>",
                           "tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>",
                           "tensor<3x3x2x4xf32>) -> tensor<2x4x4x4xf32>"),
                   "s.mlir:32:8: 'stablehlo.convolution' op expects input feature dimension (3) "
                   "/ feature_group_count = kernel input feature dimension (2). Got "
                   "feature_group_count = 1.");
  ck_assert_str_eq(VARIANT("window = {stride = [2, 2]", "window = {stride = [2]"),
                   "s.mlir:32:8: 'stablehlo.convolution' op expects window_strides to have one "
                   "entry per dimension (2), but got: 1.");
}
END_TEST

START_TEST(sort_while_if_and_case_with_wrong_types_are_rejected) {
  ck_assert_str_eq(VARIANT("dimension = 1 : i64", "dimension = 2 : i64"),
                   "s.mlir:33:8: 'stablehlo.sort' op dimension attribute value must be in range "
                   "[-2, 2), but found 2");
  ck_assert_str_eq(VARIANT("^bb0(%x: tensor<f32>, %y: tensor<f32>):\n      %c = stablehlo.compare GT",
                           "^bb0(%x: tensor<f32>, %y: tensor<f32>, %q: tensor<f32>):\n      "
                           "%c = stablehlo.compare GT"),
                   "s.mlir:33:8: 'stablehlo.sort' op comparator block should have 2 arguments");
  ck_assert_str_eq(VARIANT("stablehlo.return %p : tensor<i1>", "stablehlo.return %i : tensor<i32>"),
                   "s.mlir:38:8: 'stablehlo.while' op expect condition block return a "
                   "zero-ranked tensor of i1 but got tensor<i32>");
  ck_assert_str_eq(VARIANT("stablehlo.return %n : tensor<8x16xf32>",
                           "stablehlo.return %n, %n : tensor<8x16xf32>, tensor<8x16xf32>"),
                   "s.mlir:38:8: 'stablehlo.while' op expect operands to be compatible with body "
                   "block return types but got tensor<8x16xf32> vs tensor<8x16xf32>, "
                   "tensor<8x16xf32>");
  ck_assert_str_eq(VARIANT("stablehlo.return %9 : tensor<8x16xf32>",
                           "stablehlo.return %0 : tensor<16x18xf32>"),
                   "s.mlir:45:9: 'stablehlo.if' op branch 0 returned types (tensor<16x18xf32>) "
                   "do not match op result types (tensor<8x16xf32>)");
  ck_assert_str_eq(VARIANT("\"stablehlo.if\"(%p)", "\"stablehlo.if\"(%i)",
                           ": (tensor<i1>) -> tensor<8x16xf32>", ": (tensor<i32>) -> tensor<8x16xf32>"),
                   "s.mlir:45:9: 'stablehlo.if' op operand #0 must be a 0-dimensional tensor of "
                   "i1, but got 'tensor<i32>'");
  ck_assert_str_eq(VARIANT("\"stablehlo.case\"(%i)", "\"stablehlo.case\"(%p)",
                           ": (tensor<i32>) -> tensor<8x16xf32>", ": (tensor<i1>) -> tensor<8x16xf32>"),
                   "s.mlir:50:9: 'stablehlo.case' op operand #0 must be a 0-dimensional tensor "
                   "of i32, but got 'tensor<i1>'");
  ck_assert_str_eq(VARIANT("stablehlo.return %4 : tensor<8x16xf32>",
                           "stablehlo.return %4, %4 : tensor<8x16xf32>, tensor<8x16xf32>"),
                   "s.mlir:50:9: 'stablehlo.case' op branch 1 returned types (tensor<8x16xf32>, "
                   "tensor<8x16xf32>) do not match op result types (tensor<8x16xf32>)");
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
  tcase_add_test(tc, valid_indexing_window_and_region_ops_verify);
  tcase_add_test(tc, pad_with_bad_padding_or_result_is_rejected);
  tcase_add_test(tc, dynamic_slices_out_of_the_operand_are_rejected);
  tcase_add_test(tc, gather_and_scatter_with_bad_dimension_numbers_are_rejected);
  tcase_add_test(tc, windows_and_convolutions_of_a_wrong_shape_are_rejected);
  tcase_add_test(tc, sort_while_if_and_case_with_wrong_types_are_rejected);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
