/*
 * test_mlir_tool.c - the shardplan-opt driver as a program: output, `// -----` handling,
 * stdin and -o, error format and exit codes (0 ok, 1 bad input, 2 usage).
 *
 * Runs build/bin/shardplan-opt (SP_BIN_DIR) through /bin/sh with files in a fresh temporary
 * directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

static char dir[256];

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

/* Runs `shardplan-opt ARGS` in `dir` with stdout/stderr captured in out.txt/err.txt; returns
 * the exit status. */
static int run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s/shardplan-opt' %s > out.txt 2> err.txt", dir,
           SP_BIN_DIR, args);
  int st = system(cmd);
  ck_assert_msg(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
  return WEXITSTATUS(st);
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/sp_opt_test_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/shardplan-opt", SP_BIN_DIR);
  ck_assert_msg(access(path, X_OK) == 0, "%s is not built", path);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static const char *const one_module =
    "sdy.mesh @m = <[\"a\"=2]>\n"
    "func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<4xf32> {\n"
    "  %0 = \"stablehlo.negate\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

static const char *const one_module_printed =
    "module {\n"
    "  sdy.mesh @m = <[\"a\"=2]>\n"
    "  func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<4xf32> {\n"
    "    %0 = stablehlo.negate %arg0 : tensor<4xf32>\n"
    "    return %0 : tensor<4xf32>\n"
    "  }\n"
    "}\n";

START_TEST(prints_a_valid_file_and_exits_zero) {
  write_file("in.mlir", one_module);
  ck_assert_int_eq(run("in.mlir"), 0);
  char *out = read_back("out.txt"), *err = read_back("err.txt");
  ck_assert_str_eq(out, one_module_printed);
  ck_assert_str_eq(err, "");
  free(out);
  free(err);
}
END_TEST

START_TEST(split_input_file_keeps_going_after_a_bad_chunk) {
  write_file("in.mlir",
             "func.func @a() {\n  return\n}\n"
             "// -----\n"
             "func.func @b() {\n  return %x : tensor<f32>\n}\n"
             "// -----\n"
             "func.func @c() {\n  return\n}\n");
  ck_assert_int_eq(run("in.mlir -split-input-file"), 1);
  char *out = read_back("out.txt"), *err = read_back("err.txt");
  ck_assert_str_eq(out,
                   "module {\n  func.func @a() {\n    return\n  }\n}\n"
                   "// -----\n"
                   "// -----\n"
                   "module {\n  func.func @c() {\n    return\n  }\n}\n");
  ck_assert_str_eq(err, "in.mlir:6:10: error: use of undefined value '%x'\n");
  free(out);
  free(err);
  /* --flag works as well as -flag. */
  ck_assert_int_eq(run("--split-input-file in.mlir"), 1);
}
END_TEST

START_TEST(reads_stdin_and_writes_the_o_file) {
  write_file("in.mlir", one_module);
  ck_assert_int_eq(run("- -o result.mlir < in.mlir"), 0);
  char *res = read_back("result.mlir"), *out = read_back("out.txt");
  ck_assert_str_eq(res, one_module_printed);
  ck_assert_str_eq(out, "");
  free(res);
  free(out);
  ck_assert_int_eq(run("-o=second.mlir < in.mlir"), 0);
  res = read_back("second.mlir");
  ck_assert_str_eq(res, one_module_printed);
  free(res);
}
END_TEST

START_TEST(unknown_flags_are_usage_errors) {
  write_file("in.mlir", one_module);
  ck_assert_int_eq(run("in.mlir -sdy-no-such-pass"), 2);
  char *err = read_back("err.txt");
  ck_assert_ptr_nonnull(strstr(err, "unknown option '-sdy-no-such-pass'"));
  ck_assert_ptr_nonnull(strstr(err, "usage: shardplan-opt"));
  free(err);
  ck_assert_int_eq(run("in.mlir other.mlir"), 2);
  ck_assert_int_eq(run("in.mlir -o"), 2);
  ck_assert_int_eq(run("-help"), 0);
}
END_TEST

START_TEST(parse_and_verify_errors_exit_one_with_a_position) {
  write_file("bad.mlir", "func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.abs %a : tensor<4xi32>\n}\n");
  ck_assert_int_eq(run("bad.mlir"), 1);
  char *err = read_back("err.txt");
  ck_assert_str_eq(err,
                   "bad.mlir:2:8: error: type of operand #0 of 'stablehlo.abs' does not match its definition\n");
  free(err);
  /* A sharding on an unknown mesh parses but does not verify. */
  write_file("unverified.mlir",
             "func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nowhere, [{\"a\"}]>}) {\n"
             "  return\n}\n");
  ck_assert_int_eq(run("unverified.mlir"), 1);
  err = read_back("err.txt");
  ck_assert_msg(strncmp(err, "unverified.mlir:", 16) == 0 && strstr(err, ": error: "), "%s", err);
  free(err);
  ck_assert_int_eq(run("missing.mlir"), 1);
}
END_TEST

/* As mlir-opt: ops, attributes and types of dialects that are not registered are errors
 * unless -allow-unregistered-dialect, which admits them in the generic form only; a
 * registered dialect's ops parse either way. */
START_TEST(unregistered_dialects_need_the_flag_and_the_generic_form) {
  write_file("custom.mlir",
             "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
             "  %0 = foo.bar %a : tensor<4xf32>\n"
             "  return %0 : tensor<4xf32>\n}\n");
  write_file("generic.mlir",
             "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
             "  %0 = \"foo.bar\"(%a) {k = #foo.kind<2>} : (tensor<4xf32>) -> tensor<4xf32>\n"
             "  %1 = chlo.erf %0 : tensor<4xf32> -> tensor<4xf32>\n"
             "  return %1 : tensor<4xf32>\n}\n");
  write_file("type.mlir", "func.func @f(%a: !foo.handle) {\n  return\n}\n");
  const char *custom_err = "custom.mlir:2:8: error: Dialect `foo' not found for custom op 'foo.bar' \n";
  ck_assert_int_eq(run("custom.mlir"), 1);
  char *err = read_back("err.txt");
  ck_assert_str_eq(err, custom_err);
  free(err);
  ck_assert_int_eq(run("custom.mlir -allow-unregistered-dialect"), 1); /* no custom parser */
  err = read_back("err.txt");
  ck_assert_str_eq(err, custom_err);
  free(err);
  ck_assert_int_eq(run("generic.mlir"), 1);
  err = read_back("err.txt");
  ck_assert_str_eq(err, "generic.mlir:2:8: error: operation being parsed with an unregistered dialect. "
                        "If this is intended, please use -allow-unregistered-dialect with the MLIR "
                        "tool used\n");
  free(err);
  ck_assert_int_eq(run("generic.mlir -allow-unregistered-dialect"), 0);
  char *out = read_back("out.txt");
  ck_assert_ptr_nonnull(strstr(out, "%0 = \"foo.bar\"(%arg0) {k = #foo.kind<2>} : (tensor<4xf32>) -> tensor<4xf32>\n"));
  free(out);
  ck_assert_int_eq(run("type.mlir"), 1);
  err = read_back("err.txt");
  ck_assert_str_eq(err, "type.mlir:1:18: error: `!foo<\"handle\">` type created with unregistered dialect. "
                        "If this is intended, please call allowUnregisteredDialects() on the MLIRContext, "
                        "or use -allow-unregistered-dialect with the MLIR opt tool used\n");
  free(err);
  ck_assert_int_eq(run("type.mlir -allow-unregistered-dialect"), 0);
  /* The attribute alone, on a registered op. */
  write_file("attr.mlir",
             "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
             "  %0 = stablehlo.negate %a {k = #foo.kind<2>} : tensor<4xf32>\n"
             "  return %0 : tensor<4xf32>\n}\n");
  ck_assert_int_eq(run("attr.mlir"), 1);
  err = read_back("err.txt");
  ck_assert_str_eq(err, "attr.mlir:2:33: error: #foo<\"kind<2>\"> : none attribute created with "
                        "unregistered dialect. If this is intended, please call "
                        "allowUnregisteredDialects() on the MLIRContext, or use "
                        "-allow-unregistered-dialect with the MLIR opt tool used\n");
  free(err);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mlir_tool");
  TCase *tc = tcase_create("driver");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, prints_a_valid_file_and_exits_zero);
  tcase_add_test(tc, split_input_file_keeps_going_after_a_bad_chunk);
  tcase_add_test(tc, reads_stdin_and_writes_the_o_file);
  tcase_add_test(tc, unknown_flags_are_usage_errors);
  tcase_add_test(tc, parse_and_verify_errors_exit_one_with_a_position);
  tcase_add_test(tc, unregistered_dialects_need_the_flag_and_the_generic_form);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
