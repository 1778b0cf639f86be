/*
 * test_diag.c - diagnostics: lists and their text form, splitting "FILE:LINE:COL: message"
 * errors, -verify-diagnostics matching (line offsets, @above/@below, counts, regexes,
 * severities, missing and unexpected diagnostics, malformed annotations), and shardplan-opt
 * end to end: warnings printed, -verify-diagnostics exit codes, expected errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/diag.h"
#include "test_support.h"

static sp_diag_list L;
static sp_strbuf R;

static void setup(void) {
  sp_diag_list_init(&L);
  R = (sp_strbuf)SP_STRBUF_INIT;
}

static void teardown(void) {
  sp_diag_list_free(&L);
  sp_strbuf_free(&R);
}

static int verify(const char *text) {
  return sp_diag_verify(text, strlen(text), 1, "t.mlir", &L, &R);
}

START_TEST(emitted_diagnostics_print_with_file_line_column_and_severity) {
  ck_assert_int_eq(sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){3, 7}, "op '%s' is odd", "x"), SP_OK);
  ck_assert_int_eq(sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){0, 0}, "no place"), SP_OK);
  ck_assert_int_eq(sp_diag_emit(NULL, SP_DIAG_ERROR, (sp_loc){1, 1}, "dropped"), SP_OK);
  ck_assert_int_eq(L.n, 2);
  sp_diag_format(&R, "f.mlir", &L.v[0]);
  sp_diag_format(&R, "f.mlir", &L.v[1]);
  ck_assert_str_eq(sp_strbuf_str(&R), "f.mlir:3:7: warning: op 'x' is odd\nf.mlir: error: no place\n");
}
END_TEST

START_TEST(module_warnings_go_to_the_attached_list_or_nowhere) {
  sp_module *m = sp_module_new("m.mlir");
  ck_assert_int_eq(sp_module_warn(m, (sp_loc){1, 1}, "nobody listens"), SP_OK);
  m->diags = &L;
  ck_assert_int_eq(sp_module_warn(m, (sp_loc){2, 3}, "w%d", 1), SP_OK);
  ck_assert_int_eq(sp_module_remark(m, (sp_loc){4, 5}, "r"), SP_OK);
  ck_assert_int_eq(L.n, 2);
  ck_assert_int_eq(L.v[0].severity, SP_DIAG_WARNING);
  ck_assert_str_eq(L.v[0].msg, "w1");
  ck_assert_int_eq(L.v[1].severity, SP_DIAG_REMARK);
  sp_module_free(m);
}
END_TEST

START_TEST(error_messages_split_into_place_and_text) {
  sp_loc loc;
  const char *rest;
  sp_diag_split_message("a.mlir", "a.mlir:12:5: unknown axis", &loc, &rest);
  ck_assert_int_eq(loc.line, 12);
  ck_assert_int_eq(loc.col, 5);
  ck_assert_str_eq(rest, "unknown axis");
  sp_diag_split_message("a.mlir", "a.mlir:12: no column", &loc, &rest);
  ck_assert_int_eq(loc.line, 12);
  ck_assert_int_eq(loc.col, 0);
  ck_assert_str_eq(rest, "no column");
  sp_diag_split_message("a.mlir", "a.mlir: no main function", &loc, &rest);
  ck_assert_int_eq(loc.line, 0);
  ck_assert_str_eq(rest, "no main function");
  sp_diag_split_message("a.mlir", "b.mlir:1:1: other file", &loc, &rest);
  ck_assert_int_eq(loc.line, 0);
  ck_assert_str_eq(rest, "b.mlir:1:1: other file");
}
END_TEST

START_TEST(expectation_with_a_line_offset_matches_a_diagnostic_there) {
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){3, 3}, "custom call @foo is unknown to SDY sharding rule registry");
  ck_assert_int_eq(verify("module {\n"
                          "  // expected-warning@+1 {{custom call @foo is unknown}}\n"
                          "  %0 = stablehlo.custom_call @foo() : () -> tensor<f32>\n"
                          "}\n"),
                   0);
  ck_assert_str_eq(sp_strbuf_str(&R), "");
}
END_TEST

START_TEST(expectations_above_below_absolute_and_same_line) {
  sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){1, 1}, "first");
  sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){4, 1}, "second");
  sp_diag_emit(&L, SP_DIAG_REMARK, (sp_loc){5, 1}, "third");
  sp_diag_emit(&L, SP_DIAG_NOTE, (sp_loc){7, 1}, "fourth");
  ck_assert_int_eq(verify("op1\n"                                      /* 1 */
                          "// expected-error@above {{first}}\n"         /* 2 */
                          "// expected-error@below {{second}}\n"        /* 3 */
                          "op2\n"                                      /* 4 */
                          "op3 // expected-remark {{third}}\n"         /* 5 */
                          "// expected-note@7 {{fourth}}\n"            /* 6 */
                          "op4\n"),                                    /* 7 */
                   0);
}
END_TEST

