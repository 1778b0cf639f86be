/*
 * test_exported.c - the collectives the plan reports are the ones the export inserts
 * (plan/exported.h), and the search's cost model prices exactly those: on the generated GPT
 * training step (1 and 4 layers; the searched plan and the Megatron plan) and on the MLP
 * example, the search's list and the export's agree op by op (the same collectives at the same
 * op and operand, in the same order, with the same kind, axes and bytes). A disagreement is a
 * failure; there is no tolerance. Partial sums (Shardy's unreduced axes) carried through an add
 * are all-reduced once, where a consumer reads them whole, and the export inserts exactly that
 * all-reduce; the Megatron-annotated GPT backward pays one for its q/k/v input gradients.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "mlir/mlir.h"
#include "plan/exported.h"
#include "plan/plan.h"
#include "propagation/propagate.h"
#include "search/plan_search.h"
#include "cluster_support.h"
#include "gen_support.h"
#include "test_support.h"

static sp_cluster *ONE;

static void setup(void) { ONE = sp_test_load_cluster("one_machine_8gpu.json"); }
static void teardown(void) { sp_cluster_free(ONE); }

static sp_module *gpt(int layers, sp_gen_annotate annotate) {
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, layers); /* bench_search's model: every kind of edge */
  o.annotate = annotate;
  return sp_test_generate(&o);
}

/* A training step: layer l's weights are arguments 8 l + {2, 3, 4, 5, 7, 8}, their gradients
 * results 2 + 6 l .. 7 + 6 l (server/gen/model_gen.c). */
static sp_plan_state_pair STATE[6 * 4];

static void training_opts(sp_plan_search_opts *o, int layers) {
  static const int weight[6] = {2, 3, 4, 5, 7, 8};
  for (int l = 0; l < layers; l++)
    for (int k = 0; k < 6; k++) STATE[6 * l + k] = (sp_plan_state_pair){8 * l + weight[k], 2 + 6 * l + k};
  sp_plan_search_opts_init(o);
  o->cluster = ONE;
  o->time_limit = 30;
  o->state = STATE;
  o->nstate = 6 * layers;
}

static const char *describe(const sp_search_collective *c) {
  static char buf[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s %s {%s} %.0f bytes at %s (line %d) operand %d",
           sp_collective_name(c->c.kind), c->value, c->axes, c->c.bytes, c->op, c->line,
           c->operand);
  return buf[k];
}

static bool same_place(const sp_search_collective *a, const sp_search_collective *b) {
  return a->op_ref == b->op_ref && a->operand == b->operand;
}

/* Every collective of `want` (the search's) is in `got` (the export's) at the same op and
 * operand, the k-th there matching the k-th here in kind, axes, bytes and value; and `got`
 * has nothing more. Returns the number compared. */
static int assert_agree(const sp_search_collective *want, int nwant,
                        const sp_search_collective *got, int ngot) {
  bool *used = calloc((size_t)(ngot ? ngot : 1), sizeof *used);
  for (int i = 0; i < nwant; i++) {
    int rank = 0;   /* earlier search collectives at the same place */
    for (int j = 0; j < i; j++) rank += same_place(&want[j], &want[i]);
    int match = -1;
    for (int j = 0, seen = 0; j < ngot && match < 0; j++)
      if (same_place(&got[j], &want[i]) && seen++ == rank) match = j;
    ck_assert_msg(match >= 0, "the search prices %s; the export inserts nothing there",
                  describe(&want[i]));
    const sp_search_collective *g = &got[match];
    ck_assert_msg(g->c.kind == want[i].c.kind && strcmp(g->axes, want[i].axes) == 0 &&
                      g->c.bytes == want[i].c.bytes && g->value_ref == want[i].value_ref &&
                      g->c.seconds == want[i].c.seconds,
                  "the search prices %s; the export inserts %s", describe(&want[i]),
                  describe(g));
    used[match] = true;
  }
  for (int j = 0; j < ngot; j++)
    ck_assert_msg(used[j], "the export inserts %s; the search does not price it", describe(&got[j]));
  free(used);
  return nwant;
}

