/*
 * test_model_gen.c - the model generators emit modules that parse, verify, carry the
 * requested annotations and have the op count they report.
 */
#include <check.h>
#include <string.h>

#include "gen/model_gen.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "test_support.h"

static sp_module *generate(const sp_gen_options *o, int64_t *nops) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_msg(sp_gen_write(o, &sb, nops, &err) == SP_OK, "%s", err.msg);
  sp_module *m = NULL;
  int rc = sp_mlir_parse(sb.buf, sb.len, "gen.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  ck_assert_msg(sp_verify_module(m, &err) == SP_OK, "%s", err.msg);
  sp_strbuf_free(&sb);
  return m;
}

/* Ops directly in main's body (the generator counts these: a reduce's region is not its own). */
static int64_t count_body_ops(sp_module *m) {
  int64_t n = 0;
  sp_op *f = sp_module_lookup_func(m, "main");
  for (sp_op *op = f->regions[0].blocks[0]->first; op; op = op->next) n++;
  return n;
}

static int count_kind(sp_module *m, sp_op_kind kind) {
  int n = 0;
  for (sp_op *f = sp_module_body(m)->first; f; f = f->next)
    if (f->kind == SP_OP_FUNC)
      for (sp_op *op = f->regions[0].blocks[0]->first; op; op = op->next) n += op->kind == kind;
  return n;
}

START_TEST(gpt_layer_parses_verifies_and_reports_its_op_count) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.hidden = 64;
  o.heads = 4;
  o.seq = 16;
  o.layers = 2;
  int64_t nops = 0;
  sp_module *m = generate(&o, &nops);
  ck_assert_int_eq(count_body_ops(m), nops);
  /* Per layer: q, k, v, scores, context, output projection, two MLP matmuls. */
  ck_assert_int_eq(count_kind(m, SP_OP_DOT_GENERAL), 8 * 2);
  ck_assert_int_eq(sp_gen_ops_per_layer(&o) * 2 + 1, nops);
  sp_module_free(m);
}
END_TEST

START_TEST(backward_pass_adds_two_matmuls_per_forward_matmul) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = SP_GEN_MLP;
  o.layers = 3;
  o.hidden = 16;
  o.backward = true;
  int64_t nops = 0;
  sp_module *m = generate(&o, &nops);
  ck_assert_int_eq(count_kind(m, SP_OP_DOT_GENERAL), 3 * 3);
  sp_op *main_fn = sp_module_lookup_func(m, "main");
  ck_assert_ptr_nonnull(main_fn);
  ck_assert_int_eq(main_fn->func->nresults, 2 + 3); /* output, input gradient, 3 weight grads */
  sp_module_free(m);
}
END_TEST

START_TEST(megatron_annotations_split_columns_then_rows) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.hidden = 32;
  o.heads = 4;
  o.seq = 8;
  o.annotate = SP_GEN_ANNOTATE_MEGATRON;
  int64_t nops = 0;
  sp_module *m = generate(&o, &nops);
  sp_op *f = sp_module_lookup_func(m, "main");
  sp_block *body = f->regions[0].blocks[0];
  /* args: x, gamma1, wq, wk, wv, wo, gamma2, w1, w2 */
  ck_assert_int_eq(body->nargs, 9);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_sharding_print(&sb, body->args[0]->sharding);
  ck_assert_str_eq(sp_strbuf_str(&sb), "<@mesh, [{\"data\"}, {}, {}]>");
  sp_strbuf_reset(&sb);
  sp_sharding_print(&sb, body->args[7]->sharding);   /* w1: column split */
  ck_assert_str_eq(sp_strbuf_str(&sb), "<@mesh, [{}, {\"model\"}]>");
  sp_strbuf_reset(&sb);
  sp_sharding_print(&sb, body->args[8]->sharding);   /* w2: row split */
  ck_assert_str_eq(sp_strbuf_str(&sb), "<@mesh, [{\"model\"}, {}]>");
  ck_assert_ptr_null(body->args[1]->sharding);        /* gamma: left open */
  sp_strbuf_free(&sb);
  sp_module_free(m);
}
END_TEST

START_TEST(gpt_training_preset_is_the_search_benchmark_model_on_the_default_mesh) {
  sp_gen_options o, d;
  sp_gen_gpt_training_options(&o, 3);
  sp_gen_default_options(&d);
  ck_assert_int_eq(o.model, SP_GEN_GPT);
  ck_assert_int_eq(o.layers, 3);
  ck_assert_int_eq(o.hidden, 4096);
  ck_assert_int_eq(o.heads, 32);
  ck_assert_int_eq(o.seq, 2048);
  ck_assert_int_eq(o.batch, 8);
  ck_assert_str_eq(o.dtype, "bf16");
  ck_assert(o.backward);
  ck_assert_int_eq(o.annotate, SP_GEN_ANNOTATE_NONE);
  ck_assert_int_eq(o.naxes, d.naxes);
  ck_assert_str_eq(o.axis_names[1], d.axis_names[1]);
  ck_assert_int_eq(o.axis_sizes[1], d.axis_sizes[1]);
  sp_err err;
  ck_assert_int_eq(sp_gen_check(&o, &err), SP_OK);
}
END_TEST

START_TEST(bad_options_are_rejected_with_a_reason) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  sp_err err;
  o.heads = 3; /* 1024 % 3 != 0 */
  ck_assert_int_eq(sp_gen_check(&o, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "hidden (1024) is not divisible by heads (3)");
  sp_gen_default_options(&o);
  ck_assert_int_eq(sp_gen_parse_mesh("data=2,model", &o, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "mesh 'data=2,model': expected NAME=SIZE at 'model'");
  ck_assert_int_eq(sp_gen_parse_mesh("x=0", &o, &err), SP_EINVAL);
  ck_assert_int_eq(sp_gen_parse_mesh("x=2,y=4,z=8", &o, &err), SP_OK);
  ck_assert_int_eq(o.naxes, 3);
  ck_assert_int_eq(o.axis_sizes[2], 8);
  o.naxes = 1;
  o.annotate = SP_GEN_ANNOTATE_MEGATRON;
  ck_assert_int_eq(sp_gen_check(&o, &err), SP_EINVAL);
}
END_TEST

static Suite *gen_suite(void) {
  Suite *s = suite_create("model_gen");
  TCase *tc = tcase_create("gen");
  tcase_add_test(tc, gpt_layer_parses_verifies_and_reports_its_op_count);
  tcase_add_test(tc, backward_pass_adds_two_matmuls_per_forward_matmul);
  tcase_add_test(tc, megatron_annotations_split_columns_then_rows);
  tcase_add_test(tc, gpt_training_preset_is_the_search_benchmark_model_on_the_default_mesh);
  tcase_add_test(tc, bad_options_are_rejected_with_a_reason);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(gen_suite()); }
