/*
 * pass_test.h - text-in, text-out helpers for the tests of module passes: parse MLIR with
 * sp_mlir_parse, run a pass, print with sp_mlir_print and compare with the expected text.
 * Header-only (static inline) so that any test_<module>.c can include it.
 */
#ifndef SP_PASS_TEST_H
#define SP_PASS_TEST_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"

typedef int (*pt_pass_fn)(sp_module *m, sp_err *err);

static inline sp_module *pt_parse(const char *text) {
  sp_module *m = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse failed: %s", err.msg);
  return m;
}

/* The printed module; the caller frees it. */
static inline char *pt_print(const sp_module *m) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_int_eq(sp_mlir_print(m, &sb, &err), SP_OK);
  return sp_strbuf_detach(&sb);
}

/* Runs `pass` on `m` and checks it succeeded. */
static inline void pt_run(sp_module *m, pt_pass_fn pass) {
  sp_err err;
  sp_err_clear(&err);
  int rc = pass(m, &err);
  ck_assert_msg(rc == SP_OK, "pass failed (%d): %s", rc, err.msg);
}

/* Parses `in`, runs `pass` and returns the printed module (caller frees). */
static inline char *pt_output(const char *in, pt_pass_fn pass) {
  sp_module *m = pt_parse(in);
  pt_run(m, pass);
  char *out = pt_print(m);
  sp_module_free(m);
  return out;
}

/* Parses `in`, runs the passes (NULL-terminated), and compares the printed module with `want`. */
static inline void pt_expect(const char *in, const pt_pass_fn *passes, const char *want) {
  sp_module *m = pt_parse(in);
  for (int i = 0; passes[i]; i++) pt_run(m, passes[i]);
  char *got = pt_print(m);
  ck_assert_str_eq(got, want);
  free(got);
  sp_module_free(m);
}

/* One pass. */
static inline void pt_expect1(const char *in, pt_pass_fn pass, const char *want) {
  pt_pass_fn passes[] = {pass, NULL};
  pt_expect(in, passes, want);
}

/* Runs `pass` on `in` and expects failure with status `code` and `fragment` in the message. */
static inline void pt_expect_error(const char *in, pt_pass_fn pass, int code, const char *fragment) {
  sp_module *m = pt_parse(in);
  sp_err err;
  sp_err_clear(&err);
  int rc = pass(m, &err);
  ck_assert_int_eq(rc, code);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "message '%s' lacks '%s'", err.msg, fragment);
  sp_module_free(m);
}

#endif /* SP_PASS_TEST_H */
