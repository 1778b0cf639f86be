/*
 * test_unreduced_reshards.c - reshards to unreduced axes lowered to reshard,
 * replicated_to_unreduced and sharded_to_unreduced (export/unreduced_reshards.h), through both
 * modes of -sdy-insert-explicit-reshards, on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=2, \"q\"=8, \"r\"=2]>\n"

START_TEST(trailing_sharded_axes_go_unreduced_in_operand_order) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\", \"r\", \"q\"}, {}]>}) -> tensor<32x4xf32> {\n"
      "  %0 = sdy.reshard %x <@m, [{\"p\"}, {}], unreduced={\"q\", \"r\"}> : tensor<32x4xf32>\n"
      "  return %0 : tensor<32x4xf32>\n}\n", "sdy-insert-explicit-reshards", NULL);
  static const char *const one[] = {"sdy.sharded_to_unreduced [{\"r\", \"q\"}, {}] %arg0 out_sharding=<@m, [{\"p\"}, {}], unreduced={\"q\", \"r\"}>", NULL};
  et_has_in_order(out, one);
  et_lacks(out, "sdy.reshard");
  et_lacks(out, "replicated_to_unreduced");
  free(out);
}
END_TEST

START_TEST(sub_axis_pieces_are_split_subtracted_and_merged) {
  /* q:(1)2 stays, q:(2)4 goes sharded->unreduced; of q:(2)4 unreduced the operand had nothing,
   * p is added from replicated. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {}], unreduced={\"r\"}>})"
      " -> (tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\":(1)2}, {}], unreduced={\"p\", \"q\":(2)4, \"r\"}>}) {\n"
      "  %0 = sdy.reshard %x <@m, [{\"q\":(1)2}, {}], unreduced={\"p\", \"q\":(2)4, \"r\"}> : tensor<32x4xf32>\n"
      "  return %0 : tensor<32x4xf32>\n}\n", "sdy-insert-explicit-reshards", "enable-full-version=true");
  static const char *const want[] = {
      "sdy.replicated_to_unreduced {\"p\"} %arg0 out_sharding=<@m, [{\"q\"}, {}], unreduced={\"p\", \"r\"}>",
      "sdy.sharded_to_unreduced [{\"q\":(2)4}, {}] %0 out_sharding=<@m, [{\"q\":(1)2}, {}], unreduced={\"p\", \"q\":(2)4, \"r\"}>",
      NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(other_dim_changes_reshard_first) {
  /* Dim 1 moves from r to nothing while p leaves dim 0 for unreduced and q is added. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"r\"}]>}) -> tensor<32x4xf32> {\n"
      "  %0 = sdy.reshard %x <@m, [{}, {}], unreduced={\"p\", \"q\"}> : tensor<32x4xf32>\n"
      "  return %0 : tensor<32x4xf32>\n}\n", "sdy-insert-explicit-reshards", NULL);
  static const char *const want[] = {
      "sdy.reshard %arg0 <@m, [{\"p\"}, {}]>",
      "sdy.replicated_to_unreduced {\"q\"} %0 out_sharding=<@m, [{\"p\"}, {}], unreduced={\"q\"}>",
      "sdy.sharded_to_unreduced [{\"p\"}, {}] %1 out_sharding=<@m, [{}, {}], unreduced={\"p\", \"q\"}>",
      NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(returned_value_gets_unreduced_and_max_partial_sums_reduce_as_max) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced=max{\"r\"}>},"
      " %y: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>})"
      " -> (tensor<4x4xf32>, tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={\"p\"}>}) {\n"
      "  return %x, %y : tensor<4x4xf32>, tensor<4x4xf32>\n}\n", "sdy-insert-explicit-reshards", NULL);
  static const char *const want[] = {
      "sdy.reshard %arg1 <@m, [{}, {}]>",
      "sdy.replicated_to_unreduced {\"p\"}",
      "sdy.all_reduce max {\"r\"} %arg0 out_sharding=<@m, [{}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("unreduced_reshards");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, trailing_sharded_axes_go_unreduced_in_operand_order);
  tcase_add_test(tc, sub_axis_pieces_are_split_subtracted_and_merged);
  tcase_add_test(tc, other_dim_changes_reshard_first);
  tcase_add_test(tc, returned_value_gets_unreduced_and_max_partial_sums_reduce_as_max);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
