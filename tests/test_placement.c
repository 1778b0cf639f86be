/*
 * test_placement.c - the placement search (search/placement.c): rank mapping by traffic and
 * the mesh-shape search, on generated models and the example cluster files.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "propagation/propagate.h"
#include "search/placement.h"
#include "search/search_pass.h"
#include "cluster_support.h"
#include "gen_support.h"
#include "test_support.h"

/* ------------------------------------------------------------------ helpers */

static sp_cluster *ONE, *FOUR;

static void setup(void) {
  ONE = sp_test_load_cluster("one_machine_8gpu.json");
  FOUR = sp_test_load_cluster("four_machines_32gpu.json");
}

static void teardown(void) {
  sp_cluster_free(ONE);
  sp_cluster_free(FOUR);
}

/* A GPT training layer (hidden 4096, 32 heads, sequence 2048, bf16) on `mesh`. */
static sp_module *gpt_layer(const char *mesh, int64_t batch) {
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, 1);
  o.batch = batch;
  sp_err err;
  ck_assert_int_eq(sp_gen_parse_mesh(mesh, &o, &err), SP_OK);
  return sp_test_generate(&o);
}

/* The weights (arguments 2, 3, 4, 5, 7, 8) come back as the gradients (results 2..7). */
static const sp_plan_state_pair GPT_STATE[6] = {{2, 2}, {3, 3}, {4, 4}, {5, 5}, {7, 6}, {8, 7}};

static void gpt_opts(sp_plan_search_opts *o, const sp_cluster *c, double seconds) {
  sp_plan_search_opts_init(o);
  o->cluster = c;
  o->time_limit = seconds;
  o->state = GPT_STATE;
  o->nstate = 6;
}

static const sp_mesh *module_mesh(const sp_module *m) {
  const sp_mesh *mesh = sp_module_lookup_mesh(m, "mesh");
  ck_assert_ptr_nonnull(mesh);
  return mesh;
}

