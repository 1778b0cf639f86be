/*
 * test_rules_registry.c - the registry against Shardy's own registry test.
 *
 * Parses shared/conformance/shardy/op_sharding_rule_registry.mlir (skipped, exit 77, when the
 * shared folder is absent), computes the rule of every op of every func in pre-order, and
 * checks each func's `// CHECK: ... #sdy.op_sharding_rule<...>` lines the way FileCheck
 * would: in order, each pattern must occur in the printed rule attribute of a later op of the
 * same func; a `CHECK-NOT: sdy.sharding_rule` func must produce no rule at all. The file runs
 * under -verify-diagnostics without expected warnings, so a warning fails its func too.
 * The count of passing funcs is printed and must stay at REGISTRY_FLOOR or above.
 *
 * The failures file is checked the same way: the one expected warning, on the line after its
 * `expected-warning@+1` comment. The populate pass is then run end to end: attach, print with
 * the MLIR printer, find every expected rule text in the output.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"
#include "ir/ir.h"
#include "mlir/mlir.h"
#include "rules/populate.h"
#include "rules/registry.h"
#include "test_support.h"

#define REGISTRY_FILE "conformance/shardy/op_sharding_rule_registry.mlir"
#define FAILURES_FILE "conformance/shardy/op_sharding_rule_registry_failures.mlir"
#define REGISTRY_FUNCS 123
/* All funcs pass; lower this only with a listed reason, never to turn a run green. */
#define REGISTRY_FLOOR 123

typedef struct expect {
  char func[128];
  char pattern[512];       /* text after "CHECK: " or "CHECK-NOT: " */
  bool is_not;
} expect;

typedef struct expects {
  int n, cap;
  expect *v;
} expects;

static void trim(char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\r' || s[n - 1] == '\t')) s[--n] = '\0';
}

/* Collects, per func, the CHECK lines about sharding rules that follow its `func.func`. */
static void collect_expects(const char *text, expects *out) {
  char func[128] = "";
  const char *line = text;
  while (*line) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
    const char *f = strstr(buf, "func.func @");
    if (f && !strstr(buf, "//")) {
      f += strlen("func.func @");
      size_t k = strcspn(f, "(");
      snprintf(func, sizeof func, "%.*s", (int)k, f);
    }
    const char *c = strstr(buf, "// CHECK: ");
    const char *cn = strstr(buf, "// CHECK-NOT: ");
    if (func[0] && ((c && strstr(buf, "op_sharding_rule<")) || (cn && strstr(buf, "sharding_rule")))) {
      ck_assert_int_eq(sp_grow((void **)&out->v, &out->cap, out->n, sizeof *out->v), SP_OK);
      expect *e = &out->v[out->n++];
      snprintf(e->func, sizeof e->func, "%s", func);
      e->is_not = cn != NULL;
      snprintf(e->pattern, sizeof e->pattern, "%s",
               cn ? cn + strlen("// CHECK-NOT: ") : c + strlen("// CHECK: "));
      trim(e->pattern);
    }
    if (!eol) break;
    line = eol + 1;
  }
}

typedef struct func_run {
  sp_arena *arena;
  int nlines, cap;
  char **lines;            /* "{sdy.sharding_rule = #sdy.op_sharding_rule<...>}" per op with a rule */
  int nrules;
  sp_rules_diag diag;
  bool warned;
  bool failed;
  char error[600];
} func_run;

static bool visit(sp_op *op, void *ctx) {
  func_run *fr = ctx;
  if (op->kind == SP_OP_FUNC) return true;
  sp_rule *r = NULL;
  sp_err err;
  sp_err_clear(&err);
  if (sp_rules_for_op(fr->arena, op, NULL, &r, &fr->diag, &err) != SP_OK) {
    fr->failed = true;
    snprintf(fr->error, sizeof fr->error, "%s", err.msg);
    return false;
  }
  if (fr->diag.has_warning) {
    fr->warned = true;
    snprintf(fr->error, sizeof fr->error, "unexpected warning: %s", fr->diag.warning);
  }
  if (!r) return true;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "{sdy.sharding_rule = ");
  sp_rule_print(&sb, r);
  sp_strbuf_puts(&sb, "}");
  ck_assert_int_eq(sp_grow((void **)&fr->lines, &fr->cap, fr->nlines, sizeof *fr->lines), SP_OK);
  fr->lines[fr->nlines++] = sp_strbuf_detach(&sb);
  fr->nrules++;
  return true;
}

static void free_run(func_run *fr) {
  for (int i = 0; i < fr->nlines; i++) free(fr->lines[i]);
  free(fr->lines);
}

