/*
 * test_data_flow_edges.c - -sdy-add-data-flow-edges and -sdy-sink-data-flow-edges
 * (propagation/data_flow_edges.h), text in, text out.
 */
#include <check.h>

#include "pass_test.h"
#include "propagation/data_flow_edges.h"
#include "test_support.h"

/* A while loop with a token operand, before and after -sdy-add-data-flow-edges. */
static const char *const WHILE_MODULE =
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {\n"
    "  %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>, <@mesh, []>, <@mesh, []>]>}\n"
    "    cond {\n"
    "    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %2 : tensor<i1>\n"
    "  } do {\n"
    "    %2 = stablehlo.negate %iterArg : tensor<8xf32>\n"
    "    stablehlo.return %2, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
    "  }\n"
    "  %1 = stablehlo.negate %0#0 : tensor<8xf32>\n"
    "  return %1, %0#2 : tensor<8xf32>, !stablehlo.token\n"
    "}\n";
static const char *const WHILE_MODULE_WITH_EDGES =
    "module {\n"
    "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {\n"
    "    %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>, <@mesh, []>, <@mesh, []>]>}\n"
    "     cond {\n"
    "      %4 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %4 : tensor<i1>\n"
    "    } do {\n"
    "      %4 = stablehlo.negate %iterArg : tensor<8xf32>\n"
    "      stablehlo.return %4, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
    "    }\n"
    "    %1 = sdy.data_flow_edge %0#0 sharding=<@mesh, [{\"a\", ?}]> : tensor<8xf32>\n"
    "    %2 = sdy.data_flow_edge %0#1 sharding=<@mesh, []> : tensor<i32>\n"
    "    %3 = stablehlo.negate %1 : tensor<8xf32>\n"
    "    return %3, %0#2 : tensor<8xf32>, !stablehlo.token\n"
    "  }\n"
    "}\n";

START_TEST(while_results_get_edges_that_take_over_their_uses_tokens_skipped) {
  pt_expect1(WHILE_MODULE, sp_data_flow_edges_add, WHILE_MODULE_WITH_EDGES);
}
END_TEST

START_TEST(adding_edges_twice_adds_each_edge_once) {
  const pt_pass_fn passes[] = {sp_data_flow_edges_add, sp_data_flow_edges_add, NULL};
  pt_expect(WHILE_MODULE, passes, WHILE_MODULE_WITH_EDGES);
}
END_TEST

START_TEST(computation_arguments_get_edges_at_the_top_of_the_body_in_local_view) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\", ?}, {?}], replicated={\"a\"}>] out_shardings=[<@mesh, [{\"b\", ?}, {?}]>] manual_axes={\"b\"} (%arg1: tensor<4x8xf32>) {\n"
      "    %2 = stablehlo.negate %arg1 : tensor<4x8xf32>\n"
      "    sdy.return %2 : tensor<4x8xf32>\n"
      "  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  %1 = sdy.named_computation<\"f\">(%0) in_shardings=[<@mesh, [{\"a\"}, {}]>] (%arg1: tensor<8x8xf32>) {\n"
      "    sdy.return %arg1 : tensor<8x8xf32>\n"
      "  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  return %1 : tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\", ?}, {?}], replicated={\"a\"}>] out_shardings=[<@mesh, [{\"b\", ?}, {?}]>] manual_axes={\"b\"} (%arg1: tensor<4x8xf32>) {\n"
      "      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{?}, {?}], replicated={\"a\"}> : tensor<4x8xf32>\n"
      "      %5 = stablehlo.negate %4 : tensor<4x8xf32>\n"
      "      sdy.return %5 : tensor<4x8xf32>\n"
      "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{\"b\", ?}, {?}]> : tensor<8x8xf32>\n"
      "    %2 = sdy.named_computation<\"f\">(%1) in_shardings=[<@mesh, [{\"a\"}, {}]>] (%arg1: tensor<8x8xf32>) {\n"
      "      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{\"a\"}, {}]> : tensor<8x8xf32>\n"
      "      sdy.return %4 : tensor<8x8xf32>\n"
      "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %3 = sdy.data_flow_edge %2 : tensor<8x8xf32>\n"
      "    return %3 : tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_data_flow_edges_add, want);
}
END_TEST

