/*
 * test_clone.c - deep copies of ops and regions (ir/clone.h): remapped operands, copied
 * regions, independent attribute dictionaries and signatures, and the value map itself.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/clone.h"
#include "pass_test.h"
#include "test_support.h"

START_TEST(value_map_grows_and_finds_every_key) {
  sp_value_map map;
  sp_value_map_init(&map);
  sp_value *keys = calloc(1000, sizeof *keys);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(sp_value_map_put(&map, &keys[i], &keys[(i + 1) % 1000]), SP_OK);
  ck_assert_uint_eq(map.map.n, 1000);
  for (int i = 0; i < 1000; i++) ck_assert_ptr_eq(sp_value_map_get(&map, &keys[i]), &keys[(i + 1) % 1000]);
  sp_value other;
  ck_assert_ptr_null(sp_value_map_get(&map, &other));
  ck_assert_ptr_eq(sp_value_map_lookup_or_self(&map, &other), &other);
  ck_assert_int_eq(sp_value_map_put(&map, &keys[3], &other), SP_OK);  /* replace */
  ck_assert_uint_eq(map.map.n, 1000);
  ck_assert_ptr_eq(sp_value_map_get(&map, &keys[3]), &other);
  sp_value_map_free(&map);
  free(keys);
}
END_TEST

START_TEST(cloned_op_with_region_uses_its_own_values_and_outer_ones_as_they_are) {
  sp_module *m = pt_parse(
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {\n"
      "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32> "
      "attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}]>, <@mesh, []>]>}\n"
      "    cond {\n"
      "    %1 = stablehlo.compare LT, %iterArg_0, %arg1 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %1 : tensor<i1>\n"
      "  } do {\n"
      "    %1 = stablehlo.add %iterArg, %arg0 : tensor<8xf32>\n"
      "    stablehlo.return %1, %iterArg_0 : tensor<8xf32>, tensor<i32>\n"
      "  }\n"
      "  return %0#0 : tensor<8xf32>\n"
      "}\n");
  sp_op *fn = sp_module_lookup_func(m, "main");
  sp_block *entry = fn->regions[0].blocks[0];
  sp_op *w = entry->first;
  sp_value_map map;
  sp_value_map_init(&map);
  sp_op *c = sp_op_clone(m->arena, w, &map);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_null(c->block);
  ck_assert_int_eq(c->kind, SP_OP_WHILE);
  ck_assert_ptr_eq(c->results[0].sharding, w->results[0].sharding);
  ck_assert_ptr_eq(sp_value_map_get(&map, &w->results[1]), &c->results[1]);
  /* Operands from outside stay; the body's add uses the copy's block argument and %arg0. */
  ck_assert_ptr_eq(c->operands[0].value, entry->args[0]);
  sp_block *body = c->regions[1].blocks[0];
  sp_op *add = body->first;
  ck_assert_ptr_eq(add->operands[0].value, body->args[0]);
  ck_assert_ptr_ne(add->operands[0].value, w->regions[1].blocks[0]->args[0]);
  ck_assert_ptr_eq(add->operands[1].value, entry->args[0]);
  ck_assert_ptr_eq(body->last->operands[0].value, &add->results[0]);
  /* The attribute dictionary is the copy's own. */
  ck_assert_ptr_ne(c->attrs.v, w->attrs.v);
  sp_op_insert_after(w, c);
  sp_value_replace_all_uses(&w->results[0], &c->results[0]);
  char *out = pt_print(m);
  ck_assert_ptr_nonnull(strstr(out, "return %1#0 : tensor<8xf32>"));
  free(out);
  sp_value_map_free(&map);
  sp_module_free(m);
}
END_TEST

START_TEST(cloned_function_has_its_own_signature) {
  sp_module *m = pt_parse(
      "sdy.mesh @mesh = <[\"a\"=2]>\n"
      "func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "  return %arg0 : tensor<8xf32>\n"
      "}\n");
  sp_op *f = sp_module_lookup_func(m, "f");
  sp_value_map map;
  sp_value_map_init(&map);
  sp_op *g = sp_op_clone(m->arena, f, &map);
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_ne(g->func, f->func);
  ck_assert_ptr_ne(g->func->result_shardings, f->func->result_shardings);
  g->func->result_shardings[0] = NULL;
  ck_assert_ptr_nonnull(f->func->result_shardings[0]);
  sp_block *ge = g->regions[0].blocks[0];
  ck_assert_ptr_eq(ge->args[0]->sharding, f->regions[0].blocks[0]->args[0]->sharding);
  ck_assert_ptr_eq(ge->last->operands[0].value, ge->args[0]);
  sp_value_map_free(&map);
  sp_module_free(m);
}
END_TEST

static Suite *clone_suite(void) {
  Suite *s = suite_create("clone");
  TCase *tc = tcase_create("clone");
  tcase_add_test(tc, value_map_grows_and_finds_every_key);
  tcase_add_test(tc, cloned_op_with_region_uses_its_own_values_and_outer_ones_as_they_are);
  tcase_add_test(tc, cloned_function_has_its_own_signature);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(clone_suite()); }