/* FileCheck-like: patterns in order, each found in a later line than the previous match. */
static bool func_matches(func_run *fr, const expects *ex, const char *name, char *why,
                         size_t nwhy) {
  if (fr->failed || fr->warned) {
    snprintf(why, nwhy, "%s", fr->error);
    return false;
  }
  int pos = 0, checks = 0;
  for (int i = 0; i < ex->n; i++) {
    const expect *e = &ex->v[i];
    if (strcmp(e->func, name) != 0) continue;
    checks++;
    if (e->is_not) {
      if (fr->nrules) {
        snprintf(why, nwhy, "expected no rule, got %s", fr->lines[0]);
        return false;
      }
      continue;
    }
    int k = pos;
    while (k < fr->nlines && !strstr(fr->lines[k], e->pattern)) k++;
    if (k == fr->nlines) {
      snprintf(why, nwhy, "expected \"%s\"; rules: %s", e->pattern,
               fr->nlines ? fr->lines[fr->nlines - 1] : "(none)");
      return false;
    }
    pos = k + 1;
  }
  if (checks == 0) {
    snprintf(why, nwhy, "no CHECK line found for this func");
    return false;
  }
  return true;
}

START_TEST(registry_file_rules_match_shardy_func_by_func) {
  sp_test_require_shared(REGISTRY_FILE);
  size_t len;
  char *text = sp_test_read_file(sp_test_shared_path(REGISTRY_FILE), &len);
  ck_assert_ptr_nonnull(text);
  expects ex = {0};
  collect_expects(text, &ex);
  sp_module *m = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_mlir_parse(text, len, REGISTRY_FILE, 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse failed: %s", err.msg);
  sp_rules_diag diag = {0};
  int nfuncs = 0, npass = 0;
  for (sp_op *f = sp_module_body(m)->first; f; f = f->next) {
    if (f->kind != SP_OP_FUNC) continue;
    nfuncs++;
    const char *name = sp_op_get_str(f, "sym_name");
    func_run fr = {.arena = m->arena, .diag = diag};
    fr.diag.has_warning = false;
    sp_op_walk(f, visit, &fr);
    diag = fr.diag; /* the once-per-run latches carry over, as in one sdy_opt run */
    char why[1200];
    if (func_matches(&fr, &ex, name ? name : "", why, sizeof why))
      npass++;
    else
      printf("FAIL @%s: %s\n", name ? name : "?", why);
    free_run(&fr);
  }
  printf("op_sharding_rule_registry.mlir: %d / %d funcs match\n", npass, nfuncs);
  ck_assert_int_eq(nfuncs, REGISTRY_FUNCS);
  ck_assert_int_ge(npass, REGISTRY_FLOOR);
  sp_module_free(m);
  free(ex.v);
  free(text);
}
END_TEST

START_TEST(failures_file_warns_once_for_the_unknown_custom_call) {
  sp_test_require_shared(FAILURES_FILE);
  size_t len;
  char *text = sp_test_read_file(sp_test_shared_path(FAILURES_FILE), &len);
  ck_assert_ptr_nonnull(text);
  /* expected-warning@+1 {{MESSAGE}} on line L: the warning is for the op on line L+1. */
  const char *w = strstr(text, "expected-warning@+1 {{");
  ck_assert_ptr_nonnull(w);
  int line = 1;
  for (const char *c = text; c < w; c++) line += *c == '\n';
  const char *msg = w + strlen("expected-warning@+1 {{");
  char want[256];
  snprintf(want, sizeof want, "%.*s", (int)(strstr(msg, "}}") - msg), msg);
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, len, FAILURES_FILE, 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse failed: %s", err.msg);
  func_run fr = {.arena = m->arena};
  for (sp_op *f = sp_module_body(m)->first; f; f = f->next)
    if (f->kind == SP_OP_FUNC) sp_op_walk(f, visit, &fr);
  ck_assert(!fr.failed);
  ck_assert(fr.warned);
  ck_assert_str_eq(fr.diag.warning, want);
  ck_assert_int_eq(fr.diag.warning_loc.line, line + 1);
  ck_assert_int_eq(fr.nrules, 0);
  free_run(&fr);
  sp_module_free(m);
  free(text);
}
END_TEST

typedef struct warnings {
  int n;
  char last[256];
  int line;
} warnings;

static void on_warning(void *ctx, const sp_op *op, const char *msg) {
  warnings *w = ctx;
  w->n++;
  w->line = op->loc.line;
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* The pass end to end: populate, print with the MLIR printer, and find every expected rule
 * text in the printed module, in file order. */
START_TEST(populate_pass_prints_every_expected_rule_in_order) {
  sp_test_require_shared(REGISTRY_FILE);
  size_t len;
  char *text = sp_test_read_file(sp_test_shared_path(REGISTRY_FILE), &len);
  ck_assert_ptr_nonnull(text);
  expects ex = {0};
  collect_expects(text, &ex);
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, len, REGISTRY_FILE, 1, &m, &err), SP_OK);
  sp_rules_options opts;
  ck_assert_int_eq(sp_rules_parse_options("", &opts, &err), SP_OK);
  warnings w = {0};
  ck_assert_int_eq(sp_rules_populate(m, &opts, NULL, on_warning, &w, &err), SP_OK);
  ck_assert_int_eq(w.n, 0);
  sp_strbuf out = SP_STRBUF_INIT;
  ck_assert_int_eq(sp_mlir_print(m, &out, &err), SP_OK);
  const char *printed = sp_strbuf_str(&out), *pos = printed;
  int found = 0, wanted = 0;
  for (int i = 0; i < ex.n; i++) {
    if (ex.v[i].is_not) continue;
    wanted++;
    const char *hit = strstr(pos, ex.v[i].pattern);
    if (!hit) {
      printf("not printed (in order) for @%s: %s\n", ex.v[i].func, ex.v[i].pattern);
      continue;
    }
    found++;
    pos = hit + 1;
  }
  /* The zero-element reshape is printed without a rule. */
  const char *z = strstr(printed, "(tensor<4x0xf32>) -> tensor<0x8xf32>");
  ck_assert_ptr_nonnull(z);
  const char *bol = z;
  while (bol > printed && bol[-1] != '\n') bol--;
  char line[512];
  snprintf(line, sizeof line, "%.*s", (int)(z - bol), bol);
  ck_assert_ptr_null(strstr(line, "sharding_rule"));
  printf("populate + print: %d / %d expected rule texts found in order\n", found, wanted);
  ck_assert_int_eq(found, wanted);
  sp_strbuf_free(&out);
  sp_module_free(m);
  free(ex.v);
  free(text);
}
END_TEST

