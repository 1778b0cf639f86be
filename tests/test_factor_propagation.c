/*
 * test_factor_propagation.c - propagation through one op along its factors: the matmul rule
 * under the basic and aggressive strategies, the seed's factor table, the compatible-axes
 * merge, closed dims, replicated axes, axes used by other factors, conservative mode,
 * divisibility of non-minor-most factors, directions, element-wise operands, and the
 * conflict records.
 *
 * Rules are built by hand (fixtures), in the form Shardy's registry gives them; the expected
 * shardings follow Shardy's semantics (basic_propagation.mlir and the propagation doc).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "factor_fixtures.h"
#include "propagation/conflict.h"
#include "propagation/factor_projection.h"
#include "propagation/factor_propagation.h"
#include "test_support.h"

static sp_arena *A;
static sp_conflict_log LOG;
static void setup(void) {
  A = sp_arena_new(0);
  sp_conflict_log_init(&LOG, A);
}
static void teardown(void) { sp_arena_free(A); }

static const sp_prop_options BASIC = {SP_PROP_BASIC, false, false, NULL};
static const sp_prop_options AGGRESSIVE = {SP_PROP_AGGRESSIVE, false, false, NULL};

typedef struct outcome {
  const char *op[4];
  const char *res[4];
  int nupdated;
} outcome;

/* Propagates through the op and returns each tensor's final sharding (records conflicts in
 * LOG). */
static outcome run(const sp_rule *r, const sp_mesh *m, sp_sharding **ops, sp_sharding **res,
                   const sp_prop_options *o) {
  sp_sharding *nops[4] = {0}, *nres[4] = {0};
  sp_err err;
  outcome out;
  int rc = sp_factor_propagate_op(A, A, r, m, NULL, ops, res, o, nops, nres, &out.nupdated, &LOG,
                                  &err);
  ck_assert_msg(rc == SP_OK, "propagation failed: %s", err.msg);
  for (int i = 0; i < r->noperands; i++) out.op[i] = fx_str(nops[i] ? nops[i] : ops[i]);
  for (int i = 0; i < r->nresults; i++) out.res[i] = fx_str(nres[i] ? nres[i] : res[i]);
  return out;
}

/* The matmul rule (i, k), (k, j) -> (i, j) for lhs MxK, rhs KxN. */
static sp_rule *matmul(int64_t m, int64_t n, int64_t k) {
  sp_rule *r = fx_rule(A, "([i, k], [k, j])->([i, j])", (int64_t[]){m, n, k});
  r->factors[2].kind = SP_FACTOR_REDUCTION;
  return r;
}

static const sp_conflict *find_conflict(int factor) {
  for (int i = 0; i < LOG.n; i++)
    if (LOG.v[i].factor == factor) return &LOG.v[i];
  return NULL;
}

static const char *conflict_text(const sp_conflict *c) {
  static char buf[2048];
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_conflict_print(&sb, c);
  snprintf(buf, sizeof buf, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

/* ------------------------------------------------------------------ matmul */

START_TEST(matmul_basic_moves_the_lhs_row_axis_to_the_result) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), NULL}, *res[] = {NULL};
  outcome o = run(matmul(8, 16, 8), m, ops, res, &BASIC);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_str_eq(o.op[1], "none"); /* nothing to give the rhs: k is empty everywhere */
  ck_assert_int_eq(o.nupdated, 1);
  ck_assert_int_eq(LOG.n, 0);
}
END_TEST

START_TEST(matmul_basic_moves_result_axes_back_to_both_operands) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_sharding *ops[] = {NULL, NULL}, *res[] = {fx_sharding(A, "{a}, {b}", NULL)};
  outcome o = run(matmul(8, 16, 8), m, ops, res, &BASIC);
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_str_eq(o.op[1], "<@mesh, [{?}, {\"b\", ?}]>");
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\"}, {\"b\"}]>");
}
END_TEST

START_TEST(matmul_contracting_axis_moves_between_operands_but_not_to_the_result) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_sharding *ops[] = {fx_sharding(A, "{}, {b}", NULL), NULL}, *res[] = {NULL};
  outcome o = run(matmul(8, 16, 8), m, ops, res, &BASIC);
  ck_assert_str_eq(o.op[1], "<@mesh, [{\"b\", ?}, {?}]>");
  ck_assert_str_eq(o.res[0], "none");
}
END_TEST

