/*
 * test_prop_passes.c - the propagation passes' `=option` text: defaults per pass, each
 * option, the accepted spellings (spaces, commas, quotes, MLIR's {...}), and errors naming
 * the bad option; keep-sharding-rules and conservative-propagation seen end to end.
 */
#include <check.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_attrs.h"
#include "mlir/mlir.h"
#include "propagation/prop_passes.h"
#include "test_support.h"

static sp_propagate_options O;
static sp_err E;

static int parse(sp_prop_pass_kind k, const char *text) {
  return sp_prop_pass_parse_options(k, text, &O, &E);
}

START_TEST(defaults_are_basic_for_the_basic_pass_and_aggressive_for_the_others) {
  ck_assert_int_eq(parse(SP_PASS_BASIC, NULL), SP_OK);
  ck_assert_int_eq(O.strategy, SP_PROP_BASIC);
  ck_assert(!O.conservative && !O.keep_sharding_rules && !O.skip_op_priority);
  for (int k = SP_PASS_AGGRESSIVE; k <= SP_PASS_USER_PRIORITY; k++) {
    ck_assert_int_eq(parse((sp_prop_pass_kind)k, ""), SP_OK);
    ck_assert_int_eq(O.strategy, SP_PROP_AGGRESSIVE);
    ck_assert(!O.basic_then_aggressive);
  }
}
END_TEST

START_TEST(each_option_sets_its_field) {
  ck_assert_int_eq(parse(SP_PASS_USER_PRIORITY,
                         "conservative-propagation=true keep-sharding-rules=1,"
                         "propagation-strategy=basic-then-aggressive "
                         "run-op-priority-propagation=false debug-sharding-origins "
                         "debug-propagation-edge-sharding=true"),
                   SP_OK);
  ck_assert(O.conservative);
  ck_assert(O.keep_sharding_rules);
  ck_assert(O.basic_then_aggressive);
  ck_assert_int_eq(O.strategy, SP_PROP_AGGRESSIVE);
  ck_assert(O.skip_op_priority);
  ck_assert(O.debug_origins && O.debug_edges);
  ck_assert_int_eq(parse(SP_PASS_AGGRESSIVE, "{propagation-strategy='basic'}"), SP_OK);
  ck_assert_int_eq(O.strategy, SP_PROP_BASIC);
  ck_assert_int_eq(parse(SP_PASS_BASIC, "conservative-propagation=\"false\""), SP_OK);
  ck_assert(!O.conservative);
}
END_TEST

START_TEST(unknown_or_misplaced_options_are_errors_naming_them) {
  ck_assert_int_eq(parse(SP_PASS_BASIC, "propagation-strategy=aggressive"), SP_EINVAL);
  ck_assert_str_eq(E.msg, "-sdy-basic-propagate: unknown option 'propagation-strategy'");
  ck_assert_int_eq(parse(SP_PASS_AGGRESSIVE, "run-op-priority-propagation=false"), SP_EINVAL);
  ck_assert_int_eq(parse(SP_PASS_OP_PRIORITY, "keep-sharding-rules=maybe"), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(E.msg, "keep-sharding-rules expects true or false, not 'maybe'"));
  ck_assert_int_eq(parse(SP_PASS_USER_PRIORITY, "propagation-strategy=greedy"), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(E.msg, "not 'greedy'"));
}
END_TEST

static sp_module *M;
static void mod_teardown(void) { sp_module_free(M); }

static void parse_module(const char *text) {
  sp_err err;
  ck_assert_msg(sp_mlir_parse(text, strlen(text), "t.mlir", 1, &M, &err) == SP_OK, "%s", err.msg);
}

static const char *const reshape_module =
    "sdy.mesh @m = <[\"a\"=4]>\n"
    "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<2x4xf32> {\n"
    "  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>\n"
    "  return %0 : tensor<2x4xf32>\n"
    "}\n";

static sp_op *first_op(void) {
  return sp_module_lookup_func(M, "main")->regions[0].blocks[0]->first;
}

START_TEST(keep_sharding_rules_leaves_the_rules_on_the_ops) {
  parse_module(reshape_module);
  sp_err err;
  ck_assert_int_eq(sp_prop_pass_basic(M, "keep-sharding-rules=true", &err), SP_OK);
  ck_assert_ptr_nonnull(sp_op_rule(first_op()));
  sp_module_free(M);
  parse_module(reshape_module);
  ck_assert_int_eq(sp_prop_pass_basic(M, NULL, &err), SP_OK);
  ck_assert_ptr_null(sp_op_rule(first_op()));
}
END_TEST

START_TEST(conservative_propagation_does_not_split_an_axis_across_a_reshape) {
  parse_module(reshape_module);
  sp_err err;
  ck_assert_int_eq(sp_prop_pass_basic(M, NULL, &err), SP_OK);
  /* Not conservative: "a" splits into "a":(1)2 and "a":(2)2. */
  ck_assert_ptr_nonnull(first_op()->results[0].sharding);
  sp_module_free(M);
  parse_module(reshape_module);
  ck_assert_int_eq(sp_prop_pass_basic(M, "conservative-propagation=true", &err), SP_OK);
  ck_assert_ptr_null(first_op()->results[0].sharding);
}
END_TEST

static Suite *prop_passes_suite(void) {
  Suite *s = suite_create("prop_passes");
  TCase *tc = tcase_create("options");
  tcase_add_test(tc, defaults_are_basic_for_the_basic_pass_and_aggressive_for_the_others);
  tcase_add_test(tc, each_option_sets_its_field);
  tcase_add_test(tc, unknown_or_misplaced_options_are_errors_naming_them);
  suite_add_tcase(s, tc);
  tc = tcase_create("passes");
  tcase_add_checked_fixture(tc, NULL, mod_teardown);
  tcase_add_test(tc, keep_sharding_rules_leaves_the_rules_on_the_ops);
  tcase_add_test(tc, conservative_propagation_does_not_split_an_axis_across_a_reshape);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(prop_passes_suite()); }
