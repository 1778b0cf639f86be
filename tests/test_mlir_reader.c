/*
 * test_mlir_reader.c - the MLIR reader: what the IR looks like after parsing (shardings on
 * values, structured attributes under the op_attrs.h names, rules, meshes, regions), the
 * `// -----` splitter, and malformed input (message and position).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/sp_limits.h"
#include "mlir/mlir.h"
#include "test_support.h"

static sp_module *parse_ok(const char *text) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse failed: %s", err.msg);
  ck_assert_ptr_nonnull(m);
  return m;
}

/* The first func.func of the module and its entry block. */
static sp_op *first_func(const sp_module *m) {
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) return op;
  return NULL;
}

static sp_op *nth_op(sp_op *func, int n) {
  sp_op *op = func->regions[0].blocks[0]->first;
  while (op && n--) op = op->next;
  return op;
}

static void assert_ints(const sp_op *op, const char *name, int n, const int64_t *want) {
  sp_ints v;
  ck_assert_msg(sp_op_get_ints(op, name, &v), "missing INTS attribute %s", name);
  ck_assert_int_eq(v.n, n);
  for (int i = 0; i < n; i++) ck_assert_int_eq(v.v[i], want[i]);
}

/* ------------------------------------------------------------------ structure */

START_TEST(func_arg_and_result_shardings_land_on_values_and_func_info) {
  sp_module *m = parse_ok(
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
      "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\", ?}p1]>, jax.x = 1 : i64})\n"
      "    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}], replicated={\"a\"}>}) {\n"
      "  return %arg0 : tensor<8x8xf32>\n"
      "}\n");
  sp_op *f = first_func(m);
  ck_assert_ptr_nonnull(f);
  ck_assert_str_eq(sp_op_get_str(f, "sym_name"), "f");
  sp_value *arg = f->regions[0].blocks[0]->args[0];
  ck_assert_ptr_nonnull(arg->sharding);
  ck_assert_str_eq(arg->sharding->mesh_name, "mesh");
  ck_assert_int_eq(arg->sharding->rank, 2);
  ck_assert(arg->sharding->dims[0].closed);
  ck_assert(!arg->sharding->dims[1].closed);
  ck_assert_int_eq(arg->sharding->dims[1].priority, 1);
  ck_assert_str_eq(arg->sharding->dims[1].axes[0].name, "b");
  ck_assert_ptr_null(sp_attrs_get(&arg->attrs, "sdy.sharding"));
  ck_assert_ptr_nonnull(sp_attrs_get(&arg->attrs, "jax.x"));
  ck_assert_int_eq(f->func->nargs, 1);
  ck_assert_int_eq(f->func->nresults, 1);
  ck_assert_ptr_eq(f->func->arg_types[0], arg->type);
  ck_assert_int_eq(f->func->result_shardings[0]->nreplicated, 1);
  const sp_mesh *mesh = sp_module_lookup_mesh(m, "mesh");
  ck_assert_ptr_nonnull(mesh);
  ck_assert_int_eq(mesh->naxes, 2);
  ck_assert_int_eq(mesh->axes[1].size, 4);
  sp_module_free(m);
}
END_TEST

START_TEST(op_shardings_and_inline_sdy_shardings_land_on_results) {
  sp_module *m = parse_ok(
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>} : tensor<8x8xf32>\n"
      "  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
      "  %2 = sdy.data_flow_edge %1 sharding=<mesh<[\"x\"=4]>, [{\"x\":(1)2}, {}]> : tensor<8x8xf32>\n"
      "  %3 = sdy.reshard %2 <@mesh, [{\"a\"}, {}], unreduced={\"b\"}> : tensor<8x8xf32>\n"
      "  return %3 : tensor<8x8xf32>\n"
      "}\n");
  sp_op *f = first_func(m);
  sp_op *add = nth_op(f, 0), *con = nth_op(f, 1), *edge = nth_op(f, 2), *rs = nth_op(f, 3);
  ck_assert_int_eq(add->kind, SP_OP_ADD);
  ck_assert_ptr_null(sp_op_attr(add, "sdy.sharding"));
  ck_assert_str_eq(add->results[0].sharding->dims[0].axes[0].name, "a");
  ck_assert_int_eq(con->kind, SP_OP_SDY_SHARDING_CONSTRAINT);
  ck_assert_ptr_eq(con->operands[0].value, &add->results[0]);
  ck_assert_int_eq(con->results[0].sharding->dims[1].naxes, 1);
  ck_assert_ptr_null(sp_op_attr(con, "sharding"));
  const sp_sharding *es = edge->results[0].sharding;
  ck_assert_ptr_nonnull(es->inline_mesh);
  ck_assert_int_eq(es->inline_mesh->axes[0].size, 4);
  ck_assert_int_eq(es->dims[0].axes[0].pre, 1);
  ck_assert_int_eq(es->dims[0].axes[0].size, 2);
  ck_assert_int_eq(rs->results[0].sharding->nunreduced, 1);
  ck_assert_ptr_eq(sp_value_num_uses(&add->results[0]) == 1 ? con : NULL, con);
  sp_module_free(m);
}
END_TEST