/* The printed module parses and verifies again. */
static void assert_reparses(const sp_module *m) {
  char *text = sp_test_print(m);
  sp_module *again = sp_test_parse(text);
  sp_err err;
  int rc = sp_verify_module(again, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  sp_module_free(again);
  free(text);
}

/* Runs the placement search with rank mapping as `auto_devices` says and the shape search as
 * `auto_shape` says; fails the test on an error. */
static sp_plan_summary place(sp_module *m, const sp_plan_search_opts *o, bool auto_devices,
                             bool auto_shape) {
  sp_placement_opts po;
  sp_placement_opts_init(&po);
  po.auto_devices = auto_devices;
  po.auto_shape = auto_shape;
  sp_plan_summary s;
  sp_err err;
  int rc = sp_placement_search(m, o, &po, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return s;
}

static const sp_plan_trial *chosen_trial(const sp_plan_summary *s) {
  const sp_plan_trial *c = NULL;
  for (int i = 0; i < s->ntrials; i++)
    if (s->trials[i].chosen) {
      ck_assert_ptr_null(c);
      c = &s->trials[i];
    }
  ck_assert_ptr_nonnull(c);
  return c;
}

/* The chosen trial is a real plan, the summary's, and no real trial is cheaper. */
static void assert_cheapest_chosen(const sp_plan_summary *s) {
  const sp_plan_trial *c = chosen_trial(s);
  ck_assert(!c->probe);
  ck_assert_ptr_null(c->error);
  ck_assert_int_eq(c->cost, s->cost);
  for (int i = 0; i < s->ntrials; i++)
    if (!s->trials[i].probe && !s->trials[i].error) ck_assert_int_ge(s->trials[i].cost, s->cost);
}

/* ------------------------------------------------------------------ rank mapping */

START_TEST(rank_mapping_moves_the_heavier_axis_onto_nvlink) {
  /* In mesh order, "data" (the minor axis) fills each machine and "model" crosses the
   * network; the layer's model-parallel traffic is the heavier, so the placement search
   * swaps them and beats the mesh order. */
  sp_module *m = gpt_layer("model=8,data=4", 8);
  sp_plan_search_opts o;
  gpt_opts(&o, FOUR, 15);
  sp_plan_summary s = place(m, &o, true, false);
  ck_assert(s.placement_auto);
  ck_assert_str_eq(s.axis[0].kind, "nvlink");      /* model */
  ck_assert_str_eq(s.axis[1].kind, "infiniband");  /* data */
  ck_assert(s.axis_traffic[0] > s.axis_traffic[1]);
  assert_cheapest_chosen(&s);
  /* The mesh order was planned too, and cost more. */
  const sp_plan_trial *in_order = NULL;
  for (int i = 0; i < s.ntrials; i++)
    if (!s.trials[i].probe && strstr(s.trials[i].devices, "in mesh order")) in_order = &s.trials[i];
  ck_assert_ptr_nonnull(in_order);
  ck_assert_int_gt(in_order->cost, s.cost);
  /* The placement is the mesh's device ids now: a "model" group of 8 is one machine. */
  const sp_mesh *mesh = module_mesh(m);
  ck_assert_int_eq(mesh->ndevice_ids, 32);
  for (int64_t i = 0; i < 32; i++) {
    ck_assert_int_eq(mesh->device_ids[i], s.device_of[i]);
    int64_t model = i / 4, data = i % 4;
    ck_assert_int_eq(mesh->device_ids[i] / 8, data);     /* machine */
    ck_assert_int_eq(mesh->device_ids[i] % 8, model);    /* GPU in it */
  }
  assert_reparses(m);
  sp_module_free(m);
}
END_TEST

START_TEST(rank_mapping_matches_the_mesh_laid_out_the_right_way_round) {
  /* The same layer with the axes already in the right order: no remapping, the same cost. */
  sp_plan_search_opts o;
  gpt_opts(&o, FOUR, 15);
  sp_module *a = gpt_layer("model=8,data=4", 8);
  sp_module *b = gpt_layer("data=4,model=8", 8);
  sp_plan_summary swapped = place(a, &o, true, false), natural = place(b, &o, true, false);
  ck_assert_int_eq(swapped.cost, natural.cost);
  ck_assert_int_eq(module_mesh(b)->ndevice_ids, 0);
  sp_module_free(a);
  sp_module_free(b);
}
END_TEST

START_TEST(placement_given_keeps_the_mesh_order) {
  sp_module *m = gpt_layer("model=8,data=4", 8);
  sp_plan_search_opts o;
  gpt_opts(&o, FOUR, 10);
  sp_plan_summary s = place(m, &o, false, false);
  ck_assert(!s.placement_auto);
  ck_assert_int_eq(s.ntrials, 1);
  ck_assert_str_eq(s.axis[0].kind, "infiniband");
  ck_assert_int_eq(module_mesh(m)->ndevice_ids, 0);
  sp_module_free(m);
}
END_TEST

START_TEST(a_mesh_with_device_ids_is_not_remapped) {
  static const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2], device_ids=[3, 2, 1, 0]>\n"
      "  func.func @main(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] "
      ": (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "    return %0 : tensor<64x64xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = FOUR;
  sp_plan_summary s = place(m, &o, true, false);
  ck_assert(!s.placement_auto);
  ck_assert_int_eq(s.ntrials, 1);
  ck_assert_int_eq(s.device_of[0], 3);
  ck_assert_int_eq(module_mesh(m)->device_ids[0], 3);
  sp_module_free(m);
}
END_TEST

START_TEST(axis_traffic_adds_up_the_collectives_of_each_axis) {
  sp_module *m = gpt_layer("data=2,model=4", 8);
  sp_plan_search_opts o;
  gpt_opts(&o, ONE, 5);
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_OK);
  double want[2] = {0, 0};
  for (int i = 0; i < s.ncollectives; i++) {
    const sp_collective *c = &s.collectives[i].c;
    double n = (double)c->n, sent = 0;
    switch (c->kind) {
      case SP_COLL_ALL_GATHER:
      case SP_COLL_REDUCE_SCATTER: sent = (n - 1) / n * c->bytes; break;
      case SP_COLL_ALL_REDUCE: sent = 2 * (n - 1) / n * c->bytes; break;
      case SP_COLL_ALL_TO_ALL: sent = (n - 1) / (n * n) * c->bytes; break;
      case SP_COLL_COLLECTIVE_PERMUTE: sent = c->bytes; break;
      case SP_COLL_ALL_SLICE: sent = 0; break;
    }
    for (int k = 0; k < c->naxes; k++) want[c->axes[k].axis] += sent;
  }
  ck_assert(s.ncollectives > 0);
  for (int a = 0; a < 2; a++) ck_assert(fabs(s.axis_traffic[a] - want[a]) <= 1e-6 * (want[a] + 1));
  ck_assert(s.axis_traffic[0] + s.axis_traffic[1] > 0);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ mesh shapes */

START_TEST(mesh_shape_search_plans_every_factorisation_and_keeps_the_cheapest) {
  sp_module *m = gpt_layer("data=2,model=4", 8);
  sp_plan_search_opts o;
  gpt_opts(&o, ONE, 20);
  sp_plan_summary s = place(m, &o, true, true);
  ck_assert(s.shape_auto);
  /* One machine: every placement prices the axes alike, so one plan per shape. */
  ck_assert_int_eq(s.ntrials, 4);
  static const char *shapes[4] = {"data=1, model=8", "data=2, model=4", "data=4, model=2",
                                  "data=8, model=1"};
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(s.trials[i].shape, shapes[i]);
    ck_assert_ptr_null(s.trials[i].error);
  }
  assert_cheapest_chosen(&s);
  /* The module now has the chosen shape, and its shardings fit it. */
  const sp_plan_trial *c = chosen_trial(&s);
  const sp_mesh *mesh = module_mesh(m);
  char shape[64];
  snprintf(shape, sizeof shape, "data=%lld, model=%lld", (long long)mesh->axes[0].size,
           (long long)mesh->axes[1].size);
  ck_assert_str_eq(shape, c->shape);
  ck_assert_ptr_eq(s.mesh, mesh);
  assert_reparses(m);
  sp_module_free(m);
}
END_TEST

