/*
 * test_rules.c - the OpShardingRule builder and registry, on ops built in code (the custom
 * calls' rules are in test_rules_custom_call.c; the helpers in support/rules_fixtures.h).
 *
 * Expected rules are the ones of Shardy's registry tests (op_sharding_rule_registry.mlir) and
 * of shardy_semantics.md section 2.3; each test builds the op through the ir.h API with the
 * op_attrs.h attribute names and compares the printed rule.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_attrs.h"
#include "ir/verify.h"
#include "rules/registry.h"
#include "rules/rule_builder.h"
#include "rules_fixtures.h"
#include "test_support.h"

static sp_rules_options conservative = {.conservative = true};

/* ------------------------------------------------------------------ builder conventions */

START_TEST(builder_numbers_factors_in_creation_order_and_fills_unmapped_dims) {
  sp_rule_builder b;
  int oranks[2] = {2, 0}, rranks[1] = {3};
  ck_assert_int_eq(sp_rule_builder_init(&b, A, 2, oranks, 1, rranks), SP_OK);
  int f = sp_rule_builder_factor(&b, 8, SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(&b, 0, 1, f);
  sp_rule_builder_map(&b, 2, 2, f);
  /* operand dim 0 and result dims 0, 1 are left unmapped: filled operands first. */
  sp_rule *r;
  ck_assert_int_eq(sp_rule_builder_build(&b, &r, NULL), SP_OK);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, r);
  ck_assert_str_eq(sp_strbuf_str(&sb), RULE("([j, i], [])->([k, l, i]) {i=8, j=1, k=1, l=1}"));
  sp_strbuf_free(&sb);
}
END_TEST

