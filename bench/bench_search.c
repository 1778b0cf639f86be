/*
 * bench_search.c - the search stage end to end on generated transformer training steps:
 * plan quality against Megatron, solve time, layer sharing, placement and mesh shapes.
 *
 * Every model is a GPT training step from server/gen/model_gen.h (forward and backward; hidden
 * 4096, 32 heads, sequence 2048, batch 8, bf16), propagated with aggressive propagation, with
 * each weight's gradient as a training-state pair (it must come back in its weight's layout).
 * Tables:
 *   layers     1, 4 and 8 layers on one 8-GPU machine, mesh data=2 x model=4, layer sharing
 *              on and off: the plan's time per step, the Megatron plan's under the same cost
 *              model, solver status and gap, problem size before and after the solver's
 *              reductions, and wall seconds;
 *   placement  one layer on four 8-GPU machines, mesh model=8 x data=4 (mesh order puts
 *              "model" across machines): as given, and with rank mapping;
 *   shapes     one layer on one machine, every factorisation of 8 over (data, model);
 *   deep       96 layers over 64 devices (examples/clusters/eight_machines_64gpu.json, mesh
 *              data=8 x model=8) with an 8 s solver limit, against Megatron (DESIGN.md's
 *              target: no worse than Megatron in under 10 s).
 * The time limit is per run (placement and shapes: for all of the run's trials).
 *
 * Usage: bench_search [--seconds S] [--source DIR] [--only layers|placement|shapes|deep]
 *                     [--deep-limit S]
 * (DIR holds examples/clusters/; --deep-limit: the 96-layer run's limit, default 8 s, 0 for
 * none: bounded by the solver's work, so that callgrind counts the same search)
 * Exit status 1 if a run fails.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "gen/model_gen.h"
#include "mlir/mlir.h"
#include "propagation/propagate.h"
#include "search/placement.h"

#ifndef SP_SOURCE_DIR
#define SP_SOURCE_DIR "."
#endif

#define MAX_LAYERS 96

static sp_module *gpt(int layers, const char *mesh, sp_gen_annotate annotate) {
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, layers);
  o.annotate = annotate;
  sp_err err;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_module *m = NULL;
  sp_propagate_options po;
  memset(&po, 0, sizeof po);
  po.strategy = SP_PROP_AGGRESSIVE;
  if (sp_gen_parse_mesh(mesh, &o, &err) || sp_gen_write(&o, &sb, NULL, &err) ||
      sp_mlir_parse(sp_strbuf_str(&sb), sb.len, "gpt.mlir", 1, &m, &err) ||
      sp_propagate_module(m, &po, NULL, &err)) {
    fprintf(stderr, "bench_search: generating a %d-layer GPT: %s\n", layers, err.msg);
    sp_module_free(m);
    m = NULL;
  }
  sp_strbuf_free(&sb);
  return m;
}

/* Layer l's weights are arguments 2..5 (q, k, v, o) and 7, 8 (MLP) after 8 l; its gradients
 * are results 2 + 6 l .. 7 + 6 l, in that order. */
static sp_plan_state_pair STATE[6 * MAX_LAYERS];

static void training_opts(sp_plan_search_opts *o, const sp_cluster *c, int layers, double seconds) {
  static const int weight[6] = {2, 3, 4, 5, 7, 8};
  for (int l = 0; l < layers; l++)
    for (int k = 0; k < 6; k++) STATE[6 * l + k] = (sp_plan_state_pair){8 * l + weight[k], 2 + 6 * l + k};
  sp_plan_search_opts_init(o);
  o->cluster = c;
  o->time_limit = seconds;
  o->state = STATE;
  o->nstate = 6 * layers;
}

static sp_cluster *cluster(const char *source, const char *name) {
  char path[2048];
  snprintf(path, sizeof path, "%s/examples/clusters/%s", source, name);
  sp_cluster *c = NULL;
  sp_err err;
  if (sp_cluster_load(path, &c, &err)) fprintf(stderr, "bench_search: %s\n", err.msg);
  return c;
}

