/*
 * test_plan.c - the plan stage (plan/plan.h, plan/passes.h, plan/sharding_forms.h): one call
 * from MLIR text and a cluster to a plan whose module text equals what the passes print, whose
 * values are addressed by position with their sharding in four notations, whose costs,
 * collectives, solver statistics and mesh come from the search; the JSON round trip is
 * byte-identical; cancel, deadline and progress work; errors name the place.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "ir/strbuf.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "plan/passes.h"
#include "plan/plan.h"
#include "plan/sharding_forms.h"
#include "cluster_support.h"
#include "test_support.h"

static const char *const mlp =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<64x256xf32>, %arg2: tensor<256x64xf32>) -> tensor<16x64xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>\n"
    "  %1 = stablehlo.tanh %0 : tensor<16x256xf32>\n"
    "  %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>\n"
    "  return %2 : tensor<16x64xf32>\n"
    "}\n";

static sp_plan *run_plan(const char *text, const sp_cluster *c, const sp_plan_options *o) {
  sp_plan_input in = {.text = text, .len = strlen(text), .filename = "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_plan_run(&in, c, o, &p, &err);
  ck_assert_msg(rc == SP_OK, "sp_plan_run: %s", err.msg);
  return p;
}

/* What shardplan-opt prints for `text` after the given passes. */
static char *passes_print(const char *text, const char *const *flags, const sp_cluster *c) {
  sp_module *m = sp_test_parse(text);
  sp_err err;
  ck_assert_int_eq(sp_verify_module(m, &err), SP_OK);
  for (int i = 0; flags[i]; i += 2) {
    sp_pass_info p;
    ck_assert(sp_pass_find(flags[i], strlen(flags[i]), &p));
    sp_pass_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cluster = c;
    ck_assert_msg(sp_pass_run(&p, m, flags[i + 1], &ctx, &err) == SP_OK, "%s", err.msg);
  }
  char *s = sp_test_print(m);
  sp_module_free(m);
  return s;
}

static const sp_plan_value *find_value(const sp_plan *p, sp_plan_value_kind kind, int op, int index) {
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].pos.kind == kind && p->values[i].pos.op == op && p->values[i].pos.index == index)
      return &p->values[i];
  return NULL;
}

START_TEST(test_propagation_plan_module_is_the_pipeline_output) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  sp_plan *p = run_plan(mlp, NULL, &o);
  const char *flags[] = {"sdy-propagation-pipeline", NULL, NULL};
  char *want = passes_print(mlp, flags, NULL);
  ck_assert_str_eq(p->module, want);
  free(want);
  ck_assert(!p->searched);
  /* Arguments and the function result by position, op results by op number. */
  const sp_plan_value *a0 = find_value(p, SP_PLAN_ARG, -1, 0);
  ck_assert_ptr_nonnull(a0);
  ck_assert_str_eq(a0->name, "%arg0");
  ck_assert_str_eq(a0->type, "tensor<16x64xf32>");
  ck_assert(a0->sharded);
  ck_assert_str_eq(a0->mesh, "mesh");
  ck_assert_int_eq(a0->rank, 2);
  ck_assert_int_eq(a0->dims[0].naxes, 1);
  ck_assert_str_eq(a0->dims[0].axes[0], "data");
  ck_assert_str_eq(a0->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {}]>");
  ck_assert_str_eq(a0->pspec, "PartitionSpec('data', None)");
  ck_assert_str_eq(a0->gspmd, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  ck_assert_ptr_nonnull(find_value(p, SP_PLAN_FUNC_RESULT, -1, 0));
  /* Op 0 is the mesh, 1 the function, 2 the first dot_general. */
  const sp_plan_value *d0 = find_value(p, SP_PLAN_OP_RESULT, 2, 0);
  ck_assert_ptr_nonnull(d0);
  ck_assert_int_eq(d0->pos.func, 0);
  ck_assert_str_eq(d0->name, "%0");
  ck_assert(d0->sharded);
  ck_assert_str_eq(d0->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {}]>");
  /* Factor tables of the three ops with rules, before and after. */
  ck_assert_int_ge(p->nops, 3);
  ck_assert_int_eq(p->ops[0].op, 2);
  ck_assert_str_eq(p->ops[0].name, "stablehlo.dot_general");
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(p->ops[0].table, "after"));
  ck_assert(cJSON_IsArray(p->conflicts));
  sp_plan_free(p);
}
END_TEST