START_TEST(builder_skips_size_one_factor_on_a_mapped_dim_except_same_dim_helper) {
  sp_rule_builder b;
  int oranks[1] = {1}, rranks[1] = {1};
  ck_assert_int_eq(sp_rule_builder_init(&b, A, 1, oranks, 1, rranks), SP_OK);
  int f = sp_rule_builder_factor(&b, 4, SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(&b, 0, 0, f);
  int one = sp_rule_builder_factor(&b, 1, SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(&b, 0, 0, one);        /* skipped: dim already has a factor */
  sp_rule_builder_map(&b, 1, 0, one);        /* taken: dim is empty */
  ck_assert_int_eq(sp_rule_builder_dim_count(&b, 0, 0), 1);
  ck_assert_int_eq(sp_rule_builder_dim_count(&b, 1, 0), 1);
  int same = sp_rule_builder_same_dim(&b, 0, 1, SP_FACTOR_NEED_REPLICATION, true);
  ck_assert_int_eq(same, 2);
  sp_rule *r;
  ck_assert_int_eq(sp_rule_builder_build(&b, &r, NULL), SP_OK);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, r);
  ck_assert_str_eq(sp_strbuf_str(&sb),
                   RULE("([ik])->([jk]) {i=4, j=1, k=1} need_replication={k} "
                        "blocked_propagation={k}"));
  sp_strbuf_free(&sb);
}
END_TEST

START_TEST(builder_spills_beyond_inline_storage) {
  /* 20 operands of rank 4 and 80 distinct factors exceed every inline capacity. */
  sp_rule_builder b;
  int oranks[20], rranks[1] = {4};
  for (int i = 0; i < 20; i++) oranks[i] = 4;
  ck_assert_int_eq(sp_rule_builder_init(&b, A, 20, oranks, 1, rranks), SP_OK);
  for (int i = 0; i < 20; i++)
    for (int d = 0; d < 4; d++)
      sp_rule_builder_map(&b, i, d, sp_rule_builder_factor(&b, 2 + d, SP_FACTOR_PASS_THROUGH, false));
  sp_rule *r;
  ck_assert_int_eq(sp_rule_builder_build(&b, &r, NULL), SP_OK);
  ck_assert_int_eq(r->nfactors, 84); /* 80 + 4 size-1 factors for the result */
  ck_assert_int_eq(r->operands[19].dims[3].factors[0], 79);
  ck_assert_int_eq(r->factors[79].size, 5);
  ck_assert_int_eq(r->results[0].dims[0].factors[0], 80);
  ck_assert_int_eq(r->factors[83].size, 1);
}
END_TEST

START_TEST(builder_rejects_more_than_max_factors) {
  sp_rule_builder b;
  int oranks[1] = {1}, rranks[1] = {1};
  ck_assert_int_eq(sp_rule_builder_init(&b, A, 1, oranks, 1, rranks), SP_OK);
  for (int i = 0; i < 2000; i++) sp_rule_builder_factor(&b, 2, SP_FACTOR_PASS_THROUGH, false);
  sp_rule *r = (sp_rule *)1;
  sp_err err;
  ck_assert_int_eq(sp_rule_builder_build(&b, &r, &err), SP_ELIMIT);
  ck_assert_ptr_null(r);
  ck_assert_ptr_nonnull(strstr(err.msg, "SP_MAX_FACTORS"));
}
END_TEST

/* ------------------------------------------------------------------ pointwise */

START_TEST(pointwise_add_maps_every_dim_including_size_one_and_zero) {
  ck_assert_str_eq(rule(mk("stablehlo.add", "2x1x4;2x1x4", "2x1x4")),
                   RULE("([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=1, k=4}"));
  ck_assert_str_eq(rule(mk("stablehlo.add", "2x0x4;2x0x4", "2x0x4")),
                   RULE("([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=0, k=4}"));
}
END_TEST

START_TEST(pointwise_scalar_op_has_empty_mappings) {
  ck_assert_str_eq(rule(mk("stablehlo.add", "-;-", "-")), RULE("([], [])->([])"));
}
END_TEST

START_TEST(every_elementwise_op_is_pointwise) {
  static const char *const names[] = {
      "stablehlo.abs", "stablehlo.atan2", "stablehlo.compare", "stablehlo.convert",
      "stablehlo.exponential", "stablehlo.logistic", "stablehlo.power", "stablehlo.rsqrt",
      "stablehlo.shift_right_logical", "stablehlo.tanh", "stablehlo.xor",
      "stablehlo.all_reduce", "stablehlo.collective_permute", "sdy.sharding_constraint"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    sp_op *op = mk(names[i], "4x8", "4x8");
    ck_assert_msg(strcmp(rule(op), RULE("([i, j])->([i, j]) {i=4, j=8}")) == 0, "%s: %s",
                  names[i], rule(op));
  }
}
END_TEST

START_TEST(select_and_clamp_give_scalar_operands_empty_mappings) {
  ck_assert_str_eq(rule(mk("stablehlo.select", "4x8;4x8;4x8", "4x8")),
                   RULE("([i, j], [i, j], [i, j])->([i, j]) {i=4, j=8}"));
  ck_assert_str_eq(rule(mk("stablehlo.select", "-;4x8;4x8", "4x8")),
                   RULE("([], [i, j], [i, j])->([i, j]) {i=4, j=8}"));
  ck_assert_str_eq(rule(mk("stablehlo.clamp", "4x8;4x8;4x8", "4x8")),
                   RULE("([i, j], [i, j], [i, j])->([i, j]) {i=4, j=8}"));
  ck_assert_str_eq(rule(mk("stablehlo.clamp", "-;4x8;-", "4x8")),
                   RULE("([], [i, j], [])->([i, j]) {i=4, j=8}"));
}
END_TEST

START_TEST(elementwise_op_with_mismatched_shape_is_an_error_naming_the_operand) {
  const char *r = rule(mk("stablehlo.add", "4x8;4x9", "4x8"));
  ck_assert_ptr_nonnull(strstr(r, "ERROR: op 'stablehlo.add'"));
  ck_assert_ptr_nonnull(strstr(r, "operand 1 has shape 4x9"));
}
END_TEST

/* ------------------------------------------------------------------ simple structural ops */

START_TEST(bitcast_convert_extra_minor_dim_needs_replication) {
  ck_assert_str_eq(rule(mk("stablehlo.bitcast_convert", "4x2x2", "4x2")),
                   RULE("([i, j, k])->([i, j]) {i=4, j=2, k=2} need_replication={k}"));
  ck_assert_str_eq(rule(mk("stablehlo.bitcast_convert", "4x2x2", "4x2x2")),
                   RULE("([i, j, k])->([i, j, k]) {i=4, j=2, k=2}"));
  ck_assert_str_eq(rule(mk("stablehlo.bitcast_convert", "4x2", "4x2x2")),
                   RULE("([i, j])->([i, j, k]) {i=4, j=2, k=2} need_replication={k}"));
}
END_TEST

START_TEST(broadcast_in_dim_shares_equal_dims_and_splits_expanded_ones) {
  sp_op *op = mk("stablehlo.broadcast_in_dim", "2x13x1", "2x64x13x1");
  set_ints(op, "broadcast_dimensions", "0,2,3");
  ck_assert_str_eq(rule(op), RULE("([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=1}"));
  op = mk("stablehlo.broadcast_in_dim", "2x13x0", "2x64x13x0");
  set_ints(op, "broadcast_dimensions", "0,2,3");
  ck_assert_str_eq(rule(op), RULE("([i, k, l])->([i, j, k, l]) {i=2, j=64, k=13, l=0}"));
  op = mk("stablehlo.broadcast_in_dim", "-", "2x1x13");
  set_ints(op, "broadcast_dimensions", "");
  ck_assert_str_eq(rule(op), RULE("([])->([i, j, k]) {i=2, j=1, k=13}"));
  op = mk("stablehlo.broadcast_in_dim", "2x1x13", "2x64x13");
  set_ints(op, "broadcast_dimensions", "0,1,2");
  ck_assert_str_eq(rule(op), RULE("([i, j, l])->([i, k, l]) {i=2, j=1, k=64, l=13}"));
  op = mk("stablehlo.broadcast_in_dim", "2x3x5x1x7", "2x5x3x11x7x13");
  set_ints(op, "broadcast_dimensions", "0,2,1,3,4");
  ck_assert_str_eq(rule(op), RULE("([i, k, j, l, n])->([i, j, k, m, n, o]) "
                                  "{i=2, j=5, k=3, l=1, m=11, n=7, o=13}"));
}
END_TEST

START_TEST(broadcast_in_dim_rejects_bad_dimensions) {
  sp_op *op = mk("stablehlo.broadcast_in_dim", "2x3", "2x3x4");
  set_ints(op, "broadcast_dimensions", "0,3");
  ck_assert_ptr_nonnull(strstr(rule(op), "broadcast dimension 3 is out of range for rank 3"));
  op = mk("stablehlo.broadcast_in_dim", "2x3", "2x3x4");
  ck_assert_ptr_nonnull(strstr(rule(op), "missing attribute 'broadcast_dimensions'"));
  op = mk("stablehlo.broadcast_in_dim", "2x3", "2x5");
  set_ints(op, "broadcast_dimensions", "0,1");
  ck_assert_ptr_nonnull(strstr(rule(op), "cannot broadcast"));
}
END_TEST

START_TEST(transpose_factors_follow_result_dims) {
  sp_op *op = mk("stablehlo.transpose", "256x32x64x100", "100x32x256x64");
  set_ints(op, "permutation", "3,1,0,2");
  ck_assert_str_eq(rule(op), RULE("([k, j, l, i])->([i, j, k, l]) {i=100, j=32, k=256, l=64}"));
  op = mk("stablehlo.transpose", "2x3", "3x2");
  set_ints(op, "permutation", "1,1");
  ck_assert_ptr_nonnull(strstr(rule(op), "permutation entry 1 appears twice"));
}
END_TEST

START_TEST(cholesky_matrix_dims_need_replication) {
  sp_op *op = mk("stablehlo.cholesky", "2x4x8x8", "2x4x8x8");
  ck_assert_str_eq(rule(op), RULE("([i, j, k, l])->([i, j, k, l]) {i=2, j=4, k=8, l=8} "
                                  "need_replication={k, l}"));
}
END_TEST

START_TEST(batch_norm_inference_shares_the_feature_factor) {
  sp_op *op = mk("stablehlo.batch_norm_inference", "4x8x16x32;16;16;16;16", "4x8x16x32");
  set_int(op, "feature_index", 2);
  ck_assert_str_eq(rule(op), RULE("([i, j, k, l], [k], [k], [k], [k])->([i, j, k, l]) "
                                  "{i=4, j=8, k=16, l=32}"));
}
END_TEST

START_TEST(reverse_dims_are_permutations) {
  sp_op *op = mk("stablehlo.reverse", "4x32x8x2", "4x32x8x2");
  set_ints(op, "dimensions", "1,3");
  ck_assert_str_eq(rule(op), RULE("([i, j, k, l])->([i, j, k, l]) {i=4, j=32, k=8, l=2} "
                                  "permutation={j, l}"));
}
END_TEST

START_TEST(rng_bit_generator_state_is_blocked_and_output_result_only) {
  sp_op *op = mk("stablehlo.rng_bit_generator", "2", "2;4x1000");
  ck_assert_str_eq(rule(op), RULE("([i])->([i], [j, k]) {i=2, j=4, k=1000} "
                                  "need_replication={i} blocked_propagation={i}"));
}
END_TEST

START_TEST(sort_dim_needs_replication_and_is_blocked_only_when_alone) {
  sp_op *op = mk("stablehlo.sort", "4x32x8;4x32x8", "4x32x8;4x32x8");
  set_int(op, "dimension", 0);
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [i, j, k])->([i, j, k], [i, j, k]) "
                                  "{i=4, j=32, k=8} need_replication={i}"));
  op = mk("stablehlo.sort", "1x4x1", "1x4x1");
  set_int(op, "dimension", 1);
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=1, j=4, k=1} "
                                  "need_replication={j} blocked_propagation={j}"));
  op = mk("stablehlo.sort", "3x5", "3x5"); /* no dimension: the last one */
  ck_assert_str_eq(rule(op), RULE("([i, j])->([i, j]) {i=3, j=5} need_replication={j}"));
}
END_TEST

START_TEST(fft_dims_need_replication_and_real_ffts_block_the_last) {
  sp_op *op = mk("stablehlo.fft", "8x32x64", "8x32x64");
  set_str(op, "fft_type", SP_ATTR_ENUM, "FFT");
  set_ints(op, "fft_length", "32,64");
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=8, j=32, k=64} "
                                  "need_replication={j, k}"));
  op = mk("stablehlo.fft", "8x32x64", "8x32x33");
  set_str(op, "fft_type", SP_ATTR_ENUM, "RFFT");
  set_ints(op, "fft_length", "32,64");
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=8, j=32, k=64} "
                                  "need_replication={j, k} blocked_propagation={k}"));
  op = mk("stablehlo.fft", "8x32x33", "8x32x64");
  set_str(op, "fft_type", SP_ATTR_ENUM, "IRFFT");
  set_ints(op, "fft_length", "64");
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=8, j=32, k=33} "
                                  "need_replication={k} blocked_propagation={k}"));
  op = mk("stablehlo.fft", "8x32x64", "8x32x64");
  set_str(op, "fft_type", SP_ATTR_ENUM, "IFFT");
  set_ints(op, "fft_length", "64");
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=8, j=32, k=64} "
                                  "need_replication={k}"));
}
END_TEST

