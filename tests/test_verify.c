/*
 * test_verify.c - the module verifier: sharding rules, op and function shardings and symbol
 * meshes, first on IR built in code (manual computations built in code are in
 * test_verify_manual.c; the building blocks in support/verify_fixtures.h), then on malformed modules written
 * as MLIR text (read with sp_mlir_parse), where each case asserts the message and the
 * line:column it points at: an arg's sharding at the `%arg`, an op's at the op name, a
 * function result's at `func.func`. Last, every chunk of Shardy's conformance set (valid input)
 * must pass.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "test_support.h"
#include "verify_fixtures.h"

/* The conformance part of this suite runs only when this shared file exists. */
#define SHARED_PART "conformance/shardy/basic_propagation.mlir"

/* ------------------------------------------------------------------ building blocks */

/* A rule from a compact spec: tensors separated by ';', dims by ',', factors as letters
 * (i = 0, j = 1, ...). "i,k;k,j" is ([i, k], [k, j]). `reduction` lists reduction factors. */
static void parse_tensors(sp_arena *a, const char *spec, sp_rule_tensor **out, int *n) {
  *n = 0;
  *out = NULL;
  if (!spec) return;
  int count = 1;
  for (const char *p = spec; *p; p++) count += *p == ';';
  *out = sp_arena_calloc(a, (size_t)count, sizeof **out);
  *n = count;
  const char *p = spec;
  for (int t = 0; t < count; t++) {
    const char *end = strchr(p, ';');
    if (!end) end = p + strlen(p);
    sp_rule_tensor *rt = &(*out)[t];
    rt->rank = end > p ? 1 : 0;
    for (const char *q = p; q < end; q++) rt->rank += *q == ',';
    rt->dims = sp_arena_calloc(a, (size_t)rt->rank + 1, sizeof *rt->dims);
    int d = 0;
    for (const char *q = p; q < end; q++) {
      if (*q == ',') {
        d++;
        continue;
      }
      sp_rule_dim *dim = &rt->dims[d];
      int *f = sp_arena_calloc(a, (size_t)dim->nfactors + 1, sizeof *f);
      if (dim->nfactors) memcpy(f, dim->factors, (size_t)dim->nfactors * sizeof *f);
      f[dim->nfactors++] = *q - 'i';
      dim->factors = f;
    }
    p = *end ? end + 1 : end;
  }
}

static sp_rule *mk_rule(sp_module *m, int nf, const int64_t *sizes, const char *ops,
                        const char *res, const char *reduction) {
  sp_rule *r = sp_arena_calloc(m->arena, 1, sizeof *r);
  r->nfactors = nf;
  r->factors = sp_arena_calloc(m->arena, (size_t)nf, sizeof *r->factors);
  for (int f = 0; f < nf; f++) r->factors[f].size = sizes[f];
  for (const char *p = reduction; p && *p; p++) r->factors[*p - 'i'].kind = SP_FACTOR_REDUCTION;
  parse_tensors(m->arena, ops, &r->operands, &r->noperands);
  parse_tensors(m->arena, res, &r->results, &r->nresults);
  return r;
}

/* %0 = stablehlo.dot_general %arg0, %arg1 : (8x32, 32x16) -> 8x16, at line 3, with `rule`. */
static sp_op *dot_with_rule(sp_module *m, sp_rule *rule) {
  sp_type **args = sp_arena_calloc(m->arena, 2, sizeof *args);
  args[0] = tensor2(m, 8, 32);
  args[1] = tensor2(m, 32, 16);
  sp_type **res = sp_arena_calloc(m->arena, 1, sizeof *res);
  res[0] = tensor2(m, 8, 16);
  sp_block *b = add_func(m, 2, args, 1, res, NULL);
  sp_value *ops[2] = {b->args[0], b->args[1]};
  sp_op *dot = add_op(m, b, "stablehlo.dot_general", 2, ops, 1, res, 3);
  static int64_t one = 1, zero = 0;
  set_attr(m, dot, (sp_attr){.name = "lhs_contracting_dimensions", .kind = SP_ATTR_INTS,
                             .u.ints = {1, &one}});
  set_attr(m, dot, (sp_attr){.name = "rhs_contracting_dimensions", .kind = SP_ATTR_INTS,
                             .u.ints = {1, &zero}});
  if (rule)
    set_attr(m, dot, (sp_attr){.name = "sdy.sharding_rule", .kind = SP_ATTR_RULE, .u.rule = rule});
  sp_value *r = &dot->results[0];
  add_op(m, b, "func.return", 1, &r, 0, NULL, 4);
  return dot;
}