START_TEST(mesh_shape_search_skips_shapes_whose_plans_do_not_fit) {
  /* The 4 MiB input is pinned to "data" on its rows (closed), so a device holds 4 MiB / data
   * of it, plus at least 4 MiB / 8 of the result: 4.5, 2.5, 1.5 and 1 MiB for data = 1, 2,
   * 4, 8. Under a 1.6 MiB limit only data=4 and data=8 fit. */
  static const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
      "  func.func @main(%arg0: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>})"
      " -> tensor<1024x1024xf32> {\n"
      "    %0 = stablehlo.negate %arg0 : tensor<1024x1024xf32>\n"
      "    return %0 : tensor<1024x1024xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.memory_limit = 1.6 * 1024 * 1024;
  sp_plan_summary s = place(m, &o, true, true);
  ck_assert_int_eq(s.ntrials, 4);
  ck_assert_ptr_nonnull(s.trials[0].error);  /* data=1 */
  ck_assert_ptr_nonnull(s.trials[1].error);  /* data=2 */
  ck_assert_msg(strstr(s.trials[0].error, "do not fit the device memory") != NULL, "%s",
                s.trials[0].error);
  ck_assert_ptr_null(s.trials[2].error);
  ck_assert_ptr_null(s.trials[3].error);
  assert_cheapest_chosen(&s);
  ck_assert(module_mesh(m)->axes[0].size >= 4);
  ck_assert(s.peak_memory_bytes <= o.memory_limit);
  sp_module_free(m);
}
END_TEST

START_TEST(no_shape_admitting_a_plan_names_every_reason) {
  /* 1 KiB per device: no shape fits a 4 MiB tensor. */
  static const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
      "  func.func @main(%arg0: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {\n"
      "    %0 = stablehlo.add %arg0, %arg0 : tensor<1024x1024xf32>\n"
      "    return %0 : tensor<1024x1024xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  char *before = sp_test_print(m);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.memory_limit = 1024;  /* bytes: nothing fits */
  sp_placement_opts po;
  sp_placement_opts_init(&po);
  po.auto_shape = true;
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_placement_search(m, &o, &po, &s, &err), SP_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no mesh shape admits a plan") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "[data=1, model=8]") && strstr(err.msg, "[data=8, model=1]"), "%s",
                err.msg);
  /* The module is left as it was. */
  char *after = sp_test_print(m);
  ck_assert_str_eq(before, after);
  free(before);
  free(after);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ the pass */