START_TEST(test_search_plan_matches_the_search_pass) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  sp_plan_options o;
  sp_plan_options_init(&o);
  sp_plan *p = run_plan(mlp, c, &o);
  const char *flags[] = {"sdy-propagation-pipeline", "keep-shardings-open=true",
                         "shardplan-search", "", "sdy-close-shardings", NULL, NULL};
  char *want = passes_print(mlp, flags, c);
  ck_assert_str_eq(p->module, want);
  free(want);
  ck_assert(p->searched);
  ck_assert_str_eq(p->solver.status, "optimal");
  ck_assert_int_eq(p->solver.cost, p->solver.bound);
  ck_assert(p->costs.total_s > 0);
  ck_assert(p->costs.total_s == p->costs.compute_s + p->costs.comm_s);
  ck_assert(p->costs.memory_limit_bytes > 0);
  ck_assert_str_eq(p->mesh.name, "mesh");
  ck_assert_int_eq(p->mesh.naxes, 2);
  ck_assert_int_eq(p->mesh.ndevices, 8);
  /* Every value planned; every collective addressed by position. */
  for (int i = 0; i < p->nvalues; i++) ck_assert_msg(p->values[i].sharded, "%s", p->values[i].name);
  for (int i = 0; i < p->ncollectives; i++) {
    const sp_plan_collective *k = &p->collectives[i];
    ck_assert(k->op >= 0);
    /* An all_slice is local: nothing moves; everything else sends something. */
    if (strcmp(k->kind, "all-slice") == 0) ck_assert(k->bytes == 0 && k->seconds == 0);
    else ck_assert(k->bytes > 0 && k->seconds > 0);
    ck_assert_ptr_nonnull(find_value(p, k->value.kind, k->value.op, k->value.index));
  }
  sp_plan_free(p);
  sp_cluster_free(c);
}
END_TEST

/* JAX lowers jax.nn.relu and nested jits to private functions called from @main. */
static const char *const calls =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "func.func @main(%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg2: tensor<128x16xf32>) -> tensor<32x16xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>\n"
    "  %1 = call @relu(%0) : (tensor<32x128xf32>) -> tensor<32x128xf32>\n"
    "  %2 = call @inner(%1, %arg2) : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>\n"
    "  return %2 : tensor<32x16xf32>\n"
    "}\n"
    "func.func private @relu(%arg0: tensor<32x128xf32>) -> tensor<32x128xf32> {\n"
    "  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
    "  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x128xf32>\n"
    "  %1 = stablehlo.maximum %arg0, %0 : tensor<32x128xf32>\n"
    "  return %1 : tensor<32x128xf32>\n"
    "}\n"
    "func.func private @inner(%arg0: tensor<32x128xf32>, %arg1: tensor<128x16xf32>) -> tensor<32x16xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>\n"
    "  %1 = stablehlo.tanh %0 : tensor<32x16xf32>\n"
    "  return %1 : tensor<32x16xf32>\n"
    "}\n";

