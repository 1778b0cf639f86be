/*
 * plan_search.c - builds the strategy graph of a propagated module, solves it and writes the
 * plan back (see plan_search.h).
 *
 * The build has three phases over the main function's top-level ops, in program order:
 *   1. nodes: a source node per ranked argument and constant, an op node (or a fixed node)
 *      per other op, element-wise followers attached to the node of the operand they follow;
 *   2. strategy caps: nodes above max_strategies keep their cheapest strategies;
 *   3. edges: each operand of each op is priced from its producer's layouts to the layouts the
 *      op (or, for a follower, its node) wants under each strategy; distinct layouts are priced
 *      once per edge.
 * Every value the search places (ranked static tensors defined at top level) has a slot: the
 * node and the member index within the node that holds its layout.
 *
 * Invariants: a member's layout under strategy s is set.v[s].results[member.result]; a
 * follower's member uses the result index of the value it follows, so chains of followers all
 * read the same layout.
 *
 * The parts: plan_partial.c decides which values may carry partial sums (keep-partial
 * strategies and their followers), plan_reconcile.c makes the strategies the export's explicit
 * reshards would not run as they are (fixed nodes, reduce-scatters the pass decides otherwise)
 * what it runs, plan_fold.c prices an op's reduction with its one consumer's reshard,
 * plan_layers.c ties the strategies of repeated layers (layer sharing), plan_report.c writes the
 * chosen plan back and totals its costs and collectives (the report), plan_graph.c turns the
 * build into the solver's strategy graph (liveness, integer costs); they share the build state
 * of plan_search_int.h.
 */
#include "search/plan_search.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "rules/registry.h"
#include "solver/solver.h"
#include "search/plan_search_int.h"
#include "search/strategies.h"

/* ------------------------------------------------------------------ nodes */

static int add_node(search *S, int kind, sp_op *op, sp_err *err) {
  if (sp_arena_grow(S->a, (void **)&S->nodes, &S->capnodes, S->nnodes, sizeof *S->nodes))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  pnode *n = &S->nodes[S->nnodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->op = op;
  n->first_in = -1;
  return S->nnodes++;
}

static int add_member(search *S, int node, sp_value *v, int result, sp_op *follower, sp_err *err) {
  pnode *n = &S->nodes[node];
  if (sp_arena_grow(S->a, (void **)&n->mem, &n->capmem, n->nmem, sizeof *n->mem))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  member *mb = &n->mem[n->nmem];
  memset(mb, 0, sizeof *mb);
  mb->v = v;
  mb->result = result;
  mb->follower = follower;
  mb->followed = -1;
  if (S->nslots == S->capslots) return sp_err_set(err, SP_EINTERNAL, "value slots overflow");
  S->slot_node[S->nslots] = node;
  S->slot_mem[S->nslots] = n->nmem;
  sp_ptr_map_put(&S->valmap, v, S->nslots++);
  n->nmem++;
  return SP_OK;
}

/* The shardings the search reads must be on its mesh, or on a maximal mesh (one device: JAX
 * puts its host callbacks there), which the search reads as replicated and keeps. */
static int check_mesh_of(search *S, const sp_value *v, sp_err *err) {
  const sp_sharding *s = v->sharding;
  if (!s || sp_search_on_maximal_mesh(S, s)) return SP_OK;
  bool same = s->inline_mesh ? sp_mesh_equal(s->inline_mesh, S->mesh)
                             : (s->mesh_name && strcmp(s->mesh_name, S->mesh_name) == 0);
  if (!same)
    return sp_err_set(err, SP_EUNSUPPORTED, "%s: sharded on another mesh than @%s; the search "
                      "plans one mesh", value_name(S, v), S->mesh_name);
  return SP_OK;
}

static bool unsharded_open(const sp_sharding *s) { return !s || sp_sharding_is_fully_open_empty(s); }

/* Whether a follower's result and the value it would follow have the same given sharding. */
static bool same_given(search *S, const sp_sharding *x, const sp_sharding *y, int rank) {
  if (!S->fixed) {
    if (unsharded_open(x) && unsharded_open(y)) return true;
    return x && y && sp_sharding_equal(x, y);
  }
  sp_layout *lx, *ly;
  if (sp_layout_from_sharding(S->a, x, rank, S->mesh, &lx, NULL)) return false;
  if (sp_layout_from_sharding(S->a, y, rank, S->mesh, &ly, NULL)) return false;
  return sp_layout_equal(lx, ly);
}

/* The slot of the operand an element-wise op can follow, or -1: op nodes first, then sources;
 * *operand is that operand's index. */
static int follow_slot(search *S, const sp_op *op, int *operand) {
  if (S->o->no_coarsen || op->nresults != 1 || !sp_rules_is_elementwise(op)) return -1;
  const sp_value *r = &op->results[0];
  if (!placeable(r)) return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < op->noperands; j++) {
      const sp_value *v = op->operands[j].value;
      int slot = v ? (int)sp_ptr_map_get(&S->valmap, v, -1) : -1;
      if (slot < 0) continue;
      int kind = S->nodes[S->slot_node[slot]].kind;
      if (kind != (pass == 0 ? NODE_OP : NODE_SOURCE)) continue;
      if (!sp_type_same_dims(v->type, r->type)) continue;
      if (!same_given(S, v->sharding, r->sharding, r->type->rank)) continue;
      *operand = j;
      return slot;
    }
  }
  return -1;
}

