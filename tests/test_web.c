/*
 * test_web.c - the dashboard, driven through sp_web_handle (every route, guard and page) and
 * once over a real socket (headers as the browser sees them).
 *
 * Plans are real: modules are planned by the engine (server/plan) and stored as the daemon
 * stores them (sp_plan_rows), so the pages read what a daemon would have written.
 */
#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ir/file_read.h"
#include "plan/plan.h"
#include "store/store.h"
#include "cluster_support.h"
#include "store_support.h"
#include "test_support.h"
#include "web/web.h"
#include "store/plan_rows.h"

static const char *CONFLICT_MLIR =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "func.func @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "  %arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>},\n"
    "  %arg2: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>}) -> tensor<64x256xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg1 : tensor<64x128xf32>\n"
    "  %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>\n"
    "  %2 = stablehlo.tanh %1 : tensor<64x256xf32>\n"
    "  return %2 : tensor<64x256xf32>\n"
    "}\n";

static char dir[256], db[300];
static sp_store *store;
static sp_metrics *metrics;
static sp_web *web;

static void put_plan(const char *text, const char *key, const char *name, bool search) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = search ? SP_PLAN_PROPAGATE_SEARCH : SP_PLAN_PROPAGATE;
  o.time_limit = 10;
  sp_cluster *cl = search ? sp_test_load_cluster("one_machine_8gpu.json") : NULL;
  sp_plan_input in = {NULL, text, strlen(text), "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  ck_assert_msg(sp_plan_run(&in, cl, &o, &p, &err) == SP_OK, "%s", err.msg);
  sp_plan_rows rows;
  ck_assert_msg(sp_plan_rows_build(p, &rows, &err) == SP_OK, "%s", err.msg);
  sp_store_plan sp;
  memset(&sp, 0, sizeof sp);
  snprintf(sp.key, sizeof sp.key, "%s", key);
  sp.planner_version = "test";
  sp.module_name = name;
  sp.mesh = "data=4, model=2";
  sp.status = search ? "optimal" : "propagation-only";
  sp.gap = 0;
  sp.total_cost = search ? p->costs.total_s : 0;
  sp.plan = "{}";
  sp.plan_len = 2;
  ck_assert_msg(sp_store_put(store, &sp, rows.v, rows.n, &err) == SP_OK, "%s", err.msg);
  sp_plan_rows_free(&rows);
  sp_plan_free(p);
  sp_cluster_free(cl);
}

static const char KEY_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char KEY_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/* The plan whose detail rows the dashboard is told are being written ("" none). */
static char pending_key[65];

static bool rows_pending(void *ctx, const char *key) {
  (void)ctx;
  return strcmp(key, pending_key) == 0;
}

static void setup_with(const char *token) {
  pending_key[0] = '\0';
  sp_test_temp_db("sp_web", dir, sizeof dir, db, sizeof db);
  sp_store_options so = {.path = db};
  store = sp_test_store_open(&so);
  sp_err err;
  sp_err_clear(&err);
  metrics = sp_metrics_new();
  ck_assert_ptr_nonnull(metrics);
  sp_web_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.listen = "127.0.0.1:0";
  cfg.token = token;
  cfg.version = "test";
  cfg.rows_pending = rows_pending;
  ck_assert_msg(sp_web_new(&cfg, store, metrics, &web, &err) == SP_OK, "%s", err.msg);
}

static void setup(void) { setup_with(NULL); }

static void teardown(void) {
  sp_web_free(web);
  sp_metrics_free(metrics);
  sp_store_close(store);
  sp_test_remove_temp_db(dir, db);
}

/* A request as a browser on the same machine sends it. */
static sp_web_request request(const char *method, const char *path) {
  sp_web_request r;
  memset(&r, 0, sizeof r);
  r.method = method;
  r.path = path;
  r.host = "127.0.0.1:8080";
  return r;
}

