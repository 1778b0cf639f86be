/*
 * test_daemon_errors.c - a catalogue of bad requests against the real daemon, each answered
 * with the right gRPC status and a message naming the problem, with Health checked after each
 * (the daemon keeps serving); then a TLS call, a token-protected daemon (missing and wrong
 * tokens refused, the right one accepted, Health open), and a clean exit on SIGTERM. Also the
 * valid edge cases next to the bad ones: zero-size dimensions are planned, and an op with no
 * sharding rule is planned with a warning in the response.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "graph/graph.h"
#include "grpc/health/v1/health.pb-c.h"
#include "mlir/mlir.h"
#include "shardplan/v1/planner.pb-c.h"
#include "test_support.h"

enum { OK = 0, CANCELLED = 1, INVALID = 3, DEADLINE = 4, NOT_FOUND = 5, EXHAUSTED = 8,
       FAILED_PRECONDITION = 9, UNIMPLEMENTED = 12, UNAVAILABLE = 14, UNAUTHENTICATED = 16 };

#define PLAN "/shardplan.v1.Planner/Plan"

static const char *SMALL =
    "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
    "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>})"
    " -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>\n"
    "  return %0 : tensor<8x16xf32>\n"
    "}\n";

/* A request in bytes: MLIR text or a structured graph, with options. */
typedef struct rq {
  const char *mlir;
  Shardplan__V1__Graph *graph;
  int mode;
  double gap, time_limit;
  int strategy, detail;
  const char *mesh;
  const char *example, *cluster_json;
  Shardplan__V1__ClusterSpec *spec;
  bool no_graph;
} rq;

static uint8_t *pack(rq q, size_t *len) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster c = SHARDPLAN__V1__CLUSTER__INIT;
  if (q.graph) {
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED;
    r.structured = q.graph;
  } else if (!q.no_graph) {
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
    r.mlir = (char *)(q.mlir ? q.mlir : SMALL);
  }
  o.mode = (Shardplan__V1__PlanMode)q.mode;
  o.gap = q.gap;
  o.time_limit_seconds = q.time_limit;
  o.strategy = (Shardplan__V1__PropagationStrategy)q.strategy;
  o.mesh = (char *)(q.mesh ? q.mesh : "");
  r.options = &o;
  r.detail = (Shardplan__V1__Detail)q.detail;
  if (q.example) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
    c.example = (char *)q.example;
    r.cluster = &c;
  } else if (q.cluster_json) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_JSON;
    c.json = (char *)q.cluster_json;
    r.cluster = &c;
  } else if (q.spec) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_SPEC;
    c.spec = q.spec;
    r.cluster = &c;
  }
  *len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *b = malloc(*len + 1);
  shardplan__v1__plan_request__pack(&r, b);
  return b;
}

/* The SMALL module as a structured graph (arena returned for freeing). */
static Shardplan__V1__Graph *small_graph(sp_arena **a, sp_module **m) {
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(SMALL, strlen(SMALL), "s.mlir", 1, m, &err), SP_OK);
  Shardplan__V1__Graph *g;
  ck_assert_int_eq(sp_graph_from_module(*m, &g, a, &err), SP_OK);
  return g;
}

/* The func's body block in the graph. */
static Shardplan__V1__Block *body(Shardplan__V1__Graph *g) {
  for (size_t i = 0; i < g->n_ops; i++)
    if (!strcmp(g->ops[i]->name, "func.func")) return g->ops[i]->regions[0]->blocks[0];
  return NULL;
}

static int ncases;

