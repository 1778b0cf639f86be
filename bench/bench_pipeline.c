/*
 * bench_pipeline.c - time of -sdy-propagation-pipeline on a large generated model, and how much
 * of it the import/export passes add to the propagation itself.
 *
 * Generates a GPT-style module (server/gen, Megatron annotations on mesh data=2, model=4) of
 * about N ops (default 100,000), then on fresh parses of the same text times
 *   - the whole pipeline (sp_pipeline_run with Shardy's default options),
 *   - the same pipeline recording Shardy's sharding origins as data
 *     (propagation/trace.h: sp_trace_want_origins, what sp_plan_run does by default), and
 *   - user-priority propagation alone (the pipeline's propagation step),
 *   - sp_plan_run without the search (the pipeline, factor tables, the plan built), with
 *     the origins and with sp_plan_options.no_origins,
 * best of R runs each (default 3), and reports ms, ns per op and the module arena's growth
 * (the trace lives outside the arena: its cost shows in time only).
 * Parsing is not timed. Each variant runs in its own function (run_pipeline,
 * run_pipeline_origins, run_propagation, run_plan_origins, run_plan_no_origins), so a
 * profiler can count each apart
 * (valgrind --tool=callgrind --toggle-collect=run_pipeline_origins ...).
 *
 * Usage: bench_pipeline [N [R]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gen/model_gen.h"
#include "ir/clock.h"
#include "ir/ir.h"
#include "mlir/mlir.h"
#include "plan/plan.h"
#include "propagation/pipeline.h"
#include "propagation/prop_passes.h"
#include "propagation/trace.h"

typedef int (*run_fn)(sp_module *m, sp_err *err);

__attribute__((noinline)) static int run_pipeline(sp_module *m, sp_err *err) {
  sp_pipeline_options o;
  int rc = sp_pipeline_parse_options(NULL, &o, err);
  return rc ? rc : sp_pipeline_run(m, &o, err);
}

__attribute__((noinline)) static int run_pipeline_origins(sp_module *m, sp_err *err) {
  int rc = sp_trace_want_origins(m, err);
  return rc ? rc : run_pipeline(m, err);
}

static int plan(sp_module *m, bool no_origins, sp_err *err) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = SP_PLAN_PROPAGATE;
  o.no_origins = no_origins;
  sp_plan_input in = {.module = m, .filename = "bench.mlir"};
  sp_plan *p = NULL;
  int rc = sp_plan_run(&in, NULL, &o, &p, err);
  sp_plan_free(p);
  return rc;
}

__attribute__((noinline)) static int run_plan_origins(sp_module *m, sp_err *err) {
  return plan(m, false, err);
}

__attribute__((noinline)) static int run_plan_no_origins(sp_module *m, sp_err *err) {
  return plan(m, true, err);
}

static int run_propagation(sp_module *m, sp_err *err) {
  sp_propagate_options o;
  int rc = sp_prop_pass_parse_options(SP_PASS_USER_PRIORITY, NULL, &o, err);
  return rc ? rc : sp_prop_pass_run(m, SP_PASS_USER_PRIORITY, &o, err);
}

/* Best time of `runs` runs of `fn` on fresh parses of `text`; *grown gets the arena growth. */
static int time_best(const sp_strbuf *text, run_fn fn, int runs, double *best, size_t *grown) {
  *best = -1;
  for (int r = 0; r < runs; r++) {
    sp_module *m = NULL;
    sp_err err;
    if (sp_mlir_parse(text->buf, text->len, "bench.mlir", 1, &m, &err)) {
      fprintf(stderr, "bench_pipeline: %s\n", err.msg);
      return 1;
    }
    size_t before = sp_arena_bytes(m->arena);
    double t0 = 1e3 * sp_clock_now();
    int rc = fn(m, &err);
    double t = 1e3 * sp_clock_now() - t0;
    *grown = sp_arena_bytes(m->arena) - before;
    sp_module_free(m);
    if (rc) {
      fprintf(stderr, "bench_pipeline: %s\n", err.msg);
      return 1;
    }
    if (*best < 0 || t < *best) *best = t;
  }
  return 0;
}

int main(int argc, char **argv) {
  int64_t target = argc > 1 ? atoll(argv[1]) : 100000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (target < 1 || runs < 1) {
    fprintf(stderr, "usage: bench_pipeline [N [R]]\n");
    return 2;
  }
  sp_gen_options g;
  sp_gen_default_options(&g);
  g.annotate = SP_GEN_ANNOTATE_MEGATRON;
  int64_t per_layer = sp_gen_ops_per_layer(&g);
  g.layers = (int)(target / per_layer > 0 ? target / per_layer : 1);
  sp_strbuf text = SP_STRBUF_INIT;
  int64_t nops = 0;
  sp_err err;
  if (sp_gen_write(&g, &text, &nops, &err)) {
    fprintf(stderr, "bench_pipeline: %s\n", err.msg);
    return 1;
  }
  double pipeline_ms, origins_ms, prop_ms, plan_ms, plan_bare_ms;
  size_t pipeline_bytes, origins_bytes, prop_bytes, plan_bytes, plan_bare_bytes;
  if (time_best(&text, run_pipeline, runs, &pipeline_ms, &pipeline_bytes) ||
      time_best(&text, run_pipeline_origins, runs, &origins_ms, &origins_bytes) ||
      time_best(&text, run_propagation, runs, &prop_ms, &prop_bytes) ||
      time_best(&text, run_plan_origins, runs, &plan_ms, &plan_bytes) ||
      time_best(&text, run_plan_no_origins, runs, &plan_bare_ms, &plan_bare_bytes)) {
    sp_strbuf_free(&text);
    return 1;
  }
  printf("bench_pipeline: GPT (megatron), %d layers, %lld ops, best of %d\n", g.layers,
         (long long)nops, runs);
  printf("  pipeline     %9.1f ms  %7.0f ns/op  arena +%zu KiB\n", pipeline_ms,
         pipeline_ms * 1e6 / (double)nops, pipeline_bytes / 1024);
  printf("  + origins    %9.1f ms  %7.0f ns/op  arena +%zu KiB\n", origins_ms,
         origins_ms * 1e6 / (double)nops, origins_bytes / 1024);
  printf("  propagation  %9.1f ms  %7.0f ns/op  arena +%zu KiB\n", prop_ms,
         prop_ms * 1e6 / (double)nops, prop_bytes / 1024);
  printf("  import+export overhead %.1f ms (%.0f ns/op)\n", pipeline_ms - prop_ms,
         (pipeline_ms - prop_ms) * 1e6 / (double)nops);
  printf("  plan         %9.1f ms  %7.0f ns/op  (propagation only, with Shardy's origins)\n",
         plan_ms, plan_ms * 1e6 / (double)nops);
  printf("  plan         %9.1f ms  %7.0f ns/op  (no_origins)\n", plan_bare_ms,
         plan_bare_ms * 1e6 / (double)nops);
  (void)plan_bytes;
  (void)plan_bare_bytes;
  sp_strbuf_free(&text);
  return 0;
}
