/*
 * test_prop_memo.c - the shortcuts a propagation session takes and must not be seen through:
 * remembered op outcomes (prop_memo.h), rules found again by op signature and interned
 * (rule_cache.h), and, end to end, generated training graphs propagated with the shortcuts
 * print exactly as when everything is recomputed (a session that records conflicts takes no
 * outcome from the memo).
 */
#include <check.h>
#include <string.h>

#include "factor_fixtures.h"
#include "gen/model_gen.h"
#include "ir/ir.h"
#include "mlir/mlir.h"
#include "propagation/conflict.h"
#include "propagation/prop_memo.h"
#include "propagation/propagate.h"
#include "propagation/rule_cache.h"
#include "propagation/user_priority.h"
#include "test_support.h"

static sp_arena *A;
static void setup(void) { A = sp_arena_new(0); }
static void teardown(void) { sp_arena_free(A); }

/* ------------------------------------------------------------------ the memo */

typedef struct memo_case {
  const sp_rule *rule;
  sp_mesh *mesh;
  sp_sharding *in[3];
} memo_case;

static memo_case add_case(void) {
  memo_case c;
  c.rule = fx_rule(A, "([i, j], [i, j])->([i, j])", (int64_t[]){8, 4});
  c.mesh = fx_mesh(A, "a=2, b=2");
  c.in[0] = fx_sharding(A, "{a, ?}, {?}", NULL);
  c.in[1] = NULL;
  c.in[2] = fx_sharding(A, "{?}, {b}", NULL);
  return c;
}

static sp_prop_memo_key key_of(sp_prop_memo *m, const memo_case *c, const sp_prop_options *po,
                               sp_sharding **in) {
  sp_prop_memo_key k = {c->rule, c->mesh, po, 3, in, 0};
  sp_prop_memo_hash(m, &k);
  return k;
}

START_TEST(memo_returns_the_stored_outcome_for_equal_shardings_at_other_addresses) {
  sp_prop_memo *m = sp_prop_memo_new();
  ck_assert_ptr_nonnull(m);
  memo_case c = add_case();
  sp_prop_options po = {SP_PROP_AGGRESSIVE, false, true, NULL};
  sp_sharding *outcome[3] = {NULL, fx_sharding(A, "{a, ?}, {b}", NULL), NULL};
  sp_prop_memo_key k = key_of(m, &c, &po, c.in);
  sp_prop_memo_add(m, &k, outcome);

  /* The same contents in copies (names shared, as the reader interns them). */
  sp_sharding *copies[3] = {sp_sharding_copy(A, c.in[0]), NULL, sp_sharding_copy(A, c.in[2])};
  ck_assert_ptr_ne(copies[0], c.in[0]);
  sp_prop_memo_key k2 = key_of(m, &c, &po, copies);
  sp_sharding *got[3] = {(sp_sharding *)1, (sp_sharding *)1, (sp_sharding *)1};
  ck_assert(sp_prop_memo_find(m, &k2, got));
  ck_assert_ptr_null(got[0]);
  ck_assert_ptr_eq(got[1], outcome[1]);
  ck_assert_ptr_null(got[2]);
  sp_prop_memo_free(m);
}
END_TEST

START_TEST(memo_misses_when_directions_strategy_or_a_sharding_differ) {
  sp_prop_memo *m = sp_prop_memo_new();
  memo_case c = add_case();
  sp_prop_direction fwd[2] = {SP_DIR_FORWARD, SP_DIR_BOTH}, bwd[2] = {SP_DIR_BACKWARD, SP_DIR_BOTH};
  sp_prop_options po = {SP_PROP_AGGRESSIVE, false, false, fwd};
  sp_sharding *outcome[3] = {NULL, NULL, NULL};
  sp_prop_memo_key k = key_of(m, &c, &po, c.in);
  sp_prop_memo_add(m, &k, outcome);
  sp_sharding *got[3];
  ck_assert(sp_prop_memo_find(m, &k, got));

  sp_prop_options other_dirs = {SP_PROP_AGGRESSIVE, false, false, bwd};
  sp_prop_memo_key k2 = key_of(m, &c, &other_dirs, c.in);
  ck_assert(!sp_prop_memo_find(m, &k2, got));
  sp_prop_options basic = {SP_PROP_BASIC, false, false, fwd};
  sp_prop_memo_key k3 = key_of(m, &c, &basic, c.in);
  ck_assert(!sp_prop_memo_find(m, &k3, got));
  sp_prop_options all_both = {SP_PROP_AGGRESSIVE, false, false, NULL};
  sp_prop_memo_key k4 = key_of(m, &c, &all_both, c.in);
  ck_assert(!sp_prop_memo_find(m, &k4, got));

  /* One dim closed instead of open. */
  sp_sharding *closed[3] = {fx_sharding(A, "{a}, {?}", NULL), NULL, c.in[2]};
  sp_prop_memo_key k5 = key_of(m, &c, &po, closed);
  ck_assert(!sp_prop_memo_find(m, &k5, got));
  /* A sharding where there was none. */
  sp_sharding *extra[3] = {c.in[0], fx_sharding(A, "{?}, {?}", NULL), c.in[2]};
  sp_prop_memo_key k6 = key_of(m, &c, &po, extra);
  ck_assert(!sp_prop_memo_find(m, &k6, got));
  sp_prop_memo_free(m);
}
END_TEST