static bool all_static(const sp_op *op) {
  for (int i = 0; i < op->noperands; i++) {
    const sp_value *v = op->operands[i].value;
    if (!v || !v->type || !sp_type_is_static_tensor(v->type)) return false;
  }
  for (int r = 0; r < op->nresults; r++)
    if (!sp_type_is_static_tensor(op->results[r].type)) return false;
  return true;
}

static bool has_placeable(const sp_op *op) {
  for (int i = 0; i < op->noperands; i++)
    if (placeable(op->operands[i].value)) return true;
  for (int r = 0; r < op->nresults; r++)
    if (placeable(&op->results[r])) return true;
  return false;
}


/* Reductions only all-reduce: asked for, or the cluster's runtime has no reduce-scatter. */
static bool no_reduce_scatter(const search *S) {
  return S->o->no_reduce_scatter || (S->o->cluster && S->o->cluster->no_reduce_scatter);
}

/* The strategies offered. Only the option takes the scattered form away: a runtime without
 * reduce-scatter still runs a reduction onto a sharded result (an all-reduce, then each
 * device keeps its part), and a result whose given sharding holds the reduction axes has no
 * other strategy that reduces there; sp_search_own_collective_s prices it as it runs. */
static sp_strategy_opts strategy_opts(const search *S, bool partial) {
  return (sp_strategy_opts){S->fixed, S->o->no_reduce_scatter, partial};
}

static int add_source(search *S, sp_value *v, sp_op *op, sp_err *err) {
  int rc = check_mesh_of(S, v, err);
  if (rc) return rc;
  int node = add_node(S, NODE_SOURCE, op, err);
  if (node < 0) return node;
  sp_strategy_opts so = strategy_opts(S, false);
  rc = sp_strategies_for_value(S->a, v, S->mesh, &so, &S->nodes[node].set, err);
  if (rc) return sp_err_prefix(err, "%s", value_name(S, v));
  if (S->nodes[node].set.n == 0)
    return sp_err_set(err, SP_EINVAL, "%s: its sharding admits no layout", value_name(S, v));
  return add_member(S, node, v, 0, NULL, err);
}

/* Ops planned whole: ops the rule registry does not know (the conservative plan: nothing of
 * theirs is split), host callbacks (results on a maximal mesh: one device reads the operands
 * whole) and top-k (XLA's SPMD partitioner gathers the operand of its TopK even along batch
 * dims, then slices the results). The search gives them one strategy with every operand and
 * result replicated, so it prices the gathers XLA does; the sharding a callback's result has on
 * its maximal mesh is kept (sp_search_write_back). */
static bool runs_whole(search *S, const sp_op *op) {
  if (op->kind == SP_OP_CHLO_TOP_K || op->kind == SP_OP_MHLO_TOPK) return true;
  if (sp_rules_classify(op) == SP_RULES_UNKNOWN) return true;
  if (op->kind == SP_OP_CUSTOM_CALL) {
    const char *target = sp_op_get_str(op, "call_target_name");
    if (target && strcmp(target, "mhlo.topk") == 0) return true;
  }
  for (int r = 0; r < op->nresults; r++)
    if (op->results[r].sharding && sp_search_on_maximal_mesh(S, op->results[r].sharding))
      return true;
  return false;
}

static int whole_strategy(search *S, const sp_op *op, sp_strategy_set *set, sp_err *err) {
  if (set->n != 1) return SP_OK;
  for (int t = 0; t < op->noperands + op->nresults; t++) {
    const sp_value *v = t < op->noperands ? op->operands[t].value : &op->results[t - op->noperands];
    sp_layout *l;
    int rc = sp_layout_from_sharding(S->a, NULL, placeable(v) ? v->type->rank : 0, S->mesh, &l,
                                     err);
    if (rc) return rc;
    if (t < op->noperands) set->v[0].operands[t] = *l;
    else set->v[0].results[t - op->noperands] = *l;
  }
  set->v[0].devices = 1;
  return SP_OK;
}

/* An op node (or a fixed node when the enumeration finds nothing or cannot apply). */
static int add_op(search *S, sp_op *op, int index, sp_err *err) {
  for (int r = 0; r < op->nresults; r++) {
    int rc = check_mesh_of(S, &op->results[r], err);
    if (rc) return rc;
  }
  sp_rule *rule = NULL;
  int rc = sp_rules_for_op(S->a, op, NULL, &rule, &S->diag, err);
  if (rc) return rc;
  bool whole = runs_whole(S, op);
  bool enumerable = rule && all_static(op) && !whole;
  int kind = enumerable ? NODE_OP : NODE_FIXED;
  int node = add_node(S, kind, op, err);
  if (node < 0) return node;
  pnode *n = &S->nodes[node];
  n->rule = rule;
  n->whole = whole;
  if (enumerable) {
    sp_strategy_opts so = strategy_opts(S, sp_search_offers_partial(S, op));
    rc = sp_strategies_for_op(S->a, op, rule, S->mesh, &so, &n->set, err);
    if (!rc) rc = sp_search_reconcile_scatter(S, n, so.partial, err);
    if (rc) return rc;
    if (n->set.n == 0) n->kind = NODE_FIXED;
  }
  if (n->kind == NODE_FIXED) {
    rc = sp_strategies_fixed(S->a, op, S->mesh, &n->set, err);
    if (rc) return rc;
    if (whole && (rc = whole_strategy(S, op, &n->set, err))) return rc;
    S->nfixed++;
  }
  S->op_node[index] = node;
  bool partial = false;
  for (int s = 0; n->kind == NODE_OP && s < n->set.n; s++) partial |= n->set.v[s].partial;
  for (int r = 0; r < op->nresults; r++)
    if (placeable(&op->results[r])) {
      rc = add_member(S, node, &op->results[r], r, NULL, err);
      if (rc) return rc;
      S->nodes[node].mem[S->nodes[node].nmem - 1].may_partial = partial;
    }
  return SP_OK;
}