static const char *verify_dot_rule(int nf, const int64_t *sizes, const char *ops,
                                   const char *res, const char *reduction) {
  static char msg[SP_ERR_MSG_MAX];
  sp_module *m = new_module();
  dot_with_rule(m, mk_rule(m, nf, sizes, ops, res, reduction));
  snprintf(msg, sizeof msg, "%s", verify(m));
  sp_module_free(m);
  return msg;
}

/* ------------------------------------------------------------------ sharding rules */

static const int64_t DOT_SIZES[] = {8, 16, 32, 1};

START_TEST(dot_rule_that_fits_the_op_is_accepted) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k,j", "i,j", "k"), "");
}
END_TEST

START_TEST(rule_with_wrong_operand_count_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: number of operand "
                   "mappings doesn't match number of operands: 1 != 2");
}
END_TEST

START_TEST(rule_with_wrong_result_count_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k,j", "i,j;i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: number of result "
                   "mappings doesn't match number of results: 2 != 1");
}
END_TEST

START_TEST(rule_tensor_with_wrong_number_of_dims_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: operand 1 has 1 dims "
                   "in the rule but its type has rank 2");
}
END_TEST

START_TEST(rule_factor_used_twice_in_one_tensor_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k,j", "i,i", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: factor i appears more "
                   "than once in result 0");
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "ik,k;k,j", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: factor k appears more "
                   "than once in operand 0");
}
END_TEST

START_TEST(rule_reduction_factor_in_a_result_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k,j", "i,j", "j"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op reduction factor cannot be in result mappings: factor j in result 0");
}
END_TEST

START_TEST(rule_factor_index_out_of_range_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;k,l", "i,l", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: factor index 3 is out "
                   "of range [0, 3) in operand 1");
}
END_TEST

START_TEST(rule_factor_not_used_by_any_tensor_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(4, DOT_SIZES, "i,k;k,j", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: factor l is not used "
                   "by any operand or result");
}
END_TEST

START_TEST(rule_dim_without_factors_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(3, DOT_SIZES, "i,k;,j", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: dim 0 of operand 1 has "
                   "no factors");
}
END_TEST

START_TEST(rule_size_one_factor_sharing_a_dim_is_rejected) {
  ck_assert_str_eq(verify_dot_rule(4, DOT_SIZES, "il,k;k,j", "i,j", "k"),
                   "v.mlir:3:5: 'stablehlo.dot_general' op sharding rule: size-1 factor l shares "
                   "dim 0 of operand 0 with other factors");
}
END_TEST