static void check_plan(sp_module *m, const sp_plan_summary *s, const char *what) {
  sp_err err;
  sp_search_collective *got;
  int ngot;
  int rc = sp_plan_insert_operand_reshards(m, s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  rc = sp_plan_exported_collectives(m, s, &got, &ngot, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  int n = assert_agree(s->collectives, s->ncollectives, got, ngot);
  double sum = 0;
  for (int j = 0; j < ngot; j++) sum += got[j].c.seconds;
  ck_assert_msg(sum == s->comm_s || (sum - s->comm_s) * (sum - s->comm_s) < 1e-24,
                "%s: exported collectives take %g s, the search's communication %g s", what, sum,
                s->comm_s);
  printf("  %s: %d collectives agree (communication %.4f ms)\n", what, n, 1e3 * s->comm_s);
}

/* The searched plan (every sharding open) or the Megatron plan (given shardings, evaluated)
 * of a `layers`-layer training step. */
static void gpt_plan(int layers, bool megatron) {
  sp_module *m = gpt(layers, megatron ? SP_GEN_ANNOTATE_MEGATRON : SP_GEN_ANNOTATE_NONE);
  sp_plan_search_opts o;
  training_opts(&o, layers);
  sp_plan_summary s;
  sp_err err;
  int rc = megatron ? sp_plan_evaluate_module(m, &o, &s, &err) : sp_plan_search_module(m, &o, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  ck_assert(s.ncollectives > 0);
  char what[64];
  snprintf(what, sizeof what, "%s %d-layer GPT", megatron ? "Megatron" : "searched", layers);
  check_plan(m, &s, what);
  sp_module_free(m);
}

START_TEST(searched_one_layer_gpt_step_prices_exactly_the_exported_collectives) { gpt_plan(1, false); }
END_TEST

START_TEST(searched_four_layer_gpt_step_prices_exactly_the_exported_collectives) { gpt_plan(4, false); }
END_TEST

START_TEST(megatron_one_layer_gpt_step_prices_exactly_the_exported_collectives) { gpt_plan(1, true); }
END_TEST

START_TEST(megatron_four_layer_gpt_step_prices_exactly_the_exported_collectives) { gpt_plan(4, true); }
END_TEST

/* ------------------------------------------------------------------ other meshes and shapes */

/* A generated GPT training step: `layers` layers of hidden size `hidden` (0: the training
 * default, 4096) with `heads` heads over a sequence of `seq` (0: 32 and 2048) on `mesh` of the
 * cluster in examples/clusters/`cluster`; searched, or (`megatron`) the Megatron plan
 * evaluated; `no_reduce_scatter`: the cluster's runtime has none. */
typedef struct gpt_case {
  const char *cluster, *mesh;
  int layers, hidden, heads, seq;
  bool megatron, no_reduce_scatter;
} gpt_case;

/* Plans case `c` and checks it op by op (check_plan); counts the collectives per kind into
 * kinds[6] (sp_collective_kind order). */
static void plan_gpt_case(const gpt_case *c, int kinds[6]) {
  sp_cluster *cl = sp_test_load_cluster(c->cluster);
  cl->no_reduce_scatter = c->no_reduce_scatter;
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, c->layers);
  if (c->hidden) o.hidden = c->hidden;
  if (c->heads) o.heads = c->heads;
  if (c->seq) o.seq = c->seq;
  o.annotate = c->megatron ? SP_GEN_ANNOTATE_MEGATRON : SP_GEN_ANNOTATE_NONE;
  sp_err err;
  ck_assert_msg(sp_gen_parse_mesh(c->mesh, &o, &err) == SP_OK, "%s", err.msg);
  sp_module *m = sp_test_generate(&o);
  sp_plan_search_opts so;
  training_opts(&so, c->layers);
  so.cluster = cl;
  sp_plan_summary s;
  int rc = c->megatron ? sp_plan_evaluate_module(m, &so, &s, &err)
                       : sp_plan_search_module(m, &so, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  memset(kinds, 0, 6 * sizeof *kinds);
  for (int i = 0; i < s.ncollectives; i++) kinds[s.collectives[i].c.kind]++;
  char what[160];
  snprintf(what, sizeof what, "%s %d-layer GPT, hidden %lld, %lld heads, seq %lld, %s on %s%s",
           c->megatron ? "Megatron" : "searched", c->layers, (long long)o.hidden,
           (long long)o.heads, (long long)o.seq, c->mesh, c->cluster,
           c->no_reduce_scatter ? " without reduce-scatter" : "");
  check_plan(m, &s, what);
  printf("    kinds: all-gather %d, reduce-scatter %d, all-reduce %d, all-to-all %d, all-slice %d, "
         "collective-permute %d\n", kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5]);
  sp_module_free(m);
  sp_cluster_free(cl);
}

START_TEST(searched_64_device_gpt_step_prices_exactly_the_exported_collectives) {
  /* Eight machines: the plan moves axes between dims, gathers, slices and reduce-scatters. */
  int k[6];
  plan_gpt_case(&(gpt_case){"eight_machines_64gpu.json", "data=8,model=8", 1, 0, 0, 0, false, false}, k);
  ck_assert(k[SP_COLL_ALL_GATHER] && k[SP_COLL_ALL_REDUCE] && k[SP_COLL_ALL_TO_ALL] &&
            k[SP_COLL_ALL_SLICE] && k[SP_COLL_REDUCE_SCATTER]);
}
END_TEST

/* The same step on a runtime without reduce-scatter: the reduce_scatters the export still
 * makes (the canonicalizer fuses whatever the runtime) run as all-reduces, and the search prices
 * and lists them so, at the same places. */
START_TEST(searched_64_device_gpt_step_without_reduce_scatter_prices_exactly_the_exported_collectives) {
  int k[6];
  plan_gpt_case(&(gpt_case){"eight_machines_64gpu.json", "data=8,model=8", 1, 0, 0, 0, false, true},
                k);
  ck_assert_int_eq(k[SP_COLL_REDUCE_SCATTER], 0);
  ck_assert_int_gt(k[SP_COLL_ALL_REDUCE], 0);
  /* A Megatron step whose plan reduce-scatters four times with one. */
  plan_gpt_case(&(gpt_case){"eight_machines_64gpu.json", "data=16,model=4", 1, 1536, 24, 128, true,
                            true}, k);
  ck_assert_int_eq(k[SP_COLL_REDUCE_SCATTER], 0);
  ck_assert_int_gt(k[SP_COLL_ALL_REDUCE], 0);
}
END_TEST

START_TEST(megatron_64_device_gpt_step_prices_exactly_the_exported_collectives) {
  int k[6];
  plan_gpt_case(&(gpt_case){"eight_machines_64gpu.json", "data=8,model=8", 1, 0, 0, 0, true, false}, k);
  ck_assert_int_gt(k[SP_COLL_ALL_REDUCE], 0);
}
END_TEST

/* Sub-axis all-gathers before the head reshapes: what the export inserts when the model axis
 * does not divide the head count. */
static int sub_axis_gathers_at_reshapes(const gpt_case *c) {
  sp_cluster *cl = sp_test_load_cluster(c->cluster);
  sp_gen_options o;
  sp_gen_gpt_training_options(&o, c->layers);
  o.hidden = c->hidden;
  o.heads = c->heads;
  o.seq = c->seq;
  o.annotate = SP_GEN_ANNOTATE_MEGATRON;
  sp_err err;
  ck_assert_int_eq(sp_gen_parse_mesh(c->mesh, &o, &err), SP_OK);
  sp_module *m = sp_test_generate(&o);
  sp_plan_search_opts so;
  training_opts(&so, c->layers);
  so.cluster = cl;
  sp_plan_summary s;
  ck_assert_msg(sp_plan_evaluate_module(m, &so, &s, &err) == SP_OK, "%s", err.msg);
  int n = 0;
  for (int i = 0; i < s.ncollectives; i++) {
    const sp_search_collective *x = &s.collectives[i];
    n += x->c.kind == SP_COLL_ALL_GATHER && strcmp(x->op, "stablehlo.reshape") == 0 &&
         strstr(x->axes, "\"model\":(") != NULL && x->c.bytes > 0;
  }
  sp_module_free(m);
  sp_cluster_free(cl);
  return n;
}

START_TEST(megatron_with_heads_the_model_axis_does_not_divide_prices_the_reshapes_reshards) {
  /* 6 heads over model=4: the q/k/v (and backward) reshapes read their operand with "model"
   * split as (1)2 along the heads; the export gathers the other half first, and the plan now
   * prices those gathers (and the all-slices after the merging reshapes). */
  gpt_case c8 = {"one_machine_8gpu.json", "data=2,model=4", 1, 768, 6, 128, true, false};
  int k[6];
  plan_gpt_case(&c8, k);
  ck_assert_int_eq(sub_axis_gathers_at_reshapes(&c8), 4);
  ck_assert_int_eq(k[SP_COLL_ALL_SLICE], 4);
  /* 12 and 10 heads over model=8 on 64 devices. */
  gpt_case c64 = {"eight_machines_64gpu.json", "data=8,model=8", 1, 768, 12, 128, true, false};
  plan_gpt_case(&c64, k);
  ck_assert_int_eq(sub_axis_gathers_at_reshapes(&c64), 4);
  c64.hidden = 640;
  c64.heads = 10;
  plan_gpt_case(&c64, k);
  ck_assert_int_eq(sub_axis_gathers_at_reshapes(&c64), 4);
  /* The searched plans of the same steps. */
  c8.megatron = c64.megatron = false;
  plan_gpt_case(&c8, k);
  plan_gpt_case(&c64, k);
}
END_TEST

/* A weight gradient summed over a batch split by "data", given split by "data" on its rows:
 * reduce-scattering the partial gradient would make it so, but the gradient outweighs the
 * batch, so the explicit reshard pass keeps "data" on the gradient's rows and gathers the
 * batch instead; the plan is priced as that runs. */
static const char *const HEAVY_GRADIENT =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<16x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<16x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>})\n"
    "    -> (tensor<256x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>} : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<256x256xf32>\n"
    "  return %0 : tensor<256x256xf32>\n"
    "}\n";