START_TEST(space_between_annotation_and_its_line_offset_is_allowed) {
  sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){2, 1}, "duplicate axis name");
  sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){4, 1}, "unknown mesh");
  ck_assert_int_eq(verify("// expected-error @+1 {{duplicate axis name}}\n"
                          "op1\n"
                          "// expected-error  @below {{unknown mesh}}\n"
                          "op2\n"),
                   0);
}
END_TEST

START_TEST(count_and_regex_expectations) {
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){2, 1}, "value 17 is odd");
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){2, 9}, "value 19 is odd");
  ck_assert_int_eq(verify("// expected-warning-re@+1 2 {{value [0-9]+ is odd}}\n"
                          "op\n"),
                   0);
  /* One diagnostic short of the count. */
  sp_diag_list_clear(&L);
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){2, 1}, "value 17 is odd");
  ck_assert_int_eq(verify("// expected-warning-re@+1 2 {{value [0-9]+ is odd}}\nop\n"), 1);
}
END_TEST

START_TEST(missing_unexpected_and_wrong_severity_are_each_a_problem) {
  sp_diag_emit(&L, SP_DIAG_ERROR, (sp_loc){2, 4}, "custom call @foo is unknown");
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){9, 2}, "stray");
  int n = verify("// expected-warning@+1 {{custom call @foo is unknown}}\n"
                 "op\n");
  /* The warning expected on line 2 is missing (the diagnostic there is an error, which is
   * itself unexpected), and the stray warning is unexpected. */
  ck_assert_int_eq(n, 3);
  const char *r = sp_strbuf_str(&R);
  ck_assert_ptr_nonnull(strstr(r, "t.mlir:1:4: error: expected warning \"custom call @foo is unknown\" was not produced"));
  ck_assert_ptr_nonnull(strstr(r, "t.mlir:2:4: error: unexpected error: custom call @foo is unknown"));
  ck_assert_ptr_nonnull(strstr(r, "t.mlir:9:2: error: unexpected warning: stray"));
}
END_TEST

START_TEST(wrong_line_or_text_does_not_match) {
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){3, 1}, "abc");
  ck_assert_int_eq(verify("// expected-warning@+1 {{abc}}\nop\nop\n"), 2);
  sp_diag_list_clear(&L);
  sp_strbuf_reset(&R);
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){2, 1}, "abc");
  ck_assert_int_eq(verify("// expected-warning@+1 {{abd}}\nop\n"), 2);
}
END_TEST

START_TEST(malformed_annotations_are_reported) {
  ck_assert_int_eq(verify("// expected-warning@+ {{x}}\nop\n"), 1);
  ck_assert_ptr_nonnull(strstr(sp_strbuf_str(&R), "expected a line offset"));
  sp_strbuf_reset(&R);
  ck_assert_int_eq(verify("// expected-error no braces\n"), 1);
  ck_assert_ptr_nonnull(strstr(sp_strbuf_str(&R), "expected '{{'"));
  sp_strbuf_reset(&R);
  ck_assert_int_eq(verify("// expected-error {{never closed\n"), 1);
  /* Not an annotation at all: "expected-" followed by another word. */
  sp_strbuf_reset(&R);
  ck_assert_int_eq(verify("// expected-result is fine\n"), 0);
}
END_TEST

