/*
 * plan_graph.c - the strategy graph the solver reads, made from the search's build
 * (plan_search_int.h): each node's live interval in program order, then its costs and usages
 * in the solver's integer units, and each edge's resharding costs.
 *
 * Invariants: a cost or usage the solver cannot count exactly (NaN, negative, or beyond 2^53)
 * is an error naming the value, never a rounded number; a layout the export never makes
 * (SP_COST_NEVER) is SP_SG_FORBIDDEN. The graph is the caller's (sp_sg_free); the scratch
 * arrays are freed before returning.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/ptr_map.h"
#include "search/plan_search_int.h"
#include "solver/solver.h"

/* ------------------------------------------------------------------ liveness */

/* Position of the top-level op containing `op` (nops + 1 for the return, which keeps values
 * alive to the end). */
static int64_t use_position(search *S, const sp_op *op) {
  while (op && op->block != S->body) op = sp_op_parent(op);
  if (!op) return S->nops + 1;
  if (op->kind == SP_OP_FUNC_RETURN) return S->nops + 1;
  int idx = (int)sp_ptr_map_get(&S->opmap, op, -1);
  return idx < 0 ? S->nops + 1 : idx + 1;
}

void sp_search_liveness(search *S) {
  for (int k = 0; k < S->nnodes; k++) {
    pnode *n = &S->nodes[k];
    int64_t lo = INT64_MAX, hi = 0;
    for (int q = 0; q < n->nmem; q++) {
      const member *mb = &n->mem[q];
      const sp_op *def = mb->follower ? mb->follower : mb->v->def;
      int64_t d = def ? use_position(S, def) : 0;
      int64_t last = d;
      for (const sp_use *u = mb->v->uses; u; u = u->next) {
        int64_t p = use_position(S, u->owner);
        if (p > last) last = p;
      }
      if (d < lo) lo = d;
      if (last + 1 > hi) hi = last + 1;
    }
    if (n->nmem == 0) lo = hi = 0;
    n->live_start = lo;
    n->live_end = hi;
  }
}

/* ------------------------------------------------------------------ the strategy graph */

/* A cost or usage in integer units; false when it is not a number, negative, or beyond what
 * the solver counts exactly (2^53): the caller reports it, naming the value (bad_units),
 * instead of planning with a wrong number. A cost model that gives NaN or a negative cost has
 * a bug or was handed a cluster the reader should have refused; rounding it to 0 would plan
 * the most expensive layout as free. */
static bool to_units(double v, int64_t *out) {
  if (isnan(v) || v < 0) return false;
  double r = floor(v + 0.5);
  if (!(r < (double)SP_SG_MAX_EXACT)) return false;
  *out = (int64_t)r;
  return true;
}

/* The error for a value to_units refused: SP_EINTERNAL for NaN or a negative number (the cost
 * model's fault), SP_ELIMIT for one too large to count (the input's size). */
static int bad_units(search *S, const pnode *n, const char *what, double v, sp_err *err) {
  const char *name = n->nmem > 0 ? value_name(S, n->mem[0].v)
                     : n->op      ? sp_arena_printf(S->m->arena, "%s (line %d)", n->op->name,
                                                   n->op->loc.line)
                                  : "a node";
  if (isnan(v) || v < 0)
    return sp_err_set(err, SP_EINTERNAL, "search: %s of %s is %.4g, %s: the cost model gave "
                      "no valid number", what, name, v, isnan(v) ? "not a number" : "negative");
  return sp_err_set(err, SP_ELIMIT, "search: %s of %s is %.4g, beyond the 2^53 the solver "
                    "counts exactly", what, name, v);
}

int sp_search_build_graph(search *S, sp_sg **out, sp_err *err) {
  sp_sg *g = sp_sg_new("shardplan");
  if (!g) return sp_err_set(err, SP_ENOMEM, "out of memory");
  int rc = SP_OK;
  int64_t *costs = NULL, *usages = NULL;
  int maxn = 1;
  for (int k = 0; k < S->nnodes; k++)
    if (S->nodes[k].set.n > maxn) maxn = S->nodes[k].set.n;
  costs = malloc((size_t)maxn * (size_t)maxn * sizeof *costs);
  usages = malloc((size_t)maxn * sizeof *usages);
  if (!costs || !usages) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto fail;
  }
  for (int k = 0; k < S->nnodes; k++) {
    pnode *n = &S->nodes[k];
    for (int s = 0; s < n->set.n; s++) {
      double bytes = sp_search_node_bytes(S, n, s);
      double cost = (sp_search_node_own_s(S, n, s, false) + n->self_s[s]) * UNITS_PER_SECOND +
                    sp_search_mem_weight(S) * bytes / MIB;
      if (isfinite(n->self_s[s]) && n->self_s[s] >= SP_COST_NEVER) {
        costs[s] = SP_SG_FORBIDDEN;   /* a layout the export never makes (cost_model.h) */
      } else if (!to_units(cost, &costs[s])) {
        rc = bad_units(S, n, "the cost (ns)", cost, err);
        goto fail;
      }
      if (!to_units(ceil(bytes), &usages[s])) {
        rc = bad_units(S, n, "the bytes per device", bytes, err);
        goto fail;
      }
    }
    sp_sg_interval live = {n->live_start, n->live_end};
    rc = sp_sg_add_node(g, n->set.n, costs, usages, live, err);
    if (rc < 0) goto fail;
  }
  for (int e = 0; e < S->nedges; e++) {
    const pedge *pe = &S->edges[e];
    size_t cnt = (size_t)S->nodes[pe->a].set.n * (size_t)S->nodes[pe->b].set.n;
    for (size_t q = 0; q < cnt; q++)
      if (isfinite(pe->sec[q]) && pe->sec[q] >= SP_COST_NEVER) {
        costs[q] = SP_SG_FORBIDDEN;
      } else if (!to_units(pe->sec[q] * UNITS_PER_SECOND, &costs[q])) {
        rc = bad_units(S, &S->nodes[pe->a], "the resharding cost (ns)",
                       pe->sec[q] * UNITS_PER_SECOND, err);
        goto fail;
      }
    rc = sp_sg_add_edge(g, pe->a, pe->b, costs, err);
    if (rc < 0) goto fail;
  }
  double limit = S->o->memory_limit > 0 ? S->o->memory_limit : S->cm.memory_bytes;
  /* A limit beyond what any usage can reach is no limit. */
  bool limited = limit > 0 && limit < (double)SP_SG_MAX_EXACT;
  rc = sp_sg_set_usage_limit(g, limited ? (int64_t)limit : SP_SG_NO_LIMIT, err);
  if (rc < 0) goto fail;
  free(costs);
  free(usages);
  *out = g;
  return SP_OK;
fail:
  free(costs);
  free(usages);
  sp_sg_free(g);
  return rc < 0 ? rc : SP_EINTERNAL;
}
