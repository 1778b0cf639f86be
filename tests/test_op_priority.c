/*
 * test_op_priority.c - op-priority propagation: the direction each round gives each factor of
 * an op (element-wise and multi-use deferral, dot_general's non-pass-through factors,
 * broadcast_in_dim backward only, dynamic_slice forward), intersection with a caller's
 * direction, and whole-module runs where the rounds change the outcome against one aggressive
 * fixed point (Shardy's op_priority_propagation.mlir programs).
 */
#include <check.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "propagation/op_priority.h"
#include "propagation/prop_passes.h"
#include "rules/registry.h"
#include "test_support.h"

static sp_module *M;
static sp_strbuf OUT;

static void setup(void) {
  M = NULL;
  OUT = (sp_strbuf)SP_STRBUF_INIT;
}

static void teardown(void) {
  sp_module_free(M);
  sp_strbuf_free(&OUT);
}

static void parse(const char *text) {
  sp_err err;
  ck_assert_msg(sp_mlir_parse(text, strlen(text), "t.mlir", 1, &M, &err) == SP_OK, "%s", err.msg);
}

/* The n-th op (0-based) of @main's body. */
static sp_op *main_op(int n) {
  sp_op *f = sp_module_lookup_func(M, "main");
  ck_assert_ptr_nonnull(f);
  sp_op *op = f->regions[0].blocks[0]->first;
  while (n-- > 0 && op) op = op->next;
  ck_assert_ptr_nonnull(op);
  return op;
}

static sp_rule *rule(const sp_op *op) {
  sp_rule *r = NULL;
  sp_err err;
  ck_assert_int_eq(sp_rules_for_op(M->arena, op, NULL, &r, NULL, &err), SP_OK);
  ck_assert_ptr_nonnull(r);
  return r;
}

/* The directions of round `round` as a string of F/B/X/- (forward, backward, both, none). */
static const char *dirs(const sp_op *op, int round) {
  static char buf[64];
  sp_rule *r = rule(op);
  sp_prop_direction d[16];
  ck_assert_int_le(r->nfactors, 16);
  sp_op_priority_directions(op, r, round, d);
  for (int f = 0; f < r->nfactors; f++)
    buf[f] = d[f] == SP_DIR_BOTH ? 'X' : d[f] == SP_DIR_FORWARD ? 'F' : d[f] == SP_DIR_BACKWARD ? 'B' : '-';
  buf[r->nfactors] = '\0';
  return buf;
}

static const char *const ops_module =
    "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8xf32>, %i: tensor<i32>) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
    "  %1 = stablehlo.add %arg1, %0 : tensor<8x8xf32>\n"
    "  %2 = stablehlo.dot_general %1, %1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
    "  %3 = stablehlo.broadcast_in_dim %arg2, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>\n"
    "  %4 = stablehlo.dynamic_slice %3, %i, %i, sizes = [4, 8] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>\n"
    "  return %2 : tensor<8x8xf32>\n"
    "}\n";

START_TEST(element_wise_op_with_a_multi_use_operand_waits_for_round_1) {
  parse(ops_module);
  /* add %arg0, %arg0 uses %arg0 twice. */
  ck_assert_str_eq(dirs(main_op(0), 0), "--");
  ck_assert_str_eq(dirs(main_op(0), 1), "XX");
  /* add %arg1, %0: each operand has one use. */
  ck_assert_str_eq(dirs(main_op(1), 0), "XX");
}
END_TEST

START_TEST(dot_general_moves_only_pass_through_factors_in_round_2_and_all_from_round_3) {
  parse(ops_module);
  sp_op *dot = main_op(2);
  /* Factors: i (lhs free), j (rhs free), k (contracting, reduction). */
  ck_assert_str_eq(dirs(dot, 0), "---");
  ck_assert_str_eq(dirs(dot, 1), "---");
  ck_assert_str_eq(dirs(dot, 2), "XX-");
  ck_assert_str_eq(dirs(dot, 3), "XXX");
  ck_assert_str_eq(dirs(dot, 4), "XXX");
}
END_TEST

START_TEST(broadcast_in_dim_propagates_backward_until_the_last_round) {
  parse(ops_module);
  sp_op *bc = main_op(3);
  ck_assert_str_eq(dirs(bc, 1), "--");
  ck_assert_str_eq(dirs(bc, 2), "BB");
  ck_assert_str_eq(dirs(bc, 3), "BB");
  ck_assert_str_eq(dirs(bc, 4), "XX");
}
END_TEST

