/*
 * test_ir.c - the IR core: arena, use lists, op insertion and erasure, attributes, types.
 */
#include <check.h>
#include <limits.h>
#include <signal.h>
#include <string.h>

#include "ir/ir.h"
#include "test_support.h"

static sp_type *t_f32(sp_arena *a, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return sp_type_tensor(a, 2, dims, "f32");
}

START_TEST(arena_serves_large_and_small_requests) {
  sp_arena *a = sp_arena_new(1024);
  char *big = sp_arena_alloc(a, 10000);
  char *small = sp_arena_alloc(a, 10);
  ck_assert_ptr_nonnull(big);
  ck_assert_ptr_nonnull(small);
  memset(big, 1, 10000);
  ck_assert_uint_eq(((uintptr_t)small) % 16, 0);
  ck_assert_str_eq(sp_arena_printf(a, "%s-%d", "x", 3), "x-3");
  ck_assert_uint_ge(sp_arena_bytes(a), 10000);
  sp_arena_free(a);
}
END_TEST

START_TEST(arena_grow_doubles_only_when_full_and_keeps_the_elements) {
  sp_arena *a = sp_arena_new(0);
  int *v = NULL, cap = 0;
  for (int i = 0; i < 100; i++) {
    ck_assert_int_eq(sp_arena_grow(a, (void **)&v, &cap, i, sizeof *v), SP_OK);
    ck_assert_int_gt(cap, i);
    v[i] = i * 7;
  }
  ck_assert_int_eq(cap, 128); /* 8, 16, 32, 64, 128 */
  int *before = v;
  ck_assert_int_eq(sp_arena_grow(a, (void **)&v, &cap, 100, sizeof *v), SP_OK);
  ck_assert_ptr_eq(v, before); /* room left: nothing moves */
  for (int i = 0; i < 100; i++) ck_assert_int_eq(v[i], i * 7);
  sp_arena_free(a);
}
END_TEST

START_TEST(arena_grow_from_starts_at_its_first_capacity_inline_or_far_past_the_end) {
  sp_arena *a = sp_arena_new(0);
  int *v = NULL, cap = 0;
  ck_assert_int_eq(sp_arena_grow_from(a, (void **)&v, &cap, 0, sizeof *v, 1), SP_OK);
  ck_assert_int_eq(cap, 1);
  v[0] = 5;
  ck_assert_int_eq(sp_arena_grow_from(a, (void **)&v, &cap, 1, sizeof *v, 1), SP_OK);
  ck_assert_int_eq(cap, 2);
  ck_assert_int_eq(v[0], 5);
  /* An index far past the end doubles until it fits, in one step. */
  ck_assert_int_eq(sp_arena_grow_from(a, (void **)&v, &cap, 100, sizeof *v, 1), SP_OK);
  ck_assert_int_eq(cap, 128);
  ck_assert_int_eq(v[0], 5);
  /* An array that starts in an inline buffer is copied out; the buffer is left alone. */
  int buf[4] = {1, 2, 3, 4}, *w = buf, wcap = 4;
  ck_assert_int_eq(sp_arena_grow_from(a, (void **)&w, &wcap, 4, sizeof *w, 16), SP_OK);
  ck_assert_ptr_ne(w, buf);
  ck_assert_int_eq(wcap, 8);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(w[i], i + 1);
  /* A capacity past INT_MAX fails and leaves the array as it was. */
  int *before = v;
  ck_assert_int_eq(sp_arena_grow_from(a, (void **)&v, &cap, INT_MAX, sizeof *v, 1), SP_ENOMEM);
  ck_assert_ptr_eq(v, before);
  ck_assert_int_eq(cap, 128);
  sp_arena_free(a);
}
END_TEST