START_TEST(pretty_and_generic_dot_general_give_the_same_structured_attrs) {
  static const char *texts[] = {
      "func.func @f(%a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], "
      "precision = [DEFAULT, HIGH] : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>\n"
      "  return %0 : tensor<4x8x16xf32>\n}\n",
      "func.func @f(%a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {\n"
      "  %0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<\n"
      "     lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],\n"
      "     lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,\n"
      "     precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]}"
      " : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>\n"
      "  return %0 : tensor<4x8x16xf32>\n}\n"};
  for (int i = 0; i < 2; i++) {
    sp_module *m = parse_ok(texts[i]);
    sp_op *dot = nth_op(first_func(m), 0);
    ck_assert_int_eq(dot->kind, SP_OP_DOT_GENERAL);
    int64_t zero[] = {0}, two[] = {2}, one[] = {1};
    assert_ints(dot, "lhs_batching_dimensions", 1, zero);
    assert_ints(dot, "rhs_batching_dimensions", 1, zero);
    assert_ints(dot, "lhs_contracting_dimensions", 1, two);
    assert_ints(dot, "rhs_contracting_dimensions", 1, one);
    ck_assert_str_eq(sp_op_get_str(dot, "precision_config"),
                     "[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]");
    sp_module_free(m);
  }
}
END_TEST

START_TEST(shape_op_attributes_are_structured_from_pretty_and_generic_forms) {
  sp_module *m = parse_ok(
      "func.func @f(%x: tensor<2x13xf32>, %i: tensor<i32>, %p: tensor<f32>) -> tensor<4x2xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<2x13xf32>) -> tensor<2x3x13xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<2x3x13xf32>) -> tensor<13x3x2xf32>\n"
      "  %2 = stablehlo.slice %1 [0:4, 1:3:2, 0:2] : (tensor<13x3x2xf32>) -> tensor<4x1x2xf32>\n"
      "  %3 = stablehlo.concatenate %2, %2, dim = 1 : (tensor<4x1x2xf32>, tensor<4x1x2xf32>) -> tensor<4x2x2xf32>\n"
      "  %4 = \"stablehlo.reverse\"(%3) {dimensions = array<i64: 0, 2>} : (tensor<4x2x2xf32>) -> tensor<4x2x2xf32>\n"
      "  %5 = stablehlo.pad %4, %p, low = [0, -1, 0], high = [1, 0, 0], interior = [0, 0, 1] : (tensor<4x2x2xf32>, tensor<f32>) -> tensor<5x1x3xf32>\n"
      "  %6 = stablehlo.dynamic_slice %5, %i, %i, %i, sizes = [4, 1, 2] : (tensor<5x1x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x1x2xf32>\n"
      "  %7 = stablehlo.reshape %6 : (tensor<4x1x2xf32>) -> tensor<4x2xf32>\n"
      "  %8 = \"stablehlo.sort\"(%7) ({\n"
      "  ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n"
      "    %c = stablehlo.compare  GT, %l, %r,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) {dimension = 1 : i64, is_stable = true} : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "  return %8 : tensor<4x2xf32>\n}\n");
  sp_op *f = first_func(m);
  int64_t bd[] = {0, 2}, perm[] = {2, 1, 0}, st[] = {0, 1, 0}, lim[] = {4, 3, 2}, strides[] = {1, 2, 1};
  assert_ints(nth_op(f, 0), "broadcast_dimensions", 2, bd);
  assert_ints(nth_op(f, 1), "permutation", 3, perm);
  assert_ints(nth_op(f, 2), "start_indices", 3, st);
  assert_ints(nth_op(f, 2), "limit_indices", 3, lim);
  assert_ints(nth_op(f, 2), "strides", 3, strides);
  int64_t d;
  ck_assert(sp_op_get_int(nth_op(f, 3), "dimension", &d));
  ck_assert_int_eq(d, 1);
  int64_t rev[] = {0, 2}, lo[] = {0, -1, 0}, sizes[] = {4, 1, 2};
  assert_ints(nth_op(f, 4), "dimensions", 2, rev);
  assert_ints(nth_op(f, 5), "edge_padding_low", 3, lo);
  assert_ints(nth_op(f, 6), "slice_sizes", 3, sizes);
  sp_op *sort = nth_op(f, 8);
  ck_assert(sp_op_get_int(sort, "dimension", &d));
  ck_assert_int_eq(d, 1);
  ck_assert_int_eq(sp_op_attr(sort, "is_stable")->kind, SP_ATTR_BOOL);
  sp_op *cmp = sort->regions[0].blocks[0]->first;
  ck_assert_int_eq(cmp->kind, SP_OP_COMPARE);
  ck_assert_str_eq(sp_op_get_str(cmp, "comparison_direction"), "GT");
  ck_assert_int_eq(sp_op_attr(cmp, "comparison_direction")->kind, SP_ATTR_ENUM);
  ck_assert_str_eq(sp_op_get_str(cmp, "compare_type"), "#stablehlo<comparison_type FLOAT>");
  sp_module_free(m);
}
END_TEST