static char *body_of(sp_web_request *req, int *status) {
  sp_web_response resp;
  sp_web_response_init(&resp);
  sp_web_handle(web, req, &resp);
  *status = resp.status;
  char *b = sp_strbuf_detach(&resp.body);
  sp_web_response_free(&resp);
  return b ? b : strdup("");
}

static char *get(const char *path, int *status) {
  sp_web_request req = request("GET", path);
  return body_of(&req, status);
}

static char *get_arg(const char *path, const char *k, const char *v, int *status) {
  sp_web_request req = request("GET", path);
  req.nargs = 1;
  req.args[0].key = k;
  req.args[0].value = v;
  return body_of(&req, status);
}

/* GET the page `fmt` of plan `key` (fmt's %s is the key), asserting that it answers 200; the
 * body, which the caller frees. */
static char *get_plan_page(const char *fmt, const char *key) {
  char path[200];
  snprintf(path, sizeof path, fmt, key);
  int st;
  char *b = get(path, &st);
  ck_assert_msg(st == 200, "GET %s: status %d", path, st);
  return b;
}

/* --------------------------------------------------------------------------- pages */

START_TEST(index_lists_plans_newest_first_with_cache_stats) {
  put_plan(CONFLICT_MLIR, KEY_A, "first_model", false);
  put_plan(CONFLICT_MLIR, KEY_B, "second_model", true);
  int st;
  char *b = get("/", &st);
  ck_assert_int_eq(st, 200);
  char *first = strstr(b, "first_model"), *second = strstr(b, "second_model");
  ck_assert_ptr_nonnull(first);
  ck_assert_ptr_nonnull(second);
  ck_assert_msg(second < first, "the newest plan must come first");
  ck_assert_ptr_nonnull(strstr(b, "<b>2</b> plans"));
  ck_assert_ptr_nonnull(strstr(b, "/plans/bbbbbbbbbbbb"));
  free(b);
}
END_TEST

START_TEST(plan_page_shows_costs_chart_shardings_and_collectives) {
  put_plan(CONFLICT_MLIR, KEY_B, "searched", true);
  char *b = get_plan_page("/plans/%s", KEY_B);
  ck_assert_ptr_nonnull(strstr(b, "peak memory per device"));
  ck_assert_ptr_nonnull(strstr(b, "<svg class=\"chart\""));
  ck_assert_ptr_nonnull(strstr(b, "<rect class=\"k-compute\""));   /* per-op compute bars */
  ck_assert_ptr_nonnull(strstr(b, ">dot_general #"));
  ck_assert_ptr_nonnull(strstr(b, "<h2>Solver</h2>"));
  ck_assert_ptr_nonnull(strstr(b, "Rank mapping"));
  /* the shardings table has every argument with its sdy text and PartitionSpec */
  ck_assert_ptr_nonnull(strstr(b, "%arg0"));
  ck_assert_ptr_nonnull(strstr(b, "PartitionSpec("));
  ck_assert_ptr_nonnull(strstr(b, "#sdy.sharding&lt;@mesh"));
  ck_assert_ptr_nonnull(strstr(b, "name=\"csrf\""));
  free(b);
}
END_TEST

START_TEST(shardings_filter_keeps_only_matching_values) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  int st;
  char path[128];
  snprintf(path, sizeof path, "/plans/%s", KEY_A);
  char *b = get_arg(path, "q", "arg2", &st);
  ck_assert_int_eq(st, 200);
  ck_assert_ptr_nonnull(strstr(b, ">%arg2</a>"));
  ck_assert_ptr_null(strstr(b, ">%arg0</a>"));
  free(b);
}
END_TEST

