/*
 * test_sharding_groups.c - sharding-group import (union, renumbering, de-duplication, checks,
 * initial sync) and removal (propagation/sharding_groups.h), text in, text out.
 */
#include <check.h>

#include "ir/diag.h"
#include "pass_test.h"
#include "propagation/propagate.h"
#include "propagation/sharding_groups.h"
#include "test_support.h"

START_TEST(groups_sharing_a_value_merge_and_are_renumbered_in_order_then_synced) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  sdy.sharding_group %arg1 group_id=567 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg1 group_id=23 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg2 group_id=2 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg0 group_id=23 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg3 group_id=123456 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg2 group_id=2 : tensor<8xf32>\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg2: tensor<8xf32>, %arg3: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    sdy.sharding_group %arg1 group_id=0 : tensor<8xf32>\n"
      "    sdy.sharding_group %arg2 group_id=1 : tensor<8xf32>\n"
      "    sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>\n"
      "    sdy.sharding_group %arg3 group_id=2 : tensor<8xf32>\n"
      "    return %arg0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_sharding_groups_import, want);
}
END_TEST

START_TEST(removal_erases_every_group_op) {
  sp_module *m = pt_parse(
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  sdy.sharding_group %arg0 group_id=3 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg0 group_id=4 : tensor<8xf32>\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n");
  pt_run(m, sp_sharding_groups_remove);
  char *got = pt_print(m);
  ck_assert_ptr_null(strstr(got, "sharding_group"));
  ck_assert_ptr_nonnull(strstr(got, "return %arg0"));
  free(got);
  sp_module_free(m);
}
END_TEST

START_TEST(group_of_values_with_different_shapes_is_an_error) {
  pt_expect_error(
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<4xf32>) -> tensor<8xf32> {\n"
      "  sdy.sharding_group %arg0 group_id=1 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg1 group_id=1 : tensor<4xf32>\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n",
      sp_sharding_groups_import, SP_EINVAL, "t.mlir:3:3: ShardingGroupOps values must have the same shape");
}
END_TEST

START_TEST(group_crossing_a_manual_computation_is_an_error) {
  pt_expect_error(
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg1: tensor<4xf32>) {\n"
      "    sdy.sharding_group %arg1 group_id=0 : tensor<4xf32>\n"
      "    sdy.return %arg1 : tensor<4xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %1 = stablehlo.slice %arg0 [0:4] : (tensor<8xf32>) -> tensor<4xf32>\n"
      "  sdy.sharding_group %1 group_id=0 : tensor<4xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n",
      sp_sharding_groups_import, SP_EINVAL, "cannot cross ManualComputationOp boundaries for groupId: 0");
}
END_TEST

START_TEST(disagreeing_members_get_open_constraints_and_a_warning) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg0 group_id=7 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg1 group_id=7 : tensor<8xf32>\n"
      "  return %0, %arg1 : tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "    %0 = sdy.sharding_constraint %arg1 <@mesh, [{?}]> : tensor<8xf32>\n"
      "    %1 = sdy.sharding_constraint %arg0 <@mesh, [{?}]> : tensor<8xf32>\n"
      "    %2 = stablehlo.negate %1 : tensor<8xf32>\n"
      "    sdy.sharding_group %1 group_id=0 : tensor<8xf32>\n"
      "    sdy.sharding_group %0 group_id=0 : tensor<8xf32>\n"
      "    return %2, %0 : tensor<8xf32>, tensor<8xf32>\n"
      "  }\n"
      "}\n";
  sp_module *m = pt_parse(in);
  sp_diag_list diags;
  sp_diag_list_init(&diags);
  m->diags = &diags;
  pt_run(m, sp_sharding_groups_import);
  char *got = pt_print(m);
  ck_assert_str_eq(got, want);
  ck_assert_int_eq(diags.n, 1);
  ck_assert_int_eq(diags.v[0].severity, SP_DIAG_WARNING);
  ck_assert_int_eq(diags.v[0].loc.line, 4);
  ck_assert_ptr_nonnull(strstr(diags.v[0].msg, "groupID: 0 do not match"));
  free(got);
  sp_diag_list_free(&diags);
  sp_module_free(m);
}
END_TEST

/* The propagation pass prologue (propagate.h) and import run the same initial sync: on groups
 * that import leaves as they are (ids 0, 1, ... in order, no duplicates), both give the same
 * module and the same warnings, agreeing and disagreeing groups alike. */
START_TEST(propagation_prologue_syncs_groups_exactly_like_import) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}, %arg2: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {\n"
      "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : tensor<8xf32>\n"
      "  %1 = stablehlo.abs %arg2 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>\n"
      "  sdy.sharding_group %0 group_id=1 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg1 group_id=0 : tensor<8xf32>\n"
      "  sdy.sharding_group %1 group_id=1 : tensor<8xf32>\n"
      "  sdy.sharding_group %arg2 group_id=2 : tensor<8xf32>\n"
      "  return %0, %1, %arg1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>\n"
      "}\n";
  char *got[2];
  for (int k = 0; k < 2; k++) {
    sp_module *m = pt_parse(in);
    sp_diag_list diags;
    sp_diag_list_init(&diags);
    m->diags = &diags;
    sp_err err = {0};
    int rc = k == 0 ? sp_sharding_groups_import(m, &err) : sp_propagate_prepare(m, NULL, &err);
    ck_assert_msg(rc == SP_OK, "%s", err.msg);
    got[k] = pt_print(m);
    ck_assert_int_eq(diags.n, 1);
    ck_assert_int_eq(diags.v[0].loc.line, 5);
    ck_assert_ptr_nonnull(strstr(diags.v[0].msg, "groupID: 0 do not match"));
    sp_diag_list_free(&diags);
    sp_module_free(m);
  }
  ck_assert_str_eq(got[1], got[0]);
  /* Group 0 disagreed: constraints that every later use reads; group 1 agreed: the abs took
   * the negate's sharding. */
  ck_assert_ptr_nonnull(strstr(got[0], "%1 = sdy.sharding_constraint %arg0 <@mesh, [{?}]>"));
  ck_assert_ptr_nonnull(strstr(got[0], "%2 = stablehlo.negate %1"));
  ck_assert_ptr_nonnull(strstr(got[0], "return %2, %3, %0 :"));
  ck_assert_ptr_nonnull(
      strstr(got[0], "%3 = stablehlo.abs %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>}"));
  free(got[0]);
  free(got[1]);
}
END_TEST

static Suite *sharding_groups_suite(void) {
  Suite *s = suite_create("sharding_groups");
  TCase *tc = tcase_create("import");
  tcase_add_test(tc, groups_sharing_a_value_merge_and_are_renumbered_in_order_then_synced);
  tcase_add_test(tc, group_of_values_with_different_shapes_is_an_error);
  tcase_add_test(tc, group_crossing_a_manual_computation_is_an_error);
  tcase_add_test(tc, disagreeing_members_get_open_constraints_and_a_warning);
  tcase_add_test(tc, propagation_prologue_syncs_groups_exactly_like_import);
  suite_add_tcase(s, tc);
  tc = tcase_create("remove");
  tcase_add_test(tc, removal_erases_every_group_op);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(sharding_groups_suite()); }
