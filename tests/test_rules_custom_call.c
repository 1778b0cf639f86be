/*
 * test_rules_custom_call.c - the OpShardingRules of stablehlo.custom_call targets (Shardy's
 * registry tests): pointwise targets, linear algebra, top-k, an existing sdy.sharding_rule,
 * and the custom calls and ops that get no rule (with Shardy's warning for an unknown target).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_attrs.h"
#include "rules/registry.h"
#include "rules/rule_builder.h"
#include "rules_fixtures.h"
#include "test_support.h"

/* ------------------------------------------------------------------ custom calls */

START_TEST(pointwise_custom_call_targets) {
  static const char *const targets[] = {
      "CompactWyHelper", "InspectSharding", "X64SplitHigh", "X64SplitLow",
      "xla.megascale.provide_metadata", "MoveToDevice", "MoveToHost", "LayoutConstraint",
      "mhlo.erf", "annotate_device_placement", "Cholesky", "InvertDiagBlocksLowerTriangular",
      "_SPMDInternalOp_RotateRight"};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    const char *r = rule(custom_call(targets[i], "8x4", "8x4"));
    ck_assert_msg(strcmp(r, RULE("([i, j])->([i, j]) {i=8, j=4}")) == 0, "%s: %s", targets[i], r);
  }
  ck_assert_str_eq(rule(custom_call("X64Combine", "8x2;8x2", "8x2")),
                   RULE("([i, j], [i, j])->([i, j]) {i=8, j=2}"));
}
END_TEST

START_TEST(x64_combine_feeding_rng_bit_generator_is_blocked) {
  sp_op *op = custom_call("X64Combine", "2;2", "2");
  sp_value *v = &op->results[0];
  sp_type *rt[2] = {ty("2"), ty("4x1000")};
  sp_op_create(A, "stablehlo.rng_bit_generator", 1, &v, 2, rt, 0);
  ck_assert_str_eq(rule(op), RULE("([i], [i])->([i]) {i=2} need_replication={i} "
                                  "blocked_propagation={i}"));
}
END_TEST

START_TEST(linear_algebra_custom_calls) {
  ck_assert_str_eq(rule(custom_call("Eigh", "8x4x4", "8x4x4;8x4")),
                   RULE("([i, j, k])->([i, j, k], [i, k]) {i=8, j=4, k=4}"));
  ck_assert_str_eq(rule(custom_call("Qr", "8x5x3", "8x5x3;8x3")),
                   RULE("([i, j, k])->([i, j, k], [i, l]) {i=8, j=5, k=3, l=3} "
                        "need_replication={j, k, l}"));
  ck_assert_str_eq(rule(custom_call("QrDecompositionBlock", "8x5x3", "8x5x3;8x3")),
                   RULE("([i, j, k])->([i, j, k], [i, l]) {i=8, j=5, k=3, l=3} "
                        "need_replication={j, k, l}"));
  ck_assert_str_eq(rule(custom_call("ProductOfElementaryHouseholderReflectors", "8x12x16;8x5",
                                    "8x12x16")),
                   RULE("([i, j, k], [i, l])->([i, j, k]) {i=8, j=12, k=16, l=5} "
                        "need_replication={j, k, l}"));
}
END_TEST

START_TEST(topk_custom_calls_block_the_reduced_dim) {
  ck_assert_str_eq(rule(custom_call("mhlo.topk", "16", "1;1")),
                   RULE("([i])->([i], [i]) {i=16} need_replication={i} blocked_propagation={i}"));
  ck_assert_str_eq(rule(custom_call("mhlo.topk", "16x8", "16x2;16x2")),
                   RULE("([i, j])->([i, j], [i, j]) {i=16, j=8} need_replication={j} "
                        "blocked_propagation={j}"));
  sp_op *op = custom_call("ApproxTopK", "16x4;16x4;-;-", "16x2;16x2");
  set_str(op, "mhlo.backend_config", SP_ATTR_TEXT,
          "{aggregate_to_topk = true, recall_target = 0.9 : f32, reduction_dim = 1 : i64, "
          "reduction_input_size_override = -1 : i64, top_k = 2 : i64}");
  const char *want = RULE("([i, j], [i, j], [], [])->([i, k], [i, k]) {i=16, j=4, k=2} "
                          "need_replication={k} blocked_propagation={k}");
  ck_assert_str_eq(rule(op), want);
  op = custom_call("PartialReduce", "16x4;16x4;-;-", "16x2;16x2");
  set_str(op, "backend_config", SP_ATTR_STR,
          "{\"log2_reduction\": 5, \"reduction_dim\": 1, \"to_apply_type\": \"comparator\", "
          "\"top_k\": 2, \"recall_target\": 0.950000}");
  ck_assert_str_eq(rule(op), want);
  /* Reduction dim 0 this time: the pass-through factor is on dim 1. */
  op = custom_call("PartialReduce", "4x16;4x16;-;-", "2x16;2x16");
  set_str(op, "backend_config", SP_ATTR_STR, "{\"reduction_dim\": 0}");
  ck_assert_str_eq(rule(op), RULE("([i, k], [i, k], [], [])->([j, k], [j, k]) {i=4, j=2, k=16} "
                                  "need_replication={j} blocked_propagation={j}"));
}
END_TEST