START_TEST(dynamic_slice_propagates_forward_from_round_0) {
  parse(ops_module);
  sp_op *ds = main_op(4);
  ck_assert_int_eq(ds->kind, SP_OP_DYNAMIC_SLICE);
  /* Forward only until round 2 (the schedule; the sliced dim's factor is also blocked in the
   * rule, which factor propagation enforces on its own). */
  ck_assert_str_eq(dirs(ds, 0), "FF");
  ck_assert_str_eq(dirs(ds, 1), "FF");
  ck_assert_str_eq(dirs(ds, 4), "XX");
  ck_assert(rule(ds)->factors[0].blocked);
}
END_TEST

/* A callback that allows only FORWARD, to check the intersection with the rounds. */
static void forward_only(const sp_op *op, const sp_rule *r, sp_prop_direction *out, void *ctx) {
  (void)op;
  (void)ctx;
  for (int f = 0; f < r->nfactors; f++) out[f] = SP_DIR_FORWARD;
}

static const char *const element_wise_over_dot =
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {\"a\", ?}]>}) {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
    "  %1 = stablehlo.add %0, %0 : tensor<8x8xf32>\n"
    "  %2 = stablehlo.add %1, %1 : tensor<8x8xf32>\n"
    "  return %2 : tensor<8x8xf32>\n"
    "}\n";

static const char *dot_sharding(void) {
  return main_op(0)->results[0].sharding ? (sp_strbuf_reset(&OUT),
                                            sp_sharding_print(&OUT, main_op(0)->results[0].sharding),
                                            sp_strbuf_str(&OUT))
                                         : "(none)";
}

START_TEST(rounds_let_the_element_wise_chain_decide_the_dot_result) {
  parse(element_wise_over_dot);
  sp_err err;
  ck_assert_int_eq(sp_prop_pass_op_priority(M, NULL, &err), SP_OK);
  /* Round 0 carries the function result's dim-1 "a" back through the adds first. */
  ck_assert_str_eq(dot_sharding(), "<@mesh, [{?}, {\"a\", ?}]>");
}
END_TEST

START_TEST(without_rounds_the_dot_takes_its_operand_sharding_first) {
  parse(element_wise_over_dot);
  sp_err err;
  ck_assert_int_eq(sp_prop_pass_op_priority(M, "run-op-priority-propagation=false", &err), SP_OK);
  ck_assert_str_eq(dot_sharding(), "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

START_TEST(caller_direction_is_intersected_with_every_round) {
  parse(element_wise_over_dot);
  sp_propagate_options o = {.strategy = SP_PROP_AGGRESSIVE, .direction = forward_only};
  sp_err err;
  ck_assert_int_eq(sp_op_priority_propagate(M, &o, NULL, &err), SP_OK);
  /* Forward only: the dot gets arg0's "a"; nothing flows back from the function result. */
  ck_assert_str_eq(dot_sharding(), "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_ptr_null(main_op(0)->operands[1].value->sharding);
}
END_TEST

START_TEST(rounds_sum_their_statistics_and_later_rounds_skip_settled_ops) {
  parse(element_wise_over_dot);
  sp_propagate_options o = {.strategy = SP_PROP_AGGRESSIVE};
  sp_propagate_stats one, all;
  memset(&one, 0, sizeof one);
  memset(&all, 0, sizeof all);
  sp_err err;
  ck_assert_int_eq(sp_propagate_fixed_point(M, &o, &one, &err), SP_OK);
  sp_module_free(M);
  M = NULL;
  parse(element_wise_over_dot);
  ck_assert_int_eq(sp_op_priority_propagate(M, &o, &all, &err), SP_OK);
  /* The first round pops every op; the later ones start from the ops that may still move
   * (no rule, no sharding or equal axes everywhere leave an op settled until a neighbour
   * changes), so five rounds cost less than five full sweeps. */
  ck_assert_int_ge(one.visits, sp_module_num_ops(M));
  ck_assert_int_gt(all.visits, one.visits);
  ck_assert_int_lt(all.visits, 5 * sp_module_num_ops(M));
  ck_assert_int_gt(all.updates, 0);
}
END_TEST

static Suite *op_priority_suite(void) {
  Suite *s = suite_create("op_priority");
  TCase *tc = tcase_create("directions");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, element_wise_op_with_a_multi_use_operand_waits_for_round_1);
  tcase_add_test(tc, dot_general_moves_only_pass_through_factors_in_round_2_and_all_from_round_3);
  tcase_add_test(tc, broadcast_in_dim_propagates_backward_until_the_last_round);
  tcase_add_test(tc, dynamic_slice_propagates_forward_from_round_0);
  suite_add_tcase(s, tc);
  tc = tcase_create("module");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, rounds_let_the_element_wise_chain_decide_the_dot_result);
  tcase_add_test(tc, without_rounds_the_dot_takes_its_operand_sharding_first);
  tcase_add_test(tc, caller_direction_is_intersected_with_every_round);
  tcase_add_test(tc, rounds_sum_their_statistics_and_later_rounds_skip_settled_ops);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(op_priority_suite()); }
