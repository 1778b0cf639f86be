/*
 * test_reshard_layout.c - the collectives planner of one reshard (export/reshard_layout.h), on
 * sharding pairs and meshes of its own: each test writes the planned steps as text
 * ("slice [..] => layout", "permute => layout", "a2a {..}: s->t => layout",
 * "gather [..] => layout") and compares them with the order Shardy's rules give.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/reshard_layout.h"
#include "ir/axis_ref.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"
#include "test_support.h"

typedef struct rec {
  const sp_mesh *mesh;
  int rank;
  char text[4096];
  int nsteps;
} rec;

static void put(rec *r, const char *s) {
  strncat(r->text, s, sizeof r->text - strlen(r->text) - 1);
}

/* One dim, adjacent parts of an axis merged: "p q:(1)2". */
static void put_dim(rec *r, const sp_rl_dim *d) {
  sp_axis_ref m[SP_RL_MAX_PIECES];
  int n = 0;
  for (int i = 0; i < d->n; i++) {
    int64_t size = sp_mesh_axis_size(r->mesh, d->v[i].name);
    if (n && sp_axis_can_merge(&m[n - 1], &d->v[i]))
      m[n - 1] = sp_axis_merge(&m[n - 1], &d->v[i], size);
    else
      m[n++] = d->v[i];
  }
  put(r, "{");
  for (int i = 0; i < n; i++) {
    char b[64];
    if (m[i].size)
      snprintf(b, sizeof b, "%s%s:(%lld)%lld", i ? " " : "", m[i].name, (long long)m[i].pre,
               (long long)m[i].size);
    else
      snprintf(b, sizeof b, "%s%s", i ? " " : "", m[i].name);
    put(r, b);
  }
  put(r, "}");
}

static void put_dims(rec *r, const sp_rl_dim *d) {
  put(r, "[");
  for (int i = 0; i < r->rank; i++) put_dim(r, &d[i]);
  put(r, "]");
}

static int record(void *ctx, const sp_rl_step *st) {
  rec *r = ctx;
  if (r->nsteps++) put(r, "; ");
  switch (st->kind) {
    case SP_RL_ALL_SLICE: put(r, "slice "); put_dims(r, st->axes); break;
    case SP_RL_ALL_GATHER: put(r, "gather "); put_dims(r, st->axes); break;
    case SP_RL_PERMUTE: put(r, "permute"); break;
    case SP_RL_ALL_TO_ALL: {
      char b[32];
      put(r, "a2a ");
      put_dim(r, &st->axes[0]);
      snprintf(b, sizeof b, ": %d->%d", st->src, st->tgt);
      put(r, b);
      break;
    }
  }
  put(r, " => ");
  put_dims(r, st->after);
  return 0;
}

static bool is_reshard(const sp_op *op) { return op->kind == SP_OP_SDY_RESHARD; }

/* Plans the reshard of a tensor of `shape` from `from` to `to` on mesh `axes`; the steps as
 * text in `out`. */
static void plan_text(const char *axes, const char *shape, const char *from, const char *to,
                      bool force, char *out, size_t cap) {
  char src[2048];
  snprintf(src, sizeof src,
           "sdy.mesh @m = <[%s]>\n"
           "func.func @f(%%x: tensor<%sxf32> {sdy.sharding = #sdy.sharding<@m, %s>}) -> tensor<%sxf32> {\n"
           "  %%0 = sdy.reshard %%x <@m, %s> : tensor<%sxf32>\n  return %%0 : tensor<%sxf32>\n}\n",
           axes, shape, from, shape, to, shape, shape);
  sp_module *m = sp_test_parse(src);
  sp_op_list l = {.keep = is_reshard};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  ck_assert_int_eq(l.n, 1);
  sp_op *rs = l.v[0];
  const sp_sharding *f = rs->operands[0].value->sharding, *t = rs->results[0].sharding;
  rec r = {.mesh = sp_sharding_mesh(m, t), .rank = t->rank};
  const sp_type *ty = rs->operands[0].value->type;
  ck_assert_int_eq(sp_rl_plan(r.mesh, f, t, t->rank, ty->dims, force, record, &r), SP_OK);
  snprintf(out, cap, "%s", r.text);
  sp_op_list_free(&l);
  sp_module_free(m);
}

#define MESH "\"p\"=2, \"q\"=4, \"r\"=2, \"s\"=6, \"t\"=3"

