/*
 * test_halo_exchange.c - the shared pieces of the halo exchanges (export/halo_exchange.h),
 * driven directly on a module of its own: neighbour permutes in both directions on a mesh with
 * its own device order, the position lookup that order needs, and the shard index of a dim on
 * a sub-axis.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export/halo_exchange.h"
#include "export_test.h"
#include "propagation/sharding_walk.h"
#include "test_support.h"

static const char *const MODULE =
    "sdy.mesh @g = <[\"p\"=4, \"q\"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>\n"
    "func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@g, [{\"p\"}]>}) -> tensor<8xf32> {\n"
    "  return %x : tensor<8xf32>\n}\n";

/* Runs `build` with a builder before the function's return and the argument, then prints. */
static char *with_builder(void (*build)(sp_builder *, sp_value *, const sp_mesh *)) {
  sp_module *m = pt_parse(MODULE);
  sp_op *fn = sp_module_main_func(m);
  sp_block *body = fn->regions[0].blocks[0];
  sp_builder b = {m, body->last, NULL, body->last->loc};
  sp_value *x = body->args[0];
  build(&b, x, sp_sharding_mesh(m, x->sharding));
  char *out = pt_print(m);
  sp_module_free(m);
  return out;
}

static void permutes(sp_builder *b, sp_value *x, const sp_mesh *mesh) {
  int channel = 1;
  ck_assert_ptr_nonnull(sp_halo_permute(b, mesh, x->sharding, 0, 1, x, &channel));
  ck_assert_ptr_nonnull(sp_halo_permute(b, mesh, x->sharding, 0, -2, x, &channel));
  ck_assert_int_eq(channel, 3);
}

START_TEST(permutes_pair_devices_by_position_in_both_directions) {
  char *out = with_builder(permutes);
  /* Position 2p+q holds device 7-(2p+q); shard p goes to p+1, then to p-2. */
  static const char *const want[] = {
      "handle = 1, type = 1>, source_target_pairs = dense<[[7, 5], [6, 4], [5, 3], [4, 2], [3, 1], [2, 0]]> : tensor<6x2xi64>",
      "handle = 2, type = 1>, source_target_pairs = dense<[[3, 7], [2, 6], [1, 5], [0, 4]]> : tensor<4x2xi64>", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static void index_of_sub_axis(sp_builder *b, sp_value *x, const sp_mesh *mesh) {
  sp_value *pos = sp_halo_position(b, mesh);
  ck_assert_ptr_nonnull(pos);
  sp_sharding *s = sp_sharding_copy(b->m->arena, x->sharding);
  s->dims[0].axes[0].pre = 2;
  s->dims[0].axes[0].size = 2;
  ck_assert_ptr_nonnull(sp_halo_shard_index(b, mesh, s, 0, pos));
}

START_TEST(a_listed_device_order_is_looked_up_and_a_sub_axis_divides_by_its_minor_part) {
  char *out = with_builder(index_of_sub_axis);
  /* Device d sits at position 7 - d. "p":(2)2 is the minor half of p: (pos / 2) % 2. */
  static const char *const want[] = {
      "stablehlo.partition_id : tensor<ui32>", "stablehlo.convert %0 : (tensor<ui32>) -> tensor<i64>",
      "stablehlo.constant dense<[7, 6, 5, 4, 3, 2, 1, 0]> : tensor<8xi64>",
      "stablehlo.dynamic_slice %c, %1, sizes = [1]", "stablehlo.reshape %2 : (tensor<1xi64>) -> tensor<i64>",
      "stablehlo.constant dense<2> : tensor<i64>", "stablehlo.divide %3, %c_0",
      "stablehlo.constant dense<2> : tensor<i64>", "stablehlo.remainder %4, %c_1", NULL};
  et_has_in_order(out, want);
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("halo_exchange");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, permutes_pair_devices_by_position_in_both_directions);
  tcase_add_test(tc, a_listed_device_order_is_looked_up_and_a_sub_axis_divides_by_its_minor_part);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