static bool is_constant(const sp_op *op) {
  return op->kind == SP_OP_CONSTANT || op->kind == SP_OP_SDY_CONSTANT;
}

/* Phase 1. */
/* While the graph is built (seconds for a large module), every 256 ops: a caller that hands
 * out snapshots may serve what it has from earlier searches (on_best with no incumbent); a
 * caller with a plan in hand ends this search once the deadline has passed (cut_short). */
static int building(search *S, int i, sp_err *err) {
  if ((i & 255) != 0 || S->fixed) return SP_OK;
  if (S->o->on_best) S->o->on_best(S->o->best_ctx, NULL);
  if (S->o->cut_short && sp_run_ctl_stopped(S->m->ctl))
    return sp_err_set(err, SP_ETIMEOUT, "the deadline passed while the strategy graph was built");
  return SP_OK;
}

static int build_nodes(search *S, sp_err *err) {
  for (int i = 0; i < S->body->nargs; i++) {
    sp_value *v = S->body->args[i];
    if (!placeable(v)) continue;
    int rc = add_source(S, v, NULL, err);
    if (rc) return rc;
  }
  for (int i = 0; i < S->nops; i++) {
    sp_op *op = S->ops[i];
    int brc = building(S, i, err);
    if (brc) return brc;
    S->op_node[i] = -1;
    S->op_follow_result[i] = -1;
    if (op->kind == SP_OP_FUNC_RETURN) continue;
    if (is_constant(op) && op->nresults == 1) {
      if (!placeable(&op->results[0])) continue;
      int rc = add_source(S, &op->results[0], op, err);
      if (rc) return rc;
      S->op_node[i] = S->nnodes - 1;
      continue;
    }
    int j = -1;
    int slot = follow_slot(S, op, &j);
    if (slot >= 0) {
      int node = S->slot_node[slot];
      int result = S->nodes[node].mem[S->slot_mem[slot]].result;
      bool carry = sp_search_carries_partial(S, op, j, &S->nodes[node].mem[S->slot_mem[slot]]);
      S->op_node[i] = node;
      S->op_follow_result[i] = result;
      S->op_member[i] = S->nodes[node].nmem;
      S->nfollowers++;
      int rc = add_member(S, node, &op->results[0], result, op, err);
      if (rc) return rc;
      member *mb = &S->nodes[node].mem[S->op_member[i]];
      mb->followed = j;
      mb->may_partial = carry;
      mb->reduced = !carry;
      continue;
    }
    if (!has_placeable(op)) continue;
    int rc = add_op(S, op, i, err);
    if (rc) return sp_err_prefix(err, "%s:%d", S->m->filename, op->loc.line);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ node costs */

static const char *op_dtype(const sp_op *op) {
  const sp_value *v = op->noperands ? op->operands[0].value : NULL;
  if (!v || !v->type || v->type->kind != SP_TYPE_TENSOR) v = op->nresults ? &op->results[0] : NULL;
  return (v && v->type && v->type->kind == SP_TYPE_TENSOR) ? v->type->elem : "f32";
}

static double op_flops(const sp_op *op, const sp_rule *rule) {
  if (sp_rules_is_elementwise(op))
    return op->nresults ? (double)sp_type_num_elements(op->results[0].type) : 0.0;
  if (!rule) return 0.0;
  double p = 1;
  for (int f = 0; f < rule->nfactors; f++) p *= (double)rule->factors[f].size;
  switch (op->kind) {
    case SP_OP_DOT:
    case SP_OP_DOT_GENERAL:
    case SP_OP_CONVOLUTION: return 2 * p;
    case SP_OP_REDUCE:
    case SP_OP_REDUCE_WINDOW: return p;
    default: return 0.0;
  }
}

/* The op's own collective of strategy `st` (fills `out` per result when not NULL). */
double sp_search_own_collective_s(search *S, const sp_op *op, const sp_strategy *st,
                               sp_collective *out /* [nresults] or NULL */) {
  if (!st->nreduce || st->partial) return 0.0;
  double total = 0;
  int64_t redprod = 1;
  for (int i = 0; i < st->nreduce; i++) redprod *= sp_ft_axis_size(S->mesh, st->reduce_axes[i]);
  for (int r = 0; r < op->nresults; r++) {
    double local = sp_cost_local_bytes(&S->cm, op->results[r].type, &st->results[r]);
    sp_collective c;
    if (st->scatter_dim < 0)
      total += sp_cost_collective(&S->cm, SP_COLL_ALL_REDUCE, st->reduce_axes, st->nreduce, local,
                                  &c);
    else   /* B alike: the unreduced result; without reduce-scatter all-reduced, then sliced */
      total += sp_cost_collective(&S->cm, no_reduce_scatter(S) ? SP_COLL_ALL_REDUCE
                                                               : SP_COLL_REDUCE_SCATTER,
                                  st->reduce_axes, st->nreduce, local * (double)redprod, &c);
    if (out) out[r] = c;
  }
  return total;
}

/* Compute under strategy s of the node's own op (m < 0) or of its member m's follower op;
 * 0 when there is no such op. */
double sp_search_part_compute_s(search *S, const pnode *n, int s, int m) {
  if (m < 0)
    return n->kind != NODE_SOURCE && n->op
               ? sp_cost_compute(&S->cm, op_flops(n->op, n->rule), n->set.v[s].devices,
                                 op_dtype(n->op))
               : 0;
  const member *mb = &n->mem[m];
  if (!mb->follower) return 0;
  int64_t dev = sp_layout_shards(member_layout(n, mb, s), S->mesh);
  return sp_cost_compute(&S->cm, op_flops(mb->follower, NULL), dev, op_dtype(mb->follower));
}

/* Compute of the node's own op and its followers under strategy s. */
double sp_search_node_compute_s(search *S, const pnode *n, int s) {
  double t = sp_search_part_compute_s(S, n, s, -1);
  for (int m = 0; m < n->nmem; m++) t += sp_search_part_compute_s(S, n, s, m);
  return t;
}

double sp_search_node_bytes(search *S, const pnode *n, int s) {
  double b = 0;
  for (int k = 0; k < n->nmem; k++)
    b += sp_cost_local_bytes(&S->cm, n->mem[k].v->type, member_layout(n, &n->mem[k], s));
  return b;
}

/* Compute and the op's own collectives under strategy s; those a fold prices on an edge
 * (plan_fold.c) only when `folded`. */
double sp_search_node_own_s(search *S, const pnode *n, int s, bool folded) {
  double t = sp_search_node_compute_s(S, n, s);
  if (n->folds && !folded) return t;
  if (n->kind == NODE_OP) t += sp_search_own_collective_s(S, n->op, &n->set.v[s], NULL);
  for (int r = 0; n->fres && r < n->set.nresults; r++) {
    sp_reshard rs;
    if (sp_search_fixed_result(S, n, r, &rs) == SP_OK) t += rs.seconds;
  }
  return t;
}

/* Phase 2: nodes above the cap keep their cheapest strategies (ties by index). */
typedef struct ranked { double cost; int index; } ranked;

static int cmp_ranked(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->cost != b->cost) return a->cost < b->cost ? -1 : 1;
  return a->index - b->index;
}

static int cmp_int(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

static int cap_strategies(search *S, sp_err *err) {
  int cap = S->o->max_strategies > 0 ? S->o->max_strategies : DEFAULT_MAX_STRATEGIES;
  for (int i = 0; i < S->nnodes; i++) {
    pnode *n = &S->nodes[i];
    if (n->set.n <= cap) continue;
    ranked *r = malloc((size_t)n->set.n * sizeof *r);
    int *keep = malloc((size_t)cap * sizeof *keep);
    if (!r || !keep) {
      free(r);
      free(keep);
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    }
    for (int s = 0; s < n->set.n; s++) {
      r[s].cost = sp_search_node_own_s(S, n, s, true) * UNITS_PER_SECOND +
                  sp_search_mem_weight(S) * sp_search_node_bytes(S, n, s) / MIB;
      r[s].index = s;
    }
    qsort(r, (size_t)n->set.n, sizeof *r, cmp_ranked);
    for (int k = 0; k < cap; k++) keep[k] = r[k].index;
    qsort(keep, (size_t)cap, sizeof *keep, cmp_int);   /* keep enumeration order */
    for (int k = 0; k < cap; k++) n->set.v[k] = n->set.v[keep[k]];
    n->set.n = cap;
    free(r);
    free(keep);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ edges */

/* Distinct layouts among n pointers: ids[i] and the first index of each id. */
static int dedup_layouts(sp_arena *a, const sp_layout *const *l, int n, int **ids, int **rep,
                         int *nd) {
  int *id = sp_arena_alloc(a, (size_t)n * sizeof *id);
  int *rp = sp_arena_alloc(a, (size_t)n * sizeof *rp);
  if (!id || !rp) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    while (j < k && !sp_layout_equal(l[rp[j]], l[i])) j++;
    if (j == k) rp[k++] = i;
    id[i] = j;
  }
  *ids = id;
  *rep = rp;
  *nd = k;
  return SP_OK;
}

/* The member's distinct edge sources (its layouts; with a fold, the layouts and reductions
 * its edge starts from). */
static int member_dedup(search *S, pnode *n, member *mb) {
  if (mb->lid) return SP_OK;
  if (!mb->fold) {
    const sp_layout **l = sp_arena_alloc(S->a, (size_t)n->set.n * sizeof *l);
    if (!l) return SP_ENOMEM;
    for (int s = 0; s < n->set.n; s++) l[s] = member_layout(n, mb, s);
    return dedup_layouts(S->a, l, n->set.n, &mb->lid, &mb->rep, &mb->nl);
  }
  int *id = sp_arena_alloc(S->a, (size_t)n->set.n * sizeof *id);
  int *rp = sp_arena_alloc(S->a, (size_t)n->set.n * sizeof *rp);
  edge_src *src = sp_arena_alloc(S->a, (size_t)n->set.n * sizeof *src);
  if (!id || !rp || !src) return SP_ENOMEM;
  int k = 0;
  for (int s = 0; s < n->set.n; s++) {
    src[s] = sp_search_edge_src(S, n, mb, s);
    int j = 0;
    while (j < k && !sp_search_edge_src_equal(&src[rp[j]], &src[s])) j++;
    if (j == k) rp[k++] = s;
    id[s] = j;
  }
  mb->lid = id;
  mb->rep = rp;
  mb->nl = k;
  return SP_OK;
}

/* Prices the edge from member `mb` of `n` under strategy s to layout `to`. */
static void price_from(search *S, const sp_type *type, const pnode *n, const member *mb, int s,
                       const sp_layout *to, sp_reshard *out) {
  edge_src src = sp_search_edge_src(S, n, mb, s);
  sp_search_edge_reshard(S, type, &src, to, out);
}

static pedge *find_edge(search *S, int a, int b, sp_err *err) {
  for (int e = S->nodes[b].first_in; e >= 0; e = S->edges[e].next_in)
    if (S->edges[e].a == a) return &S->edges[e];
  if (sp_arena_grow(S->a, (void **)&S->edges, &S->capedges, S->nedges, sizeof *S->edges)) {
    sp_err_set(err, SP_ENOMEM, "out of memory");
    return NULL;
  }
  pedge *e = &S->edges[S->nedges];
  e->a = a;
  e->b = b;
  e->sec = sp_arena_calloc(S->a, (size_t)S->nodes[a].set.n * (size_t)S->nodes[b].set.n,
                           sizeof *e->sec);
  if (!e->sec) {
    sp_err_set(err, SP_ENOMEM, "out of memory");
    return NULL;
  }
  e->next_in = S->nodes[b].first_in;
  S->nodes[b].first_in = S->nedges++;
  return e;
}

static int price_operand(search *S, int i, int j, sp_err *err) {
  sp_value *v = S->ops[i]->operands[j].value;
  int slot = v ? (int)sp_ptr_map_get(&S->valmap, v, -1) : -1;
  if (slot < 0) return SP_OK;
  int pn = S->slot_node[slot], cn = S->op_node[i];
  pnode *p = &S->nodes[pn], *c = &S->nodes[cn];
  member *mb = &p->mem[S->slot_mem[slot]];
  sp_reshard rs;
  if (pn == cn) {
    for (int t = 0; t < c->set.n; t++) {
      price_from(S, v->type, p, mb, t, consumer_layout(S, i, j, t), &rs);
      c->self_s[t] += rs.seconds;
    }
    return SP_OK;
  }
  if (member_dedup(S, p, mb)) return sp_err_set(err, SP_ENOMEM, "out of memory");
  const sp_layout **cl = sp_arena_alloc(S->a, (size_t)c->set.n * sizeof *cl);
  if (!cl) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int t = 0; t < c->set.n; t++) cl[t] = consumer_layout(S, i, j, t);
  int *cid, *crep, ncd;
  if (dedup_layouts(S->a, cl, c->set.n, &cid, &crep, &ncd))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  double *pair = sp_arena_alloc(S->a, (size_t)mb->nl * (size_t)ncd * sizeof *pair);
  if (!pair) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int x = 0; x < mb->nl; x++)
    for (int y = 0; y < ncd; y++) {
      price_from(S, v->type, p, mb, mb->rep[x], cl[crep[y]], &rs);
      pair[(size_t)x * ncd + y] = rs.seconds;
    }
  pedge *e = find_edge(S, pn, cn, err);
  if (!e) return err ? err->code : SP_ENOMEM;
  int nb = c->set.n;
  for (int s = 0; s < p->set.n; s++)
    for (int t = 0; t < nb; t++) e->sec[(size_t)s * nb + t] += pair[(size_t)mb->lid[s] * ncd + cid[t]];
  return SP_OK;
}

/* The argument and the returned value of state pair k, or false when either is not placed. */
bool sp_search_state_values(search *S, const sp_plan_state_pair *sp, sp_value **arg,
                            sp_value **res) {
  sp_op *ret = S->body->last;
  if (!ret || ret->kind != SP_OP_FUNC_RETURN) return false;
  if (sp->arg < 0 || sp->arg >= S->body->nargs || sp->result < 0 || sp->result >= ret->noperands)
    return false;
  *arg = S->body->args[sp->arg];
  *res = ret->operands[sp->result].value;
  return *res && (int)sp_ptr_map_get(&S->valmap, *arg, -1) >= 0 && (int)sp_ptr_map_get(&S->valmap, *res, -1) >= 0 &&
         sp_type_same_dims((*arg)->type, (*res)->type);
}

static int price_state(search *S, const sp_plan_state_pair *sp, sp_err *err) {
  sp_value *av, *rv;
  if (!sp_search_state_values(S, sp, &av, &rv)) return SP_OK;
  int as = (int)sp_ptr_map_get(&S->valmap, av, -1), rs = (int)sp_ptr_map_get(&S->valmap, rv, -1);
  int pn = S->slot_node[rs], cn = S->slot_node[as];
  pnode *p = &S->nodes[pn], *c = &S->nodes[cn];
  member *pm = &p->mem[S->slot_mem[rs]], *cm = &c->mem[S->slot_mem[as]];
  sp_reshard r;
  if (pn == cn) {
    for (int t = 0; t < c->set.n; t++) {
      price_from(S, rv->type, p, pm, t, member_layout(c, cm, t), &r);
      c->self_s[t] += r.seconds;
    }
    return SP_OK;
  }
  pedge *e = find_edge(S, pn, cn, err);
  if (!e) return err ? err->code : SP_ENOMEM;
  if (member_dedup(S, p, pm) || member_dedup(S, c, cm))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  double *pair = sp_arena_alloc(S->a, (size_t)pm->nl * (size_t)cm->nl * sizeof *pair);
  if (!pair) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int x = 0; x < pm->nl; x++)
    for (int y = 0; y < cm->nl; y++) {
      price_from(S, rv->type, p, pm, pm->rep[x], member_layout(c, cm, cm->rep[y]), &r);
      pair[(size_t)x * cm->nl + y] = r.seconds;
    }
  int nb = c->set.n;
  for (int s = 0; s < p->set.n; s++)
    for (int t = 0; t < nb; t++)
      e->sec[(size_t)s * nb + t] += pair[(size_t)pm->lid[s] * cm->nl + cm->lid[t]];
  return SP_OK;
}