START_TEST(matmul_basic_does_nothing_when_both_free_factors_want_the_same_axis) {
  /* C = dot(A, B): A has "a" on i, B has "a" on j. */
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome o = run(matmul(8, 32, 16), m, ops, res, &BASIC);
  ck_assert_str_eq(o.res[0], "none");
  ck_assert_int_eq(o.nupdated, 0);
  /* Both free factors were in conflict; each was blocked by the other in the other operand. */
  const sp_conflict *ci = find_conflict(0), *cj = find_conflict(1);
  ck_assert_ptr_nonnull(ci);
  ck_assert_ptr_nonnull(cj);
  ck_assert_uint_eq(ci->causes, SP_CONFLICT_AXIS_IN_USE);
  ck_assert_int_eq(ci->resolution, SP_CONFLICT_NOTHING_MOVED);
  ck_assert_int_eq(ci->level, SP_CONFLICT_LEVEL_BASIC);
  ck_assert_int_eq(LOG.n, 2);
}
END_TEST

START_TEST(matmul_aggressive_gives_the_contested_axis_to_the_larger_source) {
  sp_mesh *m = fx_mesh(A, "a=2");
  /* B (16x32) is larger than A (8x16): j wins. */
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome o = run(matmul(8, 32, 16), m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(o.res[0], "<@mesh, [{?}, {\"a\", ?}]>");
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\"}, {}]>");
  ck_assert_str_eq(o.op[1], "<@mesh, [{}, {\"a\"}]>");
}
END_TEST

START_TEST(matmul_aggressive_picks_the_lhs_when_the_lhs_is_larger) {
  sp_mesh *m = fx_mesh(A, "a=2");
  /* A (64x16) is larger than B (16x8): i wins. */
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome o = run(matmul(64, 8, 16), m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(matmul_aggressive_on_a_tie_takes_the_first_source) {
  sp_mesh *m = fx_mesh(A, "a=2");
  /* A and B both 16x16: equal sizes, the lhs (operand 0) is the earlier source. */
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome o = run(matmul(16, 16, 16), m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(matmul_aggressive_agrees_with_basic_without_conflicts) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {b}", NULL), NULL}, *res[] = {NULL};
  outcome b = run(matmul(8, 16, 8), m, ops, res, &BASIC);
  outcome g = run(matmul(8, 16, 8), m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(b.op[1], "<@mesh, [{\"b\", ?}, {?}]>");
  ck_assert_str_eq(b.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_str_eq(g.op[1], b.op[1]);
  ck_assert_str_eq(g.res[0], b.res[0]);
}
END_TEST

/* ------------------------------------------------------------------ the seed's table */

START_TEST(seed_factor_table_basic_moves_ab_along_f0_and_c_along_f1) {
  /* Rows T0, T1 (operands) and T2 (result) of a pointwise op; columns F0, F1, F2 (i, j, k). */
  sp_mesh *m = fx_mesh(A, "a=2, b=2, c=2, d=2, e=2, f=2, g=2");
  sp_rule *r = fx_rule(A, "([i, j, k], [i, j, k])->([i, j, k])", (int64_t[]){8, 8, 8});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}, {?}, {?}", "f"),
                        fx_sharding(A, "{a, b, ?}, {c, d, ?}, {?}", "g")};
  sp_sharding *res[] = {fx_sharding(A, "{?}, {c, e, ?}, {?}", NULL)};
  sp_factor_table *t = NULL;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, ops, res, &t, NULL), SP_OK);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_factor_table_print(&sb, t);
  ck_assert_str_eq(sp_strbuf_str(&sb),
                   "           i=8            j=8            k=8  replicated  unreduced\n"
                   "operand 0  {\"a\", ?}       {?}            {?}  {\"f\"}       {}\n"
                   "operand 1  {\"a\", \"b\", ?}  {\"c\", \"d\", ?}  {?}  {\"g\"}       {}\n"
                   "result 0   {?}            {\"c\", \"e\", ?}  {?}  {}          {}\n");

  /* Step 1: the compatible major axes per factor. */
  sp_ft_axes cand = {0, 0, NULL};
  bool disagree;
  ck_assert_int_eq(sp_factor_compatible_axes(t, 0, SP_DIR_BOTH, &cand, &disagree), SP_OK);
  ck_assert_int_eq(cand.n, 2);
  ck_assert(!disagree);
  ck_assert_int_eq(sp_factor_compatible_axes(t, 1, SP_DIR_BOTH, &cand, &disagree), SP_OK);
  ck_assert_int_eq(cand.n, 1);
  ck_assert_int_eq(cand.v[0].axis, 2); /* "c" */
  ck_assert(disagree);
  ck_assert_int_eq(sp_factor_compatible_axes(t, 2, SP_DIR_BOTH, &cand, &disagree), SP_OK);
  ck_assert_int_eq(cand.n, 0);

  /* Step 2: expansion. */
  ck_assert_int_eq(sp_factor_propagate(t, &BASIC, &LOG, NULL), SP_OK);
  sp_strbuf_reset(&sb);
  sp_factor_table_print(&sb, t);
  ck_assert_str_eq(sp_strbuf_str(&sb),
                   "           i=8            j=8            k=8  replicated  unreduced\n"
                   "operand 0  {\"a\", \"b\", ?}  {\"c\", ?}       {?}  {\"f\"}       {}\n"
                   "operand 1  {\"a\", \"b\", ?}  {\"c\", \"d\", ?}  {?}  {\"g\"}       {}\n"
                   "result 0   {\"a\", \"b\", ?}  {\"c\", \"e\", ?}  {?}  {}          {}\n");
  sp_strbuf_free(&sb);
  ck_assert(t->rows[0].updated && !t->rows[1].updated && t->rows[2].updated);

  /* F1 was a conflict ("d" vs "e"), resolved by keeping the common prefix ["c"]. */
  ck_assert_int_eq(LOG.n, 1);
  ck_assert_str_eq(conflict_text(&LOG.v[0]),
                   "factor j=8: basic, common_prefix; causes: incompatible; chose [\"c\"]\n"
                   "  operand 0: [] -> [\"c\"]\n"
                   "  operand 1: [\"c\", \"d\"] -> [\"c\", \"d\"]  (incompatible)\n"
                   "  result 0: [\"c\", \"e\"] -> [\"c\", \"e\"]  (incompatible)\n");

  /* The same through the op entry point. */
  outcome o = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\", \"b\", ?}, {\"c\", ?}, {?}], replicated={\"f\"}>");
  ck_assert_str_eq(o.op[1], "<@mesh, [{\"a\", \"b\", ?}, {\"c\", \"d\", ?}, {?}], replicated={\"g\"}>");
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", \"b\", ?}, {\"c\", \"e\", ?}, {?}]>");
  ck_assert_int_eq(o.nupdated, 2);
}
END_TEST

