/*
 * test_factor_projection.c - dimension shardings to factor shardings and back: compound
 * reshape factors, axes split over factors, overflow axes, closedness, minor-most factors,
 * the text and JSON forms of the factor table, and errors on bad input.
 *
 * Rules are built by hand (fixtures), in the form Shardy's registry gives them.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "factor_fixtures.h"
#include "propagation/factor_projection.h"
#include "propagation/factor_propagation.h"
#include "test_support.h"

static sp_arena *A;
static void setup(void) { A = sp_arena_new(0); }
static void teardown(void) { sp_arena_free(A); }

/* The cell's axes as text: `"a":(1)2, "b"` (overflow after " +"), or "-" if absent. */
static const char *cell_str(const sp_factor_table *t, int row, int f) {
  static char bufs[8][256];
  static int next;
  char *out = bufs[next++ % 8];
  const sp_ft_cell *c = &t->rows[row].cells[f];
  if (!c->present) return strcpy(out, "-");
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; i < c->axes.n; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, t->mesh, c->axes.v[i], true);
  }
  if (c->overflow.n) sp_strbuf_puts(&sb, " +");
  for (int i = 0; i < c->overflow.n; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, t->mesh, c->overflow.v[i], true);
  }
  snprintf(out, 256, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return out;
}

static sp_factor_table *build(const sp_rule *r, const sp_mesh *m, sp_sharding *const *ops,
                              sp_sharding *const *res) {
  sp_factor_table *t = NULL;
  sp_err err;
  int rc = sp_factor_table_build(A, r, m, ops, res, &t, &err);
  ck_assert_msg(rc == SP_OK, "build failed: %s", err.msg);
  return t;
}

static const char *rebuilt(const sp_factor_table *t, int row, const sp_sharding *old) {
  sp_sharding *s = NULL;
  sp_sharding *ref = sp_sharding_new(A, "mesh", 0, false);
  ck_assert_int_eq(sp_factor_table_to_sharding(A, t, row, old, ref, &s, NULL), SP_OK);
  return fx_str(s);
}

/* Propagates (basic unless `o` says otherwise) and returns each tensor's final sharding. */
typedef struct outcome {
  const char *op[4];
  const char *res[4];
} outcome;

static outcome run(const sp_rule *r, const sp_mesh *m, sp_sharding **ops, sp_sharding **res,
                   const sp_prop_options *o) {
  sp_sharding *nops[4] = {0}, *nres[4] = {0};
  sp_err err;
  int rc = sp_factor_propagate_op(A, A, r, m, NULL, ops, res, o, nops, nres, NULL, NULL, &err);
  ck_assert_msg(rc == SP_OK, "propagation failed: %s", err.msg);
  outcome out;
  for (int i = 0; i < r->noperands; i++) out.op[i] = fx_str(nops[i] ? nops[i] : ops[i]);
  for (int i = 0; i < r->nresults; i++) out.res[i] = fx_str(nres[i] ? nres[i] : res[i]);
  return out;
}

/* ------------------------------------------------------------------ reshapes */

START_TEST(reshape_2x4x32_to_8x32_merges_two_factors_into_one_dim) {
  sp_mesh *m = fx_mesh(A, "a=2, b=4");
  sp_rule *r = fx_rule(A, "([i, j, k])->([ij, k])", (int64_t[]){2, 4, 32});
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {b}, {}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"a\"");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"b\"");
  ck_assert_str_eq(cell_str(t, 0, 2), "");
  ck_assert(t->rows[0].cells[0].closed && t->rows[0].cells[0].minor_most);
  /* In the result, i and j share dim 0: only j is minor-most. */
  ck_assert(t->rows[1].cells[0].present && !t->rows[1].cells[0].minor_most);
  ck_assert(t->rows[1].cells[1].minor_most && !t->rows[1].cells[1].closed);
  ck_assert_int_eq(t->rows[0].size, 2 * 4 * 32);

  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", \"b\", ?}, {?}]>");
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\"}, {\"b\"}, {}]>");
}
END_TEST