START_TEST(test_search_plans_call_results_through_their_callees) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  sp_plan_options o;
  sp_plan_options_init(&o);
  sp_plan *p = run_plan(calls, c, &o);
  ck_assert(p->searched);
  /* The pipeline's import and export make the calls anew (numbered after the original ops), so
   * they are found by name in @main. Their results carry what propagation found through the
   * callees (batch on "data", relu's columns on "model" as the dot_general before it), not the
   * replicated layout of an op the search cannot see into. */
  const sp_plan_value *relu = NULL, *inner = NULL;
  for (int i = 0; i < p->nvalues; i++) {
    const sp_plan_value *v = &p->values[i];
    if (v->pos.kind != SP_PLAN_OP_RESULT || v->pos.func != 0) continue;
    if (strcmp(v->name, "%1") == 0) relu = v;
    if (strcmp(v->name, "%2") == 0) inner = v;
  }
  ck_assert_ptr_nonnull(relu);
  ck_assert_ptr_nonnull(inner);
  ck_assert_str_eq(relu->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>");
  ck_assert_str_eq(inner->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {}]>");
  /* Callee bodies are planned too, and every sharding of the plan is closed. */
  ck_assert_ptr_nonnull(strstr(p->module, "func.func private @inner(%arg0: tensor<32x128xf32> "
                                          "{sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, "
                                          "{\"model\"}]>}"));
  ck_assert_ptr_null(strstr(p->module, "?"));
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].pos.func == 0)
      ck_assert_msg(p->values[i].sharded, "%s", p->values[i].name);
  sp_plan_free(p);
  sp_cluster_free(c);
}
END_TEST

/* Every propagation strategy the API offers runs after the pipeline's import, so call results
 * carry what propagation found through the callees, with the search off and on (the bare
 * passes stopped at a call and left its results unplanned). */
static void expect_calls_planned(sp_plan *p, const char *how) {
  const sp_plan_value *relu = NULL, *inner = NULL;
  for (int i = 0; i < p->nvalues; i++) {
    const sp_plan_value *v = &p->values[i];
    if (v->pos.kind != SP_PLAN_OP_RESULT || v->pos.func != 0) continue;
    if (strcmp(v->name, "%1") == 0) relu = v;
    if (strcmp(v->name, "%2") == 0) inner = v;
  }
  ck_assert_msg(relu && inner, "%s: no call results in @main", how);
  ck_assert_msg(strcmp(relu->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>") == 0,
                "%s: relu's result %s", how, relu->sdy);
  ck_assert_msg(strcmp(inner->sdy, "#sdy.sharding<@mesh, [{\"data\"}, {}]>") == 0,
                "%s: inner's result %s", how, inner->sdy);
}

START_TEST(test_every_strategy_plans_call_results_after_the_import) {
  static const struct {
    sp_plan_strategy s;
    const char *name;
  } strategies[] = {{SP_PLAN_USER_PRIORITY, "user-priority"}, {SP_PLAN_OP_PRIORITY, "op-priority"},
                    {SP_PLAN_AGGRESSIVE, "aggressive"},       {SP_PLAN_BASIC, "basic"}};
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
    for (int search = 0; search < 2; search++) {
      sp_plan_options o;
      sp_plan_options_init(&o);
      o.strategy = strategies[k].s;
      o.mode = search ? SP_PLAN_PROPAGATE_SEARCH : SP_PLAN_PROPAGATE;
      sp_plan *p = run_plan(calls, search ? c : NULL, &o);
      char how[64];
      snprintf(how, sizeof how, "%s, search %s", strategies[k].name, search ? "on" : "off");
      expect_calls_planned(p, how);
      sp_plan_free(p);
    }
  }
  sp_cluster_free(c);
}
END_TEST

