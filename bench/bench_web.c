/*
 * bench_web.c - the dashboard on a large plan: a generated GPT training step of about
 * 100,000 ops (propagation only: a plan a JAX user would get for a big model), stored as the
 * daemon stores it, then each page rendered through sp_web_handle (no socket), 20 times; and
 * a searched 8-layer GPT for the plan page's cost chart. Prints a Markdown table of the median
 * and the slowest render per page.
 *
 *   bench_web [TARGET_OPS]     (default 100000)
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/model_gen.h"
#include "ir/clock.h"
#include "plan/plan.h"
#include "plan/provenance.h"
#include "search/cluster.h"
#include "store/plan_rows.h"
#include "store/store.h"
#include "web/web.h"

#define REPS 20

static void die(const char *what, const sp_err *err) {
  fprintf(stderr, "bench_web: %s: %s\n", what, err ? err->msg : "");
  exit(1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The answer path of the daemon before and after the provenance left it (issue 14): rows
 * with every value's provenance, built on the answer path before; rows without it and the
 * store now, then the origin rows added after the answer. */
typedef struct answer_path {
  double rows_with_provenance_s;   /* before: built before the answer */
  double rows_s, put_s;            /* now: built and stored before the answer */
  double origins_s, add_s;         /* now: after the answer */
} answer_path;

/* Plans generated text and stores it under `key` as the daemon does (rows, the answer, then
 * the provenance rows); returns the plan (caller frees). */
static sp_plan *plan_and_store(sp_store *st, const char *text, size_t len, const char *key,
                               const sp_cluster *cl, double *plan_s, answer_path *ap,
                               size_t *nrows) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = cl ? SP_PLAN_PROPAGATE_SEARCH : SP_PLAN_PROPAGATE;
  o.time_limit = 60;
  sp_plan_input in = {NULL, text, len, "gpt.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  double t0 = sp_clock_now();
  if (sp_plan_run(&in, cl, &o, &p, &err)) die("plan", &err);
  double t1 = sp_clock_now();
  if (getenv("BENCH_WEB_PROVENANCE")) {
    cJSON *origins = NULL;
    if (sp_plan_provenance(p, &origins, &err)) die("provenance", &err);
    fprintf(stderr, "provenance alone: %.2f s\n", sp_clock_now() - t1);
    cJSON_Delete(origins);
    t1 = sp_clock_now();
  }
  sp_plan_rows rows;
  if (sp_plan_rows_build(p, &rows, &err)) die("rows", &err);
  ap->rows_with_provenance_s = sp_clock_now() - t1;
  sp_plan_rows_free(&rows);
  t1 = sp_clock_now();
  if (sp_plan_rows_build_with(p, SP_PLAN_ROWS_NO_ORIGINS, &rows, &err)) die("rows", &err);
  double t2 = sp_clock_now();
  sp_store_plan rec;
  memset(&rec, 0, sizeof rec);
  snprintf(rec.key, sizeof rec.key, "%s", key);
  rec.planner_version = "bench";
  rec.module_name = "gpt";
  rec.mesh = "data=2, model=4";
  rec.status = cl ? "optimal" : "propagation-only";
  rec.gap = 0;
  rec.total_cost = p->costs.total_s;
  rec.plan = "{}";
  rec.plan_len = 2;
  if (sp_store_put(st, &rec, rows.v, rows.n, &err)) die("put", &err);
  double t3 = sp_clock_now();
  sp_plan_rows origins;
  if (sp_plan_rows_origins(p, &origins, &err)) die("origins", &err);
  double t4 = sp_clock_now();
  if (sp_store_add_rows(st, key, origins.v, origins.n, &err)) die("add origins", &err);
  double t5 = sp_clock_now();
  *plan_s = t1 - t0;
  ap->rows_s = t2 - t1;
  ap->put_s = t3 - t2;
  ap->origins_s = t4 - t3;
  ap->add_s = t5 - t4;
  *nrows = rows.n + origins.n;
  sp_plan_rows_free(&rows);
  sp_plan_rows_free(&origins);
  return p;
}

static void gpt_options(sp_gen_options *g, int layers) {
  memset(g, 0, sizeof *g);
  g->model = SP_GEN_GPT;
  g->layers = layers;
  g->hidden = 256;
  g->heads = 4;
  g->seq = 128;
  g->batch = 8;
  g->dtype = "f32";
  g->backward = true;
  g->annotate = SP_GEN_ANNOTATE_MEGATRON;
  sp_err err;
  sp_err_clear(&err);
  if (sp_gen_parse_mesh("data=2,model=4", g, &err)) die("mesh", &err);
}

/* Layers that make about `target` ops. */
static int layers_for(long target) {
  sp_gen_options g;
  gpt_options(&g, 1);
  int64_t per = sp_gen_ops_per_layer(&g);
  if (per <= 0) die("ops per layer", NULL);
  return (int)(target / per) + 1;
}

static char *generate(int layers, int64_t *nops) {
  sp_gen_options g;
  gpt_options(&g, layers);
  sp_err err;
  sp_err_clear(&err);
  sp_strbuf sb = SP_STRBUF_INIT;
  if (sp_gen_write(&g, &sb, nops, &err)) die("generate", &err);
  return sp_strbuf_detach(&sb);
}

