/*
 * test_func_calls.c - calls around propagation (propagation/func_calls.h): func shardings onto
 * calls, importing calls as named computations (flattening), function order, result shardings
 * from returned values and call reshards, and the way back through call_graph.h as the
 * propagation pipeline runs it; text in, text out.
 */
#include <check.h>

#include "pass_test.h"
#include "propagation/call_graph.h"
#include "propagation/data_flow_edges.h"
#include "propagation/func_calls.h"
#include "propagation/mesh_import.h"
#include "propagation/propagate.h"
#include "test_support.h"

/* foo calls bar; main calls foo, then bar with its own result sharding. */
/* The import with data-flow edges, as the propagation pipeline runs it. */
static int import_calls(sp_module *m, sp_err *err) { return sp_func_calls_import(m, true, err); }

/* The way back, as the propagation pipeline runs it (pipeline.h): named computations to
 * functions (call_graph.h), result shardings from the returned values, un-flattening, symbol
 * DCE. */
static int export_calls(sp_module *m, sp_err *err) {
  int rc = sp_call_graph_export_named(m, err);
  if (!rc) rc = sp_func_calls_results_from_returns(m, err);
  if (!rc) rc = sp_call_graph_unflatten(m, false, err);
  return rc ? rc : sp_symbol_dce(m, err);
}

