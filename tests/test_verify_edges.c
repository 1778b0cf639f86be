/*
 * test_verify_edges.c - the checks of propagation's debugging attributes (ir/verify_edges.c)
 * and of where a sharding attribute of the wrong kind is reported (ir/verify.c), with Shardy's
 * words: each case is a module of this suite's own, read and verified.
 */
#include <check.h>
#include <string.h>

#include "ir/verify.h"
#include "mlir/mlir.h"
#include "test_support.h"

/* Reads `text` as t.mlir and verifies it: SP_OK when `expected` is NULL, else an error whose
 * message contains `expected`. */
static void check_text(const char *text, const char *expected) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "the reader rejected the case: %s", err.msg);
  rc = sp_verify_module(m, &err);
  if (!expected) {
    ck_assert_msg(rc == SP_OK, "unexpected error: %s", err.msg);
  } else {
    ck_assert_int_eq(rc, SP_EINVAL);
    ck_assert_msg(strstr(err.msg, expected), "got: %s", err.msg);
  }
  sp_module_free(m);
}

#define MESH "sdy.mesh @g = <[\"u\"=4, \"v\"=2]>\n"
#define FUNC_HEAD "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@g, [{\"u\"}]>}) -> tensor<8xf32> {\n"
#define ADD_WITH(attrs) "  %0 = stablehlo.multiply %arg0, %arg0 {" attrs "} : tensor<8xf32>\n"
#define FUNC_TAIL "  return %0 : tensor<8xf32>\n}\n"
#define EDGES(body) "sdy.propagation_edges = #sdy.propagation_edges<[" body "]>"

START_TEST(well_formed_edges_on_an_op_are_accepted) {
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-0 = [{\"u\" = operand-0 -> [operand-1, result-0]}]}, "
                                           "{step-4 = [{\"v\":(1)2 = result-0 -> [operand-0]}]}"))
                 FUNC_TAIL,
             NULL);
}
END_TEST

START_TEST(a_step_given_twice_is_rejected_with_its_index) {
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-7 = [{\"u\" = operand-0 -> [result-0]}]}, "
                                           "{step-7 = [{\"v\" = operand-1 -> [result-0]}]}"))
                 FUNC_TAIL,
             "'stablehlo.multiply' op propagation edges have duplicate step index: 7");
}
END_TEST

START_TEST(a_negative_step_is_rejected) {
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step--1 = [{\"u\" = operand-0 -> [result-0]}]}")) FUNC_TAIL,
             "propagation edges have negative step index: -1");
}
END_TEST

START_TEST(a_source_among_its_targets_and_repeated_targets_are_rejected) {
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-2 = [{\"u\" = result-0 -> [operand-1, result-0]}]}"))
                 FUNC_TAIL,
             "propagation edges have a source that is the same as a target");
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-2 = [{\"v\":(1)2 = result-0 -> [operand-1, operand-1]}]}"))
                 FUNC_TAIL,
             "propagation edges have duplicate targets for step index: 2 and axis: v:(1)2");
}
END_TEST

START_TEST(indices_past_the_ops_operands_or_results_are_rejected) {
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-1 = [{\"u\" = operand-2 -> [result-0]}]}")) FUNC_TAIL,
             "expected a value ref to have an operand index in range [0, 2), got: 2");
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-1 = [{\"u\" = operand-0 -> [result-3]}]}")) FUNC_TAIL,
             "expected a value ref to have a result index in range [0, 1), got: 3");
}
END_TEST

START_TEST(edges_need_a_sharding_on_the_op_and_axes_of_its_meshes) {
  check_text(MESH "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
             ADD_WITH(EDGES("{step-1 = [{\"u\" = operand-0 -> [result-0]}]}")) FUNC_TAIL,
             "expected propagation edges attr to reference a sharding");
  check_text(MESH FUNC_HEAD ADD_WITH(EDGES("{step-1 = [{\"w\" = operand-0 -> [result-0]}]}")) FUNC_TAIL,
             "expected axis ref to be in one of the meshes");
}
END_TEST

START_TEST(edge_attributes_of_another_kind_are_rejected_by_name) {
  check_text(MESH FUNC_HEAD ADD_WITH("sdy.propagation_edges = \"x\"") FUNC_TAIL,
             "should have a propagation edges attribute of type PropagationEdgesAttr for attr "
             "named 'sdy.propagation_edges'");
  check_text(MESH FUNC_HEAD ADD_WITH("sdy.block_arg_propagation_edges = [4]") FUNC_TAIL,
             "should have a propagation edges attribute of type ArrayAttr<PropagationEdgesAttr> "
             "for attr named 'sdy.result_propagation_edges' or 'sdy.block_arg_propagation_edges'");
}
END_TEST

/* The edges of a data-flow edge op name its sources, not its operands: no index check. */
START_TEST(data_flow_edge_sources_may_exceed_its_operands) {
  check_text(MESH "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
             "  %1 = stablehlo.optimization_barrier %arg0 : tensor<8xf32>\n"
             "  %0 = sdy.data_flow_edge %1 sharding=<@g, [{\"u\", ?}]> {"
             EDGES("{step-3 = [{\"u\" = operand-2 -> [result-0]}]}") "} : tensor<8xf32>\n" FUNC_TAIL,
             NULL);
}
END_TEST

START_TEST(single_sharding_on_an_op_and_per_value_sharding_on_an_argument_are_rejected) {
  check_text(MESH FUNC_HEAD ADD_WITH("sdy.sharding = #sdy.sharding<@g, [{\"u\"}]>") FUNC_TAIL,
             "'stablehlo.multiply' op should have a sharding attribute of type "
             "TensorShardingPerValueAttr");
  check_text(MESH "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32> {sdy.sharding = "
             "#sdy.sharding_per_value<[<@g, [{\"u\"}]>]>}) -> tensor<8xf32> {\n"
             "  %0 = stablehlo.multiply %arg0, %arg1 : tensor<8xf32>\n" FUNC_TAIL,
             "'func.func' op arg 1 - should have a sharding attribute of type TensorShardingAttr");
}
END_TEST

START_TEST(a_mesh_axis_of_size_zero_also_fails_the_axis_list) {
  check_text("sdy.mesh @g = <[\"u\"=0]>\n", "axis size must be at least 1, got: 0\ncustom op "
             "'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a "
             "`::llvm::ArrayRef<MeshAxisAttr>`");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("verify_edges");
  TCase *tc = tcase_create("edges");
  tcase_add_test(tc, well_formed_edges_on_an_op_are_accepted);
  tcase_add_test(tc, a_step_given_twice_is_rejected_with_its_index);
  tcase_add_test(tc, a_negative_step_is_rejected);
  tcase_add_test(tc, a_source_among_its_targets_and_repeated_targets_are_rejected);
  tcase_add_test(tc, indices_past_the_ops_operands_or_results_are_rejected);
  tcase_add_test(tc, edges_need_a_sharding_on_the_op_and_axes_of_its_meshes);
  tcase_add_test(tc, edge_attributes_of_another_kind_are_rejected_by_name);
  tcase_add_test(tc, data_flow_edge_sources_may_exceed_its_operands);
  suite_add_tcase(s, tc);
  tc = tcase_create("sharding kinds");
  tcase_add_test(tc, single_sharding_on_an_op_and_per_value_sharding_on_an_argument_are_rejected);
  tcase_add_test(tc, a_mesh_axis_of_size_zero_also_fails_the_axis_list);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