/* ------------------------------------------------------------------ compatible axes */

/* The candidate of a one-factor op whose tensors hold `lists` (operands, then one result). */
static const char *candidate(const char *mesh, const char **lists, int n, sp_prop_direction dir,
                             bool *disagree) {
  static char buf[256];
  sp_mesh *m = fx_mesh(A, mesh);
  char spec[128] = "(";
  for (int i = 0; i < n - 1; i++) strcat(spec, i ? ", [i]" : "[i]");
  strcat(spec, ")->([i])");
  sp_rule *r = fx_rule(A, spec, (int64_t[]){64});
  sp_sharding *sh[8];
  for (int i = 0; i < n; i++) sh[i] = fx_sharding(A, lists[i], NULL);
  sp_factor_table *t = NULL;
  ck_assert_int_eq(sp_factor_table_build(A, r, m, sh, sh + n - 1, &t, NULL), SP_OK);
  sp_ft_axes cand = {0, 0, NULL};
  ck_assert_int_eq(sp_factor_compatible_axes(t, 0, dir, &cand, disagree), SP_OK);
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; i < cand.n; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, m, cand.v[i], false);
  }
  snprintf(buf, sizeof buf, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

START_TEST(compatible_axes_keep_the_longest_common_major_part) {
  bool d;
  const char *xy_xz[] = {"{x, y}", "{x, z}"};
  ck_assert_str_eq(candidate("x=2, y=2, z=2", xy_xz, 2, SP_DIR_BOTH, &d), "x");
  ck_assert(d);
  const char *four[] = {"{y}", "{}", "{y, z, w}", "{y, z, v}"};
  ck_assert_str_eq(candidate("v=2, w=2, y=2, z=2", four, 4, SP_DIR_BOTH, &d), "y, z");
  ck_assert(d);
  const char *grow[] = {"{x:(1)2}", "{x:(1)4}"};
  ck_assert_str_eq(candidate("x=8", grow, 2, SP_DIR_BOTH, &d), "x:(1)4");
  ck_assert(!d);
  const char *stop[] = {"{x:(1)4}", "{x:(1)2, y}"};
  ck_assert_str_eq(candidate("x=8, y=2", stop, 2, SP_DIR_BOTH, &d), "x:(1)2");
  ck_assert(d);
  const char *other_part[] = {"{x:(1)2}", "{x:(2)2}"};
  ck_assert_str_eq(candidate("x=8", other_part, 2, SP_DIR_BOTH, &d), "");
  ck_assert(d);
  const char *agree[] = {"{x}", "{}", "{x, y}"};
  ck_assert_str_eq(candidate("x=2, y=2", agree, 3, SP_DIR_BOTH, &d), "x, y");
  ck_assert(!d);
}
END_TEST

START_TEST(forward_direction_lets_results_only_shorten_the_candidate) {
  bool d;
  /* operand [x], result [x, y]: forward keeps [x]; backward leads with the result. */
  const char *lists[] = {"{x}", "{x, y}"};
  ck_assert_str_eq(candidate("x=2, y=2", lists, 2, SP_DIR_FORWARD, &d), "x");
  ck_assert(!d);
  ck_assert_str_eq(candidate("x=2, y=2", lists, 2, SP_DIR_BACKWARD, &d), "x, y");
  ck_assert_str_eq(candidate("x=2, y=2", lists, 2, SP_DIR_NONE, &d), "");
  /* operand [], result [x]: nothing goes forward. */
  const char *empty_op[] = {"{}", "{x}"};
  ck_assert_str_eq(candidate("x=2", empty_op, 2, SP_DIR_FORWARD, &d), "");
}
END_TEST

START_TEST(forward_direction_does_not_move_result_axes_to_operands) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){8, 8});
  sp_prop_direction dirs[] = {SP_DIR_FORWARD, SP_DIR_BOTH};
  sp_prop_options o = {SP_PROP_BASIC, false, false, dirs};
  sp_sharding *ops[] = {fx_sharding(A, "{?}, {?}", NULL)};
  sp_sharding *res[] = {fx_sharding(A, "{a, ?}, {b, ?}", NULL)};
  outcome out = run(r, m, ops, res, &o);
  ck_assert_str_eq(out.op[0], "<@mesh, [{?}, {\"b\", ?}]>");
}
END_TEST