static void expect(th_channel *c, const char *what, const char *method, const uint8_t *req,
                   size_t len, int timeout_ms, const char *token, int status, const char *needle) {
  th_result r = th_call(c, method, req, len, timeout_ms, token);
  ck_assert_msg(r.status == status, "%s: status %d (want %d): %s", what, r.status, status,
                r.details);
  ck_assert_msg(strstr(r.details, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
                r.details, needle);
  printf("  %-44s %-3d %.150s\n", what, r.status, r.details);
  th_result_free(&r);
  double ms;
  ck_assert_msg(th_health_serving(c, &ms), "%s: Health failed afterwards", what);
  ncases++;
}

static void expect_plan(th_channel *c, const char *what, rq q, int status, const char *needle) {
  size_t len;
  uint8_t *b = pack(q, &len);
  expect(c, what, PLAN, b, len, 60000, NULL, status, needle);
  free(b);
}

START_TEST(a_catalogue_of_bad_requests_gets_the_right_statuses_and_the_daemon_keeps_serving) {
  const char *extra[] = {"--max-message-mb", "1", NULL};
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, extra));
  th_channel *c = th_connect(d.addr, NULL);
  printf("test_daemon_errors: the catalogue (case, status, message):\n");

  /* Wire format. */
  size_t len;
  uint8_t *good = pack((rq){0}, &len);
  expect(c, "truncated protobuf", PLAN, good, len / 2, 10000, NULL, INVALID,
         "not a shardplan.v1.PlanRequest");
  uint8_t junk[64];
  memset(junk, 0xff, sizeof junk);
  expect(c, "garbage bytes", PLAN, junk, sizeof junk, 10000, NULL, INVALID,
         "not a shardplan.v1.PlanRequest");
  expect(c, "stream: garbage bytes", "/shardplan.v1.Planner/PlanStream", junk, sizeof junk,
         10000, NULL, INVALID, "not a shardplan.v1.PlanRequest");
  expect_plan(c, "no graph", (rq){.no_graph = true}, INVALID, "no graph");
  /* Over --max-message-mb (1 MiB). */
  char *huge = malloc(2 << 20);
  memset(huge, ' ', 2 << 20);
  memcpy(huge, SMALL, strlen(SMALL));
  huge[(2 << 20) - 1] = '\0';
  expect_plan(c, "request over the size limit", (rq){.mlir = huge}, EXHAUSTED, "larger than max");
  free(huge);

  /* MLIR text. */
  expect_plan(c, "MLIR syntax error", (rq){.mlir = "func.func @main( {\n"}, INVALID,
              "request.mlir:1:");
  expect_plan(c, "empty module", (rq){.mlir = "\n"}, INVALID, "empty");
  expect_plan(c, "undefined value (MLIR)",
              (rq){.mlir = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                           "  %0 = stablehlo.add %a, %nope : tensor<4xf32>\n"
                           "  return %0 : tensor<4xf32>\n}\n"},
              INVALID, "request.mlir:2:");
  expect_plan(c, "axis not in the mesh",
              (rq){.mlir = "sdy.mesh @mesh = <[\"x\"=2]>\n"
                           "func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh,"
                           " [{\"zz\"}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"},
              INVALID, "zz");
  expect_plan(c, "sharding rank mismatch",
              (rq){.mlir = "sdy.mesh @mesh = <[\"x\"=2]>\n"
                           "func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh,"
                           " [{\"x\"}, {}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"},
              INVALID, "rank");
  expect_plan(c, "zero-size mesh axis",
              (rq){.mlir = "sdy.mesh @mesh = <[\"x\"=0]>\n"
                           "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                           "  return %a : tensor<4xf32>\n}\n"},
              INVALID, "request.mlir:1:");
  expect_plan(c, "unknown mesh",
              (rq){.mlir = "func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nomesh,"
                           " [{\"x\"}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"},
              INVALID, "nomesh");
  expect_plan(c, "negative dimension (MLIR)",
              (rq){.mlir = "func.func @main(%a: tensor<-4xf32>) -> tensor<-4xf32> {\n"
                           "  return %a : tensor<-4xf32>\n}\n"},
              INVALID, "request.mlir:1:");

  /* Structured graphs. */
  sp_arena *ga;
  sp_module *gm;
  Shardplan__V1__Graph *g = small_graph(&ga, &gm);
  Shardplan__V1__Block *b = body(g);
  uint64_t saved = b->ops[0]->operands[1];
  b->ops[0]->operands[1] = 424242;
  expect_plan(c, "dangling value (graph)", (rq){.graph = g}, INVALID, "value 424242 is not defined");
  b->ops[0]->operands[1] = b->ops[0]->results[0]->id;
  expect_plan(c, "cycle (graph)", (rq){.graph = g}, INVALID, "a dangling id, or a cycle");
  b->ops[0]->operands[1] = saved;
  Shardplan__V1__Type *t = b->ops[0]->results[0]->type;
  int64_t d0 = t->shape[0];
  t->shape[0] = -8;
  expect_plan(c, "negative dimension (graph)", (rq){.graph = g}, INVALID, "negative size -8");
  t->shape[0] = (int64_t)1 << 62;
  expect_plan(c, "huge dimension (graph)", (rq){.graph = g}, INVALID, "over the limit");
  t->shape[0] = d0;
  uint64_t rid = b->ops[0]->results[0]->id;
  b->ops[0]->results[0]->id = b->arguments[0]->id;
  expect_plan(c, "duplicate value id (graph)", (rq){.graph = g}, INVALID, "defined twice");
  b->ops[0]->results[0]->id = rid;
  char *oname = b->ops[0]->name;
  b->ops[0]->name = "add";
  expect_plan(c, "op name without dialect (graph)", (rq){.graph = g}, INVALID, "dialect.op");
  b->ops[0]->name = oname;
  /* Zero-size axis in the graph's mesh op. */
  Shardplan__V1__Mesh *mesh = NULL;
  for (size_t i = 0; i < g->ops[0]->n_attributes; i++)
    if (g->ops[0]->attributes[i]->value_case == SHARDPLAN__V1__ATTRIBUTE__VALUE_MESH)
      mesh = g->ops[0]->attributes[i]->mesh;
  ck_assert_ptr_nonnull(mesh);
  mesh->axes[0]->size = 0;
  expect_plan(c, "zero-size mesh axis (graph)", (rq){.graph = g}, INVALID, "has size 0");
  mesh->axes[0]->size = 2;
  b->ops[0]->einsum_rule = "i j k -> i";
  expect_plan(c, "malformed explicit rule (graph)", (rq){.graph = g}, INVALID, "einsum_rule");
  b->ops[0]->einsum_rule = "";
  /* The untouched graph is fine (control). */
  size_t glen;
  uint8_t *gb = pack((rq){.graph = g}, &glen);
  th_result ok = th_call(c, PLAN, gb, glen, 30000, NULL);
  ck_assert_msg(ok.status == OK, "control graph: %s", ok.details);
  th_result_free(&ok);
  free(gb);

  /* Clusters and options. */
  expect_plan(c, "unknown example cluster", (rq){.mode = 1, .example = "nope"}, INVALID,
              "no bundled example named \"nope\"");
  expect_plan(c, "cluster JSON does not parse", (rq){.mode = 1, .cluster_json = "{"}, INVALID,
              "cluster");
  Shardplan__V1__ClusterSpec spec = SHARDPLAN__V1__CLUSTER_SPEC__INIT;
  Shardplan__V1__Machine m = SHARDPLAN__V1__MACHINE__INIT, *ms[1] = {&m};
  m.name = "n0";
  m.device_type = "missing-type";
  m.num_devices = 8;
  spec.n_machines = 1;
  spec.machines = ms;
  expect_plan(c, "cluster names an unknown device type", (rq){.mode = 1, .spec = &spec},
              INVALID, "cluster");
  expect_plan(c, "mesh larger than the cluster (no valid plan)",
              (rq){.mode = 1, .example = "one_machine_8gpu",
                   .mlir = "sdy.mesh @mesh = <[\"x\"=64]>\n"
                           "func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {\n"
                           "  return %a : tensor<64xf32>\n}\n"},
              FAILED_PRECONDITION, "no valid plan: mesh has 64 devices, the cluster only 8");
  expect_plan(c, "gap out of range", (rq){.mode = 1, .gap = 2}, INVALID, "gap must be in [0, 1)");
  expect_plan(c, "negative time limit", (rq){.mode = 1, .time_limit = -1}, INVALID,
              "time_limit_seconds");
  expect_plan(c, "unknown mode", (rq){.mode = 7}, INVALID, "unknown mode 7");
  expect_plan(c, "unknown strategy", (rq){.strategy = 9}, INVALID, "strategy 9");
  expect_plan(c, "unknown detail", (rq){.detail = 5}, INVALID, "unknown detail 5");
  expect_plan(c, "mesh option is not a name", (rq){.mode = 1, .mesh = "a b=1"}, INVALID,
              "not a plain name");

  /* A large search with a 1 ms deadline. */
  char cmd[512], path[128];
  snprintf(path, sizeof path, "/tmp/sp-errors-gpt-%d.mlir", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s/shardplan-gen --model gpt --layers 8 --backward -o %s",
           SP_BIN_DIR, path);
  ck_assert_int_eq(system(cmd), 0);
  size_t tl;
  char *gpt = sp_test_read_file(path, &tl);
  unlink(path);
  size_t blen;
  uint8_t *big = pack((rq){.mlir = gpt, .mode = 1, .example = "one_machine_8gpu"}, &blen);
  expect(c, "1 ms deadline on a large search", PLAN, big, blen, 1, NULL, DEADLINE, "");
  /* A deadline shorter than answering a plan of this module takes (its margin, here about
   * 540 ms): the daemon says so at once, unless the machine is so slow that the call's own
   * deadline passes first. */
  th_result r = th_call(c, PLAN, big, blen, 400, NULL);
  ck_assert_int_eq(r.status, DEADLINE);
  ck_assert_msg(strstr(r.details, "no plan could be answered by the deadline") || r.ms >= 390,
                "%s after %.0f ms", r.details, r.ms);
  printf("  %-44s %-3d %.150s\n", "a deadline shorter than the answer takes", r.status,
         r.details);
  th_result_free(&r);
  ncases++;
  free(big);
  free(gpt);

  /* Methods and the other calls. */
  expect(c, "unknown method", "/shardplan.v1.Planner/Nope", (const uint8_t *)"", 0, 10000, NULL,
         UNIMPLEMENTED, "unknown method /shardplan.v1.Planner/Nope");
  expect(c, "unknown service", "/foo.Bar/Baz", (const uint8_t *)"", 0, 10000, NULL,
         UNIMPLEMENTED, "unknown method /foo.Bar/Baz");
  expect(c, "health Watch", "/grpc.health.v1.Health/Watch", (const uint8_t *)"", 0, 10000, NULL,
         UNIMPLEMENTED, "unknown method");
  Grpc__Health__V1__HealthCheckRequest hr = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  hr.service = "no.Such";
  uint8_t hb[64];
  size_t hn = grpc__health__v1__health_check_request__pack(&hr, hb);
  expect(c, "health check of an unknown service", "/grpc.health.v1.Health/Check", hb, hn, 10000,
         NULL, NOT_FOUND, "unknown service \"no.Such\"");
  Shardplan__V1__GetPlanRequest gp = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  gp.key = "xyz";
  uint8_t kb[256];
  size_t kn = shardplan__v1__get_plan_request__pack(&gp, kb);
  expect(c, "GetPlan with a malformed key", "/shardplan.v1.Planner/GetPlan", kb, kn, 10000, NULL,
         INVALID, "64 hex digits");
  gp.key = "0000000000000000000000000000000000000000000000000000000000000000";
  kn = shardplan__v1__get_plan_request__pack(&gp, kb);
  expect(c, "GetPlan of an unknown key", "/shardplan.v1.Planner/GetPlan", kb, kn, 10000, NULL,
         NOT_FOUND, "no plan with this key");
  Shardplan__V1__DeletePlanRequest dp = SHARDPLAN__V1__DELETE_PLAN_REQUEST__INIT;
  dp.key = gp.key;
  kn = shardplan__v1__delete_plan_request__pack(&dp, kb);
  expect(c, "DeletePlan of an unknown key", "/shardplan.v1.Planner/DeletePlan", kb, kn, 10000,
         NULL, NOT_FOUND, "no plan with this key");
  Shardplan__V1__ListPlansRequest lp = SHARDPLAN__V1__LIST_PLANS_REQUEST__INIT;
  lp.page_token = "abc";
  kn = shardplan__v1__list_plans_request__pack(&lp, kb);
  expect(c, "ListPlans with a bad page token", "/shardplan.v1.Planner/ListPlans", kb, kn, 10000,
         NULL, INVALID, "page_token");
  expect(c, "Purge with nothing to purge", "/shardplan.v1.Planner/Purge", (const uint8_t *)"", 0,
         10000, NULL, INVALID, "older_than_version or all");
  expect(c, "GetPlan with garbage bytes", "/shardplan.v1.Planner/GetPlan", junk, sizeof junk,
         10000, NULL, INVALID, "GetPlanRequest");

  printf("test_daemon_errors: %d bad requests, each answered, Health after each\n", ncases);
  ck_assert_int_ge(ncases, 30);
  free(good);
  sp_arena_free(ga);
  sp_module_free(gm);
  th_close(c);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