/* A chain of `n` negates: n + 3 values (argument, function result, n op results). */
static char *chain(int n) {
  size_t cap = 64 * (size_t)n + 512;
  char *t = malloc(cap);
  int k = snprintf(t, cap, "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @main(%%arg0: tensor<8xf32> "
                           "{sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n"
                           "  %%0 = stablehlo.negate %%arg0 : tensor<8xf32>\n");
  for (int i = 1; i < n; i++)
    k += snprintf(t + k, cap - (size_t)k, "  %%%d = stablehlo.negate %%%d : tensor<8xf32>\n", i, i - 1);
  snprintf(t + k, cap - (size_t)k, "  return %%%d : tensor<8xf32>\n}\n", n - 1);
  return t;
}

START_TEST(shardings_pages_hold_fifty_rows_each_in_order) {
  char *t = chain(118);   /* 120 values: pages of 50, 50, 20 */
  put_plan(t, KEY_A, "chain", false);
  free(t);
  char path[160];
  snprintf(path, sizeof path, "/plans/%s", KEY_A);
  int st;
  char *b = get_arg(path, "page", "1", &st);
  ck_assert_int_eq(st, 200);
  ck_assert_ptr_nonnull(strstr(b, "<td class=\"num\">50</td>"));
  ck_assert_ptr_nonnull(strstr(b, "<td class=\"num\">99</td>"));
  ck_assert_ptr_null(strstr(b, "<td class=\"num\">49</td>"));
  ck_assert_ptr_null(strstr(b, "<td class=\"num\">100</td>"));
  ck_assert_ptr_nonnull(strstr(b, "page 2 of 3 (120 rows)"));
  free(b);
  b = get_arg(path, "page", "2", &st);
  ck_assert_ptr_nonnull(strstr(b, "<td class=\"num\">119</td>"));
  ck_assert_ptr_null(strstr(b, "rel=\"next\""));
  free(b);
  /* a filtered page counts its matches: %1, %10..%19, %100..%117 */
  b = get_arg(path, "q", "%1", &st);
  ck_assert_ptr_nonnull(strstr(b, "page 1 of 1 (29 rows)"));
  free(b);
  snprintf(path, sizeof path, "/api/plans/%s/values", KEY_A);
  b = get_arg(path, "page", "2", &st);
  cJSON *j = cJSON_Parse(b);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 120);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")), 20);
  cJSON_Delete(j);
  free(b);
}
END_TEST

START_TEST(op_page_draws_factor_table_with_conflict_cells) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  /* the add is op 2 (pre-order: mesh 0, func 1, add 2) */
  char *b = get_plan_page("/plans/%s/ops/2", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, "stablehlo.add"));
  ck_assert_ptr_nonnull(strstr(b, "Before propagation"));
  ck_assert_ptr_nonnull(strstr(b, "After propagation"));
  ck_assert_ptr_nonnull(strstr(b, ">F0 <small>"));
  ck_assert_ptr_nonnull(strstr(b, "T0 <small>operand 0</small>"));
  ck_assert_ptr_nonnull(strstr(b, "class=\"cell conflict"));
  ck_assert_ptr_nonnull(strstr(b, "{&quot;data&quot;}"));
  ck_assert_ptr_nonnull(strstr(b, "1 conflict on this op"));
  ck_assert_ptr_nonnull(strstr(b, "{?}"));   /* the result's open, empty dimension */
  /* the add feeds the dot_general (op 3), whose page links back to the add as producer */
  char link[200];
  snprintf(link, sizeof link, "feeds <a href=\"/plans/%s/ops/3\">", KEY_A);
  ck_assert_msg(strstr(b, link), "no link to the op the add feeds");
  free(b);
  b = get_plan_page("/plans/%s/ops/3", KEY_A);
  snprintf(link, sizeof link, ">%%0</a> from <a href=\"/plans/%s/ops/2\">", KEY_A);
  ck_assert_msg(strstr(b, link), "operand 0 of the dot_general does not link to its producer");
  free(b);
}
END_TEST