START_TEST(reshape_8x32_to_2x4x32_splits_one_axis_over_two_factors) {
  sp_mesh *m = fx_mesh(A, "a=4");
  sp_rule *r = fx_rule(A, "([ij, k])->([i, j, k])", (int64_t[]){2, 4, 32});
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"a\":(1)2");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"a\":(2)2");
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\":(1)2, ?}, {\"a\":(2)2, ?}, {?}]>");
}
END_TEST

START_TEST(reshape_2x4x32_back_to_8x32_merges_sub_axes_into_the_full_axis) {
  /* The split of the previous test, backwards: the two parts of "a" become "a" again. */
  sp_mesh *m = fx_mesh(A, "a=4");
  sp_rule *r = fx_rule(A, "([i, j, k])->([ij, k])", (int64_t[]){2, 4, 32});
  sp_sharding *ops[] = {fx_sharding(A, "{a:(1)2}, {a:(2)2}, {}", NULL)}, *res[] = {NULL};
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(reshape_8x4_to_2x16_builds_compound_factors_on_both_sides) {
  /* ((ij), k) -> (i, (jk)), i=2 j=4 k=4 */
  sp_mesh *m = fx_mesh(A, "a=4, b=2, c=2");
  sp_rule *r = fx_rule(A, "([ij, k])->([i, jk])", (int64_t[]){2, 4, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{c, a}, {b}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"c\"");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"a\"");
  ck_assert_str_eq(cell_str(t, 0, 2), "\"b\"");
  ck_assert(!t->rows[1].cells[1].minor_most && t->rows[1].cells[2].minor_most);
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"c\", ?}, {\"a\", \"b\", ?}]>");
}
END_TEST

START_TEST(axis_split_over_factors_gives_the_minor_most_factor_the_rest) {
  /* Shardy's example: tensor<8> [{"a","b"}], a=4 b=4, rule ([ij]) i=2 j=4. */
  sp_mesh *m = fx_mesh(A, "a=4, b=4");
  sp_rule *r = fx_rule(A, "([ij])->([ij])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a, b}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"a\":(1)2");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"a\":(2)2, \"b\"");
  ck_assert_int_eq(t->rows[0].cells[0].overflow.n, 0);
  ck_assert_int_eq(t->rows[0].cells[1].overflow.n, 0);
  /* Back to a dim: "a":(1)2 and "a":(2)2 merge. */
  ck_assert_str_eq(rebuilt(t, 0, ops[0]), "<@mesh, [{\"a\", \"b\"}]>");
}
END_TEST

START_TEST(minor_most_factor_takes_a_non_divisible_remainder) {
  sp_mesh *m = fx_mesh(A, "a=6");
  sp_rule *r = fx_rule(A, "([ij])->([i, j])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"a\":(1)2");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"a\":(2)3");
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\":(1)2, ?}, {\"a\":(2)3, ?}]>");
}
END_TEST

START_TEST(size_one_axes_join_the_factor_they_meet) {
  /* tensor<8> [{"a","b","c"}] with a=1 b=2 c=1 -> 2x1x4: all three go to the size-2 factor. */
  sp_mesh *m = fx_mesh(A, "a=1, b=2, c=1");
  sp_rule *r = fx_rule(A, "([ik])->([i, j, k])", (int64_t[]){2, 1, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a, b, c}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"a\", \"b\", \"c\"");
  ck_assert_str_eq(cell_str(t, 0, 1), "-");
  ck_assert_str_eq(cell_str(t, 0, 2), "");
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", \"b\", \"c\", ?}, {?}, {?}]>");
}
END_TEST

/* ------------------------------------------------------------------ overflow */

START_TEST(coprime_axis_becomes_overflow_and_closes_the_next_factor) {
  sp_mesh *m = fx_mesh(A, "a=3");
  sp_rule *r = fx_rule(A, "([ij])->([i, j])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), " +\"a\"");
  ck_assert(!t->rows[0].cells[0].closed);
  ck_assert(t->rows[0].cells[1].present && t->rows[0].cells[1].closed);
  ck_assert_str_eq(cell_str(t, 0, 1), "");
  /* Re-projection puts the overflow axis back and keeps the dim open. */
  ck_assert_str_eq(rebuilt(t, 0, ops[0]), "<@mesh, [{\"a\", ?}]>");
  /* Nothing can move: the result stays without a sharding. */
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.res[0], "none");
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\", ?}]>");
}
END_TEST

