/*
 * test_einsum.c - JAX custom_partitioning rule strings -> OpShardingRule.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "rules/einsum.h"
#include "rules/registry.h"
#include "test_support.h"

static sp_arena *A;

static void setup(void) { A = sp_arena_new(0); }
static void teardown(void) { sp_arena_free(A); }

/* "2x1x4" -> tensor<2x1x4xf32>; "-" -> tensor<f32>. */
static sp_type *ty(const char *spec) {
  int64_t dims[16];
  int rank = 0;
  const char *p = strcmp(spec, "-") == 0 ? "" : spec;
  while (*p) {
    char *end;
    dims[rank++] = strtoll(p, &end, 10);
    p = *end == 'x' ? end + 1 : end;
  }
  return sp_type_tensor(A, rank, dims, "f32");
}

static int types(const char *list, sp_type **out) {
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) out[n++] = ty(tok);
  return n;
}

/* The printed rule for `text` on operands `ops` and results `res`, or "ERROR: msg". */
static const char *ein_opts(const char *text, const char *ops, const char *res,
                            const sp_einsum_options *opts) {
  static char buf[2048];
  sp_type *ot[16], *rt[16];
  int no = types(ops, ot), nr = types(res, rt);
  sp_rule *r = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_einsum_rule(A, text, opts, no, ot, nr, rt, &r, &err);
  if (rc != SP_OK) {
    ck_assert_ptr_null(r);
    snprintf(buf, sizeof buf, "ERROR: %s", err.msg);
    return buf;
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, r);
  snprintf(buf, sizeof buf, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

static const char *ein(const char *text, const char *ops, const char *res) {
  return ein_opts(text, ops, res, NULL);
}

#define RULE(body) "#sdy.op_sharding_rule<" body ", custom>"

static void assert_error(const char *got, const char *fragment) {
  ck_assert_msg(strncmp(got, "ERROR: ", 7) == 0 && strstr(got, fragment),
                "expected an error containing \"%s\", got \"%s\"", fragment, got);
}

/* ------------------------------------------------------------------ accepted rules */

START_TEST(matmul_rule_numbers_factors_in_order_of_appearance) {
  ck_assert_str_eq(ein("i j, j k -> i k", "8x16;16x4", "8x4"),
                   RULE("([i, j], [j, k])->([i, k]) {i=8, j=16, k=4}"));
}
END_TEST

START_TEST(multi_letter_factor_names) {
  ck_assert_str_eq(ein("batch seq hidden, hidden out_1 -> batch seq out_1", "2x128x64;64x32",
                       "2x128x32"),
                   RULE("([i, j, k], [k, l])->([i, j, l]) {i=2, j=128, k=64, l=32}"));
}
END_TEST

START_TEST(leading_ellipsis_becomes_shared_batch_factors) {
  ck_assert_str_eq(ein("... i j, ... j k -> ... i k", "2x3x16x8;2x3x8x16", "2x3x16x16"),
                   RULE("([i, j, k, l], [i, j, l, m])->([i, j, k, m]) "
                        "{i=2, j=3, k=16, l=8, m=16}"));
  /* Batch dims align from the right: the rhs has only the last one. */
  ck_assert_str_eq(ein("... i j, ... j k -> ... i k", "5x2x3x4;2x4x6", "5x2x3x6"),
                   RULE("([i, j, k, l], [j, l, m])->([i, j, k, m]) {i=5, j=2, k=3, l=4, m=6}"));
  /* "..." standing for no dims at all, and the U+2026 spelling. */
  ck_assert_str_eq(ein("... i, ... i -> ... i", "8;8", "8"), RULE("([i], [i])->([i]) {i=8}"));
  ck_assert_str_eq(ein("\xe2\x80\xa6 i -> \xe2\x80\xa6 i", "2x8", "2x8"),
                   RULE("([i, j])->([i, j]) {i=2, j=8}"));
}
END_TEST

START_TEST(compound_factor_sizes_come_from_whole_dims_given_sizes_or_inference) {
  /* Whole dims elsewhere give a and b. */
  ck_assert_str_eq(ein("(a b) c -> a b c", "8x32", "2x4x32"),
                   RULE("([ij, k])->([i, j, k]) {i=2, j=4, k=32}"));
  /* a given through the options, b inferred from 8 / 2. */
  sp_einsum_size sizes[1] = {{"a", 2}};
  sp_einsum_options o = {.nsizes = 1, .sizes = sizes};
  ck_assert_str_eq(ein_opts("(a b) c -> (a b) c", "8x32", "8x32", &o),
                   RULE("([ij, k])->([ij, k]) {i=2, j=4, k=32}"));
  /* Given inline; the result swaps the order inside the compound dim. */
  ck_assert_str_eq(ein("(a b) c -> (b a) c {a=2}", "8x32", "8x32"),
                   RULE("([ij, k])->([ji, k]) {i=2, j=4, k=32}"));
  /* Parentheses around a single factor are a whole dim. */
  ck_assert_str_eq(ein("(i) -> i", "8", "8"), RULE("([i])->([i]) {i=8}"));
}
END_TEST

START_TEST(kinds_from_options_and_inline_lists) {
  ck_assert_str_eq(ein("i j, j k -> i k reduction={j}", "8x16;16x4", "8x4"),
                   RULE("([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} reduction={j}"));
  static const char *const nr[1] = {"k"};
  static const char *const perm[1] = {"i"};
  static const char *const blk[2] = {"i", "k"};
  sp_einsum_options o = {.nneed_replication = 1, .need_replication = nr, .npermutation = 1,
                         .permutation = perm, .nblocked = 2, .blocked = blk};
  ck_assert_str_eq(ein_opts("i j, j k -> i k", "8x16;16x4", "8x4", &o),
                   RULE("([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} need_replication={k} "
                        "permutation={i} blocked_propagation={i, k}"));
  ck_assert_str_eq(ein("i -> i need_replication={} blocked_propagation={i}", "8", "8"),
                   RULE("([i])->([i]) {i=8} blocked_propagation={i}"));
}
END_TEST

START_TEST(scalar_mappings_are_empty) {
  ck_assert_str_eq(ein("i, -> i", "8;-", "8"), RULE("([i], [])->([i]) {i=8}"));
}
END_TEST

/* The einsum rule of an op equals the registry's rule (up to the custom flag) when the
 * factors are written in the registry's order. */
static void assert_matches_registry(const char *name, const char *ops, const char *res,
                                    const char *dims_attr, const char *rule_text) {
  sp_module *m = sp_module_new(NULL);
  sp_type *ot[4], *rt[4];
  int no = types(ops, ot), nr = types(res, rt);
  sp_value *v[4];
  for (int i = 0; i < no; i++)
    v[i] = &sp_op_create(m->arena, "test.arg", 0, NULL, 1, &ot[i], 0)->results[0];
  sp_op *op = sp_op_create(m->arena, name, no, v, nr, rt, 0);
  if (dims_attr) {
    int64_t *d = sp_arena_alloc(m->arena, sizeof *d);
    d[0] = 1;
    sp_attr at = {.name = dims_attr, .kind = SP_ATTR_INTS, .u.ints = {1, d}};
    ck_assert_int_eq(sp_attrs_set(m->arena, &op->attrs, &at), SP_OK);
  }
  sp_rule *reg, *mine;
  ck_assert_int_eq(sp_rules_for_op(m->arena, op, NULL, &reg, NULL, NULL), SP_OK);
  ck_assert_int_eq(sp_einsum_rule_for_op(A, rule_text, NULL, op, &mine, NULL), SP_OK);
  ck_assert(mine->custom);
  ck_assert(!sp_rule_equal(mine, reg));
  mine->custom = false;
  ck_assert(sp_rule_equal(mine, reg));
  sp_module_free(m);
}

START_TEST(einsum_rules_match_the_registry_in_registry_order) {
  assert_matches_registry("stablehlo.add", "8x16;8x16", "8x16", NULL, "i j, i j -> i j");
  assert_matches_registry("stablehlo.reduce", "8x16;-", "8", "dimensions",
                          "i j, -> i reduction={j}");
  assert_matches_registry("stablehlo.select", "-;4x2;4x2", "4x2", NULL, ", ... , ... -> ...");
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(syntax_errors_name_the_column) {
  assert_error(ein("i j, j k - i k", "8x16;16x4", "8x4"),
               "column 10: expected a factor name, '(', ',' or '->' but found '-'");
  assert_error(ein("", "8", "8"), "column 1: expected a factor name, '(', ',' or '->' but the "
                                  "rule ends");
  assert_error(ein("(a b -> a b", "8", "2x4"), "column 6: expected a factor name or ')'");
  assert_error(ein("i ... j -> i j", "2x3x4", "2x4"),
               "column 3: '...' may only start a tensor's mapping");
  assert_error(ein("i -> i {i=}", "8", "8"), "column 11: expected a size but found '}'");
  assert_error(ein("i -> i foo={i}", "8", "8"), "column 8: expected reduction=");
  assert_error(ein("i -> i {i=99999999999999999999}", "8", "8"), "size overflows 64 bits");
  assert_error(ein("1 -> 1", "8", "8"), "column 1: expected a factor name");
}
END_TEST

START_TEST(shape_errors_name_tensor_and_dim) {
  assert_error(ein("i j -> j i", "8x16", "8x16"),
               "factor 'j' is 16 in operand 0 dim 1 but 8 in result 0 dim 0");
  assert_error(ein("i j -> i", "8x16x2", "8"),
               "operand 0 has rank 3 but its mapping (column 1) has 2 dims");
  assert_error(ein("... i j -> i", "8", "8"), "operand 0 has rank 1 but its mapping");
  assert_error(ein("(a b) c -> a b c", "8x32", "2x3x32"),
               "column 1: operand 0 dim 0 has size 8 but its factors multiply to 6");
  assert_error(ein("(a b) -> (a b)", "8", "8"), "the size of factor 'a' is needed");
  assert_error(ein("i i -> i", "8x8", "8"), "factor 'i' appears twice in operand 0");
  assert_error(ein("i, j -> i", "8", "8"),
               "sharding rule maps 2 operands and 1 results but the op has 1 and 1");
  assert_error(ein("(a b) -> (a b) {a=1}", "8", "8"),
               "factor 'a' has size 1 and may not share operand 0 dim 0 with other factors");
  assert_error(ein("i -> i {i=4}", "8", "8"), "factor 'i' is given size 4 but is 8 elsewhere");
  assert_error(ein("i -> i {q=4}", "8", "8"), "column 9: a size names factor 'q'");
  assert_error(ein("... i, ... i -> ... i", "2x8;3x8", "2x8"),
               "batch dim 1 from the right of '...' is 2 in operand 0 dim 0 but 3 in operand 1 "
               "dim 0");
}
END_TEST

START_TEST(kind_errors) {
  assert_error(ein("i -> i reduction={q}", "8", "8"), "reduction names factor 'q'");
  assert_error(ein("i, i -> i reduction={i}", "8;8", "8"),
               "factor 'i' is a reduction factor but appears in result 0");
  assert_error(ein("i j -> i permutation={j} need_replication={j}", "8x4", "8"),
               "factor 'j' is given two kinds");
}
END_TEST

START_TEST(random_rule_text_never_crashes) {
  /* Deterministic garbage from the rule alphabet: every input must give OK or an error. */
  static const char alphabet[] = "ij k(),.->{}=12 _…reduction";
  uint32_t seed = 12345;
  for (int iter = 0; iter < 3000; iter++) {
    char text[48];
    int n = (int)(seed % 40);
    for (int i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    text[n] = '\0';
    seed = seed * 1103515245u + 12345u;
    sp_type *ot[1] = {ty("8x4")}, *rt[1] = {ty("8x4")};
    sp_rule *r = NULL;
    sp_err err;
    sp_err_clear(&err);
    int rc = sp_einsum_rule(A, text, NULL, 1, ot, 1, rt, &r, &err);
    if (rc == SP_OK)
      ck_assert_ptr_nonnull(r);
    else
      ck_assert_msg(err.msg[0] != '\0', "no message for \"%s\"", text);
  }
}
END_TEST

static Suite *einsum_suite(void) {
  Suite *s = suite_create("einsum");
  TCase *tc = tcase_create("einsum");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, matmul_rule_numbers_factors_in_order_of_appearance);
  tcase_add_test(tc, multi_letter_factor_names);
  tcase_add_test(tc, leading_ellipsis_becomes_shared_batch_factors);
  tcase_add_test(tc, compound_factor_sizes_come_from_whole_dims_given_sizes_or_inference);
  tcase_add_test(tc, kinds_from_options_and_inline_lists);
  tcase_add_test(tc, scalar_mappings_are_empty);
  tcase_add_test(tc, einsum_rules_match_the_registry_in_registry_order);
  tcase_add_test(tc, syntax_errors_name_the_column);
  tcase_add_test(tc, shape_errors_name_tensor_and_dim);
  tcase_add_test(tc, kind_errors);
  tcase_add_test(tc, random_rule_text_never_crashes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(einsum_suite()); }
