/*
 * test_pipeline.c - -sdy-propagation-pipeline end to end (propagation/pipeline.h): the JAX MLP
 * example, a module with calls and constants, options, and the import/export pass adapters.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "pass_test.h"
#include "propagation/pipeline.h"
#include "test_support.h"

static int pipeline_default(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_propagation(m, NULL, err);
}

/* The MLP of the JAX guide: x data-parallel, w1 column-split on "model", w2 left open. The
 * pipeline must shard w2's rows (the contracting dim of the second matmul) on "model". */
START_TEST(jax_mlp_pipeline_shards_w2_rows_on_model) {
  sp_test_require_shared("examples/jax_mlp.mlir");
  size_t len;
  char *text = sp_test_read_file(sp_test_shared_path("examples/jax_mlp.mlir"), &len);
  ck_assert_ptr_nonnull(text);
  sp_module *m = pt_parse(text);
  pt_run(m, pipeline_default);
  sp_op *fn = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(fn);
  const sp_sharding *w2 = fn->regions[0].blocks[0]->args[2]->sharding;
  ck_assert_ptr_nonnull(w2);
  ck_assert_int_eq(w2->rank, 2);
  ck_assert_int_eq(w2->dims[0].naxes, 1);
  ck_assert_str_eq(w2->dims[0].axes[0].name, "model");
  ck_assert(!sp_axis_is_sub(&w2->dims[0].axes[0]));
  ck_assert(w2->dims[0].closed);
  ck_assert_int_eq(w2->dims[1].naxes, 0);
  ck_assert(w2->dims[1].closed);
  char *out = pt_print(m);
  ck_assert_ptr_nonnull(
      strstr(out, "%arg2: tensor<256x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>}"));
  free(out);
  sp_module_free(m);
  free(text);
}
END_TEST

START_TEST(calls_become_one_function_per_sharding_and_constants_get_sharded) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"one\"=1]>\n"
      "func.func private @layer(%arg0: tensor<8x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<8x16xf32> {\n"
      "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = stablehlo.constant dense<0.0> : tensor<8x16xf32>\n"
      "  %2 = stablehlo.maximum %0, %1 : tensor<8x16xf32>\n"
      "  return %2 : tensor<8x16xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"one\", ?}, {?}]>},\n"
      "                %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {\"b\"}]>},\n"
      "                %arg2: tensor<16x16xf32>) -> tensor<8x16xf32> {\n"
      "  %0 = call @layer(%arg0, %arg1) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = call @layer(%0, %arg2) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "  %2 = sdy.sharding_constraint %1 <@mesh, [{\"a\"}, {}]> : tensor<8x16xf32>\n"
      "  return %2 : tensor<8x16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"one\"=1]>\n"
      "  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"b\"}]>}, %arg2: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) {\n"
      "    %0 = call @layer(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "    %1 = call @layer_0(%0, %arg2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "    %2 = sdy.reshard %1 <@mesh, [{\"a\"}, {}]> : tensor<8x16xf32>\n"
      "    return %2 : tensor<8x16xf32>\n"
      "  }\n"
      "  func.func private @layer(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"b\"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\"}]>}) {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "    %1 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>} dense<0.000000e+00> : tensor<8x16xf32>\n"
      "    %2 = stablehlo.maximum %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>} : tensor<8x16xf32>\n"
      "    return %2 : tensor<8x16xf32>\n"
      "  }\n"
      "  func.func private @layer_0(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\"}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
      "    %1 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} dense<0.000000e+00> : tensor<8x16xf32>\n"
      "    %2 = stablehlo.maximum %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : tensor<8x16xf32>\n"
      "    return %2 : tensor<8x16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, pipeline_default, want);
}
END_TEST

static void parse_fails(const char *text, int code, const char *fragment) {
  sp_pipeline_options o;
  sp_err err;
  sp_err_clear(&err);
  ck_assert_int_eq(sp_pipeline_parse_options(text, &o, &err), code);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "message '%s' lacks '%s'", err.msg, fragment);
}

/* One function called three times: with an operand sharded on "x", one on "y", one unsharded. */
static const char *const THREE_CALLS =
    "sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
    "func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, %arg2: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {\n"
    "  %0 = call @scale(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %1 = call @scale(%arg1) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %2 = call @scale(%arg2) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  return %0, %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>\n"
    "}\n"
    "func.func private @scale(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
    "  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x4xf32>\n"
    "  return %0 : tensor<8x4xf32>\n"
    "}\n";

