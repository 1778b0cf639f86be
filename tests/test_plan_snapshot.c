/*
 * test_plan_snapshot.c - the best plan so far, handed out while the search goes on
 * (plan/plan.h: sp_plan_options.snapshot_at_us and on_snapshot; search/placement.c decides
 * what is handed out, search/plan_snapshot.c and plan/plan_snapshot.c build it): a snapshot
 * is a complete plan, cut short, and the search it was taken from ends exactly as without it;
 * under mesh-shape search its gap is reported unknown; before any plan priced with the
 * cluster's links exists, a probe's plan stands in, priced with the links it would cross,
 * also as the final answer when the deadline comes then.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "ir/strbuf.h"
#include "mlir/mlir.h"
#include "plan/plan.h"
#include "cluster_support.h"
#include "test_support.h"

/* What a test's snapshot callback saw, and what it does: moves the snapshot time to 0 (it is
 * served once), and when `stop` is set, moves the search's deadline to now. */
typedef struct taker {
  atomic_llong at, deadline;
  bool stop;
  int n, failed;
  sp_plan *first;
} taker;

static void take(void *ctx, sp_plan *plan, const sp_err *err) {
  taker *t = ctx;
  atomic_store(&t->at, 0);
  if (t->stop) atomic_store(&t->deadline, 1);
  if (!plan) {
    t->failed++;
    ck_abort_msg("no snapshot: %s", err ? err->msg : "?");
  }
  t->n++;
  if (!t->first) t->first = plan;
  else sp_plan_free(plan);
}

/* Options asking for a snapshot at once (the first check with a plan serves it). */
static void snapshot_now(sp_plan_options *o, taker *t) {
  atomic_store(&t->at, 1);
  o->snapshot_at_us = &t->at;
  o->on_snapshot = take;
  o->snapshot_ctx = t;
  o->moving_deadline_us = &t->deadline;
}

static char *gpt_text(int layers, const char *mesh) {
  sp_gen_options g;
  sp_gen_default_options(&g);
  g.layers = layers;
  g.backward = true;
  sp_err err;
  ck_assert_int_eq(sp_gen_parse_mesh(mesh, &g, &err), SP_OK);
  sp_strbuf sb = SP_STRBUF_INIT;
  ck_assert_int_eq(sp_gen_write(&g, &sb, NULL, &err), SP_OK);
  return sp_strbuf_detach(&sb);
}

static sp_plan *plan_text(const char *text, const sp_cluster *c, const sp_plan_options *o) {
  sp_plan_input in = {.text = text, .len = strlen(text), .filename = "gpt.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  sp_err_clear(&err);
  ck_assert_msg(sp_plan_run(&in, c, o, &p, &err) == SP_OK, "%s", err.msg);
  return p;
}

/* The plan's JSON without wall-clock times (not part of a plan's bytes). */
static char *plan_json(sp_plan *p) {
  p->solver.build_s = p->solver.solve_s = 0;
  char *s = sp_plan_to_json_text(p, false);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* The number of values of the plan that are the main function's arguments, and of those the
 * plan shards. */
static int count_args(const sp_plan *p, int *sharded) {
  int n = 0;
  *sharded = 0;
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].pos.kind == SP_PLAN_ARG && p->values[i].pos.op < 0) {
      n++;
      *sharded += p->values[i].sharded;
    }
  return n;
}

/* A plan is whole, like the final plan `like`: the same functions' arguments, as many of
 * them sharded, the same ops with tables, the module text readable again, costs priced. */
static void assert_whole(const sp_plan *p, const sp_plan *like) {
  ck_assert(p->searched);
  int ps, ls;
  ck_assert_int_eq(count_args(p, &ps), count_args(like, &ls));
  ck_assert_int_eq(ps, ls);
  ck_assert_int_gt(ps, 0);
  ck_assert_int_eq(p->nops, like->nops);
  ck_assert(p->costs.total_s > 0);
  ck_assert(p->costs.total_s == p->costs.compute_s + p->costs.comm_s);
  sp_module *m = NULL;
  sp_err err;
  ck_assert_msg(sp_mlir_parse(p->module, strlen(p->module), "snapshot", 1, &m, &err) == SP_OK,
                "%s", err.msg);
  sp_module_free(m);
}