START_TEST(rule_on_an_op_without_results_is_rejected) {
  sp_module *m = new_module();
  sp_type **args = sp_arena_calloc(m->arena, 1, sizeof *args);
  args[0] = tensor2(m, 8, 8);
  sp_block *b = add_func(m, 1, args, 0, NULL, NULL);
  sp_op *op = add_op(m, b, "stablehlo.custom_call", 1, b->args, 0, NULL, 3);
  set_attr(m, op, (sp_attr){.name = "sdy.sharding_rule", .kind = SP_ATTR_RULE,
                            .u.rule = mk_rule(m, 2, DOT_SIZES, "i,j", NULL, NULL)});
  ck_assert_str_eq(verify(m), "v.mlir:3:5: 'stablehlo.custom_call' op sharding rule: an op needs "
                   "at least one operand and one result to have a sharding rule");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ values and symbols */

START_TEST(func_arg_sharding_error_names_the_arg_and_its_position) {
  sp_module *m = new_module();
  sp_type **args = sp_arena_calloc(m->arena, 2, sizeof *args);
  args[0] = args[1] = tensor2(m, 8, 8);
  sp_block *b = add_func(m, 2, args, 0, NULL, NULL);
  b->args[1]->sharding = sharding1(m, 2, 0, "c");
  ck_assert_str_eq(verify(m), "v.mlir:2:40: 'func.func' op arg 1 - unknown axis name: \"c\"");
  sp_module_free(m);
}
END_TEST

START_TEST(func_result_sharding_is_checked_against_the_result_type) {
  sp_module *m = new_module();
  sp_type **ts = sp_arena_calloc(m->arena, 1, sizeof *ts);
  ts[0] = tensor2(m, 8, 8);
  sp_op *fn;
  sp_block *b = add_func(m, 1, ts, 1, ts, &fn);
  add_op(m, b, "func.return", 1, b->args, 0, NULL, 3);
  fn->func->result_shardings[0] = sharding1(m, 1, 0, "a");
  ck_assert_str_eq(verify(m), "v.mlir:2:1: 'func.func' op result 0 - sharding doesn't match "
                   "tensor rank: 1 != 2");
  sp_module_free(m);
}
END_TEST

START_TEST(op_result_sharding_error_names_the_op_and_result) {
  sp_module *m = new_module();
  sp_type **ts = sp_arena_calloc(m->arena, 2, sizeof *ts);
  ts[0] = ts[1] = tensor2(m, 8, 8);
  /* an op of two results (StableHLO's own checks of it pass) */
  sp_block *b = add_func(m, 2, ts, 0, NULL, NULL);
  sp_op *op = add_op(m, b, "stablehlo.optimization_barrier", 2, b->args, 2, ts, 7);
  op->results[0].sharding = sharding1(m, 2, 0, "a");
  op->results[1].sharding = sp_sharding_new(m->arena, "other", 2, true);
  ck_assert_str_eq(verify(m), "v.mlir:7:5: 'stablehlo.optimization_barrier' op result 1 - "
                   "unknown mesh: @other");
  sp_module_free(m);
}
END_TEST

START_TEST(second_mesh_with_the_same_name_is_a_redefinition) {
  sp_module *m = new_module();
  sp_op *first = sp_module_body(m)->first;
  sp_op *dup = sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  dup->attrs = first->attrs;
  dup->loc = (sp_loc){5, 1};
  sp_block_append(sp_module_body(m), dup);
  ck_assert_str_eq(verify(m), "v.mlir:5:1: redefinition of symbol named 'mesh'");
  sp_module_free(m);
}
END_TEST

START_TEST(invalid_mesh_op_is_reported_as_the_custom_op_shardy_parses) {
  sp_module *m = new_module();
  sp_mesh *mesh = sp_module_lookup_mesh_op(m, "mesh")->attrs.v[1].u.mesh;
  mesh->axes[1].name = "a";
  ck_assert_str_eq(verify(m), "v.mlir:1:1: custom op 'sdy.mesh' duplicate axis name: \"a\"");
  sp_module_free(m);
}
END_TEST

/* stablehlo.custom_call @cb(%arg0) {sdy.sharding = #sdy.sharding_per_value<[...]>} : -> () */
static const char *verify_resultless_op_with(int n, const char *axis, const char *mesh_name) {
  static char msg[SP_ERR_MSG_MAX];
  sp_module *m = new_module();
  int64_t id = 0;
  sp_mesh *maximal = sp_arena_calloc(m->arena, 1, sizeof *maximal);
  maximal->ndevice_ids = 1;
  maximal->device_ids = &id;
  sp_op *mop = sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  set_attr(m, mop, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "maximal"});
  set_attr(m, mop, (sp_attr){.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = maximal});
  sp_block_append(sp_module_body(m), mop);
  sp_type **args = sp_arena_calloc(m->arena, 1, sizeof *args);
  args[0] = tensor2(m, 8, 8);
  sp_block *b = add_func(m, 1, args, 0, NULL, NULL);
  sp_op *op = add_op(m, b, "stablehlo.custom_call", 1, b->args, 0, NULL, 3);
  add_op(m, b, "func.return", 0, NULL, 0, NULL, 4);
  sp_sharding **list = sp_arena_calloc(m->arena, (size_t)n + 1, sizeof *list);
  for (int i = 0; i < n; i++) {
    list[i] = sharding1(m, strcmp(mesh_name, "maximal") == 0 ? 0 : 2, 0, axis);
    list[i]->mesh_name = mesh_name;
  }
  set_attr(m, op, (sp_attr){.name = "sdy.sharding", .kind = SP_ATTR_SHARDINGS,
                            .u.shardings = {n, list}});
  snprintf(msg, sizeof msg, "%s", verify(m));
  sp_module_free(m);
  return msg;
}

START_TEST(op_without_results_carries_at_most_one_maximal_or_replicated_sharding) {
  ck_assert_str_eq(verify_resultless_op_with(1, NULL, "maximal"), "");
  ck_assert_str_eq(verify_resultless_op_with(1, NULL, "mesh"), "");
  ck_assert_str_eq(verify_resultless_op_with(2, NULL, "maximal"),
                   "v.mlir:3:5: 'stablehlo.custom_call' op sdy.sharding - shardings don't match "
                   "number of values: 2 != 0");
  ck_assert_str_eq(verify_resultless_op_with(1, "a", "mesh"),
                   "v.mlir:3:5: 'stablehlo.custom_call' op sdy.sharding - an op without results "
                   "can only carry a maximal or fully replicated sharding");
}
END_TEST