START_TEST(triangular_solve_maps_matrix_dims_per_side_and_transpose) {
  static const struct { bool left; const char *tr, *a, *b, *want; } cases[] = {
      {true, "#stablehlo<transpose NO_TRANSPOSE>", "8x3x3", "8x3x5",
       RULE("([i, j, l], [i, j, k])->([i, l, k]) {i=8, j=3, k=5, l=3} need_replication={j, k, l}")},
      {false, "#stablehlo<transpose NO_TRANSPOSE>", "8x3x3", "8x5x3",
       RULE("([i, l, k], [i, j, k])->([i, j, l]) {i=8, j=5, k=3, l=3} need_replication={j, k, l}")},
      {true, "#stablehlo<transpose TRANSPOSE>", "8x3x3", "8x3x5",
       RULE("([i, l, j], [i, j, k])->([i, l, k]) {i=8, j=3, k=5, l=3} need_replication={j, k, l}")},
      {false, "#stablehlo<transpose TRANSPOSE>", "8x3x3", "8x5x3",
       RULE("([i, k, l], [i, j, k])->([i, j, l]) {i=8, j=5, k=3, l=3} need_replication={j, k, l}")},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char operands[64];
    snprintf(operands, sizeof operands, "%s;%s", cases[i].a, cases[i].b);
    sp_op *op = mk("stablehlo.triangular_solve", operands, cases[i].b);
    set_bool(op, "left_side", cases[i].left);
    set_str(op, "transpose_a", SP_ATTR_TEXT, cases[i].tr);
    ck_assert_str_eq(rule(op), cases[i].want);
  }
}
END_TEST

/* ------------------------------------------------------------------ reduce */

START_TEST(reduce_dims_are_reduction_factors_and_init_values_empty) {
  sp_op *op = mk("stablehlo.reduce", "2x64x13;-", "2x13");
  set_ints(op, "dimensions", "1");
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [])->([i, k]) {i=2, j=64, k=13} reduction={j}"));
  op = mk("stablehlo.reduce", "2x64x13;2x64x13;-;-", "64;64");
  set_ints(op, "dimensions", "0,2");
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [i, j, k], [], [])->([j], [j]) "
                                  "{i=2, j=64, k=13} reduction={i, k}"));
  op = mk("stablehlo.reduce", "2x64x1x13;-", "2x1x13");
  set_ints(op, "dimensions", "1");
  ck_assert_str_eq(rule(op), RULE("([i, j, k, l], [])->([i, k, l]) {i=2, j=64, k=1, l=13} "
                                  "reduction={j}"));
}
END_TEST

/* ------------------------------------------------------------------ concatenate */

static sp_op *slice_of(sp_value *v, const char *result) {
  sp_type *t = ty(result);
  return sp_op_create(A, "stablehlo.slice", 1, &v, 1, &t, 0);
}

static sp_op *concat(int n, sp_value **vals, const char *result, int dim) {
  sp_type *t = ty(result);
  sp_op *op = sp_op_create(A, "stablehlo.concatenate", n, vals, 1, &t, 0);
  set_int(op, "dimension", dim);
  return op;
}

START_TEST(concatenate_dim_needs_replication_for_plain_operands) {
  sp_op *op = mk("stablehlo.concatenate", "4x1x256;4x1x256;4x1x256", "4x3x256");
  set_int(op, "dimension", 1);
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) "
                                  "{i=4, j=3, k=256} need_replication={j}"));
  op = mk("stablehlo.concatenate", "4x3x256;4x5x256", "4x8x256");
  set_int(op, "dimension", 1);
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=8, k=256} "
                                  "need_replication={j}"));
  sp_value *x = arg("4x64");
  sp_value *same[3] = {x, x, x};
  ck_assert_str_eq(rule(concat(3, same, "12x64", 0)),
                   RULE("([i, j], [i, j], [i, j])->([i, j]) {i=12, j=64} need_replication={i}"));
}
END_TEST

START_TEST(concatenate_of_slices_is_a_permutation) {
  sp_value *a = arg("4x40x256"), *b = arg("4x60x256");
  sp_value *v[3] = {&slice_of(a, "4x32x256")->results[0], &slice_of(b, "4x48x256")->results[0]};
  ck_assert_str_eq(rule(concat(2, v, "4x80x256", 1)),
                   RULE("([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=80, k=256} "
                        "permutation={j}"));
  /* slice(a), a, slice(a): one source, one of them a slice. */
  sp_value *w[3] = {&slice_of(a, "4x32x256")->results[0], a,
                    &slice_of(a, "4x24x256")->results[0]};
  ck_assert_str_eq(rule(concat(3, w, "4x96x256", 1)),
                   RULE("([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=96, k=256} "
                        "permutation={j}"));
  /* slice(a), a, slice(b): two sources. */
  sp_value *u[3] = {&slice_of(a, "4x32x256")->results[0], a,
                    &slice_of(b, "4x24x256")->results[0]};
  ck_assert_str_eq(rule(concat(3, u, "4x96x256", 1)),
                   RULE("([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=96, k=256} "
                        "need_replication={j}"));
  /* slice(a) and a non-slice of another value. */
  sp_value *neg = &mk("stablehlo.negate", "4x60x256", "4x60x256")->results[0];
  sp_value *s[2] = {&slice_of(a, "4x32x256")->results[0], neg};
  ck_assert_str_eq(rule(concat(2, s, "4x92x256", 1)),
                   RULE("([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=92, k=256} "
                        "need_replication={j}"));
  sp_value *x = arg("4x64");
  sp_value *t[3] = {x, &slice_of(x, "2x64")->results[0], x};
  ck_assert_str_eq(rule(concat(3, t, "10x64", 0)),
                   RULE("([i, j], [i, j], [i, j])->([i, j]) {i=10, j=64} permutation={i}"));
}
END_TEST

START_TEST(concatenate_conservative_drops_the_concat_dim_factor) {
  sp_op *op = mk("stablehlo.concatenate", "4x3x256;4x5x256", "4x8x256");
  set_int(op, "dimension", 1);
  ck_assert_str_eq(rule_opts(op, &conservative, NULL),
                   RULE("([i, k, j], [i, l, j])->([i, m, j]) {i=4, j=256, k=1, l=1, m=1}"));
}
END_TEST

/* ------------------------------------------------------------------ slices */

START_TEST(slice_and_pad_changed_dims_are_permutations_blocked_when_conservative) {
  sp_op *op = mk("stablehlo.slice", "32x4x8", "32x1x2");
  set_ints(op, "start_indices", "0,1,4");
  set_ints(op, "limit_indices", "32,2,8");
  set_ints(op, "strides", "1,1,2");
  ck_assert_str_eq(rule(op), RULE("([i, j, k])->([i, j, k]) {i=32, j=4, k=8} "
                                  "permutation={j, k}"));
  ck_assert_str_eq(rule_opts(op, &conservative, NULL),
                   RULE("([i, j, k])->([i, j, k]) {i=32, j=4, k=8} permutation={j, k} "
                        "blocked_propagation={j, k}"));
  op = mk("stablehlo.pad", "28x28x16;-", "30x26x16");
  set_ints(op, "edge_padding_low", "1,-1,0");
  set_ints(op, "edge_padding_high", "1,-1,0");
  set_ints(op, "interior_padding", "0,0,0");
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [])->([i, j, k]) {i=28, j=28, k=16} "
                                  "permutation={i, j}"));
}
END_TEST

