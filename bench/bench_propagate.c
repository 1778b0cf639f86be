/*
 * bench_propagate.c - time of propagating shardings through a large module to a fixed point.
 *
 * Builds one main function of N ops (default 100,000) in memory: a stack of MLP blocks
 *   h1 = dot_general(h, w1); a = tanh(h1); h2 = dot_general(a, w2); r = add(h2, h);
 *   s = reshape(r) [256,1024] -> [16,16,1024]; h' = reshape(s) -> [256,1024]
 * with the input sharded on "data" and every w1/w2 argument sharded Megatron-style on
 * "model" (mesh data=4, model=2), so that every op's shardings change at least once. Then it
 * times sp_propagate_module() with the basic and the aggressive strategy (a fresh module each)
 * and reports total ms, ns per op, worklist visits and the module arena's growth.
 * The "backward" runs shard only the function result (on "data"), so the shardings travel
 * against the pre-order visit order and every op is visited twice.
 *
 * Usage: bench_propagate [N]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/ir.h"
#include "propagation/propagate.h"

#define BLOCK_OPS 6

static sp_type *ty(sp_arena *a, int rank, int64_t d0, int64_t d1, int64_t d2) {
  int64_t dims[3] = {d0, d1, d2};
  return sp_type_tensor(a, rank, dims, "bf16");
}

static void set_ints1(sp_arena *a, sp_op *op, const char *name, int64_t v) {
  int64_t *p = sp_arena_alloc(a, sizeof *p);
  *p = v;
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS, .u.ints = {1, p}};
  sp_attrs_set(a, &op->attrs, &at);
}

/* A sharding of a rank-2 tensor with `axis` on dim `dim` (closed), other dim closed empty. */
static sp_sharding *sharded(sp_arena *a, int dim, const char *axis) {
  sp_sharding *s = sp_sharding_new(a, "mesh", 2, true);
  s->dims[dim].axes = sp_arena_calloc(a, 1, sizeof(sp_axis_ref));
  s->dims[dim].axes[0] = (sp_axis_ref){axis, 0, 0};
  s->dims[dim].naxes = 1;
  return s;
}

static sp_op *append(sp_arena *a, sp_block *b, const char *name, int n, sp_value **v,
                     sp_type *t) {
  sp_op *op = sp_op_create(a, name, n, v, 1, &t, 0);
  sp_block_append(b, op);
  return op;
}

