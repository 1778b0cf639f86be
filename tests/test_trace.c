/*
 * test_trace.c - the propagation trace (propagation/trace.h, trace_attrs.h): origins and edges
 * are kept as data the plan can read, numbered across apply-sharding-constraints and
 * propagation, printed as Shardy's attributes, gathered on data-flow owners when edges sink,
 * and owned by the module. Modules here are this suite's own.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "propagation/pipeline.h"
#include "propagation/prop_passes.h"
#include "propagation/trace.h"
#include "test_support.h"

static void run(sp_module *m, int (*pass)(sp_module *, const char *, sp_err *), const char *opts) {
  sp_err err = {0};
  int rc = pass(m, opts, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
}

static const sp_op *nth_op(const sp_module *m, int n) {
  sp_op *fn = sp_module_main_func(m);
  const sp_op *op = fn->regions[0].blocks[0]->first;
  while (n-- > 0) op = op->next;
  return op;
}

static bool axis_is(const sp_axis_ref *r, const char *name) {
  return strcmp(r->name, name) == 0 && r->size == 0;
}

/* A dot whose lhs is sharded by the user and whose result sharding comes from the function's
 * result: each axis of the dot remembers which side it came from. */
static const char DOT[] =
    "sdy.mesh @m = <[\"x\"=2, \"y\"=4]>\n"
    "func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\", ?}, {?}]>},\n"
    "                %arg1: tensor<8x32xf32>)\n"
    "    -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"y\", ?}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] :\n"
    "      (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>\n"
    "  %1 = stablehlo.negate %0 : tensor<16x32xf32>\n"
    "  return %1 : tensor<16x32xf32>\n"
    "}\n";

START_TEST(origins_name_the_argument_and_result_each_axis_came_from) {
  sp_module *m = sp_test_parse(DOT);
  run(m, sp_prop_pass_aggressive, "debug-sharding-origins=true");
  const sp_trace *t = sp_trace_get(m);
  ck_assert_ptr_nonnull(t);
  const sp_op *dot = nth_op(m, 0);
  int n;
  const sp_axis_origin *o = sp_trace_origins(t, &dot->results[0], &n);
  ck_assert_int_eq(n, 2);
  for (int i = 0; i < n; i++) {
    if (axis_is(&o[i].axis, "x")) {
      ck_assert_int_eq(o[i].origin.kind, SP_ORIGIN_INPUT);
      ck_assert_int_eq(o[i].origin.index, 0);
    } else {
      ck_assert(axis_is(&o[i].axis, "y"));
      ck_assert_int_eq(o[i].origin.kind, SP_ORIGIN_OUTPUT);
      ck_assert_int_eq(o[i].origin.index, 0);
    }
  }
  /* The rhs gained y from the result (through the dot's rule), not from an input. */
  sp_value *rhs = sp_module_main_func(m)->regions[0].blocks[0]->args[1];
  o = sp_trace_origins(t, rhs, &n);
  ck_assert_int_eq(n, 1);
  ck_assert(axis_is(&o[0].axis, "y"));
  ck_assert_int_eq(o[0].origin.kind, SP_ORIGIN_OUTPUT);
  char *text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origins = [{x = \"input: 0\", y = \"output: 0\"}]"));
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origins = {y = \"output: 0\"}"));
  /* On the argument that introduced it, an axis reads "self". */
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origins = {x = \"self\"}"));
  free(text);
  sp_module_free(m);
}
END_TEST

START_TEST(without_debug_options_no_trace_is_kept) {
  sp_module *m = sp_test_parse(DOT);
  run(m, sp_prop_pass_aggressive, "");
  ck_assert_ptr_null(sp_trace_get(m));
  char *text = sp_test_print(m);
  ck_assert_ptr_null(strstr(text, "sdy.sharding_origins"));
  ck_assert_ptr_null(strstr(text, "sdy.propagation_edges"));
  free(text);
  sp_module_free(m);
}
END_TEST

/* A closed constraint on an unsharded op result is applied (step 0), then propagation moves
 * its axis on (later steps). */
static const char APPLIED[] =
    "sdy.mesh @m = <[\"p\"=4, \"q\"=2]>\n"
    "func.func @main(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {\n"
    "  %0 = stablehlo.abs %arg0 : tensor<4x6xf32>\n"
    "  %1 = sdy.sharding_constraint %0 <@m, [{\"p\"}, {}]> : tensor<4x6xf32>\n"
    "  %2 = stablehlo.exponential %1 : tensor<4x6xf32>\n"
    "  return %2 : tensor<4x6xf32>\n"
    "}\n";