START_TEST(test_json_round_trip_is_byte_identical) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  sp_plan_options o;
  sp_plan_options_init(&o);
  sp_plan *p = run_plan(mlp, c, &o);
  char *a = sp_plan_to_json_text(p, true);
  ck_assert_ptr_nonnull(a);
  sp_plan *q = NULL;
  sp_err err;
  ck_assert_msg(sp_plan_from_json(a, strlen(a), &q, &err) == SP_OK, "%s", err.msg);
  char *b = sp_plan_to_json_text(q, true);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(q->nvalues, p->nvalues);
  ck_assert_str_eq(q->values[0].gspmd, p->values[0].gspmd);
  /* Shardy's origins travel too: %arg0's "data" is its own annotation. */
  ck_assert_int_eq(q->values[0].norigins, 1);
  ck_assert_str_eq(q->values[0].origins[0].axis, "data");
  ck_assert_str_eq(q->values[0].origins[0].origin, "self");
  /* Per-element JSON is the element of the whole document. */
  cJSON *whole = cJSON_Parse(a);
  cJSON *v0 = sp_plan_value_to_json(&p->values[0]);
  ck_assert(cJSON_Compare(v0, cJSON_GetArrayItem(cJSON_GetObjectItem(whole, "values"), 0), 1));
  ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(v0, "sharding_origins"), "data")),
                   "self");
  cJSON_Delete(v0);
  cJSON_Delete(whole);
  free(a);
  free(b);
  sp_plan_free(q);
  sp_plan_free(p);
  sp_cluster_free(c);
}
END_TEST

/* A constraint, a call (a named computation while propagating) and a result annotation. */
static const char *const traced =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}, %arg1: tensor<64x256xf32>, %arg2: tensor<256x64xf32>) -> (tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>\n"
    "  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {\"model\"}]> : tensor<16x256xf32>\n"
    "  %2 = call @act(%1) : (tensor<16x256xf32>) -> tensor<16x256xf32>\n"
    "  %3 = stablehlo.dot_general %2, %arg2, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>\n"
    "  return %3 : tensor<16x64xf32>\n"
    "}\n"
    "func.func private @act(%arg0: tensor<16x256xf32>) -> tensor<16x256xf32> {\n"
    "  %0 = stablehlo.tanh %arg0 : tensor<16x256xf32>\n"
    "  return %0 : tensor<16x256xf32>\n"
    "}\n";

static const sp_plan_value *named(const sp_plan *p, sp_plan_value_kind kind, int func,
                                  const char *name) {
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].pos.kind == kind && p->values[i].pos.func == func &&
        strcmp(p->values[i].name, name) == 0)
      return &p->values[i];
  ck_abort_msg("no value %s in function %d", name, func);
  return NULL;
}

/* The origin the plan gives `axis` of `v` ("-" when it has none). */
static const char *origin_of(const sp_plan_value *v, const char *axis) {
  for (int i = 0; i < v->norigins; i++)
    if (strcmp(v->origins[i].axis, axis) == 0) return v->origins[i].origin;
  return "-";
}