START_TEST(sharding_constraint_without_a_sharding_is_rejected) {
  sp_module *m = new_module();
  sp_type **ts = sp_arena_calloc(m->arena, 1, sizeof *ts);
  ts[0] = tensor2(m, 8, 8);
  sp_block *b = add_func(m, 1, ts, 0, NULL, NULL);
  sp_op *op = add_op(m, b, "sdy.sharding_constraint", 1, b->args, 1, ts, 3);
  add_op(m, b, "func.return", 0, NULL, 0, NULL, 4);
  ck_assert_str_eq(verify(m), "v.mlir:3:5: 'sdy.sharding_constraint' op requires one result with "
                   "a sharding");
  op->results[0].sharding = sharding1(m, 2, 1, "b");
  ck_assert_str_eq(verify(m), "");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ modules as MLIR text */

/* Reads `text` as t.mlir (it must parse) and checks that verification fails with `expected`. */
static void assert_text_error(const char *text, const char *expected) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "the reader rejected the case: %s", err.msg);
  rc = sp_verify_module(m, &err);
  ck_assert_int_eq(rc, SP_EINVAL);
  ck_assert_str_eq(err.msg, expected);
  sp_module_free(m);
}

#define TEXT_CASE(name, text, expected) \
  START_TEST(name) { assert_text_error(text, expected); } \
  END_TEST

TEXT_CASE(unknown_axis_in_func_arg_sharding_points_at_the_arg,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"c\"}, "
    "{}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - unknown axis name: \"c\"")

TEXT_CASE(unknown_mesh_in_op_sharding_points_at_the_op,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other, "
    "[{}, {}]>]>} : tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'stablehlo.add' op result - unknown mesh: @other")

TEXT_CASE(sharding_constraint_of_wrong_rank_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
    "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}]> : tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.sharding_constraint' op sharding doesn't match tensor rank: 1 != 2")

TEXT_CASE(axis_in_two_dims_of_second_arg_is_a_duplicate,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = "
    "#sdy.sharding<@mesh, [{\"a\"}, {\"b\", \"a\"}]>}) {\n"
    "  return\n"
    "}\n",
    "t.mlir:2:36: 'func.func' op arg 1 - duplicate axis ref: \"a\"")

TEXT_CASE(replicated_axis_also_sharding_a_result_dim_is_a_duplicate,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = "
    "#sdy.sharding<@mesh, [{\"a\"}], replicated={\"a\"}>}) {\n"
    "  return %arg0 : tensor<8xf32>\n"
    "}\n",
    "t.mlir:2:1: 'func.func' op result 0 - duplicate axis ref: \"a\"")

TEXT_CASE(sub_axis_not_dividing_its_axis_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=8, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"a\":(3)2}, {}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - sub-axis next pre-size 6 doesn't divide the size of the full axis 8: \"a\":(3)2")

TEXT_CASE(overlapping_sub_axes_in_two_dims_are_rejected,
    "sdy.mesh @mesh = <[\"a\"=8, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"a\":(1)4}, {\"a\":(2)2}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - overlapping sub-axes: \"a\":(1)4, \"a\":(2)2")

TEXT_CASE(mergeable_neighbour_sub_axes_are_rejected,
    "sdy.mesh @mesh = <[\"a\"=8, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"a\":(1)2, \"a\":(2)2}, {}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - two consecutive sub-axes can be merged: \"a\":(1)2, \"a\":(2)2")

TEXT_CASE(full_axis_and_its_sub_axis_in_one_sharding_are_rejected,
    "sdy.mesh @mesh = <[\"a\"=8, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, "
    "{\"a\":(2)2}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - both sub-axis and full-axis are used for axis name: \"a\"")

TEXT_CASE(replicated_axes_must_follow_mesh_order,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], "
    "replicated={\"b\", \"a\"}>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - replicated axes are not ordered w.r.t. mesh: "
    "\"b\" comes before \"a\"")

TEXT_CASE(unreduced_axes_must_follow_mesh_order,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], "
    "unreduced={\"b\", \"a\"}>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - unreduced axes are not ordered w.r.t. mesh: \"b\" "
    "comes before \"a\"")

TEXT_CASE(closed_empty_dim_with_priority_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}p0, "
    "{}p1]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - dim 1 is empty and closed but has a priority")

TEXT_CASE(maximal_mesh_sharding_with_dims_is_rejected,
    "sdy.mesh @maximal = <[], device_ids=[0]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@maximal, [{}, "
    "{}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:2:14: 'func.func' op arg 0 - a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes")

TEXT_CASE(mesh_with_duplicate_axis_name_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"a\"=4]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, "
    "{}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:1:1: custom op 'sdy.mesh' duplicate axis name: \"a\"")

TEXT_CASE(mesh_with_repeated_device_id_is_rejected,
    "func.func @f() {\n"
    "  return\n"
    "}\n"
    "sdy.mesh @m = <[\"a\"=2, \"b\"=2], device_ids=[0, 1, 1, 2]>\n",
    "t.mlir:4:1: custom op 'sdy.mesh' sorted device ids must be iota(product(axes)), got: 0, 1, 1, 2")