START_TEST(uses_are_listed_newest_first_and_replaced) {
  sp_module *m = sp_module_new("t.mlir");
  sp_arena *a = m->arena;
  sp_type *t = t_f32(a, 8, 8);
  sp_op *c = sp_op_create(a, "stablehlo.constant", 0, NULL, 1, &t, 0);
  sp_value *x = &c->results[0];
  sp_value *ops2[2] = {x, x};
  sp_op *add = sp_op_create(a, "stablehlo.add", 2, ops2, 1, &t, 0);
  sp_op *neg = sp_op_create(a, "stablehlo.negate", 1, &x, 1, &t, 0);
  ck_assert_int_eq(add->kind, SP_OP_ADD);
  ck_assert_int_eq(sp_value_num_uses(x), 3);
  ck_assert_ptr_eq(x->uses->owner, neg); /* newest first, as MLIR */
  sp_op *c2 = sp_op_create(a, "stablehlo.constant", 0, NULL, 1, &t, 0);
  sp_value_replace_all_uses(x, &c2->results[0]);
  ck_assert(!sp_value_has_uses(x));
  ck_assert(sp_op_results_unused(c));
  ck_assert(!sp_op_results_unused(c2));
  ck_assert_int_eq(sp_value_num_uses(&c2->results[0]), 3);
  ck_assert_ptr_eq(add->operands[1].value, &c2->results[0]);
  ck_assert(sp_op_results_unused(neg));
  sp_op_erase(neg);
  ck_assert_int_eq(sp_value_num_uses(&c2->results[0]), 2);
  sp_module_free(m);
}
END_TEST

#ifndef NDEBUG
/* ir.h: an erased op's results must have no uses left; debug builds check it. */
START_TEST(erasing_an_op_whose_result_is_still_used_aborts_in_debug_builds) {
  sp_module *m = sp_module_new("t.mlir");
  sp_type *t = t_f32(m->arena, 8, 8);
  sp_op *c = sp_op_create(m->arena, "stablehlo.constant", 0, NULL, 1, &t, 0);
  sp_value *x = &c->results[0];
  sp_op_create(m->arena, "stablehlo.negate", 1, &x, 1, &t, 0);
  sp_op_erase(c); /* aborts */
}
END_TEST
#endif

START_TEST(replacing_an_op_moves_its_place_uses_shardings_and_names_to_the_new_one) {
  sp_module *m = sp_module_new("t.mlir");
  sp_arena *a = m->arena;
  sp_block *body = sp_module_body(m);
  sp_type *t = t_f32(a, 8, 8);
  sp_op *c = sp_op_create(a, "stablehlo.constant", 0, NULL, 1, &t, 0);
  sp_value *x = &c->results[0];
  sp_op *old = sp_op_create(a, "stablehlo.abs", 1, &x, 1, &t, 0);
  sp_value *y = &old->results[0];
  sp_op *neg = sp_op_create(a, "stablehlo.negate", 1, &y, 1, &t, 0);
  sp_block_append(body, c);
  sp_block_append(body, old);
  sp_block_append(body, neg);
  y->name_hint = "y";
  y->loc = (sp_loc){3, 5};
  sp_op *op = sp_op_create(a, "stablehlo.sine", 1, &x, 1, &t, 0);
  sp_op_replace(old, op);
  ck_assert_ptr_eq(c->next, op);
  ck_assert_ptr_eq(op->next, neg);
  ck_assert_ptr_null(old->block);
  ck_assert_ptr_eq(neg->operands[0].value, &op->results[0]);
  ck_assert_str_eq(op->results[0].name_hint, "y");
  ck_assert_int_eq(op->results[0].loc.line, 3);
  ck_assert_int_eq(sp_value_num_uses(x), 1);   /* the old op's operand use is dropped */
  sp_module_free(m);
}
END_TEST

START_TEST(ops_insert_and_unlink_keep_block_order) {
  sp_module *m = sp_module_new(NULL);
  sp_block *body = sp_module_body(m);
  sp_op *a = sp_op_create(m->arena, "x.a", 0, NULL, 0, NULL, 0);
  sp_op *b = sp_op_create(m->arena, "x.b", 0, NULL, 0, NULL, 0);
  sp_op *c = sp_op_create(m->arena, "x.c", 0, NULL, 0, NULL, 0);
  sp_block_append(body, c);
  sp_op_insert_before(c, a);
  sp_op_insert_after(a, b);
  ck_assert_ptr_eq(body->first, a);
  ck_assert_ptr_eq(a->next, b);
  ck_assert_ptr_eq(b->next, c);
  ck_assert_ptr_eq(body->last, c);
  ck_assert_int_eq(a->kind, SP_OP_UNKNOWN);
  sp_op_unlink(b);
  ck_assert_ptr_eq(a->next, c);
  ck_assert_ptr_eq(c->prev, a);
  ck_assert_int_eq(sp_module_num_ops(m), 2);
  sp_module_free(m);
}
END_TEST

