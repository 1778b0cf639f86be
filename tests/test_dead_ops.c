/*
 * test_dead_ops.c - which ops may be erased once unused (propagation/dead_ops.h): one list for
 * the propagation worklist and both canonicalizers, with Shardy's exceptions (a dangling
 * sharding constraint and a dead all_gather stay, a dead all_to_all goes) and region ops that
 * are dead only when their bodies are pure.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "propagation/canonicalize.h"
#include "propagation/dead_ops.h"
#include "test_support.h"

/* The n-th op (0-based) of @main's body. */
static sp_op *nth_op(sp_module *m, int n) {
  sp_op *op = sp_module_lookup_func(m, "main")->regions[0].blocks[0]->first;
  while (n-- > 0 && op) op = op->next;
  ck_assert_ptr_nonnull(op);
  return op;
}

static const char *const module =
    "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
    "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> tensor<8x8xf32> {\n"
    /* 0 */ "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
    /* 1 */ "  %1 = sdy.sharding_constraint %arg0 <@mesh, [{\"x\"}, {}]> : tensor<8x8xf32>\n"
    /* 2 */ "  %2 = sdy.all_gather [{}, {\"x\"}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>\n"
    /* 3 */ "  %3 = sdy.all_to_all [{\"x\"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {\"x\"}]> : tensor<8x8xf32>\n"
    /* 4 */ "  %4 = stablehlo.bitcast_convert %arg0 : (tensor<8x8xf32>) -> tensor<8x8xi32>\n"
    /* 5 */ "  %5 = stablehlo.bitcast_convert %arg1 : (tensor<8xf32>) -> tensor<8x2xf16>\n"
    /* 6 */ "  %6 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    /* 7 */ "  %7 = stablehlo.reduce(%arg0 init: %6) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>\n"
    /* 8 */ "  %8 = stablehlo.reduce(%arg0 init: %6) across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>\n"
    "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
    "    %s = stablehlo.custom_call @side(%a) {has_side_effect = true} : (tensor<f32>) -> tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }\n"
    /* 9 */ "  %9 = sdy.propagation_barrier %arg0 allowed_direction=NONE : tensor<8x8xf32>\n"
    /* 10 */ "  %10 = stablehlo.negate %0 : tensor<8x8xf32>\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n";

START_TEST(pure_ops_are_dead_once_unused_and_used_ones_are_not) {
  sp_module *m = sp_test_parse(module);
  ck_assert(sp_op_is_pure(nth_op(m, 0)));
  ck_assert(!sp_op_is_trivially_dead(nth_op(m, 0)));   /* the negate uses it */
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 10)));
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 9)));    /* propagation_barrier is pure */
  sp_module_free(m);
}
END_TEST

START_TEST(a_dangling_sharding_constraint_and_a_dead_all_gather_stay_a_dead_all_to_all_goes) {
  sp_module *m = sp_test_parse(module);
  ck_assert(!sp_op_is_trivially_dead(nth_op(m, 1)));
  ck_assert(!sp_op_is_trivially_dead(nth_op(m, 2)));
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 3)));
  sp_module_free(m);
}
END_TEST

START_TEST(bitcast_convert_is_pure_whatever_its_shapes) {
  sp_module *m = sp_test_parse(module);
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 4)));
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 5)));
  sp_module_free(m);
}
END_TEST

START_TEST(a_region_op_is_dead_only_when_its_body_is_pure) {
  sp_module *m = sp_test_parse(module);
  ck_assert_int_eq(nth_op(m, 7)->kind, SP_OP_REDUCE);
  ck_assert(sp_op_is_trivially_dead(nth_op(m, 7)));
  ck_assert_int_eq(nth_op(m, 8)->kind, SP_OP_REDUCE);
  ck_assert(!sp_op_is_trivially_dead(nth_op(m, 8)));   /* a side-effecting custom call inside */
  sp_module_free(m);
}
END_TEST

START_TEST(canonicalize_erases_the_dead_ops_of_the_list_and_keeps_the_others) {
  sp_module *m = sp_test_parse(module);
  sp_err err;
  ck_assert_int_eq(sp_canonicalize(m, &err), SP_OK);
  char *out = sp_test_print(m);
  ck_assert_ptr_null(strstr(out, "stablehlo.add"));
  ck_assert_ptr_null(strstr(out, "stablehlo.negate"));
  ck_assert_ptr_null(strstr(out, "sdy.all_to_all"));
  ck_assert_ptr_null(strstr(out, "bitcast_convert"));
  ck_assert_ptr_nonnull(strstr(out, "sdy.sharding_constraint"));
  ck_assert_ptr_nonnull(strstr(out, "sdy.all_gather"));
  ck_assert_ptr_nonnull(strstr(out, "@side"));
  free(out);
  sp_module_free(m);
}
END_TEST

static Suite *dead_ops_suite(void) {
  Suite *s = suite_create("dead_ops");
  TCase *tc = tcase_create("dead_ops");
  tcase_add_test(tc, pure_ops_are_dead_once_unused_and_used_ones_are_not);
  tcase_add_test(tc, a_dangling_sharding_constraint_and_a_dead_all_gather_stay_a_dead_all_to_all_goes);
  tcase_add_test(tc, bitcast_convert_is_pure_whatever_its_shapes);
  tcase_add_test(tc, a_region_op_is_dead_only_when_its_body_is_pure);
  tcase_add_test(tc, canonicalize_erases_the_dead_ops_of_the_list_and_keeps_the_others);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(dead_ops_suite()); }
