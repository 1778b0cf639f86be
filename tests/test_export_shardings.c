/*
 * test_export_shardings.c - the export clean-ups (propagation/export_shardings.h): I/O
 * divisibility, sub-axes in the main function's open dims, closing, unreduced all-reduces and
 * call-operand reshards, the collective canonicalizer; text in, text out.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "pass_test.h"
#include "propagation/export_shardings.h"
#include "test_support.h"

START_TEST(io_dims_keep_the_longest_dividing_prefix_cutting_the_last_axis) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=4, \"b\"=2, \"c\"=3]>\n"
      "func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"a\"}, {\"a\":(1)2, ?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"c\"}, {\"a\", \"c\"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}, {\"c\"}]>}) {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<0x8xf32>\n"
      "  return %0 : tensor<0x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=4, \"b\"=2, \"c\"=3]>\n"
      "  func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {\"a\":(1)2, ?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"a\", \"c\"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\":(1)2}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}, {}]>}) {\n"
      "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<0x8xf32>\n"
      "    return %cst : tensor<0x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_update_non_divisible, want);
}
END_TEST

START_TEST(main_open_dims_are_cut_at_their_first_sub_axis) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=4, \"b\"=2, \"c\"=3]>\n"
      "func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"a\"}, {\"a\":(1)2, ?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"c\"}, {\"a\", \"c\"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}, {\"c\"}]>}) {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<0x8xf32>\n"
      "  return %0 : tensor<0x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=4, \"b\"=2, \"c\"=3]>\n"
      "  func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"a\"}, {?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"c\"}, {\"a\", \"c\"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}, {\"c\"}]>}) {\n"
      "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<0x8xf32>\n"
      "    return %cst : tensor<0x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_remove_sub_axes_in_main, want);
}
END_TEST

START_TEST(every_sharding_is_closed_and_loses_replicated_axes) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {?}p1], replicated={\"b\"}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {\"b\", ?}], unreduced={\"a\"}>}) {\n"
      "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>} : tensor<8x8xf32>\n"
      "  %1 = sdy.sharding_constraint %0 <@mesh, [{\"a\", ?}, {}]> : tensor<8x8xf32>\n"
      "  return %1 : tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"b\"}], unreduced={\"a\"}>}) {\n"
      "    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : tensor<8x8xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    return %1 : tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_close_shardings, want);
}
END_TEST

START_TEST(unreduced_axes_a_user_drops_get_all_reduced_and_call_operands_resharded) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "func.func private @g(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) -> tensor<8x16xf32> {\n"
      "  return %arg0 : tensor<8x16xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", \"c\"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"c\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, tensor<8x16xf32>) {\n"
      "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\", \"c\"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = sdy.reshard %0 <@mesh, [{\"a\"}, {}], unreduced={\"c\"}> : tensor<8x16xf32>\n"
      "  %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"c\"}>]>} : tensor<8x16xf32>\n"
      "  %3 = call @g(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  return %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "  func.func private @g(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) -> tensor<8x16xf32> {\n"
      "    return %arg0 : tensor<8x16xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", \"c\"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"c\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, tensor<8x16xf32>) {\n"
      "    %0 = sdy.reshard %arg1 <@mesh, [{\"a\"}, {}]> : tensor<8x16xf32>\n"
      "    %1 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\", \"c\"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "    %2 = sdy.all_reduce {\"b\"} %1 out_sharding=<@mesh, [{\"a\"}, {}], unreduced={\"c\"}> : tensor<8x16xf32>\n"
      "    %3 = sdy.reshard %2 <@mesh, [{\"a\"}, {}], unreduced={\"c\"}> : tensor<8x16xf32>\n"
      "    %4 = stablehlo.add %3, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"c\"}>]>} : tensor<8x16xf32>\n"
      "    %5 = call @g(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "    %6 = sdy.all_reduce {\"c\"} %4 out_sharding=<@mesh, [{\"a\"}, {}]> : tensor<8x16xf32>\n"
      "    return %6, %5 : tensor<8x16xf32>, tensor<8x16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_insert_explicit_reshards, want);
}
END_TEST

START_TEST(call_operand_reshards_follow_the_operand_definition) {
  /* Each call operand's reshard goes right after the value's definition (the block start for
   * an argument), so the later call's reshard ends up first. */
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "func.func private @g(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<16xf32> {\n"
      "  return %arg0 : tensor<16xf32>\n"
      "}\n"
      "func.func private @h(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> tensor<16xf32> {\n"
      "  return %arg0 : tensor<16xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<16xf32>\n"
      "  %1 = call @g(%arg0) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  %2 = call @h(%arg0) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  %3 = call @h(%0) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  return %1, %2, %3 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "  func.func private @g(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<16xf32> {\n"
      "    return %arg0 : tensor<16xf32>\n"
      "  }\n"
      "  func.func private @h(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> tensor<16xf32> {\n"
      "    return %arg0 : tensor<16xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {\n"
      "    %0 = sdy.reshard %arg0 <@mesh, [{\"b\"}]> : tensor<16xf32>\n"
      "    %1 = sdy.reshard %arg0 <@mesh, [{\"a\"}]> : tensor<16xf32>\n"
      "    %2 = stablehlo.negate %arg0 : tensor<16xf32>\n"
      "    %3 = sdy.reshard %2 <@mesh, [{\"b\"}]> : tensor<16xf32>\n"
      "    %4 = call @g(%1) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "    %5 = call @h(%0) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "    %6 = call @h(%3) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "    return %4, %5, %6 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_insert_explicit_reshards, want);
}
END_TEST