/* ------------------------------------------------------------------ the rule cache */

static sp_type *tensor2(int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return sp_type_tensor(A, 2, dims, "f32");
}

static sp_value *arg_of(sp_type *t) {
  sp_op *c = sp_op_create(A, "stablehlo.constant", 0, NULL, 1, &t, 0);
  return &c->results[0];
}

static sp_op *transpose(sp_type *in, sp_type *out, int64_t p0, int64_t p1) {
  sp_value *v = arg_of(in);
  sp_op *op = sp_op_create(A, "stablehlo.transpose", 1, &v, 1, &out, 0);
  int64_t *perm = sp_arena_alloc(A, 2 * sizeof *perm);
  perm[0] = p0;
  perm[1] = p1;
  sp_attr at = {.name = "permutation", .kind = SP_ATTR_INTS, .u.ints = {2, perm}};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
  return op;
}

START_TEST(ops_of_equal_signature_find_the_rule_remembered_for_the_first) {
  sp_rule_cache *c = sp_rule_cache_new();
  sp_op *first = transpose(tensor2(4, 8), tensor2(8, 4), 1, 0);
  sp_op *same = transpose(tensor2(4, 8), tensor2(8, 4), 1, 0);
  ck_assert(sp_rule_cache_keyable(first));
  ck_assert_ptr_null(sp_rule_cache_find(c, first, false));
  sp_rule *r = sp_rule_cache_intern(c, A, fx_rule(A, "([i, j])->([j, i])", (int64_t[]){4, 8}));
  sp_rule_cache_remember(c, first, false, r);
  ck_assert_ptr_eq(sp_rule_cache_find(c, same, false), r);
  /* The first op getting its rule attached does not hide it. */
  sp_attr at = {.name = "sdy.sharding_rule", .kind = SP_ATTR_RULE, .u.rule = r};
  ck_assert_int_eq(sp_attrs_set(A, &first->attrs, &at), SP_OK);
  ck_assert_ptr_eq(sp_rule_cache_find(c, same, false), r);
  /* ... but the conservative flag is part of the signature. */
  ck_assert_ptr_null(sp_rule_cache_find(c, same, true));
  sp_rule_cache_free(c);
}
END_TEST

START_TEST(ops_differing_in_an_attribute_a_shape_or_the_element_type_are_not_matched) {
  sp_rule_cache *c = sp_rule_cache_new();
  sp_op *first = transpose(tensor2(4, 8), tensor2(8, 4), 1, 0);
  sp_rule *r = sp_rule_cache_intern(c, A, fx_rule(A, "([i, j])->([j, i])", (int64_t[]){4, 8}));
  sp_rule_cache_remember(c, first, false, r);
  ck_assert_ptr_null(sp_rule_cache_find(c, transpose(tensor2(4, 4), tensor2(4, 4), 1, 0), false));
  ck_assert_ptr_null(sp_rule_cache_find(c, transpose(tensor2(4, 8), tensor2(4, 8), 0, 1), false));
  int64_t dims[2] = {4, 8}, rdims[2] = {8, 4};
  sp_op *bf16 = transpose(sp_type_tensor(A, 2, dims, "bf16"), sp_type_tensor(A, 2, rdims, "bf16"),
                          1, 0);
  ck_assert_ptr_null(sp_rule_cache_find(c, bf16, false));
  sp_rule_cache_free(c);
}
END_TEST

START_TEST(ops_whose_rule_reads_more_than_their_signature_are_never_keyed) {
  sp_type *t = tensor2(4, 8);
  sp_value *v[2] = {arg_of(t), arg_of(t)};
  sp_type *cat = tensor2(8, 8);
  ck_assert(!sp_rule_cache_keyable(sp_op_create(A, "stablehlo.concatenate", 2, v, 1, &cat, 0)));
  ck_assert(!sp_rule_cache_keyable(sp_op_create(A, "stablehlo.custom_call", 1, v, 1, &t, 0)));
  ck_assert(!sp_rule_cache_keyable(
      sp_op_create(A, "stablehlo.dynamic_update_slice", 2, v, 1, &t, 0)));
  sp_op *with_rule = transpose(tensor2(4, 8), tensor2(8, 4), 1, 0);
  sp_attr at = {.name = "sdy.sharding_rule", .kind = SP_ATTR_RULE,
                .u.rule = fx_rule(A, "([i, j])->([j, i])", (int64_t[]){4, 8})};
  ck_assert_int_eq(sp_attrs_set(A, &with_rule->attrs, &at), SP_OK);
  ck_assert(!sp_rule_cache_keyable(with_rule));
  ck_assert(sp_rule_cache_keyable(sp_op_create(A, "stablehlo.add", 2, v, 1, &t, 0)));
}
END_TEST

