/*
 * test_mesh_import.c - symbol DCE, lifting inline meshes, removing size-one axes and the
 * manual-axes cleanup (propagation/mesh_import.h), text in, text out.
 */
#include <check.h>

#include "pass_test.h"
#include "propagation/mesh_import.h"
#include "test_support.h"

START_TEST(symbol_dce_erases_private_funcs_nothing_live_calls) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func private @dead(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = call @dead_too(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"
      "func.func private @dead_too(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  return %arg0 : tensor<4xf32>\n"
      "}\n"
      "func.func private @used(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  return %arg0 : tensor<4xf32>\n"
      "}\n"
      "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = call @used(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]>\n"
      "  func.func private @used(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    return %arg0 : tensor<4xf32>\n"
      "  }\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = call @used(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_symbol_dce, want);
}
END_TEST

START_TEST(inline_meshes_become_symbols_reusing_equal_meshes) {
  const char *in =
      "sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"a\"=2, \"b\"=2]>, [{\"a\"}]>},\n"
      "                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"x\"=4]>, [{\"x\"}]>},\n"
      "                %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"x\"=4]>, [{\"x\"}]>})\n"
      "    -> (tensor<f32> {sdy.sharding = #sdy.sharding<mesh<[], device_ids=[3]>, []>}) {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  return %0 : tensor<f32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
      "  sdy.mesh @mesh = <[\"x\"=4]>\n"
      "  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}, "
      "%arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}, "
      "%arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) "
      "-> (tensor<f32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {\n"
      "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n"
      "    return %cst : tensor<f32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_lift_inlined, want);
}
END_TEST

START_TEST(new_inline_mesh_name_avoids_existing_symbols) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"b\"=2]>, [{\"b\"}]>}) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]>\n"
      "  sdy.mesh @mesh_0 = <[\"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh_0, [{\"b\"}]>}) -> tensor<8xf32> {\n"
      "    return %arg0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_lift_inlined, want);
}
END_TEST

START_TEST(duplicate_meshes_keep_the_first_name) {
  const char *in =
      "sdy.mesh @first = <[\"a\"=2]>\n"
      "sdy.mesh @second = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@second, [{\"a\"}]>}) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@second, [{?}]>]>} : tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @first = <[\"a\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@first, [{\"a\"}]>}) -> tensor<8xf32> {\n"
      "    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@first, [{?}]>]>} : tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_lift_inlined, want);
}
END_TEST

START_TEST(size_one_axes_leave_every_sharding_but_stay_in_the_mesh) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"one\"=1, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"one\"}p1, {\"a\", \"one\", ?}], replicated={\"one\", \"b\"}>})\n"
      "    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"one\", \"b\"}, {}]>}) {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {\"one\"}], unreduced={\"one\"}> : tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"one\"=1, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"a\", ?}], replicated={\"b\"}>}) "
      "-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) {\n"
      "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {}]> : tensor<8x8xf32>\n"
      "    return %0 : tensor<8x8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_remove_size_one_axes, want);
}
END_TEST

START_TEST(manual_axes_are_sorted_and_unused_ones_replicated) {
  const char *in =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\"}]>] out_shardings=[<@mesh, [{\"c\", ?}]>]\n"
      "      manual_axes={\"c\", \"b\"} (%arg1: tensor<2xf32>) {\n"
      "    sdy.return %arg1 : tensor<2xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\"}], replicated={\"c\"}>] "
      "out_shardings=[<@mesh, [{\"c\", ?}], replicated={\"b\"}>] manual_axes={\"b\", \"c\"} (%arg1: tensor<2xf32>) {\n"
      "      sdy.return %arg1 : tensor<2xf32>\n"
      "    } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %0 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_manual_axes_cleanup, want);
}
END_TEST

START_TEST(unique_symbol_adds_the_first_free_suffix) {
  sp_module *m = pt_parse(
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "sdy.mesh @mesh_0 = <[\"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n");
  ck_assert_str_eq(sp_module_unique_symbol(m, "mesh"), "mesh_1");
  ck_assert_str_eq(sp_module_unique_symbol(m, "main"), "main_0");
  ck_assert_str_eq(sp_module_unique_symbol(m, "free"), "free");
  ck_assert_ptr_nonnull(sp_module_lookup_symbol(m, "mesh_0"));
  ck_assert_ptr_null(sp_module_lookup_symbol(m, "mesh_1"));
  sp_module_free(m);
}
END_TEST

/* Every in/out sharding of a computation names its one mesh (an empty-mesh placeholder and
 * the mesh spelt inline included), and what a sharding leaves unused of a manual axis is
 * replicated as sub-axes, neighbouring parts merged ("v":(1)4 and "v":(4)2 make "v"). */