START_TEST(gather_scatter_conv_and_window_attributes_are_decoded) {
  sp_module *m = parse_ok(
      "func.func @f(%x: tensor<3x4x2x5xf32>, %i: tensor<2x3x3xi64>, %k: tensor<3x3x5x7xf32>,\n"
      "             %img: tensor<2x9x9x5xf32>, %z: tensor<f32>) -> tensor<2x3x2x2x1xf32> {\n"
      "  %0 = \"stablehlo.gather\"(%x, %i) {\n"
      "    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3, 4], collapsed_slice_dims = [0],\n"
      "      start_index_map = [1, 0, 3], index_vector_dim = 2>,\n"
      "    slice_sizes = array<i64: 1, 2, 2, 1>, indices_are_sorted = false\n"
      "  } : (tensor<3x4x2x5xf32>, tensor<2x3x3xi64>) -> tensor<2x3x2x2x1xf32>\n"
      "  %1 = stablehlo.convolution(%img, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],\n"
      "    window = {stride = [2, 2], pad = [[0, 1], [1, 0]], rhs_dilate = [1, 2]}\n"
      "    {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x9x9x5xf32>, tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32>\n"
      "  %2 = \"stablehlo.reduce_window\"(%img, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %m = stablehlo.maximum %a, %b : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 1, 3, 3, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>}\n"
      "     : (tensor<2x9x9x5xf32>, tensor<f32>) -> tensor<2x9x9x5xf32>\n"
      "  return %0 : tensor<2x3x2x2x1xf32>\n}\n");
  sp_op *f = first_func(m);
  sp_op *g = nth_op(f, 0), *conv = nth_op(f, 1), *rw = nth_op(f, 2);
  int64_t off[] = {2, 3, 4}, map[] = {1, 0, 3}, ss[] = {1, 2, 2, 1};
  assert_ints(g, "offset_dims", 3, off);
  assert_ints(g, "start_index_map", 3, map);
  assert_ints(g, "operand_batching_dims", 0, NULL);
  assert_ints(g, "slice_sizes", 4, ss);
  int64_t v;
  ck_assert(sp_op_get_int(g, "index_vector_dim", &v));
  ck_assert_int_eq(v, 2);
  ck_assert_ptr_null(sp_op_attr(g, "dimension_numbers"));
  ck_assert(sp_op_get_int(conv, "input_feature_dimension", &v));
  ck_assert_int_eq(v, 3);
  ck_assert(sp_op_get_int(conv, "kernel_output_feature_dimension", &v));
  ck_assert_int_eq(v, 3);
  int64_t isp[] = {1, 2}, ksp[] = {0, 1}, pad[] = {0, 1, 1, 0}, rd[] = {1, 2};
  assert_ints(conv, "input_spatial_dimensions", 2, isp);
  assert_ints(conv, "kernel_spatial_dimensions", 2, ksp);
  assert_ints(conv, "padding", 4, pad);
  assert_ints(conv, "rhs_dilation", 2, rd);
  ck_assert(sp_op_get_int(conv, "feature_group_count", &v));
  ck_assert_int_eq(v, 1);
  int64_t wd[] = {1, 3, 3, 1}, rwpad[] = {0, 0, 1, 1, 1, 1, 0, 0};
  assert_ints(rw, "window_dimensions", 4, wd);
  assert_ints(rw, "padding", 8, rwpad);
  sp_module_free(m);
}
END_TEST