START_TEST(first_line_offsets_positions_of_a_chunk) {
  sp_diag_emit(&L, SP_DIAG_WARNING, (sp_loc){12, 1}, "w");
  const char *chunk = "// expected-warning@+1 {{w}}\nop\n";
  ck_assert_int_eq(sp_diag_verify(chunk, strlen(chunk), 11, "t.mlir", &L, &R), 0);
}
END_TEST

/* ------------------------------------------------------------------ shardplan-opt */

static char dir[256];

static void tool_setup(void) {
  snprintf(dir, sizeof dir, "/tmp/sp_diag_test_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/shardplan-opt", SP_BIN_DIR);
  ck_assert_msg(access(path, X_OK) == 0, "%s is not built", path);
}

static void tool_teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void write_file(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static char *read_back(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *s = sp_test_read_file(path, NULL);
  ck_assert_msg(s != NULL, "missing %s", path);
  return s;
}

static int run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s/shardplan-opt' %s > out.txt 2> err.txt", dir,
           SP_BIN_DIR, args);
  int st = system(cmd);
  ck_assert_msg(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
  return WEXITSTATUS(st);
}

static const char *const unknown_call =
    "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  // expected-warning@+1 {{custom call @mystery is unknown to SDY sharding rule registry}}\n"
    "  %0 = stablehlo.custom_call @mystery(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  return %0 : tensor<8xf32>\n"
    "}\n";

START_TEST(tool_prints_registry_warnings_with_their_place) {
  write_file("in.mlir", unknown_call);
  ck_assert_int_eq(run("in.mlir -sdy-populate-op-sharding-rules"), 0);
  char *err = read_back("err.txt");
  ck_assert_str_eq(err, "in.mlir:3:8: warning: custom call @mystery is unknown to SDY sharding rule registry\n");
  free(err);
}
END_TEST

START_TEST(tool_verify_diagnostics_accepts_expected_warnings_and_still_prints) {
  write_file("in.mlir", unknown_call);
  ck_assert_int_eq(run("in.mlir -sdy-populate-op-sharding-rules -verify-diagnostics"), 0);
  char *err = read_back("err.txt"), *out = read_back("out.txt");
  ck_assert_str_eq(err, "");
  ck_assert_ptr_nonnull(strstr(out, "stablehlo.custom_call @mystery(%arg0)"));
  free(err);
  free(out);
}
END_TEST

START_TEST(tool_verify_diagnostics_fails_on_a_missing_or_unexpected_warning) {
  /* The annotation points one line too far. */
  const char *shifted =
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  // expected-warning@+2 {{custom call @mystery is unknown}}\n"
      "  %0 = stablehlo.custom_call @mystery(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  return %0 : tensor<8xf32>\n"
      "}\n";
  write_file("in.mlir", shifted);
  ck_assert_int_eq(run("in.mlir -sdy-populate-op-sharding-rules -verify-diagnostics"), 1);
  char *err = read_back("err.txt");
  ck_assert_ptr_nonnull(strstr(err, "in.mlir:2:6: error: expected warning"));
  ck_assert_ptr_nonnull(strstr(err, "in.mlir:3:8: error: unexpected warning: custom call @mystery"));
  free(err);
}
END_TEST

START_TEST(tool_verify_diagnostics_matches_an_expected_parse_error) {
  write_file("in.mlir",
             "// expected-error@+1 {{unknown mesh}}\n"
             "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
             "  return %arg0 : tensor<8xf32>\n"
             "}\n");
  int rc = run("in.mlir -verify-diagnostics");
  char *err = read_back("err.txt");
  /* Either the reader or the verifier rejects it, at line 2, with a message naming the mesh. */
  ck_assert_msg(rc == 0, "exit %d, stderr: %s", rc, err);
  free(err);
  ck_assert_int_eq(run("in.mlir"), 1);
  err = read_back("err.txt");
  ck_assert_ptr_nonnull(strstr(err, "in.mlir:2:"));
  ck_assert_ptr_nonnull(strstr(err, ": error: "));
  free(err);
}
END_TEST

