/*
 * test_plan_search.c - strategy enumeration, the search on small modules, and the GPT
 * acceptance comparisons against the Megatron plan under the same cost model.
 *
 * Modules are parsed from MLIR text (sp_mlir_parse) or generated in-process (sp_gen_*), then
 * propagated with the aggressive driver before the search, as shardplan-opt would run them.
 * No assertion depends on timing: the GPT searches run under a solver time limit, but what is
 * compared are costs and shardings.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "mlir/mlir.h"
#include "propagation/propagate.h"
#include "rules/registry.h"
#include "search/plan_search.h"
#include "search/search_pass.h"
#include "search/strategies.h"
#include "cluster_support.h"
#include "gen_support.h"
#include "test_support.h"

/* ------------------------------------------------------------------ helpers */

static sp_block *main_body(const sp_module *m) {
  sp_op *f = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(f);
  return f->regions[0].blocks[0];
}

/* The n-th top-level op of main named `name`. */
static sp_op *nth_op(const sp_module *m, const char *name, int n) {
  for (sp_op *op = main_body(m)->first; op; op = op->next)
    if (strcmp(op->name, name) == 0 && n-- == 0) return op;
  ck_abort_msg("no %s #%d", name, n);
  return NULL;
}

static const char *sharding_text(const sp_sharding *s) {
  static char buf[4][512];
  static int k;
  sp_strbuf sb = SP_STRBUF_INIT;
  if (s) sp_sharding_print(&sb, s);
  else sp_strbuf_puts(&sb, "(none)");
  char *out = buf[k++ % 4];
  snprintf(out, 512, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return out;
}

#define MESH_DM "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"

/* ------------------------------------------------------------------ strategies */

static sp_arena *A;
static sp_mesh_axis DM_AXES[2] = {{"data", 2}, {"model", 4}};
static sp_mesh DM = {2, DM_AXES, 0, NULL};

static void strat_setup(void) { A = sp_arena_new(0); }
static void strat_teardown(void) { sp_arena_free(A); }

static sp_strategy_set strategies_of(sp_op *op) {
  sp_rule *rule = NULL;
  sp_err err;
  ck_assert_int_eq(sp_rules_for_op(A, op, NULL, &rule, NULL, &err), SP_OK);
  ck_assert_ptr_nonnull(rule);
  sp_strategy_set set;
  int rc = sp_strategies_for_op(A, op, rule, &DM, NULL, &set, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return set;
}

static const char *layout_text(const sp_layout *l) {
  static char buf[4][256];
  static int k;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_layout_print(&sb, l, &DM);
  char *out = buf[k++ % 4];
  snprintf(out, 256, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return out;
}

static const char *MATMUL_FMT =
    "module {\n  " MESH_DM
    "  func.func @main(%%arg0: tensor<8x16xf32>, %%arg1: tensor<16x32xf32>) -> tensor<8x32xf32> {\n"
    "    %%0 = stablehlo.dot_general %%arg0, %%arg1, contracting_dims = [1] x [0] %s"
    ": (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>\n"
    "    return %%0 : tensor<8x32xf32>\n  }\n}\n";

static sp_module *matmul(const char *result_sharding) {
  char text[2048];
  char attr[256] = "";
  if (result_sharding)
    snprintf(attr, sizeof attr, "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, %s>]>} ",
             result_sharding);
  snprintf(text, sizeof text, MATMUL_FMT, attr);
  return sp_test_parse(text);
}

/* Strategy texts of a set, one per line, for exact comparisons. */
static const char *strategies_text(const sp_strategy_set *set, const sp_rule *rule) {
  static char buf[4096];
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int s = 0; s < set->n; s++) {
    sp_strategy_print(&sb, &set->v[s], &DM, rule);
    sp_strbuf_puts(&sb, " -> ");
    sp_layout_print(&sb, &set->v[s].results[0], &DM);
    sp_strbuf_putc(&sb, '\n');
  }
  snprintf(buf, sizeof buf, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

static sp_rule *rule_of(sp_op *op) {
  sp_rule *rule = NULL;
  sp_err err;
  ck_assert_int_eq(sp_rules_for_op(A, op, NULL, &rule, NULL, &err), SP_OK);
  return rule;
}

START_TEST(matmul_with_closed_result_sharding_keeps_it_in_every_strategy) {
  sp_module *m = matmul("[{\"data\"}, {}]");
  sp_op *dot = nth_op(m, "stablehlo.dot_general", 0);
  sp_strategy_set set = strategies_of(dot);
  /* The result must be exactly [{"data"}, {}]: "data" splits i, or splits the contracting
   * factor k and is reduce-scattered onto dim 0; "model" may only split k (all-reduced). */
  ck_assert_str_eq(strategies_text(&set, rule_of(dot)),
                   "data->i -> [{\"data\"}, {}]\n"
                   "data->i model->k, all-reduce {\"model\"} -> [{\"data\"}, {}]\n"
                   "data->k, reduce-scatter {\"data\"} onto dim 0 -> [{\"data\"}, {}]\n");
  ck_assert_int_eq(set.v[0].devices, 2);
  ck_assert_int_eq(set.v[1].devices, 8);
  ck_assert_str_eq(layout_text(&set.v[1].operands[0]), "[{\"data\"}, {\"model\"}]");
  ck_assert_str_eq(layout_text(&set.v[1].operands[1]), "[{\"model\"}, {}]");
  ck_assert_str_eq(layout_text(&set.v[2].operands[0]), "[{}, {\"data\"}]");
  sp_module_free(m);
}
END_TEST

START_TEST(matmul_with_open_result_keeps_the_given_axes_as_a_prefix) {
  sp_module *m = matmul("[{\"data\", ?}, {?}]");
  sp_op *dot = nth_op(m, "stablehlo.dot_general", 0);
  sp_strategy_set set = strategies_of(dot);
  ck_assert_str_eq(strategies_text(&set, rule_of(dot)),
                   "data->i -> [{\"data\"}, {}]\n"
                   "data->i model->i -> [{\"data\", \"model\"}, {}]\n"
                   "data->i model->j -> [{\"data\"}, {\"model\"}]\n"
                   "data->i model->k, all-reduce {\"model\"} -> [{\"data\"}, {}]\n"
                   "data->i model->k, reduce-scatter {\"model\"} onto dim 0 -> "
                   "[{\"data\", \"model\"}, {}]\n"
                   "data->i model->k, reduce-scatter {\"model\"} onto dim 1 -> "
                   "[{\"data\"}, {\"model\"}]\n"
                   "data->k, reduce-scatter {\"data\"} onto dim 0 -> [{\"data\"}, {}]\n"
                   "data->k model->j, reduce-scatter {\"data\"} onto dim 0 -> "
                   "[{\"data\"}, {\"model\"}]\n"
                   "data->k model->k, reduce-scatter {\"data\", \"model\"} onto dim 0 -> "
                   "[{\"data\", \"model\"}, {}]\n");
  sp_module_free(m);
}
END_TEST

START_TEST(unconstrained_matmul_enumerates_every_axis_to_factor_assignment) {
  sp_module *m = matmul(NULL);
  sp_strategy_set set = strategies_of(nth_op(m, "stablehlo.dot_general", 0));
  /* Each of the 2 axes on none, i, j or k: 16 assignments, all divisible. The 7 that shard k
   * also come reduce-scattered onto dim 0 or dim 1 (all divisible here): 14 more. */
  int plain = 0, scattered = 0;
  for (int s = 0; s < set.n; s++) {
    if (set.v[s].scatter_dim < 0) plain++;
    else scattered++;
  }
  ck_assert_int_eq(plain, 16);
  ck_assert_int_eq(scattered, 14);
  /* A reduce-scatter appends the reduction axes minor-most to the chosen dimension. */
  bool found = false;
  for (int s = 0; s < set.n; s++) {
    const sp_strategy *st = &set.v[s];
    if (st->scatter_dim == 1 && st->axis_factor[0] == 0 && st->axis_factor[1] == 2) {
      ck_assert_str_eq(layout_text(&st->results[0]), "[{\"data\"}, {\"model\"}]");
      found = true;
    }
  }
  ck_assert(found);
  sp_module_free(m);
}
END_TEST

START_TEST(keep_partial_variants_carry_the_reduction_axes_as_unreduced_and_pay_nothing) {
  sp_module *m = matmul(NULL);
  sp_op *dot = nth_op(m, "stablehlo.dot_general", 0);
  sp_rule *rule = rule_of(dot);
  sp_strategy_opts o = {.partial = true};
  sp_strategy_set set;
  sp_err err;
  ck_assert_int_eq(sp_strategies_for_op(A, dot, rule, &DM, &o, &set, &err), SP_OK);
  /* The 16 plain assignments and 14 reduce-scatters as without, and a keep-partial variant of
   * each of the 7 that shard k. */
  int partial = 0;
  bool found = false;
  for (int s = 0; s < set.n; s++) {
    const sp_strategy *st = &set.v[s];
    if (!st->partial) continue;
    partial++;
    ck_assert(st->nreduce > 0 && st->scatter_dim < 0);
    ck_assert_ptr_nonnull(st->reduced);
    ck_assert_int_eq(st->reduced[0].unreduced, 0);
    ck_assert(sp_layout_equal(&st->operands[0], &set.v[s - 1].operands[0]));
    if (st->axis_factor[0] == 0 && st->axis_factor[1] == 2) {
      ck_assert_str_eq(layout_text(&st->results[0]), "[{\"data\"}, {}] unreduced={\"model\"}");
      ck_assert_str_eq(layout_text(&st->reduced[0]), "[{\"data\"}, {}]");
      sp_strbuf sb = SP_STRBUF_INIT;
      sp_strategy_print(&sb, st, &DM, rule);
      ck_assert_str_eq(sp_strbuf_str(&sb), "data->i model->k, partial {\"model\"}");
      sp_strbuf_free(&sb);
      found = true;
    }
  }
  ck_assert_int_eq(partial, 7);
  ck_assert_int_eq(set.n, 16 + 14 + 7);
  ck_assert(found);
  sp_module_free(m);
}
END_TEST

START_TEST(a_partial_strategy_written_back_gives_the_value_its_unreduced_axes) {
  sp_layout *l = sp_layout_new_unsharded(A, 2);
  l->unreduced = 1u << 1;
  sp_sharding *s = sp_layout_to_sharding(A, l, &DM, "mesh", NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(s->nunreduced, 1);
  ck_assert_str_eq(s->unreduced[0].name, "model");
  ck_assert_ptr_null(s->unreduced_kind);
}
END_TEST

START_TEST(indivisible_factor_is_never_split) {
  const char *text =
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<6x16xf32>) -> tensor<6x16xf32> {\n"
      "    %0 = stablehlo.abs %arg0 : tensor<6x16xf32>\n"
      "    return %0 : tensor<6x16xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_strategy_set set = strategies_of(nth_op(m, "stablehlo.abs", 0));
  /* data: none, i (6 % 2 == 0) or j; model: none or j (6 % 4 != 0): 3 x 2 - 1 where both on
   * j is fine (16 % 8 == 0), so 6. */
  ck_assert_int_eq(set.n, 6);
  for (int s = 0; s < set.n; s++) ck_assert_int_ne(set.v[s].axis_factor[1], 0);
  sp_module_free(m);
}
END_TEST

START_TEST(a_zero_size_factor_takes_no_axes_and_the_rest_are_enumerated) {
  /* A zero-size dimension is valid (no elements): its factor takes no free axis; the other
   * dimension is split as usual (data: none or j; model: none or j; both on j: 16 % 8 == 0). */
  const char *text =
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<0x16xf32>) -> tensor<0x16xf32> {\n"
      "    %0 = stablehlo.abs %arg0 : tensor<0x16xf32>\n"
      "    return %0 : tensor<0x16xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_strategy_set set = strategies_of(nth_op(m, "stablehlo.abs", 0));
  ck_assert_int_eq(set.n, 4);
  for (int s = 0; s < set.n; s++)
    for (int a = 0; a < DM.naxes; a++) ck_assert_int_ne(set.v[s].axis_factor[a], 0);
  sp_module_free(m);
}
END_TEST

START_TEST(reshape_splits_the_major_factor_of_a_compound_dim_first) {
  const char *text =
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<8x4096xf32>) -> tensor<8x32x128xf32> {\n"
      "    %0 = stablehlo.reshape %arg0 : (tensor<8x4096xf32>) -> tensor<8x32x128xf32>\n"
      "    return %0 : tensor<8x32x128xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_strategy_set set = strategies_of(nth_op(m, "stablehlo.reshape", 0));
  bool heads = false;
  for (int s = 0; s < set.n; s++) {
    const sp_layout *in = &set.v[s].operands[0], *out = &set.v[s].results[0];
    /* The 128-wide minor factor may carry axes only when the 32 heads are split completely,
     * which 8 devices cannot do. */
    ck_assert_int_eq(sp_layout_dim_naxes(out, 2), 0);
    if (strcmp(layout_text(out), "[{}, {\"model\"}, {}]") == 0) {
      ck_assert_str_eq(layout_text(in), "[{}, {\"model\"}]");
      heads = true;
    }
  }
  ck_assert(heads);
  sp_module_free(m);
}
END_TEST

START_TEST(argument_layouts_respect_divisibility) {
  const char *text =
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {\n"
      "    return %arg0 : tensor<8x6xf32>\n  }\n}\n";
  sp_module *m = sp_test_parse(text);
  sp_strategy_set set;
  sp_err err;
  ck_assert_int_eq(sp_strategies_for_value(A, main_body(m)->args[0], &DM, NULL, &set, &err),
                   SP_OK);
  /* data: none, dim 0, dim 1; model: none, dim 0 (6 % 4 != 0). */
  ck_assert_int_eq(set.n, 6);
  for (int s = 0; s < set.n; s++) ck_assert_int_ne(set.v[s].axis_factor[1], 1);
  sp_module_free(m);
}
END_TEST

START_TEST(fixed_mode_admits_only_the_given_shardings) {
  sp_module *m = matmul("[{\"data\", ?}, {?}]");
  sp_op *dot = nth_op(m, "stablehlo.dot_general", 0);
  sp_rule *rule = NULL;
  sp_err err;
  ck_assert_int_eq(sp_rules_for_op(A, dot, NULL, &rule, NULL, &err), SP_OK);
  sp_strategy_opts o = {.fixed = true};
  sp_strategy_set set;
  ck_assert_int_eq(sp_strategies_for_op(A, dot, rule, &DM, &o, &set, &err), SP_OK);
  /* The open dim counts as closed: the result stays [{"data"}, {}]. */
  ck_assert_int_eq(set.n, 3);
  for (int s = 0; s < set.n; s++)
    ck_assert_str_eq(layout_text(&set.v[s].results[0]), "[{\"data\"}, {}]");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ search on small modules */

static sp_cluster *ONE;

static void search_setup(void) { ONE = sp_test_load_cluster("one_machine_8gpu.json"); }
static void search_teardown(void) { sp_cluster_free(ONE); }

static sp_module *generated(sp_gen_model model, int layers, int64_t hidden, int64_t batch,
                            const char *dtype, bool backward, sp_gen_annotate annotate) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = model;
  o.layers = layers;
  o.hidden = hidden;
  o.batch = batch;
  o.dtype = dtype;
  o.backward = backward;
  o.annotate = annotate;
  if (model == SP_GEN_GPT) {
    o.heads = 32;
    o.seq = 2048;
  }
  return sp_test_generate(&o);
}

static sp_plan_summary search(sp_module *m, const sp_plan_search_opts *o) {
  sp_plan_summary s;
  sp_err err;
  int rc = sp_plan_search_module(m, o, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return s;
}

START_TEST(mlp_on_one_machine_runs_data_parallel_without_communication) {
  sp_module *m = generated(SP_GEN_MLP, 2, 1024, 16, "f32", false, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s = search(m, &o);
  ck_assert_int_eq(s.status, SP_SG_OPTIMAL);
  /* Replicated weights and the batch over all 8 devices: nothing sent (the replicated input
   * is only sliced: free all_slices), the matmuls' work split 8 ways (the tanh too). */
  ck_assert(s.comm_s == 0.0);
  for (int i = 0; i < s.ncollectives; i++) {
    ck_assert_int_eq(s.collectives[i].c.kind, SP_COLL_ALL_SLICE);
    ck_assert(s.collectives[i].c.seconds == 0.0);
  }
  double flops = 2 * (2.0 * 16 * 1024 * 1024) + 2 * (16.0 * 1024);
  ck_assert_msg(fabs(s.compute_s - flops / 8 / 1.95e13) < 1e-12, "compute %g", s.compute_s);
  for (int k = 0; k < 2; k++) {
    sp_op *dot = nth_op(m, "stablehlo.dot_general", k);
    ck_assert_str_eq(sharding_text(dot->results[0].sharding),
                     "<@mesh, [{\"data\", \"model\"}, {}]>");
  }
  ck_assert_str_eq(sharding_text(main_body(m)->args[1]->sharding), "<@mesh, [{}, {}]>");
  sp_module_free(m);
}
END_TEST

START_TEST(mlp_over_a_tight_memory_limit_shards_its_weights) {
  /* Two 8192 x 8192 f32 weights are 256 MiB each; with 300 MiB per device they cannot both
   * be replicated. */
  sp_module *m = generated(SP_GEN_MLP, 2, 8192, 16, "f32", false, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.memory_limit = 300.0 * 1024 * 1024;
  sp_plan_summary s = search(m, &o);
  ck_assert_msg(s.peak_memory_bytes <= o.memory_limit, "peak %g", s.peak_memory_bytes);
  ck_assert(s.memory_limit_bytes == o.memory_limit);
  sp_block *b = main_body(m);
  ck_assert(!sp_sharding_is_unsharded(b->args[1]->sharding) ||
            !sp_sharding_is_unsharded(b->args[2]->sharding));
  ck_assert(s.comm_s > 0.0);
  /* Without the limit the same module needs no communication. */
  sp_module *m2 = generated(SP_GEN_MLP, 2, 8192, 16, "f32", false, SP_GEN_ANNOTATE_NONE);
  o.memory_limit = 0;
  sp_plan_summary free_s = search(m2, &o);
  ck_assert(free_s.comm_s == 0.0);
  ck_assert_int_lt(free_s.cost, s.cost);
  sp_module_free(m);
  sp_module_free(m2);
}
END_TEST

START_TEST(nothing_fitting_the_memory_is_an_error) {
  sp_module *m = generated(SP_GEN_MLP, 1, 1024, 16, "f32", false, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.memory_limit = 1024;   /* 1 KiB */
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no valid plan") != NULL, "%s", err.msg);
  sp_module_free(m);
}
END_TEST

START_TEST(tensor_beyond_what_the_solver_counts_is_an_error_naming_it) {
  /* 2^60 f32 elements: 2^62 bytes fit in int64, 2^59 bytes per device over 8 devices do not
   * fit the solver's exact 2^53. */
  sp_module *m = sp_test_parse(
      "sdy.mesh @mesh = <[\"data\"=8]>\n"
      "func.func @main(%big: tensor<1073741824x1073741824xf32>) -> tensor<1073741824x1073741824xf32> {\n"
      "  %0 = stablehlo.negate %big : tensor<1073741824x1073741824xf32>\n"
      "  return %0 : tensor<1073741824x1073741824xf32>\n"
      "}\n");
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_ELIMIT);
  ck_assert_msg(strstr(err.msg, "%big") && strstr(err.msg, "2^53"), "%s", err.msg);
  sp_module_free(m);
}
END_TEST

/* A cost model handed a link the cluster reader refuses (a negative bandwidth, one that is
 * not a number) gives NaN collective costs: the search names the value and the number instead
 * of rounding it to 0 units (which would plan the worst layout as free). */
START_TEST(nan_cost_is_an_error_naming_the_value) {
  static const char text[] =
      "sdy.mesh @mesh = <[\"data\"=8]>\n"
      "func.func @main(%w: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, "
      "[{\"data\"}, {}]>}) -> tensor<1024x1024xf32> {\n"
      "  %0 = stablehlo.transpose %w, dims = [1, 0] : (tensor<1024x1024xf32>) -> "
      "tensor<1024x1024xf32>\n"
      "  return %0 : tensor<1024x1024xf32>\n"
      "}\n";
  for (int bad = 0; bad < 2; bad++) {
    sp_module *m = sp_test_parse(text);
    sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
    c->machines[0].link.bandwidth = bad == 0 ? -1e9 : NAN;
    sp_plan_search_opts o;
    sp_plan_search_opts_init(&o);
    o.cluster = c;
    sp_plan_summary s;
    sp_err err;
    ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_EINTERNAL);
    ck_assert_msg(strstr(err.msg, "search: the resharding cost (ns) of %") &&
                  strstr(err.msg, " is nan, not a number: the cost model gave no valid number"),
                  "%s", err.msg);
    sp_cluster_free(c);
    sp_module_free(m);
  }
}
END_TEST

static const char *TRAIN_STEP =
    "module {\n  " MESH_DM
    "  func.func @main(%%arg0: tensor<512x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"data\", \"model\"}, {}]>}, %%arg1: tensor<1024x1024xf32>%s) -> "
    "(tensor<512x1024xf32>, tensor<1024x1024xf32>) {\n"
    "    %%0 = stablehlo.dot_general %%arg0, %%arg1, contracting_dims = [1] x [0] : "
    "(tensor<512x1024xf32>, tensor<1024x1024xf32>) -> tensor<512x1024xf32>\n"
    "    %%1 = stablehlo.dot_general %%arg0, %%0, contracting_dims = [0] x [0] : "
    "(tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>\n"
    "    return %%0, %%1 : tensor<512x1024xf32>, tensor<1024x1024xf32>\n  }\n}\n";

static sp_module *train_step(bool aliasing) {
  char text[2048];
  snprintf(text, sizeof text, TRAIN_STEP, aliasing ? " {tf.aliasing_output = 1 : i32}" : "");
  return sp_test_parse(text);
}

START_TEST(state_pair_brings_the_gradient_back_to_its_weights_layout) {
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_module *free_m = train_step(false);
  sp_plan_summary free_s = search(free_m, &o);
  sp_block *b = main_body(free_m);
  sp_value *grad = &nth_op(free_m, "stablehlo.dot_general", 1)->results[0];
  /* The batch is split 8 ways by the user: the weight gradient is a partial sum over it.
   * Unconstrained, the gradient stays reduce-scattered while the weight is replicated. */
  ck_assert_str_ne(sharding_text(grad->sharding), sharding_text(b->args[1]->sharding));

  sp_plan_state_pair pair = {1, 1};
  o.state = &pair;
  o.nstate = 1;
  sp_module *m = train_step(false);
  sp_plan_summary s = search(m, &o);
  b = main_body(m);
  grad = &nth_op(m, "stablehlo.dot_general", 1)->results[0];
  /* The gradient goes back in the weight's layout, and what runs for it is one all-reduce over
   * the batch's "data" at the product, nothing at the return. (Written as all-reduced, or as
   * reduce-scattered and resharded back at the return, the export folds the two reshards into
   * none: both plans run exactly this, and cost the same.) */
  sp_err err;
  ck_assert_int_eq(sp_plan_insert_operand_reshards(m, &s, &err), SP_OK);
  sp_op *f = sp_module_lookup_func(m, "main");
  ck_assert_str_eq(sharding_text(f->func->result_shardings[1]), sharding_text(b->args[1]->sharding));
  int on_grad = 0;
  for (int i = 0; i < s.ncollectives; i++) {
    const sp_search_collective *c = &s.collectives[i];
    if (c->value_ref != grad) continue;
    on_grad++;
    ck_assert_int_eq(c->c.kind, SP_COLL_ALL_REDUCE);
    ck_assert_str_eq(c->axes, "\"data\"");
    ck_assert_ptr_eq(c->op_ref, grad->def);
  }
  ck_assert_int_eq(on_grad, 1);
  ck_assert_int_ge(s.cost, free_s.cost);

  /* The same pair declared in the module. */
  o.state = NULL;
  o.nstate = 0;
  sp_module *am = train_step(true);
  sp_plan_summary as = search(am, &o);
  ck_assert_int_eq(as.cost, s.cost);
  sp_module_free(free_m);
  sp_module_free(m);
  sp_module_free(am);
}
END_TEST

START_TEST(a_mesh_without_axes_does_not_compete_for_the_mesh_to_plan) {
  /* JAX emits `sdy.mesh @empty_mesh = <[]>` beside the real mesh (for scalars); with no mesh
   * named, the search plans the one mesh that has axes. */
  sp_module *m = sp_test_parse(
      "module {\n  " MESH_DM
      "  sdy.mesh @empty_mesh = <[]>\n"
      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    return %arg0 : tensor<8xf32>\n  }\n}\n");
  sp_err err;
  sp_err_clear(&err);
  sp_op *op = sp_plan_mesh_op(m, NULL, &err);
  ck_assert_msg(op != NULL, "%s", err.msg);
  ck_assert_str_eq(sp_op_get_str(op, "sym_name"), "mesh");
  sp_module_free(m);
}
END_TEST

START_TEST(follower_of_an_argument_pays_for_resharding_its_other_operand) {
  /* The add keeps %arg0's sharding, so it joins %arg0's node; %arg1 arrives with "model" on
   * the other dimension and has to be moved. */
  sp_module *m = sp_test_parse(
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, "
      "[{}, {\"model\"}]>}, %arg1: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, "
      "[{\"model\"}, {}]>}) -> tensor<1024x1024xf32> {\n"
      "    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, "
      "[{}, {\"model\"}]>]>} : tensor<1024x1024xf32>\n"
      "    return %0 : tensor<1024x1024xf32>\n  }\n}\n");
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s = search(m, &o);
  ck_assert_int_eq(s.followers, 1);
  ck_assert_int_eq(s.nodes, 2);
  ck_assert_int_eq(s.ncollectives, 1);
  ck_assert_int_eq(s.collectives[0].c.kind, SP_COLL_ALL_TO_ALL);
  ck_assert_str_eq(s.collectives[0].op, "stablehlo.add");
  ck_assert_int_eq(s.collectives[0].operand, 1);
  ck_assert_str_eq(s.collectives[0].value, "%arg1");
  ck_assert_str_eq(s.collectives[0].axes, "\"model\"");
  double want = 2e-6 + (3.0 / 16.0) * 4.0 * 1024 * 1024 / 3.0e11;
  ck_assert_msg(fabs(s.reshard_s - want) < 1e-12, "reshard %g, want %g", s.reshard_s, want);
  sp_module_free(m);
}
END_TEST

START_TEST(follower_of_an_argument_lets_the_other_operand_choose_that_arguments_layout) {
  /* Nothing fixes %arg0; the add (open, like %arg0) joins %arg0's node, and the only way to
   * avoid moving %arg1 is a layout of %arg0 that starts dimension 0 with "model". */
  sp_module *m = sp_test_parse(
      "module {\n  " MESH_DM
      "  func.func @main(%arg0: tensor<1024x1024xf32>, %arg1: tensor<1024x1024xf32> "
      "{sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>}) -> tensor<1024x1024xf32> {\n"
      "    %0 = stablehlo.add %arg0, %arg1 : tensor<1024x1024xf32>\n"
      "    return %0 : tensor<1024x1024xf32>\n  }\n}\n");
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s = search(m, &o);
  ck_assert_int_eq(s.followers, 1);
  ck_assert(s.comm_s == 0.0);
  const sp_sharding *a0 = main_body(m)->args[0]->sharding;
  ck_assert_int_ge(a0->dims[0].naxes, 1);
  ck_assert_str_eq(a0->dims[0].axes[0].name, "model");
  sp_module_free(m);
}
END_TEST

START_TEST(search_shards_every_ranked_value_and_the_result_prints_and_parses) {
  sp_module *m = generated(SP_GEN_MLP, 2, 1024, 16, "f32", false, SP_GEN_ANNOTATE_DATA);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  search(m, &o);
  sp_block *b = main_body(m);
  for (int i = 0; i < b->nargs; i++) ck_assert_ptr_nonnull(b->args[i]->sharding);
  for (sp_op *op = b->first; op; op = op->next)
    for (int r = 0; r < op->nresults; r++)
      if (op->results[r].type->rank > 0) ck_assert_ptr_nonnull(op->results[r].sharding);
  /* The closed user sharding of the input survives. */
  ck_assert_str_eq(sharding_text(b->args[0]->sharding), "<@mesh, [{\"data\"}, {}]>");
  sp_op *f = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(f->func->result_shardings[0]);
  char *text = sp_test_print(m);
  sp_module *again = sp_test_parse(text);
  char *text2 = sp_test_print(again);
  ck_assert_str_eq(text, text2);
  free(text);
  free(text2);
  sp_module_free(again);
  sp_module_free(m);
}
END_TEST

START_TEST(same_input_gives_the_same_plan) {
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  char *texts[2];
  for (int k = 0; k < 2; k++) {
    sp_module *m = train_step(true);
    search(m, &o);
    texts[k] = sp_test_print(m);
    sp_module_free(m);
  }
  ck_assert_str_eq(texts[0], texts[1]);
  free(texts[0]);
  free(texts[1]);
}
END_TEST

START_TEST(evaluate_prices_the_given_shardings_and_changes_nothing) {
  sp_module *m = generated(SP_GEN_MLP, 1, 1024, 16, "f32", false, SP_GEN_ANNOTATE_MEGATRON);
  char *before = sp_test_print(m);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_evaluate_module(m, &o, &s, &err), SP_OK);
  char *after = sp_test_print(m);
  ck_assert_str_eq(before, after);
  /* The megatron annotation splits the weight's columns on "model" and the batch on "data":
   * the tanh runs on 8-way split data, the matmul needs no collective. */
  ck_assert(s.collective_s == 0.0);
  double flops = 2.0 * 16 * 1024 * 1024 + 16.0 * 1024;
  ck_assert_msg(fabs(s.compute_s - flops / 8 / 1.95e13) < 1e-12, "compute %g", s.compute_s);
  free(before);
  free(after);
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ errors and the pass */

START_TEST(a_value_of_unknown_size_is_an_error_not_zero_bytes) {
  sp_module *m = sp_test_parse(
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func @main(%a: tensor<8x16xf32>) -> tensor<?x16xf32> {\n"
      "  %0 = stablehlo.convert %a : (tensor<8x16xf32>) -> tensor<?x16xf32>\n"
      "  return %0 : tensor<?x16xf32>\n}\n");
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_EUNSUPPORTED);
  ck_assert_str_eq(err.msg, "search: %0 has the type tensor<?x16xf32>, whose size is not known; "
                   "the cost search needs static shapes");
  sp_module_free(m);
}
END_TEST

START_TEST(module_without_a_mesh_is_an_error) {
  sp_module *m = sp_test_parse(
      "module {\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    return %arg0 : tensor<8xf32>\n  }\n}\n");
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_plan_search_module(m, &o, &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "t.mlir: the module has no sdy.mesh; the search needs one");
  sp_module_free(m);
}
END_TEST

START_TEST(pass_options_are_checked_by_name) {
  sp_module *m = matmul(NULL);
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_search_pass(m, "time-limit=5", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: cluster=FILE is required");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json speed=3", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: unknown option 'speed' (known: cluster, mesh, "
                   "time-limit, gap, work-limit, seed, devices, state, max-strategies, "
                   "mem-weight, memory-limit, coarsen, reduce-scatter, partial-sums, share-layers, "
                       "placement, "
                   "mesh-shape, num-devices, mesh-axes, report, dump-graph)");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json gap", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: option 'gap' has no '=VALUE'");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json coarsen=maybe", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: coarsen=maybe is not true or false");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json placement=some", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: placement=some is not auto or given");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json num-devices=2.5", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: num-devices=2.5 is not a device count");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json gap=-1", &s, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-shardplan-search: gap=-1 is not a number >= 0");
  ck_assert_int_eq(sp_search_pass(m, "cluster=x.json state=1", &s, &err), SP_EINVAL);
  ck_assert_msg(strstr(err.msg, "ARG:RESULT") != NULL, "%s", err.msg);
  sp_module_free(m);
}
END_TEST

START_TEST(pass_runs_against_a_cluster_file_with_a_device_placement) {
  sp_module *m = train_step(false);
  char opts[1024];
  snprintf(opts, sizeof opts,
           "cluster=%s/examples/clusters/four_machines_32gpu.json devices=0,1,2,3,8,9,10,11 "
           "state=1:1 time-limit=5", SP_SOURCE_DIR);
  sp_plan_summary s;
  sp_err err;
  int rc = sp_search_pass(m, opts, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  ck_assert_int_eq(s.ndevices, 8);
  ck_assert_int_eq(s.device_of[4], 8);
  ck_assert_str_eq(s.axis[0].kind, "infiniband");
  ck_assert_str_eq(s.axis[1].kind, "nvlink");
  /* The report forms. */
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_plan_summary_print(&sb, &s);
  ck_assert_msg(strstr(sp_strbuf_str(&sb), "shardplan-search: compute ") != NULL, "%s",
                sp_strbuf_str(&sb));
  ck_assert(strstr(sp_strbuf_str(&sb), "solver optimal") != NULL);
  sp_strbuf_free(&sb);
  cJSON *j = sp_plan_summary_to_json(&s);
  ck_assert_ptr_nonnull(j);
  const cJSON *ax0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "mesh"), "axes"), 0);
  ck_assert_str_eq(cJSON_GetObjectItem(ax0, "name")->valuestring, "data");
  ck_assert_str_eq(cJSON_GetObjectItem(ax0, "link")->valuestring, "infiniband");
  ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "solver"), "status")->valuestring,
                   "optimal");
  sp_module_free(m);
  cJSON_Delete(j);
}
END_TEST

