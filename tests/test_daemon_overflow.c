/*
 * test_daemon_overflow.c - sizes that do not fit, through the real daemon: a tensor whose
 * element or byte count passes 2^63 (as MLIR text and as a structured graph), a pad whose
 * result size would, a value of unknown size given to the cost search, bytes per device and
 * costs beyond what the solver counts exactly (2^53). Each is answered with INVALID_ARGUMENT or
 * RESOURCE_EXHAUSTED and a message naming the value, never a wrapped number or a plan that
 * claims 0 bytes; Health answers after each. A request whose memory estimate passes
 * --max-request-memory-mb is RESOURCE_EXHAUSTED before any search starts, and the daemon goes
 * on serving.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_harness.h"
#include "gen/model_gen.h"
#include "graph/graph.h"
#include "mlir/mlir.h"
#include "shardplan/v1/planner.pb-c.h"
#include "test_support.h"

enum { OK = 0, INVALID = 3, EXHAUSTED = 8 };

#define PLAN "/shardplan.v1.Planner/Plan"

static th_daemon g_d;
static th_channel *g_ch;

static void start(void) {
  ck_assert(th_daemon_start(&g_d, NULL, NULL));
  g_ch = th_connect(g_d.addr, NULL);
}

static void stop(void) {
  th_close(g_ch);
  ck_assert_int_eq(th_daemon_stop(&g_d), 0);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_d.data_dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Plans `mlir` (or `graph`) with the search (or propagation only) on the bundled cluster or
 * `cluster_json`; checks the status and that the message contains `needle`. */
static void expect_mode(const char *mlir, Shardplan__V1__Graph *graph, const char *cluster_json,
                        bool search, int status, const char *needle) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster c = SHARDPLAN__V1__CLUSTER__INIT;
  if (graph) {
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED;
    r.structured = graph;
  } else {
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
    r.mlir = (char *)mlir;
  }
  o.mode = search ? SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH
                  : SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_PROPAGATE;
  o.time_limit_seconds = 10;
  r.options = &o;
  r.filename = (char *)"big.mlir";
  if (cluster_json) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_JSON;
    c.json = (char *)cluster_json;
    r.cluster = &c;
  }
  size_t len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *b = malloc(len + 1);
  shardplan__v1__plan_request__pack(&r, b);
  th_result res = th_call(g_ch, PLAN, b, len, 30000, NULL);
  free(b);
  ck_assert_msg(res.status == status, "status %d, expected %d: %s", res.status, status,
                res.details);
  ck_assert_msg(res.details && strstr(res.details, needle), "\"%s\" does not name \"%s\"",
                res.details, needle);
  th_result_free(&res);
  double ms;
  ck_assert(th_health_serving(g_ch, &ms));
}

static void expect(const char *mlir, Shardplan__V1__Graph *graph, const char *cluster_json,
                   int status, const char *needle) {
  expect_mode(mlir, graph, cluster_json, true, status, needle);
}

/* A module of one add over values of type `ty`, %arg0 sharded on "x" when `sharded`. */
static char *add_module(const char *ty) {
  char *t = malloc(1024);
  snprintf(t, 1024,
           "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
           "func.func @main(%%arg0: tensor<%s>, %%arg1: tensor<%s>) -> tensor<%s> {\n"
           "  %%0 = stablehlo.add %%arg0, %%arg1 : tensor<%s>\n"
           "  return %%0 : tensor<%s>\n"
           "}\n", ty, ty, ty, ty, ty);
  return t;
}

START_TEST(a_tensor_past_two_to_the_63_is_invalid_as_text_and_as_a_graph) {
  start();
  char *m = add_module("4611686018427387904x4xf32");
  expect(m, NULL, NULL, INVALID,
         "big.mlir:2:1: 'func.func' op arg 0 - tensor<4611686018427387904x4xf32> holds more "
         "than 2^63 elements or bytes");
  /* the same module as a structured graph (read, then verified like text) */
  sp_module *mod;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(m, strlen(m), "g.mlir", 1, &mod, &err), SP_OK);
  Shardplan__V1__Graph *g;
  sp_arena *a;
  ck_assert_int_eq(sp_graph_from_module(mod, &g, &a, &err), SP_OK);
  expect(NULL, g, NULL, INVALID, "graph: op 1 (func.func): block argument 0: dimension 0 has "
         "size 4611686018427387904, over the limit of 2^53");
  sp_arena_free(a);
  sp_module_free(mod);
  free(m);
  /* a byte count past 2^63 with an element count below it */
  m = add_module("2305843009213693952x2xf64");
  expect(m, NULL, NULL, INVALID, "tensor<2305843009213693952x2xf64> holds more than 2^63 "
         "elements or bytes");
  free(m);
  stop();
}
END_TEST

START_TEST(a_pad_whose_result_would_pass_two_to_the_63_is_invalid) {
  start();
  const char *pad =
      "func.func @main(%a: tensor<8xi8>) -> tensor<8xi8> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i8>\n"
      "  %0 = stablehlo.pad %a, %z, low = [9223372036854775800], high = [100], interior = [0]"
      " : (tensor<8xi8>, tensor<i8>) -> tensor<8xi8>\n"
      "  return %a : tensor<8xi8>\n"
      "}\n";
  expect(pad, NULL, NULL, INVALID, "big.mlir:3:8: 'stablehlo.pad' op the padded size of "
         "dimension 0 does not fit in 64 bits");
  stop();
}
END_TEST

