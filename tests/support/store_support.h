/*
 * store_support.h - the plan store for the suites that keep plans (store, web, daemon):
 * sp_test_store_open() opens a store with the given options and fails the running test, with
 * the store's message, when it does not open. Its own header, so that including it is what
 * links sp_store (see tests/CMakeLists.txt). The caller closes the store (sp_store_close); the
 * temporary folder it usually lives in comes from sp_test_temp_db() (test_support.h).
 */
#ifndef SP_STORE_SUPPORT_H
#define SP_STORE_SUPPORT_H

#include <check.h>

#include "store/store.h"

static inline sp_store *sp_test_store_open(const sp_store_options *o) {
  sp_store *s = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_store_open(o, &s, &err);
  ck_assert_msg(rc == SP_OK, "opening the store %s: %s", o->path, err.msg);
  return s;
}

#endif /* SP_STORE_SUPPORT_H */
