/*
 * verify_fixtures.h - IR built in code for the verifier's suites (test_verify.c,
 * test_verify_manual.c): a module with a mesh, functions and ops from types, shardings on one
 * dim, attributes, and verify(), the verifier's message ("" when the module verifies).
 *
 * Memory: everything is in the module's arena; the caller frees the module (sp_module_free).
 * verify() returns a static buffer, valid until the next call.
 */
#ifndef SP_VERIFY_FIXTURES_H
#define SP_VERIFY_FIXTURES_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/verify.h"

static inline void set_attr(sp_module *m, sp_op *op, sp_attr at) {
  ck_assert_int_eq(sp_attrs_set(m->arena, &op->attrs, &at), SP_OK);
}

static inline sp_type *tensor2(sp_module *m, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  return sp_type_tensor(m->arena, 2, dims, "f32");
}

/* A module with @mesh = <["a"=4, "b"=2]> at line 1. */
static inline sp_module *new_module(void) {
  sp_module *m = sp_module_new("v.mlir");
  sp_mesh *mesh = sp_arena_calloc(m->arena, 1, sizeof *mesh);
  mesh->naxes = 2;
  mesh->axes = sp_arena_calloc(m->arena, 2, sizeof *mesh->axes);
  mesh->axes[0] = (sp_mesh_axis){"a", 4};
  mesh->axes[1] = (sp_mesh_axis){"b", 2};
  sp_op *op = sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  set_attr(m, op, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "mesh"});
  set_attr(m, op, (sp_attr){.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = mesh});
  op->loc = (sp_loc){1, 1};
  sp_block_append(sp_module_body(m), op);
  return m;
}

/* func.func @f(args...) -> (results...) at line 2, with its entry block; returns the block. */
static inline sp_block *add_func(sp_module *m, int nargs, sp_type **args, int nres,
                                 sp_type **res, sp_op **fn_out) {
  sp_op *fn = sp_op_create(m->arena, "func.func", 0, NULL, 0, NULL, 1);
  set_attr(m, fn, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "f"});
  fn->func = sp_arena_calloc(m->arena, 1, sizeof *fn->func);
  fn->func->nargs = nargs;
  fn->func->arg_types = args;
  fn->func->nresults = nres;
  fn->func->result_types = res;
  fn->func->result_shardings = sp_arena_calloc(m->arena, (size_t)nres + 1, sizeof(sp_sharding *));
  fn->loc = (sp_loc){2, 1};
  sp_block_append(sp_module_body(m), fn);
  sp_block *b = sp_region_add_block(m->arena, &fn->regions[0]);
  for (int i = 0; i < nargs; i++) {
    sp_value *v = sp_block_add_arg(m->arena, b, args[i]);
    v->loc = (sp_loc){2, 10 + 30 * i};
  }
  if (fn_out) *fn_out = fn;
  return b;
}

static inline sp_op *add_op(sp_module *m, sp_block *b, const char *name, int nops,
                            sp_value **ops, int nres, sp_type **res, int line) {
  sp_op *op = sp_op_create(m->arena, name, nops, ops, nres, res, 0);
  op->loc = (sp_loc){line, 5};
  sp_block_append(b, op);
  return op;
}

static inline sp_sharding *sharding1(sp_module *m, int rank, int dim, const char *axis) {
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", rank, true);
  if (axis) {
    s->dims[dim].axes = sp_arena_calloc(m->arena, 1, sizeof(sp_axis_ref));
    s->dims[dim].axes[0] = (sp_axis_ref){axis, 0, 0};
    s->dims[dim].naxes = 1;
  }
  return s;
}

static inline const char *verify(sp_module *m) {
  static sp_err err;
  int rc = sp_verify_module(m, &err);
  if (rc == SP_OK) return "";
  ck_assert_int_eq(rc, SP_EINVAL);
  return err.msg;
}

#endif /* SP_VERIFY_FIXTURES_H */