START_TEST(manual_axes_cleanup_names_one_mesh_and_replicates_unused_sub_axes) {
  const char *in =
      "sdy.mesh @none = <[]>\n"
      "sdy.mesh @grid = <[\"u\"=4, \"v\"=8]>\n"
      "func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {\n"
      "  %0:2 = sdy.manual_computation(%arg0, %arg1)\n"
      "      in_shardings=[<@none, [{}]>, <@grid, [{\"v\":(2)2}]>]\n"
      "      out_shardings=[<mesh<[\"u\"=4, \"v\"=8]>, [{\"u\":(1)2}], replicated={\"v\":(4)2}>, <@grid, [{\"v\":(2)2}]>]\n"
      "      manual_axes={\"v\", \"u\"} (%arg2: tensor<16xf32>, %arg3: tensor<8xf32>) {\n"
      "    %1 = stablehlo.slice %arg2 [0:8] : (tensor<16xf32>) -> tensor<8xf32>\n"
      "    sdy.return %1, %arg3 : tensor<8xf32>, tensor<8xf32>\n"
      "  } : (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)\n"
      "  return %0#0, %0#1 : tensor<16xf32>, tensor<16xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @none = <[]>\n"
      "  sdy.mesh @grid = <[\"u\"=4, \"v\"=8]>\n"
      "  func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {\n"
      "    %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@grid, [{}], replicated={\"u\", \"v\"}>, <@grid, [{\"v\":(2)2}], replicated={\"u\", \"v\":(1)2, \"v\":(4)2}>] out_shardings=[<@grid, [{\"u\":(1)2}], replicated={\"u\":(2)2, \"v\"}>, <@grid, [{\"v\":(2)2}], replicated={\"u\", \"v\":(1)2, \"v\":(4)2}>] manual_axes={\"u\", \"v\"} (%arg2: tensor<16xf32>, %arg3: tensor<8xf32>) {\n"
      "      %1 = stablehlo.slice %arg2 [0:8] : (tensor<16xf32>) -> tensor<8xf32>\n"
      "      sdy.return %1, %arg3 : tensor<8xf32>, tensor<8xf32>\n"
      "    } : (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)\n"
      "    return %0#0, %0#1 : tensor<16xf32>, tensor<16xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_manual_axes_cleanup, want);
}
END_TEST

/* A StableHLO mesh written inline in a replica group becomes an sdy.mesh (or the equal one
 * already there) referred to by name. */
START_TEST(inline_stablehlo_meshes_of_replica_groups_are_lifted) {
  const char *in =
      "sdy.mesh @w = <[\"k\"=2]>\n"
      "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.all_reduce\"(%arg0) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %1 = stablehlo.maximum %a, %b : tensor<f32>\n"
      "      stablehlo.return %1 : tensor<f32>\n"
      "  }) {\n"
      "    replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = \"r\", size = 2>, #stablehlo.mesh_axis<name = \"s\", size = 3>]>, axes = [#stablehlo.axis_ref<name = \"s\">]>\n"
      "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %2 = \"stablehlo.all_reduce\"(%0) ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %1 = stablehlo.add %a, %b : tensor<f32>\n"
      "      stablehlo.return %1 : tensor<f32>\n"
      "  }) {\n"
      "    replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = \"k\", size = 2>]>, axes = [#stablehlo.axis_ref<name = \"k\">]>\n"
      "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %2 : tensor<4xf32>\n"
      "}\n";
  const char *want =
      "module {\n"
      "  sdy.mesh @w = <[\"k\"=2]>\n"
      "  sdy.mesh @mesh = <[\"r\"=2, \"s\"=3]>\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = \"stablehlo.all_reduce\"(%arg0) <{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = \"s\">]>}> ({\n"
      "    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):\n"
      "      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>\n"
      "      stablehlo.return %2 : tensor<f32>\n"
      "    }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    %1 = \"stablehlo.all_reduce\"(%0) <{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @w, axes = [#stablehlo.axis_ref<name = \"k\">]>}> ({\n"
      "    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):\n"
      "      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>\n"
      "      stablehlo.return %2 : tensor<f32>\n"
      "    }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %1 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  pt_expect1(in, sp_mesh_lift_inlined, want);
}
END_TEST

static Suite *mesh_import_suite(void) {
  Suite *s = suite_create("mesh_import");
  TCase *tc = tcase_create("symbols");
  tcase_add_test(tc, symbol_dce_erases_private_funcs_nothing_live_calls);
  tcase_add_test(tc, unique_symbol_adds_the_first_free_suffix);
  suite_add_tcase(s, tc);
  tc = tcase_create("meshes");
  tcase_add_test(tc, inline_meshes_become_symbols_reusing_equal_meshes);
  tcase_add_test(tc, new_inline_mesh_name_avoids_existing_symbols);
  tcase_add_test(tc, duplicate_meshes_keep_the_first_name);
  tcase_add_test(tc, size_one_axes_leave_every_sharding_but_stay_in_the_mesh);
  tcase_add_test(tc, manual_axes_are_sorted_and_unused_ones_replicated);
  tcase_add_test(tc, manual_axes_cleanup_names_one_mesh_and_replicates_unused_sub_axes);
  tcase_add_test(tc, inline_stablehlo_meshes_of_replica_groups_are_lifted);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(mesh_import_suite()); }