/* ------------------------------------------------------------------ valid edge cases */

/* Plans `mlir` (mode 0: propagation, 1: with the search on the one-machine example) and
 * returns the answer, asserting it is OK. */
static Shardplan__V1__PlanResponse *plan_ok(th_channel *c, const char *what, const char *mlir,
                                            int mode) {
  size_t len;
  uint8_t *b = pack((rq){.mlir = mlir, .mode = mode,
                         .example = mode ? "one_machine_8gpu" : NULL}, &len);
  th_result r = th_call(c, PLAN, b, len, 60000, NULL);
  free(b);
  ck_assert_msg(r.status == OK, "%s (mode %d): status %d: %s", what, mode, r.status, r.details);
  Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
  ck_assert_ptr_nonnull(p);
  th_result_free(&r);
  double ms;
  ck_assert_msg(th_health_serving(c, &ms), "%s: Health failed afterwards", what);
  return p;
}

/* The value answered for argument `index` of the main function, or NULL. */
static const Shardplan__V1__ValueSharding *arg_value(const Shardplan__V1__PlanResponse *p,
                                                     uint32_t index) {
  for (size_t i = 0; i < p->plan->n_values; i++) {
    const Shardplan__V1__ValueSharding *v = p->plan->values[i];
    if (v->address && v->address->kind == SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT &&
        v->address->index == index)
      return v;
  }
  return NULL;
}