START_TEST(op_errors_and_located_errors_have_one_form_with_the_place_as_data) {
  sp_module *m = sp_test_parse("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                               "  %0 = stablehlo.abs %arg0 : tensor<8xf32>\n"
                               "  return %0 : tensor<8xf32>\n"
                               "}\n");
  sp_op *abs = sp_module_lookup_func(m, "main")->regions[0].blocks[0]->first;
  sp_err e;
  ck_assert_int_eq(sp_op_error(&e, SP_EINVAL, m, abs, "has %d problems", 2), SP_EINVAL);
  ck_assert_str_eq(e.msg, "t.mlir:2:8: 'stablehlo.abs' op has 2 problems");
  ck_assert_str_eq(e.file, "t.mlir");
  ck_assert_int_eq(e.line, 2);
  ck_assert_int_eq(e.col, 8);
  ck_assert_int_eq(sp_error_at(&e, SP_EUNSUPPORTED, m, abs->loc, "no %s", "way"), SP_EUNSUPPORTED);
  ck_assert_str_eq(e.msg, "t.mlir:2:8: no way");
  sp_loc nowhere = {0, 0};
  ck_assert_int_eq(sp_error_at(&e, SP_EINVAL, m, nowhere, "whole file"), SP_EINVAL);
  ck_assert_str_eq(e.msg, "t.mlir: whole file");
  ck_assert_int_eq(e.line, 0);
  sp_module_free(m);
}
END_TEST

START_TEST(op_messages_spell_the_op_prefix_once_and_truncate_safely) {
  char buf[64];
  ck_assert_str_eq(sp_op_message(buf, sizeof buf, "sdy.reshard", "operand %d must be sharded.", 0),
                   "'sdy.reshard' op operand 0 must be sharded.");
  /* Truncated, still terminated: the prefix first, then as much of the message as fits. */
  char small[16];
  ck_assert_str_eq(sp_op_message(small, sizeof small, "stablehlo.add", "%s", "long message"),
                   "'stablehlo.add'");
  char tiny[8];
  ck_assert_str_eq(sp_op_message(tiny, sizeof tiny, "stablehlo.add", "x"), "'stable");
}
END_TEST

static Suite *diag_suite(void) {
  Suite *s = suite_create("diag");
  TCase *tc = tcase_create("list");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, emitted_diagnostics_print_with_file_line_column_and_severity);
  tcase_add_test(tc, module_warnings_go_to_the_attached_list_or_nowhere);
  tcase_add_test(tc, error_messages_split_into_place_and_text);
  tcase_add_test(tc, op_errors_and_located_errors_have_one_form_with_the_place_as_data);
  tcase_add_test(tc, op_messages_spell_the_op_prefix_once_and_truncate_safely);
  suite_add_tcase(s, tc);
  tc = tcase_create("verify");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, expectation_with_a_line_offset_matches_a_diagnostic_there);
  tcase_add_test(tc, expectations_above_below_absolute_and_same_line);
  tcase_add_test(tc, space_between_annotation_and_its_line_offset_is_allowed);
  tcase_add_test(tc, count_and_regex_expectations);
  tcase_add_test(tc, missing_unexpected_and_wrong_severity_are_each_a_problem);
  tcase_add_test(tc, wrong_line_or_text_does_not_match);
  tcase_add_test(tc, malformed_annotations_are_reported);
  tcase_add_test(tc, first_line_offsets_positions_of_a_chunk);
  suite_add_tcase(s, tc);
  tc = tcase_create("tool");
  tcase_add_checked_fixture(tc, tool_setup, tool_teardown);
  tcase_add_test(tc, tool_prints_registry_warnings_with_their_place);
  tcase_add_test(tc, tool_verify_diagnostics_accepts_expected_warnings_and_still_prints);
  tcase_add_test(tc, tool_verify_diagnostics_fails_on_a_missing_or_unexpected_warning);
  tcase_add_test(tc, tool_verify_diagnostics_matches_an_expected_parse_error);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(diag_suite()); }