START_TEST(dynamic_slice_changed_dims_need_replication_and_are_blocked) {
  sp_op *op = mk("stablehlo.dynamic_slice", "32x4x8;-;-;-", "32x1x2");
  set_ints(op, "slice_sizes", "32,1,2");
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [], [], [])->([i, j, k]) {i=32, j=4, k=8} "
                                  "need_replication={j, k} blocked_propagation={j, k}"));
}
END_TEST

START_TEST(dynamic_update_slice_update_factor_depends_on_constant_starts) {
  sp_op *op = mk("stablehlo.dynamic_update_slice", "32x4x8;32x1x2;-;-;-", "32x4x8");
  ck_assert_str_eq(rule(op), RULE("([i, j, l], [i, k, m], [], [], [])->([i, j, l]) "
                                  "{i=32, j=4, k=1, l=8, m=2} need_replication={k, m}"));
  sp_type *s = ty("");
  sp_op *c1 = sp_op_create(A, "stablehlo.constant", 0, NULL, 1, &s, 0);
  sp_op *c2 = sp_op_create(A, "sdy.constant", 0, NULL, 1, &s, 0);
  sp_value *ops[5] = {arg("32x4x8"), arg("32x1x2"), &c1->results[0], &c1->results[0],
                      &c2->results[0]};
  sp_type *t = ty("32x4x8");
  op = sp_op_create(A, "stablehlo.dynamic_update_slice", 5, ops, 1, &t, 0);
  ck_assert_str_eq(rule(op), RULE("([i, j, l], [i, k, m], [], [], [])->([i, j, l]) "
                                  "{i=32, j=4, k=1, l=8, m=2}"));
}
END_TEST

/* ------------------------------------------------------------------ dot */

START_TEST(dot_orders_free_dims_then_contracting) {
  ck_assert_str_eq(rule(mk("stablehlo.dot", "32;32", "-")),
                   RULE("([i], [i])->([]) {i=32} reduction={i}"));
  ck_assert_str_eq(rule(mk("stablehlo.dot", "32;32x16", "16")),
                   RULE("([j], [j, i])->([i]) {i=16, j=32} reduction={j}"));
  ck_assert_str_eq(rule(mk("stablehlo.dot", "8x32;32", "8")),
                   RULE("([i, j], [j])->([i]) {i=8, j=32} reduction={j}"));
  ck_assert_str_eq(rule(mk("stablehlo.dot", "8x32;32x16", "8x16")),
                   RULE("([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}"));
}
END_TEST

START_TEST(dot_general_orders_batch_lhs_rhs_then_contracting) {
  sp_op *op = mk("stablehlo.dot_general", "8x32;32x16", "8x16");
  set_ints(op, "lhs_contracting_dimensions", "1");
  set_ints(op, "rhs_contracting_dimensions", "0");
  ck_assert_str_eq(rule(op), RULE("([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}"));
  op = mk("stablehlo.dot_general", "4x8x32;4x32x16", "4x8x16");
  set_ints(op, "lhs_batching_dimensions", "0");
  set_ints(op, "rhs_batching_dimensions", "0");
  set_ints(op, "lhs_contracting_dimensions", "2");
  set_ints(op, "rhs_contracting_dimensions", "1");
  ck_assert_str_eq(rule(op), RULE("([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=16, l=32} "
                                  "reduction={l}"));
  op = mk("stablehlo.dot_general", "2x4x8x4x64x32;16x32x64x4x2", "2x4x8x4x16");
  set_ints(op, "lhs_batching_dimensions", "0,1");
  set_ints(op, "rhs_batching_dimensions", "4,3");
  set_ints(op, "lhs_contracting_dimensions", "5,4");
  set_ints(op, "rhs_contracting_dimensions", "1,2");
  ck_assert_str_eq(rule(op), RULE("([i, j, k, l, o, n], [m, n, o, j, i])->([i, j, k, l, m]) "
                                  "{i=2, j=4, k=8, l=4, m=16, n=32, o=64} reduction={n, o}"));
}
END_TEST

START_TEST(dot_general_rejects_inconsistent_dimension_numbers) {
  sp_op *op = mk("stablehlo.dot_general", "8x32;32x16", "8x16");
  set_ints(op, "lhs_contracting_dimensions", "2");
  set_ints(op, "rhs_contracting_dimensions", "0");
  ck_assert_ptr_nonnull(strstr(rule(op), "lhs contracting dim 2 is out of range for rank 2"));
  op = mk("stablehlo.dot_general", "8x32;16x16", "8x16");
  set_ints(op, "lhs_contracting_dimensions", "1");
  set_ints(op, "rhs_contracting_dimensions", "0");
  ck_assert_ptr_nonnull(strstr(rule(op), "contracting dims 1 x 0 differ in size"));
  op = mk("stablehlo.dot_general", "8x32;32x16", "8x16x2");
  set_ints(op, "lhs_contracting_dimensions", "1");
  set_ints(op, "rhs_contracting_dimensions", "0");
  ck_assert_ptr_nonnull(strstr(rule(op), "result rank 3, expected 2"));
}
END_TEST

/* ------------------------------------------------------------------ reshape */

static sp_op *reshape(const char *in, const char *out) {
  return mk("stablehlo.reshape", in, out);
}

START_TEST(reshape_merge_and_split_build_compound_factors) {
  ck_assert_str_eq(rule(reshape("2x4", "8")), RULE("([i, j])->([ij]) {i=2, j=4}"));
  ck_assert_str_eq(rule(reshape("8", "2x4")), RULE("([ij])->([i, j]) {i=2, j=4}"));
  ck_assert_str_eq(rule(reshape("4x12", "4x2x3x2")),
                   RULE("([i, jkl])->([i, j, k, l]) {i=4, j=2, k=3, l=2}"));
  ck_assert_str_eq(rule(reshape("8x4x5", "2x16x5")),
                   RULE("([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}"));
}
END_TEST

START_TEST(reshape_2x4x32_to_8x32_and_back_from_the_seed) {
  ck_assert_str_eq(rule(reshape("2x4x32", "8x32")),
                   RULE("([i, j, k])->([ij, k]) {i=2, j=4, k=32}"));
  ck_assert_str_eq(rule(reshape("8x32", "2x4x32")),
                   RULE("([ij, k])->([i, j, k]) {i=2, j=4, k=32}"));
}
END_TEST

START_TEST(reshape_8x4_to_2x16_builds_compound_factors) {
  /* ((ij), k) -> (i, (jk)) */
  ck_assert_str_eq(rule(reshape("8x4", "2x16")), RULE("([ij, k])->([i, jk]) {i=2, j=4, k=4}"));
}
END_TEST

START_TEST(reshape_swaps_use_the_gcd_walk) {
  ck_assert_str_eq(rule(reshape("3x2", "2x3")), RULE("([i, l])->([j, k]) {i=3, j=2, k=3, l=2}"));
  ck_assert_str_eq(rule(reshape("6x4", "4x6")),
                   RULE("([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}"));
  ck_assert_str_eq(rule(reshape("5x2x5x3", "5x3x5x2")),
                   RULE("([i, j, l, n])->([i, k, m, o]) {i=5, j=2, k=3, l=5, m=5, n=3, o=2}"));
  ck_assert_str_eq(rule(reshape("2x3x8", "3x4x4")),
                   RULE("([i, k, mn])->([j, lm, n]) {i=2, j=3, k=3, l=2, m=2, n=4}"));
  ck_assert_str_eq(rule(reshape("3x4x4", "2x3x8")),
                   RULE("([i, lm, n])->([j, k, mn]) {i=3, j=2, k=3, l=2, m=2, n=4}"));
  ck_assert_str_eq(rule(reshape("4x7x5x8", "14x10x8")),
                   RULE("([ij, l, n, o])->([ik, mn, o]) {i=2, j=2, k=7, l=7, m=2, n=5, o=8}"));
}
END_TEST

