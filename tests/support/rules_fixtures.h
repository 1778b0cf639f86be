/*
 * rules_fixtures.h - ops built in code for the suites of the OpShardingRule registry
 * (test_rules.c, test_rules_custom_call.c): a module per test (the checked fixture setup /
 * teardown), values and ops from type specs ("2x1x4", "-" a scalar), attribute setters, and
 * rule() / rule_opts(), the printed rule of an op ("NONE" without one, "ERROR: msg" on a
 * failure). Its own header, so that including it is what links sp_rules (tests/CMakeLists.txt).
 *
 * Memory: everything is in the fixture's module arena, freed by teardown; rule() returns a
 * static buffer, valid until the next call.
 */
#ifndef SP_RULES_FIXTURES_H
#define SP_RULES_FIXTURES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/op_attrs.h"
#include "rules/registry.h"

static sp_module *M;
static sp_arena *A;

static inline void setup(void) {
  M = sp_module_new("t.mlir");
  A = M->arena;
}

static inline void teardown(void) { sp_module_free(M); }

/* ------------------------------------------------------------------ helpers */

/* "2x1x4" -> tensor<2x1x4xf32>; "" -> tensor<f32>. */
static inline sp_type *ty(const char *spec) {
  int64_t dims[16];
  int rank = 0;
  const char *p = spec;
  while (*p) {
    char *end;
    dims[rank++] = strtoll(p, &end, 10);
    p = *end == 'x' ? end + 1 : end;
  }
  return sp_type_tensor(A, rank, dims, "f32");
}

/* A value of the given type, defined by a fresh placeholder op. */
static inline sp_value *arg(const char *spec) {
  sp_type *t = ty(spec);
  sp_op *src = sp_op_create(A, "test.arg", 0, NULL, 1, &t, 0);
  return &src->results[0];
}

/* Splits "a;b;c" (a ";"-separated list of type specs; "-" is a scalar). */
static inline int split_types(const char *list, char out[][32], int max) {
  int n = 0;
  if (!list) return 0;
  const char *p = list;
  while (*p && n < max) {
    const char *e = strchr(p, ';');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    snprintf(out[n], 32, "%.*s", (int)len, p);
    if (strcmp(out[n], "-") == 0) out[n][0] = '\0';
    n++;
    if (!e) break;
    p = e + 1;
  }
  return n;
}

/* An op `name` whose operands are fresh values of the `operands` types and whose results
 * have the `results` types. */
static inline sp_op *mk_regions(const char *name, const char *operands, const char *results,
                         int nregions) {
  char ot[16][32], rt[16][32];
  int no = split_types(operands, ot, 16), nr = split_types(results, rt, 16);
  sp_value *vals[16];
  sp_type *types[16];
  for (int i = 0; i < no; i++) vals[i] = arg(ot[i]);
  for (int i = 0; i < nr; i++) types[i] = ty(rt[i]);
  sp_op *op = sp_op_create(A, name, no, vals, nr, types, nregions);
  ck_assert_ptr_nonnull(op);
  return op;
}

static inline sp_op *mk(const char *name, const char *operands, const char *results) {
  return mk_regions(name, operands, results, 0);
}

static inline void set_int(sp_op *op, const char *name, int64_t v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_INT, .u.i = v};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
}

/* "1,0,3" -> INTS; "" -> the empty list. */
static inline void set_ints(sp_op *op, const char *name, const char *csv) {
  int64_t *v = sp_arena_alloc(A, 64 * sizeof *v);
  int n = 0;
  const char *p = csv;
  while (*p) {
    char *end;
    v[n++] = strtoll(p, &end, 10);
    p = *end == ',' ? end + 1 : end;
  }
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS, .u.ints = {n, v}};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
}

static inline void set_str(sp_op *op, const char *name, sp_attr_kind kind, const char *s) {
  sp_attr at = {.name = name, .kind = kind, .u.s = s};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
}

static inline void set_bool(sp_op *op, const char *name, bool b) {
  sp_attr at = {.name = name, .kind = SP_ATTR_BOOL, .u.b = b};
  ck_assert_int_eq(sp_attrs_set(A, &op->attrs, &at), SP_OK);
}

static inline sp_op *custom_call(const char *target, const char *operands,
                                 const char *results) {
  sp_op *op = mk("stablehlo.custom_call", operands, results);
  set_str(op, "call_target_name", SP_ATTR_STR, target);
  return op;
}

/* The printed rule of `op`, "NONE" when it has none, "ERROR: msg" on failure. */
static inline const char *rule_opts(const sp_op *op, const sp_rules_options *opts,
                                    sp_rules_diag *diag) {
  static char buf[2048];
  sp_rule *r = NULL;
  sp_err err;
  sp_err_clear(&err);
  int rc = sp_rules_for_op(A, op, opts, &r, diag, &err);
  if (rc != SP_OK) {
    ck_assert_int_ne(err.code, SP_OK);
    snprintf(buf, sizeof buf, "ERROR: %s", err.msg);
    return buf;
  }
  if (!r) return "NONE";
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, r);
  ck_assert(sp_strbuf_ok(&sb));
  snprintf(buf, sizeof buf, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return buf;
}

static inline const char *rule(const sp_op *op) { return rule_opts(op, NULL, NULL); }

#define RULE(body) "#sdy.op_sharding_rule<" body ">"

#endif /* SP_RULES_FIXTURES_H */