START_TEST(conflicts_page_lists_each_conflict_with_resolution) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  char *b = get_plan_page("/plans/%s/conflicts", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, "1 conflicts"));
  ck_assert_ptr_nonnull(strstr(b, "stablehlo.add #2"));
  ck_assert_ptr_nonnull(strstr(b, "incompatible"));
  ck_assert_ptr_nonnull(strstr(b, "aggressive"));
  char link[160];
  snprintf(link, sizeof link, "href=\"/plans/%s/ops/2\"", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, link));
  free(b);
}
END_TEST

START_TEST(value_page_shows_sharding_and_defining_op) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  char *b = get_plan_page("/plans/%s/values/0", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, "%arg0"));
  ck_assert_ptr_nonnull(strstr(b, "Provenance"));
  ck_assert_ptr_nonnull(strstr(b, "PartitionSpec(&#39;data&#39;, None)"));
  free(b);
}
END_TEST

/* Value 6 is the tanh's result (%2), whose "model" came from %arg2 (its dim 0 is left empty
 * by the add's conflict). Shardy's record of each axis is shown as a table, and again next to
 * the derived path with whether the two agree. */
START_TEST(value_page_shows_shardys_origin_of_each_axis) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  char *b = get_plan_page("/plans/%s/values/6", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, "Value <code>%2</code>"));
  ck_assert_ptr_nonnull(strstr(b, "<caption>Shardy's sharding origins</caption>"));
  ck_assert_ptr_nonnull(strstr(b, "<tr><th><code>&quot;model&quot;</code></th><td class=\"mono\">input: 2</td></tr>"));
  ck_assert_ptr_nonnull(strstr(b, "came from <b>user annotation on %arg2</b> across 2 ops; Shardy's origin "
                                  "<code>input: 2</code> (the same annotation)"));
  free(b);
  b = get_plan_page("/plans/%s/values/0", KEY_A);
  ck_assert_ptr_nonnull(strstr(b, "<tr><th><code>&quot;data&quot;</code></th><td class=\"mono\">self</td></tr>"));
  free(b);
}
END_TEST

START_TEST(unknown_plan_and_page_are_404) {
  int st;
  char path[160];
  snprintf(path, sizeof path, "/plans/%s", KEY_A);
  free(get(path, &st));
  ck_assert_int_eq(st, 404);
  free(get("/nope", &st));
  ck_assert_int_eq(st, 404);
  free(get("/plans/xyz", &st));
  ck_assert_int_eq(st, 404);
}
END_TEST

/* --------------------------------------------------------------------------- safety */