START_TEST(a_zero_size_dimension_and_an_op_without_a_rule_are_planned) {
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  th_channel *c = th_connect(d.addr, NULL);
  /* Zero-size dimensions are valid (zero-size mesh axes are not, see the catalogue). */
  static const char *zero =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @main(%arg0: tensor<0x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"y\"}]>},"
      " %arg1: tensor<8x0xf32>) -> (tensor<0x16xf32>, tensor<8x0xf32>) {\n"
      "  %0 = stablehlo.add %arg0, %arg0 : tensor<0x16xf32>\n"
      "  %1 = stablehlo.multiply %arg1, %arg1 : tensor<8x0xf32>\n"
      "  return %0, %1 : tensor<0x16xf32>, tensor<8x0xf32>\n"
      "}\n";
  /* A custom call Shardy has no rule for: planned the conservative way, with a warning. */
  static const char *norule =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>})"
      " -> tensor<8x16xf32> {\n"
      "  %0 = stablehlo.custom_call @mystery(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  %1 = stablehlo.add %0, %arg0 : tensor<8x16xf32>\n"
      "  return %1 : tensor<8x16xf32>\n"
      "}\n";
  for (int mode = 0; mode < 2; mode++) {
    Shardplan__V1__PlanResponse *p = plan_ok(c, "zero-size dimensions", zero, mode);
    ck_assert_int_eq(p->status, mode ? SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL
                                     : SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED);
    const Shardplan__V1__ValueSharding *a0 = arg_value(p, 0);
    ck_assert_ptr_nonnull(a0);
    ck_assert_msg(strstr(a0->sdy, "[{}, {\"y\"}]"), "%s", a0->sdy);   /* as given: closed */
    ck_assert_ptr_nonnull(arg_value(p, 1));
    printf("test_daemon_errors: zero-size dimensions (%s): %%arg0 %s\n",
           mode ? "search" : "propagation", a0->sdy);
    shardplan__v1__plan_response__free_unpacked(p, NULL);

    p = plan_ok(c, "an op without a sharding rule", norule, mode);
    ck_assert_int_ne(p->status, SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_UNSPECIFIED);
    ck_assert_uint_ge(p->n_warnings, 1);
    ck_assert_msg(strstr(p->warnings[0], "custom call @mystery is unknown to SDY sharding rule "
                         "registry"), "%s", p->warnings[0]);
    ck_assert_uint_ge(p->plan->n_values, 3);
    printf("test_daemon_errors: no rule (%s): warning \"%s\"\n", mode ? "search" : "propagation",
           p->warnings[0]);
    shardplan__v1__plan_response__free_unpacked(p, NULL);
  }
  th_close(c);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