/* Runs the search pass with `cluster` (a file of examples/clusters) and further options. */
static sp_plan_summary run_pass(sp_module *m, const char *cluster, const char *more) {
  char opts[1024];
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/%s %s", SP_SOURCE_DIR, cluster, more);
  sp_plan_summary s;
  sp_err err;
  int rc = sp_search_pass(m, opts, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return s;
}

/* A strategy that takes an operand in another layout than its value's (here: a large matmul
 * whose arguments are pinned replicated and whose work is cheapest split over the devices)
 * shows in the planned module as an sdy.reshard in front of the op, so the printed module
 * carries the whole plan, not only each value's own sharding. */
START_TEST(pass_writes_operand_layouts_as_reshards) {
  sp_module *m = sp_test_parse(
      "module {\n  sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
      "  func.func @main(%arg0: tensor<4096x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, "
      "[{}, {}]>}, %arg1: tensor<4096x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, "
      "[{}, {}]>}) -> tensor<4096x4096xf32> {\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
      "(tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>\n"
      "    return %0 : tensor<4096x4096xf32>\n  }\n}\n");
  sp_plan_summary s = run_pass(m, "one_machine_8gpu.json", "placement=given");
  ck_assert_int_ge(s.noperand_reshards, 1);
  char *out = sp_test_print(m);
  ck_assert_msg(strstr(out, "sdy.reshard %arg") != NULL, "%s", out);
  /* The dot reads the reshard, not the argument. */
  ck_assert_msg(strstr(out, "stablehlo.dot_general %arg0, %arg1") == NULL, "%s", out);
  free(out);
  sp_module_free(m);
}
END_TEST

START_TEST(pass_reports_the_trials_in_text_and_json) {
  sp_module *m = gpt_layer("model=8,data=4", 8);
  sp_plan_summary s = run_pass(m, "four_machines_32gpu.json",
                               "state=2:2,3:3,4:4,5:5,7:6,8:7 time-limit=15");
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_plan_summary_print(&sb, &s);
  const char *txt = sp_strbuf_str(&sb);
  ck_assert_msg(strstr(txt, "placement by traffic") != NULL, "%s", txt);
  ck_assert_msg(strstr(txt, "\"model\"=8 on nvlink") != NULL, "%s", txt);
  ck_assert_msg(strstr(txt, " probe [model=8, data=4]") != NULL, "%s", txt);
  ck_assert_msg(strstr(txt, "chosen [model=8, data=4] on 0,8,16,24,") != NULL, "%s", txt);
  sp_strbuf_free(&sb);
  cJSON *j = sp_plan_summary_to_json(&s);
  ck_assert_ptr_nonnull(j);
  const cJSON *mesh = cJSON_GetObjectItem(j, "mesh");
  ck_assert_str_eq(cJSON_GetObjectItem(mesh, "placement")->valuestring, "by traffic");
  const cJSON *trials = cJSON_GetObjectItem(mesh, "trials");
  ck_assert_int_eq(cJSON_GetArraySize(trials), s.ntrials);
  int chosen = 0;
  for (int i = 0; i < s.ntrials; i++)
    chosen += cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(trials, i), "chosen"));
  ck_assert_int_eq(chosen, 1);
  cJSON_Delete(j);
  sp_module_free(m);
}
END_TEST

START_TEST(pass_rejects_bad_placement_options) {
  sp_module *m = gpt_layer("data=2,model=4", 8);
  char opts[1024];
  sp_plan_summary s;
  sp_err err;
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json placement=best",
           SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "placement=best is not auto or given") != NULL, "%s", err.msg);
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "mesh-shape=auto devices=0,1,2,3,4,5,6,7", SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "cannot be combined with mesh-shape=auto") != NULL, "%s", err.msg);
  sp_module_free(m);
}
END_TEST

