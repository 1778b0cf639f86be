/*
 * test_mlir_printer.c - the MLIR printer: exact sdy_opt text for hand-written modules (custom
 * and generic op forms, SSA names, attribute dictionaries, function signatures, sdy ops), and
 * printing after the IR was changed in memory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "test_support.h"

static sp_module *parse_ok(const char *text) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse failed: %s", err.msg);
  return m;
}

/* Printed text of a module; the caller frees it. */
static char *print_module(const sp_module *m) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_int_eq(sp_mlir_print(m, &sb, &err), SP_OK);
  return sp_strbuf_detach(&sb);
}

/* Parses `in`, prints it, compares with `want`, and checks that printing is a fixed point. */
static void assert_prints(const char *in, const char *want) {
  sp_module *m = parse_ok(in);
  char *got = print_module(m);
  ck_assert_str_eq(got, want);
  sp_module *m2 = parse_ok(got);
  char *again = print_module(m2);
  ck_assert_str_eq(again, got);
  free(again);
  free(got);
  sp_module_free(m2);
  sp_module_free(m);
}

START_TEST(canonical_text_prints_back_unchanged) {
  const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", ?}]>}, %arg1: tensor<16x4xf32>, %arg2: tensor<i32>, %arg3: tensor<8xi1>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {?}]>}) {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "    %1 = stablehlo.abs %0 : tensor<8x4xf32>\n"
      "    %2 = stablehlo.add %0, %1 : tensor<8x4xf32>\n"
      "    %3 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<i32>) -> tensor<8x4xi32>\n"
      "    %4 = stablehlo.convert %3 : (tensor<8x4xi32>) -> tensor<8x4xf32>\n"
      "    %5 = stablehlo.transpose %4, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "    %6 = stablehlo.reshape %5 : (tensor<4x8xf32>) -> tensor<8x4xf32>\n"
      "    %7 = stablehlo.compare  GE, %6, %2,  FLOAT : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>\n"
      "    %8 = stablehlo.select %7, %6, %2 : tensor<8x4xi1>, tensor<8x4xf32>\n"
      "    %9 = stablehlo.slice %8 [0:8:2, 1:4] : (tensor<8x4xf32>) -> tensor<4x3xf32>\n"
      "    %10 = stablehlo.concatenate %9, %9, dim = 0 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>\n"
      "    %11 = stablehlo.reverse %10, dims = [0] : tensor<8x3xf32>\n"
      "    %12 = stablehlo.iota dim = 0 : tensor<8xi32>\n"
      "    %13 = stablehlo.dynamic_slice %11, %arg2, %arg2, sizes = [2, 3] : (tensor<8x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>\n"
      "    %14 = stablehlo.pad %13, %1, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>\n"
      "    %15 = stablehlo.clamp %1, %0, %1 : tensor<8x4xf32>\n"
      "    %16:2 = stablehlo.optimization_barrier %0, %arg2 : tensor<8x4xf32>, tensor<i32>\n"
      "    %17 = stablehlo.custom_call @foo(%16#0) {backend_config = \"\", has_side_effect = true, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} reduction={j}, custom>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %18 = stablehlo.after_all : !stablehlo.token\n"
      "    %19 = stablehlo.fft %17, type = RFFT, length = [4] : (tensor<8x4xf32>) -> tensor<8x3xcomplex<f32>>\n"
      "    %20 = stablehlo.real %19 : (tensor<8x3xcomplex<f32>>) -> tensor<8x3xf32>\n"
      "    %21 = stablehlo.complex %20, %20 : tensor<8x3xcomplex<f32>>\n"
      "    %22 = stablehlo.dot %arg0, %arg1, precision = [HIGH, HIGH] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "    return %22 : tensor<8x4xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
}
END_TEST

START_TEST(an_optimization_barrier_without_operands_prints_empty_parentheses) {
  /* StableHLO's "()": bare, the value defined on the next line would read as its operand
   * (found by fuzz_export: an exported module that did not parse). */
  const char *text =
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    stablehlo.optimization_barrier ()\n"
      "    %0 = stablehlo.abs %arg0 : tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
}
END_TEST