/* Shardy also reports the axis list the bad axis was parsed in (a second error, same place). */
TEXT_CASE(mesh_axis_of_size_zero_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=0]>\n",
    "t.mlir:1:1: custom op 'sdy.mesh' axis size must be at least 1, got: 0\ncustom op 'sdy.mesh' "
    "failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`")

TEXT_CASE(mesh_device_count_must_match_axis_sizes,
    "\n"
    "\n"
    "sdy.mesh @mesh = <[\"a\"=2], device_ids=[0, 1, 2]>\n",
    "t.mlir:3:1: custom op 'sdy.mesh' total product of axis sizes must match total number of device ids, got: 2 != 3")

TEXT_CASE(inline_mesh_is_verified_where_it_is_used,
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"x\"=2, "
    "\"x\"=2]>, [{}, {}]>}) -> tensor<8x8xf32> {\n"
    "  return %arg0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:1:14: 'func.func' op arg 0 - duplicate axis name: \"x\"")

TEXT_CASE(rule_with_too_few_operand_mappings_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, "
    "j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'stablehlo.add' op sharding rule: number of operand mappings doesn't "
    "match number of operands: 1 != 2")

TEXT_CASE(rule_tensor_of_wrong_rank_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i], "
    "[i])->([i]) {i=8}>} : tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'stablehlo.add' op sharding rule: operand 0 has 1 dims in the rule but "
    "its type has rank 2")

TEXT_CASE(rule_reduction_factor_in_result_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x32xf32>, %arg1: tensor<32x16xf32>) -> tensor<8x16xf32> "
    "{\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] "
    "{sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, k]) {i=8, j=16, "
    "k=32} reduction={k}>} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
    "  return %0 : tensor<8x16xf32>\n"
    "}\n",
    "t.mlir:3:8: 'stablehlo.dot_general' op reduction factor cannot be in result mappings: factor k in result 0")

TEXT_CASE(rule_factor_twice_in_one_tensor_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding_rule = "
    "#sdy.op_sharding_rule<([i, i])->([i, i]) {i=8}>} : (tensor<8x8xf32>) -> "
    "tensor<8x8xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'stablehlo.transpose' op sharding rule: factor i appears more than once "
    "in operand 0")

TEXT_CASE(manual_axis_missing_from_mesh_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
    "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"c\"} (%arg1: tensor<8x8xf32>) {\n"
    "    sdy.return %arg1 : tensor<8x8xf32>\n"
    "  } : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  return %0 : tensor<16x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.manual_computation' op unknown manual axis: \"c\"")

TEXT_CASE(manual_computation_body_arg_must_have_the_local_type,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
    "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<16x8xf32>) {\n"
    "    sdy.return %arg1 : tensor<16x8xf32>\n"
    "  } : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  return %0 : tensor<16x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.manual_computation' op operand shape, corresponding sharding, and region operand shape at index 0 must match. Expected local shape 'tensor<8x8xf32>', actual local shape 'tensor<16x8xf32>'")

TEXT_CASE(manual_axis_after_free_axis_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\", \"a\"}, {}]>] "
    "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x8xf32>) {\n"
    "    sdy.return %arg1 : tensor<8x8xf32>\n"
    "  } : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  return %0 : tensor<16x8xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.manual_computation' op operand sharding at index 0 must have all manual axes come before free axes in its dimension sharding at index 0. Saw manual axis \"a\" after free axis \"b\"")

TEXT_CASE(sharding_in_body_using_a_manual_axis_is_rejected,
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
    "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x8xf32>) {\n"
    "    %1 = sdy.sharding_constraint %arg1 <@mesh, [{}, {\"a\"}]> : tensor<8x8xf32>\n"
    "    sdy.return %1 : tensor<8x8xf32>\n"
    "  } : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  return %0 : tensor<16x8xf32>\n"
    "}\n",
    "t.mlir:4:10: 'sdy.sharding_constraint' op operates on axis \"a\" which is already bound by a parent sdy.manual_computation op")

TEXT_CASE(op_without_results_with_two_shardings_is_rejected,
    "sdy.mesh @maximal = <[], device_ids=[0]>\n"
    "func.func @f(%arg0: tensor<8x8xf32>) {\n"
    "  stablehlo.custom_call @cb(%arg0) {has_side_effect = true, sdy.sharding = "
    "#sdy.sharding_per_value<[<@maximal, []>, <@maximal, []>]>} : (tensor<8x8xf32>) -> "
    "()\n"
    "  return\n"
    "}\n",
    "t.mlir:3:3: 'stablehlo.custom_call' op sdy.sharding - shardings don't match number "
    "of values: 2 != 0")

