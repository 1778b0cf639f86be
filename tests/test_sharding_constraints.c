/*
 * test_sharding_constraints.c - applying sharding constraints to their inputs and turning them
 * into reshards (propagation/sharding_constraints.h), text in, text out.
 */
#include <check.h>

#include "pass_test.h"
#include "propagation/data_flow_edges.h"
#include "propagation/sharding_constraints.h"
#include "test_support.h"

START_TEST(only_closed_constraints_on_unsharded_inputs_without_rivals_apply) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n"
      "  %2 = sdy.sharding_constraint %1 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "  %3 = sdy.sharding_constraint %arg1 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>\n"
      "  %5 = sdy.sharding_constraint %4 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "  %6 = sdy.sharding_constraint %4 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n"
      "    %2 = sdy.sharding_constraint %1 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "    %3 = sdy.sharding_constraint %arg1 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>\n"
      "    %5 = sdy.sharding_constraint %4 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "    %6 = sdy.sharding_constraint %4 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_constraints_apply, want);
}
END_TEST

START_TEST(constraint_chain_takes_over_later_uses_of_its_input) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
      "  %1 = stablehlo.negate %0 : tensor<8x8xf32>\n"
      "  %2 = sdy.sharding_constraint %0 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "  %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {\"b\"}]> : tensor<8x8xf32>\n"
      "  %4 = stablehlo.multiply %0, %3 : tensor<8x8xf32>\n"
      "  %5 = stablehlo.abs %0 : tensor<8x8xf32>\n"
      "  return %1, %5 : tensor<8x8xf32>, tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
      "    %1 = stablehlo.negate %0 : tensor<8x8xf32>\n"
      "    %2 = sdy.sharding_constraint %0 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {\"b\"}]> : tensor<8x8xf32>\n"
      "    %4 = stablehlo.multiply %3, %3 : tensor<8x8xf32>\n"
      "    %5 = stablehlo.abs %3 : tensor<8x8xf32>\n"
      "    return %1, %5 : tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_constraints_apply, want);
}
END_TEST

START_TEST(constraint_on_a_while_argument_moves_to_the_top_and_takes_its_uses) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {\n"
      "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>\n"
      "    cond {\n"
      "    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %1 : tensor<i1>\n"
      "  } do {\n"
      "    %1 = stablehlo.negate %iterArg : tensor<8xf32>\n"
      "    %2 = sdy.sharding_constraint %iterArg <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "    %3 = stablehlo.add %1, %2 : tensor<8xf32>\n"
      "    stablehlo.return %3, %iterArg_0 : tensor<8xf32>, tensor<i32>\n"
      "  }\n"
      "  return %0#0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {\n"
      "    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>\n"
      "     cond {\n"
      "      %3 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %3 : tensor<i1>\n"
      "    } do {\n"
      "      %3 = sdy.sharding_constraint %iterArg <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "      %4 = stablehlo.negate %3 : tensor<8xf32>\n"
      "      %5 = stablehlo.add %4, %3 : tensor<8xf32>\n"
      "      stablehlo.return %5, %iterArg_0 : tensor<8xf32>, tensor<i32>\n"
      "    }\n"
      "    %1 = sdy.data_flow_edge %0#0 : tensor<8xf32>\n"
      "    %2 = sdy.data_flow_edge %0#1 : tensor<i32>\n"
      "    return %1 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {sp_data_flow_edges_add, sp_sharding_constraints_apply, NULL};
  pt_expect(in, passes, want);
}
END_TEST

START_TEST(every_constraint_becomes_a_reshard) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n"
      "  %2 = sdy.sharding_constraint %1 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "  %3 = sdy.sharding_constraint %arg1 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>\n"
      "  %5 = sdy.sharding_constraint %4 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "  %6 = sdy.sharding_constraint %4 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "  return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "    %0 = sdy.reshard %arg0 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n"
      "    %2 = sdy.reshard %1 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "    %3 = sdy.reshard %arg1 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>\n"
      "    %5 = sdy.reshard %4 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "    %6 = sdy.reshard %4 <@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "    return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_constraints_to_reshard, want);
}
END_TEST

START_TEST(manual_computation_in_shardings_apply_to_their_operands) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{\"a\"}]>, <@mesh, [{\"a\", ?}]>] "
      "out_shardings=[<@mesh, [{\"a\"}]>, <@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>) {\n"
      "    sdy.return %arg2, %arg3 : tensor<4xf32>, tensor<4xf32>\n"
      "  } : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
      "  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  sp_module *m = pt_parse(in);
  pt_run(m, sp_sharding_constraints_apply);
  sp_block *entry = sp_module_lookup_func(m, "main")->regions[0].blocks[0];
  /* Closed in_sharding: applied; open one: not. */
  ck_assert_ptr_nonnull(entry->args[0]->sharding);
  ck_assert_int_eq(entry->args[0]->sharding->dims[0].naxes, 1);
  ck_assert_str_eq(entry->args[0]->sharding->dims[0].axes[0].name, "a");
  ck_assert_ptr_null(entry->args[1]->sharding);
  sp_module_free(m);
}
END_TEST