START_TEST(generic_forms_of_ops_with_custom_syntax_print_pretty) {
  assert_prints(
      "func.func @g(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "  %1 = \"stablehlo.abs\"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "  %2 = \"stablehlo.transpose\"(%1) <{permutation = array<i64: 1, 0>}> : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "  %3 = \"stablehlo.custom_call\"(%2) {call_target_name = \"foo\", has_side_effect = true, backend_config = \"\"} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  %4 = \"stablehlo.compare\"(%3, %3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>\n"
      "  %5 = \"stablehlo.broadcast_in_dim\"(%1) {broadcast_dimensions = dense<[1, 2]> : tensor<2xi64>} : (tensor<8x4xf32>) -> tensor<2x8x4xf32>\n"
      "  %6 = \"stablehlo.constant\"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>\n"
      "  \"func.return\"(%0) : (tensor<8x4xf32>) -> ()\n"
      "}\n",
      "module {\n"
      "  func.func @g(%arg0: tensor<8x16xf32>, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "    %1 = stablehlo.abs %0 : tensor<8x4xf32>\n"
      "    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "    %3 = stablehlo.custom_call @foo(%2) {backend_config = \"\", has_side_effect = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "    %4 = stablehlo.compare  LT, %3, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>\n"
      "    %5 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<8x4xf32>) -> tensor<2x8x4xf32>\n"
      "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>\n"
      "    return %0 : tensor<8x4xf32>\n"
      "  }\n"
      "}\n");
}
END_TEST

START_TEST(generic_only_ops_print_properties_regions_and_sorted_attributes) {
  assert_prints(
      "sdy.mesh @m = <[\"a\"=2]>\n"
      "func.func @h(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>, %p: tensor<i32>) -> tensor<2x4xf32> {\n"
      "  %0 = \"stablehlo.gather\"(%x, %i) {indices_are_sorted = false, slice_sizes = array<i64: 1, 4>,\n"
      "      dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],\n"
      "      start_index_map = [0], index_vector_dim = 1>,\n"
      "      sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>\n"
      "  %1 = \"stablehlo.case\"(%p) ({\n"
      "    stablehlo.return %0 : tensor<2x4xf32>\n"
      "  }, {\n"
      "    %n = stablehlo.negate %0 : tensor<2x4xf32>\n"
      "    stablehlo.return %n : tensor<2x4xf32>\n"
      "  }) : (tensor<i32>) -> tensor<2x4xf32>\n"
      "  %2 = \"mhlo.custom\"(%1) {zeta = 1, alpha = \"s\", mid = [1, 2.5, true]} : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "  return %2 : tensor<2x4xf32>\n"
      "}\n",
      "module {\n"
      "  sdy.mesh @m = <[\"a\"=2]>\n"
      "  func.func @h(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi64>, %arg2: tensor<i32>) -> tensor<2x4xf32> {\n"
      "    %0 = \"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>\n"
      "    %1 = \"stablehlo.case\"(%arg2) ({\n"
      "      stablehlo.return %0 : tensor<2x4xf32>\n"
      "    }, {\n"
      "      %3 = stablehlo.negate %0 : tensor<2x4xf32>\n"
      "      stablehlo.return %3 : tensor<2x4xf32>\n"
      "    }) : (tensor<i32>) -> tensor<2x4xf32>\n"
      "    %2 = \"mhlo.custom\"(%1) {alpha = \"s\", mid = [1, 2.500000e+00, true], zeta = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "    return %2 : tensor<2x4xf32>\n"
      "  }\n"
      "}\n");
}
END_TEST

START_TEST(ssa_names_follow_mlir_numbering_and_suggested_names) {
  assert_prints(
      "func.func @f(%x: tensor<4xi32>, %y: tensor<4xf32>) -> tensor<4xi32> {\n"
      "  %a = stablehlo.constant dense<1> : tensor<4xi32>\n"
      "  %b = stablehlo.constant dense<2> : tensor<4xi32>\n"
      "  %f = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
      "  %s = stablehlo.add %x, %a : tensor<4xi32>\n"
      "  %w:2 = stablehlo.while(%i = %s, %j = %b) : tensor<4xi32>, tensor<4xi32>\n"
      "   cond {\n"
      "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
      "    stablehlo.return %t : tensor<i1>\n"
      "  } do {\n"
      "    %u = stablehlo.add %i, %j : tensor<4xi32>\n"
      "    stablehlo.return %u, %j : tensor<4xi32>, tensor<4xi32>\n"
      "  }\n"
      "  %r = stablehlo.multiply %w#0, %w#1 : tensor<4xi32>\n"
      "  %st, %bits = stablehlo.rng_bit_generator %r, algorithm = DEFAULT : (tensor<4xi32>) -> (tensor<4xi32>, tensor<2xui32>)\n"
      "  return %st : tensor<4xi32>\n"
      "}\n",
      "module {\n"
      "  func.func @f(%arg0: tensor<4xi32>, %arg1: tensor<4xf32>) -> tensor<4xi32> {\n"
      "    %c = stablehlo.constant dense<1> : tensor<4xi32>\n"
      "    %c_0 = stablehlo.constant dense<2> : tensor<4xi32>\n"
      "    %cst = stablehlo.constant dense<1.500000e+00> : tensor<4xf32>\n"
      "    %0 = stablehlo.add %arg0, %c : tensor<4xi32>\n"
      "    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_1 = %c_0) : tensor<4xi32>, tensor<4xi32>\n"
      "     cond {\n"
      "      %c_2 = stablehlo.constant dense<true> : tensor<i1>\n"
      "      stablehlo.return %c_2 : tensor<i1>\n"
      "    } do {\n"
      "      %3 = stablehlo.add %iterArg, %iterArg_1 : tensor<4xi32>\n"
      "      stablehlo.return %3, %iterArg_1 : tensor<4xi32>, tensor<4xi32>\n"
      "    }\n"
      "    %2 = stablehlo.multiply %1#0, %1#1 : tensor<4xi32>\n"
      "    %output_state, %output = stablehlo.rng_bit_generator %2, algorithm =  DEFAULT : (tensor<4xi32>) -> (tensor<4xi32>, tensor<2xui32>)\n"
      "    return %output_state : tensor<4xi32>\n"
      "  }\n"
      "}\n");
}
END_TEST

START_TEST(reduce_prints_compact_form_only_for_a_plain_commutative_body) {
  assert_prints(
      "func.func @r(%x: tensor<2x64xf32>) -> (tensor<2xf32>, tensor<2xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  %1 = stablehlo.reduce(%x init: %z) across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
      "    %m = stablehlo.multiply %b, %a : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }\n"
      "  %2 = \"stablehlo.reduce\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %m = stablehlo.maximum %a, %b : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {dimensions = array<i64: 1>} : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  return %0, %1 : tensor<2xf32>, tensor<2xf32>\n"
      "}\n",
      "module {\n"
      "  func.func @r(%arg0: tensor<2x64xf32>) -> (tensor<2xf32>, tensor<2xf32>) {\n"
      "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "    %1 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {\n"
      "      %3 = stablehlo.multiply %arg2, %arg1 : tensor<f32>\n"
      "      stablehlo.return %3 : tensor<f32>\n"
      "    }\n"
      "    %2 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "    return %0, %1 : tensor<2xf32>, tensor<2xf32>\n"
      "  }\n"
      "}\n");
}
END_TEST

START_TEST(convolution_prints_dim_numbers_and_window) {
  const char *text =
      "module {\n"
      "  func.func @c(%arg0: tensor<2x9x9x5xf32>, %arg1: tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32> {\n"
      "    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 1, 0, f]x[o, 0, 1, i]->[f, b, 0, 1], window = {stride = [2, 2], pad = [[0, 1], [1, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [0, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x9x9x5xf32>, tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32>\n"
      "    return %0 : tensor<2x4x4x7xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
}
END_TEST

START_TEST(attribute_dictionaries_are_sorted_and_normalised) {
  assert_prints(
      "func.func @a() attributes {z = {b = 2, a = 1.0 : f32}, s = \"q\\\"\\n\\\\\", "
      "d = dense<[[2, 2], [2, 2]]> : tensor<2x2xi32>, arr = array<i64: 3, -4>, e = array<i64>,\n"
      "  h = 0x10 : i32, u, neg = -5, sym = @foo, t = tensor<4xf32>, b1 = 1 : i1,\n"
      "  dl = #stablehlo.channel_handle< handle = 1 ,\n type = 2 >, f = -0.25 : bf16} {\n"
      "  return\n"
      "}\n",
      "module {\n"
      "  func.func @a() attributes {arr = array<i64: 3, -4>, b1 = true, d = dense<2> : tensor<2x2xi32>, "
      "dl = #stablehlo.channel_handle<handle = 1, type = 2>, e = array<i64>, f = -2.500000e-01 : bf16, "
      "h = 16 : i32, neg = -5 : i64, s = \"q\\22\\0A\\\\\", sym = @foo, t = tensor<4xf32>, u, "
      "z = {a = 1.000000e+00 : f32, b = 2 : i64}} {\n"
      "    return\n"
      "  }\n"
      "}\n");
}
END_TEST

/* Whitespace in an opaque attribute collapses, but "- >" (a '-', then an angle's closer) must
 * not become the arrow "->", which would unbalance the text when it is read back. */
START_TEST(opaque_attribute_text_keeps_a_minus_apart_from_a_closing_angle) {
  assert_prints(
      "func.func @a() attributes {x = #foo.bar<a<-> b, c - >>, d = #foo.baz<(i32) -> f32>} {\n"
      "  return\n"
      "}\n",
      "module {\n"
      "  func.func @a() attributes {d = #foo.baz<(i32) -> f32>, x = #foo.bar<a<-> b, c - >>} {\n"
      "    return\n"
      "  }\n"
      "}\n");
}
END_TEST

START_TEST(func_signatures_use_parentheses_only_when_needed) {
  const char *text =
      "module {\n"
      "  sdy.mesh @m = <[\"a\"=2], device_ids=[1, 0]>\n"
      "  func.func private @decl(tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}, tensor<f32>) -> tensor<4xf32>\n"
      "  func.func @none(%arg0: tensor<f32>) {\n"
      "    return\n"
      "  }\n"
      "  func.func @one(%arg0: tensor<f32>) -> tensor<f32> attributes {sdy.original_func_name = \"x\"} {\n"
      "    return %arg0 : tensor<f32>\n"
      "  }\n"
      "  func.func @sharded(%arg0: tensor<4xf32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}p0]>}) {\n"
      "    return %arg0 : tensor<4xf32>\n"
      "  }\n"
      "  func.func @two(%arg0: tensor<f32>, %arg1: !stablehlo.token) -> (tensor<f32>, !stablehlo.token) {\n"
      "    %0 = call @one(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>} : (tensor<f32>) -> tensor<f32>\n"
      "    return %0, %arg1 : tensor<f32>, !stablehlo.token\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
}
END_TEST

START_TEST(sdy_ops_print_in_sdy_opt_form) {
  const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  sdy.mesh @maximal = <[], device_ids=[0]>\n"
      "  func.func @s(%arg0: tensor<16x32xf32>, %arg1: tensor<16x32xf32>) -> tensor<16x32xf32> {\n"
      "    %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<16x32xf32>\n"
      "    sdy.sharding_group %0 group_id=3 : tensor<16x32xf32>\n"
      "    %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{\"a\", ?}, {?}]> : tensor<16x32xf32>\n"
      "    %2 = sdy.func_data_flow_edge %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {\"b\", ?}]>]>} : tensor<16x32xf32>\n"
      "    %3 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} dense<1.000000e+00> : tensor<16x32xf32>\n"
      "    %4 = sdy.all_reduce {\"b\"} %3 out_sharding=<@mesh, [{\"a\"}, {}]> : tensor<16x32xf32>\n"
      "    %5 = sdy.manual_computation(%4, %arg1) in_shardings=[<@mesh, [{\"a\"}, {}]>, <@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg2: tensor<8x32xf32>, %arg3: tensor<8x32xf32>) {\n"
      "      %8 = stablehlo.add %arg2, %arg3 : tensor<8x32xf32>\n"
      "      sdy.return %8 : tensor<8x32xf32>\n"
      "    } : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>\n"
      "    %6 = sdy.named_computation<\"foo\">(%5) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{}, {\"b\"}]>] (%arg2: tensor<16x32xf32>) {\n"
      "      sdy.return %arg2 : tensor<16x32xf32>\n"
      "    } : (tensor<16x32xf32>) -> tensor<16x32xf32>\n"
      "    %7 = sdy.reshard %6 <mesh<[\"x\"=4]>, [{}, {\"x\":(2)2}], replicated={\"x\":(1)2}, unreduced={\"b\"}> : tensor<16x32xf32>\n"
      "    stablehlo.custom_call @cb(%7) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : (tensor<16x32xf32>) -> ()\n"
      "    return %7 : tensor<16x32xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
}
END_TEST

START_TEST(sdy_collectives_print_in_sdy_opt_form) {
  const char *text =
      "module {\n"
      "  sdy.mesh @m = <[\"p\"=4, \"q\"=2, \"r\"=2]>\n"
      "  func.func @c(%arg0: tensor<8x4x2xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\", \"q\"}, {\"r\"}, {}]>}) -> tensor<8x4x2xf32> {\n"
      "    %0 = sdy.all_gather [{\"q\"}, {}, {}] %arg0 out_sharding=<@m, [{\"p\"}, {\"r\"}, {}]> {foo = 1 : i64} : tensor<8x4x2xf32>\n"
      "    %1 = sdy.all_slice [{}, {}, {\"q\"}] %0 out_sharding=<@m, [{\"p\"}, {\"r\"}, {\"q\"}]> : tensor<8x4x2xf32>\n"
      "    %2 = sdy.all_to_all [{\"r\"}: 1->0] %1 out_sharding=<@m, [{\"p\", \"r\"}, {}, {\"q\"}]> : tensor<8x4x2xf32>\n"
      "    %3 = sdy.collective_permute %2 out_sharding=<@m, [{\"r\", \"p\"}, {}, {\"q\"}]> : tensor<8x4x2xf32>\n"
      "    %4 = sdy.all_reduce min {\"q\"} %3 out_sharding=<@m, [{\"r\", \"p\"}, {}, {}]> : tensor<8x4x2xf32>\n"
      "    %5 = sdy.reduce_scatter max [{}, {\"q\"}, {}] %4 out_sharding=<@m, [{\"r\", \"p\"}, {\"q\"}, {}]> : tensor<8x4x2xf32>\n"
      "    %6 = sdy.sharded_to_unreduced [{}, {\"q\"}, {}] %5 out_sharding=<@m, [{\"r\", \"p\"}, {}, {}], unreduced={\"q\"}> : tensor<8x4x2xf32>\n"
      "    %7 = sdy.replicated_to_unreduced {\"q\"} %1 out_sharding=<@m, [{\"p\"}, {\"r\"}, {\"q\"}], unreduced={\"q\"}> : tensor<8x4x2xf32>\n"
      "    return %6 : tensor<8x4x2xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
  /* `sum` is the default reduction kind and is not printed. */
  const char *sum =
      "module {\n"
      "  sdy.mesh @m = <[\"p\"=4]>\n"
      "  func.func @s(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = sdy.all_reduce sum {\"p\"} %arg0 out_sharding=<@m, [{}]> : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  char *want = strdup(sum);
  char *at = strstr(want, "sum ");
  memmove(at, at + 4, strlen(at + 4) + 1);
  assert_prints(sum, want);
  free(want);
}
END_TEST

START_TEST(quoted_symbols_escaped_axis_names_and_unreduced_kinds_print_back) {
  const char *text =
      "module {\n"
      "  sdy.mesh @\"my mesh\" = <[\"a\\22b\"=2, \"c\"=2]>\n"
      "  func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@\"my mesh\", [{\"a\\22b\"}], unreduced=max{\"c\"}>}) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.custom_call @\"odd target\"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  assert_prints(text, text);
  sp_module *m = parse_ok(text);
  const sp_mesh *mesh = sp_module_lookup_mesh(m, "my mesh");
  ck_assert_ptr_nonnull(mesh);
  ck_assert_str_eq(mesh->axes[0].name, "a\"b");
  sp_sharding *s = sp_module_lookup_func(m, "f")->regions[0].blocks[0]->args[0]->sharding;
  ck_assert_str_eq(s->unreduced_kind, "max");
  sp_module_free(m);
}
END_TEST

START_TEST(changed_sharding_and_shape_are_printed) {
  sp_module *m = parse_ok(
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n"
      "}\n");
  sp_op *f = sp_module_lookup_func(m, "f");
  sp_op *add = f->regions[0].blocks[0]->first;
  /* A pass decides a sharding for the add's result... */
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, false);
  s->dims[0].naxes = 1;
  s->dims[0].axes = sp_arena_calloc(m->arena, 1, sizeof *s->dims[0].axes);
  s->dims[0].axes[0].name = "a";
  s->dims[1].closed = true;
  add->results[0].sharding = s;
  /* ...and another one grows the argument (and the add) to 16x8. */
  int64_t dims[2] = {16, 8};
  sp_value *arg = f->regions[0].blocks[0]->args[0];
  arg->type = sp_type_tensor(m->arena, 2, dims, "f32");
  f->func->arg_types[0] = arg->type;
  add->results[0].type = sp_type_tensor(m->arena, 2, dims, "f32");
  char *got = print_module(m);
  ck_assert_ptr_nonnull(strstr(got, "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<8x8xf32> {"));
  ck_assert_ptr_nonnull(strstr(got,
      "%0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {}]>]>} : tensor<16x8xf32>\n"));
  free(got);
  /* Removing it again removes the attribute. */
  add->results[0].sharding = NULL;
  got = print_module(m);
  ck_assert_ptr_null(strstr(got, "sdy.sharding"));
  free(got);
  sp_module_free(m);
}
END_TEST

START_TEST(results_without_sharding_get_fully_open_placeholders) {
  sp_module *m = parse_ok(
      "sdy.mesh @m = <[\"a\"=2]>\n"
      "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0:3 = \"x.three\"(%arg0) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<4x4xf32>, !stablehlo.token)\n"
      "  return %0#0 : tensor<8xf32>\n"
      "}\n");
  sp_op *op = sp_module_lookup_func(m, "f")->regions[0].blocks[0]->first;
  sp_sharding *s = sp_sharding_new(m->arena, "m", 2, true);
  op->results[1].sharding = s;
  char *got = print_module(m);
  ck_assert_ptr_nonnull(strstr(got,
      "%0:3 = \"x.three\"(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>, <@m, [{}, {}]>, <@m, []>]>} : "
      "(tensor<8xf32>) -> (tensor<8xf32>, tensor<4x4xf32>, !stablehlo.token)\n"));
  free(got);
  sp_module_free(m);
}
END_TEST

START_TEST(custom_form_falls_back_to_generic_when_the_op_does_not_fit_it) {
  sp_module *m = parse_ok(
      "sdy.mesh @m = <[\"a\"=2]>\n"
      "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@m, [{\"a\"}]> : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n");
  sp_op *op = sp_module_lookup_func(m, "f")->regions[0].blocks[0]->first;
  op->results[0].sharding = NULL; /* a constraint must carry a sharding */
  char *got = print_module(m);
  ck_assert_ptr_nonnull(strstr(got, "%0 = \"sdy.sharding_constraint\"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"));
  free(got);
  sp_module_free(m);
}
END_TEST

START_TEST(project_example_prints_to_a_fixed_point) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/mlp.mlir", SP_SOURCE_DIR);
  size_t len;
  char *text = sp_test_read_file(path, &len);
  ck_assert_ptr_nonnull(text);
  sp_module *m = parse_ok(text);
  char *a = print_module(m);
  ck_assert(strncmp(a, "module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n", 88) == 0);
  ck_assert_ptr_nonnull(strstr(a, "    %5 = sdy.sharding_constraint %4 <@mesh, [{\"data\"}, {\"model\"}]> : tensor<32x512xf32>\n"));
  sp_module *m2 = parse_ok(a);
  char *b = print_module(m2);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  free(text);
  sp_module_free(m);
  sp_module_free(m2);
}
END_TEST

