/*
 * plan_layers.c - layer sharing: ties the strategies of repeated layers in the strategy graph
 * (see plan_search.h, plan_search_int.h).
 *
 * Layer sharing (after the graph is built; searches only, never evaluations). Every top-level
 * op gets a Weisfeiler-Lehman hash over the def-use graph of the main body:
 *   label(op)   = op name, structured attributes (not shardings, rules or meshes), operand
 *                 and result types, and the ops of its regions in order (what a reduce
 *                 applies);
 *   round t+1   = label, then per operand in order: (producer's round-t hash, producer's
 *                 result index, operand index), then per result: the order-free sum of its
 *                 consumers' (round-t hash, operand index the value flows into);
 * for TIE_ROUNDS = 4 rounds, each linear in ops + uses. Function arguments are labelled by
 * their type only (layer l's weights look like layer l+1's) plus their consumers; uses by
 * func.return count without their position (output order is not structure). So two ops get
 * equal hashes when their 4-hop neighbourhoods are the same up to argument numbering.
 * Consequences, chosen deliberately:
 *   - q, k and v projections of one layer are not tied: they are identical for three hops
 *     (dot, reshape, transpose), then q flows into operand 0 of the scores matmul, k into
 *     operand 1 and v into the context matmul; the fourth round keeps a margin. The two MLP
 *     matmuls differ in their types; forward and backward ops in their neighbourhoods.
 *   - ops within 4 hops of the model's ends (the input, the returned values) are not tied
 *     with their copies in other layers. On a residual stream layers are two hops apart, so
 *     the ops next to it (output projection, second MLP matmul) tie only in layers at least
 *     two away from either end.
 *   - a hash collision cannot tie unrelated ops into an invalid plan, only a worse one:
 *     members must also have identical strategy lists (same count, same axis assignment,
 *     reduction form and result layouts at every index), compared, never assumed.
 * Nodes are keyed by their op's hash (a source node by its argument's or constant's); fixed
 * and single-strategy nodes are never tied. Equal keys with equal strategy lists form a group,
 * chained by edges costing 0 for the same strategy index and SP_SG_FORBIDDEN otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "search/plan_search_int.h"

/* ------------------------------------------------------------------ layer sharing */

/* How many rounds the structural hash looks around each op. q, k and v projections first
 * differ three hops downstream (reshape, transpose, then operand 0 or 1 of the scores
 * matmul, or operand 1 of the context matmul); one more round keeps a margin. */
#define TIE_ROUNDS 4

static uint64_t mix64(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  return h;
}

static uint64_t mix_str(uint64_t h, const char *s) {
  uint64_t x = 0xcbf29ce484222325ULL;
  for (; s && *s; s++) x = (x ^ (unsigned char)*s) * 0x100000001b3ULL;
  return mix64(h, x);
}

static uint64_t type_hash(const sp_type *t) {
  if (!t) return 1;
  uint64_t h = mix64(2, (uint64_t)t->kind);
  if (t->kind == SP_TYPE_TENSOR) {
    h = mix64(h, (uint64_t)(int64_t)t->rank);
    for (int d = 0; d < t->rank; d++) h = mix64(h, (uint64_t)t->dims[d]);
    h = mix_str(h, t->elem);
    h = mix_str(h, t->encoding);
  } else if (t->kind == SP_TYPE_TUPLE) {
    for (int i = 0; i < t->nelems; i++) h = mix64(h, type_hash(t->elems[i]));
  } else {
    h = mix_str(h, t->text);
  }
  return h;
}

/* The structured attributes; shardings, rules and meshes are placement, not structure.
 * Attributes are kept in insertion order, so they are combined order-independently. */
static uint64_t attrs_hash(const sp_attrs *d) {
  uint64_t sum = 0;
  for (int i = 0; i < d->n; i++) {
    const sp_attr *at = &d->v[i];
    uint64_t h = mix_str(mix64(3, (uint64_t)at->kind), at->name);
    switch (at->kind) {
      case SP_ATTR_BOOL: h = mix64(h, at->u.b); break;
      case SP_ATTR_INT: h = mix64(h, (uint64_t)at->u.i); break;
      case SP_ATTR_INTS:
        for (int k = 0; k < at->u.ints.n; k++) h = mix64(h, (uint64_t)at->u.ints.v[k]);
        break;
      case SP_ATTR_STR:
      case SP_ATTR_SYMBOL:
      case SP_ATTR_ENUM:
      case SP_ATTR_TEXT: h = mix_str(h, at->u.s); break;
      case SP_ATTR_SHARDING:
      case SP_ATTR_SHARDINGS:
      case SP_ATTR_AXES:
      case SP_ATTR_RULE:
      case SP_ATTR_MESH: continue;
      default: break;
    }
    sum += h;
  }
  return sum;
}

/* An op's own label: name, attributes, operand and result types, and its regions' ops
 * (e.g. the add or maximum a reduce applies), in order. */