START_TEST(a_reduce_scatter_the_export_decides_otherwise_is_priced_as_it_runs) {
  sp_module *m = sp_test_parse(HEAVY_GRADIENT);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  ck_assert_msg(sp_plan_evaluate_module(m, &o, &s, &err) == SP_OK, "%s", err.msg);
  for (int i = 0; i < s.ncollectives; i++)
    ck_assert_msg(s.collectives[i].c.kind != SP_COLL_REDUCE_SCATTER &&
                      s.collectives[i].c.kind != SP_COLL_ALL_REDUCE,
                  "the plan reduces the gradient: %s", describe(&s.collectives[i]));
  check_plan(m, &s, "a heavy gradient");
  sp_module_free(m);
  /* The same in a generated GPT step: the Megatron plan with a short sequence. */
  int k[6];
  plan_gpt_case(&(gpt_case){"eight_machines_64gpu.json", "data=16,model=4", 1, 1536, 24, 128, true, false}, k);
}
END_TEST

/* An operand read with "data" and "model" on a dim of 8 rows, where 8 devices of "data" fit but
 * not the 64 of both: the export plans that reshard knowing the rows (a collective_permute and
 * an all_to_all instead of one all_to_all), and so does the search. */
static const char *const NO_ROOM =
    "sdy.mesh @mesh = <[\"data\"=8, \"model\"=8]>\n"
    "func.func @main(%arg0: tensor<8x64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}, {}]>})\n"
    "    -> (tensor<8x64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {\"data\", \"model\"}]>}) {\n"
    "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {\"data\", \"model\"}]>]>} : tensor<8x64x512xf32>\n"
    "  return %0 : tensor<8x64x512xf32>\n"
    "}\n";