START_TEST(equal_rules_are_interned_once) {
  sp_rule_cache *c = sp_rule_cache_new();
  sp_rule *a = sp_rule_cache_intern(c, A, fx_rule(A, "([i, k], [k, j])->([i, j])",
                                                  (int64_t[]){8, 16, 32}));
  sp_rule *b = sp_rule_cache_intern(c, A, fx_rule(A, "([i, k], [k, j])->([i, j])",
                                                  (int64_t[]){8, 16, 32}));
  sp_rule *other = sp_rule_cache_intern(c, A, fx_rule(A, "([i, k], [k, j])->([i, j])",
                                                      (int64_t[]){8, 16, 64}));
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_ne(a, other);
  ck_assert(sp_rule_equal(a, fx_rule(A, "([i, k], [k, j])->([i, j])", (int64_t[]){8, 16, 32})));
  sp_rule_cache_free(c);
}
END_TEST

/* ------------------------------------------------------------------ end to end */

enum { RUN_BASIC, RUN_AGGRESSIVE, RUN_USER };

/* Parses `text`, propagates with `kind` (recording conflicts, which turns the memo off, when
 * `log`), and returns the printed module (malloc'd). */
static char *propagate_text(const sp_strbuf *text, int kind, bool log) {
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text->buf, text->len, "gen.mlir", 1, &m, &err), SP_OK);
  sp_arena *log_arena = sp_arena_new(0);
  sp_conflict_log conflicts;
  sp_conflict_log_init(&conflicts, log_arena);
  if (log) m->conflicts = &conflicts;
  sp_propagate_options o = {.strategy = kind == RUN_BASIC ? SP_PROP_BASIC : SP_PROP_AGGRESSIVE};
  int rc = kind == RUN_USER ? sp_user_priority_propagate(m, &o, NULL, &err)
                            : sp_propagate_module(m, &o, NULL, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  m->conflicts = NULL;
  sp_strbuf out = SP_STRBUF_INIT;
  ck_assert_int_eq(sp_mlir_print(m, &out, &err), SP_OK);
  sp_module_free(m);
  sp_arena_free(log_arena);
  char *s = strdup(sp_strbuf_str(&out));
  sp_strbuf_free(&out);
  return s;
}

static void check_generated(sp_gen_model model, sp_gen_annotate annotate, const char *mesh) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = model;
  o.backward = true;
  o.annotate = annotate;
  o.layers = 3;
  o.hidden = 64;
  o.heads = 4;
  o.seq = 16;
  o.batch = 4;
  sp_err err;
  ck_assert_int_eq(sp_gen_parse_mesh(mesh, &o, &err), SP_OK);
  sp_strbuf text = SP_STRBUF_INIT;
  int64_t nops;
  ck_assert_int_eq(sp_gen_write(&o, &text, &nops, &err), SP_OK);
  for (int kind = RUN_BASIC; kind <= RUN_USER; kind++) {
    char *full = propagate_text(&text, kind, true);
    char *memo = propagate_text(&text, kind, false);
    ck_assert_msg(strcmp(full, memo) == 0, "run %d differs with the memo", kind);
    ck_assert(strstr(memo, "sdy.sharding") != NULL);
    free(full);
    free(memo);
  }
  sp_strbuf_free(&text);
}

START_TEST(generated_gpt_propagates_to_the_same_module_with_and_without_the_memo) {
  check_generated(SP_GEN_GPT, SP_GEN_ANNOTATE_MEGATRON, "data=2,model=4");
  check_generated(SP_GEN_GPT, SP_GEN_ANNOTATE_DATA, "data=4,model=2");
}
END_TEST

START_TEST(generated_mlp_propagates_to_the_same_module_with_and_without_the_memo) {
  check_generated(SP_GEN_MLP, SP_GEN_ANNOTATE_MEGATRON, "data=2,model=2");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("prop_memo");
  TCase *tc = tcase_create("memo");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, memo_returns_the_stored_outcome_for_equal_shardings_at_other_addresses);
  tcase_add_test(tc, memo_misses_when_directions_strategy_or_a_sharding_differ);
  suite_add_tcase(s, tc);
  tc = tcase_create("rule_cache");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, ops_of_equal_signature_find_the_rule_remembered_for_the_first);
  tcase_add_test(tc, ops_differing_in_an_attribute_a_shape_or_the_element_type_are_not_matched);
  tcase_add_test(tc, ops_whose_rule_reads_more_than_their_signature_are_never_keyed);
  tcase_add_test(tc, equal_rules_are_interned_once);
  suite_add_tcase(s, tc);
  tc = tcase_create("end_to_end");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, generated_gpt_propagates_to_the_same_module_with_and_without_the_memo);
  tcase_add_test(tc, generated_mlp_propagates_to_the_same_module_with_and_without_the_memo);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