START_TEST(names_with_markup_render_as_text) {
  char *evil = malloc(strlen(CONFLICT_MLIR) + 64);
  /* a module whose function and a value's name carry script */
  snprintf(evil, strlen(CONFLICT_MLIR) + 64, "%s", CONFLICT_MLIR);
  put_plan(evil, KEY_A, "<script>alert(1)</script>", false);
  free(evil);
  int st;
  char *b = get("/", &st);
  ck_assert_int_eq(st, 200);
  ck_assert_ptr_null(strstr(b, "<script>"));
  ck_assert_ptr_nonnull(strstr(b, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  free(b);
  char path[160];
  snprintf(path, sizeof path, "/plans/%s", KEY_A);
  b = get_arg(path, "q", "\"><script>x</script>", &st);
  ck_assert_ptr_null(strstr(b, "<script>"));
  free(b);
}
END_TEST

START_TEST(foreign_host_is_refused) {
  sp_web_request req = request("GET", "/");
  req.host = "evil.example:8080";
  int st;
  char *b = body_of(&req, &st);
  ck_assert_int_eq(st, 421);
  ck_assert_ptr_null(strstr(b, "evil.example"));
  free(b);
  req.host = NULL;
  free(body_of(&req, &st));
  ck_assert_int_eq(st, 421);
  req.host = "localhost:9999";
  free(body_of(&req, &st));
  ck_assert_int_eq(st, 200);
}
END_TEST

static int post_delete(const char *key, const char *origin, const char *csrf) {
  char path[160];
  snprintf(path, sizeof path, "/plans/%s/delete", key);
  sp_web_request req = request("POST", path);
  req.origin = origin;
  if (csrf) {
    req.nform = 1;
    req.form[0].key = "csrf";
    req.form[0].value = csrf;
  }
  int st;
  free(body_of(&req, &st));
  return st;
}

static bool exists(const char *key) {
  sp_store_plan p;
  memset(&p, 0, sizeof p);
  int rc = sp_store_get(store, key, 0, &p, NULL);
  sp_store_plan_free(&p);
  return rc == SP_OK;
}

START_TEST(delete_needs_post_same_origin_and_csrf) {
  put_plan(CONFLICT_MLIR, KEY_A, "m", false);
  
  const char *csrf = sp_web_csrf_token(web);
  char path[160];
  snprintf(path, sizeof path, "/plans/%s/delete", KEY_A);
  int st;
  free(get(path, &st));
  ck_assert_int_eq(st, 404); /* no state change on GET */
  ck_assert(exists(KEY_A));
  ck_assert_int_eq(post_delete(KEY_A, "http://127.0.0.1:8080", NULL), 403);
  ck_assert_int_eq(post_delete(KEY_A, "http://127.0.0.1:8080", "0000"), 403);
  ck_assert_int_eq(post_delete(KEY_A, "http://evil.example", csrf), 403);
  ck_assert_int_eq(post_delete(KEY_A, NULL, csrf), 403);
  ck_assert(exists(KEY_A));
  ck_assert_int_eq(post_delete(KEY_A, "http://127.0.0.1:8080", csrf), 303);
  ck_assert(!exists(KEY_A));
}
END_TEST

START_TEST(token_is_asked_once_and_kept_in_a_strict_cookie) {
  teardown();
  setup_with("s3cret-token");
  
  int st;
  char *b = get("/", &st);
  ck_assert_int_eq(st, 401);
  ck_assert_ptr_nonnull(strstr(b, "name=\"token\""));
  free(b);
  free(get("/healthz", &st));
  ck_assert_int_eq(st, 200);
  free(get("/metrics", &st));
  ck_assert_int_eq(st, 401);

  sp_web_request req = request("POST", "/login");
  req.origin = "http://127.0.0.1:8080";
  req.nform = 2;
  req.form[0].key = "csrf";
  req.form[0].value = sp_web_csrf_token(web);
  req.form[1].key = "token";
  req.form[1].value = "wrong";
  sp_web_response resp;
  sp_web_response_init(&resp);
  sp_web_handle(web, &req, &resp);
  ck_assert_int_eq(resp.status, 401);
  ck_assert_ptr_null(resp.set_cookie);
  sp_web_response_free(&resp);

  req.form[1].value = "s3cret-token";
  sp_web_response_init(&resp);
  sp_web_handle(web, &req, &resp);
  ck_assert_int_eq(resp.status, 303);
  ck_assert_ptr_nonnull(resp.set_cookie);
  ck_assert_ptr_nonnull(strstr(resp.set_cookie, "HttpOnly"));
  ck_assert_ptr_nonnull(strstr(resp.set_cookie, "SameSite=Strict"));
  ck_assert_ptr_null(strstr(resp.set_cookie, "s3cret-token"));
  char cookie[200];
  snprintf(cookie, sizeof cookie, "%.*s", (int)strcspn(resp.set_cookie, ";"), resp.set_cookie);
  sp_web_response_free(&resp);

  sp_web_request g = request("GET", "/");
  g.cookie = cookie;
  free(body_of(&g, &st));
  ck_assert_int_eq(st, 200);
  g.cookie = NULL;
  g.authorization = "Bearer s3cret-token";
  free(body_of(&g, &st));
  ck_assert_int_eq(st, 200);
  g.authorization = "Bearer nope";
  free(body_of(&g, &st));
  ck_assert_int_eq(st, 401);
}
END_TEST

/* --------------------------------------------------------------------------- api, metrics */

START_TEST(api_answers_json_pages_and_rows) {
  put_plan(CONFLICT_MLIR, KEY_B, "searched", true);
  int st;
  char *b = get("/api/plans", &st);
  ck_assert_int_eq(st, 200);
  cJSON *j = cJSON_Parse(b);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(cJSON_GetObjectItem(j, "total")->valueint, 1);
  cJSON_Delete(j);
  free(b);
  b = get_plan_page("/api/plans/%s/values", KEY_B);
  j = cJSON_Parse(b);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_ge(cJSON_GetObjectItem(j, "total")->valueint, 6);
  cJSON_Delete(j);
  free(b);
  b = get_plan_page("/api/plans/%s/values/0", KEY_B);
  j = cJSON_Parse(b);
  ck_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, "%arg0");
  cJSON_Delete(j);
  free(b);
  b = get_plan_page("/api/plans/%s", KEY_B);
  j = cJSON_Parse(b);
  ck_assert_ptr_nonnull(cJSON_GetObjectItem(j, "summary"));
  cJSON_Delete(j);
  free(b);
}
END_TEST

/* A line of the Prometheus text format: a comment, blank, or `name{labels} value`. */
static bool prom_line_ok(const char *l) {
  if (*l == '\0' || *l == '#') return strncmp(l, "# HELP ", 7) == 0 || strncmp(l, "# TYPE ", 7) == 0 || !*l;
  const char *p = l;
  if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == ':')) return false;
  while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
         *p == '_' || *p == ':')
    p++;
  if (*p == '{') {
    p++;
    while (*p && *p != '}') {
      while (*p && *p != '=') p++;
      if (p[0] != '=' || p[1] != '"') return false;
      p += 2;
      while (*p && *p != '"') p += (*p == '\\') ? 2 : 1;
      if (*p != '"') return false;
      p++;
      if (*p == ',') p++;
    }
    if (*p != '}') return false;
    p++;
  }
  if (*p != ' ') return false;
  char *end;
  strtod(p + 1, &end);
  return end != p + 1 && (*end == '\0' || *end == ' ');
}