START_TEST(a_reshard_is_priced_with_the_rows_of_the_tensor_as_the_export_plans_it) {
  sp_cluster *cl = sp_test_load_cluster("eight_machines_64gpu.json");
  sp_module *m = sp_test_parse(NO_ROOM);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = cl;
  sp_plan_summary s;
  sp_err err;
  ck_assert_msg(sp_plan_evaluate_module(m, &o, &s, &err) == SP_OK, "%s", err.msg);
  bool permute = false;
  for (int i = 0; i < s.ncollectives; i++) permute |= s.collectives[i].c.kind == SP_COLL_COLLECTIVE_PERMUTE;
  ck_assert_msg(permute, "the reshard is priced as if dim 0 had room for 64 devices");
  check_plan(m, &s, "a reshard of a dim without room");
  sp_module_free(m);
  sp_cluster_free(cl);
}
END_TEST

/* Propagated, then searched with the default options on one 8-GPU machine. */
static sp_plan_summary propagate_and_search(sp_module *m) {
  sp_test_propagate(m);
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  sp_plan_summary s;
  sp_err err;
  int rc = sp_plan_search_module(m, &o, &s, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return s;
}

START_TEST(mlp_example_prices_exactly_the_exported_collectives) {
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/mlp.mlir", SP_SOURCE_DIR);
  char *text = sp_test_read_file(path, NULL);
  ck_assert_ptr_nonnull(text);
  sp_module *m = sp_test_parse(text);
  free(text);
  sp_plan_summary s = propagate_and_search(m);
  check_plan(m, &s, "MLP example");
  sp_module_free(m);
}
END_TEST

/* Operands given in layouts no single strategy reads: the plan moves an axis between dims
 * (all_to_all) and swaps the order of two axes (collective_permute). */
static const char *const MOVES =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>},\n"
    "                %arg1: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg2: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\", \"model\"}]>},\n"
    "                %arg3: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\", \"data\"}]>})\n"
    "    -> (tensor<64x64xf32>, tensor<64xf32>) {\n"
    "  %0 = stablehlo.add %arg0, %arg1 : tensor<64x64xf32>\n"
    "  %1 = stablehlo.multiply %arg2, %arg3 : tensor<64xf32>\n"
    "  return %0, %1 : tensor<64x64xf32>, tensor<64xf32>\n"
    "}\n";

START_TEST(an_all_to_all_and_a_collective_permute_are_priced_as_the_export_inserts_them) {
  sp_module *m = sp_test_parse(MOVES);
  sp_plan_summary s = propagate_and_search(m);
  bool a2a = false, permute = false;
  for (int i = 0; i < s.ncollectives; i++) {
    a2a |= s.collectives[i].c.kind == SP_COLL_ALL_TO_ALL;
    permute |= s.collectives[i].c.kind == SP_COLL_COLLECTIVE_PERMUTE;
  }
  ck_assert(a2a && permute);
  check_plan(m, &s, "all_to_all and collective_permute");
  sp_module_free(m);
}
END_TEST

START_TEST(the_plan_reports_the_exported_collectives_with_their_places) {
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/mlp.mlir", SP_SOURCE_DIR);
  size_t len;
  char *text = sp_test_read_file(path, &len);
  ck_assert_ptr_nonnull(text);
  sp_plan_options po;
  sp_plan_options_init(&po);
  po.search_options = "reduce-scatter=false";
  sp_plan_input in = {.text = text, .len = len, .filename = "mlp.mlir"};
  sp_plan *p;
  sp_err err;
  int rc = sp_plan_run(&in, ONE, &po, &p, &err);
  free(text);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  double comm = 0;
  for (int i = 0; i < p->ncollectives; i++) {
    const sp_plan_collective *c = &p->collectives[i];
    ck_assert(c->op >= 0);
    ck_assert(strcmp(c->kind, "all-slice") == 0 ? c->bytes == 0 : c->bytes > 0);
    comm += c->seconds;
  }
  ck_assert(comm == p->costs.comm_s || (comm - p->costs.comm_s) * (comm - p->costs.comm_s) < 1e-24);
  /* The module the plan prints is the searched one (reshards, not collectives): the export
   * ran on a copy. */
  ck_assert_ptr_null(strstr(p->module, "sdy.all_"));
  sp_plan_free(p);
}
END_TEST

