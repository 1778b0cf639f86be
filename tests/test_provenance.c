/*
 * test_provenance.c - where each axis came from (server/plan/provenance.h), on modules
 * planned by the engine.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"
#include "plan/provenance.h"
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
  const cJSON *path = cJSON_GetObjectItem(data, "path");
  ck_assert_int_eq(cJSON_GetArraySize(path), 3);
  const char *ops[] = {"stablehlo.add", "stablehlo.dot_general", "stablehlo.tanh"};
  const char *vals[] = {"%0", "%1", "%2"};
  for (int i = 0; i < 3; i++) {
    const cJSON *s = cJSON_GetArrayItem(path, i);
    ck_assert_str_eq(cJSON_GetObjectItem(s, "op_name")->valuestring, ops[i]);
    ck_assert_str_eq(cJSON_GetObjectItem(s, "name")->valuestring, vals[i]);
  }
  /* "model" skips the add: %arg1 -dot-> %1 -tanh-> %2 */
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(model, "path")), 2);
  /* %arg2 got "data" from %arg0 through the add (backwards along the add's factor) */
  const cJSON *a2 = origin_of(all, value_named(p, "%arg2"), "data");
  ck_assert_ptr_nonnull(a2);
  ck_assert_str_eq(cJSON_GetObjectItem(a2, "origin")->valuestring, "user annotation on %arg0");
  /* an annotated value's axis is its own */
  const cJSON *a0 = origin_of(all, value_named(p, "%arg0"), "data");
  ck_assert_str_eq(cJSON_GetObjectItem(a0, "origin")->valuestring, "this value's own annotation");
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a0, "path")), 0);
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

START_TEST(long_paths_keep_their_ends_and_count_the_elided_middle) {
  /* 60 negates in a row after an annotated argument */
  char text[16384];
  int n = snprintf(text, sizeof text,
                   "sdy.mesh @mesh = <[\"x\"=2]>\n"
                   "func.func @main(%%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n"
                   "  %%0 = stablehlo.negate %%arg0 : tensor<8xf32>\n");
  for (int i = 1; i < 60; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "  %%%d = stablehlo.negate %%%d : tensor<8xf32>\n", i, i - 1);
  snprintf(text + n, sizeof text - (size_t)n, "  return %%59 : tensor<8xf32>\n}\n");
  sp_plan *p = plan(text);
  cJSON *all = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_provenance(p, &all, &err), SP_OK);
  const cJSON *o = origin_of(all, value_named(p, "%59"), "x");
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "path")), SP_PROVENANCE_MAX_PATH);
  ck_assert_int_eq(cJSON_GetObjectItem(o, "elided")->valueint, 60 - SP_PROVENANCE_MAX_PATH);
  const cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "path"), SP_PROVENANCE_MAX_PATH - 1);
  ck_assert_str_eq(cJSON_GetObjectItem(last, "name")->valuestring, "%59");
  cJSON_Delete(all);
  sp_plan_free(p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("provenance");
  TCase *t = tcase_create("origins");
  tcase_add_test(t, each_axis_is_traced_to_its_annotation_through_the_ops_it_crossed);
  tcase_add_test(t, a_module_without_annotations_has_no_origins);
  tcase_add_test(t, long_paths_keep_their_ends_and_count_the_elided_middle);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sp_test_run(suite()); }