/* State pairs: the options' and those declared by `tf.aliasing_output` on arguments. */
static int collect_states(search *S, sp_err *err) {
  int n = S->o->nstate;
  for (int i = 0; i < S->body->nargs; i++)
    if (sp_attrs_get(&S->body->args[i]->attrs, "tf.aliasing_output")) n++;
  S->states = sp_arena_alloc(S->a, (size_t)(n ? n : 1) * sizeof *S->states);
  if (!S->states) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int k = 0; k < S->o->nstate; k++) S->states[S->nstates++] = S->o->state[k];
  for (int i = 0; i < S->body->nargs; i++) {
    const sp_attr *at = sp_attrs_get(&S->body->args[i]->attrs, "tf.aliasing_output");
    if (!at) continue;
    long long r = -1;
    if (at->kind == SP_ATTR_INT) r = at->u.i;
    else if ((at->kind == SP_ATTR_TEXT || at->kind == SP_ATTR_STR) && at->u.s) r = strtoll(at->u.s, NULL, 10);
    if (r < 0 || r > INT32_MAX)
      return sp_err_set(err, SP_EINVAL, "%s: argument %d: tf.aliasing_output is not a result "
                        "index", S->m->filename, i);
    S->states[S->nstates].arg = i;
    S->states[S->nstates++].result = (int)r;
  }
  return SP_OK;
}