START_TEST(manual_computation_written_as_text_verifies) {
  static const char text[] =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @f(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\", \"b\"}, {}]>] "
      "out_shardings=[<@mesh, [{\"a\"}, {\"b\"}]>] manual_axes={\"a\"} "
      "(%arg1: tensor<8x8xf32>) {\n"
      "    %1 = sdy.sharding_constraint %arg1 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "    sdy.return %1 : tensor<8x8xf32>\n"
      "  } : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
      "  return %0 : tensor<16x8xf32>\n"
      "}\n";
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err), SP_OK);
  ck_assert_str_eq(verify(m), "");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ sdy collectives */

#define COLLECTIVE_MODULE(op_line)                                                          \
  "sdy.mesh @m = <[\"p\"=4, \"q\"=2]>\n"                                                   \
  "func.func @f(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"p\", \"q\"}, {}]>}) -> tensor<8x4xf32> {\n" \
  op_line                                                                                    \
  "  return %0 : tensor<8x4xf32>\n"                                                         \
  "}\n"

TEXT_CASE(all_gather_must_remove_the_minor_axes_of_the_operand,
    COLLECTIVE_MODULE("  %0 = sdy.all_gather [{\"p\"}, {}] %arg0 out_sharding=<@m, [{\"q\"}, {}]> : tensor<8x4xf32>\n"),
    "t.mlir:3:8: 'sdy.all_gather' op gathering_axes of dimension 0 must be the minor axes the "
    "operand's sharding has beyond the result's")

TEXT_CASE(all_slice_must_append_its_axes,
    COLLECTIVE_MODULE("  %0 = sdy.all_slice [{}, {\"q\"}] %arg0 out_sharding=<@m, [{\"p\", \"q\"}, {}]> : tensor<8x4xf32>\n"),
    "t.mlir:3:8: 'sdy.all_slice' op result sharding of dimension 1 must be the operand's with "
    "the slicing_axes appended")

TEXT_CASE(all_to_all_dimensions_must_be_in_range,
    COLLECTIVE_MODULE("  %0 = sdy.all_to_all [{\"q\"}: 0->2] %arg0 out_sharding=<@m, [{\"p\"}, {\"q\"}]> : tensor<8x4xf32>\n"),
    "t.mlir:3:8: 'sdy.all_to_all' op target dimension 2 is not in [0, 2)")

TEXT_CASE(all_reduce_axes_cannot_shard_the_result,
    COLLECTIVE_MODULE("  %0 = sdy.all_reduce {\"q\"} %arg0 out_sharding=<@m, [{\"p\", \"q\"}, {}]> : tensor<8x4xf32>\n"),
    "t.mlir:3:8: 'sdy.all_reduce' op reduction axis \"q\" overlaps a dimension sharding of the "
    "result")

TEXT_CASE(collective_permute_keeps_the_shard_count_per_dim,
    COLLECTIVE_MODULE("  %0 = sdy.collective_permute %arg0 out_sharding=<@m, [{\"p\"}, {\"q\"}]> : tensor<8x4xf32>\n"),
    "t.mlir:3:8: 'sdy.collective_permute' op dimension 0 of the operand and result must be "
    "split into the same number of shards: 8 != 4")

TEXT_CASE(barrier_cannot_allow_both_directions,
    "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = sdy.propagation_barrier %arg0 allowed_direction=BOTH : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n",
    "t.mlir:2:8: 'sdy.propagation_barrier' op cannot specify `BOTH` as the direction")

TEXT_CASE(constraint_cannot_turn_kept_min_unreduced_axes_into_sum,
    "sdy.mesh @m = <[\"p\"=4, \"q\"=2]>\n"
    "func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], unreduced=min{\"p\", \"q\"}>}) -> tensor<4xf32> {\n"
    "  %0 = sdy.sharding_constraint %arg0 <@m, [{}], unreduced={\"q\"}> : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.sharding_constraint' op cannot change the reduction operator of kept "
    "unreduced axes from min to sum.")

TEXT_CASE(reshard_cannot_introduce_min_unreduced_axes,
    "sdy.mesh @m = <[\"p\"=4, \"q\"=2]>\n"
    "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = sdy.reshard %arg0 <@m, [{}], unreduced=min{\"p\"}> : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.reshard' op cannot introduce 'min' unreduced axes. Expected 'sum'.")

TEXT_CASE(data_flow_edge_input_needs_a_single_user,
    "func.func @f(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
    "  %0 = stablehlo.negate %arg0 : tensor<4xf32>\n"
    "  %1 = sdy.data_flow_edge %0 : tensor<4xf32>\n"
    "  return %0, %1 : tensor<4xf32>, tensor<4xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.data_flow_edge' op expected input of sdy.data_flow_edge to have a single "
    "user")

TEXT_CASE(func_data_flow_edge_operand_must_come_from_a_call_or_an_argument,
    "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.negate %arg0 : tensor<4xf32>\n"
    "  %1 = sdy.func_data_flow_edge %0 : tensor<4xf32>\n"
    "  return %1 : tensor<4xf32>\n"
    "}\n",
    "t.mlir:3:8: 'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge to be a "
    "result of call op.")