START_TEST(reshape_size_one_dims_get_private_factors_input_first) {
  ck_assert_str_eq(rule(reshape("1x1", "-")), RULE("([i, j])->([]) {i=1, j=1}"));
  ck_assert_str_eq(rule(reshape("1x8x4", "8x1x4x1")),
                   RULE("([i, j, l])->([j, k, l, m]) {i=1, j=8, k=1, l=4, m=1}"));
  ck_assert_str_eq(rule(reshape("8x4", "32x1")), RULE("([i, j])->([ij, k]) {i=8, j=4, k=1}"));
  ck_assert_str_eq(rule(reshape("32x1", "8x4")), RULE("([ij, k])->([i, j]) {i=8, j=4, k=1}"));
  ck_assert_str_eq(rule(reshape("32", "8x1x4")), RULE("([ik])->([i, j, k]) {i=8, j=1, k=4}"));
}
END_TEST

START_TEST(reshape_zero_elements_has_no_rule_and_mismatch_is_an_error) {
  ck_assert_str_eq(rule(reshape("4x0", "0x8")), "NONE");
  ck_assert_ptr_nonnull(strstr(rule(reshape("4x3", "5x2")),
                               "operand has 12 elements but result has 10"));
}
END_TEST

START_TEST(reshape_of_large_prime_products_terminates) {
  /* 2^40 * 3 against 3 * 2^40, split differently: the walk must stay logarithmic. */
  const char *r = rule(reshape("1099511627776x3", "3x1024x1073741824"));
  ck_assert_str_eq(r, RULE("([i, m])->([j, k, l]) {i=1099511627776, j=3, k=1024, l=1073741824, "
                           "m=3}"));
}
END_TEST

/* ------------------------------------------------------------------ convolution */

static sp_op *conv(const char *lhs, const char *rhs, const char *out, int64_t bgc,
                   int64_t fgc) {
  char operands[128];
  snprintf(operands, sizeof operands, "%s;%s", lhs, rhs);
  sp_op *op = mk("stablehlo.convolution", operands, out);
  /* dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] */
  set_int(op, "input_batch_dimension", 0);
  set_int(op, "input_feature_dimension", 3);
  set_ints(op, "input_spatial_dimensions", "1,2");
  set_int(op, "kernel_input_feature_dimension", 2);
  set_int(op, "kernel_output_feature_dimension", 3);
  set_ints(op, "kernel_spatial_dimensions", "0,1");
  set_int(op, "output_batch_dimension", 0);
  set_int(op, "output_feature_dimension", 3);
  set_ints(op, "output_spatial_dimensions", "1,2");
  set_ints(op, "window_strides", "2,2");
  set_ints(op, "padding", "0,1,0,1");
  set_int(op, "batch_group_count", bgc);
  set_int(op, "feature_group_count", fgc);
  return op;
}

START_TEST(convolution_spatial_dims_split_into_windows_and_window_size) {
  ck_assert_str_eq(rule(conv("2x224x224x192", "3x3x192x64", "2x112x112x64", 1, 1)),
                   RULE("([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) {i=2, j=112, k=2, "
                        "l=112, m=2, n=192, o=64} reduction={k, m, n} permutation={j, l}"));
  ck_assert_str_eq(rule(conv("2x224x224x192", "112x112x192x64", "2x57x57x64", 1, 1)),
                   RULE("([i, jk, lm, n], [j, l, n, o])->([i, k, m, o]) {i=2, j=112, k=2, "
                        "l=112, m=2, n=192, o=64} reduction={j, l, n} permutation={k, m}"));
}
END_TEST

START_TEST(convolution_group_counts_add_group_factors) {
  ck_assert_str_eq(rule(conv("8x224x224x192", "3x3x192x256", "2x112x112x256", 4, 1)),
                   RULE("([ij, kl, mn, o], [l, n, o, ip])->([j, k, m, ip]) {i=4, j=2, k=112, "
                        "l=2, m=112, n=2, o=192, p=64} reduction={l, n, o} permutation={k, m}"));
  ck_assert_str_eq(rule(conv("4x224x224x192", "3x3x192x256", "1x112x112x256", 4, 1)),
                   RULE("([i, kl, mn, o], [l, n, o, ip])->([j, k, m, ip]) {i=4, j=1, k=112, "
                        "l=2, m=112, n=2, o=192, p=64} reduction={l, n, o} permutation={k, m}"));
  ck_assert_str_eq(rule(conv("8x224x224x192", "3x3x12x256", "8x112x112x256", 1, 16)),
                   RULE("([i, jk, lm, no], [k, m, o, np])->([i, j, l, np]) {i=8, j=112, k=2, "
                        "l=112, m=2, n=16, o=12, p=16} reduction={k, m, o} permutation={j, l}"));
  ck_assert_str_eq(rule(conv("8x224x224x16", "3x3x1x256", "8x112x112x256", 1, 16)),
                   RULE("([i, jk, lm, n], [k, m, o, np])->([i, j, l, np]) {i=8, j=112, k=2, "
                        "l=112, m=2, n=16, o=1, p=16} reduction={k, m, o} permutation={j, l}"));
  ck_assert_str_eq(rule(conv("8x224x224x192", "3x3x12x16", "8x112x112x16", 1, 16)),
                   RULE("([i, jk, lm, no], [k, m, o, n])->([i, j, l, n]) {i=8, j=112, k=2, "
                        "l=112, m=2, n=16, o=12} reduction={k, m, o} permutation={j, l}"));
}
END_TEST

START_TEST(convolution_conservative_has_no_spatial_factors) {
  ck_assert_str_eq(rule_opts(conv("2x224x224x192", "3x3x192x64", "2x112x112x64", 1, 1),
                             &conservative, NULL),
                   RULE("([i, l, m, j], [n, o, j, k])->([i, p, q, k]) {i=2, j=192, k=64, l=1, "
                        "m=1, n=1, o=1, p=1, q=1} reduction={j}"));
}
END_TEST

/* ------------------------------------------------------------------ gather / scatter */

START_TEST(gather_offset_batch_collapsed_and_index_vector_dims) {
  sp_op *op = mk("stablehlo.gather", "3x4x2x5;2x3x3", "2x3x2x2x1");
  set_ints(op, "offset_dims", "2,3,4");
  set_ints(op, "collapsed_slice_dims", "0");
  set_ints(op, "start_index_map", "1,0,3");
  set_int(op, "index_vector_dim", 2);
  set_ints(op, "slice_sizes", "1,2,2,1");
  ck_assert_str_eq(rule(op), RULE("([o, k, l, m], [i, j, p])->([i, j, k, l, n]) {i=2, j=3, "
                                  "k=4, l=2, m=5, n=1, o=3, p=3} reduction={m, o} "
                                  "need_replication={k, n, p} blocked_propagation={k}"));
  op = mk("stablehlo.gather", "3x1x2;2x3x2", "2x3x2x2");
  set_ints(op, "offset_dims", "3");
  set_ints(op, "collapsed_slice_dims", "0,1");
  set_ints(op, "start_index_map", "1");
  set_int(op, "index_vector_dim", 3);
  set_ints(op, "slice_sizes", "1,1,2");
  ck_assert_str_eq(rule(op), RULE("([m, n, l], [i, j, k])->([i, j, k, l]) {i=2, j=3, k=2, l=2, "
                                  "m=3, n=1} reduction={m} need_replication={n}"));
}
END_TEST