static Suite *printer_suite(void) {
  Suite *s = suite_create("mlir_printer");
  TCase *tc = tcase_create("forms");
  tcase_add_test(tc, canonical_text_prints_back_unchanged);
  tcase_add_test(tc, an_optimization_barrier_without_operands_prints_empty_parentheses);
  tcase_add_test(tc, generic_forms_of_ops_with_custom_syntax_print_pretty);
  tcase_add_test(tc, generic_only_ops_print_properties_regions_and_sorted_attributes);
  tcase_add_test(tc, ssa_names_follow_mlir_numbering_and_suggested_names);
  tcase_add_test(tc, reduce_prints_compact_form_only_for_a_plain_commutative_body);
  tcase_add_test(tc, convolution_prints_dim_numbers_and_window);
  tcase_add_test(tc, attribute_dictionaries_are_sorted_and_normalised);
  tcase_add_test(tc, opaque_attribute_text_keeps_a_minus_apart_from_a_closing_angle);
  tcase_add_test(tc, func_signatures_use_parentheses_only_when_needed);
  tcase_add_test(tc, sdy_ops_print_in_sdy_opt_form);
  tcase_add_test(tc, sdy_collectives_print_in_sdy_opt_form);
  tcase_add_test(tc, quoted_symbols_escaped_axis_names_and_unreduced_kinds_print_back);
  tcase_add_test(tc, project_example_prints_to_a_fixed_point);
  suite_add_tcase(s, tc);
  tc = tcase_create("changed_ir");
  tcase_add_test(tc, changed_sharding_and_shape_are_printed);
  tcase_add_test(tc, results_without_sharding_get_fully_open_placeholders);
  tcase_add_test(tc, custom_form_falls_back_to_generic_when_the_op_does_not_fit_it);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(printer_suite()); }