START_TEST(a_value_of_unknown_size_is_refused_not_counted_as_zero_bytes) {
  start();
  /* refused by propagation before the search sees it (the search refuses it too:
   * test_plan_search.c) */
  char *m = add_module("?x16xf32");
  expect(m, NULL, NULL, INVALID, "big.mlir:3:8: Shardy propagation only supports ranked tensors "
         "with a static shape (result 0 of 'stablehlo.add')");
  free(m);
  stop();
}
END_TEST

START_TEST(bytes_and_costs_beyond_what_the_solver_counts_are_resource_exhausted) {
  start();
  /* 2^60 f32 elements: 2^62 bytes, 2^59 per device at most, past 2^53 */
  char *m = add_module("1152921504606846976xf32");
  expect(m, NULL, NULL, EXHAUSTED, "search: the bytes per device of %arg");
  free(m);
  /* a link whose latency is 1e300 s: a collective's cost (ns) is inf */
  char *json = sp_test_read_file(SP_SOURCE_DIR "/examples/clusters/one_machine_8gpu.json", NULL);
  ck_assert_ptr_nonnull(json);
  char *lat = strstr(json, "\"latency\":");
  ck_assert_ptr_nonnull(lat);
  char *end = lat + strlen("\"latency\":");
  while (*end == ' ') end++;
  size_t numlen = strspn(end, "0123456789.e-+");
  char *cluster = malloc(strlen(json) + 16);
  snprintf(cluster, strlen(json) + 16, "%.*s 1e300%s", (int)(end - json), json, end + numlen);
  const char *mm =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, "
      "{}]>}, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
      "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
      "(tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %0 : tensor<64x64xf32>\n"
      "}\n";
  expect(mm, NULL, cluster, EXHAUSTED, "(ns) of %0 is inf, beyond the 2^53 the solver counts "
         "exactly");
  free(cluster);
  free(json);
  stop();
}
END_TEST

/* With --max-request-memory-mb 16 (the least the daemon takes): planning a 4-layer GPT
 * training step (341 ops, 40 KB of text, 256 KiB of IR) with the search is estimated at about
 * 60 MiB (240 bytes per byte of IR), as MLIR text and as a structured graph, and refused
 * before any search runs; propagating it (11 bytes per IR byte) is not; a text too large even
 * to read within 16 MiB (16 bytes per input byte) is refused unread. */
START_TEST(a_request_over_the_memory_limit_is_exhausted_before_planning) {
  static const char *const flags[] = {"--max-request-memory-mb", "16", NULL};
  ck_assert(th_daemon_start(&g_d, NULL, flags));
  g_ch = th_connect(g_d.addr, NULL);
  sp_gen_options go;
  sp_gen_gpt_training_options(&go, 4);
  sp_strbuf text = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_int_eq(sp_gen_write(&go, &text, NULL, &err), SP_OK);
  const char *gpt = sp_strbuf_str(&text);
  static const char needle[] = "request: planning this graph with the search would need about ";
  static const char limit[] = "more than the request memory limit of 16 MiB "
                              "(--max-request-memory-mb)";
  expect(gpt, NULL, NULL, EXHAUSTED, needle);
  expect(gpt, NULL, NULL, EXHAUSTED, limit);
  sp_module *m = sp_test_parse(gpt);
  Shardplan__V1__Graph *g = NULL;
  sp_arena *ga = NULL;
  ck_assert_int_eq(sp_graph_from_module(m, &g, &ga, &err), SP_OK);
  expect(NULL, g, NULL, EXHAUSTED, needle);
  int64_t runs = -1, in_flight = -1, coalesced = -1;
  ck_assert(th_stats(g_ch, &runs, &in_flight, &coalesced));
  ck_assert_int_eq(runs, 0);   /* refused before planning: no planning job ever started */
  /* The daemon goes on serving: the same module propagated, as text and as a graph. */
  expect_mode(gpt, NULL, NULL, false, OK, "");
  expect_mode(NULL, g, NULL, false, OK, "");   /* the same key: answered from the cache */
  ck_assert(th_stats(g_ch, &runs, &in_flight, &coalesced));
  ck_assert_int_eq(runs, 1);
  /* 1.1 MB of text would need more than 16 MiB to read: refused before it is parsed. */
  size_t n = strlen(gpt), pad = 1100 * 1024;
  char *big = malloc(n + pad + 2);
  memcpy(big, gpt, n);
  big[n] = '\n';
  memset(big + n + 1, ' ', pad);
  big[n + 1 + pad] = '\0';
  expect_mode(big, NULL, NULL, false, EXHAUSTED, "request: reading the graph would need about");
  ck_assert(th_stats(g_ch, &runs, &in_flight, &coalesced));
  ck_assert_int_eq(runs, 1);
  free(big);
  sp_arena_free(ga);
  sp_module_free(m);
  sp_strbuf_free(&text);
  stop();
}
END_TEST

static Suite *overflow_suite(void) {
  Suite *s = suite_create("daemon_overflow");
  TCase *tc = tcase_create("overflow");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, a_tensor_past_two_to_the_63_is_invalid_as_text_and_as_a_graph);
  tcase_add_test(tc, a_pad_whose_result_would_pass_two_to_the_63_is_invalid);
  tcase_add_test(tc, a_value_of_unknown_size_is_refused_not_counted_as_zero_bytes);
  tcase_add_test(tc, bytes_and_costs_beyond_what_the_solver_counts_are_resource_exhausted);
  tcase_add_test(tc, a_request_over_the_memory_limit_is_exhausted_before_planning);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(overflow_suite()); }