static sp_module *build(int nops, bool backward) {
  sp_module *m = sp_module_new("bench.mlir");
  sp_arena *a = m->arena;
  sp_mesh *mesh = sp_arena_calloc(a, 1, sizeof *mesh);
  mesh->naxes = 2;
  mesh->axes = sp_arena_calloc(a, 2, sizeof *mesh->axes);
  mesh->axes[0] = (sp_mesh_axis){"data", 4};
  mesh->axes[1] = (sp_mesh_axis){"model", 2};
  sp_op *mop = sp_op_create(a, "sdy.mesh", 0, NULL, 0, NULL, 0);
  sp_attr name = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "mesh"};
  sp_attr mattr = {.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = mesh};
  sp_attrs_set(a, &mop->attrs, &name);
  sp_attrs_set(a, &mop->attrs, &mattr);
  sp_block_append(sp_module_body(m), mop);

  int nblocks = nops / BLOCK_OPS;
  sp_op *fn = sp_op_create(a, "func.func", 0, NULL, 0, NULL, 1);
  sp_attr fname = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "main"};
  sp_attrs_set(a, &fn->attrs, &fname);
  fn->func = sp_arena_calloc(a, 1, sizeof *fn->func);
  fn->func->nresults = 1;
  fn->func->result_types = sp_arena_calloc(a, 1, sizeof(sp_type *));
  fn->func->result_types[0] = ty(a, 2, 256, 1024, 0);
  fn->func->result_shardings = sp_arena_calloc(a, 1, sizeof(sp_sharding *));
  sp_block_append(sp_module_body(m), fn);
  sp_block *b = sp_region_add_block(a, &fn->regions[0]);

  sp_value *h = sp_block_add_arg(a, b, ty(a, 2, 256, 1024, 0));
  if (backward)
    fn->func->result_shardings[0] = sharded(a, 0, "data");
  else
    h->sharding = sharded(a, 0, "data");
  for (int i = 0; i < nblocks; i++) {
    sp_value *w1 = sp_block_add_arg(a, b, ty(a, 2, 1024, 4096, 0));
    sp_value *w2 = sp_block_add_arg(a, b, ty(a, 2, 4096, 1024, 0));
    if (!backward) {
      w1->sharding = sharded(a, 1, "model");
      w2->sharding = sharded(a, 0, "model");
    }
    sp_value *v[2] = {h, w1};
    sp_op *d1 = append(a, b, "stablehlo.dot_general", 2, v, ty(a, 2, 256, 4096, 0));
    set_ints1(a, d1, "lhs_contracting_dimensions", 1);
    set_ints1(a, d1, "rhs_contracting_dimensions", 0);
    sp_value *x = &d1->results[0];
    sp_op *act = append(a, b, "stablehlo.tanh", 1, &x, ty(a, 2, 256, 4096, 0));
    v[0] = &act->results[0];
    v[1] = w2;
    sp_op *d2 = append(a, b, "stablehlo.dot_general", 2, v, ty(a, 2, 256, 1024, 0));
    set_ints1(a, d2, "lhs_contracting_dimensions", 1);
    set_ints1(a, d2, "rhs_contracting_dimensions", 0);
    v[0] = &d2->results[0];
    v[1] = h;
    sp_op *res = append(a, b, "stablehlo.add", 2, v, ty(a, 2, 256, 1024, 0));
    x = &res->results[0];
    sp_op *r1 = append(a, b, "stablehlo.reshape", 1, &x, ty(a, 3, 16, 16, 1024));
    x = &r1->results[0];
    sp_op *r2 = append(a, b, "stablehlo.reshape", 1, &x, ty(a, 2, 256, 1024, 0));
    h = &r2->results[0];
  }
  sp_op *ret = sp_op_create(a, "func.return", 1, &h, 0, NULL, 0);
  sp_block_append(b, ret);
  fn->func->nargs = b->nargs;
  return m;
}

static int run(int nops, sp_prop_strategy strategy, bool backward, const char *label) {
  sp_module *m = build(nops, backward);
  if (!m) return 1;
  int64_t ops = sp_module_num_ops(m);
  size_t before = sp_arena_bytes(m->arena);
  sp_propagate_options o = {.strategy = strategy};
  sp_propagate_stats st;
  sp_err err;
  double t0 = 1e3 * sp_clock_now();
  int rc = sp_propagate_module(m, &o, &st, &err);
  double ms = 1e3 * sp_clock_now() - t0;
  if (rc) {
    fprintf(stderr, "bench_propagate: %s\n", err.msg);
    sp_module_free(m);
    return 1;
  }
  printf("%-20s ops=%lld  total=%.1f ms  %.0f ns/op  visits=%lld  rule_visits=%lld  "
         "updates=%lld  module arena +%.1f MiB\n",
         label, (long long)ops, ms, ms * 1e6 / (double)ops, (long long)st.visits,
         (long long)st.rule_visits, (long long)st.updates,
         (double)(sp_arena_bytes(m->arena) - before) / (1024.0 * 1024.0));
  sp_module_free(m);
  return 0;
}

int main(int argc, char **argv) {
  int nops = argc > 1 ? atoi(argv[1]) : 100000;
  if (nops < BLOCK_OPS) nops = BLOCK_OPS;
  return run(nops, SP_PROP_AGGRESSIVE, false, "aggressive forward") ||
         run(nops, SP_PROP_BASIC, false, "basic forward") ||
         run(nops, SP_PROP_AGGRESSIVE, true, "aggressive backward") ||
         run(nops, SP_PROP_BASIC, true, "basic backward");
}
