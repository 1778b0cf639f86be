/*
 * test_verify_manual.c - the verifier's checks of sdy.manual_computation on IR built in code:
 * local body types, manual axes (in the mesh, before free axes, dividing their dims, not used
 * inside the body, not rebound by a nested computation), sharding counts and one mesh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/verify.h"
#include "test_support.h"
#include "verify_fixtures.h"

/* ------------------------------------------------------------------ manual computations */

/* func @f(%arg0: tensor<16x8xf32>) {
 *   %0 = sdy.manual_computation(%arg0) in_shardings=[IN] out_shardings=[OUT]
 *        manual_axes={MANUAL} (%arg1: LOCAL) { INNER...; sdy.return %x : RET } }
 * The body holds an add of %arg1 with itself whose result sharding the test may set. */
typedef struct mc_case {
  sp_module *m;
  sp_op *mc, *inner, *ret;
  sp_block *body;
} mc_case;

static mc_case mc_build(const char *in_axis, const char *out_axis, const char *manual,
                        int64_t local_d0) {
  mc_case c;
  sp_module *m = c.m = new_module();
  sp_type **ts = sp_arena_calloc(m->arena, 1, sizeof *ts);
  ts[0] = tensor2(m, 16, 8);
  sp_block *fb = add_func(m, 1, ts, 0, NULL, NULL);
  sp_op *mc = c.mc = sp_op_create(m->arena, "sdy.manual_computation", 1, fb->args, 1, ts, 1);
  mc->loc = (sp_loc){3, 8};
  sp_block_append(fb, mc);
  sp_sharding **in = sp_arena_calloc(m->arena, 1, sizeof *in);
  in[0] = sharding1(m, 2, 0, in_axis);
  set_attr(m, mc, (sp_attr){.name = "in_shardings", .kind = SP_ATTR_SHARDINGS,
                            .u.shardings = {1, in}});
  mc->results[0].sharding = sharding1(m, 2, 0, out_axis);
  if (manual) {
    sp_axis_ref *ax = sp_arena_calloc(m->arena, 1, sizeof *ax);
    ax->name = manual;
    set_attr(m, mc, (sp_attr){.name = "manual_axes", .kind = SP_ATTR_AXES, .u.axes = {1, ax}});
  }
  sp_type **lt = sp_arena_calloc(m->arena, 1, sizeof *lt);
  lt[0] = tensor2(m, local_d0, 8);
  c.body = sp_region_add_block(m->arena, &mc->regions[0]);
  sp_value *arg = sp_block_add_arg(m->arena, c.body, lt[0]);
  arg->loc = (sp_loc){3, 60};
  sp_value *two[2] = {arg, arg};
  c.inner = add_op(m, c.body, "stablehlo.add", 2, two, 1, lt, 4);
  sp_value *r = &c.inner->results[0];
  c.ret = add_op(m, c.body, "sdy.return", 1, &r, 0, NULL, 5);
  add_op(m, fb, "func.return", 0, NULL, 0, NULL, 6);
  return c;
}

START_TEST(manual_computation_with_local_body_types_is_accepted) {
  mc_case c = mc_build("a", "a", "a", 4);
  ck_assert_str_eq(verify(c.m), "");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_axis_missing_from_the_mesh_is_rejected) {
  mc_case c = mc_build("a", "a", "z", 16);
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op unknown manual axis: \"z\"");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_computation_in_sharding_count_must_match_operands) {
  mc_case c = mc_build("a", "a", "a", 4);
  sp_op_attr(c.mc, "in_shardings")->u.shardings.n = 0;
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op operand shardings don't match number of values: 0 shardings vs 1 values");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_computation_without_out_sharding_is_rejected) {
  mc_case c = mc_build("a", "a", "a", 4);
  c.mc->results[0].sharding = NULL;
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op number of out_shardings "
                   "doesn't match number of results: result 0 has none");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_axis_after_a_free_axis_in_a_dim_is_rejected) {
  mc_case c = mc_build("b", "a", "a", 4);
  sp_sharding *in = sp_op_attr(c.mc, "in_shardings")->u.shardings.v[0];
  sp_axis_ref *two = sp_arena_calloc(c.m->arena, 2, sizeof *two);
  two[0] = (sp_axis_ref){"b", 0, 0};
  two[1] = (sp_axis_ref){"a", 0, 0};
  in->dims[0].axes = two;
  in->dims[0].naxes = 2;
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op operand sharding at index 0 must have all manual axes come before free axes in its dimension sharding at index 0. Saw manual axis \"a\" after free axis \"b\"");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_computation_body_type_must_be_the_local_type) {
  mc_case c = mc_build("a", "a", "a", 16);
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op operand shape, corresponding sharding, and region operand shape at index 0 must match. Expected local shape 'tensor<4x8xf32>', actual local shape 'tensor<16x8xf32>'");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_computation_returned_type_must_be_the_local_result_type) {
  mc_case c = mc_build("a", NULL, "a", 4); /* result replicated: local type 16x8 */
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op result shape, corresponding sharding, and region result shape at index 0 must match. Expected local shape 'tensor<16x8xf32>', actual local shape 'tensor<4x8xf32>'");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_axes_must_divide_the_dim) {
  mc_case c = mc_build("a", "a", "a", 4);
  c.mc->operands[0].value->type->dims[0] = 6; /* the func arg: 6 is not a multiple of 4 */
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op operand - dimension size 6 is not divisible by the manual axes size 4");
  sp_module_free(c.m);
}
END_TEST

