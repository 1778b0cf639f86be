/*
 * bench_rpc.c - the request memory estimate (server/rpc/plan_request.h) against the memory a
 * request really takes, for the MLIR text and the structured graph of the same modules:
 *
 *   bench_rpc [--propagate] [LAYERS...]   GPT training steps of these layer counts (default
 *                                         1 4 16 48); --propagate: propagation only
 *
 * Each request (PlanRequest bytes, search mode, the bundled cluster, 30 s) runs in a child
 * process of its own: decode and prepare (the graph read and verified), then sp_plan_run as
 * the daemon does. The child's peak RSS (VmHWM) over its RSS before the request is the
 * measured memory; the estimate is what prepare checks against --max-request-memory-mb:
 * input bytes x SP_RPC_READ_BYTES_PER_INPUT_BYTE before reading, IR bytes x (1 + the planning
 * factor) after. One line per request:
 *
 *   form layers ops input_B ir_B read_est_MiB read_MiB plan_est_MiB plan_MiB ratio
 *
 * (ratio = plan_est / plan measured: above 1 the estimate is on the safe side; a search that
 * finds no plan fitting the cluster's memory is measured all the same and marked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen/model_gen.h"
#include "graph/graph.h"
#include "ir/arena.h"
#include "mlir/mlir.h"
#include "plan/plan.h"
#include "rpc/plan_request.h"

/* A field of /proc/self/status in KiB (VmRSS, VmHWM); -1 when unreadable. */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') kb = strtol(line + n + 1, NULL, 10);
  fclose(f);
  return kb;
}

static double mib(double bytes) { return bytes / (1 << 20); }

/* Packs the request (search mode, 30 s); malloc'd bytes in *out. */
static size_t pack(Shardplan__V1__PlanRequest *req, uint8_t **out) {
  size_t n = shardplan__v1__plan_request__get_packed_size(req);
  *out = malloc(n ? n : 1);
  if (*out) shardplan__v1__plan_request__pack(req, *out);
  return *out ? n : 0;
}

/* In a child: prepare and plan the request, print one line. */
static int measure(const char *form, int layers, int64_t ops, const uint8_t *buf, size_t len) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid > 0) {
    int st;
    waitpid(pid, &st, 0);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  long base = status_kb("VmRSS");
  sp_rpc_request r;
  memset(&r, 0, sizeof r);
  sp_err err;
  int rc = sp_rpc_request_decode(buf, len, NULL, &r, &err);
  if (rc == SP_OK) rc = sp_rpc_request_prepare(&r, &err);
  if (rc != SP_OK) {
    fprintf(stderr, "bench_rpc: %s: %s\n", form, err.msg);
    _exit(1);
  }
  long read_kb = status_kb("VmHWM") - base;
  double ir = (double)sp_arena_bytes(r.module->arena);
  double read_est = (double)len * SP_RPC_READ_BYTES_PER_INPUT_BYTE;
  double plan_est = ir * (1 + (r.search ? SP_RPC_SEARCH_BYTES_PER_IR_BYTE
                                         : SP_RPC_PROPAGATE_BYTES_PER_IR_BYTE));
  sp_plan_input in = {.module = r.module, .filename = r.module->filename};
  sp_plan *plan = NULL;
  /* A search that finds no plan (the model does not fit the cluster) has still run. */
  rc = sp_plan_run(&in, r.cluster, &r.popts, &plan, &err);
  if (rc != SP_OK && rc != SP_ENOTFOUND) {
    fprintf(stderr, "bench_rpc: %s: %s\n", form, err.msg);
    _exit(1);
  }
  long plan_kb = status_kb("VmHWM") - base;
  printf("%-10s %6d %7lld %10zu %11.0f %8.1f %8.1f %8.1f %8.1f %6.2f%s\n", form, layers,
         (long long)ops, len, ir, mib(read_est), read_kb / 1024.0, mib(plan_est),
         plan_kb / 1024.0, plan_est / (plan_kb * 1024.0), rc ? "  (no plan fits)" : "");
  fflush(stdout);
  _exit(0);
}

static bool propagate_only;

static int one_model(int layers) {
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, layers);
  sp_strbuf text = SP_STRBUF_INIT;
  int64_t ops = 0;
  sp_err err;
  if (sp_gen_write(&o, &text, &ops, &err) != SP_OK || !sp_strbuf_ok(&text)) {
    fprintf(stderr, "bench_rpc: generating %d layers: %s\n", layers, err.msg);
    return 1;
  }
  Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions opts = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  opts.mode = propagate_only ? SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_PROPAGATE
                            : SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
  opts.time_limit_seconds = 30;
  req.options = &opts;
  req.filename = "gpt";
  req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  req.mlir = (char *)sp_strbuf_str(&text);
  uint8_t *buf = NULL;
  size_t len = pack(&req, &buf);
  int failed = !len || measure("mlir", layers, ops, buf, len);
  free(buf);
  sp_module *m = NULL;
  Shardplan__V1__Graph *g = NULL;
  sp_arena *ga = NULL;
  if (sp_mlir_parse(sp_strbuf_str(&text), text.len, "gpt", 1, &m, &err) != SP_OK ||
      sp_graph_from_module(m, &g, &ga, &err) != SP_OK) {
    fprintf(stderr, "bench_rpc: the structured graph of %d layers: %s\n", layers, err.msg);
    failed = 1;
  } else {
    sp_strbuf_free(&text);   /* not in the structured child's memory */
    req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED;
    req.structured = g;
    len = pack(&req, &buf);
    failed |= !len || measure("structured", layers, ops, buf, len);
    free(buf);
  }
  sp_arena_free(ga);
  sp_module_free(m);
  sp_strbuf_free(&text);
  return failed;
}

int main(int argc, char **argv) {
  static const int defaults[] = {1, 4, 16, 48};
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--propagate") == 0) {
    propagate_only = true;
    first = 2;
  }
  printf("%-10s %6s %7s %10s %11s %8s %8s %8s %8s %6s\n", "form", "layers", "ops", "input_B",
         "ir_B", "read_est", "read", "plan_est", "plan", "ratio");
  int failed = 0;
  int n = argc > first ? argc - first : (int)(sizeof defaults / sizeof defaults[0]);
  for (int i = 0; i < n; i++)
    failed |= one_model(argc > first ? atoi(argv[first + i]) : defaults[i]);
  return failed;
}
