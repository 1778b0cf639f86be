/*
 * test_provenance.c - where each axis came from (server/plan/provenance.h), on modules
 * planned by the engine.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan/provenance.h"
#include "cluster_support.h"
#include "test_support.h"

/* %arg0 carries "data" on its batch dimension and %arg1 "model" on its output dimension;
 * both travel through the add, the dot and the tanh to the result. */
static const char *CHAIN =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "func.func @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg2: tensor<64x128xf32>) -> tensor<64x256xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg2 : tensor<64x128xf32>\n"
    "  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>\n"
    "  %2 = stablehlo.tanh %1 : tensor<64x256xf32>\n"
    "  return %2 : tensor<64x256xf32>\n"
    "}\n";

static sp_plan *plan(const char *text) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  sp_plan_input in = {NULL, text, strlen(text), "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  ck_assert_msg(sp_plan_run(&in, NULL, &o, &p, &err) == SP_OK, "%s", err.msg);
  return p;
}

static int value_named(const sp_plan *p, const char *name) {
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].name && strcmp(p->values[i].name, name) == 0) return i;
  ck_abort_msg("no value %s", name);
  return -1;
}

static const cJSON *origin_of(const cJSON *all, int v, const char *axis) {
  const cJSON *o;
  cJSON_ArrayForEach(o, cJSON_GetArrayItem(all, v))
    if (strcmp(cJSON_GetObjectItem(o, "axis")->valuestring, axis) == 0) return o;
  return NULL;
}

/* The path of `axis` to value v, source first, following "prev" through the earlier values'
 * origins: ops[i] is the op crossed at step i and vals[i] the value it reached. Returns the
 * number of steps. */
static int walk_path(const sp_plan *p, const cJSON *all, int v, const char *axis,
                     const char **ops, const char **vals, int cap) {
  const char *rops[512], *rvals[512];
  int n = 0;
  const cJSON *o = origin_of(all, v, axis);
  const cJSON *prev;
  while (o && (prev = cJSON_GetObjectItem(o, "prev")) && n < 512) {
    rops[n] = cJSON_GetObjectItem(prev, "op_name")->valuestring;
    rvals[n] = p->values[v].name;
    n++;
    v = cJSON_GetObjectItem(prev, "value")->valueint;
    o = origin_of(all, v, axis);
  }
  ck_assert_int_le(n, cap);
  for (int i = 0; i < n; i++) {
    ops[i] = rops[n - 1 - i];
    vals[i] = rvals[n - 1 - i];
  }
  return n;
}

START_TEST(each_axis_is_traced_to_its_annotation_through_the_ops_it_crossed) {
  sp_plan *p = plan(CHAIN);
  cJSON *all = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  ck_assert_int_eq(cJSON_GetArraySize(all), p->nvalues);
  int v2 = value_named(p, "%2");
  const cJSON *data = origin_of(all, v2, "data"), *model = origin_of(all, v2, "model");
  ck_assert_ptr_nonnull(data);
  ck_assert_ptr_nonnull(model);
  ck_assert_str_eq(cJSON_GetObjectItem(data, "origin")->valuestring, "user annotation on %arg0");
  ck_assert_int_eq(cJSON_GetObjectItem(data, "dim")->valueint, 0);
  ck_assert_str_eq(cJSON_GetObjectItem(model, "origin")->valuestring, "user annotation on %arg1");
  ck_assert_int_eq(cJSON_GetObjectItem(model, "dim")->valueint, 1);
  /* "data": %arg0 -add-> %0 -dot-> %1 -tanh-> %2 */
  const char *ops[8], *vals[8];
  ck_assert_int_eq(walk_path(p, all, v2, "data", ops, vals, 8), 3);
  ck_assert_int_eq(cJSON_GetObjectItem(data, "hops")->valueint, 3);
  const char *want_ops[] = {"stablehlo.add", "stablehlo.dot_general", "stablehlo.tanh"};
  const char *want_vals[] = {"%0", "%1", "%2"};
  for (int i = 0; i < 3; i++) {
    ck_assert_str_eq(ops[i], want_ops[i]);
    ck_assert_str_eq(vals[i], want_vals[i]);
  }
  /* "model" skips the add: %arg1 -dot-> %1 -tanh-> %2 */
  ck_assert_int_eq(walk_path(p, all, v2, "model", ops, vals, 8), 2);
  ck_assert_str_eq(ops[0], "stablehlo.dot_general");
  /* %arg2 got "data" from %arg0 through the add (backwards along the add's factor) */
  const cJSON *a2 = origin_of(all, value_named(p, "%arg2"), "data");
  ck_assert_ptr_nonnull(a2);
  ck_assert_str_eq(cJSON_GetObjectItem(a2, "origin")->valuestring, "user annotation on %arg0");
  /* an annotated value's axis is its own */
  const cJSON *a0 = origin_of(all, value_named(p, "%arg0"), "data");
  ck_assert_str_eq(cJSON_GetObjectItem(a0, "origin")->valuestring, "this value's own annotation");
  ck_assert_ptr_null(cJSON_GetObjectItem(a0, "prev"));
  ck_assert_int_eq(cJSON_GetObjectItem(a0, "hops")->valueint, 0);
  cJSON_Delete(all);
  sp_plan_free(p);
}
END_TEST

static const char *str_of(const cJSON *o, const char *k) {
  const cJSON *x = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(x) ? x->valuestring : "-";
}