static void time_page(sp_web *w, const char *label, const char *path, const char *q) {
  double t[REPS];
  size_t bytes = 0;
  int status = 0;
  for (int i = 0; i < REPS; i++) {
    sp_web_request req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = path;
    req.host = "127.0.0.1:8080";
    if (q) {
      req.nargs = 1;
      req.args[0].key = "page";
      req.args[0].value = q;
    }
    sp_web_response resp;
    sp_web_response_init(&resp);
    double t0 = sp_clock_now();
    sp_web_handle(w, &req, &resp);
    t[i] = sp_clock_now() - t0;
    bytes = resp.body.len;
    status = resp.status;
    sp_web_response_free(&resp);
  }
  qsort(t, REPS, sizeof t[0], cmp_double);
  printf("| %s | %d | %zu | %.2f | %.2f |\n", label, status, bytes, 1e3 * t[REPS / 2],
         1e3 * t[REPS - 1]);
}

int main(int argc, char **argv) {
  long target = argc > 1 ? atol(argv[1]) : 100000;
  int layers = layers_for(target);
  int64_t nops = 0;
  char *text = generate(layers, &nops);
  char dir[] = "/tmp/sp_bench_web_XXXXXX", path[64];
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  snprintf(path, sizeof path, "%s/plans.db", dir);
  sp_store_options so;
  memset(&so, 0, sizeof so);
  so.path = path;
  sp_store *st;
  sp_err err;
  if (sp_store_open(&so, &st, &err)) die("open", &err);
  static const char KEY[] = "1111111111111111111111111111111111111111111111111111111111111111";
  static const char SKEY[] = "2222222222222222222222222222222222222222222222222222222222222222";
  double plan_s;
  answer_path ap;
  size_t nrows;
  sp_plan *p = plan_and_store(st, text, strlen(text), KEY, NULL, &plan_s, &ap, &nrows);
  printf("Large plan: GPT training step, %d layers, %lld ops (hidden 256, seq 128, batch 8, "
         "Megatron annotations on data=2 x model=4), propagation only: %d values, %d op tables, "
         "%d conflicts; planned in %.2f s; %zu rows.\n\n",
         layers, (long long)nops, p->nvalues, p->nops, cJSON_GetArraySize(p->conflicts), plan_s,
         nrows);
  printf("The daemon's answer path after planning (issue 14): before, the rows with every "
         "value's provenance were built (%.2f s) and stored before the answer; now the rows "
         "without it are built in %.2f s and stored in %.2f s, the caller is answered, and then "
         "the provenance rows are built (%.2f s) and added (%.2f s). Answer path: %.2f s -> "
         "%.2f s (the store taken as the same).\n\n",
         ap.rows_with_provenance_s, ap.rows_s, ap.put_s, ap.origins_s, ap.add_s,
         ap.rows_with_provenance_s + ap.put_s, ap.rows_s + ap.put_s);
  int mid_value = p->nvalues / 2, mid_op = p->ops[p->nops / 2].op;
  int last_page = (p->nvalues - 1) / 50;
  sp_plan_free(p);
  free(text);

  sp_cluster *cl = NULL;
  if (sp_cluster_load(SP_SOURCE_DIR "/examples/clusters/one_machine_8gpu.json", &cl, &err))
    die("cluster", &err);
  int64_t snops = 0;
  char *stext = generate(8, &snops);
  sp_plan *sp = plan_and_store(st, stext, strlen(stext), SKEY, cl, &plan_s, &ap, &nrows);
  printf("Searched plan: the same GPT with 8 layers (%lld ops), %d collectives, planned in "
         "%.2f s.\n\n",
         (long long)snops, sp->ncollectives, plan_s);
  sp_plan_free(sp);
  free(stext);
  sp_cluster_free(cl);

  sp_metrics *m = sp_metrics_new();
  sp_web_config wc;
  memset(&wc, 0, sizeof wc);
  wc.listen = "127.0.0.1:0";
  sp_web *w;
  if (sp_web_new(&wc, st, m, &w, &err)) die("web", &err);
  char pth[256], pg[32];
  printf("| page | status | bytes | median ms | slowest ms |\n|---|---|---|---|---|\n");
  time_page(w, "`/` (plan list)", "/", NULL);
  snprintf(pth, sizeof pth, "/plans/%s", KEY);
  time_page(w, "plan page, first shardings page", pth, NULL);
  snprintf(pg, sizeof pg, "%d", last_page);
  time_page(w, "plan page, last shardings page", pth, pg);
  snprintf(pth, sizeof pth, "/plans/%s/ops/%d", KEY, mid_op);
  time_page(w, "op page (middle op)", pth, NULL);
  snprintf(pth, sizeof pth, "/plans/%s/conflicts", KEY);
  time_page(w, "conflicts, first page", pth, NULL);
  snprintf(pth, sizeof pth, "/plans/%s/values/%d", KEY, mid_value);
  time_page(w, "value page with provenance (middle value)", pth, NULL);
  snprintf(pth, sizeof pth, "/api/plans/%s/values", KEY);
  time_page(w, "`/api/.../values`, last page", pth, pg);
  snprintf(pth, sizeof pth, "/plans/%s", SKEY);
  time_page(w, "searched 8-layer plan page (cost chart)", pth, NULL);
  sp_web_free(w);
  sp_metrics_free(m);
  sp_store_close(st);
  unlink(path);
  char wal[80];
  snprintf(wal, sizeof wal, "%s-wal", path);
  unlink(wal);
  snprintf(wal, sizeof wal, "%s-shm", path);
  unlink(wal);
  rmdir(dir);
  return 0;
}
