/*
 * test_plan_request.c - the cache key of a PlanRequest (server/rpc/plan_request.c): the same
 * module sent as MLIR text and as a structured graph gets the same key, for every example
 *  module (every .mlir of examples/) and every parseable module of Shardy's conformance files (and for each with the search on);
 * renamed values keep the key; shape, sharding, mesh, cluster and answer-changing options
 * change it; the time limit, the detail and the file name do not.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "mlir/mlir.h"
#include "rpc/plan_request.h"
#include "test_support.h"

#define SHARED_PART "conformance/shardy"

typedef struct variant {
  bool search, structured;
  double time_limit, gap;
  int detail;
  const char *filename, *example;
  bool shape_auto;
  int64_t max_memory;   /* the daemon's --max-request-memory-mb, in bytes; 0: none */
} variant;

/* The key of `text` sent as `v` says; returns false (and the message) when it is refused. */
static bool key_of(const char *text, size_t len, variant v, char key[SP_RPC_HEX], char *msg) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster c = SHARDPLAN__V1__CLUSTER__INIT;
  char *copy = strndup(text, len);
  sp_module *m = NULL;
  sp_arena *ga = NULL;
  sp_err err;
  if (v.structured) {
    if (sp_mlir_parse(text, len, "t.mlir", 1, &m, &err)) {
      snprintf(msg, SP_ERR_MSG_MAX, "%s", err.msg);
      free(copy);
      return false;
    }
    Shardplan__V1__Graph *g;
    ck_assert_int_eq(sp_graph_from_module(m, &g, &ga, &err), SP_OK);
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED;
    r.structured = g;
  } else {
    r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
    r.mlir = copy;
  }
  o.mode = v.search ? SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH
                    : SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_PROPAGATE;
  o.time_limit_seconds = v.time_limit;
  o.gap = v.gap;
  if (v.shape_auto) o.mesh_shape = SHARDPLAN__V1__MESH_SHAPE_SEARCH__MESH_SHAPE_AUTO;
  r.options = &o;
  r.detail = (Shardplan__V1__Detail)v.detail;
  r.filename = (char *)(v.filename ? v.filename : "");
  if (v.search) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
    c.example = (char *)(v.example ? v.example : "one_machine_8gpu");
    r.cluster = &c;
  }
  size_t n = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *buf = malloc(n + 1);
  shardplan__v1__plan_request__pack(&r, buf);
  sp_arena_free(ga);
  sp_module_free(m);
  free(copy);
  sp_rpc_request req;
  bool ok = sp_rpc_request_decode(buf, n, NULL, &req, &err) == SP_OK;
  req.max_memory_bytes = v.max_memory;
  ok = ok && sp_rpc_request_prepare(&req, &err) == SP_OK;
  if (ok) snprintf(key, SP_RPC_HEX, "%s", req.key);
  else snprintf(msg, SP_ERR_MSG_MAX, "%s", err.msg);
  sp_rpc_request_free(&req);
  free(buf);
  return ok;
}

static void same_key_both_ways(const char *text, size_t len, const char *where, bool search,
                               int *compared, int *refused) {
  char k1[SP_RPC_HEX], k2[SP_RPC_HEX], m1[SP_ERR_MSG_MAX], m2[SP_ERR_MSG_MAX];
  bool a = key_of(text, len, (variant){.search = search}, k1, m1);
  bool b = key_of(text, len, (variant){.search = search, .structured = true}, k2, m2);
  if (!a) {
    /* Refused as text: it must not parse at all (then there is no graph to send) or be
     * refused as a graph too. */
    (*refused)++;
    return;
  }
  ck_assert_msg(b, "%s: the graph was refused: %s", where, m2);
  ck_assert_msg(strcmp(k1, k2) == 0, "%s: MLIR and graph keys differ", where);
  (*compared)++;
}

START_TEST(every_example_module_gets_the_same_key_as_text_and_as_graph) {
  /* Every .mlir of examples/: mlp.mlir, conflict.mlir (a module whose shardings conflict), and any
   * added later; each with propagation only and with the search. */
  DIR *dir = opendir(SP_SOURCE_DIR "/examples");
  ck_assert_ptr_nonnull(dir);
  int compared = 0, refused = 0, files = 0;
  bool mlp = false, conflict = false;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".mlir") != 0) continue;
    char path[512], where[300];
    snprintf(path, sizeof path, "%s/examples/%s", SP_SOURCE_DIR, e->d_name);
    size_t len;
    char *t = sp_test_read_file(path, &len);
    ck_assert_ptr_nonnull(t);
    snprintf(where, sizeof where, "%s", e->d_name);
    same_key_both_ways(t, len, where, false, &compared, &refused);
    snprintf(where, sizeof where, "%s (search)", e->d_name);
    same_key_both_ways(t, len, where, true, &compared, &refused);
    free(t);
    files++;
    mlp |= strcmp(e->d_name, "mlp.mlir") == 0;
    conflict |= strcmp(e->d_name, "conflict.mlir") == 0;
  }
  closedir(dir);
  ck_assert(mlp && conflict);
  ck_assert_int_eq(refused, 0);
  ck_assert_int_eq(compared, 2 * files);
}
END_TEST