START_TEST(blocked_factor_propagates_nothing_in_any_direction) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){8, 8});
  r->factors[0].blocked = true;
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {b}", NULL)}, *res[] = {NULL};
  outcome b = run(r, m, ops, res, &BASIC);
  outcome g = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(b.res[0], "<@mesh, [{?}, {\"b\", ?}]>");
  ck_assert_str_eq(g.res[0], "<@mesh, [{?}, {\"b\", ?}]>");
}
END_TEST

/* ------------------------------------------------------------------ cuts */

START_TEST(closed_dims_never_change) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j], [i, j])->([i, j])", (int64_t[]){8, 8});
  /* Operand 1 is closed: empty on i, ["a"] on j where the others offer ["a"] then "b"? no:
   * the others offer ["b"] on j, which its closed ["a"] cannot take. */
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}, {?}", NULL), fx_sharding(A, "{}, {}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome b = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(b.op[1], "<@mesh, [{}, {}]>");
  /* In basic a closed empty dim blocks the factor for everyone... */
  ck_assert_str_eq(b.res[0], "none");
  const sp_conflict *c = find_conflict(0);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->causes, SP_CONFLICT_CLOSED);
  /* ...in aggressive it only blocks itself. */
  outcome g = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(g.op[1], "<@mesh, [{}, {}]>");
  ck_assert_str_eq(g.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
  /* A closed dim that holds a prefix keeps it and cuts the candidate there. */
  sp_sharding *ops2[] = {fx_sharding(A, "{a, b, ?}, {?}", NULL), fx_sharding(A, "{a}, {}", NULL)};
  outcome p = run(r, m, ops2, res, &BASIC);
  ck_assert_str_eq(p.op[1], "<@mesh, [{\"a\"}, {}]>");
  ck_assert_str_eq(p.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(replicated_axis_blocks_basic_for_all_and_aggressive_for_its_tensor) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i], [i])->([i])", (int64_t[]){8});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}", NULL), fx_sharding(A, "{?}", "a")};
  sp_sharding *res[] = {NULL};
  outcome b = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(b.res[0], "none");
  ck_assert_str_eq(b.op[1], "<@mesh, [{?}], replicated={\"a\"}>");
  const sp_conflict *c = find_conflict(0);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->causes, SP_CONFLICT_REPLICATED);
  outcome g = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(g.res[0], "<@mesh, [{\"a\", ?}]>");
  ck_assert_str_eq(g.op[1], "<@mesh, [{?}], replicated={\"a\"}>");
}
END_TEST

