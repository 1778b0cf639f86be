/*
 * test_propagate.c - the worklist fixed point over a module: shardings travel through chains
 * of ops in both directions, main-function results are synced with the returned values,
 * propagation barriers let shardings through one way only, the aggressive strategy resolves a
 * conflict the basic one leaves, rules are attached and dropped, and bad modules are errors.
 *
 * Modules are built in code (the same programs as in Shardy's basic_propagation.mlir where
 * noted); shardings are compared in their printed form. The "data_flow" and "module" cases
 * parse MLIR text instead and check the printed module: data-flow edges of while, case and
 * manual computations, func data-flow edges, dead pure op erasure, sharding groups, sharding
 * constraints, and the JAX MLP example of shared/examples.
 */
#include <check.h>
#include <string.h>

#include "factor_fixtures.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/op_attrs.h"
#include "mlir/mlir.h"
#include "propagation/prop_passes.h"
#include "propagation/propagate.h"
#include "test_support.h"

static sp_module *M;
static void setup(void) { M = sp_module_new("t.mlir"); }
static void teardown(void) { sp_module_free(M); }

static void set_attr(sp_op *op, sp_attr at) {
  ck_assert_int_eq(sp_attrs_set(M->arena, &op->attrs, &at), SP_OK);
}

static sp_type *tensor(int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return sp_type_tensor(M->arena, 2, dims, "f32");
}

static sp_type *tensor1(int64_t d0) { return sp_type_tensor(M->arena, 1, &d0, "f32"); }

static void add_mesh(const char *name, const char *spec) {
  sp_op *op = sp_op_create(M->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  set_attr(op, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = name});
  set_attr(op, (sp_attr){.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = fx_mesh(M->arena, spec)});
  sp_block_append(sp_module_body(M), op);
}

/* func.func @name(args) -> (results); returns its entry block. */
static sp_block *add_func(const char *name, int nargs, sp_type **args, int nres, sp_type **res,
                          sp_op **fn_out) {
  sp_op *fn = sp_op_create(M->arena, "func.func", 0, NULL, 0, NULL, 1);
  set_attr(fn, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = name});
  fn->func = sp_arena_calloc(M->arena, 1, sizeof *fn->func);
  fn->func->nargs = nargs;
  fn->func->arg_types = args;
  fn->func->nresults = nres;
  fn->func->result_types = res;
  fn->func->result_shardings = sp_arena_calloc(M->arena, (size_t)nres + 1, sizeof(sp_sharding *));
  sp_block_append(sp_module_body(M), fn);
  sp_block *b = sp_region_add_block(M->arena, &fn->regions[0]);
  for (int i = 0; i < nargs; i++) sp_block_add_arg(M->arena, b, args[i]);
  if (fn_out) *fn_out = fn;
  return b;
}

static sp_op *add_op(sp_block *b, const char *name, int nops, sp_value **ops, sp_type *res) {
  sp_op *op = sp_op_create(M->arena, name, nops, ops, res ? 1 : 0, res ? &res : NULL, 0);
  op->loc = (sp_loc){7, 3};
  sp_block_append(b, op);
  return op;
}

static sp_ints ints1(int64_t v) {
  int64_t *p = sp_arena_alloc(M->arena, sizeof *p);
  *p = v;
  return (sp_ints){1, p};
}

/* dot_general contracting lhs dim 1 with rhs dim 0. */
static sp_op *add_matmul(sp_block *b, sp_value *lhs, sp_value *rhs, sp_type *res) {
  sp_value *ops[] = {lhs, rhs};
  sp_op *op = add_op(b, "stablehlo.dot_general", 2, ops, res);
  set_attr(op, (sp_attr){.name = "lhs_contracting_dimensions", .kind = SP_ATTR_INTS,
                         .u.ints = ints1(1)});
  set_attr(op, (sp_attr){.name = "rhs_contracting_dimensions", .kind = SP_ATTR_INTS,
                         .u.ints = ints1(0)});
  return op;
}

