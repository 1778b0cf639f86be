/*
 * test_layer_sharing.c - the search ties structurally identical repeated layers to one
 * strategy choice (plan_search.c, "layer sharing").
 *
 * Models are generated in-process (sp_gen_*) or parsed from MLIR text, propagated with the
 * aggressive driver and searched on the one-machine 8-GPU cluster. What is checked: which
 * ops end up in a tie group, that every group's members come out with the same sharding,
 * and costs against the Megatron plan. The 8-layer figures are printed, never asserted on
 * time.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "mlir/mlir.h"
#include "propagation/propagate.h"
#include "search/plan_search.h"
#include "search/search_pass.h"
#include "cluster_support.h"
#include "gen_support.h"
#include "test_support.h"

/* ------------------------------------------------------------------ helpers */

static sp_cluster *ONE;

static void setup(void) { ONE = sp_test_load_cluster("one_machine_8gpu.json"); }
static void teardown(void) { sp_cluster_free(ONE); }

static sp_module *parse_and_propagate(const char *text) {
  sp_module *m = sp_test_parse(text);
  sp_test_propagate(m);
  return m;
}

static sp_module *gpt(int layers, int64_t hidden, int64_t heads, int64_t seq, bool backward,
                      sp_gen_annotate annotate) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = SP_GEN_GPT;
  o.layers = layers;
  o.hidden = hidden;
  o.heads = heads;
  o.seq = seq;
  o.batch = 8;
  o.dtype = "bf16";
  o.backward = backward;
  o.annotate = annotate;
  return sp_test_generate(&o);
}