static int layers_table(const sp_cluster *one, double seconds) {
  printf("| layers | sharing | plan ms/step | Megatron ms/step | status | gap | nodes / strategies / pairs | after reduction | tie groups (nodes) | merged | wall s |\n");
  printf("|---:|---|---:|---:|---|---:|---|---|---|---:|---:|\n");
  static const int sizes[3] = {1, 4, 8};
  for (int i = 0; i < 3; i++) {
    int layers = sizes[i];
    sp_plan_search_opts o;
    training_opts(&o, one, layers, seconds);
    sp_plan_summary meg;
    sp_err err;
    sp_module *mm = gpt(layers, "data=2,model=4", SP_GEN_ANNOTATE_MEGATRON);
    if (!mm || sp_plan_evaluate_module(mm, &o, &meg, &err)) {
      if (mm) fprintf(stderr, "bench_search: megatron: %s\n", err.msg);
      sp_module_free(mm);
      return 1;
    }
    for (int share = 1; share >= 0; share--) {
      sp_module *m = gpt(layers, "data=2,model=4", SP_GEN_ANNOTATE_NONE);
      if (!m) return 1;
      o.no_share_layers = !share;
      sp_plan_summary s;
      double t0 = sp_clock_now();
      int rc = sp_plan_search_module(m, &o, &s, &err);
      double wall = sp_clock_now() - t0;
      if (rc) {
        fprintf(stderr, "bench_search: %d layers: %s\n", layers, err.msg);
        sp_module_free(m);
        return 1;
      }
      printf("| %d | %s | %.3f | %.3f | %s | %.2f%% | %d / %" PRId64 " / %" PRId64
             " | %d / %" PRId64 " / %" PRId64 " | %d (%d) | %d | %.1f |\n",
             layers, share ? "on" : "off", s.total_s * 1e3, meg.total_s * 1e3,
             sp_sg_status_name(s.status), s.gap * 100, s.nodes, s.strategies, s.pairs,
             s.red_nodes, s.red_strategies, s.red_pairs, s.ntie_groups, s.tied_nodes, s.merged,
             wall);
      fflush(stdout);
      sp_module_free(m);
    }
    sp_module_free(mm);
  }
  return 0;
}

/* The DESIGN.md target: a 96-layer GPT over 64 devices (8 machines), searched within a
 * limit that keeps the whole pass under 10 s, against Megatron on the same mesh. */
static int deep_run(const sp_cluster *c, double seconds) {
  sp_plan_search_opts o;
  training_opts(&o, c, 96, seconds);
  sp_err err;
  sp_plan_summary s, meg;
  double t0 = sp_clock_now();
  sp_module *m = gpt(96, "data=8,model=8", SP_GEN_ANNOTATE_NONE);
  double t1 = sp_clock_now();
  if (!m) return 1;
  int rc = sp_plan_search_module(m, &o, &s, &err);
  double t2 = sp_clock_now();
  if (rc) {
    fprintf(stderr, "bench_search: 96 layers: %s\n", err.msg);
    sp_module_free(m);
    return 1;
  }
  sp_module *mm = gpt(96, "data=8,model=8", SP_GEN_ANNOTATE_MEGATRON);
  if (!mm) {
    sp_module_free(m);
    return 1;
  }
  rc = sp_plan_evaluate_module(mm, &o, &meg, &err);
  if (rc) fprintf(stderr, "bench_search: 96 layers, Megatron: %s\n", err.msg);
  else {
    printf("| ops | plan ms/step | Megatron ms/step | peak GiB (plan / Megatron) | status | gap | nodes → after reduction | generate + parse + propagate s | build s | solve s |\n");
    printf("|---:|---:|---:|---|---|---:|---|---:|---:|---:|\n");
    printf("| %d | %.3f | %.3f | %.1f / %.1f | %s | %.2f%% | %d → %d | %.2f | %.2f | %.2f |\n\n",
           s.ops, s.total_s * 1e3, meg.total_s * 1e3, s.peak_memory_bytes / (1 << 30),
           meg.peak_memory_bytes / (1 << 30), sp_sg_status_name(s.status), s.gap * 100, s.nodes,
           s.red_nodes, t1 - t0, s.build_s, s.solve_s);
    printf("Search wall (build + solve): %.2f s.\n\n", t2 - t1);
  }
  sp_module_free(m);
  sp_module_free(mm);
  return rc;
}

static void print_trials(const sp_plan_summary *s) {
  for (int i = 0; i < s->ntrials; i++) {
    const sp_plan_trial *t = &s->trials[i];
    const char *role = t->chosen ? "chosen" : t->probe ? "probe" : "tried";
    const char *dev = strlen(t->devices) > 40 ? "mapped (model on NVLink)" : t->devices;
    if (t->error) printf("| %s | %s | %s | no plan | | |\n", t->shape, dev, role);
    else if (t->probe) printf("| %s | %s | %s | (uniform links) | | |\n", t->shape, dev, role);
    else
      printf("| %s | %s | %s | %.3f | %s | %" PRId64 " |\n", t->shape, dev, role, t->total_s * 1e3,
             sp_sg_status_name(t->status), t->cost);
  }
}

