/*
 * fuzz_export.c - libFuzzer target: Shardy's export passes (export/export_pipeline.h) on a
 * parsed, verified module, and the plan stage's exported collectives (plan/exported.h).
 *
 * For an input that parses and verifies:
 *   1. -sdy-export-pipeline with the default options, on the module as read;
 *   2. -sdy-export-pipeline with enable-insert-explicit-collectives=true, on a fresh copy
 *      (explicit reshards everywhere, reshard chains folded, reshards lowered to collectives);
 *   3. when the module has a mesh and at most SP_FUZZ_SEARCH_MAX_OPS ops: the plan stage
 *      (sp_plan_run: propagation, the search bounded by work on the fuzz cluster, then the
 *      export of the planned copy whose collectives the plan prices).
 * Invariants beyond "no crash, no leak": every failure carries a status and a message; an
 * exported module prints, the printed text parses and prints the same (print-parse-print is
 * a fixed point); a plan's collectives have a kind, a group of at least one device and
 * non-negative bytes and seconds.
 *
 * Inputs come from the structure-aware mutator (mlir_mutator.h) over the seed corpus and the
 * `// -----` chunks of ../shared/conformance/shardy-export and shardy-explicit-reshards
 * (fuzz/run.sh).
 *
 * Memory: every module and plan lives for one input.
 */
#include <stdio.h>
#include <string.h>

#include "export/export_pipeline.h"
#include "fuzz_common.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "mlir_mutator.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return sp_fuzz_mlir_mutate(data, size, max_size, seed);
}

/* What the counters call the stages of this target. */
static const char *const export_stages[SP_FUZZ_NSTAGES] = {"rejected", "parsed", "verified",
                                                          "exported", "planned"};

/* Runs the export pipeline with `options` on `m`; true when it succeeded. */
static bool run_export(sp_module *m, const char *options) {
  sp_err err;
  int rc = sp_export_pipeline_pass(m, options, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "the export pipeline failed without an error");
    return false;
  }
  sp_fuzz_check_reparses(m, options[0] ? options : "exported, default options");
  return true;
}

static bool has_mesh(const sp_module *m) {
  for (const sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_SDY_MESH) return true;
  return false;
}

/* The plan stage on the input text: true when it planned. */
static bool run_plan(const uint8_t *data, size_t size) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE_SEARCH;
  o.no_tables = true;
  o.placement = SP_PLAN_GIVEN;
  o.mesh_shape = SP_PLAN_GIVEN;
  o.time_limit = 0; /* bounded by work: the same path on any machine */
  char search[64];
  snprintf(search, sizeof search, "work-limit=%d max-strategies=%d", SP_FUZZ_SEARCH_WORK,
           SP_FUZZ_SEARCH_STRATEGIES);
  o.search_options = search;
  sp_plan_input in = {NULL, (const char *)data, size, "fuzz.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  int rc = sp_plan_run(&in, sp_fuzz_cluster(), &o, &p, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "planning failed without an error");
    sp_fuzz_check(p == NULL, "planning failed but returned a plan", &err);
    return false;
  }
  sp_fuzz_check(p->searched, "a searched plan without its search fields", NULL);
  for (int i = 0; i < p->ncollectives; i++) {
    const sp_plan_collective *c = &p->collectives[i];
    sp_fuzz_check(c->kind && c->kind[0], "a collective without a kind", NULL);
    sp_fuzz_check(c->group_size >= 1, "a collective over no device", NULL);
    sp_fuzz_check(c->bytes >= 0 && c->seconds >= 0,
                  "a collective with negative bytes or seconds", NULL);
  }
  sp_plan_free(p);
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_fuzz_count_names(export_stages);
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse((const char *)data, size, "fuzz.mlir", 1, &m, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "reader failed without an error");
    sp_fuzz_count("export", SP_FUZZ_REJECTED);
    return 0;
  }
  sp_fuzz_stage stage = SP_FUZZ_PARSED;
  rc = sp_verify_module(m, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "verifier failed without an error");
    goto done;
  }
  stage = SP_FUZZ_VERIFIED;
  bool small = sp_module_num_ops(m) <= SP_FUZZ_SEARCH_MAX_OPS && has_mesh(m);
  if (run_export(m, "")) stage = SP_FUZZ_PROPAGATED;
  sp_module_free(m);
  /* A fresh copy: the first export changed the module. The text parsed once, so it does
   * again. */
  m = NULL;
  rc = sp_mlir_parse((const char *)data, size, "fuzz.mlir", 1, &m, &err);
  sp_fuzz_check(rc == SP_OK, "the input parsed once but not twice", &err);
  rc = sp_verify_module(m, &err);
  sp_fuzz_check(rc == SP_OK, "the input verified once but not twice", &err);
  if (run_export(m, "enable-insert-explicit-collectives=true")) stage = SP_FUZZ_PROPAGATED;
  if (small && run_plan(data, size)) stage = SP_FUZZ_SEARCHED;
done:
  sp_module_free(m);
  sp_fuzz_count("export", stage);
  return 0;
}