START_TEST(existing_sharding_rule_is_used_as_is) {
  sp_op *op = custom_call("foo", "4x2", "2x4");
  sp_rule_builder b;
  int ranks[1] = {2};
  ck_assert_int_eq(sp_rule_builder_init(&b, A, 1, ranks, 1, ranks), SP_OK);
  int i = sp_rule_builder_factor(&b, 4, SP_FACTOR_PASS_THROUGH, false);
  int j = sp_rule_builder_factor(&b, 2, SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(&b, 0, 0, i);
  sp_rule_builder_map(&b, 0, 1, j);
  sp_rule_builder_map(&b, 1, 0, j);
  sp_rule_builder_map(&b, 1, 1, i);
  sp_rule *r;
  ck_assert_int_eq(sp_rule_builder_build(&b, &r, NULL), SP_OK);
  r->custom = true;
  sp_attr at = {.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = r};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
  sp_rules_diag diag = {0};
  ck_assert_str_eq(rule_opts(op, NULL, &diag), RULE("([i, j])->([j, i]) {i=4, j=2}, custom"));
  ck_assert(!diag.has_warning);
  sp_rule *got;
  ck_assert_int_eq(sp_rules_for_op(A, op, NULL, &got, NULL, NULL), SP_OK);
  ck_assert_ptr_eq(got, r);
  /* An existing rule on an ordinary op wins over the registry, too. */
  sp_op *add = mk("stablehlo.add", "4x2", "2x4");
  ck_assert_int_eq(sp_attrs_set(A, &add->attrs, &at), SP_OK);
  ck_assert_str_eq(rule(add), RULE("([i, j])->([j, i]) {i=4, j=2}, custom"));
}
END_TEST

/* ------------------------------------------------------------------ no rule, warnings */

START_TEST(unknown_custom_call_warns_once_with_shardy_text) {
  sp_rules_diag diag = {0};
  sp_op *op = custom_call("unknown_custom_op", "8x2;8x2", "8x2");
  op->loc.line = 5;
  op->loc.col = 8;
  ck_assert_str_eq(rule_opts(op, NULL, &diag), "NONE");
  ck_assert(diag.has_warning);
  ck_assert_str_eq(diag.warning,
                   "custom call @unknown_custom_op is unknown to SDY sharding rule registry");
  ck_assert_int_eq(diag.warning_loc.line, 5);
  ck_assert_str_eq(rule_opts(custom_call("another", "8x2", "8x2"), NULL, &diag), "NONE");
  ck_assert(!diag.has_warning); /* once per run */
  /* The op warning is separate from the custom-call one. */
  ck_assert_str_eq(rule_opts(mk("mhlo.foo", "8", "8"), NULL, &diag), "NONE");
  ck_assert(diag.has_warning);
  ck_assert_str_eq(diag.warning, "op 'mhlo.foo' is unknown to SDY sharding rule registry");
  ck_assert_str_eq(rule_opts(mk("sdy.all_reduce", "8", "8"), NULL, &diag), "NONE");
  ck_assert(!diag.has_warning);
}
END_TEST

START_TEST(structural_ops_and_opaque_custom_calls_have_no_rule_silently) {
  static const char *const names[] = {"func.return", "stablehlo.constant", "stablehlo.iota",
                                      "stablehlo.while", "stablehlo.optimization_barrier",
                                      "sdy.reshard", "sdy.propagation_barrier",
                                      "sdy.data_flow_edge", "stablehlo.get_tuple_element"};
  sp_rules_diag diag = {0};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    sp_op *op = mk(names[i], "8", "8");
    ck_assert_str_eq(rule_opts(op, NULL, &diag), "NONE");
    ck_assert_int_eq(sp_rules_classify(op), SP_RULES_NO_RULE);
  }
  static const char *const targets[] = {"sdy_testonly", "tpu_custom_call", "xla.debug.Log",
                                        "xla_python_cpu_callback", "xla_ffi_python_gpu_callback"};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    sp_op *op = custom_call(targets[i], "8", "8");
    ck_assert_str_eq(rule_opts(op, NULL, &diag), "NONE");
    ck_assert_int_eq(sp_rules_classify(op), SP_RULES_NO_RULE);
  }
  ck_assert(!diag.unknown_op_reported && !diag.unknown_custom_call_reported);
  ck_assert_int_eq(sp_rules_classify(mk("stablehlo.add", "8;8", "8")), SP_RULES_HAS_RULE);
  ck_assert_int_eq(sp_rules_classify(mk("mhlo.foo", "8", "8")), SP_RULES_UNKNOWN);
  ck_assert_int_eq(sp_rules_classify(custom_call("bar", "8", "8")), SP_RULES_UNKNOWN);
}
END_TEST

START_TEST(op_without_results_gets_no_rule_and_dynamic_shapes_are_rejected) {
  ck_assert_str_eq(rule(custom_call("MoveToHost", "8", NULL)), "NONE");
  int64_t dyn[2] = {SP_DYN_DIM, 4};
  sp_type *t = sp_type_tensor(A, 2, dyn, "f32");
  sp_value *v = arg("8x4");
  sp_op *op = sp_op_create(A, "stablehlo.negate", 1, &v, 1, &t, 0);
  ck_assert_ptr_nonnull(strstr(rule(op), "result 0 is not a tensor with a static shape"));
}
END_TEST

static Suite *rules_custom_call_suite(void) {
  Suite *s = suite_create("rules_custom_call");
  TCase *tc = tcase_create("registry");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, pointwise_custom_call_targets);
  tcase_add_test(tc, x64_combine_feeding_rng_bit_generator_is_blocked);
  tcase_add_test(tc, linear_algebra_custom_calls);
  tcase_add_test(tc, topk_custom_calls_block_the_reduced_dim);
  tcase_add_test(tc, existing_sharding_rule_is_used_as_is);
  tcase_add_test(tc, unknown_custom_call_warns_once_with_shardy_text);
  tcase_add_test(tc, structural_ops_and_opaque_custom_calls_have_no_rule_silently);
  tcase_add_test(tc, op_without_results_gets_no_rule_and_dynamic_shapes_are_rejected);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(rules_custom_call_suite()); }