START_TEST(edges_are_numbered_across_applied_constraints_and_propagation) {
  sp_module *m = sp_test_parse(APPLIED);
  run(m, sp_pipeline_pass_apply_sharding_constraints, "debug-propagation-edge-sharding=true");
  run(m, sp_prop_pass_aggressive, "debug-propagation-edge-sharding=true");
  const sp_trace *t = sp_trace_get(m);
  const sp_op *abs_op = nth_op(m, 0), *sc = nth_op(m, 1), *exp_op = nth_op(m, 2);
  int n;
  /* Applied: p went from the constraint's result to its operand, in step 0. */
  const sp_trace_edge *e = sp_trace_edges(t, sc, &n);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(e[0].step, 0);
  ck_assert(axis_is(&e[0].axis, "p"));
  ck_assert(e[0].source.result);
  ck_assert_int_eq(e[0].ntargets, 1);
  ck_assert(!e[0].targets[0].result);
  /* The abs got p on its result by the constraint, and pushed it to its operand. */
  e = sp_trace_edges(t, abs_op, &n);
  ck_assert_int_eq(n, 1);
  ck_assert(e[0].source.result && !e[0].targets[0].result);
  ck_assert_int_gt(e[0].step, 0);
  /* The exponential took p from its operand. */
  e = sp_trace_edges(t, exp_op, &n);
  ck_assert_int_eq(n, 1);
  ck_assert(!e[0].source.result && e[0].targets[0].result);
  ck_assert_int_gt(e[0].step, 0);
  ck_assert_int_ge(sp_trace_steps(t), 3);
  char *text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = "
                                     "[{\"p\" = result-0 -> [operand-0]}]}]>"));
  free(text);
  sp_module_free(m);
}
END_TEST

START_TEST(applied_constraint_is_the_origin_of_its_input) {
  sp_module *m = sp_test_parse(APPLIED);
  run(m, sp_pipeline_pass_apply_sharding_constraints, "debug-sharding-origins=true");
  run(m, sp_prop_pass_aggressive, "debug-sharding-origins=true");
  const sp_trace *t = sp_trace_get(m);
  const sp_op *abs_op = nth_op(m, 0), *sc = nth_op(m, 1);
  int n;
  const sp_axis_origin *o = sp_trace_origins(t, &abs_op->results[0], &n);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(o[0].origin.kind, SP_ORIGIN_CONSTRAINT);
  ck_assert_int_eq(o[0].origin.id, 0);
  ck_assert_ptr_eq(o[0].origin.owner, &sc->results[0]);
  char *text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origin_name = \"constraint_0\""));
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origins = [{p = \"constraint_0\"}]"));
  free(text);
  sp_module_free(m);
}
END_TEST

/* A while loop: its results' origins sit on the data-flow edges during propagation and are
 * gathered on the while when the edges sink (the i32 counter has none and is skipped). */
static const char LOOP[] =
    "sdy.mesh @m = <[\"r\"=2, \"s\"=2]>\n"
    "func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"s\", ?}]>})\n"
    "    -> tensor<4x4xf32> {\n"
    "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c_0 = stablehlo.constant dense<4> : tensor<i32>\n"
    "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c) : tensor<4x4xf32>, tensor<i32>\n"
    "    cond {\n"
    "    %1 = stablehlo.compare LT, %iterArg_1, %c_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %1 : tensor<i1>\n"
    "  } do {\n"
    "    %1 = stablehlo.negate %iterArg : tensor<4x4xf32>\n"
    "    stablehlo.return %1, %iterArg_1 : tensor<4x4xf32>, tensor<i32>\n"
    "  }\n"
    "  return %0#0 : tensor<4x4xf32>\n"
    "}\n";

START_TEST(sinking_edges_gathers_their_origins_on_the_owner) {
  sp_module *m = sp_test_parse(LOOP);
  run(m, sp_pipeline_pass_add_data_flow_edges, "");
  run(m, sp_prop_pass_aggressive, "debug-sharding-origins=true");
  run(m, sp_pipeline_pass_sink_data_flow_edges, "sink-debug-sharding-origins=true");
  char *text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.result_sharding_origins = [{s = \"input: 0\"}]"));
  ck_assert_ptr_null(strstr(text, "sdy.data_flow_edge"));
  free(text);
  sp_module_free(m);
}
END_TEST

/* -sdy-propagation-pipeline with the debugging options records through its own import,
 * user-priority propagation and export: the origins reach the printed function. */