static sp_plan_summary search(sp_module *m, bool share) {
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.time_limit = 10;
  o.no_share_layers = !share;
  sp_plan_summary s;
  sp_err err;
  int rc = sp_plan_search_module(m, &o, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return s;
}

static sp_op *nth_op(const sp_module *m, const char *name, int n) {
  sp_op *f = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(f);
  int want = n;
  for (sp_op *op = f->regions[0].blocks[0]->first; op; op = op->next)
    if (strcmp(op->name, name) == 0 && n-- == 0) return op;
  ck_abort_msg("no %s #%d", name, want);
  return NULL;
}

static const char *sharding_text(const sp_sharding *s, char *buf, size_t cap) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (s) sp_sharding_print(&sb, s);
  else sp_strbuf_puts(&sb, "(none)");
  snprintf(buf, cap, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

/* The tie group holding value v, or -1. */
static int group_of(const sp_plan_summary *s, const sp_value *v) {
  for (int g = 0; g < s->ntie_groups; g++)
    for (int k = 0; k < s->ties[g].n; k++)
      if (s->ties[g].values[k] == v) return g;
  return -1;
}

/* Every member of every group carries the same sharding; returns the largest group. */
static int check_groups_share_shardings(const sp_plan_summary *s) {
  int largest = 0, tied = 0;
  for (int g = 0; g < s->ntie_groups; g++) {
    const sp_plan_tie_group *tg = &s->ties[g];
    ck_assert_int_ge(tg->n, 2);
    tied += tg->n;
    if (tg->n > largest) largest = tg->n;
    char a[512], b[512];
    sharding_text(tg->values[0]->sharding, a, sizeof a);
    for (int k = 1; k < tg->n; k++)
      ck_assert_str_eq(sharding_text(tg->values[k]->sharding, b, sizeof b), a);
  }
  ck_assert_int_eq(tied, s->tied_nodes);
  return largest;
}

/* Forward GPT: 8 dot_generals per layer: q, k, v, scores, context, output, mlp1, mlp2. */
enum { DOTS_PER_LAYER = 8, Q = 0, K = 1, V = 2, MLP1 = 6, MLP2 = 7 };

static const sp_value *dot_of(const sp_module *m, int layer, int which) {
  return &nth_op(m, "stablehlo.dot_general", layer * DOTS_PER_LAYER + which)->results[0];
}

/* ------------------------------------------------------------------ tests */

START_TEST(gpt_4_layers_ties_repeated_layers_and_every_group_ends_with_one_sharding) {
  sp_module *m = gpt(4, 256, 8, 64, false, SP_GEN_ANNOTATE_NONE);
  sp_plan_summary s = search(m, true);
  printf("  4-layer GPT: %d tie groups, %d tied nodes, %d nodes, %d edges\n", s.ntie_groups,
         s.tied_nodes, s.nodes, s.edges);
  ck_assert_int_gt(s.ntie_groups, 0);
  /* Each op is tied with the ops of the other layers that are beyond the hash's reach of the
   * model's ends: q projections of layers 1-3 (layer 0's sees the input argument), first
   * MLP matmuls of layers 0-2 (layer 3's sees the return). The output projection and the
   * second MLP matmul sit on the residual chain, where layers are only two hops apart, so in
   * 4 layers each still sees an end; deeper models tie them too. */
  for (int which = 0; which < 2; which++) {
    int w = which ? MLP1 : Q, first = which ? 0 : 1;
    int g = group_of(&s, dot_of(m, first, w));
    ck_assert_int_ge(g, 0);
    ck_assert_int_eq(group_of(&s, dot_of(m, first + 1, w)), g);
    ck_assert_int_eq(group_of(&s, dot_of(m, first + 2, w)), g);
    ck_assert_int_eq(s.ties[g].n, 3);
  }
  ck_assert_int_ge(check_groups_share_shardings(&s), 3);
  /* Every member beyond the first of each group is merged into it by the solver's
   * reduction: one variable per group. */
  ck_assert_int_ge(s.merged, s.tied_nodes - s.ntie_groups);
  ck_assert_int_lt(s.red_nodes, s.nodes - (s.tied_nodes - s.ntie_groups) + 1);
  /* The summary reports the groups. */
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_plan_summary_print(&sb, &s);
  char want[96];
  snprintf(want, sizeof want, "layer sharing: %d tie groups, %d tied nodes", s.ntie_groups,
           s.tied_nodes);
  ck_assert_msg(strstr(sp_strbuf_str(&sb), want) != NULL, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  sp_module_free(m);
}
END_TEST

START_TEST(q_k_v_projections_and_the_two_mlp_matmuls_of_one_layer_are_not_tied) {
  sp_module *m = gpt(4, 256, 8, 64, false, SP_GEN_ANNOTATE_NONE);
  sp_plan_summary s = search(m, true);
  for (int layer = 0; layer < 4; layer++) {
    int q = group_of(&s, dot_of(m, layer, Q));
    int k = group_of(&s, dot_of(m, layer, K));
    int v = group_of(&s, dot_of(m, layer, V));
    int f1 = group_of(&s, dot_of(m, layer, MLP1));
    int f2 = group_of(&s, dot_of(m, layer, MLP2));
    /* q feeds the scores matmul as operand 0, k as operand 1, v the context matmul: three
     * hops downstream, inside the hash's reach. */
    if (q >= 0) ck_assert(q != k && q != v);
    if (k >= 0) ck_assert(k != v);
    if (f1 >= 0) ck_assert(f1 != f2);
  }
  sp_module_free(m);
}
END_TEST

START_TEST(gpt_training_forward_and_backward_matmuls_are_never_in_one_group) {
  sp_module *m = gpt(3, 256, 8, 64, true, SP_GEN_ANNOTATE_NONE);
  sp_plan_summary s = search(m, true);
  ck_assert_int_gt(s.ntie_groups, 0);
  check_groups_share_shardings(&s);
  /* The forward pass is the first 3 * 8 dot_generals; everything after is backward. */
  int nforward = 3 * DOTS_PER_LAYER;
  sp_op *f = sp_module_lookup_func(m, "main");
  int di = 0, *kind = calloc((size_t)s.ntie_groups, sizeof *kind); /* bit 1 fwd, bit 2 bwd */
  for (sp_op *op = f->regions[0].blocks[0]->first; op; op = op->next) {
    if (strcmp(op->name, "stablehlo.dot_general") != 0) continue;
    int g = group_of(&s, &op->results[0]);
    if (g >= 0) kind[g] |= di < nforward ? 1 : 2;
    di++;
  }
  ck_assert_int_gt(di, nforward);
  int mixed = 0, backward_groups = 0;
  for (int g = 0; g < s.ntie_groups; g++) {
    mixed += kind[g] == 3;
    backward_groups += kind[g] == 2;
  }
  free(kind);
  ck_assert_int_eq(mixed, 0);
  ck_assert_int_gt(backward_groups, 0);
  sp_module_free(m);
}
END_TEST

/* An MLP of 8 layers 64 wide, one 64 -> 128, then 8 layers 128 wide (dot + tanh each). */
static sp_module *two_width_mlp(void) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "module {\n  sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
                      "  func.func @main(%x: tensor<16x64xf32>");
  for (int l = 0; l < 17; l++) {
    int in = l <= 8 ? 64 : 128, out = l < 8 ? 64 : 128;
    sp_strbuf_printf(&sb, ", %%w%d: tensor<%dx%dxf32>", l, in, out);
  }
  sp_strbuf_puts(&sb, ") -> tensor<16x128xf32> {\n");
  const char *prev = "x";
  char name[2][16];
  for (int l = 0; l < 17; l++) {
    int in = l <= 8 ? 64 : 128, out = l < 8 ? 64 : 128;
    char *d = name[l % 2];
    snprintf(d, 16, "t%d", l);
    sp_strbuf_printf(&sb, "    %%d%d = stablehlo.dot_general %%%s, %%w%d, contracting_dims = "
                     "[1] x [0] : (tensor<16x%dxf32>, tensor<%dx%dxf32>) -> tensor<16x%dxf32>\n",
                     l, prev, l, in, in, out, out);
    sp_strbuf_printf(&sb, "    %%%s = stablehlo.tanh %%d%d : tensor<16x%dxf32>\n", d, l, out);
    prev = d;
  }
  sp_strbuf_printf(&sb, "    return %%%s : tensor<16x128xf32>\n  }\n}\n", prev);
  sp_module *m = parse_and_propagate(sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return m;
}

START_TEST(mlp_layers_of_different_widths_are_never_tied_together) {
  sp_module *m = two_width_mlp();
  sp_plan_summary s = search(m, true);
  check_groups_share_shardings(&s);
  bool narrow = false, wide = false;
  for (int g = 0; g < s.ntie_groups; g++) {
    const sp_plan_tie_group *tg = &s.ties[g];
    const sp_type *t0 = tg->values[0]->type;
    for (int k = 1; k < tg->n; k++) {
      const sp_type *t = tg->values[k]->type;
      ck_assert_int_eq(t->rank, t0->rank);
      for (int d = 0; d < t->rank; d++) ck_assert_int_eq(t->dims[d], t0->dims[d]);
    }
    if (tg->values[0]->def && tg->values[0]->def->kind == SP_OP_DOT_GENERAL) {
      narrow |= t0->dims[1] == 64;
      wide |= t0->dims[1] == 128;
    }
  }
  /* Both runs of identical layers do get their own ties. */
  ck_assert(narrow);
  ck_assert(wide);
  sp_module_free(m);
}
END_TEST

START_TEST(share_layers_option_turns_the_ties_off) {
  sp_module *m = gpt(2, 256, 8, 64, false, SP_GEN_ANNOTATE_NONE);
  char path[1024];
  snprintf(path, sizeof path, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "share-layers=false", SP_SOURCE_DIR);
  sp_plan_summary s;
  sp_err err;
  ck_assert_int_eq(sp_search_pass(m, path, &s, &err), SP_OK);
  ck_assert_int_eq(s.ntie_groups, 0);
  ck_assert_int_eq(s.tied_nodes, 0);
  sp_module_free(m);
  m = gpt(2, 256, 8, 64, false, SP_GEN_ANNOTATE_NONE);
  snprintf(path, sizeof path, "cluster=%s/examples/clusters/one_machine_8gpu.json "
           "share-layers=maybe", SP_SOURCE_DIR);
  ck_assert_int_eq(sp_search_pass(m, path, &s, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "share-layers"));
  sp_module_free(m);
}
END_TEST

/* Megatron is layer-symmetric, so the tied search can reach it and must not do worse. */
START_TEST(gpt_4_layers_tied_search_is_never_worse_than_megatron) {
  sp_module *m = gpt(4, 1024, 16, 512, false, SP_GEN_ANNOTATE_NONE);
  sp_plan_summary s = search(m, true);
  sp_module *mega = gpt(4, 1024, 16, 512, false, SP_GEN_ANNOTATE_MEGATRON);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary ms;
  sp_err err;
  ck_assert_int_eq(sp_plan_evaluate_module(mega, &o, &ms, &err), SP_OK);
  printf("  4-layer GPT: tied search cost %lld (%s, %d groups), megatron %lld\n",
         (long long)s.cost, sp_sg_status_name(s.status), s.ntie_groups, (long long)ms.cost);
  ck_assert_int_gt(s.ntie_groups, 0);
  ck_assert_int_le(s.cost, ms.cost);
  sp_module_free(mega);
  sp_module_free(m);
}
END_TEST

/* Figures for the report: an 8-layer training GPT with and without ties. */
START_TEST(gpt_8_layers_training_reports_costs_with_and_without_sharing) {
  sp_plan_summary r[2];
  for (int share = 1; share >= 0; share--) {
    sp_module *m = gpt(8, 1024, 16, 512, true, SP_GEN_ANNOTATE_NONE);
    r[share] = search(m, share);
    const sp_plan_summary *s = &r[share];
    printf("  8-layer GPT training, sharing %s: cost %lld (%s, gap %.3g), total %.4f ms; "
           "%d ops, %d nodes, %d edges, %lld strategies, %lld pairs, %d groups / %d tied; "
           "build %.3f s, solve %.3f s\n", share ? "on" : "off", (long long)s->cost,
           sp_sg_status_name(s->status), s->gap, s->total_s * 1e3, s->ops, s->nodes, s->edges,
           (long long)s->strategies, (long long)s->pairs, s->ntie_groups, s->tied_nodes,
           s->build_s, s->solve_s);
    sp_module_free(m);
  }
  ck_assert_int_gt(r[1].ntie_groups, 0);
  ck_assert_int_eq(r[0].ntie_groups, 0);
  ck_assert_int_eq(r[1].edges - r[0].edges, r[1].tied_nodes - r[1].ntie_groups);
}
END_TEST

static Suite *layer_sharing_suite(void) {
  Suite *s = suite_create("layer_sharing");
  TCase *tc = tcase_create("ties");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, gpt_4_layers_ties_repeated_layers_and_every_group_ends_with_one_sharding);
  tcase_add_test(tc, q_k_v_projections_and_the_two_mlp_matmuls_of_one_layer_are_not_tied);
  tcase_add_test(tc, gpt_training_forward_and_backward_matmuls_are_never_in_one_group);
  tcase_add_test(tc, mlp_layers_of_different_widths_are_never_tied_together);
  tcase_add_test(tc, share_layers_option_turns_the_ties_off);
  tcase_add_test(tc, gpt_4_layers_tied_search_is_never_worse_than_megatron);
  tcase_add_test(tc, gpt_8_layers_training_reports_costs_with_and_without_sharing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(layer_sharing_suite()); }