static double prom_value(const char *text, const char *series) {
  const char *s = strstr(text, series);
  while (s && s > text && s[-1] != '\n') s = strstr(s + 1, series);
  if (!s) return -1;
  return strtod(s + strlen(series) + 1, NULL);
}

START_TEST(metrics_parse_as_prometheus_text_and_counters_move) {
  sp_metrics_rpc(metrics, "Plan", "OK");
  sp_metrics_cache(metrics, true);
  sp_metrics_cache(metrics, false);
  sp_metrics_plan(metrics, 0.002, 0.0);
  int st;
  char *b = get("/metrics", &st);
  ck_assert_int_eq(st, 200);
  char *save, *line;
  int n = 0;
  for (line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++)
    ck_assert_msg(prom_line_ok(line), "not Prometheus text: '%s'", line);
  ck_assert_int_gt(n, 20);
  free(b);
  sp_metrics_rpc(metrics, "Plan", "OK");
  sp_metrics_cache(metrics, true);
  /* the dashboard's own request (GET /metrics 200) counts under http */
  b = get("/metrics", &st);
  ck_assert_double_eq(prom_value(b, "shardplan_rpc_requests_total{method=\"Plan\",code=\"OK\"}"), 2);
  ck_assert_double_eq(prom_value(b, "shardplan_cache_hits_total"), 2);
  ck_assert_double_eq(prom_value(b, "shardplan_cache_misses_total"), 1);
  ck_assert_double_eq(prom_value(b, "shardplan_plan_latency_seconds_count"), 1);
  ck_assert_double_eq(prom_value(b, "shardplan_plan_latency_seconds_bucket{le=\"0.0025\"}"), 1);
  free(b);
}
END_TEST

/* --------------------------------------------------------------------------- rows pending */

/* GET `fmt` (its %s is `key`): the status, the Retry-After seconds and the body (freed by the
 * caller). */