START_TEST(a_while_body_argument_passed_to_a_call_has_the_while_results_sharding) {
  /* Found by the JAX corpus (a Flax nn.scan body calls a function on the carry): the body
   * argument has the sharding of the while result it is tied to, so a callee wanting the same
   * gets no reshard, and one wanting another gets one. */
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "func.func private @g(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<16xf32> {\n"
      "  return %arg0 : tensor<16xf32>\n"
      "}\n"
      "func.func private @h(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> tensor<16xf32> {\n"
      "  return %arg0 : tensor<16xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<i32>) -> tensor<16xf32> {\n"
      "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<16xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>, <@mesh, []>]>}\n"
      "    cond {\n"
      "    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %1 : tensor<i1>\n"
      "  } do {\n"
      "    %1 = func.call @g(%iterArg) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "    %2 = func.call @h(%iterArg) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "    stablehlo.return %1, %iterArg_0 : tensor<16xf32>, tensor<i32>\n"
      "  }\n"
      "  return %0#0 : tensor<16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "  func.func private @g(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<16xf32> {\n"
      "    return %arg0 : tensor<16xf32>\n"
      "  }\n"
      "  func.func private @h(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> tensor<16xf32> {\n"
      "    return %arg0 : tensor<16xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<i32>) -> tensor<16xf32> {\n"
      "    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<16xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>, <@mesh, []>]>}\n"
      "     cond {\n"
      "      %1 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %1 : tensor<i1>\n"
      "    } do {\n"
      "      %1 = sdy.reshard %iterArg <@mesh, [{\"b\"}]> : tensor<16xf32>\n"
      "      %2 = func.call @g(%iterArg) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "      %3 = func.call @h(%1) : (tensor<16xf32>) -> tensor<16xf32>\n"
      "      stablehlo.return %2, %iterArg_0 : tensor<16xf32>, tensor<i32>\n"
      "    }\n"
      "    return %0#0 : tensor<16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_insert_explicit_reshards, want);
}
END_TEST

START_TEST(use_keeping_a_sub_axis_unreduced_all_reduces_the_rest_of_the_axis) {
  /* The returned value is unreduced over all of "b"; the function result keeps "b":(1)2:
   * only "b":(2)2 is all-reduced. */
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}], unreduced={\"b\"}>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}], unreduced={\"b\":(1)2}>}) {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}], unreduced={\"b\"}>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}], unreduced={\"b\":(1)2}>}) {\n"
      "    %0 = sdy.all_reduce {\"b\":(2)2} %arg0 out_sharding=<@mesh, [{\"a\"}], unreduced={\"b\":(1)2}> : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_insert_explicit_reshards, want);
}
END_TEST

START_TEST(canonicalizer_erases_dead_pure_ops_and_empty_all_reduces) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.constant dense<1.0> : tensor<8xf32>\n"
      "  %1 = stablehlo.add %0, %arg0 : tensor<8xf32>\n"
      "  %2 = stablehlo.negate %1 : tensor<8xf32>\n"
      "  %3 = sdy.reshard %arg0 <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "  %4 = sdy.all_reduce {} %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>\n"
      "  %5 = stablehlo.abs %4 : tensor<8xf32>\n"
      "  stablehlo.custom_call @side_effect(%2) {has_side_effect = true} : (tensor<8xf32>) -> ()\n"
      "  %6 = stablehlo.custom_call @opaque(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %5 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = sdy.constant dense<1.000000e+00> : tensor<8xf32>\n"
      "    %1 = stablehlo.add %0, %arg0 : tensor<8xf32>\n"
      "    %2 = stablehlo.negate %1 : tensor<8xf32>\n"
      "    %3 = stablehlo.abs %arg0 : tensor<8xf32>\n"
      "    stablehlo.custom_call @side_effect(%2) {has_side_effect = true} : (tensor<8xf32>) -> ()\n"
      "    %4 = stablehlo.custom_call @opaque(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %3 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_canonicalize, want);
}
END_TEST