START_TEST(populate_reports_the_unknown_custom_call_through_the_callback) {
  sp_test_require_shared(FAILURES_FILE);
  size_t len;
  char *text = sp_test_read_file(sp_test_shared_path(FAILURES_FILE), &len);
  ck_assert_ptr_nonnull(text);
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, len, FAILURES_FILE, 1, &m, &err), SP_OK);
  warnings w = {0};
  sp_rules_diag diag = {0};
  ck_assert_int_eq(sp_rules_populate(m, NULL, &diag, on_warning, &w, &err), SP_OK);
  ck_assert_int_eq(w.n, 1);
  ck_assert_str_eq(w.last, "custom call @unknown_custom_op is unknown to SDY sharding rule "
                           "registry");
  ck_assert_int_eq(w.line, 6);
  /* A second run with the same diag stays silent: Shardy warns once per process. */
  ck_assert_int_eq(sp_rules_populate(m, NULL, &diag, on_warning, &w, &err), SP_OK);
  ck_assert_int_eq(w.n, 1);
  sp_module_free(m);
  free(text);
}
END_TEST

/* What JAX emits for lax.square, lax.erfc and lax.zeta: CHLO ops in their `T -> T` and
 * `T, T -> T` custom forms. They parse, keep their operand and result types, and get the
 * element-wise rule (no warning). */
START_TEST(chlo_elementwise_ops_parse_and_get_the_pointwise_rule) {
  static const char text[] =
      "func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
      "  %0 = chlo.square %arg0 : tensor<8x16xf32> -> tensor<8x16xf32>\n"
      "  %1 = chlo.erfc %0 : tensor<8x16xf32> -> tensor<8x16xf32>\n"
      "  %2 = chlo.next_after %0, %1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  %3 = chlo.zeta %2, %1 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>\n"
      "  return %3 : tensor<8x16xf32>\n"
      "}\n";
  sp_module *m = sp_test_parse(text);
  ck_assert_ptr_nonnull(m);
  sp_rules_options opts;
  sp_err err;
  ck_assert_int_eq(sp_rules_parse_options("", &opts, &err), SP_OK);
  warnings w = {0};
  ck_assert_int_eq(sp_rules_populate(m, &opts, NULL, on_warning, &w, &err), SP_OK);
  ck_assert_int_eq(w.n, 0);
  char *printed = sp_test_print(m);
  ck_assert_ptr_nonnull(strstr(printed, "\"chlo.square\"(%arg0) {sdy.sharding_rule = "
                                        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>}"));
  ck_assert_ptr_nonnull(strstr(printed, "\"chlo.next_after\"(%0, %1) {sdy.sharding_rule = "
                                        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) "
                                        "{i=8, j=16}>}"));
  ck_assert_ptr_nonnull(strstr(printed, "\"chlo.zeta\"(%2, %1) {sdy.sharding_rule = "
                                        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) "
                                        "{i=8, j=16}>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> "
                                        "tensor<8x16xf32>"));
  free(printed);
  sp_module_free(m);
}
END_TEST