/* A host callback (JAX's pure_callback: a custom call on a single-device mesh) between two
 * ops of the searched mesh: XLA gathers its operand onto the device (all-gather over the axes
 * that shard it) and sends its result back to every device (an all-reduce of the device's
 * value with zeros); the export leaves both as reshards between meshes, and the plan prices
 * them as those collectives (found by the JAX corpus: 2 x 2048 bytes in the HLO, 0 before). */
static const char *const CALLBACK =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
    "func.func @main(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>})\n"
    "    -> (tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>}) {\n"
    "  %0 = stablehlo.custom_call @host_callback(%arg0) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<32x16xf32>) -> tensor<32x16xf32>\n"
    "  %1 = stablehlo.add %0, %arg1 : tensor<32x16xf32>\n"
    "  return %1 : tensor<32x16xf32>\n"
    "}\n";

START_TEST(a_single_device_op_is_fed_by_an_all_gather_and_read_back_by_an_all_reduce) {
  sp_plan_options po;
  sp_plan_options_init(&po);
  sp_plan_input in = {.text = CALLBACK, .len = strlen(CALLBACK), .filename = "callback.mlir"};
  sp_plan *p;
  sp_err err;
  int rc = sp_plan_run(&in, ONE, &po, &p, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  int gathers = 0, reduces = 0;
  for (int i = 0; i < p->ncollectives; i++) {
    const sp_plan_collective *c = &p->collectives[i];
    if (strcmp(c->kind, "all-gather") == 0) {
      gathers++;
      ck_assert_str_eq(c->axes, "\"data\"");
      ck_assert(c->bytes == 32 * 16 * 4 && c->group_size == 4 && c->seconds > 0);
      ck_assert_str_eq(c->op_name, "stablehlo.custom_call");
      ck_assert_int_eq(c->operand, 0);
    } else if (strcmp(c->kind, "all-reduce") == 0) {
      reduces++;
      ck_assert_str_eq(c->axes, "\"data\", \"model\"");
      ck_assert(c->bytes == 32 * 16 * 4 && c->group_size == 8 && c->seconds > 0);
      ck_assert_str_eq(c->op_name, "stablehlo.add");
    }
  }
  ck_assert_int_eq(gathers, 1);
  ck_assert_int_eq(reduces, 1);
  sp_plan_free(p);
}
END_TEST

/* A row-parallel product whose result stays sharded: a reduce-scatter on a cluster whose
 * runtime has one; on one whose runtime has none ("reduce_scatter": false; XLA on CPU runs
 * all-reduce + dynamic-slice, found by the JAX corpus) the same strategy runs as that
 * all-reduce (2.01 us on NVLink, against 4.12 us for gathering the activations and moving the
 * weight's axis, which the search chose when it offered only the plain all-reduce), and the
 * plan lists no reduce-scatter. */
static const char *const ROW_PARALLEL =
    "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
    "func.func @main(%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
    "                %arg1: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg2: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>})\n"
    "    -> (tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>\n"
    "  %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x128xf32>) -> tensor<32x128xf32>\n"
    "  return %1 : tensor<32x128xf32>\n"
    "}\n";

static int count_kind(const sp_plan *p, const char *kind) {
  int n = 0;
  for (int i = 0; i < p->ncollectives; i++) n += strcmp(p->collectives[i].kind, kind) == 0;
  return n;
}

START_TEST(a_runtime_without_reduce_scatter_gets_none_planned_or_listed) {
  for (int none = 0; none < 2; none++) {
    sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
    c->no_reduce_scatter = none;
    sp_plan_options po;
    sp_plan_options_init(&po);
    sp_plan_input in = {.text = ROW_PARALLEL, .len = strlen(ROW_PARALLEL), .filename = "rows.mlir"};
    sp_plan *p;
    sp_err err;
    int rc = sp_plan_run(&in, c, &po, &p, &err);
    ck_assert_msg(rc == SP_OK, "%s", err.msg);
    if (none) {
      ck_assert_int_eq(count_kind(p, "reduce-scatter"), 0);
      ck_assert_int_eq(count_kind(p, "all-reduce"), 1);
      ck_assert_int_eq(count_kind(p, "all-gather") + count_kind(p, "all-to-all"), 0);
    } else {
      ck_assert_int_eq(count_kind(p, "reduce-scatter"), 1);
      ck_assert_int_eq(count_kind(p, "all-reduce"), 0);
    }
    sp_plan_free(p);
    sp_cluster_free(c);
  }
}
END_TEST

/* A product whose contracting dim the input gives split over "model" and whose result is
 * given split over "data" and "model" (a fixed output sharding). A runtime without
 * reduce-scatter runs the reduction as an all-reduce of the partial result, then each device
 * keeps its part: 2 x 3/4 of the 32 KiB a device reduces over "model"=4. Before, the search
 * offered no strategy for that form (the plain all-reduce leaves "model" off the result, which
 * the given sharding has) and gathered the activations and moved the weight's axis instead
 * (an all-gather of 64 KiB and an all-to-all of 512 KiB, twice the time on NVLink). */
static const char *const SPLIT_CONTRACTION =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>},\n"
    "                %arg1: tensor<512x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>})\n"
    "    -> (tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x512xf32>, tensor<512x256xf32>) -> tensor<64x256xf32>\n"
    "  %1 = stablehlo.tanh %0 : tensor<64x256xf32>\n"
    "  return %1 : tensor<64x256xf32>\n"
    "}\n";