START_TEST(regrouped_projection_deals_dividing_parts_instead_of_overflow) {
  /* [x=6, y=4096] over factors 4 and 6144: the first takes "x":(1)2 and, past the coprime
   * "x":(2)3, "y":(1)2; the second gets the parts left in order. No overflow, and the cells
   * rebuild another device order than the tensor's. */
  sp_mesh *m = fx_mesh(A, "x=6, y=4096");
  sp_rule *r = fx_rule(A, "([ij])->([ij])", (int64_t[]){4, 6144});
  sp_sharding *ops[] = {fx_sharding(A, "{x, y}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = NULL;
  ck_assert_int_eq(sp_factor_table_build_regrouped(A, r, m, ops, res, &t, NULL), SP_OK);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"x\":(1)2, \"y\":(1)2");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"x\":(2)3, \"y\":(2)2048");
  ck_assert_str_eq(rebuilt(t, 0, ops[0]),
                   "<@mesh, [{\"x\":(1)2, \"y\":(1)2, \"x\":(2)3, \"y\":(2)2048}]>");
  /* The plain projection stops at the coprime part: overflow. */
  t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"x\":(1)2 +\"x\":(2)3, \"y\"");
}
END_TEST

START_TEST(regrouped_projection_moves_what_a_split_dim_leaves_to_the_last_factor) {
  /* [x=4] over dim 0's factors 3 and 2: neither is divided by what is left after "x":(1)2,
   * so "x":(2)2 goes to the tensor's last factor (dim 2's); a dim of one factor still takes
   * all its axes (the last one below, and any non-divisible one). */
  sp_mesh *m = fx_mesh(A, "x=4");
  sp_rule *r = fx_rule(A, "([ij, k, l])->([ij, k, l])", (int64_t[]){3, 2, 1, 1});
  sp_sharding *ops[] = {fx_sharding(A, "{x}, {}, {}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = NULL;
  ck_assert_int_eq(sp_factor_table_build_regrouped(A, r, m, ops, res, &t, NULL), SP_OK);
  ck_assert_str_eq(cell_str(t, 0, 0), "");
  ck_assert_str_eq(cell_str(t, 0, 1), "\"x\":(1)2");
  ck_assert_str_eq(cell_str(t, 0, 2), "");
  ck_assert_str_eq(cell_str(t, 0, 3), "\"x\":(2)2");
  sp_rule *one = fx_rule(A, "([i])->([i])", (int64_t[]){3});
  sp_sharding *odd[] = {fx_sharding(A, "{x}", NULL)};
  ck_assert_int_eq(sp_factor_table_build_regrouped(A, one, m, odd, res, &t, NULL), SP_OK);
  ck_assert_str_eq(cell_str(t, 0, 0), "\"x\"");
}
END_TEST

START_TEST(regrouped_projection_equals_the_plain_one_without_coprime_parts) {
  sp_mesh *m = fx_mesh(A, "a=4, b=4");
  sp_rule *r = fx_rule(A, "([ij])->([ij])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a, b}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = NULL;
  ck_assert_int_eq(sp_factor_table_build_regrouped(A, r, m, ops, res, &t, NULL), SP_OK);
  ck_assert(sp_factor_table_equal(t, build(r, m, ops, res)));
  ck_assert_str_eq(rebuilt(t, 0, ops[0]), "<@mesh, [{\"a\", \"b\"}]>");
}
END_TEST

START_TEST(only_the_factor_right_after_an_overflow_gets_a_closed_cell) {
  sp_mesh *m = fx_mesh(A, "a=3");
  sp_rule *r = fx_rule(A, "([ijk])->([i, j, k])", (int64_t[]){2, 2, 2});
  sp_sharding *ops[] = {fx_sharding(A, "{a}", NULL)};
  sp_factor_table *t = build(r, m, ops, NULL);
  ck_assert_str_eq(cell_str(t, 0, 0), " +\"a\"");
  ck_assert_str_eq(cell_str(t, 0, 1), "");
  ck_assert(t->rows[0].cells[1].closed);
  ck_assert_str_eq(cell_str(t, 0, 2), "-");
}
END_TEST

START_TEST(overflow_axes_survive_when_another_dim_of_the_tensor_changes) {
  /* 2x2x32 [{"c"}, {?}, {"a","b"}] -> 2x2x8x4 with b=3: "b" overflows factor k=8. */
  sp_mesh *m = fx_mesh(A, "a=2, b=3, c=2, d=2");
  sp_rule *r = fx_rule(A, "([i, j, kl])->([i, j, k, l])", (int64_t[]){2, 2, 8, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{c}, {?}, {a, b}", NULL)};
  sp_sharding *res[] = {fx_sharding(A, "{?}, {d}, {?}, {?}", NULL)};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 2), "\"a\" +\"b\"");
  ck_assert(t->rows[0].cells[3].closed);
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"c\"}, {\"d\", ?}, {\"a\", \"b\"}]>");
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"c\", ?}, {\"d\"}, {\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(overflow_sub_axis_merges_back_into_the_full_axis) {
  /* 2x32 [{?}, {"a"}] with a=6: factor j=8 takes "a":(1)2, "a":(2)3 overflows. */
  sp_mesh *m = fx_mesh(A, "a=6, b=2");
  sp_rule *r = fx_rule(A, "([i, jk])->([i, j, k])", (int64_t[]){2, 8, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{?}, {a}", NULL)};
  sp_sharding *res[] = {fx_sharding(A, "{b}, {?}, {?}", NULL)};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_str_eq(cell_str(t, 0, 1), "\"a\":(1)2 +\"a\":(2)3");
  outcome o = run(r, m, ops, res, NULL);
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"b\", ?}, {\"a\"}]>");
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"b\"}, {\"a\":(1)2, ?}, {?}]>");
}
END_TEST

START_TEST(axes_of_a_later_factor_are_dropped_when_an_earlier_one_is_not_filled) {
  /* 4x4 [{"a"}, {"b"}] -> 16 with a=2 b=2: i=4 holds only "a" (2 < 4), so "b" cannot follow
   * in the merged dim. The factor table still has it. */
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j])->([ij])", (int64_t[]){4, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {b}", NULL)}, *res[] = {NULL};
  sp_factor_table *t = build(r, m, ops, res);
  ck_assert_int_eq(sp_factor_propagate(t, NULL, NULL, NULL), SP_OK);
  ck_assert_str_eq(cell_str(t, 1, 0), "\"a\"");
  ck_assert_str_eq(cell_str(t, 1, 1), "\"b\"");
  ck_assert_str_eq(rebuilt(t, 1, NULL), "<@mesh, [{\"a\", ?}]>");
}
END_TEST