START_TEST(gather_explicit_batching_dims_map_the_input) {
  sp_op *op = mk("stablehlo.gather", "5x3x7x4;7x5x3x2", "7x5x3x2");
  set_ints(op, "offset_dims", "3");
  set_ints(op, "collapsed_slice_dims", "1");
  set_ints(op, "operand_batching_dims", "0,2");
  set_ints(op, "start_indices_batching_dims", "1,0");
  set_ints(op, "start_index_map", "1,3");
  set_int(op, "index_vector_dim", 3);
  set_ints(op, "slice_sizes", "1,1,1,2");
  ck_assert_str_eq(rule(op), RULE("([j, m, i, l], [i, j, k, n])->([i, j, k, l]) {i=7, j=5, k=3, "
                                  "l=4, m=3, n=2} reduction={m} need_replication={l, n} "
                                  "blocked_propagation={l}"));
  op = mk("stablehlo.gather", "5x3x7x4;7x2x5x3", "7x5x3x2");
  set_ints(op, "offset_dims", "3");
  set_ints(op, "collapsed_slice_dims", "1");
  set_ints(op, "operand_batching_dims", "0,2");
  set_ints(op, "start_indices_batching_dims", "2,0");
  set_ints(op, "start_index_map", "1,3");
  set_int(op, "index_vector_dim", 1);
  set_ints(op, "slice_sizes", "1,1,1,2");
  ck_assert_str_eq(rule(op), RULE("([j, m, i, l], [i, n, j, k])->([i, j, k, l]) {i=7, j=5, k=3, "
                                  "l=4, m=3, n=2} reduction={m} need_replication={l, n} "
                                  "blocked_propagation={l}"));
}
END_TEST

/* A scatter whose update computation applies `kinds` (one op per input). */
static sp_op *scatter(const char *operands, const char *results, int n, const char *const *kinds) {
  sp_op *op = mk_regions("stablehlo.scatter", operands, results, 1);
  sp_block *blk = sp_region_add_block(A, &op->regions[0]);
  sp_type *s = ty("");
  sp_value *args[8];
  for (int i = 0; i < 2 * n; i++) args[i] = sp_block_add_arg(A, blk, s);
  sp_value *outs[4];
  for (int i = 0; i < n; i++) {
    sp_value *pair[2] = {args[i], args[n + i]};
    sp_op *o = sp_op_create(A, kinds[i], 2, pair, 1, &s, 0);
    sp_block_append(blk, o);
    outs[i] = &o->results[0];
  }
  sp_block_append(blk, sp_op_create(A, "stablehlo.return", n, outs, 0, NULL, 0));
  return op;
}

static void scatter_dims(sp_op *op, const char *window, const char *inserted, const char *to) {
  set_ints(op, "update_window_dims", window);
  set_ints(op, "inserted_window_dims", inserted);
  set_ints(op, "scatter_dims_to_operand_dims", to);
  set_int(op, "index_vector_dim", 2);
}

START_TEST(scatter_implicit_batch_dims_are_reductions_for_an_add_body) {
  static const char *const add[2] = {"stablehlo.add", "stablehlo.add"};
  sp_op *op = scatter("3x4x2;2x3x2;2x3x2x2", "3x4x2", 1, add);
  scatter_dims(op, "2,3", "0", "1,0");
  ck_assert_str_eq(rule(op), RULE("([n, k, m], [i, j, o], [i, j, l, m])->([n, k, m]) {i=2, j=3, "
                                  "k=4, l=2, m=2, n=3, o=2} reduction={i, j} "
                                  "need_replication={k, l, o}"));
  op = scatter("3x4x2;2x3;2x3x2x2", "3x4x2", 1, add);
  scatter_dims(op, "2,3", "0", "0");
  ck_assert_str_eq(rule(op), RULE("([n, k, m], [i, j], [i, j, l, m])->([n, k, m]) {i=2, j=3, "
                                  "k=4, l=2, m=2, n=3} reduction={i, j} need_replication={k, l}"));
  op = scatter("4x2x3;2x3x2;2x3x2x2", "4x2x3", 1, add);
  scatter_dims(op, "2,3", "2", "1,0");
  ck_assert_str_eq(rule(op), RULE("([k, m, n], [i, j, o], [i, j, l, m])->([k, m, n]) {i=2, j=3, "
                                  "k=4, l=2, m=2, n=3, o=2} reduction={i, j} "
                                  "need_replication={k, l, o}"));
  op = scatter("3x4x2;3x4x2;2x3x2;2x3x2x2;2x3x2x2", "3x4x2;3x4x2", 2, add);
  scatter_dims(op, "2,3", "0", "1,0");
  ck_assert_str_eq(rule(op), RULE("([n, k, m], [n, k, m], [i, j, o], [i, j, l, m], [i, j, l, m])"
                                  "->([n, k, m], [n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} "
                                  "reduction={i, j} need_replication={k, l, o}"));
}
END_TEST

START_TEST(scatter_mixed_body_makes_batch_dims_need_replication) {
  static const char *const mixed[2] = {"stablehlo.add", "stablehlo.multiply"};
  sp_op *op = scatter("3x4x2;3x4x2;2x3x2;2x3x2x2;2x3x2x2", "3x4x2;3x4x2", 2, mixed);
  scatter_dims(op, "2,3", "0", "1,0");
  ck_assert_str_eq(rule(op), RULE("([n, k, m], [n, k, m], [i, j, o], [i, j, l, m], [i, j, l, m])"
                                  "->([n, k, m], [n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} "
                                  "need_replication={i, j, k, l, o}"));
}
END_TEST

START_TEST(scatter_explicit_batching_dims_are_pass_through) {
  static const char *const add[1] = {"stablehlo.add"};
  sp_op *op = scatter("5x3x7x4;7x5x3x2;7x5x3x2", "5x3x7x4", 1, add);
  set_ints(op, "update_window_dims", "3");
  set_ints(op, "inserted_window_dims", "1");
  set_ints(op, "input_batching_dims", "0,2");
  set_ints(op, "scatter_indices_batching_dims", "1,0");
  set_ints(op, "scatter_dims_to_operand_dims", "1,3");
  set_int(op, "index_vector_dim", 3);
  ck_assert_str_eq(rule(op), RULE("([j, n, i, l], [i, j, k, o], [i, j, k, m])->([j, n, i, l]) "
                                  "{i=7, j=5, k=3, l=4, m=2, n=3, o=2} reduction={k} "
                                  "need_replication={l, m, o}"));
}
END_TEST

START_TEST(gather_with_inconsistent_dims_is_an_error) {
  sp_op *op = mk("stablehlo.gather", "3x4;2x1", "2x4");
  set_ints(op, "offset_dims", "1,2");
  set_int(op, "index_vector_dim", 1);
  ck_assert_ptr_nonnull(strstr(rule(op), "offset_dims 2 is out of range for rank 2"));
  op = mk("stablehlo.gather", "3x4;2x1", "2x4");
  set_ints(op, "offset_dims", "1");
  set_int(op, "index_vector_dim", 1);
  ck_assert_ptr_nonnull(strstr(rule(op), "1 window dims but 2 input dims to pair with"));
}
END_TEST

/* ------------------------------------------------------------------ windows */