static uint64_t op_label(const sp_op *op) {
  uint64_t h = mix_str(5, op->name);
  h = mix64(h, attrs_hash(&op->attrs));
  h = mix64(h, (uint64_t)op->noperands);
  for (int j = 0; j < op->noperands; j++)
    h = mix64(h, type_hash(op->operands[j].value ? op->operands[j].value->type : NULL));
  h = mix64(h, (uint64_t)op->nresults);
  for (int r = 0; r < op->nresults; r++) h = mix64(h, type_hash(op->results[r].type));
  for (int g = 0; g < op->nregions; g++)
    for (int b = 0; b < op->regions[g].nblocks; b++) {
      const sp_block *blk = op->regions[g].blocks[b];
      h = mix64(h, 0x77 + (uint64_t)blk->nargs);
      for (const sp_op *in = blk->first; in; in = in->next) h = mix64(h, op_label(in));
    }
  return h;
}

/* Hash of value v in the current round: its producer's hash and result index, or the
 * argument's hash; values defined in nested regions count by their type. */
static uint64_t value_hash(search *S, const sp_value *v, const uint64_t *oph,
                           const uint64_t *argh) {
  if (!v) return 7;
  if (v->def) {
    int i = (int)sp_ptr_map_get(&S->opmap, v->def, -1);
    return i >= 0 ? mix64(oph[i], 0x100 + (uint64_t)v->index) : mix64(8, type_hash(v->type));
  }
  if (v->block == S->body && v->index < S->body->nargs) return argh[v->index];
  return mix64(9, type_hash(v->type));
}

/* Sum over the uses of v (top-level consumers): each consumer's hash with the operand index
 * the value flows into; a sum, so the order of the use list does not matter. */
static uint64_t users_hash(search *S, const sp_value *v, const uint64_t *oph) {
  uint64_t sum = 0;
  for (const sp_use *u = v->uses; u; u = u->next) {
    /* The return's operand order is the output order, not structure: a gradient returned
     * as result 3 or 5 is the same use. */
    if (u->owner->kind == SP_OP_FUNC_RETURN) {
      sum += 0x600;
      continue;
    }
    int i = (int)sp_ptr_map_get(&S->opmap, u->owner, -1);
    uint64_t c = i >= 0 ? oph[i] : mix_str(10, u->owner->name);
    sum += mix64(c, 0x200 + (uint64_t)u->index);
  }
  return sum;
}

/* Weisfeiler-Lehman refinement over the def-use graph of the main body: TIE_ROUNDS rounds,
 * each linear in ops + uses. Arguments start from their type only (so layer l's weights
 * and layer l+1's look alike until their uses tell them apart). */
static int structural_hashes(search *S, uint64_t **oph_out, uint64_t **argh_out, sp_err *err) {
  int nops = S->nops, nargs = S->body->nargs;
  uint64_t *label = sp_arena_alloc(S->a, (size_t)(nops + 1) * sizeof *label);
  uint64_t *oph = sp_arena_alloc(S->a, (size_t)(nops + 1) * sizeof *oph);
  uint64_t *next = sp_arena_alloc(S->a, (size_t)(nops + 1) * sizeof *next);
  uint64_t *argh = sp_arena_alloc(S->a, (size_t)(nargs + 1) * sizeof *argh);
  uint64_t *argn = sp_arena_alloc(S->a, (size_t)(nargs + 1) * sizeof *argn);
  if (!label || !oph || !next || !argh || !argn) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < nops; i++) oph[i] = label[i] = op_label(S->ops[i]);
  for (int k = 0; k < nargs; k++) argh[k] = mix64(11, type_hash(S->body->args[k]->type));
  for (int round = 0; round < TIE_ROUNDS; round++) {
    for (int i = 0; i < nops; i++) {
      const sp_op *op = S->ops[i];
      uint64_t h = label[i];
      for (int j = 0; j < op->noperands; j++)
        h = mix64(h, mix64(value_hash(S, op->operands[j].value, oph, argh), 0x300 + (uint64_t)j));
      for (int r = 0; r < op->nresults; r++)
        h = mix64(h, mix64(users_hash(S, &op->results[r], oph), 0x400 + (uint64_t)r));
      next[i] = h;
    }
    for (int k = 0; k < nargs; k++)
      argn[k] = mix64(mix64(11, type_hash(S->body->args[k]->type)),
                      users_hash(S, S->body->args[k], oph));
    memcpy(oph, next, (size_t)nops * sizeof *oph);
    memcpy(argh, argn, (size_t)nargs * sizeof *argh);
  }
  *oph_out = oph;
  *argh_out = argh;
  return SP_OK;
}

static bool same_strategy(const sp_strategy *x, const sp_strategy *y, int naxes, int nres) {
  if ((x->axis_factor == NULL) != (y->axis_factor == NULL)) return false;
  if (x->axis_factor && memcmp(x->axis_factor, y->axis_factor, (size_t)naxes) != 0) return false;
  if (x->scatter_dim != y->scatter_dim || x->nreduce != y->nreduce || x->partial != y->partial)
    return false;
  if (x->devices != y->devices) return false;
  for (int r = 0; r < nres; r++)
    if (!sp_layout_equal(&x->results[r], &y->results[r])) return false;
  return true;
}

