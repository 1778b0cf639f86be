/*
 * web_fixture.c - the dashboard fixture of the web fuzz targets (see web_fixture.h).
 */
#include "web_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "plan/plan.h"
#include "rpc/plan_request.h"
#include "search/cluster.h"
#include "store/plan_rows.h"

static const char MLP[] =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "func.func @main(%x: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},"
    " %w1: tensor<128x128xf32>, %w2: tensor<128x256xf32>) -> tensor<64x256xf32> {\n"
    "  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>\n"
    "  %1 = stablehlo.dot_general %0, %w2, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>\n"
    "  %2 = stablehlo.tanh %1 : tensor<64x256xf32>\n"
    "  return %2 : tensor<64x256xf32>\n"
    "}\n";

static sp_fuzz_web fixture;
static char dir[64];

static void remove_dir(void) {
  if (fixture.web) sp_web_free(fixture.web);
  if (fixture.metrics) sp_metrics_free(fixture.metrics);
  if (fixture.store) sp_store_close(fixture.store);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (dir[0] && system(cmd) != 0) fprintf(stderr, "web fixture: could not remove %s\n", dir);
}

static void put_plan(void) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE_SEARCH;
  o.time_limit = 0; /* bounded by work: the same fixture plan on any machine */
  sp_cluster *cl = NULL;
  sp_err err;
  sp_fuzz_check(sp_cluster_parse(sp_rpc_example_cluster("one_machine_8gpu"), &cl, &err) == SP_OK,
                "bundled cluster", &err);
  sp_plan_input in = {NULL, MLP, strlen(MLP), "mlp.mlir"};
  sp_plan *p = NULL;
  sp_fuzz_check(sp_plan_run(&in, cl, &o, &p, &err) == SP_OK, "planning the fixture", &err);
  sp_plan_rows rows;
  sp_fuzz_check(sp_plan_rows_build(p, &rows, &err) == SP_OK, "plan rows", &err);
  sp_store_plan sp;
  memset(&sp, 0, sizeof sp);
  snprintf(sp.key, sizeof sp.key, "%s", SP_FUZZ_WEB_KEY);
  sp.planner_version = "fuzz";
  sp.module_name = "mlp";
  sp.mesh = "data=4, model=2";
  sp.status = "optimal";
  sp.total_cost = p->costs.total_s;
  sp.plan = "{}";
  sp.plan_len = 2;
  sp_fuzz_check(sp_store_put(fixture.store, &sp, rows.v, rows.n, &err) == SP_OK, "store put",
                &err);
  sp_plan_rows_free(&rows);
  sp_plan_free(p);
  sp_cluster_free(cl);
}

sp_fuzz_web *sp_fuzz_web_get(void) {
  if (fixture.web) return &fixture;
  struct stat st;
  snprintf(dir, sizeof dir, "%s/sp_fuzz_web_XXXXXX",
           stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
  sp_fuzz_check(mkdtemp(dir) != NULL, "mkdtemp", NULL);
  atexit(remove_dir);
  char path[128];
  snprintf(path, sizeof path, "%s/plans.db", dir);
  sp_store_options so;
  memset(&so, 0, sizeof so);
  so.path = path;
  so.touch_batch = 1;
  sp_err err;
  sp_fuzz_check(sp_store_open(&so, &fixture.store, &err) == SP_OK, "store open", &err);
  fixture.metrics = sp_metrics_new();
  sp_fuzz_check(fixture.metrics != NULL, "metrics", NULL);
  sp_web_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.listen = "127.0.0.1:0";
  cfg.version = "fuzz";
  sp_fuzz_check(sp_web_new(&cfg, fixture.store, fixture.metrics, &fixture.web, &err) == SP_OK,
                "web", &err);
  put_plan();
  return &fixture;
}

int sp_fuzz_web_handle(const sp_web_request *in) {
  sp_fuzz_web *f = sp_fuzz_web_get();
  sp_web_request req = *in;
  if (!req.host) req.host = "127.0.0.1:8080";
  sp_web_response resp;
  sp_web_response_init(&resp);
  sp_web_handle(f->web, &req, &resp);
  sp_fuzz_check(resp.status >= 100 && resp.status <= 599, "response status out of range", NULL);
  sp_fuzz_check(resp.content_type != NULL, "response without a content type", NULL);
  const char *body = sp_strbuf_str(&resp.body);
  if (strncmp(resp.content_type, "text/html", 9) == 0 && strstr(body, "<x-fuzz")) {
    fprintf(stderr, "--- %s %s\n%s\n", req.method, req.path, body);
    sp_fuzz_check(0, "request text reflected into the response without HTML escaping", NULL);
  }
  int status = resp.status;
  sp_web_response_free(&resp);
  return status;
}
