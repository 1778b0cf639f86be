/*
 * bench_rules.c - cost of building OpShardingRules for a large graph.
 *
 * Builds N ops (default 100,000) in memory, cycling through the mix of a transformer layer
 * (element-wise, dot_general with batching, reshape with compound factors, transpose,
 * broadcast_in_dim, reduce, concatenate of slices, custom call), then times
 * sp_rules_for_op() over all of them and reports ns per op and arena bytes per op.
 *
 * Usage: bench_rules [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/ir.h"
#include "rules/registry.h"

static sp_type *ty(sp_arena *a, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  int64_t dims[4] = {d0, d1, d2, d3};
  return sp_type_tensor(a, rank, dims, "bf16");
}

static void set_ints(sp_arena *a, sp_op *op, const char *name, int n, const int64_t *v) {
  int64_t *copy = sp_arena_alloc(a, (size_t)n * sizeof *copy + 1);
  for (int i = 0; i < n; i++) copy[i] = v[i];
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS, .u.ints = {n, copy}};
  sp_attrs_set(a, &op->attrs, &at);
}

static sp_op *make_op(sp_arena *a, int k, sp_value *x, sp_value *w, sp_value *flat) {
  sp_type *t;
  sp_op *op;
  switch (k % 8) {
    case 0: { /* add */
      sp_value *v[2] = {x, x};
      t = x->type;
      return sp_op_create(a, "stablehlo.add", 2, v, 1, &t, 0);
    }
    case 1: { /* dot_general: [b, s, h] x [h, f] -> [b, s, f] */
      sp_value *v[2] = {x, w};
      t = ty(a, 3, 8, 512, 2048, 0);
      op = sp_op_create(a, "stablehlo.dot_general", 2, v, 1, &t, 0);
      static const int64_t lc[1] = {2}, rc[1] = {0};
      set_ints(a, op, "lhs_contracting_dimensions", 1, lc);
      set_ints(a, op, "rhs_contracting_dimensions", 1, rc);
      return op;
    }
    case 2: /* reshape [b, s, h] -> [b, s, heads, hd] */
      t = ty(a, 4, 8, 512, 16, 32);
      return sp_op_create(a, "stablehlo.reshape", 1, &x, 1, &t, 0);
    case 3: { /* transpose */
      t = ty(a, 3, 512, 8, 512, 0);
      op = sp_op_create(a, "stablehlo.transpose", 1, &x, 1, &t, 0);
      static const int64_t perm[3] = {1, 0, 2};
      set_ints(a, op, "permutation", 3, perm);
      return op;
    }
    case 4: { /* broadcast_in_dim [h] -> [b, s, h] */
      t = ty(a, 3, 8, 512, 512, 0);
      op = sp_op_create(a, "stablehlo.broadcast_in_dim", 1, &flat, 1, &t, 0);
      static const int64_t dims[1] = {2};
      set_ints(a, op, "broadcast_dimensions", 1, dims);
      return op;
    }
    case 5: { /* reduce over h */
      sp_type *s = ty(a, 0, 0, 0, 0, 0);
      sp_op *init = sp_op_create(a, "stablehlo.constant", 0, NULL, 1, &s, 0);
      sp_value *v[2] = {x, &init->results[0]};
      t = ty(a, 2, 8, 512, 0, 0);
      op = sp_op_create(a, "stablehlo.reduce", 2, v, 1, &t, 0);
      static const int64_t dims[1] = {2};
      set_ints(a, op, "dimensions", 1, dims);
      return op;
    }
    case 6: { /* concatenate of two slices */
      t = ty(a, 3, 8, 512, 256, 0);
      sp_op *s1 = sp_op_create(a, "stablehlo.slice", 1, &x, 1, &t, 0);
      sp_op *s2 = sp_op_create(a, "stablehlo.slice", 1, &x, 1, &t, 0);
      sp_value *v[2] = {&s1->results[0], &s2->results[0]};
      t = x->type;
      op = sp_op_create(a, "stablehlo.concatenate", 2, v, 1, &t, 0);
      sp_attr at = {.name = "dimension", .kind = SP_ATTR_INT, .u.i = 2};
      sp_attrs_set(a, &op->attrs, &at);
      return op;
    }
    default: { /* custom call */
      t = x->type;
      op = sp_op_create(a, "stablehlo.custom_call", 1, &x, 1, &t, 0);
      sp_attr at = {.name = "call_target_name", .kind = SP_ATTR_STR, .u.s = "MoveToHost"};
      sp_attrs_set(a, &op->attrs, &at);
      return op;
    }
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  if (n <= 0) {
    fprintf(stderr, "usage: bench_rules [N > 0]\n");
    return 2;
  }
  sp_arena *graph = sp_arena_new(0);
  sp_type *tx = ty(graph, 3, 8, 512, 512, 0), *tw = ty(graph, 2, 512, 2048, 0, 0);
  sp_type *tf = ty(graph, 1, 512, 0, 0, 0);
  sp_op *src = sp_op_create(graph, "test.args", 0, NULL, 1, &tx, 0);
  sp_op *wsrc = sp_op_create(graph, "test.args", 0, NULL, 1, &tw, 0);
  sp_op *fsrc = sp_op_create(graph, "test.args", 0, NULL, 1, &tf, 0);
  sp_op **ops = malloc((size_t)n * sizeof *ops);
  if (!graph || !ops) return 1;
  for (long i = 0; i < n; i++)
    ops[i] = make_op(graph, (int)i, &src->results[0], &wsrc->results[0], &fsrc->results[0]);

  sp_arena *rules = sp_arena_new(0);
  sp_rules_diag diag = {0};
  long with_rule = 0;
  double t0 = sp_clock_now();
  for (long i = 0; i < n; i++) {
    sp_rule *r;
    sp_err err;
    if (sp_rules_for_op(rules, ops[i], NULL, &r, &diag, &err) != SP_OK) {
      fprintf(stderr, "op %ld: %s\n", i, err.msg);
      return 1;
    }
    with_rule += r != NULL;
  }
  double dt = sp_clock_now() - t0;
  printf("bench_rules: %ld ops (%ld with a rule) in %.3f s: %.0f ns/op, %.0f arena bytes/op\n",
         n, with_rule, dt, dt * 1e9 / (double)n, (double)sp_arena_bytes(rules) / (double)n);
  sp_arena_free(rules);
  sp_arena_free(graph);
  free(ops);
  return 0;
}