START_TEST(sharding_rule_factors_kinds_and_custom_flag_are_parsed) {
  sp_module *m = parse_ok(
      "func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.custom_call @foo(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<"
      "([ij, k])->([z_8z_9]) {i=2, j=4, k=8, l=1, m=1, n=1, o=1, p=1, q=1, r=1, s=1, t=1, u=1,"
      " v=1, w=1, x=1, y=1, z=1, z_1=1, z_2=1, z_3=1, z_4=1, z_5=1, z_6=1, z_7=1, z_8=3, z_9=5}"
      " reduction={k} need_replication={j} blocked_propagation={i, k}, custom>} : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n}\n");
  sp_op *cc = nth_op(first_func(m), 0);
  ck_assert_str_eq(sp_op_get_str(cc, "call_target_name"), "foo");
  sp_rule *r = sp_op_rule(cc);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(r->nfactors, 27);
  ck_assert_int_eq(r->noperands, 1);
  ck_assert_int_eq(r->operands[0].rank, 2);
  ck_assert_int_eq(r->operands[0].dims[0].nfactors, 2);
  ck_assert_int_eq(r->operands[0].dims[0].factors[1], 1);
  ck_assert_int_eq(r->results[0].dims[0].factors[0], 25);
  ck_assert_int_eq(r->results[0].dims[0].factors[1], 26);
  ck_assert_int_eq(r->factors[26].size, 5);
  ck_assert_int_eq(r->factors[2].kind, SP_FACTOR_REDUCTION);
  ck_assert_int_eq(r->factors[1].kind, SP_FACTOR_NEED_REPLICATION);
  ck_assert(r->factors[0].blocked && r->factors[2].blocked && !r->factors[1].blocked);
  ck_assert(r->custom);
  sp_module_free(m);
}
END_TEST

START_TEST(meshes_drop_iota_device_ids_but_keep_maximal_and_permuted_ones) {
  sp_module *m = parse_ok(
      "sdy.mesh @iota = <[\"a\"=2, \"b\"=2], device_ids=[0, 1, 2, 3]>\n"
      "sdy.mesh @perm = <[\"a\"=2], device_ids=[1, 0]>\n"
      "sdy.mesh @maximal = <[], device_ids=[3]>\n"
      "sdy.mesh @empty = <[]>\n");
  ck_assert_int_eq(sp_module_lookup_mesh(m, "iota")->ndevice_ids, 0);
  ck_assert_int_eq(sp_module_lookup_mesh(m, "perm")->ndevice_ids, 2);
  ck_assert(sp_mesh_is_maximal(sp_module_lookup_mesh(m, "maximal")));
  ck_assert(sp_mesh_is_empty(sp_module_lookup_mesh(m, "empty")));
  sp_module_free(m);
}
END_TEST

