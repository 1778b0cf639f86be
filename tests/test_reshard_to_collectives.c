/*
 * test_reshard_to_collectives.c - -sdy-reshard-to-collectives
 * (export/reshard_to_collectives.h) on modules of its own.
 */
#include <check.h>
#include <stdlib.h>

#include "export_test.h"
#include "test_support.h"

#define MESH "sdy.mesh @m = <[\"p\"=2, \"q\"=4, \"r\"=2]>\nsdy.mesh @n = <[\"s\"=8]>\n"
#define FN(in, out, dims) \
  MESH "func.func @f(%x: tensor<" dims "xf32> {sdy.sharding = #sdy.sharding<@m, " in ">}) -> tensor<" dims "xf32> {\n" \
  "  %0 = sdy.reshard %x <@m, " out "> : tensor<" dims "xf32>\n  return %0 : tensor<" dims "xf32>\n}\n"

START_TEST(same_placement_is_removed_unless_kept) {
  char *out = et_run(FN("[{\"q\"}, {}]", "[{\"q\", ?}, {?}]", "16x16"), "sdy-reshard-to-collectives", NULL);
  et_lacks(out, "sdy.reshard");
  free(out);
  out = et_run(FN("[{\"q\"}, {}]", "[{\"q\"}, {}]", "16x16"), "sdy-reshard-to-collectives",
               "keep-redundant-reshards=true");
  static const char *const want[] = {"sdy.reshard", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(dropped_axes_are_gathered_and_new_ones_sliced) {
  char *out = et_run(FN("[{\"q\", \"r\"}, {}]", "[{\"q\"}, {}]", "16x16"), "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.all_gather [{\"r\"}, {}] %arg0 out_sharding=<@m, [{\"q\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
  out = et_run(FN("[{}, {\"p\"}]", "[{\"r\"}, {\"p\", \"q\"}]", "16x16"), "sdy-reshard-to-collectives", NULL);
  static const char *const want2[] = {"sdy.all_slice [{\"r\"}, {\"q\"}] %arg0 out_sharding=<@m, [{\"r\"}, {\"p\", \"q\"}]>", NULL};
  et_has_in_order(out, want2);
  free(out);
}
END_TEST

START_TEST(axis_moving_between_dims_is_an_all_to_all) {
  char *out = et_run(FN("[{\"p\", \"q\"}, {}]", "[{\"p\"}, {\"q\"}]", "16x16"), "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.all_to_all [{\"q\"}: 0->1] %arg0 out_sharding=<@m, [{\"p\"}, {\"q\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(sub_axes_are_split_at_the_other_sides_boundaries) {
  char *out = et_run(FN("[{\"q\"}, {}]", "[{\"q\":(1)2}, {}]", "16x16"), "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.all_gather [{\"q\":(2)2}, {}] %arg0 out_sharding=<@m, [{\"q\":(1)2}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(reordered_axes_need_a_collective_permute) {
  char *out = et_run(FN("[{\"p\", \"q\"}]", "[{\"q\", \"p\"}]", "16"), "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.collective_permute %arg0 out_sharding=<@m, [{\"q\", \"p\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(other_mesh_reshards_stay_unless_to_replicated) {
  const char *keep = MESH "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}) -> tensor<16xf32> {\n"
      "  %0 = sdy.reshard %x <@n, [{\"s\"}]> : tensor<16xf32>\n  return %0 : tensor<16xf32>\n}\n";
  char *out = et_run(keep, "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.reshard %arg0 <@n, [{\"s\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
  const char *gather = MESH "func.func @f(%x: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}]>}) -> tensor<16xf32> {\n"
      "  %0 = sdy.reshard %x <@n, [{}]> : tensor<16xf32>\n  return %0 : tensor<16xf32>\n}\n";
  out = et_run(gather, "sdy-reshard-to-collectives", NULL);
  static const char *const want2[] = {"sdy.all_gather [{\"q\"}] %arg0 out_sharding=<@m, [{}]>", NULL};
  et_has_in_order(out, want2);
  free(out);
}
END_TEST

START_TEST(a_barriers_operand_is_what_the_collectives_read) {
  const char *src = MESH "func.func @f(%x: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"q\"}, {\"r\"}]>}) -> tensor<16x16xf32> {\n"
      "  %0 = sdy.propagation_barrier %x allowed_direction=FORWARD : tensor<16x16xf32>\n"
      "  %1 = sdy.reshard %0 <@m, [{}, {\"r\", \"p\"}]> : tensor<16x16xf32>\n  return %1 : tensor<16x16xf32>\n}\n";
  char *out = et_run(src, "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.propagation_barrier %arg0",
      "sdy.all_slice [{}, {\"p\"}] %arg0 out_sharding=<@m, [{\"q\"}, {\"r\", \"p\"}]>",
      "sdy.all_gather [{\"q\"}, {}] %1 out_sharding=<@m, [{}, {\"r\", \"p\"}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(a_while_block_argument_has_the_whiles_sharding) {
  const char *src = MESH "func.func @f(%x: tensor<16x16xf32>, %c: tensor<i1>) -> tensor<16x16xf32> {\n"
      "  %0 = stablehlo.while(%it = %x) : tensor<16x16xf32>\n"
      "    attributes {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {\"q\"}]>]>}\n"
      "    cond {\n    stablehlo.return %c : tensor<i1>\n  } do {\n"
      "    %1 = sdy.reshard %it <@m, [{\"q\"}, {}]> : tensor<16x16xf32>\n"
      "    stablehlo.return %1 : tensor<16x16xf32>\n  }\n  return %0 : tensor<16x16xf32>\n}\n";
  char *out = et_run(src, "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.all_to_all [{\"q\"}: 1->0] %iterArg out_sharding=<@m, [{\"q\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

START_TEST(another_device_order_is_a_permute_onto_the_target_mesh) {
  const char *src = "sdy.mesh @a = <[\"p\"=2, \"q\"=2]>\nsdy.mesh @b = <[\"p\"=2, \"q\"=2], device_ids=[0, 2, 1, 3]>\n"
      "func.func @f(%x: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@a, [{}, {\"p\", \"q\"}]>}) -> tensor<16x16xf32> {\n"
      "  %0 = sdy.reshard %x <@b, [{\"p\"}, {}]> : tensor<16x16xf32>\n  return %0 : tensor<16x16xf32>\n}\n";
  char *out = et_run(src, "sdy-reshard-to-collectives", NULL);
  static const char *const want[] = {"sdy.collective_permute %arg0 out_sharding=<@b, [{}, {\"q\", \"p\"}]>",
      "sdy.all_to_all [{\"p\"}: 1->0] %0 out_sharding=<@b, [{\"p\"}, {\"q\"}]>",
      "sdy.all_gather [{}, {\"q\"}] %1 out_sharding=<@b, [{\"p\"}, {}]>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reshard_to_collectives");
  TCase *tc = tcase_create("lowering");
  tcase_add_test(tc, same_placement_is_removed_unless_kept);
  tcase_add_test(tc, dropped_axes_are_gathered_and_new_ones_sliced);
  tcase_add_test(tc, axis_moving_between_dims_is_an_all_to_all);
  tcase_add_test(tc, sub_axes_are_split_at_the_other_sides_boundaries);
  tcase_add_test(tc, reordered_axes_need_a_collective_permute);
  tcase_add_test(tc, other_mesh_reshards_stay_unless_to_replicated);
  tcase_add_test(tc, a_barriers_operand_is_what_the_collectives_read);
  tcase_add_test(tc, a_while_block_argument_has_the_whiles_sharding);
  tcase_add_test(tc, another_device_order_is_a_permute_onto_the_target_mesh);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