START_TEST(test_plan_keeps_shardy_sharding_origins_as_data) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  sp_plan *p = run_plan(traced, NULL, &o);
  /* As data only: the module text is the plain pipeline's, without debugging attributes. */
  const char *plain[] = {"sdy-propagation-pipeline", NULL, NULL};
  char *want = passes_print(traced, plain, NULL);
  ck_assert_str_eq(p->module, want);
  free(want);
  const sp_plan_value *arg0 = named(p, SP_PLAN_ARG, 0, "%arg0"), *arg1 = named(p, SP_PLAN_ARG, 0, "%arg1");
  ck_assert_str_eq(origin_of(arg0, "data"), "self");
  ck_assert_str_eq(origin_of(arg1, "model"), "constraint_0");
  const sp_plan_value *res = named(p, SP_PLAN_FUNC_RESULT, 0, "result 0");
  ck_assert_str_eq(origin_of(res, "data"), "input: 0");
  ck_assert_str_eq(origin_of(res, "model"), "self");
  const sp_plan_value *dot = named(p, SP_PLAN_OP_RESULT, 0, "%0");
  ck_assert_int_eq(dot->norigins, 2);
  ck_assert_str_eq(dot->origins[0].axis, "data");   /* sorted by axis, as Shardy's attribute */
  ck_assert_str_eq(dot->origins[0].origin, "input: 0");
  ck_assert_str_eq(dot->origins[1].origin, "constraint_0");
  /* The call was a named computation while propagating: its results' origins (on data-flow
   * edges then) and its body's argument (now @act's) are carried over. */
  ck_assert_str_eq(origin_of(named(p, SP_PLAN_OP_RESULT, 0, "%2"), "model"), "constraint_0");
  const sp_plan_value *act_arg = named(p, SP_PLAN_ARG, 1, "%arg0");
  ck_assert_str_eq(origin_of(act_arg, "data"), "input: 0");
  ck_assert_str_eq(origin_of(act_arg, "model"), "constraint_0");
  /* The same names Shardy prints with debug-sharding-origins. */
  const char *debug[] = {"sdy-propagation-pipeline", "debug-sharding-origins=true", NULL};
  char *printed = passes_print(traced, debug, NULL);
  ck_assert_ptr_nonnull(strstr(printed, "sdy.sharding_origins = [{data = \"input: 0\", model = \"constraint_0\"}]} : (tensor<16x64xf32>"));
  ck_assert_ptr_nonnull(strstr(printed, "sdy.sharding_origins = {data = \"input: 0\", model = \"self\"}}) {"));
  free(printed);
  sp_plan_free(p);

  o.no_origins = true;
  p = run_plan(traced, NULL, &o);
  for (int i = 0; i < p->nvalues; i++) ck_assert_int_eq(p->values[i].norigins, 0);
  char *json = sp_plan_to_json_text(p, false);
  ck_assert_ptr_null(strstr(json, "sharding_origins"));
  free(json);
  sp_plan_free(p);
}
END_TEST

/* A module handed in parsed goes back without the trace the plan made for itself. */
START_TEST(test_plan_leaves_no_trace_on_the_callers_module) {
  sp_module *m = sp_test_parse(traced);
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  sp_plan_input in = {.module = m, .filename = "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_msg(sp_plan_run(&in, NULL, &o, &p, &err) == SP_OK, "%s", err.msg);
  ck_assert_ptr_null(m->trace);
  ck_assert_str_eq(origin_of(named(p, SP_PLAN_ARG, 0, "%arg0"), "data"), "self");
  sp_plan_free(p);
  sp_module_free(m);
}
END_TEST

START_TEST(test_json_reader_names_the_bad_field) {
  sp_plan *q = NULL;
  sp_err err;
  const char *bad = "{\"version\": 1, \"file\": \"x\", \"module\": \"\", \"values\": [{\"pos\": 3}], "
                    "\"ops\": [], \"conflicts\": [], \"warnings\": [], \"search\": null}";
  ck_assert_int_eq(sp_plan_from_json(bad, strlen(bad), &q, &err), SP_EINVAL);
  ck_assert_ptr_null(q);
  ck_assert_msg(strstr(err.msg, "values: field \"pos\"") != NULL, "%s", err.msg);
  const char *no_ops = "{\"version\": 1, \"file\": \"x\", \"module\": \"\", \"values\": []}";
  ck_assert_int_eq(sp_plan_from_json(no_ops, strlen(no_ops), &q, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "\"ops\"") != NULL, "%s", err.msg);
  ck_assert_int_eq(sp_plan_from_json("{", 1, &q, &err), SP_EINVAL);
}
END_TEST

START_TEST(test_parse_error_names_the_place) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  const char *text = "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg9 : tensor<8xf32>\n}\n";
  sp_plan_input in = {.text = text, .len = strlen(text), .filename = "req.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_run(&in, NULL, &o, &p, &err), SP_EINVAL);
  ck_assert_ptr_null(p);
  ck_assert_msg(strncmp(err.msg, "req.mlir:2:", 11) == 0, "%s", err.msg);
  /* The place is data too. */
  ck_assert_str_eq(err.file, "req.mlir");
  ck_assert_int_eq(err.line, 2);
  ck_assert_int_gt(err.col, 0);
}
END_TEST

START_TEST(test_error_place_survives_a_prefix) {
  sp_err err;
  sp_err_set(&err, SP_EINVAL, "c.json:3:14: expected a number");
  sp_err_prefix(&err, "-shardplan-search");
  ck_assert_str_eq(err.msg, "-shardplan-search: c.json:3:14: expected a number");
  ck_assert_str_eq(err.file, "c.json");
  ck_assert_int_eq(err.line, 3);
  ck_assert_int_eq(err.col, 14);
  sp_err_set(&err, SP_EINVAL, "no place: 12 ops");
  ck_assert_int_eq(err.line, 0);
  ck_assert_str_eq(err.file, "");
}
END_TEST

START_TEST(test_search_without_cluster_is_rejected) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  sp_plan_input in = {.text = mlp, .len = strlen(mlp)};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_run(&in, NULL, &o, &p, &err), SP_EINVAL);
  ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_cancelled_request_times_out) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  atomic_int cancel = 1;
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.cancel = &cancel;
  sp_plan_input in = {.text = mlp, .len = strlen(mlp)};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_run(&in, c, &o, &p, &err), SP_ETIMEOUT);
  ck_assert_ptr_null(p);
  ck_assert_ptr_nonnull(strstr(err.msg, "cancelled"));
  /* A deadline already past: the same, naming the deadline. */
  atomic_store(&cancel, 0);
  o.deadline = sp_clock_now() - 1;
  ck_assert_int_eq(sp_plan_run(&in, c, &o, &p, &err), SP_ETIMEOUT);
  ck_assert_ptr_nonnull(strstr(err.msg, "deadline"));
  sp_cluster_free(c);
}
END_TEST

