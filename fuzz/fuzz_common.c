/*
 * fuzz_common.c - the engine run shared by the MLIR fuzz targets (see fuzz_common.h).
 */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "propagation/pipeline.h"
#include "search/cluster.h"
#include "search/plan_search.h"

/* Eight 8-GPU machines: meshes of up to 64 devices get planned. */
#define MACHINE(n)                                                                     \
  "  {\"name\": \"n" #n "\", \"device_type\": \"gpu\", \"num_devices\": 8,"                   \
  "   \"link\": {\"kind\": \"nvlink\", \"bandwidth\": 3.0e11, \"latency\": 2e-6}}"
static const char cluster_json[] =
    "{\"device_types\": {\"gpu\": {\"memory_bytes\": 8.0e10,"
    " \"flops\": {\"bf16\": 3.12e14, \"f32\": 1.95e13}}},"
    " \"machines\": [" MACHINE(0) "," MACHINE(1) "," MACHINE(2) "," MACHINE(3) ","
    MACHINE(4) "," MACHINE(5) "," MACHINE(6) "," MACHINE(7) "],"
    " \"network\": {\"kind\": \"infiniband\", \"bandwidth\": 2.5e10, \"latency\": 5e-6}}";

static sp_cluster *fuzz_cluster;

void sp_fuzz_check(int cond, const char *what, const sp_err *err) {
  if (cond) return;
  fprintf(stderr, "fuzz check failed: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
  abort();
}

void sp_fuzz_check_error(int rc, const sp_err *err, const char *what) {
  static int verbose = -1;
  if (verbose < 0) verbose = getenv("SP_FUZZ_VERBOSE") != NULL;
  if (verbose) fprintf(stderr, "fuzz error: %s\n", err->msg);
  sp_fuzz_check(rc < 0, what, err);
  sp_fuzz_check(err->code == rc, "error status differs from the returned one", err);
  sp_fuzz_check(err->msg[0] != '\0', "error without a message", err);
}

void sp_fuzz_check_reparses(const sp_module *m, const char *what) {
  sp_err err;
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  sp_module *m2 = NULL;
  sp_fuzz_check(sp_mlir_print(m, &a, &err) == SP_OK && !a.oom, "printing a module", &err);
  if (sp_mlir_parse(a.buf, a.len, "printed.mlir", 1, &m2, &err) != SP_OK) {
    fprintf(stderr, "--- printed (%s):\n%s\n", what, sp_strbuf_str(&a));
    sp_fuzz_check(0, "the printed module does not parse", &err);
  }
  sp_fuzz_check(sp_mlir_print(m2, &b, &err) == SP_OK && !b.oom, "printing the reparsed module",
                &err);
  if (strcmp(sp_strbuf_str(&a), sp_strbuf_str(&b)) != 0) {
    fprintf(stderr, "--- first (%s):\n%s\n--- second:\n%s\n", what, sp_strbuf_str(&a),
            sp_strbuf_str(&b));
    sp_fuzz_check(0, "print-parse-print is not a fixed point", NULL);
  }
  sp_module_free(m2);
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
}

const sp_cluster *sp_fuzz_cluster(void) {
  if (!fuzz_cluster) {
    sp_err err;
    int rc = sp_cluster_parse(cluster_json, &fuzz_cluster, &err);
    sp_fuzz_check(rc == SP_OK, "built-in cluster", &err);
  }
  return fuzz_cluster;
}

sp_fuzz_stage sp_fuzz_run_engine(sp_module *m) {
  sp_err err;
  int rc = sp_verify_module(m, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "verifier failed without an error");
    return SP_FUZZ_PARSED;
  }
  sp_pipeline_options po;
  rc = sp_pipeline_parse_options(NULL, &po, &err);
  sp_fuzz_check(rc == SP_OK, "default pipeline options", &err);
  rc = sp_pipeline_run(m, &po, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "propagation failed without an error");
    return SP_FUZZ_VERIFIED;
  }
  if (sp_module_num_ops(m) > SP_FUZZ_SEARCH_MAX_OPS) return SP_FUZZ_PROPAGATED;
  sp_plan_search_opts so;
  sp_plan_search_opts_init(&so);
  so.cluster = sp_fuzz_cluster();
  /* A module with several meshes: plan on the first. */
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_SDY_MESH) {
      so.mesh_name = sp_op_get_str(op, "sym_name");
      break;
    }
  /* Bounded by work only (no time limit): an input takes the same path on any machine, so
   * a seed replays the same run (the coverage that guides libFuzzer does not depend on
   * where a clock stopped the solver). */
  so.time_limit = 0;
  so.work_limit = SP_FUZZ_SEARCH_WORK;
  /* The solver's exact reduction is not bounded by work: folding a chain of nodes costs the
   * product of their strategy counts. */
  so.max_strategies = SP_FUZZ_SEARCH_STRATEGIES;
  sp_plan_summary sum;
  rc = sp_plan_search_module(m, &so, &sum, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "search failed without an error");
    return SP_FUZZ_PROPAGATED;
  }
  sp_fuzz_check(sum.peak_memory_bytes >= 0 && sum.total_s >= 0 && sum.cost >= 0,
                "search summary with a negative cost or memory", NULL);
  return SP_FUZZ_SEARCHED;
}