START_TEST(sharding_inside_the_body_cannot_use_a_manual_axis) {
  mc_case c = mc_build("a", "a", "a", 4);
  c.inner->results[0].sharding = sharding1(c.m, 2, 1, "a");
  ck_assert_str_eq(verify(c.m), "v.mlir:4:5: 'stablehlo.add' op result - operates on axis \"a\" which is already bound by a parent sdy.manual_computation op");
  /* a free axis is fine */
  c.inner->results[0].sharding = sharding1(c.m, 2, 1, "b");
  ck_assert_str_eq(verify(c.m), "");
  sp_module_free(c.m);
}
END_TEST

START_TEST(nested_manual_computation_cannot_rebind_a_manual_axis) {
  mc_case c = mc_build("a", "a", "a", 4);
  /* inside the body: sdy.manual_computation(%arg1) manual_axes={"a"} on a 4x8 local value */
  sp_module *m = c.m;
  sp_type **lt = sp_arena_calloc(m->arena, 1, sizeof *lt);
  lt[0] = tensor2(m, 4, 8);
  sp_op *inner = sp_op_create(m->arena, "sdy.manual_computation", 1, c.body->args, 1, lt, 1);
  inner->loc = (sp_loc){4, 20};
  sp_op_insert_before(c.inner, inner);
  sp_sharding **in = sp_arena_calloc(m->arena, 1, sizeof *in);
  in[0] = sharding1(m, 2, 0, NULL);
  set_attr(m, inner, (sp_attr){.name = "in_shardings", .kind = SP_ATTR_SHARDINGS,
                               .u.shardings = {1, in}});
  inner->results[0].sharding = sharding1(m, 2, 0, NULL);
  sp_axis_ref *ax = sp_arena_calloc(m->arena, 1, sizeof *ax);
  ax->name = "a";
  set_attr(m, inner, (sp_attr){.name = "manual_axes", .kind = SP_ATTR_AXES, .u.axes = {1, ax}});
  sp_block *ib = sp_region_add_block(m->arena, &inner->regions[0]);
  sp_value *iarg = sp_block_add_arg(m->arena, ib, lt[0]);
  add_op(m, ib, "sdy.return", 1, &iarg, 0, NULL, 4);
  ck_assert_str_eq(verify(m), "v.mlir:4:20: 'sdy.manual_computation' op operates on axis \"a\" which is already bound by a parent sdy.manual_computation op");
  ax->name = "b"; /* binding the other axis is fine */
  ck_assert_str_eq(verify(m), "");
  sp_module_free(m);
}
END_TEST

START_TEST(manual_computation_shardings_must_share_one_mesh) {
  mc_case c = mc_build("a", "a", "a", 4);
  sp_mesh *other = sp_arena_calloc(c.m->arena, 1, sizeof *other);
  other->naxes = 1;
  other->axes = sp_arena_calloc(c.m->arena, 1, sizeof *other->axes);
  other->axes[0] = (sp_mesh_axis){"a", 4};
  sp_op *mop = sp_op_create(c.m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  set_attr(c.m, mop, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "other"});
  set_attr(c.m, mop, (sp_attr){.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = other});
  sp_op_insert_after(sp_module_body(c.m)->first, mop);
  c.mc->results[0].sharding->mesh_name = "other";
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op all in and out shardings must be bound to the same mesh or an empty mesh.");
  /* a second name for an identical mesh is the same mesh */
  other->naxes = 2;
  other->axes = sp_module_lookup_mesh(c.m, "mesh")->axes;
  ck_assert_str_eq(verify(c.m), "");
  sp_module_free(c.m);
}
END_TEST

START_TEST(manual_computation_body_arity_must_match_operands) {
  mc_case c = mc_build("a", "a", "a", 4);
  sp_block_add_arg(c.m->arena, c.body, c.body->args[0]->type);
  ck_assert_str_eq(verify(c.m), "v.mlir:3:8: 'sdy.manual_computation' op number of op operands and region operands must match. Op has 1 op operands and 2 region operands");
  sp_module_free(c.m);
}
END_TEST

static Suite *verify_manual_suite(void) {
  Suite *s = suite_create("verify_manual");
  TCase *tm = tcase_create("manual_computation");
  tcase_add_test(tm, manual_computation_with_local_body_types_is_accepted);
  tcase_add_test(tm, manual_axis_missing_from_the_mesh_is_rejected);
  tcase_add_test(tm, manual_computation_in_sharding_count_must_match_operands);
  tcase_add_test(tm, manual_computation_without_out_sharding_is_rejected);
  tcase_add_test(tm, manual_axis_after_a_free_axis_in_a_dim_is_rejected);
  tcase_add_test(tm, manual_computation_body_type_must_be_the_local_type);
  tcase_add_test(tm, manual_computation_returned_type_must_be_the_local_result_type);
  tcase_add_test(tm, manual_axes_must_divide_the_dim);
  tcase_add_test(tm, sharding_inside_the_body_cannot_use_a_manual_axis);
  tcase_add_test(tm, nested_manual_computation_cannot_rebind_a_manual_axis);
  tcase_add_test(tm, manual_computation_body_arity_must_match_operands);
  tcase_add_test(tm, manual_computation_shardings_must_share_one_mesh);
  suite_add_tcase(s, tm);
  return s;
}

int main(void) { return sp_test_run(verify_manual_suite()); }