START_TEST(regions_multi_results_while_case_manual_computation_are_wired) {
  sp_module *m = parse_ok(
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @f(%p: tensor<i32>, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
      "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %w:2 = stablehlo.while(%it = %x, %n = %c) : tensor<8xf32>, tensor<i32>\n"
      "    cond {\n"
      "    %b = stablehlo.compare  LT, %n, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %b : tensor<i1>\n"
      "  } do {\n"
      "    %y = stablehlo.add %it, %it : tensor<8xf32>\n"
      "    stablehlo.return %y, %n : tensor<8xf32>, tensor<i32>\n"
      "  }\n"
      "  %k:2 = \"stablehlo.case\"(%p) ({\n"
      "    stablehlo.return %w#0, %x : tensor<8xf32>, tensor<8xf32>\n"
      "  }, {\n"
      "    stablehlo.return %x, %w#0 : tensor<8xf32>, tensor<8xf32>\n"
      "  }) : (tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
      "  %mc = sdy.manual_computation(%k#1) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>]\n"
      "      manual_axes={\"a\"} (%arg1: tensor<4xf32>) {\n"
      "    sdy.return %arg1 : tensor<4xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %k#0, %mc : tensor<8xf32>, tensor<8xf32>\n"
      "}\n");
  sp_op *f = first_func(m);
  sp_op *w = nth_op(f, 1), *cs = nth_op(f, 2), *mc = nth_op(f, 3), *ret = nth_op(f, 4);
  ck_assert_int_eq(w->kind, SP_OP_WHILE);
  ck_assert_int_eq(w->nregions, 2);
  ck_assert_int_eq(w->regions[1].blocks[0]->nargs, 2);
  sp_op *add = w->regions[1].blocks[0]->first;
  ck_assert_ptr_eq(add->operands[0].value, w->regions[1].blocks[0]->args[0]);
  sp_op *cmp = w->regions[0].blocks[0]->first;
  ck_assert_ptr_eq(cmp->operands[1].value, &nth_op(f, 0)->results[0]); /* outer value */
  ck_assert_int_eq(cs->kind, SP_OP_CASE);
  ck_assert_int_eq(cs->nregions, 2);
  ck_assert_ptr_eq(cs->regions[0].blocks[0]->first->operands[0].value, &w->results[0]);
  ck_assert_int_eq(mc->kind, SP_OP_SDY_MANUAL_COMPUTATION);
  ck_assert_ptr_eq(mc->operands[0].value, &cs->results[1]);
  ck_assert_int_eq(sp_op_attr(mc, "in_shardings")->u.shardings.n, 1);
  ck_assert_int_eq(sp_op_attr(mc, "manual_axes")->u.axes.n, 1);
  ck_assert_ptr_nonnull(mc->results[0].sharding);
  ck_assert_ptr_eq(ret->operands[0].value, &cs->results[0]);
  ck_assert_ptr_eq(ret->operands[1].value, &mc->results[0]);
  /* mesh, func, 5 in the body, 4 in the while, 2 in the case, 1 in the computation */
  ck_assert_int_eq(sp_module_num_ops(m), 14);
  sp_module_free(m);
}
END_TEST

START_TEST(reduce_applies_form_builds_its_body) {
  sp_module *m = parse_ok(
      "func.func @f(%x: tensor<2x64xf32>) -> tensor<2xf32> {\n"
      "  %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%x init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n");
  sp_op *red = nth_op(first_func(m), 1);
  ck_assert_int_eq(red->kind, SP_OP_REDUCE);
  ck_assert_int_eq(red->noperands, 2);
  int64_t one[] = {1};
  assert_ints(red, "dimensions", 1, one);
  sp_block *b = red->regions[0].blocks[0];
  ck_assert_int_eq(b->nargs, 2);
  ck_assert_int_eq(b->first->kind, SP_OP_ADD);
  ck_assert_int_eq(b->last->kind, SP_OP_RETURN);
  ck_assert_int_eq(b->args[0]->type->rank, 0);
  ck_assert_str_eq(b->args[0]->type->elem, "f32");
  sp_module_free(m);
}
END_TEST

START_TEST(implicit_and_explicit_modules_comments_locations_and_aliases) {
  sp_module *m = parse_ok(
      "#loc1 = loc(\"x.py\":3:4)\n"
      "#sh = #sdy.sharding<@mesh, [{\"a\"}]>\n"
      "// a comment\n"
      "module @jit_f attributes {mhlo.num_partitions = 8 : i32} {\n"
      "  sdy.mesh @mesh = <[\"a\"=2]> loc(#loc1)\n"
      "  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sh} loc(\"x.py\":1:1)) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.negate %arg0 : tensor<4xf32> loc(callsite(\"a\"(\"b\":1:2) at \"c\":3:4))\n"
      "    return %0 : tensor<4xf32> // trailing comment\n"
      "  } loc(unknown)\n"
      "} loc(unknown)\n");
  ck_assert_int_eq(m->op->kind, SP_OP_MODULE);
  ck_assert_str_eq(sp_op_get_str(m->op, "sym_name"), "jit_f");
  ck_assert_str_eq(sp_op_get_str(m->op, "mhlo.num_partitions"), "8 : i32");
  sp_op *f = first_func(m);
  ck_assert_str_eq(sp_op_get_str(f, "sym_visibility"), "public");
  ck_assert_str_eq(f->regions[0].blocks[0]->args[0]->sharding->mesh_name, "mesh");
  sp_module_free(m);
  m = parse_ok("func.func private @decl(tensor<4xf32>) -> tensor<4xf32>\n");
  ck_assert_int_eq(m->op->kind, SP_OP_MODULE);
  sp_op *d = first_func(m);
  ck_assert_int_eq(d->nregions, 0);
  ck_assert_int_eq(d->func->nargs, 1);
  sp_module_free(m);
}
END_TEST

START_TEST(types_tokens_tuples_dynamic_and_unranked_are_parsed) {
  sp_module *m = parse_ok(
      "func.func @f(%a: !stablehlo.token, %b: tuple<tensor<f32>, tensor<2xi32>>, %c: tensor<?x8xf32>,\n"
      "             %d: tensor<*xf32>, %e: tensor<4xcomplex<f32>>, %g: tensor<2xbf16, #enc<1>>) {\n"
      "  return\n}\n");
  sp_block *b = first_func(m)->regions[0].blocks[0];
  ck_assert_int_eq(b->args[0]->type->kind, SP_TYPE_TOKEN);
  ck_assert_int_eq(b->args[1]->type->kind, SP_TYPE_TUPLE);
  ck_assert_int_eq(b->args[1]->type->nelems, 2);
  ck_assert(b->args[2]->type->dims[0] == SP_DYN_DIM);
  ck_assert_int_eq(b->args[3]->type->rank, -1);
  ck_assert_str_eq(b->args[4]->type->elem, "complex<f32>");
  ck_assert_str_eq(b->args[5]->type->encoding, "#enc<1>");
  sp_module_free(m);
}
END_TEST

/* ------------------------------------------------------------------ split */

START_TEST(split_reports_chunks_with_their_first_lines) {
  const char *text = "a\nb\n// -----\nc\n  // -----\n// ---------\nd";
  sp_mlir_chunk ch[4];
  int n = sp_mlir_split(text, strlen(text), ch, 4);
  ck_assert_int_eq(n, 4);
  ck_assert_int_eq((int)ch[0].len, 4);
  ck_assert_int_eq(ch[0].first_line, 1);
  ck_assert_int_eq(ch[1].first_line, 4);
  ck_assert(strncmp(ch[1].begin, "c\n", ch[1].len) == 0);
  ck_assert_int_eq((int)ch[2].len, 0);
  ck_assert_int_eq(ch[3].first_line, 7);
  ck_assert_int_eq((int)ch[3].len, 1);
  ck_assert_int_eq(sp_mlir_split(text, strlen(text), ch, 1), 4); /* count beyond max */
  ck_assert_int_eq(sp_mlir_split("x // ----- y", 12, ch, 4), 1);  /* not at line start */
  ck_assert_int_eq(sp_mlir_split("// ----- and text", 17, ch, 4), 1); /* text after it */
}
END_TEST

START_TEST(chunk_errors_point_into_the_original_file) {
  sp_module *m = NULL;
  sp_err err;
  const char *chunk = "\nfunc.func @f() {\n  return %zz : tensor<f32>\n}\n";
  ck_assert_int_eq(sp_mlir_parse(chunk, strlen(chunk), "big.mlir", 40, &m, &err), SP_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.msg, "big.mlir:42:10: use of undefined value '%zz'");
}
END_TEST

/* ------------------------------------------------------------------ malformed input */

typedef struct bad_case {
  const char *name;
  const char *text;
  const char *where;   /* "line:col" */
  const char *message; /* a substring of the message after the position */
} bad_case;

static const bad_case bad_cases[] = {
    {"unterminated string", "sdy.mesh @m = <[\"a=2]>\n", "1:17", "unterminated string"},
    {"bad sharding: missing ']'",
     "sdy.mesh @m = <[\"a\"=2]>\nfunc.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}>}) {\n  return\n}\n",
     "2:72", "expected ']' in sharding"},
    {"bad sharding: axis not a string",
     "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{a}]>}) {\n  return\n}\n",
     "1:68", "expected axis name or '?' in dimension sharding"},
    {"unknown value", "func.func @f() {\n  return %x : tensor<f32>\n}\n", "2:10",
     "use of undefined value '%x'"},
    {"result number out of range",
     "func.func @f(%a: tensor<f32>) {\n  %0:2 = \"x.y\"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)\n"
     "  %1 = stablehlo.abs %0#5 : tensor<f32>\n  return\n}\n",
     "3:22", "result number 5 out of range: '%0' has 2 results"},
    {"missing '>' in tensor type", "func.func @f(%a: tensor<8xf32) {\n  return\n}\n", "1:30",
     "expected '>' to end tensor type"},
    {"bad integer", "sdy.mesh @m = <[\"a\"=two]>\n", "1:21", "expected integer in mesh axis size"},
    {"integer overflow", "sdy.mesh @m = <[\"a\"=99999999999999999999]>\n", "1:21",
     "integer out of range"},
    {"unbalanced braces", "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : tensor<f32>\n", "3:1",
     "expected '}' to end region, got end of input"},
    {"operand/type count mismatch",
     "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : (tensor<f32>) -> tensor<f32>\n  return\n}\n",
     "2:8", "'stablehlo.add' has 2 operands but its type lists 1"},
    {"operand type mismatch",
     "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<i32>\n  return\n}\n",
     "2:8", "type of operand #0 of 'stablehlo.add' does not match its definition"},
    {"result count mismatch",
     "func.func @f(%a: tensor<f32>) {\n  %0:2 = stablehlo.abs %a : tensor<f32>\n  return\n}\n",
     "2:10", "operation defines 1 result but 2 are bound"},
    {"truncated file", "func.func @f(%a: tensor<f32>", "1:29", "expected ')' in argument list, got end of input"},
    {"garbage bytes", "\x01\x02garbage", "1:1", "unexpected character"},
    {"redefinition", "func.func @f(%a: tensor<f32>) {\n  %a = stablehlo.abs %a : tensor<f32>\n  return\n}\n",
     "2:3", "redefinition of SSA value '%a'"},
    {"repeated replicated list, with the enclosing attribute's line",
     "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [], replicated={\"a\"}, replicated={\"b\"}>]>} : tensor<f32>\n  return\n}\n",
     "2:93", "expected valid named axis list after comma\nfailed to parse Sdy_TensorShardingPerValue parameter 'shardings'"},
    {"priority with leading zero",
     "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}p01]>}) {\n  return\n}\n",
     "1:72", "priorities with leading zeros are not allowed, got: p01"},
    {"rule factor without size",
     "func.func @f(%x: tensor<8xf32>) {\n  stablehlo.custom_call @g(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i]) {i=2}>} : (tensor<8xf32>) -> ()\n  return\n}\n",
     "2:75", "factor 'j' is used but has no size"},
    {"sharding count mismatch",
     "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, []>, <@m, []>]>} : tensor<f32>\n  return\n}\n",
     "2:8", "'stablehlo.abs' op result shardings don't match number of values: 2 shardings vs 1 values"},
    {"mesh without '='", "sdy.mesh @m <[\"a\"=2]>\n", "1:13", "expected '=' in sdy.mesh"},
    {"unknown custom syntax", "func.func @f(%a: tensor<f32>) {\n  %0 = foo.bar %a\n}\n", "2:8",
     "custom syntax of 'foo.bar' is not supported"},
    {"bad string escape", "func.func @f() attributes {x = \"a\\qb\"} {\n  return\n}\n", "1:32",
     "unknown escape in string literal"},
    {"duplicate attribute", "func.func @f() attributes {x = 1, x = 2} {\n  return\n}\n", "1:35",
     "duplicate attribute 'x'"},
    {"unknown bare operation", "func.func @f() {\n  frobnicate\n}\n", "2:3",
     "unknown operation 'frobnicate'"},
};

START_TEST(malformed_input_is_rejected_with_message_and_position) {
  const bad_case *c = &bad_cases[_i];
  sp_module *m = (sp_module *)1;
  sp_err err;
  int rc = sp_mlir_parse(c->text, strlen(c->text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc != SP_OK, "%s: parsed", c->name);
  ck_assert_ptr_null(m);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "t.mlir:%s: ", c->where);
  ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s: got '%s', want prefix '%s'",
                c->name, err.msg, prefix);
  ck_assert_msg(strstr(err.msg, c->message) != NULL, "%s: got '%s', want '%s'", c->name, err.msg,
                c->message);
}
END_TEST

