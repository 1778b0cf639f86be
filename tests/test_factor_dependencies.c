/*
 * test_factor_dependencies.c - explicit reshard insertion drops the axes of a factor that a
 * merged or split dimension could only hold as a strided view (export/factor_dependencies.h),
 * on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
#define FULL "enable-full-version=true"

START_TEST(minor_factor_of_unsharded_major_is_replicated_before_a_merge) {
  /* 6x4 -> 24: "q" on the minor factor cannot survive the merge (the major factor of size 6
   * is unsharded), so the operand is made replicated and the result needs no reshard. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\"}]>}) -> (tensor<24xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>]>} : (tensor<6x4xf32>) -> tensor<24xf32>\n"
      "  return %0 : tensor<24xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{}, {}]> : tensor<6x4xf32>",
      "%1 = stablehlo.reshape %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>]>}",
      "return %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(minor_factor_of_partly_sharded_major_is_dropped_after_a_split) {
  /* 24 -> 6x4 sharded [{"p"}, {"q"}]: the split's major factor (6) on "p" alone is not fully
   * sharded, so "q" on the minor factor is dropped; the result is resharded after the op. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<24xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}]>}) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"q\"}]>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {\"q\"}]>]>} : (tensor<24xf32>) -> tensor<6x4xf32>\n"
      "  return %0 : tensor<6x4xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>}",
      "%1 = sdy.reshard %0 <@m, [{\"p\"}, {\"q\"}]> : tensor<6x4xf32>", "return %1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(fully_sharded_major_factor_lets_the_minor_one_keep_its_axes) {
  /* 2x8 -> 16: "p" covers the major factor (2) exactly, so "q" on the minor one carries over
   * to the merged dimension; only the replicated function result needs a reshard. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {\"q\"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>]>} : (tensor<2x8xf32>) -> tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\", \"q\"}]>]>}",
      "%1 = sdy.reshard %0 <@m, [{}]> : tensor<16xf32>", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg0");
  free(out);
}
END_TEST

START_TEST(minor_factor_waits_for_its_major_factor_to_be_chosen) {
  /* 8x6 -> 4x12 (factors i=4, j=2, k=6; the operand's first dim is ij, the result's second jk).
   * The result's k on ["q":(2)2, "p"] has the most devices but waits on j, which waits on i:
   * i takes "p" (the operand's), j and k stay unsharded, and the result is resharded after. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}, {}]>}) -> (tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"q\", \"p\"}]>}) {\n"
      "  %0 = stablehlo.reshape %x {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\", \"p\"}]>]>} : (tensor<8x6xf32>) -> tensor<4x12xf32>\n"
      "  return %0 : tensor<4x12xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"p\"}, {}]>]>}",
      "%1 = sdy.reshard %0 <@m, [{}, {\"q\", \"p\"}]> : tensor<4x12xf32>", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg0");
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("factor_dependencies");
  TCase *tc = tcase_create("reshape");
  tcase_add_test(tc, minor_factor_of_unsharded_major_is_replicated_before_a_merge);
  tcase_add_test(tc, minor_factor_of_partly_sharded_major_is_dropped_after_a_split);
  tcase_add_test(tc, fully_sharded_major_factor_lets_the_minor_one_keep_its_axes);
  tcase_add_test(tc, minor_factor_waits_for_its_major_factor_to_be_chosen);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