START_TEST(a_runtime_without_reduce_scatter_all_reduces_onto_a_given_sharded_result) {
  for (int none = 0; none < 2; none++) {
    sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
    c->no_reduce_scatter = none;
    sp_module *m = sp_test_parse(SPLIT_CONTRACTION);
    sp_test_propagate(m);
    sp_plan_search_opts o;
    sp_plan_search_opts_init(&o);
    o.cluster = c;
    sp_plan_summary s;
    sp_err err;
    ck_assert_msg(sp_plan_search_module(m, &o, &s, &err) == SP_OK, "%s", err.msg);
    /* The price of the one collective the plan should run: the 64/2 x 256 f32 partial result
     * of a device, reduced over "model". */
    sp_cost_model cm;
    const sp_mesh *mesh = sp_module_lookup_mesh(m, "mesh");
    ck_assert_int_eq(sp_cost_model_init(&cm, c, mesh, NULL, &err), SP_OK);
    sp_ft_axis model = sp_ft_axis_make(mesh, 1, 0, 0);
    sp_collective want;
    sp_cost_collective(&cm, none ? SP_COLL_ALL_REDUCE : SP_COLL_REDUCE_SCATTER, &model, 1,
                       32 * 256 * 4, &want);
    sp_cost_model_free(&cm);
    /* Besides it, only all-slices (each device keeps its part of the reduced result). */
    const sp_search_collective *got = NULL;
    for (int i = 0; i < s.ncollectives; i++) {
      if (s.collectives[i].c.kind == SP_COLL_ALL_SLICE) continue;
      ck_assert_msg(!got, "the plan runs %s and %s", describe(got), describe(&s.collectives[i]));
      got = &s.collectives[i];
    }
    ck_assert_msg(got, "the plan runs no collective");
    ck_assert_msg(got->c.kind == want.kind && strcmp(got->axes, "\"model\"") == 0 &&
                      got->c.bytes == want.bytes && got->c.seconds == want.seconds,
                  "the plan runs %s", describe(got));
    ck_assert(s.comm_s == want.seconds);
    check_plan(m, &s, none ? "all-reduce onto a given sharded result"
                           : "reduce-scatter onto a given sharded result");
    sp_module_free(m);
    sp_cluster_free(c);
  }
}
END_TEST

/* ------------------------------------------------------------------ partial sums */

/* Two row-parallel products summed, then a non-linear op: with partial sums the sum is
 * all-reduced once, where tanh reads it whole. */
static const char *const PARTIAL_ADD =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<256x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg1: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>},\n"
    "                %arg2: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>})\n"
    "    -> tensor<256x1024xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>\n"
    "  %1 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>\n"
    "  %2 = stablehlo.add %0, %1 : tensor<256x1024xf32>\n"
    "  %3 = stablehlo.tanh %2 : tensor<256x1024xf32>\n"
    "  return %3 : tensor<256x1024xf32>\n"
    "}\n";

static int count_reductions(const sp_plan_summary *s) {
  int n = 0;
  for (int i = 0; i < s->ncollectives; i++)
    n += s->collectives[i].c.kind == SP_COLL_ALL_REDUCE ||
         s->collectives[i].c.kind == SP_COLL_REDUCE_SCATTER;
  return n;
}

/* The result of the first top-level op named `name` of the main function. */
static sp_value *first_result(sp_module *m, const char *name) {
  sp_op *f = sp_plan_main_func(m);
  for (sp_op *op = f->regions[0].blocks[0]->first; op; op = op->next)
    if (strcmp(op->name, name) == 0) return &op->results[0];
  ck_abort_msg("no %s", name);
  return NULL;
}

static bool has_unreduced(const sp_value *v, const char *axis) {
  const sp_sharding *s = v->sharding;
  for (int i = 0; s && i < s->nunreduced; i++)
    if (strcmp(s->unreduced[i].name, axis) == 0) return true;
  return false;
}