/* An sdy.data_flow_edge result takes no sharding of its own: the constraint moves right after
 * it and takes every use (the return's too); its unreduced axes still go to the edge. */
START_TEST(constraint_on_a_data_flow_edge_moves_after_it_and_leaves_its_unreduced_axes) {
  const char *in =
      "sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
      "func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {\n"
      "  %0 = sdy.data_flow_edge %arg0 : tensor<4x8xf32>\n"
      "  %1 = stablehlo.negate %0 : tensor<4x8xf32>\n"
      "  %2 = sdy.sharding_constraint %0 <@m, [{\"q\"}, {}], unreduced={\"p\"}> : tensor<4x8xf32>\n"
      "  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
      "  func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {\n"
      "    %0 = sdy.data_flow_edge %arg0 sharding=<@m, [{?}, {?}], unreduced={\"p\"}> : tensor<4x8xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@m, [{\"q\"}, {}], unreduced={\"p\"}> : tensor<4x8xf32>\n"
      "    %2 = stablehlo.negate %1 : tensor<4x8xf32>\n"
      "    return %2, %1 : tensor<4x8xf32>, tensor<4x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_constraints_apply, want);
}
END_TEST

/* A chain whose tail feeds a manual computation does not take over the later uses of its
 * input; a value a manual computation takes twice, with two different in_shardings, keeps no
 * sharding. */
START_TEST(chain_into_manual_computation_and_value_taken_twice_differently_stay_as_written) {
  const char *in =
      "sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>\n"
      "  %1 = sdy.sharding_constraint %0 <@m, [{\"q\"}, {}]> : tensor<8x8xf32>\n"
      "  %2 = stablehlo.abs %0 : tensor<8x8xf32>\n"
      "  %3 = sdy.manual_computation(%1, %2, %2) in_shardings=[<@m, [{\"q\"}, {}]>, <@m, [{\"p\"}, {}]>, <@m, [{}, {\"p\"}]>] out_shardings=[<@m, [{\"q\"}, {}]>] manual_axes={\"p\", \"q\"} (%arg1: tensor<2x8xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<8x4xf32>) {\n"
      "    sdy.return %arg1 : tensor<2x8xf32>\n"
      "  } : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  %4 = stablehlo.exponential %0 : tensor<8x8xf32>\n"
      "  return %3, %4, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}, {}]>]>} : tensor<8x8xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@m, [{\"q\"}, {}]> : tensor<8x8xf32>\n"
      "    %2 = stablehlo.abs %0 : tensor<8x8xf32>\n"
      "    %3 = sdy.manual_computation(%1, %2, %2) in_shardings=[<@m, [{\"q\"}, {}]>, <@m, [{\"p\"}, {}]>, <@m, [{}, {\"p\"}]>] out_shardings=[<@m, [{\"q\"}, {}]>] manual_axes={\"p\", \"q\"} (%arg1: tensor<2x8xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<8x4xf32>) {\n"
      "      sdy.return %arg1 : tensor<2x8xf32>\n"
      "    } : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %4 = stablehlo.exponential %0 : tensor<8x8xf32>\n"
      "    return %3, %4, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_constraints_apply, want);
}
END_TEST

static Suite *sharding_constraints_suite(void) {
  Suite *s = suite_create("sharding_constraints");
  TCase *tc = tcase_create("apply");
  tcase_add_test(tc, only_closed_constraints_on_unsharded_inputs_without_rivals_apply);
  tcase_add_test(tc, constraint_chain_takes_over_later_uses_of_its_input);
  tcase_add_test(tc, constraint_on_a_while_argument_moves_to_the_top_and_takes_its_uses);
  tcase_add_test(tc, manual_computation_in_shardings_apply_to_their_operands);
  tcase_add_test(tc, constraint_on_a_data_flow_edge_moves_after_it_and_leaves_its_unreduced_axes);
  tcase_add_test(tc, chain_into_manual_computation_and_value_taken_twice_differently_stay_as_written);
  suite_add_tcase(s, tc);
  tc = tcase_create("reshard");
  tcase_add_test(tc, every_constraint_becomes_a_reshard);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(sharding_constraints_suite()); }