/* Shardy's own record of each axis sits next to the derived one, and says when they name the
 * same annotation. */
START_TEST(shardys_origin_sits_next_to_the_derived_one) {
  sp_plan *p = plan(CHAIN);
  cJSON *all = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  int v2 = value_named(p, "%2");
  const cJSON *data = origin_of(all, v2, "data"), *model = origin_of(all, v2, "model");
  ck_assert_str_eq(str_of(data, "shardy"), "input: 0");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(data, "agrees")));
  ck_assert_str_eq(str_of(model, "shardy"), "input: 1");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(model, "agrees")));
  const cJSON *a0 = origin_of(all, value_named(p, "%arg0"), "data");
  ck_assert_str_eq(str_of(a0, "shardy"), "self");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(a0, "agrees")));
  cJSON_Delete(all);
  sp_plan_free(p);

  /* An axis a constraint gave: Shardy names the constraint, which the plan's values do not
   * number, so nothing is claimed about agreement. */
  p = plan("sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
           "func.func @main(%arg0: tensor<64x128xf32>) -> tensor<64x128xf32> {\n"
           "  %0 = stablehlo.negate %arg0 : tensor<64x128xf32>\n"
           "  %1 = sdy.sharding_constraint %0 <@mesh, [{\"data\"}, {}]> : tensor<64x128xf32>\n"
           "  %2 = stablehlo.abs %1 : tensor<64x128xf32>\n"
           "  return %2 : tensor<64x128xf32>\n"
           "}\n");
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  const cJSON *d = origin_of(all, value_named(p, "%2"), "data");
  ck_assert_ptr_nonnull(d);
  ck_assert_str_eq(str_of(d, "shardy"), "constraint_0");
  ck_assert_ptr_null(cJSON_GetObjectItem(d, "agrees"));
  cJSON_Delete(all);
  sp_plan_free(p);
}
END_TEST

START_TEST(a_module_without_annotations_has_no_origins) {
  sp_plan *p = plan("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                    "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
                    "  return %0 : tensor<8xf32>\n}\n");
  cJSON *all = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  const cJSON *v;
  cJSON_ArrayForEach(v, all) ck_assert_int_eq(cJSON_GetArraySize(v), 0);
  cJSON_Delete(all);
  sp_plan_free(p);
}
END_TEST

START_TEST(a_deep_chain_keeps_one_step_per_value_and_the_whole_path) {
  /* 300 negates in a row after an annotated argument */
  size_t cap = 1 << 16;
  char *text = malloc(cap);
  int n = snprintf(text, cap,
                   "sdy.mesh @mesh = <[\"x\"=2]>\n"
                   "func.func @main(%%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n"
                   "  %%0 = stablehlo.negate %%arg0 : tensor<8xf32>\n");
  for (int i = 1; i < 300; i++)
    n += snprintf(text + n, cap - (size_t)n, "  %%%d = stablehlo.negate %%%d : tensor<8xf32>\n", i, i - 1);
  snprintf(text + n, cap - (size_t)n, "  return %%299 : tensor<8xf32>\n}\n");
  sp_plan *p = plan(text);
  free(text);
  cJSON *all = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  int last = value_named(p, "%299");
  const cJSON *o = origin_of(all, last, "x");
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "hops")->valueint, 300);
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "prev"), "name")->valuestring, "%298");
  const char *ops[512], *vals[512];
  ck_assert_int_eq(walk_path(p, all, last, "x", ops, vals, 512), 300);
  ck_assert_str_eq(vals[0], "%0");
  ck_assert_str_eq(vals[299], "%299");
  cJSON_Delete(all);
  sp_plan_free(p);
}
END_TEST

START_TEST(an_axis_the_search_added_is_said_to_be_the_searchs) {
  /* nothing annotated: after a search every axis is the search's choice */
  const char *text =
      "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
      "func.func @main(%arg0: tensor<64x512xf32>, %arg1: tensor<512x512xf32>) -> tensor<64x512xf32> {\n"
      "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>\n"
      "  return %0 : tensor<64x512xf32>\n}\n";
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE_SEARCH;
  o.time_limit = 10;
  sp_cluster *cl = sp_test_load_cluster("one_machine_8gpu.json");
  sp_plan_input in = {NULL, text, strlen(text), "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_msg(sp_plan_run(&in, cl, &o, &p, &err) == SP_OK, "%s", err.msg);
  cJSON *all = NULL;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  int axes = 0;
  const cJSON *v, *x;
  cJSON_ArrayForEach(v, all) cJSON_ArrayForEach(x, v) {
    ck_assert_str_eq(cJSON_GetObjectItem(x, "origin")->valuestring, "chosen by the cost search");
    axes++;
  }
  ck_assert_int_gt(axes, 0);   /* the search did shard something */
  cJSON_Delete(all);
  sp_plan_free(p);
  sp_cluster_free(cl);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("provenance");
  TCase *t = tcase_create("origins");
  tcase_add_test(t, each_axis_is_traced_to_its_annotation_through_the_ops_it_crossed);
  tcase_add_test(t, shardys_origin_sits_next_to_the_derived_one);
  tcase_add_test(t, a_module_without_annotations_has_no_origins);
  tcase_add_test(t, a_deep_chain_keeps_one_step_per_value_and_the_whole_path);
  tcase_add_test(t, an_axis_the_search_added_is_said_to_be_the_searchs);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sp_test_run(suite()); }