START_TEST(reduce_window_dims_with_real_windows_are_permutations) {
  sp_op *op = mk("stablehlo.reduce_window", "48x48x3;48x48x3;-;-", "16x48x3;16x48x3");
  set_ints(op, "window_dimensions", "3,1,1");
  set_ints(op, "window_strides", "3,1,1");
  set_ints(op, "padding", "0,0,2,-2,0,0");
  ck_assert_str_eq(rule(op), RULE("([i, j, k], [i, j, k], [], [])->([i, j, k], [i, j, k]) "
                                  "{i=16, j=48, k=3} permutation={i, j}"));
  ck_assert_str_eq(rule_opts(op, &conservative, NULL),
                   RULE("([i, j, k], [i, j, k], [], [])->([i, j, k], [i, j, k]) "
                        "{i=16, j=48, k=3} permutation={i, j} blocked_propagation={i, j}"));
  op = mk("stablehlo.reduce_window", "8x16;-", "8x16");
  set_ints(op, "window_dimensions", "1,1");
  set_ints(op, "padding", "-1,1,2,-2");
  ck_assert_str_eq(rule(op), RULE("([i, j], [])->([i, j]) {i=8, j=16} permutation={i, j}"));
  op = mk("stablehlo.reduce_window", "8x16;-", "8x16");
  set_ints(op, "window_dimensions", "1,1");
  set_ints(op, "padding", "0,0,0,0");
  ck_assert_str_eq(rule(op), RULE("([i, j], [])->([i, j]) {i=8, j=16}"));
}
END_TEST

START_TEST(select_and_scatter_adds_source_only_factors_for_windowed_dims) {
  sp_op *op = mk("stablehlo.select_and_scatter", "10x24x24x64;9x12x12x64;-", "10x24x24x64");
  set_ints(op, "window_dimensions", "1,2,2,1");
  set_ints(op, "window_strides", "1,2,2,1");
  set_ints(op, "padding", "-1,0,0,0,0,0,0,0");
  ck_assert_str_eq(rule(op), RULE("([j, l, n, o], [i, k, m, o], [])->([j, l, n, o]) {i=9, j=10, "
                                  "k=12, l=24, m=12, n=24, o=64} need_replication={i, k, m} "
                                  "permutation={j, l, n}"));
}
END_TEST

/* ------------------------------------------------------------------ collectives */

START_TEST(collectives_give_changed_dims_separate_need_replication_factors) {
  sp_op *op = mk("stablehlo.all_gather", "2x2;2x2", "2x4;2x4");
  set_int(op, "all_gather_dim", 1);
  ck_assert_str_eq(rule(op), RULE("([i, j], [i, j])->([i, k], [i, k]) {i=2, j=2, k=4} "
                                  "need_replication={j, k}"));
  op = mk("stablehlo.all_to_all", "2x4;2x4", "4x2;4x2");
  set_int(op, "split_dimension", 1);
  set_int(op, "concat_dimension", 0);
  set_int(op, "split_count", 2);
  ck_assert_str_eq(rule(op), RULE("([k, i], [k, i])->([l, j], [l, j]) {i=4, j=2, k=2, l=4} "
                                  "need_replication={i, j, k, l}"));
  op = mk("stablehlo.all_to_all", "2x4;2x4", "2x4;2x4");
  set_int(op, "split_dimension", 0);
  set_int(op, "concat_dimension", 0);
  ck_assert_str_eq(rule(op), RULE("([j, i], [j, i])->([k, i], [k, i]) {i=4, j=2, k=2} "
                                  "need_replication={j, k}"));
  op = mk("stablehlo.reduce_scatter", "2x64x1x13", "2x32x1x13");
  set_int(op, "scatter_dimension", 1);
  ck_assert_str_eq(rule(op), RULE("([i, l, j, k])->([i, m, j, k]) {i=2, j=1, k=13, l=64, m=32} "
                                  "need_replication={l, m}"));
}
END_TEST

/* ------------------------------------------------------------------ classification */