START_TEST(sink_writes_back_fills_missing_owners_open_and_restores_manual_axes) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\"}, {?}]>] out_shardings=[<@mesh, [{\"b\"}, {?}]>] manual_axes={\"b\"} (%arg1: tensor<4x8xf32>) {\n"
      "    %1 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{\"a\", ?}, {?}]> : tensor<4x8xf32>\n"
      "    %2 = stablehlo.negate %1 : tensor<4x8xf32>\n"
      "    sdy.return %2 : tensor<4x8xf32>\n"
      "  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  %3 = sdy.data_flow_edge %0 sharding=<@mesh, [{\"b\", \"a\", ?}, {?}]> : tensor<8x8xf32>\n"
      "  %4:2 = stablehlo.optimization_barrier %3, %3 : tensor<8x8xf32>, tensor<8x8xf32>\n"
      "  %5 = sdy.data_flow_edge %4#1 sharding=<@mesh, [{}, {\"a\"}]> : tensor<8x8xf32>\n"
      "  %6 = sdy.data_flow_edge %4#0 : tensor<8x8xf32>\n"
      "  return %5 : tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\", \"a\", ?}, {?}]>] out_shardings=[<@mesh, [{\"b\", \"a\", ?}, {?}]>] manual_axes={\"b\"} (%arg1: tensor<4x8xf32>) {\n"
      "      %2 = stablehlo.negate %arg1 : tensor<4x8xf32>\n"
      "      sdy.return %2 : tensor<4x8xf32>\n"
      "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>, <@mesh, [{}, {\"a\"}]>]>} %0, %0 : tensor<8x8xf32>, tensor<8x8xf32>\n"
      "    return %1#1 : tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_data_flow_edges_sink, want);
}
END_TEST

START_TEST(add_then_sink_gives_back_the_same_module) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0 = \"stablehlo.case\"(%arg0) ({\n"
      "    stablehlo.return %arg1 : tensor<8xf32>\n"
      "  }, {\n"
      "    stablehlo.return %arg1 : tensor<8xf32>\n"
      "  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<i32>) -> tensor<8xf32>\n"
      "  %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>, <@mesh, [{?}]>]>} %0, %arg1 : tensor<8xf32>, tensor<8xf32>\n"
      "  return %1#0, %1#1 : tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = \"stablehlo.case\"(%arg0) ({\n"
      "      stablehlo.return %arg1 : tensor<8xf32>\n"
      "    }, {\n"
      "      stablehlo.return %arg1 : tensor<8xf32>\n"
      "    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<i32>) -> tensor<8xf32>\n"
      "    %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>, <@mesh, [{?}]>]>} %0, %arg1 : tensor<8xf32>, tensor<8xf32>\n"
      "    return %1#0, %1#1 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {sp_data_flow_edges_add, sp_data_flow_edges_sink, NULL};
  pt_expect(in, passes, want);
}
END_TEST

START_TEST(sink_leaves_an_op_alone_when_no_edge_has_a_sharding) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {\n"
      "  %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
      "    cond {\n"
      "    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %2 : tensor<i1>\n"
      "  } do {\n"
      "    %2 = stablehlo.negate %iterArg : tensor<8xf32>\n"
      "    stablehlo.return %2, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
      "  }\n"
      "  %1 = stablehlo.negate %0#0 : tensor<8xf32>\n"
      "  return %1, %0#2 : tensor<8xf32>, !stablehlo.token\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {\n"
      "    %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
      "     cond {\n"
      "      %2 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %2 : tensor<i1>\n"
      "    } do {\n"
      "      %2 = stablehlo.negate %iterArg : tensor<8xf32>\n"
      "      stablehlo.return %2, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token\n"
      "    }\n"
      "    %1 = stablehlo.negate %0#0 : tensor<8xf32>\n"
      "    return %1, %0#2 : tensor<8xf32>, !stablehlo.token\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {sp_data_flow_edges_add, sp_data_flow_edges_sink, NULL};
  pt_expect(in, passes, want);
}
END_TEST

START_TEST(data_flow_ops_are_while_case_barrier_and_computations) {
  sp_module *m = pt_parse(
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.optimization_barrier %arg0 : tensor<8xf32>\n"
      "  %1 = stablehlo.negate %0 : tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n"
      "}\n");
  sp_op *fn = sp_module_lookup_func(m, "main");
  sp_op *barrier = fn->regions[0].blocks[0]->first;
  ck_assert(sp_data_flow_is_data_flow_op(barrier));
  ck_assert(!sp_data_flow_is_data_flow_op(barrier->next));
  ck_assert(!sp_data_flow_is_data_flow_op(fn));
  sp_module_free(m);
}
END_TEST

static Suite *data_flow_edges_suite(void) {
  Suite *s = suite_create("data_flow_edges");
  TCase *tc = tcase_create("add");
  tcase_add_test(tc, while_results_get_edges_that_take_over_their_uses_tokens_skipped);
  tcase_add_test(tc, adding_edges_twice_adds_each_edge_once);
  tcase_add_test(tc, computation_arguments_get_edges_at_the_top_of_the_body_in_local_view);
  tcase_add_test(tc, data_flow_ops_are_while_case_barrier_and_computations);
  suite_add_tcase(s, tc);
  tc = tcase_create("sink");
  tcase_add_test(tc, sink_writes_back_fills_missing_owners_open_and_restores_manual_axes);
  tcase_add_test(tc, add_then_sink_gives_back_the_same_module);
  tcase_add_test(tc, sink_leaves_an_op_alone_when_no_edge_has_a_sharding);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(data_flow_edges_suite()); }