TEXT_CASE(manual_computation_body_cannot_use_an_outer_value,
    "sdy.mesh @m = <[\"p\"=2]>\n"
    "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{}]>] out_shardings=[<@m, [{}]>] manual_axes={} (%arg1: tensor<4xf32>) {\n"
    "    %1 = stablehlo.multiply %arg1, %arg0 : tensor<4xf32>\n"
    "    sdy.return %1 : tensor<4xf32>\n"
    "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n",
    "t.mlir:4:10: 'stablehlo.multiply' op using value defined outside the region")

START_TEST(collectives_whose_shardings_fit_verify) {
  const char *text =
      "sdy.mesh @m = <[\"x\"=8, \"y\"=2]>\n"
      "func.func @f(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"y\"}, {\"x\"}]>}) -> tensor<16x8xf32> {\n"
      "  %0 = sdy.all_gather [{}, {\"x\":(2)4}] %arg0 out_sharding=<@m, [{\"y\"}, {\"x\":(1)2}]> : tensor<16x8xf32>\n"
      "  %1 = sdy.all_slice [{}, {\"x\":(2)4}] %0 out_sharding=<@m, [{\"y\"}, {\"x\"}]> : tensor<16x8xf32>\n"
      "  %2 = sdy.all_to_all [{\"x\"}: 1->0] %1 out_sharding=<@m, [{\"y\", \"x\"}, {}]> : tensor<16x8xf32>\n"
      "  %3 = sdy.reduce_scatter [{}, {\"x\":(2)4}] %0 out_sharding=<@m, [{\"y\"}, {\"x\"}]> : tensor<16x8xf32>\n"
      "  return %2 : tensor<16x8xf32>\n"
      "}\n";
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err), SP_OK);
  ck_assert_str_eq(verify(m), "");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ the conformance set */

static const char *const CONFORMANCE[] = {
    "basic_propagation.mlir", "basic_propagation_conservative.mlir",
    "basic_propagation_data_flow_edges.mlir", "basic_propagation_keep_sharding_rules.mlir",
    "basic_propagation_token.mlir", "edge_shardings.mlir", "op_priority_propagation.mlir",
    "op_sharding_rule_registry.mlir", "op_sharding_rule_registry_failures.mlir",
    "propagation_pipeline.mlir", "propagation_pipeline_data_flow_edges.mlir",
    "sharding_origins.mlir"};

START_TEST(every_conformance_chunk_the_reader_accepts_passes_verification) {
  int parsed = 0, total = 0;
  for (size_t i = 0; i < sizeof CONFORMANCE / sizeof *CONFORMANCE; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "conformance/shardy/%s", CONFORMANCE[i]);
    const char *path = sp_test_shared_path(rel);
    size_t len;
    char *text = sp_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    int n = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *chunks = calloc((size_t)n, sizeof *chunks);
    sp_mlir_split(text, len, chunks, n);
    for (int c = 0; c < n; c++) {
      sp_module *m = NULL;
      sp_err err;
      total++;
      if (sp_mlir_parse(chunks[c].begin, chunks[c].len, path, chunks[c].first_line, &m, &err)) {
        printf("reader gap (not a verifier matter): %s\n", err.msg);
        continue;
      }
      parsed++;
      int rc = sp_verify_module(m, &err);
      ck_assert_msg(rc == SP_OK, "valid Shardy input rejected: %s", err.msg);
      sp_module_free(m);
    }
    free(chunks);
    free(text);
  }
  printf("conformance: %d of %d chunks parsed, all of them verified\n", parsed, total);
  ck_assert_int_ge(parsed, total * 9 / 10);
}
END_TEST