typedef struct seen {
  int propagation, search, plans;
} seen;

static void on_progress(void *ctx, const sp_progress *p) {
  seen *s = ctx;
  if (strcmp(p->stage, "propagation") == 0) {
    ck_assert_int_ge(p->round, 1);
    s->propagation++;
  } else {
    ck_assert_str_eq(p->stage, "search");
    ck_assert_ptr_nonnull(p->phase);
    s->search++;
    if (p->has_plan) s->plans++;
  }
}

START_TEST(test_progress_reports_rounds_and_incumbents) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  seen s = {0, 0, 0};
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.progress = on_progress;
  o.progress_ctx = &s;
  o.deadline = sp_clock_now() + 60;
  sp_plan *p = run_plan(mlp, c, &o);
  ck_assert_int_ge(s.propagation, 1);
  ck_assert_int_ge(s.search, 1);
  ck_assert_int_ge(s.plans, 1);
  sp_plan_free(p);
  sp_cluster_free(c);
}
END_TEST

START_TEST(test_op_without_rule_is_a_warning_not_a_failure) {
  const char *text =
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
      "  %0 = \"mhlo.mystery\"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  o.propagation = "sdy-basic-propagate";
  for (int round = 0; round < 2; round++) { /* once per request, not once per process */
    sp_plan *p = run_plan(text, NULL, &o);
    ck_assert_int_eq(p->nwarnings, 1);
    ck_assert_str_eq(p->warnings[0].severity, "warning");
    ck_assert_int_eq(p->warnings[0].line, 3);
    ck_assert_ptr_nonnull(strstr(p->warnings[0].message, "mhlo.mystery"));
    sp_plan_free(p);
  }
}
END_TEST