START_TEST(elementwise_and_pass_through_classification) {
  ck_assert(sp_rules_is_elementwise(mk("stablehlo.add", "8;8", "8")));
  ck_assert(sp_rules_is_elementwise(mk("stablehlo.select", "-;8;8", "8")));
  ck_assert(sp_rules_is_elementwise(mk("stablehlo.clamp", "-;8;-", "8")));
  ck_assert(sp_rules_is_elementwise(mk("stablehlo.bitcast_convert", "8x2", "8x2")));
  ck_assert(!sp_rules_is_elementwise(mk("stablehlo.bitcast_convert", "8x2", "8")));
  ck_assert(!sp_rules_is_elementwise(mk("stablehlo.reshape", "8x2", "16")));
  ck_assert(!sp_rules_is_elementwise(mk("stablehlo.all_reduce", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(mk("stablehlo.reshape", "8x2", "16")));
  ck_assert(sp_rules_is_pass_through_op(mk("stablehlo.transpose", "8x2", "2x8")));
  ck_assert(sp_rules_is_pass_through_op(mk("sdy.sharding_constraint", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(mk("sdy.reshard", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(mk("sdy.propagation_barrier", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(mk("sdy.data_flow_edge", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(mk("sdy.func_data_flow_edge", "8", "8")));
  ck_assert(sp_rules_is_pass_through_op(custom_call("MoveToHost", "8", "8")));
  ck_assert(!sp_rules_is_pass_through_op(custom_call("X64Combine", "8;8", "8")));
  ck_assert(!sp_rules_is_pass_through_op(mk("stablehlo.dot_general", "8x2;2x8", "8x8")));
  ck_assert(!sp_rules_is_pass_through_op(mk("stablehlo.broadcast_in_dim", "8", "8x2")));
  ck_assert(!sp_rules_is_pass_through_op(mk("stablehlo.dynamic_slice", "8;-", "4")));
}
END_TEST

/* ------------------------------------------------------------------ robustness */

static uint32_t rnd(uint32_t *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (*seed >> 16) & 0x7fff;
}

/* Random ops of every kind with a rule, random static shapes and attributes: the verifier
 * refuses them (naming the op), or their rule builds. The builders rely on the verifier's
 * checks (counts, ranks, dimensions in range), so a verified op never meets a rule error. */
START_TEST(random_ops_are_refused_by_the_verifier_or_get_their_rule) {
  static const char *const ops[] = {
      "stablehlo.add", "stablehlo.select", "stablehlo.clamp", "stablehlo.bitcast_convert",
      "stablehlo.broadcast_in_dim", "stablehlo.concatenate", "stablehlo.convolution",
      "stablehlo.dot", "stablehlo.dot_general", "stablehlo.dynamic_slice",
      "stablehlo.dynamic_update_slice", "stablehlo.fft", "stablehlo.gather", "stablehlo.pad",
      "stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.reshape", "stablehlo.reverse",
      "stablehlo.scatter", "stablehlo.select_and_scatter", "stablehlo.slice", "stablehlo.sort",
      "stablehlo.transpose", "stablehlo.cholesky", "stablehlo.triangular_solve",
      "stablehlo.batch_norm_inference", "stablehlo.rng_bit_generator", "stablehlo.all_gather",
      "stablehlo.all_to_all", "stablehlo.reduce_scatter", "stablehlo.all_reduce",
      "stablehlo.custom_call"};
  static const char *const targets[] = {"Eigh", "Qr", "ProductOfElementaryHouseholderReflectors",
                                        "mhlo.topk", "ApproxTopK", "X64Combine", "MoveToHost"};
  static const char *const int_attrs[] = {
      "dimension", "index_vector_dim", "input_batch_dimension", "input_feature_dimension",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "output_batch_dimension", "output_feature_dimension", "feature_group_count",
      "batch_group_count", "all_gather_dim", "split_dimension", "concat_dimension",
      "scatter_dimension", "feature_index"};
  static const char *const ints_attrs[] = {
      "dimensions", "broadcast_dimensions", "permutation", "lhs_batching_dimensions",
      "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions",
      "slice_sizes", "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map", "update_window_dims",
      "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims",
      "scatter_dims_to_operand_dims", "input_spatial_dimensions", "kernel_spatial_dimensions",
      "output_spatial_dimensions", "window_strides", "padding", "fft_length",
      "window_dimensions", "base_dilations", "window_dilations"};
  uint32_t seed = 7;
  int ok = 0, refused = 0;
  for (int iter = 0; iter < 20000; iter++) {
    char operands[256] = "", results[128] = "";
    int no = 1 + (int)(rnd(&seed) % 5), nr = 1 + (int)(rnd(&seed) % 3);
    for (int t = 0; t < no + nr; t++) {
      char *dst = t < no ? operands : results;
      size_t cap = t < no ? sizeof operands : sizeof results;
      if ((t < no && t > 0) || t > no) strncat(dst, ";", cap - strlen(dst) - 1);
      int rank = (int)(rnd(&seed) % 5);
      if (rank == 0) strncat(dst, "-", cap - strlen(dst) - 1);
      for (int d = 0; d < rank; d++) {
        char dim[16];
        snprintf(dim, sizeof dim, d ? "x%u" : "%u", rnd(&seed) % 5);
        strncat(dst, dim, cap - strlen(dst) - 1);
      }
    }
    const char *name = ops[rnd(&seed) % (sizeof ops / sizeof ops[0])];
    sp_op *op = mk_regions(name, operands, results, 0);
    if (op->kind == SP_OP_CUSTOM_CALL)
      set_str(op, "call_target_name", SP_ATTR_STR,
              targets[rnd(&seed) % (sizeof targets / sizeof targets[0])]);
    for (size_t k = 0; k < sizeof int_attrs / sizeof int_attrs[0]; k++)
      if (rnd(&seed) % 2) set_int(op, int_attrs[k], (int64_t)(rnd(&seed) % 8) - 2);
    for (size_t k = 0; k < sizeof ints_attrs / sizeof ints_attrs[0]; k++) {
      if (rnd(&seed) % 2) continue;
      char csv[64] = "";
      int n = (int)(rnd(&seed) % 5);
      for (int i = 0; i < n; i++) {
        char v[16];
        snprintf(v, sizeof v, i ? ",%d" : "%d", (int)(rnd(&seed) % 7) - 1);
        strncat(csv, v, sizeof csv - strlen(csv) - 1);
      }
      set_ints(op, ints_attrs[k], csv);
    }
    sp_err err;
    if (sp_verify_stablehlo_op(M, op, &err) != SP_OK) {
      ck_assert_msg(strstr(err.msg, "op ") != NULL, "error without the op name: %s", err.msg);
      refused++;
      continue;
    }
    const char *r = rule(op);
    ck_assert_msg(strncmp(r, "ERROR: ", 7) != 0, "iteration %d: %s (%s -> %s) verified but its "
                  "rule failed: %s", iter, name, operands, results, r);
    ok++;
  }
  /* Both outcomes occur: the generator is not trivially rejected or accepted. */
  ck_assert_int_gt(ok, 200);
  ck_assert_int_gt(refused, 1000);
}
END_TEST

static Suite *rules_suite(void) {
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("builder");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, builder_numbers_factors_in_creation_order_and_fills_unmapped_dims);
  tcase_add_test(tc, builder_skips_size_one_factor_on_a_mapped_dim_except_same_dim_helper);
  tcase_add_test(tc, builder_spills_beyond_inline_storage);
  tcase_add_test(tc, builder_rejects_more_than_max_factors);
  suite_add_tcase(s, tc);

  tc = tcase_create("registry");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, pointwise_add_maps_every_dim_including_size_one_and_zero);
  tcase_add_test(tc, pointwise_scalar_op_has_empty_mappings);
  tcase_add_test(tc, every_elementwise_op_is_pointwise);
  tcase_add_test(tc, select_and_clamp_give_scalar_operands_empty_mappings);
  tcase_add_test(tc, elementwise_op_with_mismatched_shape_is_an_error_naming_the_operand);
  tcase_add_test(tc, bitcast_convert_extra_minor_dim_needs_replication);
  tcase_add_test(tc, broadcast_in_dim_shares_equal_dims_and_splits_expanded_ones);
  tcase_add_test(tc, broadcast_in_dim_rejects_bad_dimensions);
  tcase_add_test(tc, transpose_factors_follow_result_dims);
  tcase_add_test(tc, cholesky_matrix_dims_need_replication);
  tcase_add_test(tc, batch_norm_inference_shares_the_feature_factor);
  tcase_add_test(tc, reverse_dims_are_permutations);
  tcase_add_test(tc, rng_bit_generator_state_is_blocked_and_output_result_only);
  tcase_add_test(tc, sort_dim_needs_replication_and_is_blocked_only_when_alone);
  tcase_add_test(tc, fft_dims_need_replication_and_real_ffts_block_the_last);
  tcase_add_test(tc, triangular_solve_maps_matrix_dims_per_side_and_transpose);
  tcase_add_test(tc, reduce_dims_are_reduction_factors_and_init_values_empty);
  tcase_add_test(tc, concatenate_dim_needs_replication_for_plain_operands);
  tcase_add_test(tc, concatenate_of_slices_is_a_permutation);
  tcase_add_test(tc, concatenate_conservative_drops_the_concat_dim_factor);
  tcase_add_test(tc, slice_and_pad_changed_dims_are_permutations_blocked_when_conservative);
  tcase_add_test(tc, dynamic_slice_changed_dims_need_replication_and_are_blocked);
  tcase_add_test(tc, dynamic_update_slice_update_factor_depends_on_constant_starts);
  tcase_add_test(tc, dot_orders_free_dims_then_contracting);
  tcase_add_test(tc, dot_general_orders_batch_lhs_rhs_then_contracting);
  tcase_add_test(tc, dot_general_rejects_inconsistent_dimension_numbers);
  tcase_add_test(tc, reshape_merge_and_split_build_compound_factors);
  tcase_add_test(tc, reshape_2x4x32_to_8x32_and_back_from_the_seed);
  tcase_add_test(tc, reshape_8x4_to_2x16_builds_compound_factors);
  tcase_add_test(tc, reshape_swaps_use_the_gcd_walk);
  tcase_add_test(tc, reshape_size_one_dims_get_private_factors_input_first);
  tcase_add_test(tc, reshape_zero_elements_has_no_rule_and_mismatch_is_an_error);
  tcase_add_test(tc, reshape_of_large_prime_products_terminates);
  tcase_add_test(tc, convolution_spatial_dims_split_into_windows_and_window_size);
  tcase_add_test(tc, convolution_group_counts_add_group_factors);
  tcase_add_test(tc, convolution_conservative_has_no_spatial_factors);
  tcase_add_test(tc, gather_offset_batch_collapsed_and_index_vector_dims);
  tcase_add_test(tc, gather_explicit_batching_dims_map_the_input);
  tcase_add_test(tc, scatter_implicit_batch_dims_are_reductions_for_an_add_body);
  tcase_add_test(tc, scatter_mixed_body_makes_batch_dims_need_replication);
  tcase_add_test(tc, scatter_explicit_batching_dims_are_pass_through);
  tcase_add_test(tc, gather_with_inconsistent_dims_is_an_error);
  tcase_add_test(tc, reduce_window_dims_with_real_windows_are_permutations);
  tcase_add_test(tc, select_and_scatter_adds_source_only_factors_for_windowed_dims);
  tcase_add_test(tc, collectives_give_changed_dims_separate_need_replication_factors);
  tcase_add_test(tc, elementwise_and_pass_through_classification);
  suite_add_tcase(s, tc);

  tc = tcase_create("robustness");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, random_ops_are_refused_by_the_verifier_or_get_their_rule);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(rules_suite()); }