static char *get_full(const char *fmt, const char *key, int *status, int *retry_after) {
  char path[200];
  snprintf(path, sizeof path, fmt, key);
  sp_web_request req = request("GET", path);
  sp_web_response resp;
  sp_web_response_init(&resp);
  sp_web_handle(web, &req, &resp);
  *status = resp.status;
  *retry_after = resp.retry_after_s;
  char *b = sp_strbuf_detach(&resp.body);
  sp_web_response_free(&resp);
  return b ? b : strdup("");
}

START_TEST(pages_of_a_plan_whose_rows_are_being_written_say_so_and_reload) {
  /* The daemon's first step for a plan answered near its deadline: the record alone. */
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  sp_plan_input in = {NULL, CONFLICT_MLIR, strlen(CONFLICT_MLIR), "t.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  ck_assert_msg(sp_plan_run(&in, NULL, &o, &p, &err) == SP_OK, "%s", err.msg);
  sp_store_plan sp;
  memset(&sp, 0, sizeof sp);
  snprintf(sp.key, sizeof sp.key, "%s", KEY_A);
  sp.planner_version = "test";
  sp.module_name = "held_model";
  sp.mesh = "data=4, model=2";
  sp.status = "provisional";
  sp.gap = 1;
  sp.total_cost = NAN;
  sp.plan = "{}";
  sp.plan_len = 2;
  ck_assert_msg(sp_store_put(store, &sp, NULL, 0, &err) == SP_OK, "%s", err.msg);
  snprintf(pending_key, sizeof pending_key, "%s", KEY_A);
  /* Every page of the plan: what is known, why the rest is missing, and a reload. */
  const char *pages[] = {"/plans/%s", "/plans/%s/conflicts", "/plans/%s/ops/0",
                         "/plans/%s/values/0"};
  int st, retry;
  for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
    char *b = get_full(pages[i], KEY_A, &st, &retry);
    ck_assert_int_eq(st, 200);
    ck_assert_int_eq(retry, 1);
    ck_assert_msg(strstr(b, "<meta http-equiv=\"refresh\" content=\"1\">") &&
                  strstr(b, "being written") && strstr(b, "held_model") &&
                  strstr(b, "provisional"), "%s: %s", pages[i], b);
    ck_assert_ptr_null(strstr(b, "<script"));
    free(b);
  }
  /* The API: the record says so; its rows ask to come back. */
  char *b = get_full("/api/plans/%s", KEY_A, &st, &retry);
  ck_assert_int_eq(st, 200);
  ck_assert_ptr_nonnull(strstr(b, "\"rows_pending\":true"));
  free(b);
  b = get_full("/api/plans/%s/values", KEY_A, &st, &retry);
  ck_assert_int_eq(st, 503);
  ck_assert_int_eq(retry, 1);
  ck_assert_ptr_nonnull(strstr(b, "being written"));
  free(b);
  /* Another plan is not affected. */
  put_plan(CONFLICT_MLIR, KEY_B, "complete", false);
  b = get_full("/plans/%s", KEY_B, &st, &retry);
  ck_assert_int_eq(retry, 0);
  ck_assert_ptr_null(strstr(b, "being written"));
  free(b);
  /* The rows are in: the pages show them, no reload. */
  sp_plan_rows rows;
  ck_assert_msg(sp_plan_rows_build(p, &rows, &err) == SP_OK, "%s", err.msg);
  sp_store_row *one = malloc((rows.n + 1) * sizeof *one);
  for (size_t i = 0; i < rows.n; i++) {   /* section by section, as the daemon adds them */
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = !strcmp(rows.v[k].section, rows.v[i].section);
    size_t m = 0;
    for (size_t k = i; !seen && k < rows.n; k++)
      if (!strcmp(rows.v[k].section, rows.v[i].section)) one[m++] = rows.v[k];
    if (m) ck_assert_msg(sp_store_add_rows(store, KEY_A, one, m, &err) == SP_OK, "%s", err.msg);
  }
  free(one);
  pending_key[0] = '\0';
  b = get_full("/plans/%s", KEY_A, &st, &retry);
  ck_assert_int_eq(st, 200);
  ck_assert_int_eq(retry, 0);
  ck_assert_ptr_null(strstr(b, "being written"));
  ck_assert_ptr_null(strstr(b, "http-equiv=\"refresh\""));
  ck_assert_ptr_nonnull(strstr(b, "%arg0"));
  free(b);
  b = get_full("/api/plans/%s", KEY_A, &st, &retry);
  ck_assert_ptr_nonnull(strstr(b, "\"rows_pending\":false"));
  free(b);
  sp_plan_rows_free(&rows);
  sp_plan_free(p);
}
END_TEST

