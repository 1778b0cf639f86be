/*
 * test_manual_reshards.c - explicit reshards at the boundary of sdy.manual_computation
 * (export/manual_reshards.h), on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=2, \"q\"=4]>\n"
#define FULL "enable-full-version=true"

START_TEST(operand_is_resharded_to_in_sharding_and_return_to_local_out_sharding) {
  /* Outside, the operand on ["p"] goes to the in_sharding ["p", "q"]; inside, the block
   * argument is local ["q"] (manual "p" removed), matching the negate; the returned value
   * goes to the out_sharding less "p", i.e. replicated. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\"}]>}) {\n"
      "  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{\"p\", \"q\"}]>] out_shardings=[<@m, [{\"p\"}]>] manual_axes={\"p\"} (%a: tensor<8xf32>) {\n"
      "    %1 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}]>]>} : tensor<8xf32>\n"
      "    sdy.return %1 : tensor<8xf32>\n"
      "  } : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.reshard %arg0 <@m, [{\"p\", \"q\"}]> : tensor<16xf32>",
      "%1 = sdy.manual_computation(%0)",
      "%2 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}]>]>}",
      "%3 = sdy.reshard %2 <@m, [{}]> : tensor<8xf32>", "sdy.return %3", "return %1", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.reshard %arg1");
  free(out);
}
END_TEST

START_TEST(matching_boundary_needs_no_reshard) {
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}) {\n"
      "  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{\"q\"}]>] out_shardings=[<@m, [{\"q\"}]>] manual_axes={} (%a: tensor<16xf32>) {\n"
      "    %1 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"q\"}]>]>} : tensor<16xf32>\n"
      "    sdy.return %1 : tensor<16xf32>\n"
      "  } : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

START_TEST(unreduced_axes_cross_the_boundary_until_the_out_sharding_drops_them) {
  /* The in_sharding keeps "q" unreduced: no all-reduce before the computation; the
   * out_sharding does not: the returned partial sum is all-reduced inside, before sdy.return. */
  char *out = et_run(MESH
      "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced={\"q\"}>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {\n"
      "  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{}], unreduced={\"q\"}>] out_shardings=[<@m, [{}]>] manual_axes={} (%a: tensor<16xf32>) {\n"
      "    %1 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}], unreduced={\"q\"}>]>} : tensor<16xf32>\n"
      "    sdy.return %1 : tensor<16xf32>\n"
      "  } : (tensor<16xf32>) -> tensor<16xf32>\n"
      "  return %0 : tensor<16xf32>\n}\n", "sdy-insert-explicit-reshards", FULL);
  static const char *const want[] = {
      "%0 = sdy.manual_computation(%arg0)", "%1 = stablehlo.negate %arg1",
      "%2 = sdy.all_reduce {\"q\"} %1 out_sharding=<@m, [{}]> : tensor<16xf32>", "sdy.return %2",
      "return %0", NULL};
  et_has_in_order(out, want);
  et_lacks(out, "sdy.all_reduce {\"q\"} %arg0");
  et_lacks(out, "sdy.reshard");
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("manual_reshards");
  TCase *tc = tcase_create("boundary");
  tcase_add_test(tc, operand_is_resharded_to_in_sharding_and_return_to_local_out_sharding);
  tcase_add_test(tc, matching_boundary_needs_no_reshard);
  tcase_add_test(tc, unreduced_axes_cross_the_boundary_until_the_out_sharding_drops_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