START_TEST(partial_sums_a_result_does_not_keep_unreduced_are_reduced_after_the_op) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", \"c\"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"c\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) {\n"
      "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\"}>]>} : tensor<8x16xf32>\n"
      "  return %1 : tensor<8x16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", \"c\"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\", \"c\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "    %1 = sdy.all_reduce {\"c\"} %0 out_sharding=<@mesh, [{\"a\"}, {}], unreduced={\"b\"}> : tensor<8x16xf32>\n"
      "    %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}], unreduced={\"b\"}>]>} : tensor<8x16xf32>\n"
      "    %3 = sdy.all_reduce {\"b\"} %2 out_sharding=<@mesh, [{\"a\"}, {}]> : tensor<8x16xf32>\n"
      "    return %3 : tensor<8x16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_export_insert_explicit_reshards, want);
}
END_TEST

START_TEST(each_result_of_a_reduce_gets_its_own_all_reduce_in_result_order) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "func.func @main(%x: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"a\", \"b\"}]>}, %y: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"a\", \"b\"}]>}, %i: tensor<f32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"a\"}>}, tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"b\"}>}) {\n"
      "  %0:2 = stablehlo.reduce(%x init: %i), (%y init: %i) across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={\"b\"}>, <@mesh, [{}], unreduced={\"a\"}>]>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
      "   reducer(%p: tensor<f32>, %q: tensor<f32>) (%r: tensor<f32>, %s: tensor<f32>)  {\n"
      "    %1 = stablehlo.maximum %p, %q : tensor<f32>\n"
      "    %2 = stablehlo.maximum %r, %s : tensor<f32>\n"
      "    stablehlo.return %1, %2 : tensor<f32>, tensor<f32>\n"
      "  }\n"
      "  return %0#1, %0#0 : tensor<4xf32>, tensor<4xf32>\n"
      "}\n";
  char *out = pt_output(in, sp_export_insert_explicit_reshards);
  static const char *const want[] = {
      "%1 = sdy.all_reduce {\"a\"} %0#0 out_sharding=<@mesh, [{}], unreduced={\"b\"}> : tensor<4xf32>",
      "%2 = sdy.all_reduce {\"b\"} %0#1 out_sharding=<@mesh, [{}], unreduced={\"a\"}> : tensor<4xf32>",
      "return %2, %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(main_func_is_the_only_func_else_main) {
  sp_module *m = pt_parse(
      "func.func @entry(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n");
  ck_assert_ptr_eq(sp_export_main_func(m), sp_module_lookup_func(m, "entry"));
  sp_module_free(m);
  m = pt_parse(
      "func.func @a(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n"
      "func.func @b(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n");
  ck_assert_ptr_null(sp_export_main_func(m));
  sp_module_free(m);
}
END_TEST

static Suite *export_shardings_suite(void) {
  Suite *s = suite_create("export_shardings");
  TCase *tc = tcase_create("io");
  tcase_add_test(tc, io_dims_keep_the_longest_dividing_prefix_cutting_the_last_axis);
  tcase_add_test(tc, main_open_dims_are_cut_at_their_first_sub_axis);
  tcase_add_test(tc, main_func_is_the_only_func_else_main);
  tcase_add_test(tc, every_sharding_is_closed_and_loses_replicated_axes);
  suite_add_tcase(s, tc);
  tc = tcase_create("reshards");
  tcase_add_test(tc, unreduced_axes_a_user_drops_get_all_reduced_and_call_operands_resharded);
  tcase_add_test(tc, call_operand_reshards_follow_the_operand_definition);
  tcase_add_test(tc, a_while_body_argument_passed_to_a_call_has_the_while_results_sharding);
  tcase_add_test(tc, use_keeping_a_sub_axis_unreduced_all_reduces_the_rest_of_the_axis);
  tcase_add_test(tc, partial_sums_a_result_does_not_keep_unreduced_are_reduced_after_the_op);
  tcase_add_test(tc, each_result_of_a_reduce_gets_its_own_all_reduce_in_result_order);
  tcase_add_test(tc, canonicalizer_erases_dead_pure_ops_and_empty_all_reduces);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(export_shardings_suite()); }