static int placement_run(const sp_cluster *c, const char *mesh, bool auto_devices, bool auto_shape,
                         double seconds) {
  sp_module *m = gpt(1, mesh, SP_GEN_ANNOTATE_NONE);
  if (!m) return 1;
  sp_plan_search_opts o;
  training_opts(&o, c, 1, seconds);
  sp_placement_opts po;
  sp_placement_opts_init(&po);
  po.auto_devices = auto_devices;
  po.auto_shape = auto_shape;
  sp_plan_summary s;
  sp_err err;
  double t0 = sp_clock_now();
  int rc = sp_placement_search(m, &o, &po, &s, &err);
  double wall = sp_clock_now() - t0;
  if (rc) {
    fprintf(stderr, "bench_search: placement: %s\n", err.msg);
    sp_module_free(m);
    return 1;
  }
  print_trials(&s);
  printf("\nWall %.1f s for the run (limit %.0f s). Chosen: %.3f ms per step; axes:", wall,
         seconds, s.total_s * 1e3);
  for (int i = 0; i < s.mesh->naxes; i++)
    printf(" \"%s\"=%" PRId64 " on %s (%.1f MiB sent per device)", s.mesh->axes[i].name,
           s.mesh->axes[i].size, s.axis[i].kind, s.axis_traffic[i] / (1024.0 * 1024.0));
  printf(".\n\n");
  sp_module_free(m);
  return 0;
}

int main(int argc, char **argv) {
  double seconds = 60, deep_limit = 8;
  const char *source = SP_SOURCE_DIR;
  static const struct option longopts[] = {
      {"seconds", required_argument, NULL, 's'}, {"source", required_argument, NULL, 'd'},
      {"only", required_argument, NULL, 'o'}, {"deep-limit", required_argument, NULL, 'l'},
      {0, 0, 0, 0}};
  const char *only = NULL;
  int ch;
  while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    if (ch == 's') seconds = strtod(optarg, NULL);
    else if (ch == 'd') source = optarg;
    else if (ch == 'o') only = optarg;
    else if (ch == 'l') deep_limit = strtod(optarg, NULL);
    else {
      fprintf(stderr, "usage: bench_search [--seconds S] [--source DIR] "
              "[--only layers|placement|shapes|deep] [--deep-limit S]\n");
      return 2;
    }
  }
  sp_cluster *one = cluster(source, "one_machine_8gpu.json");
  sp_cluster *four = cluster(source, "four_machines_32gpu.json");
  sp_cluster *eight = cluster(source, "eight_machines_64gpu.json");
  int rc = !one || !four || !eight;
#define RUN(name) (!rc && (!only || strcmp(only, name) == 0))
  if (RUN("layers")) {
    printf("### Layers (one 8-GPU machine, mesh data=2 x model=4; %.0f s limit per run)\n\n", seconds);
    rc = layers_table(one, seconds);
  }
  if (RUN("placement")) {
    printf("\n### Placement (one layer, four 8-GPU machines over InfiniBand, mesh model=8 x data=4)\n\n");
    printf("As given (`placement=given`):\n\n| shape | devices | role | ms/step | status | cost |\n|---|---|---|---:|---|---:|\n");
    rc = placement_run(four, "model=8,data=4", false, false, seconds);
  }
  if (RUN("placement")) {
    printf("Rank mapping (`placement=auto`):\n\n| shape | devices | role | ms/step | status | cost |\n|---|---|---|---:|---|---:|\n");
    rc = placement_run(four, "model=8,data=4", true, false, seconds);
  }
  if (RUN("shapes")) {
    printf("### Mesh shapes (one layer, one 8-GPU machine, `mesh-shape=auto`)\n\n");
    printf("| shape | devices | role | ms/step | status | cost |\n|---|---|---|---:|---|---:|\n");
    rc = placement_run(one, "data=2,model=4", true, true, seconds);
  }
  if (RUN("deep")) {
    if (deep_limit > 0)
      printf("### 96 layers over 64 devices (eight 8-GPU machines, mesh data=8 x model=8, %.0f s "
             "limit)\n\n", deep_limit);
    else
      printf("### 96 layers over 64 devices (eight 8-GPU machines, mesh data=8 x model=8, no time "
             "limit: bounded by work)\n\n");
    rc = deep_run(eight, deep_limit);
  }
  sp_cluster_free(one);
  sp_cluster_free(four);
  sp_cluster_free(eight);
  return rc;
}