START_TEST(replicated_part_of_an_axis_cuts_the_candidate_to_the_part_before_it) {
  sp_mesh *m = fx_mesh(A, "a=8");
  sp_rule *r = fx_rule(A, "([i], [i])->([i])", (int64_t[]){64});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}", NULL), fx_sharding(A, "{?}", "a:(4)2")};
  sp_sharding *res[] = {NULL};
  outcome b = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(b.res[0], "<@mesh, [{\"a\":(1)4, ?}]>");
  ck_assert_str_eq(b.op[1], "<@mesh, [{\"a\":(1)4, ?}], replicated={\"a\":(4)2}>");
}
END_TEST

START_TEST(axis_used_by_another_factor_cuts_the_candidate) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){8, 8});
  /* The operand offers ["a", "b"] on i; the result already uses "b" on j. */
  sp_sharding *ops[] = {fx_sharding(A, "{a, b}, {?}", NULL)};
  sp_sharding *res[] = {fx_sharding(A, "{?}, {b, ?}", NULL)};
  outcome b = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(b.res[0], "<@mesh, [{\"a\", ?}, {\"b\", ?}]>");
  const sp_conflict *c = find_conflict(0);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(c->causes, SP_CONFLICT_AXIS_IN_USE);
  ck_assert_int_eq(c->resolution, SP_CONFLICT_COMMON_PREFIX);
  ck_assert_int_eq(c->nchosen, 1);
  ck_assert_str_eq(c->chosen[0].name, "a");
  ck_assert_int_eq(c->entries[1].blocking_factor, 1);
}
END_TEST