/* jax.lax.top_k lowers to chlo.top_k, which XLA turns into the mhlo.topk op before its Shardy
 * runs: both are read in their custom form and get the rule of custom_call @mhlo.topk (batch
 * dims pass-through, the sorted dim need_replication), as JAX's Shardy propagates through it.
 * mhlo.erf (XLA's form of chlo.erf) has no rule there, and is named in a warning. */
START_TEST(chlo_top_k_and_mhlo_topk_get_the_topk_rule_and_mhlo_erf_a_warning) {
  static const char text[] =
      "func.func @main(%arg0: tensor<32x64xf32>) -> tensor<32x4xf32> {\n"
      "  %values, %indices = chlo.top_k(%arg0, k = 4) : tensor<32x64xf32> -> "
      "(tensor<32x4xf32>, tensor<32x4xi32>)\n"
      "  %0:2 = mhlo.topk(%arg0, k = 4) : tensor<32x64xf32> -> "
      "(tensor<32x4xf32>, tensor<32x4xi32>)\n"
      "  %1 = mhlo.erf %0#0 : tensor<32x4xf32>\n"
      "  return %1 : tensor<32x4xf32>\n"
      "}\n";
  sp_module *m = sp_test_parse(text);
  ck_assert_ptr_nonnull(m);
  sp_rules_options opts;
  sp_err err;
  ck_assert_int_eq(sp_rules_parse_options("", &opts, &err), SP_OK);
  warnings w = {0};
  ck_assert_int_eq(sp_rules_populate(m, &opts, NULL, on_warning, &w, &err), SP_OK);
  ck_assert_int_eq(w.n, 1);
  ck_assert_str_eq(w.last, "op 'mhlo.erf' is unknown to SDY sharding rule registry");
  char *printed = sp_test_print(m);
  static const char rule[] = "{k = 4 : i64, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->"
                             "([i, j], [i, j]) {i=32, j=64} need_replication={j} "
                             "blocked_propagation={j}>}";
  const char *top_k = strstr(printed, "\"chlo.top_k\"(%arg0) ");
  const char *topk = strstr(printed, "\"mhlo.topk\"(%arg0) ");
  ck_assert_ptr_nonnull(top_k);
  ck_assert_ptr_nonnull(topk);
  ck_assert_int_eq(strncmp(top_k + strlen("\"chlo.top_k\"(%arg0) "), rule, strlen(rule)), 0);
  ck_assert_int_eq(strncmp(topk + strlen("\"mhlo.topk\"(%arg0) "), rule, strlen(rule)), 0);
  ck_assert_ptr_nonnull(strstr(printed, "\"mhlo.erf\"(%1#0) : "));
  free(printed);
  sp_module_free(m);
}
END_TEST

START_TEST(pass_options_parse_conservative_propagation) {
  sp_rules_options o;
  sp_err err;
  ck_assert_int_eq(sp_rules_parse_options(NULL, &o, &err), SP_OK);
  ck_assert(!o.conservative);
  ck_assert_int_eq(sp_rules_parse_options("conservative-propagation=true", &o, &err), SP_OK);
  ck_assert(o.conservative);
  ck_assert_int_eq(sp_rules_parse_options("conservative-propagation=false", &o, &err), SP_OK);
  ck_assert(!o.conservative);
  ck_assert_int_eq(sp_rules_parse_options("conservative-propagation=maybe", &o, &err),
                   SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "expected conservative-propagation=true|false"));
  ck_assert_int_eq(sp_rules_parse_options("keep-sharding-rules=true", &o, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown option"));
}
END_TEST

static Suite *registry_suite(void) {
  Suite *s = suite_create("rules_registry");
  TCase *tc = tcase_create("conformance");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, registry_file_rules_match_shardy_func_by_func);
  tcase_add_test(tc, failures_file_warns_once_for_the_unknown_custom_call);
  tcase_add_test(tc, populate_pass_prints_every_expected_rule_in_order);
  tcase_add_test(tc, populate_reports_the_unknown_custom_call_through_the_callback);
  tcase_add_test(tc, pass_options_parse_conservative_propagation);
  tcase_add_test(tc, chlo_elementwise_ops_parse_and_get_the_pointwise_rule);
  tcase_add_test(tc, chlo_top_k_and_mhlo_topk_get_the_topk_rule_and_mhlo_erf_a_warning);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  sp_test_require_shared(REGISTRY_FILE);
  return sp_test_run(registry_suite());
}