/* The same, the second and third operands both on "y". */
static const char *const Y_TWICE =
    "sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
    "func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, %arg2: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {\n"
    "  %0 = call @scale(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %1 = call @scale(%arg1) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %2 = call @scale(%arg2) : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  return %0, %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>\n"
    "}\n"
    "func.func private @scale(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
    "  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x4xf32>\n"
    "  return %0 : tensor<8x4xf32>\n"
    "}\n";

static int pipeline_dedup(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_propagation(m, "dedup-functions-fully=true", err);
}

static int count_funcs(const sp_module *m) {
  int n = 0;
  for (const sp_op *op = sp_module_body(m)->first; op; op = op->next) n += op->kind == SP_OP_FUNC;
  return n;
}

/* Shardy's pipeline flattens, propagates each copy on its own, and only the un-flattening
 * differs: every call goes to one copy (the first called, as no sharding class has more calls).
 * The calls keep what propagation gave them, so the main function's arguments and results keep
 * their own shardings; call reshards and the operands' reshards reconcile them with the copy. */
START_TEST(dedup_functions_fully_sends_every_call_to_one_copy_and_reshards_around_it) {
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, %arg2: tensor<8x4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, tensor<8x4xf32>) {\n"
      "    %0 = sdy.reshard %arg2 <@m, [{\"x\"}, {}]> : tensor<8x4xf32>\n"
      "    %1 = sdy.reshard %arg1 <@m, [{\"x\"}, {}]> : tensor<8x4xf32>\n"
      "    %2 = call @scale(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %3 = call @scale(%1) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %4 = sdy.reshard %3 <@m, [{\"y\"}, {}]> : tensor<8x4xf32>\n"
      "    %5 = call @scale(%0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    return %2, %4, %5 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>\n"
      "  }\n"
      "  func.func private @scale(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}) {\n"
      "    %0 = stablehlo.multiply %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : tensor<8x4xf32>\n"
      "    return %0 : tensor<8x4xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(THREE_CALLS, pipeline_dedup, want);
}
END_TEST

/* The copy kept is the one of the sharding class with the most calls: here the "y" one (the
 * third call's copy, the class having two calls when it is met), so only the "x" call
 * reshards. */