START_TEST(conservative_mode_refuses_sub_axes) {
  /* 8 -> 2x4 with "a"=4: the split needs "a":(1)2 and "a":(2)2. */
  sp_mesh *m = fx_mesh(A, "a=4, b=2");
  sp_rule *r = fx_rule(A, "([ij])->([i, j])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {fx_sharding(A, "{a}", NULL)}, *res[] = {NULL};
  sp_prop_options cons = {SP_PROP_BASIC, true, false, NULL};
  outcome c = run(r, m, ops, res, &cons);
  ck_assert_str_eq(c.res[0], "none");
  ck_assert_uint_eq(find_conflict(0)->causes, SP_CONFLICT_SUB_AXIS);
  outcome n = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(n.res[0], "<@mesh, [{\"a\":(1)2, ?}, {\"a\":(2)2, ?}]>");
  /* A whole axis still moves: 16 -> 4x4 with a=2 b=8 keeps "a" on the major factor only. */
  sp_mesh *m2 = fx_mesh(A, "a=2, b=8");
  sp_rule *r2 = fx_rule(A, "([ij])->([i, j])", (int64_t[]){4, 4});
  sp_sharding *ops2[] = {fx_sharding(A, "{a, b}", NULL)};
  outcome c2 = run(r2, m2, ops2, res, &cons);
  ck_assert_str_eq(c2.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
  sp_prop_options cons_aggr = {SP_PROP_AGGRESSIVE, true, false, NULL};
  outcome g2 = run(r2, m2, ops2, res, &cons_aggr);
  ck_assert_str_eq(g2.res[0], "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(non_minor_most_factor_only_accepts_divisible_axes) {
  /* The result holds i (=2) and j (=4) in separate dims; the operand merges them as [ij], so
   * there i is not minor-most. */
  sp_rule *r = fx_rule(A, "([ij])->([i, j])", (int64_t[]){2, 4});
  sp_sharding *ops[] = {NULL};
  /* "a"=4 does not divide i=2: only its major part "a":(1)2 goes in. */
  sp_mesh *m4 = fx_mesh(A, "a=4");
  sp_sharding *res4[] = {fx_sharding(A, "{a}, {}", NULL)};
  outcome o4 = run(r, m4, ops, res4, &BASIC);
  ck_assert_str_eq(o4.op[0], "<@mesh, [{\"a\":(1)2, ?}]>");
  ck_assert_uint_eq(find_conflict(0)->causes, SP_CONFLICT_INDIVISIBLE);
  /* "a"=3 shares nothing with 2: nothing goes in. */
  sp_mesh *m3 = fx_mesh(A, "a=3");
  sp_sharding *res3[] = {fx_sharding(A, "{a}, {}", NULL)};
  outcome o3 = run(r, m3, ops, res3, &BASIC);
  ck_assert_str_eq(o3.op[0], "none");
  /* The minor-most factor j takes a non-divisible axis ("b"=3 on j=4). */
  sp_mesh *mb = fx_mesh(A, "b=3");
  sp_sharding *resb[] = {fx_sharding(A, "{}, {b}", NULL)};
  outcome ob = run(r, mb, ops, resb, &BASIC);
  ck_assert_str_eq(ob.op[0], "none"); /* i is empty, so j's axes cannot follow in the dim */
  sp_rule *r2 = fx_rule(A, "([ij])->([i, j])", (int64_t[]){1, 4});
  outcome o2 = run(r2, mb, ops, resb, &BASIC);
  ck_assert_str_eq(o2.op[0], "<@mesh, [{\"b\", ?}]>");
}
END_TEST

START_TEST(sub_axis_prefix_expands_to_the_whole_axis) {
  sp_mesh *m = fx_mesh(A, "a=4");
  sp_rule *r = fx_rule(A, "([i], [i])->([i])", (int64_t[]){16});
  sp_sharding *ops[] = {fx_sharding(A, "{a:(1)2, ?}", NULL), fx_sharding(A, "{a}", NULL)};
  sp_sharding *res[] = {NULL};
  outcome o = run(r, m, ops, res, &BASIC);
  ck_assert_str_eq(o.op[0], "<@mesh, [{\"a\", ?}]>");
  ck_assert_str_eq(o.res[0], "<@mesh, [{\"a\", ?}]>");
}
END_TEST

/* ------------------------------------------------------------------ aggressive details */

START_TEST(elementwise_operand_takes_no_more_than_the_result) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i], [i])->([i])", (int64_t[]){8});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}", NULL), fx_sharding(A, "{?}", NULL)};
  sp_sharding *res[] = {fx_sharding(A, "{}", NULL)};
  sp_prop_options ew = {SP_PROP_AGGRESSIVE, false, true, NULL};
  outcome e = run(r, m, ops, res, &ew);
  ck_assert_str_eq(e.op[1], "<@mesh, [{?}]>");
  ck_assert_uint_eq(find_conflict(0)->entries[1].causes, SP_CONFLICT_RESULT_LIMITED);
  outcome g = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(g.op[1], "<@mesh, [{\"a\", ?}]>");
}
END_TEST

START_TEST(aggressive_cut_in_one_tensor_does_not_stop_the_others) {
  /* i and j both want "a" (from different tensors); the result takes j's (larger source),
   * while operand 2, which only has i, still takes i's. */
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, k], [k, j], [i])->([i, j])", (int64_t[]){8, 32, 16});
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL), NULL};
  sp_sharding *res[] = {NULL};
  outcome g = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(g.res[0], "<@mesh, [{?}, {\"a\", ?}]>");
  ck_assert_str_eq(g.op[2], "<@mesh, [{\"a\", ?}]>");
  const sp_conflict *c = find_conflict(0);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(c->level, SP_CONFLICT_LEVEL_AGGRESSIVE);
  ck_assert_int_eq(c->resolution, SP_CONFLICT_SOURCE_WON);
  ck_assert_int_eq(c->source, 0);
}
END_TEST

/* ------------------------------------------------------------------ conflict records */