START_TEST(pipeline_with_debug_options_keeps_origins_through_export) {
  sp_module *m = sp_test_parse(APPLIED);
  run(m, sp_pipeline_pass_propagation, "debug-sharding-origins=true");
  const sp_trace *t = sp_trace_get(m);
  ck_assert(sp_trace_records_origins(t));
  sp_value *arg = sp_module_main_func(m)->regions[0].blocks[0]->args[0];
  int n;
  const sp_axis_origin *o = sp_trace_origins(t, arg, &n);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(o[0].origin.kind, SP_ORIGIN_CONSTRAINT);
  char *text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origins = {p = \"constraint_0\"}"));
  free(text);
  sp_module_free(m);
}
END_TEST

/* Origins asked for as data (the plan's way): the pipeline records them without writing any
 * attribute, and the while's results, whose origins sat on data-flow edges while
 * propagating, keep them once the edges are sunk. */
START_TEST(origins_wanted_as_data_leave_the_module_text_alone) {
  sp_module *plain = sp_test_parse(LOOP);
  run(plain, sp_pipeline_pass_propagation, NULL);
  char *want = sp_test_print(plain);
  sp_module_free(plain);
  sp_module *m = sp_test_parse(LOOP);
  sp_err err = {0};
  ck_assert_int_eq(sp_trace_want_origins(m, &err), SP_OK);
  run(m, sp_pipeline_pass_propagation, NULL);
  char *text = sp_test_print(m);
  ck_assert_str_eq(text, want);
  const sp_op *w = nth_op(m, 0);
  while (w->kind != SP_OP_WHILE) w = w->next;
  int n;
  const sp_axis_origin *o = sp_trace_origins(sp_trace_get(m), &w->results[0], &n);
  ck_assert_int_eq(n, 1);
  ck_assert(axis_is(&o[0].axis, "s"));
  ck_assert_int_eq(o[0].origin.kind, SP_ORIGIN_INPUT);
  free(text);
  free(want);
  sp_module_free(m);
}
END_TEST

/* A constraint numbered while origins were wanted as data gets its name attribute when a pass
 * asks for the debugging attributes after all. */
START_TEST(debug_origins_after_data_only_origins_still_name_constraints) {
  sp_module *m = sp_test_parse(APPLIED);
  sp_err err = {0};
  ck_assert_int_eq(sp_trace_want_origins(m, &err), SP_OK);
  ck_assert_int_eq(sp_trace_enable(m, false, false, &err), SP_OK);
  char *text = sp_test_print(m);
  ck_assert_ptr_null(strstr(text, "sharding_origin_name"));
  free(text);
  run(m, sp_pipeline_pass_apply_sharding_constraints, "debug-sharding-origins=true");
  text = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(text, "sdy.sharding_origin_name = \"constraint_0\""));
  free(text);
  sp_module_free(m);
}
END_TEST

START_TEST(origin_text_names_every_kind_as_shardy_does) {
  int self = 0, other = 0;
  struct {
    sp_origin o;
    const char *want;
  } cases[] = {
      {{SP_ORIGIN_INPUT, 2, 0, &other}, "input: 2"},
      {{SP_ORIGIN_OUTPUT, 1, 0, &other}, "output: 1"},
      {{SP_ORIGIN_CONSTRAINT, 0, 3, &other}, "constraint_3"},
      {{SP_ORIGIN_MC_INPUT, 1, 4, &other}, "mc_4_input: 1"},
      {{SP_ORIGIN_MC_OUTPUT, 0, 2, &other}, "mc_2_output: 0"},
      {{SP_ORIGIN_MC_OUTPUT, 0, 2, &self}, "self"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sp_strbuf sb = SP_STRBUF_INIT;
    sp_trace_origin_print(&sb, &cases[i].o, &self);
    ck_assert_str_eq(sp_strbuf_str(&sb), cases[i].want);
    sp_strbuf_free(&sb);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("trace");
  TCase *tc = tcase_create("trace");
  tcase_add_test(tc, origins_name_the_argument_and_result_each_axis_came_from);
  tcase_add_test(tc, without_debug_options_no_trace_is_kept);
  tcase_add_test(tc, edges_are_numbered_across_applied_constraints_and_propagation);
  tcase_add_test(tc, applied_constraint_is_the_origin_of_its_input);
  tcase_add_test(tc, sinking_edges_gathers_their_origins_on_the_owner);
  tcase_add_test(tc, pipeline_with_debug_options_keeps_origins_through_export);
  tcase_add_test(tc, origins_wanted_as_data_leave_the_module_text_alone);
  tcase_add_test(tc, debug_origins_after_data_only_origins_still_name_constraints);
  tcase_add_test(tc, origin_text_names_every_kind_as_shardy_does);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