/* ------------------------------------------------------------------ TLS and token */

START_TEST(a_tls_call_and_a_token_protected_call_succeed) {
  char dir[] = "/tmp/sp-tls-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
           "-addext subjectAltName=DNS:localhost -keyout %s/key.pem -out %s/cert.pem "
           ">/dev/null 2>&1", dir, dir);
  ck_assert_int_eq(system(cmd), 0);
  char cert[300], key[300], tok[300];
  snprintf(cert, sizeof cert, "%s/cert.pem", dir);
  snprintf(key, sizeof key, "%s/key.pem", dir);
  snprintf(tok, sizeof tok, "%s/token", dir);
  FILE *f = fopen(tok, "w");
  fputs("s3cret-token\n", f);
  fclose(f);
  size_t certlen;
  char *pem = sp_test_read_file(cert, &certlen);
  size_t len;
  uint8_t *req = pack((rq){0}, &len);

  /* TLS only. */
  const char *tls[] = {"--tls-cert", cert, "--tls-key", key, NULL};
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, tls));
  th_channel *c = th_connect(d.addr, pem);
  th_result r = th_call(c, PLAN, req, len, 30000, NULL);
  ck_assert_msg(r.status == OK, "TLS Plan: %d %s", r.status, r.details);
  th_result_free(&r);
  th_close(c);
  th_channel *plain = th_connect(d.addr, NULL);   /* plaintext to a TLS port fails */
  r = th_call(plain, PLAN, req, len, 3000, NULL);
  ck_assert_int_ne(r.status, OK);
  th_result_free(&r);
  th_close(plain);
  ck_assert_int_eq(th_daemon_stop(&d), 0);

  /* Token over loopback. */
  const char *token[] = {"--token-file", tok, NULL};
  ck_assert(th_daemon_start(&d, NULL, token));
  c = th_connect(d.addr, NULL);
  expect(c, "missing token", PLAN, req, len, 10000, NULL, UNAUTHENTICATED, "bearer token");
  expect(c, "wrong token", PLAN, req, len, 10000, "guess", UNAUTHENTICATED, "bearer token");
  expect(c, "GetStats without a token", "/shardplan.v1.Planner/GetStats", (const uint8_t *)"", 0,
         10000, NULL, UNAUTHENTICATED, "bearer token");
  r = th_call(c, PLAN, req, len, 30000, "s3cret-token");
  ck_assert_msg(r.status == OK, "token Plan: %d %s", r.status, r.details);
  th_result_free(&r);
  th_close(c);
  ck_assert_int_eq(th_daemon_stop(&d), 0);

  /* A token on a non-loopback address without TLS is refused at start. */
  snprintf(cmd, sizeof cmd, "%s/shardpland --grpc-listen 0.0.0.0:0 --http-listen off "
           "--data-dir %s/x --token-file %s >/dev/null 2>&1", SP_BIN_DIR, dir, tok);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
  free(pem);
  free(req);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(flags_come_from_the_environment_and_bad_ones_exit_2) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "SHARDPLAN_MAX_SEARCHES=zero %s/shardpland --http-listen off "
           ">/dev/null 2>&1", SP_BIN_DIR);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
  snprintf(cmd, sizeof cmd, "%s/shardpland --no-such-flag >/dev/null 2>&1", SP_BIN_DIR);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
  snprintf(cmd, sizeof cmd, "%s/shardpland --version | grep -q 'shardpland 0'", SP_BIN_DIR);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 0);
  /* The environment sets the listen address; the daemon prints the port it got. */
  setenv("SHARDPLAN_LOG_LEVEL", "debug", 1);
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  unsetenv("SHARDPLAN_LOG_LEVEL");
  ck_assert(strncmp(d.addr, "127.0.0.1:", 10) == 0 && atoi(d.addr + 10) > 0);
  /* Two daemons cannot share a port. */
  snprintf(cmd, sizeof cmd, "SHARDPLAN_GRPC_LISTEN=%s %s/shardpland --http-listen off "
           "--data-dir %s/second >/dev/null 2>&1", d.addr, SP_BIN_DIR, d.data_dir);
  ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("daemon_errors");
  TCase *tc = tcase_create("daemon_errors");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, a_catalogue_of_bad_requests_gets_the_right_statuses_and_the_daemon_keeps_serving);
  tcase_add_test(tc, a_zero_size_dimension_and_an_op_without_a_rule_are_planned);
  tcase_add_test(tc, a_tls_call_and_a_token_protected_call_succeed);
  tcase_add_test(tc, flags_come_from_the_environment_and_bad_ones_exit_2);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