/* ------------------------------------------------------------------ other rows and errors */

START_TEST(missing_sharding_projects_to_open_empty_cells) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){4, 4});
  sp_factor_table *t = build(r, m, NULL, NULL);
  for (int row = 0; row < 2; row++)
    for (int f = 0; f < 2; f++) {
      const sp_ft_cell *c = &t->rows[row].cells[f];
      ck_assert(c->present && !c->closed && c->minor_most);
      ck_assert_int_eq(c->axes.n, 0);
    }
  ck_assert(!t->rows[0].sharded);
  ck_assert_str_eq(rebuilt(t, 0, NULL), "<@mesh, [{?}, {?}]>");
}
END_TEST

START_TEST(replicated_and_unreduced_axes_are_kept_on_the_row_and_copied_back) {
  sp_mesh *m = fx_mesh(A, "a=2, f=2, u=2");
  sp_rule *r = fx_rule(A, "([i])->([i])", (int64_t[]){8});
  sp_sharding *s = fx_sharding(A, "{a, ?}", "f");
  s->nunreduced = 1;
  s->unreduced = sp_arena_calloc(A, 1, sizeof *s->unreduced);
  s->unreduced[0] = (sp_axis_ref){"u", 0, 0};
  sp_sharding *ops[] = {s};
  sp_factor_table *t = build(r, m, ops, NULL);
  ck_assert_int_eq(t->rows[0].replicated.n, 1);
  ck_assert_int_eq(t->rows[0].replicated.v[0].axis, 1);
  ck_assert_int_eq(t->rows[0].unreduced.n, 1);
  ck_assert_str_eq(rebuilt(t, 0, s), "<@mesh, [{\"a\", ?}], replicated={\"f\"}, unreduced={\"u\"}>");
}
END_TEST