sp_fuzz_stage sp_fuzz_run_mlir(const uint8_t *data, size_t size) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse((const char *)data, size, "fuzz.mlir", 1, &m, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "reader failed without an error");
    sp_fuzz_check(m == NULL, "reader failed but returned a module", &err);
    sp_fuzz_check(strncmp(err.msg, "fuzz.mlir", 9) == 0, "reader error without the file name",
                  &err);
    return SP_FUZZ_REJECTED;
  }
  sp_fuzz_stage st = sp_fuzz_run_engine(m);
  sp_module_free(m);
  return st;
}

/* ------------------------------------------------------------------ counters */

static const char *const engine_stages[SP_FUZZ_NSTAGES] = {"rejected", "parsed", "verified",
                                                          "propagated", "searched"};
static const char *const *stage_names = engine_stages;
static const char *count_target;
static long long counts[SP_FUZZ_NSTAGES];   /* every input */
static long long after[SP_FUZZ_NSTAGES];    /* the inputs after the seed corpus */
static bool seeds_done;

void sp_fuzz_seeds_done(void) { seeds_done = true; }

/* One line of shares: reaching a stage means reaching it or any later one. */
static void report_line(const char *what, const long long *c) {
  long long total = 0;
  for (int i = 0; i < SP_FUZZ_NSTAGES; i++) total += c[i];
  if (total == 0) return;
  long long reached = total;
  fprintf(stderr, "fuzz stats %s%s: %lld inputs", count_target, what, total);
  for (int i = 0; i < SP_FUZZ_NSTAGES; i++) {
    if (i > 0) fprintf(stderr, ", %s %.1f%%", stage_names[i], 100.0 * (double)reached / total);
    reached -= c[i];
  }
  fprintf(stderr, "\n");
}

static void report(void) {
  report_line("", counts);
  report_line(" after the seeds", after);
}

void sp_fuzz_count_names(const char *const names[SP_FUZZ_NSTAGES]) { stage_names = names; }

void sp_fuzz_count(const char *target, sp_fuzz_stage stage) {
  static int enabled = -1;
  if (enabled < 0) {
    enabled = getenv("SP_FUZZ_STATS") != NULL;
    if (enabled) atexit(report);
  }
  if (!enabled) return;
  count_target = target;
  counts[stage]++;
  if (seeds_done) after[stage]++;
  long long total = 0;
  for (int i = 0; i < SP_FUZZ_NSTAGES; i++) total += counts[i];
  if (total % SP_FUZZ_REPORT_EVERY == 0) report();
}