START_TEST(every_op_name_maps_to_its_kind_and_nothing_else_does) {
  for (int k = 1; k < SP_OP_KIND_COUNT; k++) {
    const char *name = sp_op_kind_name((sp_op_kind)k);
    ck_assert_int_eq(sp_op_kind_from_name(name), k);
    /* A copy, not the table's own pointer: the lookup compares text. */
    char copy[128];
    ck_assert_uint_lt(strlen(name), sizeof copy);
    strcpy(copy, name);
    ck_assert_int_eq(sp_op_kind_from_name(copy), k);
    /* One byte more or less is another name. */
    size_t n = strlen(copy);
    copy[n] = 'x';
    copy[n + 1] = '\0';
    ck_assert_int_eq(sp_op_kind_from_name(copy), SP_OP_UNKNOWN);
    copy[n - 1] = '\0';
    ck_assert_int_ne(sp_op_kind_from_name(copy), k);
  }
  ck_assert_int_eq(sp_op_kind_from_name(""), SP_OP_UNKNOWN);
  ck_assert_int_eq(sp_op_kind_from_name("stablehlo."), SP_OP_UNKNOWN);
  ck_assert_int_eq(sp_op_kind_from_name("mydialect.op"), SP_OP_UNKNOWN);
  sp_module *m = sp_module_new(NULL);
  sp_op *add = sp_op_create(m->arena, "stablehlo.add", 0, NULL, 0, NULL, 0);
  sp_op *other = sp_op_create(m->arena, "mydialect.op", 0, NULL, 0, NULL, 0);
  ck_assert_int_eq(add->kind, SP_OP_ADD);
  ck_assert_int_eq(other->kind, SP_OP_UNKNOWN);
  sp_module_free(m);
}
END_TEST

START_TEST(attributes_are_set_replaced_and_removed) {
  sp_module *m = sp_module_new(NULL);
  sp_op *op = sp_op_create(m->arena, "stablehlo.concatenate", 0, NULL, 0, NULL, 0);
  sp_attr at = {.name = "dimension", .kind = SP_ATTR_INT, .u.i = 1};
  ck_assert_int_eq(sp_attrs_set(m->arena, &op->attrs, &at), SP_OK);
  at.u.i = 2;
  ck_assert_int_eq(sp_attrs_set(m->arena, &op->attrs, &at), SP_OK);
  int64_t d = 0;
  ck_assert(sp_op_get_int(op, "dimension", &d));
  ck_assert_int_eq(d, 2);
  ck_assert_int_eq(op->attrs.n, 1);
  ck_assert(sp_attrs_remove(&op->attrs, "dimension"));
  ck_assert(!sp_op_get_int(op, "dimension", &d));
  sp_module_free(m);
}
END_TEST

START_TEST(types_print_and_measure) {
  sp_arena *a = sp_arena_new(0);
  int64_t dims[3] = {2, SP_DYN_DIM, 8};
  sp_type *t = sp_type_tensor(a, 3, dims, "bf16");
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_type_print(&sb, t);
  ck_assert_str_eq(sp_strbuf_str(&sb), "tensor<2x?x8xbf16>");
  ck_assert(!sp_type_is_static_tensor(t));
  ck_assert_int_eq(sp_type_elem_bits(t), 16);
  sp_type *s = sp_type_tensor(a, 0, NULL, "complex<f32>");
  ck_assert_int_eq(sp_type_elem_bits(s), 64);
  ck_assert_int_eq(sp_type_num_elements(s), 1);
  /* the width of every element type, "f64" not taken for a 6-bit float */
  static const struct {
    const char *elem;
    int bits;
  } widths[] = {{"f64", 64}, {"f32", 32}, {"f16", 16}, {"i1", 1}, {"ui8", 8}, {"i64", 64},
                {"f8E4M3FN", 8}, {"f8E5M2", 8}, {"f6E2M3FN", 6}, {"f4E2M1FN", 4},
                {"complex<f64>", 128}, {"index", 64}, {"i16777215", 16777215},
                /* wider than MLIR allows, and wider than an int holds: unknown, no overflow */
                {"i16777216", 0}, {"f39999999999999999999992", 0}};
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
    ck_assert_msg(sp_type_elem_bits(sp_type_tensor(a, 0, NULL, widths[i].elem)) == widths[i].bits,
                  "%s", widths[i].elem);
  sp_strbuf_free(&sb);
  sp_arena_free(a);
}
END_TEST