START_TEST(copy_is_deep_and_equal_until_one_side_changes) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i])->([i])", (int64_t[]){8});
  sp_sharding *ops[] = {fx_sharding(A, "{a, b}", NULL)};
  sp_factor_table *t = build(r, m, ops, NULL);
  sp_factor_table *c = sp_factor_table_copy(A, t);
  ck_assert(c && sp_factor_table_equal(t, c));
  ck_assert_ptr_ne(c->rows[0].cells[0].axes.v, t->rows[0].cells[0].axes.v);
  ck_assert_int_eq(sp_factor_propagate(c, NULL, NULL, NULL), SP_OK);
  ck_assert(c->rows[1].updated);
  ck_assert(!sp_factor_table_equal(t, c));
  ck_assert_str_eq(cell_str(t, 1, 0), "");
}
END_TEST

START_TEST(unknown_axis_is_reported_with_tensor_and_dim) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){4, 4});
  sp_sharding *res[] = {fx_sharding(A, "{a}, {q}", NULL)};
  sp_factor_table *t = NULL;
  sp_err err;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, NULL, res, &t, &err), SP_EINVAL);
  ck_assert_ptr_null(t);
  ck_assert_str_eq(err.msg, "result 0 dim 1: unknown axis name \"q\" (not in the mesh)");
}
END_TEST

START_TEST(invalid_sub_axis_is_reported) {
  sp_mesh *m = fx_mesh(A, "a=8");
  sp_rule *r = fx_rule(A, "([i])->([i])", (int64_t[]){8});
  sp_sharding *ops[] = {fx_sharding(A, "{a:(3)2}", NULL)};
  sp_factor_table *t = NULL;
  sp_err err;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, ops, NULL, &t, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "operand 0 dim 0: invalid sub-axis \"a\":(3)2");
}
END_TEST

START_TEST(sharding_rank_different_from_the_rule_is_rejected) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){4, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a}", NULL)};
  sp_factor_table *t = NULL;
  sp_err err;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, ops, NULL, &t, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "operand 0: sharding has 1 dims but the sharding rule maps 2");
}
END_TEST

START_TEST(malformed_rules_are_rejected_not_crashed_on) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_err err;
  sp_factor_table *t = NULL;
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){4, 4});
  r->results[0].dims[1].factors[0] = 7; /* out of range */
  ck_assert_int_eq(sp_factor_table_build(A, r, m, NULL, NULL, &t, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg,
                   "sharding rule: result 0 dim 1 maps factor 7, but the rule has 2 factors");
  r = fx_rule(A, "([i, i])->([i, j])", (int64_t[]){4, 4});
  ck_assert_int_eq(sp_factor_table_build(A, r, m, NULL, NULL, &t, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "sharding rule: factor 0 appears twice in operand 0");
  r = fx_rule(A, "([i])->([i])", (int64_t[]){4});
  r->operands[0].dims[0].nfactors = 0;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, NULL, NULL, &t, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "sharding rule: operand 0 dim 0 maps to no factor");
}
END_TEST

/* ------------------------------------------------------------------ printing */

START_TEST(factor_table_prints_as_aligned_text) {
  sp_mesh *m = fx_mesh(A, "a=2, b=3, f=2");
  sp_rule *r = fx_rule(A, "([i, jk], [k])->([i, j])", (int64_t[]){8, 2, 4});
  r->factors[2].kind = SP_FACTOR_REDUCTION;
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}, {b}", "f"), NULL};
  sp_factor_table *t = build(r, m, ops, NULL);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_factor_table_print(&sb, t);
  ck_assert_str_eq(sp_strbuf_str(&sb),
                   "           i=8       j=2        k=4 reduction  replicated  unreduced\n"
                   "operand 0  {\"a\", ?}  {} +{\"b\"}  {}             {\"f\"}       {}\n"
                   "operand 1  -         -          {?}            {}          {}\n"
                   "result 0   {?}       {?}        -              {}          {}\n");
  sp_strbuf_free(&sb);
}
END_TEST