START_TEST(a_snapshot_is_a_whole_plan_cut_short_and_the_search_ends_as_without_it) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  char *text = gpt_text(2, "data=2,model=4");
  sp_plan_options o;
  sp_plan_options_init(&o);   /* no time limit: bounded by work, the same plan every time */
  sp_plan *alone = plan_text(text, c, &o);
  taker t = {0};
  snapshot_now(&o, &t);
  sp_plan *with = plan_text(text, c, &o);
  ck_assert_int_eq(t.n, 1);
  sp_plan *s = t.first;
  char *a = plan_json(alone), *b = plan_json(with);
  ck_assert_str_eq(a, b);
  /* The snapshot: cut short, complete, no cheaper than the search's end. */
  ck_assert_str_eq(s->solver.status, "timeout");
  assert_whole(s, alone);
  ck_assert_int_ge(s->solver.cost, alone->solver.cost);
  ck_assert_int_eq(s->nchoice, alone->nchoice);
  ck_assert_str_eq(s->mesh.name, alone->mesh.name);
  ck_assert_int_eq(s->mesh.ndevices, alone->mesh.ndevices);
  /* One configuration (the mesh and placement as given on one machine): its bound holds. */
  ck_assert(s->solver.bound != INT64_MIN);
  ck_assert(s->solver.gap < 1);
  /* It reads back as any plan does. */
  char *js = plan_json(s);
  sp_plan *back = NULL;
  sp_err err;
  ck_assert_int_eq(sp_plan_from_json(js, strlen(js), &back, &err), SP_OK);
  char *js2 = plan_json(back);
  ck_assert_str_eq(js, js2);
  free(js);
  free(js2);
  sp_plan_free(back);
  free(a);
  free(b);
  sp_plan_free(s);
  sp_plan_free(alone);
  sp_plan_free(with);
  free(text);
  sp_cluster_free(c);
}
END_TEST

START_TEST(under_mesh_shape_search_a_snapshot_and_a_cut_plan_have_an_unknown_gap) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  char *text = gpt_text(1, "data=2,model=4");
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mesh_shape = SP_PLAN_AUTO;
  taker t = {.stop = true};   /* the snapshot also ends the search: the shapes left are cut */
  snapshot_now(&o, &t);
  sp_plan *p = plan_text(text, c, &o);
  ck_assert_int_eq(t.n, 1);
  sp_plan *s = t.first;
  /* The first shape's plan, maybe proven optimal for that shape: its gap over all shapes is
   * not known. */
  ck_assert_str_eq(s->solver.status, "timeout");
  ck_assert_int_eq(s->solver.bound, INT64_MIN);
  ck_assert(s->solver.gap == 1);
  assert_whole(s, p);
  ck_assert(s->mesh.shape_searched);
  ck_assert_str_eq(p->solver.status, "timeout");
  ck_assert_int_eq(p->solver.bound, INT64_MIN);
  ck_assert(p->solver.gap == 1);
  sp_plan_free(s);
  sp_plan_free(p);
  /* Every shape planned, no cut: the bound is the least over the shapes. */
  sp_plan_options full;
  sp_plan_options_init(&full);
  full.mesh_shape = SP_PLAN_AUTO;
  p = plan_text(text, c, &full);
  ck_assert(p->solver.bound != INT64_MIN);
  ck_assert(p->solver.bound <= p->solver.cost);
  if (!strcmp(p->solver.status, "optimal")) ck_assert(p->solver.gap == 0);
  sp_plan_free(p);
  free(text);
  sp_cluster_free(c);
}
END_TEST

/* The links each mesh axis of the plan crosses, "a,b". */
static void links(const sp_plan *p, char *buf, size_t cap) {
  buf[0] = '\0';
  for (int i = 0; i < p->mesh.naxes; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? "," : "", p->mesh.axes[i].link);
}

START_TEST(before_any_plan_with_the_clusters_links_a_probe_plan_stands_in_priced_with_them) {
  /* 32 devices over four machines: the axes cross different links, so rank mapping plans
   * the shape first with uniform links (a probe) to measure its traffic. */
  sp_cluster *c = sp_test_load_cluster("four_machines_32gpu.json");
  char *text = gpt_text(1, "data=4,model=8");
  sp_plan_options o;
  sp_plan_options_init(&o);
  sp_plan *full = plan_text(text, c, &o);
  char want[64];
  links(full, want, sizeof want);
  ck_assert_msg(strchr(want, ',') && strncmp(want, strchr(want, ',') + 1, strlen(want)) != 0,
                "the axes should cross different links: %s", want);
  /* A snapshot at once is taken during the probe, and ends the search there. */
  taker t = {.stop = true};
  snapshot_now(&o, &t);
  sp_plan *p = plan_text(text, c, &o);
  ck_assert_int_eq(t.n, 1);
  sp_plan *s = t.first;
  char got[64];
  for (int k = 0; k < 2; k++) {
    const sp_plan *x = k ? p : s;
    /* A valid plan, priced with the links of its placement (not the probe's uniform ones),
     * cut short, its gap unknown. */
    assert_whole(x, full);
    links(x, got, sizeof got);
    ck_assert_str_eq(got, want);
    ck_assert_str_eq(x->solver.status, "timeout");
    ck_assert_int_eq(x->solver.bound, INT64_MIN);
    ck_assert(x->solver.gap == 1);
    for (int64_t i = 0; i < x->mesh.ndevices; i++) ck_assert_int_eq(x->mesh.device_of[i], i);
  }
  sp_plan_free(s);
  sp_plan_free(p);
  sp_plan_free(full);
  free(text);
  sp_cluster_free(c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("plan_snapshot");
  TCase *tc = tcase_create("snapshots");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, a_snapshot_is_a_whole_plan_cut_short_and_the_search_ends_as_without_it);
  tcase_add_test(tc, under_mesh_shape_search_a_snapshot_and_a_cut_plan_have_an_unknown_gap);
  tcase_add_test(tc, before_any_plan_with_the_clusters_links_a_probe_plan_stands_in_priced_with_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