static void gspmd(const char *mesh_text, const char *sharding_text, int rank, const char *want) {
  char text[1024];
  snprintf(text, sizeof text,
           "sdy.mesh @m = %s\n"
           "func.func @main(%%arg0: tensor<%s8xf32> {sdy.sharding = #sdy.sharding<@m, %s>}) -> tensor<%s8xf32> {\n"
           "  return %%arg0 : tensor<%s8xf32>\n}\n",
           mesh_text, rank == 2 ? "8x" : "", sharding_text, rank == 2 ? "8x" : "", rank == 2 ? "8x" : "");
  sp_module *m = sp_test_parse(text);
  sp_value *v = sp_module_lookup_func(m, "main")->regions[0].blocks[0]->args[0];
  sp_strbuf sb = SP_STRBUF_INIT;
  ck_assert_int_eq(sp_plan_gspmd(&sb, v->sharding, sp_module_sharding_mesh(m, v->sharding)), SP_OK);
  ck_assert_str_eq(sp_strbuf_str(&sb), want);
  sp_strbuf_free(&sb);
  sp_module_free(m);
}

START_TEST(test_gspmd_forms_follow_xla) {
  gspmd("<[\"x\"=2, \"y\"=4]>", "[{\"y\"}, {\"x\"}]", 2, "{devices=[4,2]<=[2,4]T(1,0)}");
  gspmd("<[\"x\"=2, \"y\"=4]>", "[{\"x\"}, {\"y\"}]", 2, "{devices=[2,4]<=[8]}");
  gspmd("<[\"x\"=2, \"y\"=4]>", "[{}, {\"y\"}]", 2, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  gspmd("<[\"x\"=2, \"y\"=4]>", "[{}, {}]", 2, "{replicated}");
  gspmd("<[\"x\"=8]>", "[{\"x\":(2)4}]", 1, "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  gspmd("<[\"x\"=2, \"y\"=2], device_ids=[3, 2, 1, 0]>", "[{\"y\"}, {\"x\"}]", 2, "{devices=[2,2]3,1,2,0}");
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_plan_pspec(&sb, NULL);
  ck_assert_str_eq(sp_strbuf_str(&sb), "PartitionSpec()");
  sp_strbuf_free(&sb);
}
END_TEST

START_TEST(test_registry_lists_every_pass_once) {
  int n = 0;
  sp_pass_info p, q;
  for (; sp_pass_at(n, &p); n++) {
    ck_assert_msg((p.run != NULL) != (p.run_ctx != NULL), "%s", p.flag);
    ck_assert(sp_pass_find(p.flag, strlen(p.flag), &q));
    ck_assert_str_eq(q.flag, p.flag);
    ck_assert_ptr_eq(q.run, p.run);
    ck_assert(p.help && *p.help);
    for (int k = 0; k < n; k++) { /* each flag once */
      sp_pass_info e;
      ck_assert(sp_pass_at(k, &e));
      ck_assert_str_ne(e.flag, p.flag);
    }
  }
  ck_assert_int_ge(n, 20); /* propagation, search and export passes */
  ck_assert(!sp_pass_find("sdy-basic", 9, &p));
  ck_assert(sp_pass_find("sdy-close-shardings", 19, &p));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_propagation_plan_module_is_the_pipeline_output);
  tcase_add_test(tc, test_search_plan_matches_the_search_pass);
  tcase_add_test(tc, test_search_plans_call_results_through_their_callees);
  tcase_add_test(tc, test_every_strategy_plans_call_results_after_the_import);
  tcase_add_test(tc, test_json_round_trip_is_byte_identical);
  tcase_add_test(tc, test_json_reader_names_the_bad_field);
  tcase_add_test(tc, test_plan_keeps_shardy_sharding_origins_as_data);
  tcase_add_test(tc, test_plan_leaves_no_trace_on_the_callers_module);
  tcase_add_test(tc, test_parse_error_names_the_place);
  tcase_add_test(tc, test_search_without_cluster_is_rejected);
  tcase_add_test(tc, test_error_place_survives_a_prefix);
  tcase_add_test(tc, test_cancelled_request_times_out);
  tcase_add_test(tc, test_progress_reports_rounds_and_incumbents);
  tcase_add_test(tc, test_op_without_rule_is_a_warning_not_a_failure);
  tcase_add_test(tc, test_gspmd_forms_follow_xla);
  tcase_add_test(tc, test_registry_lists_every_pass_once);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