/* --------------------------------------------------------------------------- socket */

/* ir/file_read.h's source over a socket. */
static long read_fd(void *src, char *buf, size_t n) { return (long)read(*(int *)src, buf, n); }

static char *http_get(int port, const char *host, const char *path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  char req[256];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                   path, host);
  ck_assert_int_eq(write(fd, req, (size_t)n), n);
  char *buf;
  ck_assert_int_eq(sp_file_read_from(read_fd, &fd, SIZE_MAX, &buf, NULL), SP_OK);
  close(fd);
  return buf;
}

START_TEST(served_pages_carry_security_headers) {
  sp_err err;
  sp_err_clear(&err);
  ck_assert_msg(sp_web_listen(web, &err) == SP_OK, "%s", err.msg);
  int port = sp_web_port(web);
  ck_assert_int_gt(port, 0);
  char host[32];
  snprintf(host, sizeof host, "127.0.0.1:%d", port);
  char *r = http_get(port, host, "/");
  ck_assert_ptr_nonnull(strstr(r, "HTTP/1.1 200"));
  ck_assert_ptr_nonnull(strstr(r, "Content-Security-Policy: default-src 'self'"));
  ck_assert_ptr_nonnull(strstr(r, "X-Content-Type-Options: nosniff"));
  ck_assert_ptr_nonnull(strstr(r, "Cache-Control: no-store"));
  free(r);
  r = http_get(port, "attacker.example", "/");
  ck_assert_ptr_nonnull(strstr(r, "HTTP/1.1 421"));
  free(r);
  r = http_get(port, host, "/static/style.css");
  ck_assert_ptr_nonnull(strstr(r, "text/css"));
  ck_assert_ptr_nonnull(strstr(r, ".factors"));
  free(r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("web");
  TCase *t = tcase_create("dashboard");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, index_lists_plans_newest_first_with_cache_stats);
  tcase_add_test(t, plan_page_shows_costs_chart_shardings_and_collectives);
  tcase_add_test(t, shardings_filter_keeps_only_matching_values);
  tcase_add_test(t, shardings_pages_hold_fifty_rows_each_in_order);
  tcase_add_test(t, op_page_draws_factor_table_with_conflict_cells);
  tcase_add_test(t, conflicts_page_lists_each_conflict_with_resolution);
  tcase_add_test(t, value_page_shows_sharding_and_defining_op);
  tcase_add_test(t, value_page_shows_shardys_origin_of_each_axis);
  tcase_add_test(t, unknown_plan_and_page_are_404);
  tcase_add_test(t, names_with_markup_render_as_text);
  tcase_add_test(t, foreign_host_is_refused);
  tcase_add_test(t, delete_needs_post_same_origin_and_csrf);
  tcase_add_test(t, token_is_asked_once_and_kept_in_a_strict_cookie);
  tcase_add_test(t, api_answers_json_pages_and_rows);
  tcase_add_test(t, metrics_parse_as_prometheus_text_and_counters_move);
  tcase_add_test(t, pages_of_a_plan_whose_rows_are_being_written_say_so_and_reload);
  tcase_add_test(t, served_pages_carry_security_headers);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sp_test_run(suite()); }
