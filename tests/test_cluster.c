/*
 * test_cluster.c - the cluster model: reading cluster files, per-axis link costs, rank
 * mapping and mesh-shape enumeration.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "search/cluster.h"
#include "cluster_support.h"
#include "test_support.h"

START_TEST(one_machine_example_has_eight_nvlinked_devices) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  ck_assert_int_eq(c->ndevices, 8);
  ck_assert_str_eq(sp_cluster_link(c, 0, 7)->kind, "nvlink");
  ck_assert_double_eq(sp_cluster_device_flops(c, 3, "bf16"), 3.12e14);
  ck_assert_double_eq(sp_cluster_device_flops(c, 3, "f64"), 1.95e13); /* slowest listed */
  ck_assert_double_eq(sp_cluster_device_memory(c, 0), 85899345920.0);
  sp_cluster_free(c);
}
END_TEST

START_TEST(axis_crossing_machines_gets_the_network_link) {
  sp_cluster *c = sp_test_load_cluster("four_machines_32gpu.json");
  sp_mesh_axis axes[2] = {{"data", 4}, {"model", 8}};
  sp_mesh m = {2, axes, 0, NULL};
  sp_axis_cost costs[2];
  sp_err err;
  ck_assert_int_eq(sp_cluster_axis_costs(c, &m, NULL, costs, &err), SP_OK);
  ck_assert_str_eq(costs[0].kind, "infiniband");
  ck_assert_double_eq(costs[0].bandwidth, 2.5e10);
  ck_assert_double_eq(costs[0].alpha, 5e-6);
  ck_assert_str_eq(costs[1].kind, "nvlink");
  ck_assert_double_eq(costs[1].bandwidth, 3.0e11);
  sp_cluster_free(c);
}
END_TEST

START_TEST(rank_mapping_puts_the_heaviest_axis_inside_a_machine) {
  sp_cluster *c = sp_test_load_cluster("four_machines_32gpu.json");
  sp_mesh_axis axes[2] = {{"model", 8}, {"data", 4}};
  sp_mesh m = {2, axes, 0, NULL};
  /* Default row-major placement would put "data" (minor) inside machines; "model" carries
   * ten times the traffic, so it must be the one on NVLink. */
  double traffic[2] = {10.0, 1.0};
  int64_t dev[32];
  sp_axis_cost costs[2];
  sp_err err;
  ck_assert_int_eq(sp_cluster_map_ranks(c, &m, traffic, 0, dev, &err), SP_OK);
  ck_assert_int_eq(sp_cluster_axis_costs(c, &m, dev, costs, &err), SP_OK);
  ck_assert_str_eq(costs[0].kind, "nvlink");
  ck_assert_str_eq(costs[1].kind, "infiniband");
  /* Every device used exactly once. */
  int seen[32] = {0};
  for (int i = 0; i < 32; i++) seen[dev[i]]++;
  for (int i = 0; i < 32; i++) ck_assert_int_eq(seen[i], 1);
  /* With the traffic reversed, the default layout is kept. */
  double reversed[2] = {1.0, 10.0};
  ck_assert_int_eq(sp_cluster_map_ranks(c, &m, reversed, 0, dev, &err), SP_OK);
  for (int i = 0; i < 32; i++) ck_assert_int_eq(dev[i], i);
  sp_cluster_free(c);
}
END_TEST

START_TEST(mesh_shapes_enumerate_ordered_factorisations) {
  int64_t shapes[16 * 3];
  ck_assert_int_eq(sp_cluster_mesh_shapes(8, 1, false, shapes, 16), 1);
  ck_assert_int_eq(shapes[0], 8);
  ck_assert_int_eq(sp_cluster_mesh_shapes(8, 2, false, shapes, 16), 2);
  ck_assert_int_eq(shapes[0], 2);
  ck_assert_int_eq(shapes[1], 4);
  ck_assert_int_eq(shapes[2], 4);
  ck_assert_int_eq(shapes[3], 2);
  ck_assert_int_eq(sp_cluster_mesh_shapes(8, 3, false, shapes, 16), 1);
  ck_assert_int_eq(sp_cluster_mesh_shapes(12, 2, false, shapes, 16), 4); /* 2x6 3x4 4x3 6x2 */
  ck_assert_int_eq(sp_cluster_mesh_shapes(7, 2, false, shapes, 16), 0);
}
END_TEST

START_TEST(mesh_shapes_with_size_one_axes_include_the_single_axis_meshes) {
  int64_t shapes[16 * 2];
  /* 1x8 2x4 4x2 8x1, in that order. */
  ck_assert_int_eq(sp_cluster_mesh_shapes(8, 2, true, shapes, 16), 4);
  static const int64_t want[8] = {1, 8, 2, 4, 4, 2, 8, 1};
  for (int i = 0; i < 8; i++) ck_assert_int_eq(shapes[i], want[i]);
  ck_assert_int_eq(sp_cluster_mesh_shapes(7, 2, true, shapes, 16), 2);
  ck_assert_int_eq(sp_cluster_mesh_shapes(1, 2, true, shapes, 16), 1);
  /* More shapes than room: the count is exact, only `max` are written. */
  ck_assert_int_eq(sp_cluster_mesh_shapes(64, 3, true, shapes, 2), 28);
}
END_TEST

static void assert_parse_error(const char *json, const char *expected) {
  sp_cluster *c = NULL;
  sp_err err;
  ck_assert_int_ne(sp_cluster_parse(json, &c, &err), SP_OK);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(err.msg, expected), "got \"%s\", expected \"%s\"", err.msg, expected);
}