START_TEST(conflict_record_lists_what_each_tensor_wanted_and_how_it_was_resolved) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_sharding *ops[] = {fx_sharding(A, "{a}, {}", NULL), fx_sharding(A, "{}, {a}", NULL)};
  sp_sharding *res[] = {NULL};
  LOG.op = 7;
  LOG.op_name = "stablehlo.dot_general";
  LOG.round = 4;
  run(matmul(8, 32, 16), m, ops, res, &AGGRESSIVE);
  /* j won (B is the larger source); i lost in the result to j. */
  ck_assert_int_eq(LOG.n, 1);
  const sp_conflict *c = &LOG.v[0];
  ck_assert_str_eq(conflict_text(c),
                   "op 7 stablehlo.dot_general factor i=8: aggressive, nothing_moved, "
                   "op-priority round 4; causes: axis_in_use; source operand 0; chose [\"a\"]\n"
                   "  operand 0 (closed): [\"a\"] -> [\"a\"]\n"
                   "  result 0: [] -> []  (axis_in_use by j)\n");
  cJSON *j = sp_conflict_log_to_json(&LOG);
  char *text = cJSON_PrintUnformatted(j);
  ck_assert_str_eq(text,
                   "{\"conflicts\":[{\"op\":7,\"op_name\":\"stablehlo.dot_general\",\"line\":0,\"col\":0,\"round\":4,"
                   "\"user_priority\":-1,\"factor\":\"i\",\"factor_index\":0,\"factor_size\":8,"
                   "\"level\":\"aggressive\",\"conservative\":false,\"causes\":[\"axis_in_use\"],"
                   "\"resolution\":\"nothing_moved\",\"source\":\"operand 0\",\"chosen\":[\"a\"],"
                   "\"tensors\":[{\"tensor\":\"operand 0\",\"has_factor\":true,\"closed\":true,"
                   "\"causes\":[],\"blocking_factor\":null,\"before\":[\"a\"],\"after\":[\"a\"]},"
                   "{\"tensor\":\"result 0\",\"has_factor\":true,\"closed\":false,"
                   "\"causes\":[\"axis_in_use\"],\"blocking_factor\":\"j\",\"before\":[],"
                   "\"after\":[]}]}],\"dropped\":false}");
  free(text);
  cJSON_Delete(j);

  /* Basic on the same op: both factors are stopped, each by the other factor of the operand
   * that does not have it. */
  sp_conflict_log_init(&LOG, A);
  run(matmul(8, 32, 16), m, ops, res, &BASIC);
  ck_assert_int_eq(LOG.n, 2);
  ck_assert_str_eq(conflict_text(&LOG.v[0]),
                   "factor i=8: basic, nothing_moved; causes: axis_in_use; chose []\n"
                   "  operand 0 (closed): [\"a\"] -> [\"a\"]\n"
                   "  operand 1 (without the factor): [] -> []  (axis_in_use by j)\n"
                   "  result 0: [] -> []\n");
}
END_TEST

START_TEST(no_conflict_is_recorded_when_every_tensor_agrees) {
  sp_mesh *m = fx_mesh(A, "a=2, b=2");
  sp_rule *r = fx_rule(A, "([i, j], [i, j])->([i, j])", (int64_t[]){8, 8});
  sp_sharding *ops[] = {fx_sharding(A, "{a, ?}, {b}", NULL), fx_sharding(A, "{a}, {?}", NULL)};
  sp_sharding *res[] = {NULL};
  run(r, m, ops, res, &BASIC);
  run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_int_eq(LOG.n, 0);
}
END_TEST

/* ------------------------------------------------------------------ the op entry point */

START_TEST(op_without_any_sharding_or_on_a_maximal_mesh_is_left_alone) {
  sp_rule *r = fx_rule(A, "([i])->([i])", (int64_t[]){8});
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_sharding *none[] = {NULL}, *res[] = {NULL};
  outcome o = run(r, m, none, res, &BASIC);
  ck_assert_str_eq(o.res[0], "none");
  sp_mesh *maximal = fx_mesh(A, "");
  int64_t id = 3;
  maximal->ndevice_ids = 1;
  maximal->device_ids = &id;
  sp_sharding *s = fx_sharding(A, "{}", NULL);
  sp_sharding *ops[] = {s};
  o = run(r, maximal, ops, res, &BASIC);
  ck_assert_str_eq(o.res[0], "none");
  ck_assert_int_eq(o.nupdated, 0);
}
END_TEST