START_TEST(deep_nesting_is_a_limit_error_not_a_crash) {
  size_t depth = 100000;
  char *text = malloc(depth * 2 + 64);
  ck_assert_ptr_nonnull(text);
  size_t n = (size_t)sprintf(text, "func.func @f() attributes {x = ");
  for (size_t i = 0; i < depth; i++) text[n++] = '[';
  for (size_t i = 0; i < depth; i++) text[n++] = ']';
  n += (size_t)sprintf(text + n, "} {\n return\n}\n");
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, n, "deep.mlir", 1, &m, &err), SP_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "SP_MAX_NESTING"));
  /* Deeply nested regions too. */
  n = (size_t)sprintf(text, "func.func @f() {\n");
  for (size_t i = 0; i < 2000; i++) n += (size_t)sprintf(text + n, "\"x.y\"() ({\n");
  ck_assert_int_eq(sp_mlir_parse(text, n, "deep.mlir", 1, &m, &err), SP_ELIMIT);
  free(text);
}
END_TEST

START_TEST(every_prefix_of_a_valid_module_fails_cleanly) {
  const char *text =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {\"b\":(1)2}p0], replicated={\"a\"}>}) -> tensor<8x8xf32> {\n"
      "  %c = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>\n"
      "  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "  return %0 : tensor<8x8xf32>\n"
      "}\n";
  size_t len = strlen(text);
  for (size_t cut = 0; cut < len; cut++) {
    sp_module *m = NULL;
    sp_err err;
    int rc = sp_mlir_parse(text, cut, "p.mlir", 1, &m, &err);
    if (rc == SP_OK) {
      sp_module_free(m);
      continue; /* a prefix that happens to be complete (e.g. just the mesh) */
    }
    ck_assert_msg(strncmp(err.msg, "p.mlir:", 7) == 0, "cut %zu: '%s'", cut, err.msg);
  }
}
END_TEST

START_TEST(project_example_mlp_parses) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/mlp.mlir", SP_SOURCE_DIR);
  size_t len;
  char *text = sp_test_read_file(path, &len);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  sp_module *m = NULL;
  sp_err err;
  ck_assert_msg(sp_mlir_parse(text, len, path, 1, &m, &err) == SP_OK, "%s", err.msg);
  sp_op *f = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(sp_module_lookup_mesh(m, "mesh"));
  ck_assert_ptr_nonnull(f->regions[0].blocks[0]->args[0]->sharding);
  sp_module_free(m);
  free(text);
}
END_TEST