static void expect(const char *shape, const char *from, const char *to, const char *want) {
  char got[4096];
  plan_text(MESH, shape, from, to, false, got, sizeof got);
  ck_assert_str_eq(got, want);
}

START_TEST(missing_axes_follow_the_moving_ones_on_their_source_dim) {
  expect("8x8", "[{}, {\"r\"}]", "[{\"r\", \"p\"}, {}]",
         "slice [{}{p}] => [{}{r p}]; a2a {r p}: 1->0 => [{r p}{}]");
}
END_TEST

START_TEST(a_source_dim_without_room_leaves_the_slice_to_the_target_dim) {
  /* Dim 1 (2 elements) cannot hold r and p: p is sliced on dim 0, then swapped with r. */
  expect("8x2", "[{}, {\"r\"}]", "[{\"r\", \"p\"}, {}]",
         "slice [{p}{}] => [{p}{r}]; permute => [{r}{p}]; a2a {p}: 1->0 => [{r p}{}]");
}
END_TEST

START_TEST(axes_of_different_sizes_swap_dims_through_a_sub_axis) {
  expect("16x16", "[{\"q\"}, {\"p\"}]", "[{\"p\"}, {\"q\"}]",
         "permute => [{p q:(2)2}{q:(1)2}]; a2a {q:(2)2}: 0->1 => [{p}{q}]");
}
END_TEST

START_TEST(a_bigger_axis_replaces_a_smaller_one_by_their_gcd) {
  /* q (4) -> s (6), gcd 2: s's major 3 sliced, q's minor half swapped for s's minor half,
   * q's major half gathered. */
  expect("12x12", "[{\"q\"}, {}]", "[{\"s\"}, {}]",
         "slice [{s:(1)3}{}] => [{q s:(1)3}{}]; permute => [{s q:(1)2}{}]; "
         "gather [{q:(1)2}{}] => [{s}{}]");
}
END_TEST

START_TEST(coprime_axes_swap_dims_with_two_all_to_alls_and_a_permute) {
  expect("12x12", "[{\"p\"}, {\"t\"}]", "[{\"t\"}, {\"p\"}]",
         "a2a {p}: 0->1 => [{}{t p}]; permute => [{}{p t}]; a2a {t}: 1->0 => [{t}{p}]");
}
END_TEST

START_TEST(a_smaller_axis_replaces_the_major_part_of_a_bigger_one) {
  /* No piece of p's size: p takes q's major half, the rest is gathered. */
  expect("48x16", "[{\"q\", \"s\"}, {}]", "[{\"p\"}, {}]",
         "permute => [{p q:(2)2 s}{}]; gather [{q:(2)2 s}{}] => [{p}{}]");
  /* A piece of p's size is swapped for it whole. */
  expect("16x16", "[{\"q\", \"r\"}, {}]", "[{\"p\"}, {}]",
         "permute => [{p q}{}]; gather [{q}{}] => [{p}{}]");
}
END_TEST

START_TEST(movers_to_two_dims_are_grouped_by_target_dim) {
  expect("16x16x16", "[{}, {\"r\", \"q\", \"p\"}, {}]", "[{\"p\", \"r\"}, {}, {\"q\"}]",
         "permute => [{}{p r q}{}]; a2a {q}: 1->2 => [{}{p r}{q}]; a2a {p r}: 1->0 => [{p r}{}{q}]");
}
END_TEST

START_TEST(from_and_to_nothing_is_one_slice_or_one_gather) {
  expect("16x16", "[{}, {}]", "[{\"q\"}, {\"p\", \"r\"}]", "slice [{q}{p r}] => [{q}{p r}]");
  expect("16x16", "[{\"q\"}, {\"p\", \"r\"}]", "[{}, {}]", "gather [{q}{p r}] => [{}{}]");
}
END_TEST

START_TEST(a_device_order_change_alone_is_one_permute) {
  char got[4096];
  plan_text(MESH, "16x16", "[{\"q\"}, {}]", "[{\"q\"}, {}]", true, got, sizeof got);
  ck_assert_str_eq(got, "permute => [{q}{}]");
  plan_text(MESH, "16x16", "[{\"q\"}, {}]", "[{\"q\"}, {}]", false, got, sizeof got);
  ck_assert_str_eq(got, "");
}
END_TEST