START_TEST(request_over_the_memory_limit_is_refused_before_planning) {
  size_t len;
  char *t = sp_test_read_file(SP_SOURCE_DIR "/examples/mlp.mlir", &len);
  char key[SP_RPC_HEX], msg[SP_ERR_MSG_MAX];
  /* The 2 KB example reads in well under 1 MiB; planning it with the search is estimated at
   * more (240 bytes per byte of IR), propagation alone at less. */
  ck_assert(!key_of(t, len, (variant){.search = true, .max_memory = 1 << 20}, key, msg));
  ck_assert_msg(strstr(msg, "request: planning this graph with the search would need about") &&
                strstr(msg, "more than the request memory limit of 1 MiB "
                            "(--max-request-memory-mb)"), "%s", msg);
  ck_assert_msg(key_of(t, len, (variant){.search = false, .max_memory = 1 << 20}, key, msg),
                "%s", msg);
  ck_assert_msg(key_of(t, len, (variant){.search = true}, key, msg), "%s", msg);
  /* A text too large to read within the limit is refused before it is parsed. */
  ck_assert(!key_of(t, len, (variant){.search = false, .max_memory = 16 * 1024}, key, msg));
  ck_assert_msg(strstr(msg, "request: reading the graph would need about"), "%s", msg);
  free(t);
}
END_TEST

typedef struct tally {
  int compared, refused;
} tally;

static void key_chunk(const char *text, size_t len, int first_line, const char *where,
                      void *ctx) {
  (void)first_line;
  tally *t = ctx;
  same_key_both_ways(text, len, where, false, &t->compared, &t->refused);
}

START_TEST(every_conformance_module_gets_the_same_key_as_text_and_as_graph) {
  tally t = {0, 0};
  sp_test_for_each_chunk(SHARED_PART, key_chunk, &t);
  printf("test_plan_request: %d conformance modules keyed alike as text and graph, %d refused "
         "as text (they do not verify)\n", t.compared, t.refused);
  ck_assert_int_gt(t.compared, 100);
}
END_TEST

static const char *BASE =
    "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
    "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>})"
    " -> tensor<8x16xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>\n"
    "  return %0 : tensor<8x16xf32>\n}\n";

static void key(const char *text, variant v, char out[SP_RPC_HEX]) {
  char msg[SP_ERR_MSG_MAX];
  ck_assert_msg(key_of(text, strlen(text), v, out, msg), "%s", msg);
}

static char *subst(const char *from, const char *to) {
  const char *p = strstr(BASE, from);
  ck_assert_ptr_nonnull(p);
  char *out = malloc(strlen(BASE) + strlen(to) + 1);
  sprintf(out, "%.*s%s%s", (int)(p - BASE), BASE, to, p + strlen(from));
  return out;
}

START_TEST(what_changes_the_key_and_what_does_not) {
  char k0[SP_RPC_HEX], k[SP_RPC_HEX];
  variant s = {.search = true};
  key(BASE, s, k0);
  /* Not part of the key. */
  key(BASE, (variant){.search = true, .time_limit = 99}, k);
  ck_assert_str_eq(k, k0);
  key(BASE, (variant){.search = true, .detail = 1, .filename = "other.mlir"}, k);
  ck_assert_str_eq(k, k0);
  const char *ren =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @main(%w: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>})"
      " -> tensor<8x16xf32> {\n"
      "  %sum = stablehlo.add %w, %w : tensor<8x16xf32>\n"
      "  return %sum : tensor<8x16xf32>\n}\n";
  key(ren, s, k);
  ck_assert_str_eq(k, k0);
  /* Part of the key. */
  const char *changes[][2] = {{"8x16xf32> {sdy", "8x32xf32> {sdy"},
                              {"[{\"x\"}, {}]", "[{}, {\"x\"}]"},
                              {"\"y\"=4", "\"y\"=2"}};
  for (int i = 0; i < 3; i++) {
    char *t = subst(changes[i][0], changes[i][1]);
    char msg[SP_ERR_MSG_MAX];
    if (key_of(t, strlen(t), s, k, msg)) ck_assert_str_ne(k, k0);
    free(t);
  }
  key(BASE, (variant){.search = true, .gap = 0.1}, k);
  ck_assert_str_ne(k, k0);
  key(BASE, (variant){.search = true, .shape_auto = true}, k);
  ck_assert_str_ne(k, k0);
  key(BASE, (variant){.search = true, .example = "four_machines_32gpu"}, k);
  ck_assert_str_ne(k, k0);
  key(BASE, (variant){.search = false}, k);
  ck_assert_str_ne(k, k0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("plan_request");
  TCase *tc = tcase_create("plan_request");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_example_module_gets_the_same_key_as_text_and_as_graph);
  tcase_add_test(tc, what_changes_the_key_and_what_does_not);
  tcase_add_test(tc, request_over_the_memory_limit_is_refused_before_planning);
  if (sp_test_have_shared(SHARED_PART))
    tcase_add_test(tc, every_conformance_module_gets_the_same_key_as_text_and_as_graph);
  suite_add_tcase(s, tc);
  return sp_test_run_partial(s, SHARED_PART);
}