/* Phase 3. */
static int build_edges(search *S, sp_err *err) {
  for (int k = 0; k < S->nnodes; k++) {
    S->nodes[k].self_s = sp_arena_calloc(S->a, (size_t)S->nodes[k].set.n, sizeof(double));
    if (!S->nodes[k].self_s) return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  int rc = collect_states(S, err);
  if (!rc) sp_search_mark_folds(S);
  if (!rc) rc = sp_search_reconcile_fixed(S, err);
  /* Every op with a node, followers of sources included (a constant has no operands). */
  for (int i = 0; !rc && i < S->nops; i++) {
    if ((rc = building(S, i, err)) || S->op_node[i] < 0) continue;
    for (int j = 0; !rc && j < S->ops[i]->noperands; j++) rc = price_operand(S, i, j, err);
  }
  for (int k = 0; !rc && k < S->nstates; k++) rc = price_state(S, &S->states[k], err);
  return rc;
}

/* ------------------------------------------------------------------ set-up */

sp_op *sp_plan_mesh_op(sp_module *m, const char *name, sp_err *err) {
  if (!name) {
    int count = 0;
    for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
      if (op->kind != SP_OP_SDY_MESH) continue;
      const char *n = sp_op_get_str(op, "sym_name");
      sp_attr *at = sp_op_attr(op, "mesh");
      /* A mesh without axes (JAX's @empty_mesh for scalars, a maximal mesh) has nothing to
       * plan; it does not compete for "the" mesh. */
      if (!n || !at || at->kind != SP_ATTR_MESH || !at->u.mesh || at->u.mesh->naxes == 0) continue;
      if (count++ == 0) name = n;
    }
    if (count == 0) {
      sp_err_set(err, SP_EINVAL, "%s: the module has no sdy.mesh; the search needs one",
                 m->filename);
      return NULL;
    }
    if (count > 1) {
      sp_err_set(err, SP_EINVAL, "%s: the module has %d meshes; name the one to plan "
                 "(mesh=NAME)", m->filename, count);
      return NULL;
    }
  }
  sp_op *op = sp_module_lookup_mesh_op(m, name);
  sp_attr *at = op ? sp_op_attr(op, "mesh") : NULL;
  if (!at || at->kind != SP_ATTR_MESH) {
    sp_err_set(err, SP_EINVAL, "%s: no sdy.mesh named @%s", m->filename, name);
    return NULL;
  }
  return op;
}