START_TEST(sub_axes_that_cannot_coexist_are_gathered_before_the_other_is_sliced) {
  /* s:(1)2 and s:(1)3 of s=6 overlap without nesting: no layout holds both. */
  expect("6x6", "[{\"s\":(1)2}, {}]", "[{\"s\":(1)3}, {}]",
         "gather [{s:(1)2}{}] => [{}{}]; slice [{s:(1)3}{}] => [{s:(1)3}{}]");
  expect("6x6", "[{\"s\":(2)3}, {}]", "[{}, {\"s\":(1)3}]",
         "gather [{s:(2)3}{}] => [{}{}]; slice [{}{s:(1)3}] => [{}{s:(1)3}]");
}
END_TEST

START_TEST(the_largest_valid_mesh_never_holds_more_pieces_than_the_planner_does) {
  /* A dim's pieces are disjoint parts of mesh axes, each of size >= 2 but for size-1 axes:
   * at most log2(SP_MAX_DEVICES) = 20 of them, plus one per size-1 axis (at most
   * SP_MAX_MESH_AXES = 32 axes in all), under SP_RL_MAX_PIECES (64). So the planner never gives
   * up on a valid mesh: the cost search never meets a reshard the export keeps. Here 20 axes
   * of size 2 and 12 of size 1, all on one dim, move in reverse order onto the other. */
  char axes[1024] = "", from[1024] = "[{", to[1024] = "[{}, {";
  for (int i = 0; i < 32; i++) {
    char b[32];
    snprintf(b, sizeof b, "%s\"a%d\"=%d", i ? ", " : "", i, i < 20 ? 2 : 1);
    strcat(axes, b);
    snprintf(b, sizeof b, "%s\"a%d\"", i ? ", " : "", i);
    strcat(from, b);
    snprintf(b, sizeof b, "%s\"a%d\"", i ? ", " : "", 31 - i);
    strcat(to, b);
  }
  strcat(from, "}, {}]");
  strcat(to, "}]");
  ck_assert_int_le(20 + 12, SP_RL_MAX_PIECES);
  char got[4096];
  plan_text(axes, "1048576x1048576", from, to, false, got, sizeof got);
  const char *end = strrchr(got, '>');
  ck_assert_ptr_nonnull(end);
  char want[1024] = " [{}{";
  for (int i = 0; i < 32; i++) {
    char b[16];
    snprintf(b, sizeof b, "%sa%d", i ? " " : "", 31 - i);
    strcat(want, b);
  }
  strcat(want, "}]");
  ck_assert_str_eq(end + 1, want);
}
END_TEST

START_TEST(a_size_one_target_axis_is_not_cut_out_of_a_bigger_piece) {
  /* z (size 1) has no piece of its size to take, and no piece splits into one: the plan
   * ends in the target layout without reading past the dim's pieces (found by fuzz_export:
   * a negative memmove). */
  char got[4096];
  plan_text("\"x\"=3, \"y\"=2, \"z\"=1", "6x2", "[{}, {\"y\"}]", "[{}, {\"x\", \"z\"}]", false,
            got, sizeof got);
  const char *end = strrchr(got, '>');
  ck_assert_ptr_nonnull(end);
  ck_assert_str_eq(end + 1, " [{}{x z}]");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reshard_layout");
  TCase *tc = tcase_create("plan");
  tcase_add_test(tc, missing_axes_follow_the_moving_ones_on_their_source_dim);
  tcase_add_test(tc, a_source_dim_without_room_leaves_the_slice_to_the_target_dim);
  tcase_add_test(tc, axes_of_different_sizes_swap_dims_through_a_sub_axis);
  tcase_add_test(tc, a_bigger_axis_replaces_a_smaller_one_by_their_gcd);
  tcase_add_test(tc, coprime_axes_swap_dims_with_two_all_to_alls_and_a_permute);
  tcase_add_test(tc, a_smaller_axis_replaces_the_major_part_of_a_bigger_one);
  tcase_add_test(tc, movers_to_two_dims_are_grouped_by_target_dim);
  tcase_add_test(tc, from_and_to_nothing_is_one_slice_or_one_gather);
  tcase_add_test(tc, a_device_order_change_alone_is_one_permute);
  tcase_add_test(tc, sub_axes_that_cannot_coexist_are_gathered_before_the_other_is_sliced);
  tcase_add_test(tc, a_size_one_target_axis_is_not_cut_out_of_a_bigger_piece);
  tcase_add_test(tc, the_largest_valid_mesh_never_holds_more_pieces_than_the_planner_does);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