static Suite *verify_suite(void) {
  Suite *s = suite_create("verify");
  TCase *tr = tcase_create("rules");
  tcase_add_test(tr, dot_rule_that_fits_the_op_is_accepted);
  tcase_add_test(tr, rule_with_wrong_operand_count_is_rejected);
  tcase_add_test(tr, rule_with_wrong_result_count_is_rejected);
  tcase_add_test(tr, rule_tensor_with_wrong_number_of_dims_is_rejected);
  tcase_add_test(tr, rule_factor_used_twice_in_one_tensor_is_rejected);
  tcase_add_test(tr, rule_reduction_factor_in_a_result_is_rejected);
  tcase_add_test(tr, rule_factor_index_out_of_range_is_rejected);
  tcase_add_test(tr, rule_factor_not_used_by_any_tensor_is_rejected);
  tcase_add_test(tr, rule_dim_without_factors_is_rejected);
  tcase_add_test(tr, rule_size_one_factor_sharing_a_dim_is_rejected);
  tcase_add_test(tr, rule_on_an_op_without_results_is_rejected);
  suite_add_tcase(s, tr);
  TCase *tv = tcase_create("values");
  tcase_add_test(tv, func_arg_sharding_error_names_the_arg_and_its_position);
  tcase_add_test(tv, func_result_sharding_is_checked_against_the_result_type);
  tcase_add_test(tv, op_result_sharding_error_names_the_op_and_result);
  tcase_add_test(tv, second_mesh_with_the_same_name_is_a_redefinition);
  tcase_add_test(tv, invalid_mesh_op_is_reported_as_the_custom_op_shardy_parses);
  tcase_add_test(tv, op_without_results_carries_at_most_one_maximal_or_replicated_sharding);
  tcase_add_test(tv, sharding_constraint_without_a_sharding_is_rejected);
  suite_add_tcase(s, tv);
  TCase *tt = tcase_create("text");
  tcase_add_test(tt, unknown_axis_in_func_arg_sharding_points_at_the_arg);
  tcase_add_test(tt, unknown_mesh_in_op_sharding_points_at_the_op);
  tcase_add_test(tt, sharding_constraint_of_wrong_rank_is_rejected);
  tcase_add_test(tt, axis_in_two_dims_of_second_arg_is_a_duplicate);
  tcase_add_test(tt, replicated_axis_also_sharding_a_result_dim_is_a_duplicate);
  tcase_add_test(tt, sub_axis_not_dividing_its_axis_is_rejected);
  tcase_add_test(tt, overlapping_sub_axes_in_two_dims_are_rejected);
  tcase_add_test(tt, mergeable_neighbour_sub_axes_are_rejected);
  tcase_add_test(tt, full_axis_and_its_sub_axis_in_one_sharding_are_rejected);
  tcase_add_test(tt, replicated_axes_must_follow_mesh_order);
  tcase_add_test(tt, unreduced_axes_must_follow_mesh_order);
  tcase_add_test(tt, closed_empty_dim_with_priority_is_rejected);
  tcase_add_test(tt, maximal_mesh_sharding_with_dims_is_rejected);
  tcase_add_test(tt, mesh_with_duplicate_axis_name_is_rejected);
  tcase_add_test(tt, mesh_with_repeated_device_id_is_rejected);
  tcase_add_test(tt, mesh_axis_of_size_zero_is_rejected);
  tcase_add_test(tt, mesh_device_count_must_match_axis_sizes);
  tcase_add_test(tt, inline_mesh_is_verified_where_it_is_used);
  tcase_add_test(tt, rule_with_too_few_operand_mappings_is_rejected);
  tcase_add_test(tt, rule_tensor_of_wrong_rank_is_rejected);
  tcase_add_test(tt, rule_reduction_factor_in_result_is_rejected);
  tcase_add_test(tt, rule_factor_twice_in_one_tensor_is_rejected);
  tcase_add_test(tt, manual_axis_missing_from_mesh_is_rejected);
  tcase_add_test(tt, manual_computation_body_arg_must_have_the_local_type);
  tcase_add_test(tt, manual_axis_after_free_axis_is_rejected);
  tcase_add_test(tt, sharding_in_body_using_a_manual_axis_is_rejected);
  tcase_add_test(tt, op_without_results_with_two_shardings_is_rejected);
  tcase_add_test(tt, manual_computation_written_as_text_verifies);
  tcase_add_test(tt, all_gather_must_remove_the_minor_axes_of_the_operand);
  tcase_add_test(tt, all_slice_must_append_its_axes);
  tcase_add_test(tt, all_to_all_dimensions_must_be_in_range);
  tcase_add_test(tt, all_reduce_axes_cannot_shard_the_result);
  tcase_add_test(tt, collective_permute_keeps_the_shard_count_per_dim);
  tcase_add_test(tt, collectives_whose_shardings_fit_verify);
  tcase_add_test(tt, barrier_cannot_allow_both_directions);
  tcase_add_test(tt, manual_computation_body_cannot_use_an_outer_value);
  tcase_add_test(tt, constraint_cannot_turn_kept_min_unreduced_axes_into_sum);
  tcase_add_test(tt, reshard_cannot_introduce_min_unreduced_axes);
  tcase_add_test(tt, data_flow_edge_input_needs_a_single_user);
  tcase_add_test(tt, func_data_flow_edge_operand_must_come_from_a_call_or_an_argument);
  suite_add_tcase(s, tt);
  if (sp_test_have_shared(SHARED_PART)) {
    TCase *tc = tcase_create("conformance");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_conformance_chunk_the_reader_accepts_passes_verification);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(void) { return sp_test_run_partial(verify_suite(), SHARED_PART); }
