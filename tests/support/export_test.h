/*
 * export_test.h - helpers for the export stage's tests: run a pass by its shardplan-opt flag
 * (export/export_passes.h) on MLIR text and check fragments of the printed module.
 * Header-only (static inline).
 */
#ifndef SP_EXPORT_TEST_H
#define SP_EXPORT_TEST_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_passes.h"
#include "pass_test.h"

/* Runs pass `flag` with `options` (may be NULL) on `in`; returns the printed module (caller
 * frees) and fails the test when the pass fails. */
static inline char *et_run(const char *in, const char *flag, const char *options) {
  sp_module *m = pt_parse(in);
  const sp_pass_info *p = sp_export_passes;
  while (p->flag && strcmp(p->flag, flag) != 0) p++;
  ck_assert_msg(p->flag != NULL, "no pass -%s", flag);
  sp_err err;
  sp_err_clear(&err);
  int rc = p->run(m, options, &err);
  ck_assert_msg(rc == SP_OK, "-%s failed (%d): %s", flag, rc, err.msg);
  char *out = pt_print(m);
  sp_module_free(m);
  return out;
}

/* The pass's error message (the test fails if the pass succeeds). */
static inline void et_run_fails(const char *in, const char *flag, const char *options,
                                const char *fragment) {
  sp_module *m = pt_parse(in);
  const sp_pass_info *p = sp_export_passes;
  while (p->flag && strcmp(p->flag, flag) != 0) p++;
  ck_assert_msg(p->flag != NULL, "no pass -%s", flag);
  sp_err err;
  sp_err_clear(&err);
  int rc = p->run(m, options, &err);
  ck_assert_msg(rc != SP_OK, "-%s succeeded, expected failure", flag);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "message '%s' lacks '%s'", err.msg, fragment);
  sp_module_free(m);
}

/* Each fragment (NULL-terminated list) occurs in `out`, in that order. */
static inline void et_has_in_order(const char *out, const char *const *fragments) {
  const char *at = out;
  for (int i = 0; fragments[i]; i++) {
    const char *f = strstr(at, fragments[i]);
    ck_assert_msg(f != NULL, "missing (in order) '%s' in:\n%s", fragments[i], out);
    at = f + strlen(fragments[i]);
  }
}

static inline void et_lacks(const char *out, const char *fragment) {
  ck_assert_msg(strstr(out, fragment) == NULL, "unexpected '%s' in:\n%s", fragment, out);
}

#endif /* SP_EXPORT_TEST_H */