/* An MLP step without any mesh: only the device count (the cluster's) and axis names. */
static const char *NO_MESH =
    "module {\n"
    "  func.func @main(%arg0: tensor<64x1024xf32>, %arg1: tensor<1024x4096xf32>, "
    "%arg2: tensor<4096x1024xf32>) -> tensor<64x1024xf32> {\n"
    "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] "
    ": (tensor<64x1024xf32>, tensor<1024x4096xf32>) -> tensor<64x4096xf32>\n"
    "    %1 = stablehlo.tanh %0 : tensor<64x4096xf32>\n"
    "    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] "
    ": (tensor<64x4096xf32>, tensor<4096x1024xf32>) -> tensor<64x1024xf32>\n"
    "    return %2 : tensor<64x1024xf32>\n  }\n}\n";

START_TEST(mesh_axes_give_a_mesh_to_a_module_without_one_and_search_its_shape) {
  sp_module *m = sp_test_parse(NO_MESH);
  char opts[1024];
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "mesh-axes=data,model", SP_SOURCE_DIR);
  sp_plan_summary s;
  sp_err err;
  int rc = sp_search_pass(m, opts, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  ck_assert(s.shape_auto);
  ck_assert_int_eq(s.ntrials, 4);  /* 1x8 2x4 4x2 8x1 */
  assert_cheapest_chosen(&s);
  const sp_mesh *mesh = module_mesh(m);
  ck_assert_int_eq(mesh->naxes, 2);
  ck_assert_str_eq(mesh->axes[0].name, "data");
  ck_assert_int_eq(sp_mesh_num_devices(mesh), 8);
  /* Inference of an MLP: the batch split 8 ways needs no communication, whatever the shape
   * calls the axes; on equal cost the mesh as first laid out (every device on "data") stays. */
  ck_assert(s.comm_s == 0.0);
  ck_assert_int_eq(mesh->axes[0].size, 8);
  assert_reparses(m);
  sp_module_free(m);
}
END_TEST

START_TEST(mesh_axes_errors_leave_the_module_unchanged) {
  sp_module *m = sp_test_parse(NO_MESH);
  char *before = sp_test_print(m);
  char opts[1024];
  sp_plan_summary s;
  sp_err err;
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "mesh-axes=data,model num-devices=16", SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "num-devices=16, the cluster has 8") != NULL, "%s", err.msg);
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "mesh-axes=data,data", SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "expected distinct axis names") != NULL, "%s", err.msg);
  /* Nothing fits 1 KiB: the search fails after the mesh was added, and takes it out again. */
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "mesh-axes=data,model memory-limit=1024", SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_ENOTFOUND);
  char *after = sp_test_print(m);
  ck_assert_str_eq(before, after);
  free(after);
  free(before);
  sp_module_free(m);
  /* A module that has a mesh is told to use mesh-shape=auto. */
  m = gpt_layer("data=2,model=4", 8);
  snprintf(opts, sizeof opts, "cluster=%s/examples/clusters/one_machine_8gpu.json mesh-axes=a,b",
           SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, opts, &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "use mesh-shape=auto") != NULL, "%s", err.msg);
  sp_module_free(m);
}
END_TEST

static Suite *placement_suite(void) {
  Suite *s = suite_create("placement");
  TCase *tc = tcase_create("rank mapping");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, rank_mapping_moves_the_heavier_axis_onto_nvlink);
  tcase_add_test(tc, rank_mapping_matches_the_mesh_laid_out_the_right_way_round);
  tcase_add_test(tc, placement_given_keeps_the_mesh_order);
  tcase_add_test(tc, a_mesh_with_device_ids_is_not_remapped);
  tcase_add_test(tc, axis_traffic_adds_up_the_collectives_of_each_axis);
  suite_add_tcase(s, tc);
  tc = tcase_create("mesh shapes");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, mesh_shape_search_plans_every_factorisation_and_keeps_the_cheapest);
  tcase_add_test(tc, mesh_shape_search_skips_shapes_whose_plans_do_not_fit);
  tcase_add_test(tc, no_shape_admitting_a_plan_names_every_reason);
  suite_add_tcase(s, tc);
  tc = tcase_create("pass");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, pass_reports_the_trials_in_text_and_json);
  tcase_add_test(tc, pass_rejects_bad_placement_options);
  tcase_add_test(tc, mesh_axes_give_a_mesh_to_a_module_without_one_and_search_its_shape);
  tcase_add_test(tc, mesh_axes_errors_leave_the_module_unchanged);
  tcase_add_test(tc, pass_writes_operand_layouts_as_reshards);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(placement_suite()); }
