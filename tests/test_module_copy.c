/*
 * test_module_copy.c - a whole module copied with its ops and values paired (ir/module_copy.h):
 * the copy prints the same, every op and value (results and nested block arguments) finds its
 * counterpart both ways, changing the copy leaves the original alone, and ops added afterwards
 * have no counterpart.
 */
#include <check.h>
#include <stdlib.h>

#include "ir/module_copy.h"
#include "pass_test.h"
#include "test_support.h"

static const char *const text =
    "sdy.mesh @mesh = <[\"a\"=2]>\n"
    "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}, %arg1: tensor<i32>) -> tensor<8xf32> {\n"
    "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>\n"
    "    cond {\n"
    "    %1 = stablehlo.compare LT, %iterArg_0, %arg1 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %1 : tensor<i1>\n"
    "  } do {\n"
    "    %1 = stablehlo.add %iterArg, %arg0 : tensor<8xf32>\n"
    "    stablehlo.return %1, %iterArg_0 : tensor<8xf32>, tensor<i32>\n"
    "  }\n"
    "  return %0#0 : tensor<8xf32>\n"
    "}\n";

START_TEST(every_op_and_value_pairs_with_its_counterpart_both_ways) {
  sp_module *m = pt_parse(text);
  sp_module_copy c;
  sp_err err;
  ck_assert_int_eq(sp_module_copy_make(m, NULL, &c, &err), SP_OK);
  char *a = pt_print(m), *b = pt_print(c.module);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  ck_assert_int_eq(c.orig.n, c.ops.n);
  for (int i = 0; i < c.orig.n; i++) {
    sp_op *o = c.orig.v[i], *k = sp_module_copy_op(&c, o);
    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_ne(k, o);
    ck_assert_str_eq(k->name, o->name);
    ck_assert_ptr_eq(sp_module_copy_original_op(&c, k), o);
    ck_assert_ptr_null(sp_module_copy_op(&c, k));   /* a copy's op is not an original */
    for (int r = 0; r < o->nresults; r++) {
      ck_assert_ptr_eq(sp_module_copy_value(&c, &o->results[r]), &k->results[r]);
      ck_assert_ptr_eq(sp_module_copy_original_value(&c, &k->results[r]), &o->results[r]);
    }
    for (int g = 0; g < o->nregions; g++)
      for (int bl = 0; bl < o->regions[g].nblocks; bl++)
        for (int x = 0; x < o->regions[g].blocks[bl]->nargs; x++) {
          sp_value *v = o->regions[g].blocks[bl]->args[x];
          ck_assert_ptr_eq(sp_module_copy_value(&c, v), k->regions[g].blocks[bl]->args[x]);
          ck_assert_ptr_eq(sp_module_copy_original_value(&c, k->regions[g].blocks[bl]->args[x]),
                           v);
        }
  }
  sp_module_copy_free(&c);
  sp_module_free(m);
}
END_TEST

START_TEST(the_copy_changes_alone_and_later_ops_have_no_counterpart) {
  sp_module *m = pt_parse(text);
  char *before = pt_print(m);
  sp_module *into = sp_module_new("into.mlir");
  ck_assert_ptr_nonnull(into);
  sp_module_copy c;
  sp_err err;
  ck_assert_int_eq(sp_module_copy_make(m, into, &c, &err), SP_OK);
  ck_assert_ptr_eq(c.module, into);
  ck_assert_str_eq(c.module->filename, m->filename);
  /* The main function's argument sharding dropped in the copy only. */
  sp_op *fn = sp_module_main_func(m), *fn2 = sp_module_copy_op(&c, fn);
  fn2->regions[0].blocks[0]->args[0]->sharding = NULL;
  ck_assert_ptr_nonnull(fn->regions[0].blocks[0]->args[0]->sharding);
  /* An op added to the copy has no original; its values none either. */
  sp_value *arg = fn2->regions[0].blocks[0]->args[0];
  sp_op *neg = sp_op_create(c.module->arena, "stablehlo.negate", 1, &arg, 1, &arg->type, 0);
  ck_assert_ptr_nonnull(neg);
  sp_op_insert_before(fn2->regions[0].blocks[0]->first, neg);
  ck_assert_ptr_null(sp_module_copy_original_op(&c, neg));
  ck_assert_ptr_null(sp_module_copy_original_value(&c, &neg->results[0]));
  char *after = pt_print(m);
  ck_assert_str_eq(before, after);
  free(before);
  free(after);
  sp_module_copy_free(&c);
  ck_assert_ptr_null(c.module);
  sp_module_free(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("module_copy");
  TCase *tc = tcase_create("module_copy");
  tcase_add_test(tc, every_op_and_value_pairs_with_its_counterpart_both_ways);
  tcase_add_test(tc, the_copy_changes_alone_and_later_ops_have_no_counterpart);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