/* A control character anywhere (inside an 8-byte word, at its edges, in the tail) is found
 * at its place; tabs, newlines and carriage returns, and bytes >= 0x80, are not control. */
START_TEST(a_control_character_is_found_wherever_it_is) {
  const char *base = "func.func @f() {\n\treturn\r\n}\n// caf\xc3\xa9 \x7f\n";
  size_t n = strlen(base);
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(base, n, "t.mlir", 1, &m, &err), SP_OK);
  sp_module_free(m);
  char *text = malloc(n + 1);
  for (size_t at = 0; at < n; at++) {
    if (base[at] == '\n' || base[at] == '\t' || base[at] == '\r') continue;
    memcpy(text, base, n + 1);
    text[at] = '\x01';
    int line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
      col++;
      if (base[i] == '\n') line++, col = 1;
    }
    char want[96];
    snprintf(want, sizeof want, "t.mlir:%d:%d: unexpected character", line, col);
    ck_assert_int_eq(sp_mlir_parse(text, n, "t.mlir", 1, &m, &err), SP_EINVAL);
    ck_assert_str_eq(err.msg, want);
  }
  free(text);
}
END_TEST

/* The engine's reader (the daemon's) takes any dialect; the mlir-opt modes take the registered
 * ones, and with unregistered dialects allowed their generic form only. */