START_TEST(malformed_cluster_files_name_the_field) {
  assert_parse_error("{", "not valid JSON");
  assert_parse_error("{}", "device_types: expected a non-empty object");
  const char *types = "{\"device_types\": {\"g\": {\"memory_bytes\": 1e9, \"flops\": {\"f32\": 1e12}}}, ";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 2}]}", types);
  assert_parse_error(buf, "machines[0]: missing \"link\"");
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"h\", \"num_devices\": 2, "
           "\"link\": {\"bandwidth\": 1e9}}]}", types);
  assert_parse_error(buf, "machines[0].device_type: unknown device type \"h\"");
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 2, "
           "\"link\": {\"bandwidth\": -1}}]}", types);
  assert_parse_error(buf, "machines[0].link.bandwidth: -1 is below the minimum");
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 2, "
           "\"link\": {\"bandwidth\": 1e9}}, {\"device_type\": \"g\", \"num_devices\": 2, "
           "\"link\": {\"bandwidth\": 1e9}}]}", types);
  assert_parse_error(buf, "network: required when there is more than one machine");
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 2.5, "
           "\"link\": {\"bandwidth\": 1e9}}]}", types);
  assert_parse_error(buf, "machines[0].num_devices: expected an integer");
  /* JSON numbers beyond a double read as infinity. */
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 1e999, "
           "\"link\": {\"bandwidth\": 1e9}}]}", types);
  assert_parse_error(buf, "machines[0].num_devices: expected a finite number");
  snprintf(buf, sizeof buf, "%s\"machines\": [{\"device_type\": \"g\", \"num_devices\": 2, "
           "\"link\": {\"bandwidth\": 1e999}}]}", types);
  assert_parse_error(buf, "machines[0].link.bandwidth: expected a finite number");
}
END_TEST

START_TEST(reduce_scatter_false_says_the_runtime_has_none) {
  const char *base =
      "{\"device_types\": {\"g\": {\"memory_bytes\": 1e9, \"flops\": {\"f32\": 1e12}}},"
      " \"machines\": [{\"device_type\": \"g\", \"num_devices\": 2, \"link\": {\"bandwidth\": 1e9}}]";
  char buf[512];
  sp_cluster *c;
  sp_err err;
  snprintf(buf, sizeof buf, "%s}", base);
  ck_assert_int_eq(sp_cluster_parse(buf, &c, &err), SP_OK);
  ck_assert(!c->no_reduce_scatter);
  sp_cluster_free(c);
  snprintf(buf, sizeof buf, "%s, \"reduce_scatter\": false}", base);
  ck_assert_int_eq(sp_cluster_parse(buf, &c, &err), SP_OK);
  ck_assert(c->no_reduce_scatter);
  sp_cluster_free(c);
  snprintf(buf, sizeof buf, "%s, \"reduce_scatter\": true}", base);
  ck_assert_int_eq(sp_cluster_parse(buf, &c, &err), SP_OK);
  ck_assert(!c->no_reduce_scatter);
  sp_cluster_free(c);
  snprintf(buf, sizeof buf, "%s, \"reduce_scatter\": 0}", base);
  assert_parse_error(buf, "reduce_scatter: expected true or false");
}
END_TEST

START_TEST(explicit_links_override_the_machine_link) {
  const char *json =
      "{\"device_types\": {\"g\": {\"memory_bytes\": 1e9, \"flops\": {\"f32\": 1e12}}},"
      " \"machines\": [{\"device_type\": \"g\", \"num_devices\": 4,"
      "   \"link\": {\"kind\": \"nvlink\", \"bandwidth\": 1e11}}],"
      " \"links\": [{\"src\": 3, \"dst\": 2, \"kind\": \"pcie\", \"bandwidth\": 1e10, \"latency\": 1e-5}]}";
  sp_cluster *c = NULL;
  sp_err err;
  ck_assert_int_eq(sp_cluster_parse(json, &c, &err), SP_OK);
  ck_assert_str_eq(sp_cluster_link(c, 2, 3)->kind, "pcie");
  ck_assert_str_eq(sp_cluster_link(c, 0, 1)->kind, "nvlink");
  sp_mesh_axis axes[2] = {{"a", 2}, {"b", 2}};
  sp_mesh m = {2, axes, 0, NULL};
  sp_axis_cost costs[2];
  ck_assert_int_eq(sp_cluster_axis_costs(c, &m, NULL, costs, &err), SP_OK);
  ck_assert_str_eq(costs[1].kind, "pcie"); /* the group {2, 3} is the slowest for axis b */
  ck_assert_double_eq(costs[1].alpha, 1e-5);
  ck_assert_str_eq(costs[0].kind, "nvlink");
  sp_cluster_free(c);
}
END_TEST

static Suite *cluster_suite(void) {
  Suite *s = suite_create("cluster");
  TCase *tc = tcase_create("model");
  tcase_add_test(tc, one_machine_example_has_eight_nvlinked_devices);
  tcase_add_test(tc, axis_crossing_machines_gets_the_network_link);
  tcase_add_test(tc, rank_mapping_puts_the_heaviest_axis_inside_a_machine);
  tcase_add_test(tc, mesh_shapes_enumerate_ordered_factorisations);
  tcase_add_test(tc, mesh_shapes_with_size_one_axes_include_the_single_axis_meshes);
  tcase_add_test(tc, malformed_cluster_files_name_the_field);
  tcase_add_test(tc, explicit_links_override_the_machine_link);
  tcase_add_test(tc, reduce_scatter_false_says_the_runtime_has_none);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(cluster_suite()); }