static int choose_mesh(search *S, sp_err *err) {
  sp_op *op = sp_plan_mesh_op(S->m, S->o->mesh_name, err);
  if (!op) return err ? err->code : SP_EINVAL;
  S->mesh_name = sp_op_get_str(op, "sym_name");
  S->mesh = sp_op_attr(op, "mesh")->u.mesh;
  return SP_OK;
}

sp_op *sp_plan_main_func(sp_module *m) {
  sp_op *f = sp_module_main_func(m);
  if (!f || f->nregions < 1 || f->regions[0].nblocks < 1) return NULL;
  return f;
}

static int find_main(search *S, sp_err *err) {
  sp_op *f = sp_plan_main_func(S->m);
  if (!f)
    return sp_err_set(err, SP_EINVAL, "%s: no main function with a body to plan",
                      S->m->filename);
  S->func = f;
  S->body = f->regions[0].blocks[0];
  return SP_OK;
}

/* Every axis gets the link of the fastest one (most bandwidth, then least latency) among the
 * axes that have more than one device. */
static void price_axes_alike(sp_cost_model *cm, const sp_mesh *mesh) {
  int best = -1;
  for (int i = 0; i < mesh->naxes && i < SP_MAX_MESH_AXES_CLUSTER; i++) {
    if (mesh->axes[i].size <= 1) continue;
    const sp_axis_cost *x = &cm->axis[i];
    if (best < 0 || x->bandwidth > cm->axis[best].bandwidth ||
        (x->bandwidth == cm->axis[best].bandwidth && x->alpha < cm->axis[best].alpha))
      best = i;
  }
  if (best < 0) return;
  sp_axis_cost fast = cm->axis[best];
  for (int i = 0; i < mesh->naxes && i < SP_MAX_MESH_AXES_CLUSTER; i++) cm->axis[i] = fast;
}

