/*
 * proto_seeds.c - writes seed PlanRequests for fuzz_proto from MLIR files:
 *
 *   fuzz_proto_seeds OUTDIR FILE.mlir...
 *
 * For each file that parses: OUTDIR/<name>.mlir.pb (the text, propagation only) and
 * OUTDIR/<name>.graph.pb (the module as a structured graph, with the search on the bundled
 * cluster). The committed fuzz/corpus/proto/ was made with it from fuzz/corpus/mlir/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ir/file_read.h"
#include "mlir/mlir.h"
#include "shardplan/v1/planner.pb-c.h"

static int write_msg(const char *dir, const char *base, const char *suffix,
                     const Shardplan__V1__PlanRequest *req) {
  size_t n = shardplan__v1__plan_request__get_packed_size(req);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return 1;
  shardplan__v1__plan_request__pack(req, buf);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.%s.pb", dir, base, suffix);
  FILE *f = fopen(path, "wb");
  int rc = !f || fwrite(buf, 1, n, f) != n;
  if (f && fclose(f) != 0) rc = 1;
  free(buf);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fuzz_proto_seeds OUTDIR FILE.mlir...\n");
    return 2;
  }
  int failed = 0;
  for (int i = 2; i < argc; i++) {
    size_t len;
    char *text;
    if (sp_file_read(argv[i], SIZE_MAX, &text, &len)) { failed = 1; continue; }
    const char *slash = strrchr(argv[i], '/');
    char base[256];
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : argv[i]);
    char *dot = strrchr(base, '.');
    if (dot) *dot = '\0';
    Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
    Shardplan__V1__PlanOptions opts = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
    req.options = &opts;
    req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
    req.mlir = text;
    req.filename = base;
    failed |= write_msg(argv[1], base, "mlir", &req);
    sp_module *m = NULL;
    sp_err err;
    if (sp_mlir_parse(text, len, base, 1, &m, &err) == SP_OK) {
      Shardplan__V1__Graph *g = NULL;
      sp_arena *ga = NULL;
      if (sp_graph_from_module(m, &g, &ga, &err) == SP_OK) {
        req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED;
        req.structured = g;
        opts.mode = SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
        opts.time_limit_seconds = 0.05;
        failed |= write_msg(argv[1], base, "graph", &req);
      }
      sp_arena_free(ga);
      sp_module_free(m);
    }
    free(text);
  }
  return failed;
}