START_TEST(sharding_prints_in_sdy_form) {
  sp_arena *a = sp_arena_new(0);
  sp_sharding *s = sp_sharding_new(a, "mesh", 2, false);
  sp_axis_ref ax[2] = {{"a", 0, 0}, {"b", 2, 2}};
  s->dims[0].axes = ax;
  s->dims[0].naxes = 2;
  s->dims[1].closed = true;
  s->dims[1].priority = 1;
  sp_axis_ref rep = {"c", 0, 0};
  s->replicated = &rep;
  s->nreplicated = 1;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_sharding_print(&sb, s);
  ck_assert_str_eq(sp_strbuf_str(&sb), "<@mesh, [{\"a\", \"b\":(2)2, ?}, {}p1], replicated={\"c\"}>");
  sp_sharding *c = sp_sharding_copy(a, s);
  ck_assert(sp_sharding_equal(s, c));
  c->dims[0].closed = true;
  ck_assert(!sp_sharding_equal(s, c));
  sp_strbuf_free(&sb);
  sp_arena_free(a);
}
END_TEST

START_TEST(rule_prints_factor_names_and_kinds) {
  sp_arena *a = sp_arena_new(0);
  int f_i[] = {0}, f_k[] = {2}, f_j[] = {1};
  sp_rule_dim lhs_d[2] = {{1, f_i}, {1, f_k}}, rhs_d[2] = {{1, f_k}, {1, f_j}},
              res_d[2] = {{1, f_i}, {1, f_j}};
  sp_rule_tensor ops[2] = {{2, lhs_d}, {2, rhs_d}}, res[1] = {{2, res_d}};
  sp_rule_factor fs[3] = {{8, SP_FACTOR_PASS_THROUGH, false},
                          {16, SP_FACTOR_PASS_THROUGH, false},
                          {32, SP_FACTOR_REDUCTION, false}};
  sp_rule r = {3, fs, 2, ops, 1, res, false};
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, &r);
  ck_assert_str_eq(sp_strbuf_str(&sb),
                   "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} "
                   "reduction={k}>");
  char name[16];
  sp_rule_factor_name(18, name);
  ck_assert_str_eq(name, "z_1");
  sp_strbuf_free(&sb);
  sp_arena_free(a);
}
END_TEST

static Suite *ir_suite(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, arena_serves_large_and_small_requests);
  tcase_add_test(tc, arena_grow_doubles_only_when_full_and_keeps_the_elements);
  tcase_add_test(tc, arena_grow_from_starts_at_its_first_capacity_inline_or_far_past_the_end);
  tcase_add_test(tc, uses_are_listed_newest_first_and_replaced);
#ifndef NDEBUG
  tcase_add_test_raise_signal(tc, erasing_an_op_whose_result_is_still_used_aborts_in_debug_builds,
                              SIGABRT);
#endif
  tcase_add_test(tc, replacing_an_op_moves_its_place_uses_shardings_and_names_to_the_new_one);
  tcase_add_test(tc, ops_insert_and_unlink_keep_block_order);
  tcase_add_test(tc, every_op_name_maps_to_its_kind_and_nothing_else_does);
  tcase_add_test(tc, attributes_are_set_replaced_and_removed);
  tcase_add_test(tc, types_print_and_measure);
  tcase_add_test(tc, sharding_prints_in_sdy_form);
  tcase_add_test(tc, rule_prints_factor_names_and_kinds);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(ir_suite()); }
