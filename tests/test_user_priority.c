/*
 * test_user_priority.c - user-priority propagation: a dim of priority p is hidden (closed,
 * axes replicated) until round p, so a p0 sharding claims an axis first even where op order
 * would give it to a p1 one; restored dims keep their axes and, when open, can still grow;
 * no priority suffix is left; conflict records carry the round's priority.
 */
#include <check.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "propagation/conflict.h"
#include "propagation/prop_passes.h"
#include "propagation/user_priority.h"
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

static void run_pass(void) {
  sp_err err;
  ck_assert_msg(sp_prop_pass_user_priority(M, NULL, &err) == SP_OK, "%s", err.msg);
  ck_assert_int_eq(sp_mlir_print(M, &OUT, &err), SP_OK);
}

static void expect(const char *needle) {
  ck_assert_msg(strstr(sp_strbuf_str(&OUT), needle) != NULL, "missing\n  %s\nin\n%s", needle,
                sp_strbuf_str(&OUT));
}

/* %arg0 wants "a" on dim 0 (priority 1), %arg1 on dim 1 (priority 0): the add can shard only
 * one of its dims on "a". */
static const char *const two_claims =
    "sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}P1, {?}]>}, "
    "%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"a\", ?}P0]>}) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n";

/* two_claims with the priorities written in (`with`) or left out. */
static char *program(bool with) {
  static char buf[2048];
  const char *p = two_claims;
  size_t k = 0;
  for (; *p && k + 3 < sizeof buf; p++) {
    if (*p == 'P') {
      if (with) buf[k++] = 'p';
      else p++; /* skip the digit */
      continue;
    }
    buf[k++] = *p;
  }
  buf[k] = '\0';
  return buf;
}

START_TEST(priority_0_claims_the_axis_before_priority_1) {
  parse(program(true));
  run_pass();
  expect("stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}, {\"a\", ?}]>]>}");
}
END_TEST

START_TEST(without_priorities_the_first_operand_claims_the_axis) {
  parse(program(false));
  run_pass();
  expect("stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>}");
}
END_TEST

START_TEST(restored_dims_keep_their_axes_and_lose_the_suffix_and_the_replication) {
  parse(program(true));
  run_pass();
  expect("%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {?}]>}");
  expect("%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"a\", ?}]>}");
  ck_assert_ptr_null(strstr(sp_strbuf_str(&OUT), "}p"));
  ck_assert_ptr_null(strstr(sp_strbuf_str(&OUT), "replicated"));
}
END_TEST

START_TEST(restored_open_dim_can_still_grow_in_its_round) {
  parse("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
        "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}p1, {?}]>}, "
        "%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", \"b\"}, {?}]>}) -> tensor<8x8xf32> {\n"
        "  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>\n"
        "  return %0 : tensor<8x8xf32>\n"
        "}\n");
  run_pass();
  expect("%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", \"b\", ?}, {?}]>}");
}
END_TEST

START_TEST(conflicts_are_stamped_with_the_priority_round_that_met_them) {
  parse(program(true));
  sp_arena *a = sp_arena_new(0);
  sp_conflict_log log;
  sp_conflict_log_init(&log, a);
  sp_propagate_options o = {.strategy = SP_PROP_AGGRESSIVE, .conflicts = &log};
  sp_propagate_stats st;
  sp_err err;
  ck_assert_int_eq(sp_user_priority_propagate(M, &o, &st, &err), SP_OK);
  bool saw_round_1 = false;
  for (int i = 0; i < log.n; i++) {
    ck_assert(log.v[i].user_priority == 0 || log.v[i].user_priority == 1);
    ck_assert(log.v[i].round >= 0 && log.v[i].round < 5);
    if (log.v[i].user_priority == 1 && strcmp(log.v[i].op_name, "stablehlo.add") == 0)
      saw_round_1 = true;
  }
  ck_assert_msg(saw_round_1, "no conflict recorded for the add in priority round 1");
  /* The log's context is given back. */
  ck_assert_int_eq(log.user_priority, -1);
  ck_assert_int_eq(log.round, -1);
  ck_assert_int_gt(st.visits, 0);
  sp_arena_free(a);
}
END_TEST

START_TEST(bad_option_is_an_error_naming_it) {
  parse(program(true));
  sp_err err;
  ck_assert_int_eq(sp_prop_pass_user_priority(M, "propagation-strategy=greedy", &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "greedy"));
}
END_TEST

static Suite *user_priority_suite(void) {
  Suite *s = suite_create("user_priority");
  TCase *tc = tcase_create("rounds");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, priority_0_claims_the_axis_before_priority_1);
  tcase_add_test(tc, without_priorities_the_first_operand_claims_the_axis);
  tcase_add_test(tc, restored_dims_keep_their_axes_and_lose_the_suffix_and_the_replication);
  tcase_add_test(tc, restored_open_dim_can_still_grow_in_its_round);
  tcase_add_test(tc, conflicts_are_stamped_with_the_priority_round_that_met_them);
  tcase_add_test(tc, bad_option_is_an_error_naming_it);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(user_priority_suite()); }