static sp_sharding *sh(const char *dims) { return fx_sharding(M->arena, dims, NULL); }

static sp_propagate_stats run(sp_prop_strategy strategy, sp_conflict_log *log) {
  sp_propagate_options o = {.strategy = strategy, .conflicts = log};
  sp_propagate_stats st;
  sp_err err;
  int rc = sp_propagate_module(M, &o, &st, &err);
  ck_assert_msg(rc == SP_OK, "propagation failed: %s", err.msg);
  return st;
}

/* ------------------------------------------------------------------ fixed point */

START_TEST(simple_chain_propagates_through_add_and_dot_to_the_function_result) {
  /* basic_propagation.mlir @simple */
  add_mesh("mesh", "a=2, b=2");
  sp_type *args[] = {tensor(8, 8), tensor(8, 8), tensor(8, 16)}, *res[] = {tensor(8, 16)};
  sp_op *fn;
  sp_block *b = add_func("simple", 3, args, 1, res, &fn);
  b->args[0]->sharding = sh("{a}, {b}");
  sp_value *ops[] = {b->args[0], b->args[1]};
  sp_op *add = add_op(b, "stablehlo.add", 2, ops, tensor(8, 8));
  sp_op *dot = add_matmul(b, &add->results[0], b->args[2], tensor(8, 16));
  sp_value *ret[] = {&dot->results[0]};
  add_op(b, "func.return", 1, ret, NULL);

  sp_propagate_stats st = run(SP_PROP_BASIC, NULL);
  ck_assert_str_eq(fx_str(b->args[0]->sharding), "<@mesh, [{\"a\"}, {\"b\"}]>");
  ck_assert_str_eq(fx_str(b->args[1]->sharding), "<@mesh, [{\"a\", ?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(b->args[2]->sharding), "<@mesh, [{\"b\", ?}, {?}]>");
  ck_assert_str_eq(fx_str(add->results[0].sharding), "<@mesh, [{\"a\", ?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(dot->results[0].sharding), "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_str_eq(fx_str(fn->func->result_shardings[0]), "<@mesh, [{\"a\", ?}, {?}]>");
  ck_assert_int_ge(st.visits, 4);
  ck_assert_int_eq(st.updates, 5);
}
END_TEST

START_TEST(a_change_revisits_the_defining_op_so_shardings_flow_backwards) {
  /* %0 = negate %arg0; %1 = add %0, %arg1 with only %arg1 sharded: the add is visited after
   * the negate, and its update of %0 must send the negate round again to reach %arg0. */
  add_mesh("mesh", "a=2");
  sp_type *args[] = {tensor1(8), tensor1(8)}, *res[] = {tensor1(8)};
  sp_block *b = add_func("main", 2, args, 1, res, NULL);
  b->args[1]->sharding = sh("{a}");
  sp_op *neg = add_op(b, "stablehlo.negate", 1, &b->args[0], tensor1(8));
  sp_value *ops[] = {&neg->results[0], b->args[1]};
  sp_op *add = add_op(b, "stablehlo.add", 2, ops, tensor1(8));
  sp_value *ret[] = {&add->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  run(SP_PROP_BASIC, NULL);
  ck_assert_str_eq(fx_str(neg->results[0].sharding), "<@mesh, [{\"a\", ?}]>");
  ck_assert_str_eq(fx_str(b->args[0]->sharding), "<@mesh, [{\"a\", ?}]>");
}
END_TEST

START_TEST(main_result_sharding_is_pushed_onto_the_returned_value_and_beyond) {
  add_mesh("mesh", "a=2, b=2");
  sp_type *args[] = {tensor(8, 8)}, *res[] = {tensor(8, 8)};
  sp_op *fn;
  sp_block *b = add_func("main", 1, args, 1, res, &fn);
  fn->func->result_shardings[0] = sh("{a}, {b, ?}");
  sp_op *abs = add_op(b, "stablehlo.abs", 1, &b->args[0], tensor(8, 8));
  sp_value *ret[] = {&abs->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  run(SP_PROP_BASIC, NULL);
  ck_assert_str_eq(fx_str(abs->results[0].sharding), "<@mesh, [{\"a\", ?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(b->args[0]->sharding), "<@mesh, [{\"a\", ?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(fn->func->result_shardings[0]), "<@mesh, [{\"a\"}, {\"b\", ?}]>");
}
END_TEST

START_TEST(propagation_barrier_lets_shardings_through_only_in_its_allowed_direction) {
  add_mesh("mesh", "a=2, b=2");
  sp_type *args[] = {tensor(8, 8)}, *res[] = {tensor(8, 8)};
  sp_op *fn;
  sp_block *b = add_func("main", 1, args, 1, res, &fn);
  b->args[0]->sharding = sh("{a}, {?}");          /* wants to go forward: blocked */
  fn->func->result_shardings[0] = sh("{?}, {b}"); /* goes backward: allowed */
  sp_op *bar = add_op(b, "sdy.propagation_barrier", 1, &b->args[0], tensor(8, 8));
  set_attr(bar, (sp_attr){.name = "allowed_direction", .kind = SP_ATTR_ENUM, .u.s = "BACKWARD"});
  sp_value *through = &bar->results[0];
  sp_op *abs = add_op(b, "stablehlo.abs", 1, &through, tensor(8, 8));
  sp_value *ret[] = {&abs->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  run(SP_PROP_BASIC, NULL);
  /* "a" did not cross forward; "b" crossed backward into the argument's open dim. */
  ck_assert_str_eq(fx_str(bar->results[0].sharding), "<@mesh, [{?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(abs->results[0].sharding), "<@mesh, [{?}, {\"b\", ?}]>");
  ck_assert_str_eq(fx_str(b->args[0]->sharding), "<@mesh, [{\"a\"}, {\"b\", ?}]>");
}
END_TEST

/* C = dot(A, B) with "a" on A's rows and on B's columns. */
static sp_op *build_dot_conflict(void) {
  add_mesh("mesh", "a=2");
  sp_type *args[] = {tensor(8, 16), tensor(16, 32)}, *res[] = {tensor(8, 32)};
  sp_block *b = add_func("main", 2, args, 1, res, NULL);
  b->args[0]->sharding = sh("{a}, {}");
  b->args[1]->sharding = sh("{}, {a}");
  sp_op *dot = add_matmul(b, b->args[0], b->args[1], tensor(8, 32));
  sp_value *ret[] = {&dot->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  return dot;
}

START_TEST(basic_module_run_leaves_the_dot_conflict_and_records_it) {
  sp_op *dot = build_dot_conflict();
  sp_conflict_log log;
  sp_conflict_log_init(&log, M->arena);
  run(SP_PROP_BASIC, &log);
  ck_assert_str_eq(fx_str(dot->results[0].sharding), "none");
  ck_assert_int_eq(log.n, 2);
  /* The records name the op by its pre-order number (mesh 0, func 1, dot 2). */
  ck_assert_int_eq(log.v[0].op, 2);
  ck_assert_str_eq(log.v[0].op_name, "stablehlo.dot_general");
}
END_TEST

START_TEST(aggressive_module_run_resolves_the_dot_conflict) {
  sp_op *dot = build_dot_conflict();
  sp_conflict_log log;
  sp_conflict_log_init(&log, M->arena);
  run(SP_PROP_AGGRESSIVE, &log);
  ck_assert_str_eq(fx_str(dot->results[0].sharding), "<@mesh, [{?}, {\"a\", ?}]>");
  ck_assert_int_eq(log.n, 1);
  ck_assert_int_eq(log.v[0].op, 2);
  ck_assert_int_eq(log.v[0].resolution, SP_CONFLICT_NOTHING_MOVED);
}
END_TEST

START_TEST(multi_result_op_gets_open_placeholders_for_results_left_unsharded) {
  /* A custom rule maps the operand to result 0 only. */
  add_mesh("mesh", "a=2");
  sp_type *args[] = {tensor1(8)}, *res[] = {tensor1(8)};
  sp_block *b = add_func("main", 1, args, 1, res, NULL);
  b->args[0]->sharding = sh("{a}");
  sp_type *rtypes[] = {tensor1(8), tensor1(4)};
  sp_op *op = sp_op_create(M->arena, "stablehlo.custom_call", 1, &b->args[0], 2, rtypes, 0);
  sp_block_append(b, op);
  sp_rule *rule = fx_rule(M->arena, "([i])->([i], [j])", (int64_t[]){8, 4});
  rule->custom = true;
  set_attr(op, (sp_attr){.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = rule});
  sp_value *ret[] = {&op->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  run(SP_PROP_BASIC, NULL);
  ck_assert_str_eq(fx_str(op->results[0].sharding), "<@mesh, [{\"a\", ?}]>");
  ck_assert_str_eq(fx_str(op->results[1].sharding), "<@mesh, [{?}]>");
  /* A custom rule survives the pass. */
  ck_assert_ptr_eq(sp_op_rule(op), rule);
}
END_TEST

START_TEST(rules_are_attached_to_visited_ops_and_dropped_unless_kept) {
  add_mesh("mesh", "a=2");
  sp_type *args[] = {tensor1(8)}, *res[] = {tensor1(8)};
  sp_block *b = add_func("main", 1, args, 1, res, NULL);
  b->args[0]->sharding = sh("{a}");
  sp_op *abs = add_op(b, "stablehlo.abs", 1, &b->args[0], tensor1(8));
  sp_value *ret[] = {&abs->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  sp_propagate_options o = {.strategy = SP_PROP_BASIC, .keep_sharding_rules = true};
  ck_assert_int_eq(sp_propagate_module(M, &o, NULL, NULL), SP_OK);
  ck_assert_ptr_nonnull(sp_op_rule(abs));
  ck_assert_int_eq(sp_op_rule(abs)->nfactors, 1);
  sp_propagate_drop_rules(M);
  ck_assert_ptr_null(sp_op_rule(abs));
  o.keep_sharding_rules = false;
  ck_assert_int_eq(sp_propagate_module(M, &o, NULL, NULL), SP_OK);
  ck_assert_ptr_null(sp_op_rule(abs));
}
END_TEST

/* A direction callback that only lets factor 0 move (as an op-priority round would). */
static void only_first_factor(const sp_op *op, const sp_rule *rule, sp_prop_direction *out,
                              void *ctx) {
  (void)op;
  (*(int *)ctx)++;
  for (int f = 0; f < rule->nfactors; f++) out[f] = f == 0 ? SP_DIR_BOTH : SP_DIR_NONE;
}

START_TEST(direction_callback_limits_which_factors_move) {
  add_mesh("mesh", "a=2, b=2");
  sp_type *args[] = {tensor(8, 8)}, *res[] = {tensor(8, 8)};
  sp_block *b = add_func("main", 1, args, 1, res, NULL);
  b->args[0]->sharding = sh("{a}, {b}");
  sp_op *abs = add_op(b, "stablehlo.abs", 1, &b->args[0], tensor(8, 8));
  sp_value *ret[] = {&abs->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  int calls = 0;
  sp_propagate_options o = {.strategy = SP_PROP_AGGRESSIVE, .direction = only_first_factor,
                            .direction_ctx = &calls};
  ck_assert_int_eq(sp_propagate_module(M, &o, NULL, NULL), SP_OK);
  ck_assert_int_ge(calls, 1);
  ck_assert_str_eq(fx_str(abs->results[0].sharding), "<@mesh, [{\"a\", ?}, {?}]>");
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(module_without_a_main_function_is_an_error) {
  sp_type *args[] = {tensor1(8)};
  add_func("f", 1, args, 0, NULL, NULL);
  add_func("g", 1, args, 0, NULL, NULL);
  sp_err err;
  ck_assert_int_eq(sp_propagate_module(M, NULL, NULL, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg,
                   "t.mlir: no main function: the module has 2 functions and none is named @main");
}
END_TEST

START_TEST(dynamic_result_shape_is_an_error) {
  sp_type *args[] = {tensor1(8)};
  sp_block *b = add_func("main", 1, args, 0, NULL, NULL);
  int64_t dyn = SP_DYN_DIM;
  add_op(b, "stablehlo.abs", 1, &b->args[0], sp_type_tensor(M->arena, 1, &dyn, "f32"));
  sp_err err;
  ck_assert_int_eq(sp_propagate_module(M, NULL, NULL, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "t.mlir:7:3: Shardy propagation only supports ranked tensors with a "
                            "static shape (result 0 of 'stablehlo.abs')");
}
END_TEST

START_TEST(sharding_on_an_unknown_mesh_is_an_error_naming_the_op) {
  sp_type *args[] = {tensor1(8)}, *res[] = {tensor1(8)};
  sp_block *b = add_func("main", 1, args, 1, res, NULL);
  b->args[0]->sharding = sh("{a}");
  sp_op *abs = add_op(b, "stablehlo.abs", 1, &b->args[0], tensor1(8));
  sp_value *ret[] = {&abs->results[0]};
  add_op(b, "func.return", 1, ret, NULL);
  sp_err err;
  ck_assert_int_eq(sp_propagate_module(M, NULL, NULL, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "t.mlir:7:3: op 'stablehlo.abs': unknown mesh @mesh");
}
END_TEST


/* ------------------------------------------------------------------ modules from MLIR text */

static sp_module *P;          /* parsed module of the text cases */
static sp_diag_list D;        /* its diagnostics */
static sp_strbuf OUT;         /* its printed form after the pass */

static void text_setup(void) {
  P = NULL;
  sp_diag_list_init(&D);
  OUT = (sp_strbuf)SP_STRBUF_INIT;
}

static void text_teardown(void) {
  sp_module_free(P);
  sp_diag_list_free(&D);
  sp_strbuf_free(&OUT);
}

/* Parses `text`, runs -sdy-basic-propagate with `options` and prints the result into OUT. */
static void run_text(const char *text, const char *options) {
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &P, &err);
  ck_assert_msg(rc == SP_OK, "parse: %s", err.msg);
  P->diags = &D;
  rc = sp_prop_pass_basic(P, options, &err);
  ck_assert_msg(rc == SP_OK, "propagation: %s", err.msg);
  ck_assert_int_eq(sp_mlir_print(P, &OUT, &err), SP_OK);
}

static void expect_in_output(const char *needle) {
  ck_assert_msg(strstr(sp_strbuf_str(&OUT), needle) != NULL, "missing\n  %s\nin\n%s", needle,
                sp_strbuf_str(&OUT));
}

static void expect_not_in_output(const char *needle) {
  ck_assert_msg(strstr(sp_strbuf_str(&OUT), needle) == NULL, "unexpected\n  %s\nin\n%s", needle,
                sp_strbuf_str(&OUT));
}

START_TEST(while_body_argument_reads_and_writes_the_sharding_of_the_result_edge) {
  /* A sharding set inside the body (on an op behind an opaque custom call) leaves through the
   * body argument, whose sharding is the edge's, to the while operand and the function arg. */
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
           "func.func @main(%arg0: tensor<32x96xf32>) -> tensor<32x96xf32> {\n"
           "  %0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %1 = stablehlo.constant dense<1> : tensor<i32>\n"
           "  %2 = stablehlo.constant dense<32> : tensor<i32>\n"
           "  %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<32x96xf32>, tensor<i32>\n"
           "    cond {\n"
           "    %6 = stablehlo.compare  LT, %iterArg_2, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %6 : tensor<i1>\n"
           "  } do {\n"
           "    %6 = stablehlo.add %iterArg_2, %1 : tensor<i32>\n"
           "    %7 = stablehlo.add %iterArg, %iterArg {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\"}, {\"b\"}]>]>} : tensor<32x96xf32>\n"
           "    %8 = stablehlo.custom_call @sdy_testonly(%7) : (tensor<32x96xf32>) -> tensor<32x96xf32>\n"
           "    stablehlo.return %8, %6 : tensor<32x96xf32>, tensor<i32>\n"
           "  }\n"
           "  %4 = sdy.data_flow_edge %3#0 : tensor<32x96xf32>\n"
           "  %5 = sdy.data_flow_edge %3#1 : tensor<i32>\n"
           "  return %4 : tensor<32x96xf32>\n"
           "}\n",
           NULL);
  expect_in_output("%arg0: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}, {\"b\", ?}]>}");
  expect_in_output("sdy.data_flow_edge %0#0 sharding=<@m, [{\"a\", ?}, {\"b\", ?}]> : tensor<32x96xf32>");
  expect_in_output("sdy.data_flow_edge %0#1 : tensor<i32>");
  /* The while op itself stays without a sharding: the edge holds it until sinking. */
  expect_not_in_output("attributes {sdy.sharding");
}
END_TEST

START_TEST(case_edge_takes_only_the_axes_all_branches_agree_on) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
           "func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@m, [{\"a\", \"b\"}]>}, %arg2: tensor<8xi64> {sdy.sharding = #sdy.sharding<@m, [{\"a\", \"c\"}]>}) -> tensor<8xi64> {\n"
           "  %0 = \"stablehlo.case\"(%arg0) ({\n"
           "    stablehlo.return %arg1 : tensor<8xi64>\n"
           "  }, {\n"
           "    stablehlo.return %arg2 : tensor<8xi64>\n"
           "  }) : (tensor<i32>) -> tensor<8xi64>\n"
           "  %1 = sdy.data_flow_edge %0 : tensor<8xi64>\n"
           "  return %1 : tensor<8xi64>\n"
           "}\n",
           NULL);
  expect_in_output("sdy.data_flow_edge %0 sharding=<@m, [{\"a\", ?}]> : tensor<8xi64>");
  expect_in_output("-> (tensor<8xi64> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}]>})");
}
END_TEST

START_TEST(manual_computation_body_edge_is_local_and_the_operand_sees_the_manual_prefix) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
           "func.func @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"c\", ?}]>}) -> tensor<32x32xf32> {\n"
           "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{\"b\", ?}, {?}]>] out_shardings=[<@m, [{\"b\", ?}, {?}]>] manual_axes={\"b\"} (%arg1: tensor<16x32xf32>) {\n"
           "    %2 = sdy.data_flow_edge %arg1 sharding=<@m, [{?}, {?}]> : tensor<16x32xf32>\n"
           "    %3 = stablehlo.add %2, %2 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>} : tensor<16x32xf32>\n"
           "    %4 = stablehlo.custom_call @sdy_testonly(%3) : (tensor<16x32xf32>) -> tensor<16x32xf32>\n"
           "    sdy.return %4 : tensor<16x32xf32>\n"
           "  } : (tensor<32x32xf32>) -> tensor<32x32xf32>\n"
           "  %1 = sdy.data_flow_edge %0 sharding=<@m, [{\"b\", ?}, {?}]> : tensor<32x32xf32>\n"
           "  return %1 : tensor<32x32xf32>\n"
           "}\n",
           NULL);
  /* Global view outside: the manual axis "b" in front of what the body propagated. */
  expect_in_output("%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\", \"a\", ?}, {\"c\", ?}]>}");
  /* Local view inside: no manual axis. */
  expect_in_output("sdy.data_flow_edge %arg1 sharding=<@m, [{\"a\", ?}, {\"c\", ?}]> : tensor<16x32xf32>");
  /* The in_shardings themselves are left for sinking. */
  expect_in_output("in_shardings=[<@m, [{\"b\", ?}, {?}]>]");
}
END_TEST

START_TEST(func_data_flow_edges_carry_a_sharding_into_a_callee_and_back_out) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
           "func.func private @callee(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {\n"
           "  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x2xi32>\n"
           "  %1 = stablehlo.negate %0 : tensor<8x2xi32>\n"
           "  return %1 : tensor<8x2xi32>\n"
           "}\n"
           "func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {}]>}) -> tensor<8x2xi32> {\n"
           "  %0 = call @callee(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>\n"
           "  %1 = sdy.func_data_flow_edge %0 : tensor<8x2xi32>\n"
           "  return %1 : tensor<8x2xi32>\n"
           "}\n",
           NULL);
  expect_in_output("%0 = sdy.func_data_flow_edge %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>}");
  expect_in_output("stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>}");
  expect_in_output("%1 = sdy.func_data_flow_edge %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>}");
  expect_in_output("-> (tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}, {?}]>})");
}
END_TEST

START_TEST(dead_pure_ops_are_erased_but_unused_edges_and_custom_calls_stay) {
  run_text("sdy.mesh @m = <[\"a\"=2]>\n"
           "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<8xf32> {\n"
           "  %c = stablehlo.constant dense<1.0> : tensor<8xf32>\n"
           "  %0 = stablehlo.multiply %arg0, %c : tensor<8xf32>\n"
           "  %1 = stablehlo.custom_call @sdy_testonly(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
           "  %2 = stablehlo.abs %arg0 : tensor<8xf32>\n"
           "  return %2 : tensor<8xf32>\n"
           "}\n",
           NULL);
  /* The multiply is dead; erasing it leaves the constant dead too. */
  expect_not_in_output("stablehlo.multiply");
  expect_not_in_output("stablehlo.constant");
  expect_in_output("stablehlo.custom_call @sdy_testonly(%arg0)");
  expect_in_output("stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}]>]>}");
}
END_TEST

START_TEST(sharding_group_members_take_every_update_of_one_member) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
           "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
           "  %0 = stablehlo.abs %arg0 : tensor<8x8xf32>\n"
           "  %1 = stablehlo.negate %arg1 : tensor<8x8xf32>\n"
           "  sdy.sharding_group %0 group_id=0 : tensor<8x8xf32>\n"
           "  sdy.sharding_group %1 group_id=0 : tensor<8x8xf32>\n"
           "  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>\n"
           "}\n",
           NULL);
  /* %1 is in %0's group: it gets %0's sharding verbatim and passes it back to %arg1. */
  expect_in_output("%1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"a\", ?}, {?}]>]>}");
  expect_in_output("%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}, {?}]>}");
  ck_assert_int_eq(D.n, 0);
}
END_TEST

START_TEST(sharding_group_with_disagreeing_members_warns_and_gets_open_constraints) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
           "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
           "  sdy.sharding_group %arg0 group_id=7 : tensor<8x8xf32>\n"
           "  sdy.sharding_group %arg1 group_id=7 : tensor<8x8xf32>\n"
           "  return %arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>\n"
           "}\n",
           NULL);
  ck_assert_int_eq(D.n, 1);
  ck_assert_int_eq(D.v[0].severity, SP_DIAG_WARNING);
  ck_assert_int_eq(D.v[0].loc.line, 3);
  ck_assert_ptr_nonnull(strstr(D.v[0].msg, "groupID: 7 do not match"));
  /* An open constraint on each member (block arguments: at the top of the body, so the last
   * member's comes first); the group ops now name the constraints, so propagation syncs them,
   * not the closed arguments: %arg1's "b" reached both constraints first. */
  expect_in_output("%0 = sdy.sharding_constraint %arg1 <@m, [{\"b\", ?}, {?}]>");
  expect_in_output("%1 = sdy.sharding_constraint %arg0 <@m, [{\"b\", ?}, {?}]>");
  expect_in_output("sdy.sharding_group %1 group_id=7");
  expect_in_output("sdy.sharding_group %0 group_id=7");
  expect_in_output("%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {}]>}");
  /* The constraints take over every use of the members (Shardy's import does the same): the
   * returned values are the constraints, so both results get "b". */
  expect_in_output("return %1, %0 : tensor<8x8xf32>, tensor<8x8xf32>");
  expect_in_output("-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\", ?}, {?}]>}, "
                   "tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\", ?}, {?}]>})");
}
END_TEST

START_TEST(sharding_constraint_keeps_its_closed_dims_and_does_not_close_its_input) {
  run_text("sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
           "func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"b\"}, {\"a\"}]>}) -> tensor<8x8xf32> {\n"
           "  %0 = sdy.sharding_constraint %arg0 <@m, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
           "  %1 = stablehlo.add %0, %arg1 : tensor<8x8xf32>\n"
           "  return %1 : tensor<8x8xf32>\n"
           "}\n",
           NULL);
  /* Dim 0 of the constraint is closed on "a": "b" from %arg1 cannot enter; dim 1 is open. */
  expect_in_output("sdy.sharding_constraint %arg0 <@m, [{\"a\"}, {?}]>");
  expect_in_output("%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\", ?}, {?}]>}");
}
END_TEST

START_TEST(jax_mlp_w2_gets_model_on_its_contracting_dim_under_basic_propagation) {
  sp_test_require_shared("examples/jax_mlp.mlir");
  char *text = sp_test_read_file(sp_test_shared_path("examples/jax_mlp.mlir"), NULL);
  ck_assert_ptr_nonnull(text);
  run_text(text, NULL);
  free(text);
  expect_in_output("%arg2: tensor<256x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\", ?}, {?}]>}");
}
END_TEST

static Suite *propagate_suite(void) {
  Suite *s = suite_create("propagate");
  TCase *tc = tcase_create("fixed_point");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, simple_chain_propagates_through_add_and_dot_to_the_function_result);
  tcase_add_test(tc, a_change_revisits_the_defining_op_so_shardings_flow_backwards);
  tcase_add_test(tc, main_result_sharding_is_pushed_onto_the_returned_value_and_beyond);
  tcase_add_test(tc, propagation_barrier_lets_shardings_through_only_in_its_allowed_direction);
  tcase_add_test(tc, basic_module_run_leaves_the_dot_conflict_and_records_it);
  tcase_add_test(tc, aggressive_module_run_resolves_the_dot_conflict);
  tcase_add_test(tc, multi_result_op_gets_open_placeholders_for_results_left_unsharded);
  tcase_add_test(tc, rules_are_attached_to_visited_ops_and_dropped_unless_kept);
  tcase_add_test(tc, direction_callback_limits_which_factors_move);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, module_without_a_main_function_is_an_error);
  tcase_add_test(tc, dynamic_result_shape_is_an_error);
  tcase_add_test(tc, sharding_on_an_unknown_mesh_is_an_error_naming_the_op);
  suite_add_tcase(s, tc);
  tc = tcase_create("data_flow");
  tcase_add_checked_fixture(tc, text_setup, text_teardown);
  tcase_add_test(tc, while_body_argument_reads_and_writes_the_sharding_of_the_result_edge);
  tcase_add_test(tc, case_edge_takes_only_the_axes_all_branches_agree_on);
  tcase_add_test(tc, manual_computation_body_edge_is_local_and_the_operand_sees_the_manual_prefix);
  tcase_add_test(tc, func_data_flow_edges_carry_a_sharding_into_a_callee_and_back_out);
  suite_add_tcase(s, tc);
  tc = tcase_create("module");
  tcase_add_checked_fixture(tc, text_setup, text_teardown);
  tcase_add_test(tc, dead_pure_ops_are_erased_but_unused_edges_and_custom_calls_stay);
  tcase_add_test(tc, sharding_group_members_take_every_update_of_one_member);
  tcase_add_test(tc, sharding_group_with_disagreeing_members_warns_and_gets_open_constraints);
  tcase_add_test(tc, sharding_constraint_keeps_its_closed_dims_and_does_not_close_its_input);
  tcase_add_test(tc, jax_mlp_w2_gets_model_on_its_contracting_dim_under_basic_propagation);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(propagate_suite()); }