/* ------------------------------------------------------------------ GPT acceptance */

/* The GPT layer of the acceptance: hidden 4096, 32 heads, sequence 2048, batch 8, bf16, mesh
 * data=2 x model=4, forward and backward (a training step). Its results are the layer output,
 * the input gradient and the weight gradients of q, k, v, o, mlp1, mlp2, whose weights are
 * arguments 2, 3, 4, 5, 7, 8: the gradients come back in their weights' layouts. */
static const sp_plan_state_pair GPT_STATE[6] = {{2, 2}, {3, 3}, {4, 4}, {5, 5}, {7, 6}, {8, 7}};

static sp_module *gpt_layer(bool backward, sp_gen_annotate annotate) {
  return generated(SP_GEN_GPT, 1, 4096, 8, "bf16", backward, annotate);
}

typedef struct gpt_costs {
  sp_plan_summary searched, megatron;
} gpt_costs;

static gpt_costs compare_with_megatron(sp_module *searched, const sp_plan_search_opts *o) {
  gpt_costs c;
  c.searched = search(searched, o);
  sp_module *mega = gpt_layer(o->nstate > 0, SP_GEN_ANNOTATE_MEGATRON);
  sp_err err;
  int rc = sp_plan_evaluate_module(mega, o, &c.megatron, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  sp_module_free(mega);
  printf("  searched %.4f ms (compute %.4f, comm %.4f, cost %lld, %s), megatron %.4f ms "
         "(compute %.4f, comm %.4f, cost %lld)\n",
         c.searched.total_s * 1e3, c.searched.compute_s * 1e3, c.searched.comm_s * 1e3,
         (long long)c.searched.cost, sp_sg_status_name(c.searched.status),
         c.megatron.total_s * 1e3, c.megatron.compute_s * 1e3, c.megatron.comm_s * 1e3,
         (long long)c.megatron.cost);
  return c;
}

static void gpt_opts(sp_plan_search_opts *o, const sp_cluster *c, bool training) {
  sp_plan_search_opts_init(o);
  o->cluster = c;
  o->time_limit = 10;
  if (training) {
    o->state = GPT_STATE;
    o->nstate = 6;
  }
}

START_TEST(gpt_forward_layer_search_beats_megatron_on_one_machine) {
  sp_module *m = gpt_layer(false, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  gpt_opts(&o, ONE, false);
  gpt_costs c = compare_with_megatron(m, &o);
  ck_assert_int_le(c.searched.cost, c.megatron.cost);
  /* Inference has no weight gradients: splitting the batch 8 ways needs no collective, which
   * Megatron's two all-reduces cannot match. */
  ck_assert(c.searched.comm_s == 0.0);
  ck_assert(c.megatron.comm_s > 0.0);
  sp_module_free(m);
}
END_TEST

START_TEST(gpt_training_layer_on_one_machine_is_never_worse_than_megatron) {
  sp_module *m = gpt_layer(true, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  gpt_opts(&o, ONE, true);
  gpt_costs c = compare_with_megatron(m, &o);
  ck_assert_int_le(c.searched.cost, c.megatron.cost);
  ck_assert(c.searched.total_s <= c.megatron.total_s + 1e-6);
  ck_assert_int_eq(c.searched.fixed_nodes, 0);
  ck_assert_int_eq(c.megatron.fixed_nodes, 0);
  sp_module_free(m);
}
END_TEST

START_TEST(gpt_training_layer_with_data_across_machines_recovers_megatron_splits) {
  sp_cluster *four = sp_test_load_cluster("four_machines_32gpu.json");
  /* "data" crosses machines 0 and 1 (network), "model" stays inside each (NVLink). */
  static const int64_t dev[8] = {0, 1, 2, 3, 8, 9, 10, 11};
  sp_module *m = gpt_layer(true, SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  gpt_opts(&o, four, true);
  o.device_of = dev;
  gpt_costs c = compare_with_megatron(m, &o);
  ck_assert_int_le(c.searched.cost, c.megatron.cost);
  sp_block *b = main_body(m);
  /* Batch on "data"; q, k, v and the first MLP matmul column-split on "model", the output
   * projection and the second MLP matmul row-split. */
  ck_assert_str_eq(sharding_text(b->args[0]->sharding), "<@mesh, [{\"data\"}, {}, {}]>");
  ck_assert_str_eq(sharding_text(b->args[2]->sharding), "<@mesh, [{}, {\"model\"}]>");
  ck_assert_str_eq(sharding_text(b->args[3]->sharding), "<@mesh, [{}, {\"model\"}]>");
  ck_assert_str_eq(sharding_text(b->args[4]->sharding), "<@mesh, [{}, {\"model\"}]>");
  ck_assert_str_eq(sharding_text(b->args[5]->sharding), "<@mesh, [{\"model\"}, {}]>");
  ck_assert_str_eq(sharding_text(b->args[7]->sharding), "<@mesh, [{}, {\"model\"}]>");
  ck_assert_str_eq(sharding_text(b->args[8]->sharding), "<@mesh, [{\"model\"}, {}]>");
  /* Attention split by heads: the scores matmul (the 4th dot_general) keeps heads on
   * "model". */
  sp_op *scores = nth_op(m, "stablehlo.dot_general", 3);
  ck_assert_int_eq(scores->results[0].type->rank, 4);
  ck_assert_str_eq(sharding_text(scores->results[0].sharding),
                   "<@mesh, [{\"data\"}, {\"model\"}, {}, {}]>");
  sp_module_free(m);
  sp_cluster_free(four);
}
END_TEST

static Suite *plan_search_suite(void) {
  Suite *s = suite_create("plan_search");
  TCase *tc = tcase_create("strategies");
  tcase_add_checked_fixture(tc, strat_setup, strat_teardown);
  tcase_add_test(tc, matmul_with_closed_result_sharding_keeps_it_in_every_strategy);
  tcase_add_test(tc, matmul_with_open_result_keeps_the_given_axes_as_a_prefix);
  tcase_add_test(tc, unconstrained_matmul_enumerates_every_axis_to_factor_assignment);
  tcase_add_test(tc, keep_partial_variants_carry_the_reduction_axes_as_unreduced_and_pay_nothing);
  tcase_add_test(tc, a_partial_strategy_written_back_gives_the_value_its_unreduced_axes);
  tcase_add_test(tc, indivisible_factor_is_never_split);
  tcase_add_test(tc, a_zero_size_factor_takes_no_axes_and_the_rest_are_enumerated);
  tcase_add_test(tc, reshape_splits_the_major_factor_of_a_compound_dim_first);
  tcase_add_test(tc, argument_layouts_respect_divisibility);
  tcase_add_test(tc, fixed_mode_admits_only_the_given_shardings);
  suite_add_tcase(s, tc);
  tc = tcase_create("search");
  tcase_add_checked_fixture(tc, search_setup, search_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, mlp_on_one_machine_runs_data_parallel_without_communication);
  tcase_add_test(tc, mlp_over_a_tight_memory_limit_shards_its_weights);
  tcase_add_test(tc, nothing_fitting_the_memory_is_an_error);
  tcase_add_test(tc, tensor_beyond_what_the_solver_counts_is_an_error_naming_it);
  tcase_add_test(tc, nan_cost_is_an_error_naming_the_value);
  tcase_add_test(tc, state_pair_brings_the_gradient_back_to_its_weights_layout);
  tcase_add_test(tc, follower_of_an_argument_pays_for_resharding_its_other_operand);
  tcase_add_test(tc, follower_of_an_argument_lets_the_other_operand_choose_that_arguments_layout);
  tcase_add_test(tc, search_shards_every_ranked_value_and_the_result_prints_and_parses);
  tcase_add_test(tc, same_input_gives_the_same_plan);
  tcase_add_test(tc, evaluate_prices_the_given_shardings_and_changes_nothing);
  tcase_add_test(tc, module_without_a_mesh_is_an_error);
  tcase_add_test(tc, a_value_of_unknown_size_is_an_error_not_zero_bytes);
  tcase_add_test(tc, pass_options_are_checked_by_name);
  tcase_add_test(tc, pass_runs_against_a_cluster_file_with_a_device_placement);
  suite_add_tcase(s, tc);
  tc = tcase_create("gpt");
  tcase_add_checked_fixture(tc, search_setup, search_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, gpt_forward_layer_search_beats_megatron_on_one_machine);
  tcase_add_test(tc, gpt_training_layer_on_one_machine_is_never_worse_than_megatron);
  tcase_add_test(tc, a_mesh_without_axes_does_not_compete_for_the_mesh_to_plan);
  tcase_add_test(tc, gpt_training_layer_with_data_across_machines_recovers_megatron_splits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(plan_search_suite()); }