static const char *const CALL_GRAPH_MODULE =
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func private @foo(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
    "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
    "  %1 = call @bar(%0) : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  return %1 : tensor<8xf32>\n"
    "}\n"
    "func.func private @bar(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) {\n"
    "  return %arg0 : tensor<8xf32>\n"
    "}\n"
    "func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
    "  %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  %1 = call @bar(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  return %0, %1 : tensor<8xf32>, tensor<8xf32>\n"
    "}\n";

START_TEST(calls_without_shardings_take_the_callee_result_shardings) {
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func private @foo(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
      "    %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
      "    %1 = call @bar(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %1 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @bar(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) {\n"
      "    return %arg0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %1 = call @bar(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0, %1 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(CALL_GRAPH_MODULE, sp_func_calls_shardings_to_calls, want);
}
END_TEST

/* @bar is called from @foo and from main, and main's call of @bar takes @foo's result: a
 * change reaching @bar's argument walks to @bar's calls' results, to @foo's callers, back to
 * @bar's argument. Propagating the functions as they are (no import) must end. */
START_TEST(a_function_called_from_two_places_feeding_each_other_propagates_to_an_end) {
  sp_module *m = pt_parse(CALL_GRAPH_MODULE);
  pt_run(m, sp_func_calls_shardings_to_calls);
  sp_propagate_options o = {0};
  sp_propagate_stats stats;
  sp_err err;
  ck_assert_int_eq(sp_propagate_module(m, &o, &stats, &err), SP_OK);
  char *text = pt_print(m);
  ck_assert_msg(strstr(text, "stablehlo.negate %arg0 {sdy.sharding = "
                             "#sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>]>}"),
                "foo's negate did not take its argument's axis:\n%s", text);
  free(text);
  sp_module_free(m);
}
END_TEST

START_TEST(each_call_becomes_a_named_computation_with_its_own_body_copy_and_edges) {
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = sdy.named_computation<\"foo\">(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] (%arg1: tensor<8xf32>) {\n"
      "      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "      %5 = stablehlo.negate %4 : tensor<8xf32>\n"
      "      %6 = sdy.named_computation<\"bar\">(%5) (%arg2: tensor<8xf32>) {\n"
      "        %8 = sdy.data_flow_edge %arg2 : tensor<8xf32>\n"
      "        sdy.return %8 : tensor<8xf32>\n"
      "      } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "      %7 = sdy.data_flow_edge %6 : tensor<8xf32>\n"
      "      sdy.return %7 : tensor<8xf32>\n"
      "    } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %1 = sdy.data_flow_edge %0 : tensor<8xf32>\n"
      "    %2 = sdy.named_computation<\"bar\">(%1) out_shardings=[<@mesh, [{?}]>] (%arg1: tensor<8xf32>) {\n"
      "      %4 = sdy.data_flow_edge %arg1 : tensor<8xf32>\n"
      "      sdy.return %4 : tensor<8xf32>\n"
      "    } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %3 = sdy.data_flow_edge %2 sharding=<@mesh, [{?}]> : tensor<8xf32>\n"
      "    return %1, %3 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {import_calls, sp_symbol_dce, NULL};
  pt_expect(CALL_GRAPH_MODULE, passes, want);
}
END_TEST

/* The two copies of @bar return their argument, unsharded in both: once the results take the
 * returned values' shardings they agree, so both calls go to the first one called (main's,
 * whose call keeps its own result sharding) and symbol DCE erases the other. */
START_TEST(import_then_export_merges_the_copies_whose_shardings_agree) {
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %1 = call @bar_0(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0, %1 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "  func.func private @foo(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
      "    %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
      "    %1 = call @bar_0(%0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %1 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @bar_0(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    return %arg0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {import_calls, sp_symbol_dce, sp_data_flow_edges_sink, export_calls, NULL};
  pt_expect(CALL_GRAPH_MODULE, passes, want);
}
END_TEST

START_TEST(export_reuses_the_first_called_copy_with_the_same_signature) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0 = sdy.named_computation<\"f\">(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] (%arg1: tensor<8xf32>) {\n"
      "    %3 = sdy.named_computation<\"g\">(%arg1) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] (%arg2: tensor<8xf32>) {\n"
      "      %4 = stablehlo.abs %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : tensor<8xf32>\n"
      "      sdy.return %4 : tensor<8xf32>\n"
      "    } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    sdy.return %3 : tensor<8xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %1 = sdy.named_computation<\"g\">(%0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] (%arg1: tensor<8xf32>) {\n"
      "    %4 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : tensor<8xf32>\n"
      "    sdy.return %4 : tensor<8xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %2 = sdy.named_computation<\"g\">(%0) in_shardings=[<@mesh, [{\"b\"}]>] out_shardings=[<@mesh, [{\"b\"}]>] (%arg1: tensor<8xf32>) {\n"
      "    %4 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : tensor<8xf32>\n"
      "    sdy.return %4 : tensor<8xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %1, %2 : tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %1 = call @g_0(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %2 = call @g_1(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %1, %2 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "  func.func private @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "    %0 = call @g_0(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @g_0(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "    %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @g_1(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) {\n"
      "    %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, export_calls, want);
}
END_TEST

START_TEST(functions_move_to_the_end_callers_first) {
  const char *in =
      "func.func private @bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n"
      "func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @bar(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n"
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = call @bar(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func private @bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    return %arg0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_func_calls_pre_order, want);
}
END_TEST

START_TEST(call_result_differing_from_callee_gets_a_reshard) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func private @f(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}]>}) {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %1 = stablehlo.negate %0 : tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func private @f(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    %1 = sdy.reshard %0 <@mesh, [{\"b\"}]> : tensor<8xf32>\n"
      "    %2 = stablehlo.negate %1 : tensor<8xf32>\n"
      "    return %2 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {sp_func_calls_results_from_returns, sp_func_calls_insert_reshards, NULL};
  pt_expect(in, passes, want);
}
END_TEST

START_TEST(recursive_call_is_an_error) {
  pt_expect_error(
      "func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n",
      import_calls, SP_EUNSUPPORTED, "recursive call to @f");
}
END_TEST

START_TEST(calls_to_declarations_stay_calls) {
  const char *in =
      "func.func private @ext(tensor<8xf32>) -> tensor<8xf32>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @ext(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  func.func private @ext(tensor<8xf32>) -> tensor<8xf32>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = call @ext(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  const pt_pass_fn passes[] = {import_calls, sp_symbol_dce, NULL};
  pt_expect(in, passes, want);
}
END_TEST

static Suite *func_calls_suite(void) {
  Suite *s = suite_create("func_calls");
  TCase *tc = tcase_create("import");
  tcase_add_test(tc, calls_without_shardings_take_the_callee_result_shardings);
  tcase_add_test(tc, each_call_becomes_a_named_computation_with_its_own_body_copy_and_edges);
  tcase_add_test(tc, recursive_call_is_an_error);
  tcase_add_test(tc, a_function_called_from_two_places_feeding_each_other_propagates_to_an_end);
  tcase_add_test(tc, calls_to_declarations_stay_calls);
  tcase_add_test(tc, functions_move_to_the_end_callers_first);
  suite_add_tcase(s, tc);
  tc = tcase_create("export");
  tcase_add_test(tc, import_then_export_merges_the_copies_whose_shardings_agree);
  tcase_add_test(tc, export_reuses_the_first_called_copy_with_the_same_signature);
  tcase_add_test(tc, call_result_differing_from_callee_gets_a_reshard);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(func_calls_suite()); }