START_TEST(dedup_functions_fully_keeps_the_copy_of_the_most_called_sharding) {
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, %arg2: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}) {\n"
      "    %0 = sdy.reshard %arg0 <@m, [{\"y\"}, {}]> : tensor<8x4xf32>\n"
      "    %1 = call @scale_1(%0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"y\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %2 = sdy.reshard %1 <@m, [{\"x\"}, {}]> : tensor<8x4xf32>\n"
      "    %3 = call @scale_1(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"y\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    %4 = call @scale_1(%arg2) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"y\"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n"
      "    return %2, %3, %4 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>\n"
      "  }\n"
      "  func.func private @scale_1(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {}]>}) {\n"
      "    %0 = stablehlo.multiply %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"y\"}, {}]>]>} : tensor<8x4xf32>\n"
      "    return %0 : tensor<8x4xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(Y_TWICE, pipeline_dedup, want);
}
END_TEST

/* Without the option the copies that differ stay apart: one function per sharding class. */
START_TEST(without_dedup_each_sharding_class_gets_its_own_function) {
  sp_module *m = pt_parse(THREE_CALLS);
  pt_run(m, pipeline_default);
  ck_assert_int_eq(count_funcs(m), 4); /* main, @scale and two copies */
  char *out = pt_print(m);
  ck_assert_ptr_null(strstr(out, "sdy.reshard"));
  free(out);
  sp_module_free(m);
  m = pt_parse(Y_TWICE);
  pt_run(m, pipeline_default);
  ck_assert_int_eq(count_funcs(m), 3); /* main, the "x" copy, one "y" copy for two calls */
  sp_module_free(m);
}
END_TEST

START_TEST(pipeline_options_parse_with_shardy_defaults_and_name_bad_ones) {
  sp_pipeline_options o;
  sp_err err;
  ck_assert_int_eq(sp_pipeline_parse_options(NULL, &o, &err), SP_OK);
  ck_assert_int_eq(o.prop.strategy, SP_PROP_AGGRESSIVE);
  ck_assert(!o.prop.keep_sharding_rules && !o.skip_convert_to_reshard && !o.skip_inline);
  ck_assert_int_eq(sp_pipeline_parse_options(
                       "keep-sharding-rules=true, skip-convert-to-reshard propagation-strategy=basic "
                       "conservative-propagation=1 dedup-functions-fully=false",
                       &o, &err),
                   SP_OK);
  ck_assert(o.prop.keep_sharding_rules && o.skip_convert_to_reshard && o.prop.conservative);
  ck_assert_int_eq(o.prop.strategy, SP_PROP_BASIC);
  parse_fails("no-such-option=1", SP_EINVAL, "unknown option 'no-such-option'");
  parse_fails("skip-inline=maybe", SP_EINVAL, "skip-inline expects true or false, not 'maybe'");
  parse_fails("propagation-strategy=greedy", SP_EINVAL, "propagation-strategy");
  ck_assert_int_eq(sp_pipeline_parse_options("dedup-functions-fully=true", &o, &err), SP_OK);
  ck_assert(o.dedup_functions_fully);
  parse_fails("module-dump-directory=/tmp", SP_EUNSUPPORTED, "module-dump-directory is not supported");
  /* shardplan's own: which propagation runs between the import and the export. */
  ck_assert_int_eq(sp_pipeline_parse_options(NULL, &o, &err), SP_OK);
  ck_assert_int_eq(o.pass, SP_PASS_USER_PRIORITY);
  ck_assert_int_eq(sp_pipeline_parse_options("propagation-pass=op-priority", &o, &err), SP_OK);
  ck_assert_int_eq(o.pass, SP_PASS_OP_PRIORITY);
  ck_assert_int_eq(o.prop.strategy, SP_PROP_AGGRESSIVE);
  ck_assert_int_eq(sp_pipeline_parse_options("propagation-pass=basic", &o, &err), SP_OK);
  ck_assert_int_eq(o.pass, SP_PASS_BASIC);
  ck_assert_int_eq(o.prop.strategy, SP_PROP_BASIC);
  parse_fails("propagation-pass=greedy", SP_EINVAL,
              "propagation-pass must be user-priority, op-priority, aggressive or basic, not "
              "'greedy'");
}
END_TEST

static int pipeline_keep_rules(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_propagation(m, "keep-sharding-rules=true skip-convert-to-reshard=true", err);
}

START_TEST(keep_rules_and_skip_reshard_options_change_the_output) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
      "  %1 = sdy.sharding_constraint %0 <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) "
      "-> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>]>, "
      "sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}>} : tensor<8xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@mesh, [{\"a\"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}>} : tensor<8xf32>\n"
      "    return %1 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, pipeline_keep_rules, want);
}
END_TEST

static int add_edges_with_option(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_add_data_flow_edges(m, "debug=true", err);
}
static int sink_with_bad_option(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_sink_data_flow_edges(m, "sink-debug-sharding-origins=yes", err);
}
static int apply_with_debug(sp_module *m, sp_err *err) {
  return sp_pipeline_pass_apply_sharding_constraints(m, "debug-sharding-origins=true", err);
}

START_TEST(pass_adapters_check_their_options) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}]> : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  pt_expect_error(in, add_edges_with_option, SP_EINVAL, "-sdy-add-data-flow-edges: unknown option 'debug'");
  pt_expect_error(in, sink_with_bad_option, SP_EINVAL,
                  "sink-debug-sharding-origins expects true or false, not 'yes'");
  sp_module *m = pt_parse(in);
  pt_run(m, apply_with_debug);
  ck_assert_ptr_nonnull(sp_module_lookup_func(m, "main")->regions[0].blocks[0]->args[0]->sharding);
  sp_module_free(m);
}
END_TEST

START_TEST(pipeline_reports_a_recursive_call) {
  pt_expect_error(
      "func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n",
      pipeline_default, SP_EUNSUPPORTED, "t.mlir:2:8: recursive call to @f");
}
END_TEST

static Suite *pipeline_suite(void) {
  Suite *s = suite_create("pipeline");
  TCase *tc = tcase_create("end_to_end");
  tcase_add_test(tc, jax_mlp_pipeline_shards_w2_rows_on_model);
  tcase_add_test(tc, calls_become_one_function_per_sharding_and_constants_get_sharded);
  tcase_add_test(tc, keep_rules_and_skip_reshard_options_change_the_output);
  tcase_add_test(tc, pipeline_reports_a_recursive_call);
  suite_add_tcase(s, tc);
  tc = tcase_create("options");
  tcase_add_test(tc, pipeline_options_parse_with_shardy_defaults_and_name_bad_ones);
  tcase_add_test(tc, dedup_functions_fully_sends_every_call_to_one_copy_and_reshards_around_it);
  tcase_add_test(tc, dedup_functions_fully_keeps_the_copy_of_the_most_called_sharding);
  tcase_add_test(tc, without_dedup_each_sharding_class_gets_its_own_function);
  tcase_add_test(tc, pass_adapters_check_their_options);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(pipeline_suite()); }