/* Same count, same assignments in the same order, same result layouts. */
static bool same_strategy_list(const search *S, const pnode *x, const pnode *y) {
  if (x->set.n != y->set.n || x->set.nresults != y->set.nresults ||
      x->set.noperands != y->set.noperands)
    return false;
  for (int s = 0; s < x->set.n; s++)
    if (!same_strategy(&x->set.v[s], &y->set.v[s], S->mesh->naxes, x->set.nresults)) return false;
  return true;
}

typedef struct keyed { uint64_t h; int node; } keyed;

static int cmp_keyed(const void *x, const void *y) {
  const keyed *a = x, *b = y;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return a->node - b->node;
}

/* The hash a node is matched by: its op's, or its argument's; false for nodes never tied
 * (fixed nodes, single-strategy nodes). */
static bool node_key(search *S, const pnode *n, const uint64_t *oph, const uint64_t *argh,
                     uint64_t *out) {
  if (n->kind == NODE_FIXED || n->set.n < 2 || n->nmem < 1) return false;
  if (n->op) {
    int i = (int)sp_ptr_map_get(&S->opmap, n->op, -1);
    if (i < 0) return false;
    *out = oph[i];
    return true;
  }
  const sp_value *v = n->mem[0].v;
  if (v->def || v->block != S->body) return false;
  *out = mix64(0x500, argh[v->index]);
  return true;
}

/* Chains a group's members with "same strategy index" edges and records the group. */
static int tie_group(search *S, sp_sg *g, const int *members, int cnt, sp_plan_summary *out,
                     int *cap, sp_err *err) {
  int ns = S->nodes[members[0]].set.n;
  int64_t *costs = malloc((size_t)ns * (size_t)ns * sizeof *costs);
  if (!costs) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int x = 0; x < ns; x++)
    for (int y = 0; y < ns; y++) costs[(size_t)x * (size_t)ns + (size_t)y] = x == y ? 0 : SP_SG_FORBIDDEN;
  int rc = SP_OK;
  for (int k = 1; k < cnt && rc >= 0; k++) rc = sp_sg_add_edge(g, members[k - 1], members[k], costs, err);
  free(costs);
  if (rc < 0) return rc;
  if (sp_arena_grow(S->m->arena, (void **)&out->ties, cap, out->ntie_groups, sizeof *out->ties))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_plan_tie_group *tg = &out->ties[out->ntie_groups++];
  tg->n = cnt;
  tg->values = sp_arena_alloc(S->m->arena, (size_t)cnt * sizeof *tg->values);
  if (!tg->values) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int k = 0; k < cnt; k++) tg->values[k] = S->nodes[members[k]].mem[0].v;
  out->tied_nodes += cnt;
  return SP_OK;
}

/* Ties structurally identical nodes (equal hash and equal strategy lists) together. Within
 * a run of equal hashes, each node joins the first group whose representative has its
 * strategy list, or starts one. */
int sp_search_tie_layers(search *S, sp_sg *g, sp_plan_summary *out, sp_err *err) {
  uint64_t *oph = NULL, *argh = NULL;
  int rc = structural_hashes(S, &oph, &argh, err);
  if (rc) return rc;
  keyed *kv = sp_arena_alloc(S->a, (size_t)(S->nnodes + 1) * sizeof *kv);
  int *grp = sp_arena_alloc(S->a, (size_t)(S->nnodes + 1) * sizeof *grp);
  int *members = sp_arena_alloc(S->a, (size_t)(S->nnodes + 1) * sizeof *members);
  if (!kv || !grp || !members) return sp_err_set(err, SP_ENOMEM, "out of memory");
  int nk = 0;
  for (int k = 0; k < S->nnodes; k++) {
    uint64_t h;
    if (node_key(S, &S->nodes[k], oph, argh, &h)) kv[nk++] = (keyed){h, k};
  }
  qsort(kv, (size_t)nk, sizeof *kv, cmp_keyed);
  int cap = 0;
  for (int lo = 0, hi; lo < nk; lo = hi) {
    for (hi = lo + 1; hi < nk && kv[hi].h == kv[lo].h; hi++) {}
    if (hi - lo < 2) continue;
    /* grp[q]: the first index in the run with the same strategy list as kv[q]. */
    for (int q = lo; q < hi; q++) {
      grp[q] = q;
      for (int p = lo; p < q; p++)
        if (grp[p] == p && same_strategy_list(S, &S->nodes[kv[p].node], &S->nodes[kv[q].node])) {
          grp[q] = p;
          break;
        }
    }
    for (int p = lo; p < hi; p++) {
      if (grp[p] != p) continue;
      int cnt = 0;
      for (int q = p; q < hi; q++)
        if (grp[q] == p) members[cnt++] = kv[q].node;
      if (cnt < 2) continue;
      rc = tie_group(S, g, members, cnt, out, &cap, err);
      if (rc) return rc;
    }
  }
  return SP_OK;
}