/* The search's options on one 8-GPU machine, all-reduces only: reduce-scattering each product
 * onto the rows (and adding the shards) would cost about what one all-reduce of the sum does;
 * these cases are about the sum's all-reduce. */
static sp_plan_search_opts all_reduce_opts(void) {
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  o.cluster = ONE;
  o.no_reduce_scatter = true;
  return o;
}

START_TEST(a_partial_sum_flowing_through_an_add_is_all_reduced_once_as_the_export_inserts_it) {
  sp_plan_search_opts o = all_reduce_opts();
  sp_err err;
  /* Without partial sums: each product all-reduces its own sum. */
  sp_module *m = sp_test_parse(PARTIAL_ADD);
  sp_test_propagate(m);
  o.no_partial = true;
  sp_plan_summary before;
  ck_assert_msg(sp_plan_search_module(m, &o, &before, &err) == SP_OK, "%s", err.msg);
  ck_assert_int_eq(count_reductions(&before), 2);
  sp_module_free(m);
  /* With them: both products and the add stay partial over "model"; one all-reduce of the sum,
   * read by tanh, and the export inserts exactly it. */
  m = sp_test_parse(PARTIAL_ADD);
  sp_test_propagate(m);
  o.no_partial = false;
  sp_plan_summary s;
  ck_assert_msg(sp_plan_search_module(m, &o, &s, &err) == SP_OK, "%s", err.msg);
  ck_assert_int_eq(count_reductions(&s), 1);
  sp_value *sum = first_result(m, "stablehlo.add");
  ck_assert(has_unreduced(sum, "model"));
  ck_assert(has_unreduced(sum->def->operands[0].value, "model"));
  ck_assert(has_unreduced(sum->def->operands[1].value, "model"));
  ck_assert(!has_unreduced(first_result(m, "stablehlo.tanh"), "model"));
  bool at_tanh = false;
  for (int i = 0; i < s.ncollectives; i++)
    if (s.collectives[i].c.kind == SP_COLL_ALL_REDUCE || s.collectives[i].c.kind == SP_COLL_REDUCE_SCATTER)
      at_tanh = s.collectives[i].value_ref == sum && s.collectives[i].operand == 0 &&
                strcmp(s.collectives[i].op, "stablehlo.tanh") == 0;
  ck_assert_msg(at_tanh, "the sum's all-reduce is not priced where tanh reads it");
  ck_assert(s.total_s < before.total_s);
  check_plan(m, &s, "partial sum through an add");
  sp_module_free(m);
}
END_TEST

/* A product added to a whole value (an argument): the sum would count the value once per
 * device, so the add reads the product whole and nothing is left partial. */
static const char *const WHOLE_ADD =
    "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
    "func.func @main(%arg0: tensor<256x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"model\"}]>},\n"
    "                %arg1: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {}]>},\n"
    "                %arg2: tensor<256x1024xf32>) -> tensor<256x1024xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>\n"
    "  %1 = stablehlo.add %0, %arg2 : tensor<256x1024xf32>\n"
    "  %2 = stablehlo.tanh %1 : tensor<256x1024xf32>\n"
    "  return %2 : tensor<256x1024xf32>\n"
    "}\n";

START_TEST(a_product_added_to_a_whole_value_is_reduced_before_the_add) {
  sp_plan_search_opts o = all_reduce_opts();
  sp_err err;
  sp_module *m = sp_test_parse(WHOLE_ADD);
  sp_test_propagate(m);
  sp_plan_summary s;
  ck_assert_msg(sp_plan_search_module(m, &o, &s, &err) == SP_OK, "%s", err.msg);
  sp_value *sum = first_result(m, "stablehlo.add");
  ck_assert(!has_unreduced(sum, "model"));
  ck_assert(!has_unreduced(sum->def->operands[0].value, "model"));
  ck_assert_int_le(count_reductions(&s), 1);
  check_plan(m, &s, "product added to a whole value");
  sp_module_free(m);
}
END_TEST

/* The values of the q/k/v input-gradient path of a generated GPT layer (server/gen): the three
 * products dy . w^T with w = wq, wk, wv (arguments 2, 3, 4; their rhs contracting dim is 1),
 * and what sums them, up to the multiply by the layer norm's scale. */
