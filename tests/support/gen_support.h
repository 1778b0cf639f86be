/*
 * gen_support.h - generated models for the suites of the search stage: sp_test_propagate()
 * runs aggressive propagation on a module, and sp_test_generate() writes the model of some
 * sp_gen_options (server/gen), parses it and propagates it; both fail the running test on an
 * error. Its own header, so that including it is what links sp_gen and sp_propagation (see
 * tests/CMakeLists.txt). The caller frees the module (sp_module_free).
 */
#ifndef SP_GEN_SUPPORT_H
#define SP_GEN_SUPPORT_H

#include <check.h>
#include <string.h>

#include "gen/model_gen.h"
#include "propagation/propagate.h"
#include "test_support.h"

static inline void sp_test_propagate(sp_module *m) {
  sp_propagate_options po;
  memset(&po, 0, sizeof po);
  po.strategy = SP_PROP_AGGRESSIVE;
  sp_err err;
  int rc = sp_propagate_module(m, &po, NULL, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
}

static inline sp_module *sp_test_generate(const sp_gen_options *o) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_int_eq(sp_gen_write(o, &sb, NULL, &err), SP_OK);
  sp_module *m = sp_test_parse(sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  sp_test_propagate(m);
  return m;
}

#endif /* SP_GEN_SUPPORT_H */