START_TEST(unsharded_tensor_stays_without_sharding_when_nothing_moves) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){8, 8});
  /* The operand has a sharding but no axes: the result gets nothing. */
  sp_sharding *ops[] = {fx_sharding(A, "{?}, {}", NULL)}, *res[] = {NULL};
  outcome o = run(r, m, ops, res, &AGGRESSIVE);
  ck_assert_str_eq(o.res[0], "none");
  ck_assert_int_eq(o.nupdated, 0);
}
END_TEST

START_TEST(bad_input_is_an_error_not_a_crash) {
  sp_mesh *m = fx_mesh(A, "a=2");
  sp_rule *r = fx_rule(A, "([i, j])->([i, j])", (int64_t[]){8, 8});
  sp_sharding *ops[] = {fx_sharding(A, "{zz}, {}", NULL)}, *res[] = {NULL};
  sp_sharding *nops[1], *nres[1];
  sp_err err;
  int rc = sp_factor_propagate_op(A, A, r, m, NULL, ops, res, &BASIC, nops, nres, NULL, NULL, &err);
  ck_assert_int_eq(rc, SP_EINVAL);
  ck_assert_str_eq(err.msg, "operand 0 dim 0: unknown axis name \"zz\" (not in the mesh)");
}
END_TEST

static Suite *propagation_suite(void) {
  Suite *s = suite_create("factor_propagation");
  TCase *tc = tcase_create("matmul");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, matmul_basic_moves_the_lhs_row_axis_to_the_result);
  tcase_add_test(tc, matmul_basic_moves_result_axes_back_to_both_operands);
  tcase_add_test(tc, matmul_contracting_axis_moves_between_operands_but_not_to_the_result);
  tcase_add_test(tc, matmul_basic_does_nothing_when_both_free_factors_want_the_same_axis);
  tcase_add_test(tc, matmul_aggressive_gives_the_contested_axis_to_the_larger_source);
  tcase_add_test(tc, matmul_aggressive_picks_the_lhs_when_the_lhs_is_larger);
  tcase_add_test(tc, matmul_aggressive_on_a_tie_takes_the_first_source);
  tcase_add_test(tc, matmul_aggressive_agrees_with_basic_without_conflicts);
  suite_add_tcase(s, tc);

  tc = tcase_create("seed");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, seed_factor_table_basic_moves_ab_along_f0_and_c_along_f1);
  suite_add_tcase(s, tc);

  tc = tcase_create("compatible_axes");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, compatible_axes_keep_the_longest_common_major_part);
  tcase_add_test(tc, forward_direction_lets_results_only_shorten_the_candidate);
  tcase_add_test(tc, forward_direction_does_not_move_result_axes_to_operands);
  tcase_add_test(tc, blocked_factor_propagates_nothing_in_any_direction);
  suite_add_tcase(s, tc);

  tc = tcase_create("cuts");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, closed_dims_never_change);
  tcase_add_test(tc, replicated_axis_blocks_basic_for_all_and_aggressive_for_its_tensor);
  tcase_add_test(tc, replicated_part_of_an_axis_cuts_the_candidate_to_the_part_before_it);
  tcase_add_test(tc, axis_used_by_another_factor_cuts_the_candidate);
  tcase_add_test(tc, conservative_mode_refuses_sub_axes);
  tcase_add_test(tc, non_minor_most_factor_only_accepts_divisible_axes);
  tcase_add_test(tc, sub_axis_prefix_expands_to_the_whole_axis);
  suite_add_tcase(s, tc);

  tc = tcase_create("aggressive");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, elementwise_operand_takes_no_more_than_the_result);
  tcase_add_test(tc, aggressive_cut_in_one_tensor_does_not_stop_the_others);
  suite_add_tcase(s, tc);

  tc = tcase_create("conflicts");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, conflict_record_lists_what_each_tensor_wanted_and_how_it_was_resolved);
  tcase_add_test(tc, no_conflict_is_recorded_when_every_tensor_agrees);
  suite_add_tcase(s, tc);

  tc = tcase_create("op");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, op_without_any_sharding_or_on_a_maximal_mesh_is_left_alone);
  tcase_add_test(tc, unsharded_tensor_stays_without_sharding_when_nothing_moves);
  tcase_add_test(tc, bad_input_is_an_error_not_a_crash);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(propagation_suite()); }