/* A tensor of unknown size has unknown bytes: the search refuses it rather than count it as 0
 * (a plan claiming 0 bytes). Tokens and other non-tensor values cost nothing and pass. */
static int need_static(search *S, const sp_value *v, sp_err *err) {
  const sp_type *t = v->type;
  if (!t || t->kind != SP_TYPE_TENSOR || sp_type_is_static_tensor(t)) return SP_OK;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_type_print(&sb, t);
  int rc = sp_err_set(err, SP_EUNSUPPORTED, "search: %s has the type %s, whose size is not "
                      "known; the cost search needs static shapes", value_name(S, v),
                      sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb) : "?");
  sp_strbuf_free(&sb);
  return rc;
}

static int setup(search *S, sp_module *m, const sp_plan_search_opts *o, bool fixed, sp_err *err) {
  memset(S, 0, sizeof *S);
  S->m = m;
  S->rec = m->arena;
  S->o = o;
  S->fixed = fixed;
  if (!o || !o->cluster) return sp_err_set(err, SP_EINVAL, "the search needs a cluster");
  S->a = sp_arena_new(0);
  if (!S->a) return sp_err_set(err, SP_ENOMEM, "out of memory");
  int rc = find_main(S, err);
  for (int i = 0; !rc && i < S->body->nargs; i++) rc = need_static(S, S->body->args[i], err);
  for (sp_op *op = rc ? NULL : S->body->first; op && !rc; op = op->next)
    for (int i = 0; !rc && i < op->nresults; i++) rc = need_static(S, &op->results[i], err);
  if (!rc) rc = choose_mesh(S, err);
  if (!rc && !(S->mesh_ref = sp_sharding_new(S->a, S->mesh_name, 0, true)))
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
  if (!rc) rc = sp_cost_model_init(&S->cm, o->cluster, S->mesh, o->device_of, err);
  if (rc) return rc;
  S->cm.no_reduce_scatter = no_reduce_scatter(S);
  if (o->uniform_links) price_axes_alike(&S->cm, S->mesh);
  int nvals = S->body->nargs;
  for (sp_op *op = S->body->first; op; op = op->next) {
    S->nops++;
    nvals += op->nresults;
  }
  S->ops = sp_arena_alloc(S->a, (size_t)(S->nops + 1) * sizeof *S->ops);
  S->op_node = sp_arena_alloc(S->a, (size_t)(S->nops + 1) * sizeof *S->op_node);
  S->op_follow_result = sp_arena_alloc(S->a, (size_t)(S->nops + 1) * sizeof *S->op_follow_result);
  S->op_member = sp_arena_alloc(S->a, (size_t)(S->nops + 1) * sizeof *S->op_member);
  S->slot_node = sp_arena_alloc(S->a, (size_t)(nvals + 1) * sizeof *S->slot_node);
  S->slot_mem = sp_arena_alloc(S->a, (size_t)(nvals + 1) * sizeof *S->slot_mem);
  S->capslots = nvals;
  if (!S->ops || !S->op_node || !S->op_follow_result || !S->op_member || !S->slot_node || !S->slot_mem ||
      sp_ptr_map_reserve(&S->opmap, (size_t)S->nops) ||
      sp_ptr_map_reserve(&S->valmap, (size_t)nvals))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  int i = 0;
  for (sp_op *op = S->body->first; op; op = op->next, i++) {
    S->ops[i] = op;
    sp_ptr_map_put(&S->opmap, op, i);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ the run */

/* The solver's progress as the caller's (ir/run_ctl.h). */
static void report_progress(void *ctx, const sp_sg_progress *sp) {
  const sp_run_ctl *ctl = ctx;
  double gap = 1;
  if (sp->has_plan && sp->bound != INT64_MIN && sp->cost > 0)
    gap = (double)(sp->cost - sp->bound) / (double)sp->cost;
  sp_progress p = {.stage = "search", .seconds = sp->seconds, .phase = sp->phase,
                   .has_plan = sp->has_plan, .cost = sp->cost, .bound = sp->bound,
                   .gap = gap < 0 ? 0 : gap};
  sp_run_ctl_report(ctl, &p);
}

int sp_search_describe(search *S, const sp_sg *g, const sp_sg_stats *st, const int *choice,
                       int64_t cost, int64_t bound, sp_plan_summary *out, sp_err *err) {
  sp_sg_eval ev;
  int rc = sp_sg_evaluate(g, choice, &ev, err);
  if (rc) return rc;
  if ((rc = sp_search_summarize(S, choice, out, err))) return rc;
  out->peak_memory_bytes = (double)ev.peak_usage;
  out->memory_limit_bytes = g->usage_limit == SP_SG_NO_LIMIT ? 0 : (double)g->usage_limit;
  out->cost = cost;
  out->bound = bound;
  out->ops = S->nops;
  out->nodes = g->nnodes;
  out->edges = g->nedges;
  out->followers = S->nfollowers;
  out->fixed_nodes = S->nfixed;
  out->strategies = sp_sg_num_node_vars(g);
  out->pairs = sp_sg_num_edge_vars(g);
  out->ilp_cols = st->ilp_cols;
  out->ilp_rows = st->ilp_rows;
  out->red_nodes = st->red_nodes;
  out->red_edges = st->red_edges;
  out->red_strategies = st->red_strategies;
  out->red_pairs = st->red_pairs;
  out->merged = st->merged;
  out->dominated = st->dominated;
  out->mesh_name = sp_arena_strdup(S->rec, S->mesh_name);
  out->mesh = S->mesh;
  out->no_reduce_scatter = no_reduce_scatter(S);
  out->mesh_axes = S->mesh->naxes;
  memcpy(out->axis, S->cm.axis, sizeof out->axis);
  out->ndevices = sp_mesh_num_devices(S->mesh);
  int64_t *dev = sp_arena_alloc(S->rec, (size_t)out->ndevices * sizeof *dev);
  if (!dev || !out->mesh_name) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int64_t i = 0; i < out->ndevices; i++)
    dev[i] = S->o->device_of ? S->o->device_of[i]
                             : (S->mesh->ndevice_ids ? S->mesh->device_ids[i] : i);
  out->device_of = dev;
  if (choice && g->nnodes > 0) {
    int *ch = sp_arena_alloc(S->rec, (size_t)g->nnodes * sizeof *ch);
    if (!ch) return sp_err_set(err, SP_ENOMEM, "out of memory");
    memcpy(ch, choice, (size_t)g->nnodes * sizeof *ch);
    out->choice = ch;
    out->nchoice = g->nnodes;
  }
  return SP_OK;
}

/* The solver's snapshot (sp_sg_opts.on_snapshot): offered to the caller as an incumbent it
 * may turn into a planned copy (plan_snapshot.c). */
static void offer_best(void *ctx, const int *choice, int64_t cost, int64_t bound) {
  struct sp_search_run *run = ctx;
  const sp_plan_search_opts *o = run->S->o;
  sp_search_incumbent inc = {cost, bound, o->uniform_links, run, choice};
  o->on_best(o->best_ctx, &inc);
}

static int run(sp_module *m, const sp_plan_search_opts *o, bool fixed, sp_plan_summary *out,
               sp_err *err) {
  memset(out, 0, sizeof *out);
  out->bound = INT64_MIN;
  search S;
  sp_sg *g = NULL;
  sp_sg_result res;
  memset(&res, 0, sizeof res);
  double t0 = sp_clock_now();
  int rc = setup(&S, m, o, fixed, err);
  if (!rc) rc = build_nodes(&S, err);
  if (!rc) rc = cap_strategies(&S, err);
  if (!rc) rc = build_edges(&S, err);
  if (rc) goto fail;
  sp_search_liveness(&S);
  rc = sp_search_build_graph(&S, &g, err);
  if (!rc && !fixed && !o->no_share_layers) rc = sp_search_tie_layers(&S, g, out, err);
  if (!rc && o->dump_graph) rc = sp_iopddl_write_file(g, o->dump_graph, err);
  if (rc) goto fail;
  double t1 = sp_clock_now();
  sp_sg_opts so;
  sp_sg_opts_init(&so);
  so.time_limit = o->time_limit;
  so.gap = o->gap;
  /* Without a time limit the search is bounded by work (the same answer on any machine):
   * the planner's budget, smaller than the solver's own default (which suits contest
   * problems solved alone), so that a plan comes in seconds (bench/RESULTS.md). */
  so.work_limit = o->work_limit > 0 ? o->work_limit : o->time_limit > 0 ? 0 : PLAN_WORK_LIMIT;
  so.seed = o->seed;
  if (o->incumbent && o->nincumbent == g->nnodes) so.incumbent = o->incumbent;
  so.ctl = m->ctl;
  if (m->ctl && m->ctl->progress) {
    so.progress = report_progress;
    so.progress_ctx = (void *)m->ctl;
  }
  /* Snapshots see the summary as it stands before the solve (the layer ties). */
  sp_plan_summary problem = *out;
  struct sp_search_run snap = {&S, g, &res.stats, &problem};
  if (o->on_best && !fixed) {
    so.on_snapshot = offer_best;
    so.snapshot_ctx = &snap;
  }
  rc = sp_sg_solve(g, &so, &res, err);
  if (rc) goto fail;
  double t2 = sp_clock_now();
  out->status = res.status;   /* also when there is no plan: the placement search reads it */
  if (!res.has_plan) {
    rc = sp_err_set(err, SP_ENOTFOUND, "%s: no valid plan (%s): %s", m->filename,
                    sp_sg_status_name(res.status),
                    res.status == SP_SG_INFEASIBLE ? "the values do not fit the device memory"
                                                   : "the solver found none in its limits");
    goto fail;
  }
  rc = sp_search_describe(&S, g, &res.stats, res.choice, res.cost, res.bound, out, err);
  if (!rc) rc = sp_search_write_back(&S, res.choice, out, err);   /* evaluating: records only */
  if (rc) goto fail;
  out->gap = res.gap;
  out->build_s = t1 - t0;
  out->solve_s = t2 - t1;
  rc = SP_OK;
fail:
  sp_sg_result_free(&res);
  sp_sg_free(g);
  sp_ptr_map_free(&S.opmap);
  sp_ptr_map_free(&S.valmap);
  sp_cost_model_free(&S.cm);
  sp_arena_free(S.a);
  return rc;
}

/* ------------------------------------------------------------------ API */

void sp_plan_search_opts_init(sp_plan_search_opts *o) {
  memset(o, 0, sizeof *o);
  o->time_limit = 10.0;
  o->max_strategies = DEFAULT_MAX_STRATEGIES;
  o->mem_weight = 1.0;
}

int sp_plan_search_module(sp_module *m, const sp_plan_search_opts *o, sp_plan_summary *out,
                          sp_err *err) {
  return run(m, o, false, out, err);
}

int sp_plan_evaluate_module(sp_module *m, const sp_plan_search_opts *o, sp_plan_summary *out,
                            sp_err *err) {
  return run(m, o, true, out, err);
}