static int qkv_input_grad_path(sp_module *m, const sp_value **path, int cap) {
  sp_op *f = sp_plan_main_func(m);
  sp_block *b = f->regions[0].blocks[0];
  int n = 0;
  for (sp_op *op = b->first; op; op = op->next) {
    if (op->kind != SP_OP_DOT_GENERAL || op->noperands != 2) continue;
    const sp_value *w = op->operands[1].value;
    if (w->def || w->index < 2 || w->index > 4) continue;
    sp_ints rc;
    ck_assert(sp_op_get_ints(op, "rhs_contracting_dimensions", &rc));
    if (rc.n != 1 || rc.v[0] != 1) continue;
    for (const sp_value *v = &op->results[0]; v && n < cap;) {
      bool seen = false;
      for (int k = 0; k < n; k++) seen |= path[k] == v;
      if (!seen) path[n++] = v;
      const sp_use *u = v->uses;
      if (!u || u->next) break;
      const sp_op *user = u->owner;
      if (user->kind != SP_OP_ADD && user->kind != SP_OP_MULTIPLY) break;
      v = &user->results[0];
      if (user->kind == SP_OP_MULTIPLY) {
        seen = false;
        for (int k = 0; k < n; k++) seen |= path[k] == v;
        if (!seen && n < cap) path[n++] = v;
        break;
      }
    }
  }
  return n;
}

/* All-reduces and reduce-scatters over "model" that read a value of the path. */
static int path_reductions(const sp_plan_summary *s, const sp_value *const *path, int n) {
  int count = 0;
  for (int i = 0; i < s->ncollectives; i++) {
    const sp_search_collective *c = &s->collectives[i];
    if (c->c.kind != SP_COLL_ALL_REDUCE && c->c.kind != SP_COLL_REDUCE_SCATTER) continue;
    if (!strstr(c->axes, "\"model\"")) continue;
    for (int k = 0; k < n; k++)
      if (c->value_ref == path[k]) count++;
  }
  return count;
}

START_TEST(megatron_backward_pays_one_all_reduce_for_the_qkv_input_gradients) {
  sp_plan_search_opts o;
  sp_plan_summary s[2], searched[2];
  sp_err err;
  int count[2];
  for (int partial = 0; partial < 2; partial++) {
    /* The Megatron plan, evaluated: its q/k/v input-gradient products are row-parallel. */
    sp_module *m = gpt(1, SP_GEN_ANNOTATE_MEGATRON);
    training_opts(&o, 1);
    o.no_partial = !partial;
    ck_assert_msg(sp_plan_evaluate_module(m, &o, &s[partial], &err) == SP_OK, "%s", err.msg);
    const sp_value *path[16];
    int n = qkv_input_grad_path(m, path, 16);
    ck_assert_int_eq(n, 6);   /* three products, two adds, the multiply */
    count[partial] = path_reductions(&s[partial], path, n);
    printf("  Megatron 1-layer GPT, partial sums %s: %d all-reduces on the q/k/v input gradients, "
           "%.4f ms per step\n", partial ? "on" : "off", count[partial], 1e3 * s[partial].total_s);
    if (partial) check_plan(m, &s[partial], "Megatron 1-layer GPT with partial sums");
    sp_module_free(m);
    /* The searched plan of the same step. */
    m = gpt(1, SP_GEN_ANNOTATE_NONE);
    ck_assert_msg(sp_plan_search_module(m, &o, &searched[partial], &err) == SP_OK, "%s", err.msg);
    ck_assert_int_eq(searched[partial].status, SP_SG_OPTIMAL);
    sp_module_free(m);
  }
  ck_assert_int_eq(count[0], 3);
  ck_assert_int_eq(count[1], 1);
  ck_assert(s[1].total_s < s[0].total_s);
  ck_assert(searched[1].cost <= searched[0].cost);
}
END_TEST

static Suite *exported_suite(void) {
  Suite *s = suite_create("exported");
  TCase *tc = tcase_create("agreement");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, searched_one_layer_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, searched_four_layer_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, megatron_one_layer_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, megatron_four_layer_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, mlp_example_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, an_all_to_all_and_a_collective_permute_are_priced_as_the_export_inserts_them);
  tcase_add_test(tc, the_plan_reports_the_exported_collectives_with_their_places);
  tcase_add_test(tc, a_single_device_op_is_fed_by_an_all_gather_and_read_back_by_an_all_reduce);
  tcase_add_test(tc, a_runtime_without_reduce_scatter_gets_none_planned_or_listed);
  tcase_add_test(tc, a_runtime_without_reduce_scatter_all_reduces_onto_a_given_sharded_result);
  tcase_add_test(tc, a_partial_sum_flowing_through_an_add_is_all_reduced_once_as_the_export_inserts_it);
  tcase_add_test(tc, a_product_added_to_a_whole_value_is_reduced_before_the_add);
  tcase_add_test(tc, megatron_backward_pays_one_all_reduce_for_the_qkv_input_gradients);
  tcase_add_test(tc, searched_64_device_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, megatron_64_device_gpt_step_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, searched_64_device_gpt_step_without_reduce_scatter_prices_exactly_the_exported_collectives);
  tcase_add_test(tc, megatron_with_heads_the_model_axis_does_not_divide_prices_the_reshapes_reshards);
  tcase_add_test(tc, a_reduce_scatter_the_export_decides_otherwise_is_priced_as_it_runs);
  tcase_add_test(tc, a_reshard_is_priced_with_the_rows_of_the_tensor_as_the_export_plans_it);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(exported_suite()); }