START_TEST(factor_table_converts_to_json) {
  sp_mesh *m = fx_mesh(A, "a=4");
  sp_rule *r = fx_rule(A, "([ij])->([i, j])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a}", NULL)};
  sp_factor_table *t = build(r, m, ops, NULL);
  cJSON *j = sp_factor_table_to_json(t);
  ck_assert_ptr_nonnull(j);
  char *text = cJSON_PrintUnformatted(j);
  ck_assert_str_eq(
      text,
      "{\"mesh\":[{\"name\":\"a\",\"size\":4}],"
      "\"factors\":[{\"name\":\"i\",\"size\":2,\"kind\":\"pass_through\",\"blocked\":false},"
      "{\"name\":\"j\",\"size\":4,\"kind\":\"pass_through\",\"blocked\":false}],"
      "\"tensors\":[{\"tensor\":\"operand 0\",\"sharded\":true,\"updated\":false,\"size\":8,"
      "\"replicated\":[],\"unreduced\":[],\"cells\":["
      "{\"axes\":[\"a:(1)2\"],\"closed\":true,\"minor_most\":false,\"overflow\":[]},"
      "{\"axes\":[\"a:(2)2\"],\"closed\":true,\"minor_most\":true,\"overflow\":[]}]},"
      "{\"tensor\":\"result 0\",\"sharded\":false,\"updated\":false,\"size\":8,"
      "\"replicated\":[],\"unreduced\":[],\"cells\":["
      "{\"axes\":[],\"closed\":false,\"minor_most\":true,\"overflow\":[]},"
      "{\"axes\":[],\"closed\":false,\"minor_most\":true,\"overflow\":[]}]}]}");
  free(text);
  cJSON_Delete(j);
}
END_TEST

static Suite *projection_suite(void) {
  Suite *s = suite_create("factor_projection");
  TCase *tc = tcase_create("reshape");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, reshape_2x4x32_to_8x32_merges_two_factors_into_one_dim);
  tcase_add_test(tc, reshape_8x32_to_2x4x32_splits_one_axis_over_two_factors);
  tcase_add_test(tc, reshape_2x4x32_back_to_8x32_merges_sub_axes_into_the_full_axis);
  tcase_add_test(tc, reshape_8x4_to_2x16_builds_compound_factors_on_both_sides);
  tcase_add_test(tc, axis_split_over_factors_gives_the_minor_most_factor_the_rest);
  tcase_add_test(tc, minor_most_factor_takes_a_non_divisible_remainder);
  tcase_add_test(tc, size_one_axes_join_the_factor_they_meet);
  suite_add_tcase(s, tc);

  tc = tcase_create("overflow");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, coprime_axis_becomes_overflow_and_closes_the_next_factor);
  tcase_add_test(tc, only_the_factor_right_after_an_overflow_gets_a_closed_cell);
  tcase_add_test(tc, regrouped_projection_deals_dividing_parts_instead_of_overflow);
  tcase_add_test(tc, regrouped_projection_equals_the_plain_one_without_coprime_parts);
  tcase_add_test(tc, regrouped_projection_moves_what_a_split_dim_leaves_to_the_last_factor);
  tcase_add_test(tc, overflow_axes_survive_when_another_dim_of_the_tensor_changes);
  tcase_add_test(tc, overflow_sub_axis_merges_back_into_the_full_axis);
  tcase_add_test(tc, axes_of_a_later_factor_are_dropped_when_an_earlier_one_is_not_filled);
  suite_add_tcase(s, tc);

  tc = tcase_create("rows_and_errors");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, missing_sharding_projects_to_open_empty_cells);
  tcase_add_test(tc, replicated_and_unreduced_axes_are_kept_on_the_row_and_copied_back);
  tcase_add_test(tc, copy_is_deep_and_equal_until_one_side_changes);
  tcase_add_test(tc, unknown_axis_is_reported_with_tensor_and_dim);
  tcase_add_test(tc, invalid_sub_axis_is_reported);
  tcase_add_test(tc, sharding_rank_different_from_the_rule_is_rejected);
  tcase_add_test(tc, malformed_rules_are_rejected_not_crashed_on);
  suite_add_tcase(s, tc);

  tc = tcase_create("printing");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, factor_table_prints_as_aligned_text);
  tcase_add_test(tc, factor_table_converts_to_json);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(projection_suite()); }