START_TEST(dialect_modes_accept_what_mlir_opt_would) {
  const char *custom =
      "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = foo.bar %a {k = #foo.kind<2>} : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n";
  const char *registered =
      "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = arith.constant dense<1.0> : tensor<4xf32>\n"
      "  %0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>\n"
      "  %1 = \"mhlo.copy\"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n";
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(custom, strlen(custom), "t.mlir", 1, &m, &err), SP_OK);
  ck_assert_str_eq(nth_op(first_func(m), 0)->name, "foo.bar");
  sp_module_free(m);
  for (int d = SP_MLIR_REGISTERED_DIALECTS; d <= SP_MLIR_UNREGISTERED_GENERIC; d++) {
    ck_assert_int_eq(sp_mlir_parse_dialects(custom, strlen(custom), "t.mlir", 1, d, &m, &err), SP_EINVAL);
    ck_assert_str_eq(err.msg, "t.mlir:2:8: Dialect `foo' not found for custom op 'foo.bar' ");
    ck_assert_int_eq(sp_mlir_parse_dialects(registered, strlen(registered), "t.mlir", 1, d, &m, &err), SP_OK);
    sp_module_free(m);
  }
}
END_TEST

static Suite *reader_suite(void) {
  Suite *s = suite_create("mlir_reader");
  TCase *tc = tcase_create("structure");
  tcase_add_test(tc, func_arg_and_result_shardings_land_on_values_and_func_info);
  tcase_add_test(tc, op_shardings_and_inline_sdy_shardings_land_on_results);
  tcase_add_test(tc, pretty_and_generic_dot_general_give_the_same_structured_attrs);
  tcase_add_test(tc, shape_op_attributes_are_structured_from_pretty_and_generic_forms);
  tcase_add_test(tc, gather_scatter_conv_and_window_attributes_are_decoded);
  tcase_add_test(tc, sharding_rule_factors_kinds_and_custom_flag_are_parsed);
  tcase_add_test(tc, meshes_drop_iota_device_ids_but_keep_maximal_and_permuted_ones);
  tcase_add_test(tc, regions_multi_results_while_case_manual_computation_are_wired);
  tcase_add_test(tc, reduce_applies_form_builds_its_body);
  tcase_add_test(tc, implicit_and_explicit_modules_comments_locations_and_aliases);
  tcase_add_test(tc, types_tokens_tuples_dynamic_and_unranked_are_parsed);
  tcase_add_test(tc, project_example_mlp_parses);
  suite_add_tcase(s, tc);
  tc = tcase_create("split");
  tcase_add_test(tc, split_reports_chunks_with_their_first_lines);
  tcase_add_test(tc, chunk_errors_point_into_the_original_file);
  suite_add_tcase(s, tc);
  tc = tcase_create("malformed");
  tcase_add_loop_test(tc, malformed_input_is_rejected_with_message_and_position, 0,
                      (int)(sizeof bad_cases / sizeof bad_cases[0]));
  tcase_add_test(tc, deep_nesting_is_a_limit_error_not_a_crash);
  tcase_add_test(tc, every_prefix_of_a_valid_module_fails_cleanly);
  tcase_add_test(tc, dialect_modes_accept_what_mlir_opt_would);
  tcase_add_test(tc, a_control_character_is_found_wherever_it_is);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(reader_suite()); }
