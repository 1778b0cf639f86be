/*
 * plan_reconcile.c - what explicit reshard insertion makes of the strategies it would not run
 * as they are: the ops the search cannot enumerate, and reduce-scatter strategies (see
 * plan_search_int.h).
 *
 * A reduce-scatter strategy writes the result with the reduction axes on one of its dims too;
 * the pass then sees an axis serving two factors and picks one by weight. The search asks it
 * (sp_export_plan_op_rule, the op's rule built once) per such strategy: when the pass keeps
 * the reduction as priced (all-reduce in the plain layout, an all_slice back, fused into the
 * reduce_scatter) the strategy stays; when it keeps the axes on the result dim instead, the
 * strategy becomes that plain one (the operands in the layouts the pass reshards them to, no
 * reduction); anything else drops it.
 *
 * A fixed node (an op whose given shardings no whole-axis assignment reproduces, e.g. a
 * reshape whose sharding splits an axis into sub-axes because the head count is not a multiple
 * of the axis) takes its operands and results as they are sharded. The export does not: its
 * explicit reshard pass (export/explicit_reshards.h) projects the shardings onto the op's
 * factors, regrouped, and when they disagree reshards the operands to one sharding per factor,
 * computes the results in it, all-reduces the reduction axes and reshards each result back to
 * its own sharding. The search asks the pass for that decision (sp_export_plan_op) once per
 * fixed node and prices it:
 *   - operands: the node reads each operand in the layout the pass reshards it to. The search's
 *     own reshard to that layout (sp_plan_insert_operand_reshards) and the pass's fold into one
 *     (reshard of a reshard), so the layout is iterated until the pass, given it, asks for no
 *     further reshard (a fixed point; at most MAX_ROUNDS rounds, which the ops seen reach in
 *     two);
 *   - results: the all-reduce of the reduction axes right after the op is the op's own
 *     collective (listed at the op, operand -1). A result computed in another layout than its
 *     own is resharded back to it right after the op. When exactly one priced consumer reads the
 *     result, both fold into the consumer's edge (plan_fold.c). Otherwise the reshard back is
 *     priced with the op and listed at the result's first consumer in program order, where the
 *     plan's export list puts it (plan/exported.h).
 * Ops the pass leaves alone (no rule, a user's custom rule, other meshes, ops planned whole)
 * keep the fixed strategy as it is.
 *
 * Memory: layouts and reconciliation records in the search's arena; the pass's shardings and
 * factor tables in an arena per node, freed after it.
 */
#include <string.h>

#include "export/explicit_reshards.h"
#include "ir/hash_mix.h"
#include "search/plan_search_int.h"

#define MAX_ROUNDS 4

static sp_sharding *sharding_of(search *S, sp_arena *a, const sp_layout *l, const sp_sharding *old) {
  return sp_layout_to_sharding(a, l, S->mesh, S->mesh_name, old);
}

/* The layout of sharding `s` for a rank-`rank` tensor into `*out` (search arena); false when it
 * is not on the search's mesh axes (the pass's shardings always are). */
static bool layout_of(search *S, const sp_sharding *s, int rank, sp_layout **out) {
  return sp_layout_from_sharding(S->a, s, rank, S->mesh, out, NULL) == SP_OK;
}

static bool has_slot(search *S, const sp_value *v) {
  return v && (int)sp_ptr_map_get(&S->valmap, v, -1) >= 0;
}

/* The pass's plan for the node's op with operands read in `in` and results sharded `outs`. */
static int plan_op(search *S, sp_arena *a, pnode *n, sp_sharding **in, sp_sharding **outs,
                   sp_export_op_plan *plan, sp_err *err) {
  int rc = sp_export_plan_op(S->m, a, a, n->op, in, outs, plan, err);
  if (rc) return sp_err_prefix(err, "%s:%d: planning the export of '%s'", S->m->filename,
                               n->op->loc.line, n->op->name);
  return SP_OK;
}

/* Operands: iterated to the layouts the pass keeps (see the top comment). */
static int fix_operands(search *S, sp_arena *a, pnode *n, sp_sharding **in, sp_sharding **outs,
                        sp_export_op_plan *plan, sp_err *err) {
  sp_op *op = n->op;
  sp_strategy *st = &n->set.v[0];
  for (int round = 0; round < MAX_ROUNDS; round++) {
    int rc = plan_op(S, a, n, in, outs, plan, err);
    if (rc || !plan->applies) return rc;
    bool changed = false;
    for (int i = 0; i < op->noperands; i++) {
      const sp_value *v = op->operands[i].value;
      sp_layout *l;
      if (!plan->operands[i] || !has_slot(S, v)) continue;   /* unplaced operands: not priced */
      if (!layout_of(S, plan->operands[i], v->type->rank, &l)) continue;
      if (sp_layout_equal(l, &st->operands[i])) continue;
      st->operands[i] = *l;
      if (!(in[i] = sharding_of(S, a, l, NULL))) return sp_err_set(err, SP_ENOMEM, "out of memory");
      changed = true;
    }
    if (!changed) return SP_OK;
  }
  return plan_op(S, a, n, in, outs, plan, err);
}

/* Results: what the pass does after the op (see the top comment). */
static int fix_results(search *S, pnode *n, const sp_export_op_plan *plan, sp_err *err) {
  sp_op *op = n->op;
  sp_strategy *st = &n->set.v[0];
  n->fres = sp_arena_calloc(S->a, (size_t)op->nresults + 1, sizeof *n->fres);
  if (!n->fres) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int r = 0; r < op->nresults; r++) {
    sp_value *v = &op->results[r];
    fixed_result *fr = &n->fres[r];
    sp_layout *c;
    if (!plan->results[r] || !placeable(v) || !layout_of(S, plan->results[r], v->type->rank, &c))
      continue;
    for (int k = 0; k < plan->nreduce[r] && fr->nred < SP_MAX_MESH_AXES_CLUSTER; k++)
      if (sp_ft_axis_from_ref(S->mesh, &plan->reduce[r][k], &fr->red[fr->nred]) == SP_OK) fr->nred++;
    bool same = sp_layout_equal(c, &st->results[r]);
    if (same && !fr->nred) continue;
    fr->computed = c;
    fr->back = !same && !n->folds;   /* folded: the consumer's edge starts from `c` */
  }
  return SP_OK;
}

static int reconcile_node(search *S, pnode *n, sp_err *err) {
  sp_op *op = n->op;
  sp_strategy *st = &n->set.v[0];
  sp_arena *a = sp_arena_new(0);
  sp_sharding **in = a ? sp_arena_calloc(a, (size_t)op->noperands + 1, sizeof *in) : NULL;
  sp_sharding **outs = a ? sp_arena_calloc(a, (size_t)op->nresults + 1, sizeof *outs) : NULL;
  int rc = in && outs ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory");
  /* What the export sees: the layouts the search writes back (or reshards to), the shardings
   * of values it does not place. */
  for (int i = 0; !rc && i < op->noperands; i++) {
    const sp_value *v = op->operands[i].value;
    in[i] = has_slot(S, v) ? sharding_of(S, a, &st->operands[i], NULL) : v->sharding;
    if (has_slot(S, v) && !in[i]) rc = sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  for (int r = 0; !rc && r < op->nresults; r++) {
    const sp_value *v = &op->results[r];
    outs[r] = placeable(v) ? sharding_of(S, a, &st->results[r], v->sharding) : v->sharding;
    if (placeable(v) && !outs[r]) rc = sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  sp_export_op_plan plan;
  if (!rc) rc = fix_operands(S, a, n, in, outs, &plan, err);
  if (!rc && plan.applies) rc = fix_results(S, n, &plan, err);
  sp_arena_free(a);
  return rc;
}

/* ------------------------------------------------------------------ reduce-scatter variants */

/* Whether the pass keeps reduce-scatter strategy `st` as priced: nothing resharded before the
 * op, the result computed in the plain layout and its reduction axes all-reduced there (the
 * reshard back to the scattered layout is the all_slice the canonicalizer fuses). */
static bool keeps_scatter(search *S, const sp_strategy *st, const sp_export_op_plan *plan,
                          int noperands, int rank) {
  for (int i = 0; i < noperands; i++)
    if (plan->operands[i]) return false;
  sp_layout *c;
  if (!plan->results[0] || !layout_of(S, plan->results[0], rank, &c) ||
      !sp_layout_equal(c, st->plain) || plan->nreduce[0] != st->nreduce)
    return false;
  for (int k = 0; k < st->nreduce; k++) {
    sp_ft_axis x;
    if (sp_ft_axis_from_ref(S->mesh, &plan->reduce[0][k], &x) != SP_OK ||
        !sp_ft_axis_equal(x, st->reduce_axes[k]))
      return false;
  }
  return true;
}

/* Whether the pass makes `st` a plain strategy: no reduction, the result as written; the
 * operands it reshards take the layouts it reshards them to. */
static bool make_plain(search *S, const pnode *n, sp_strategy *st, const sp_export_op_plan *plan) {
  const sp_op *op = n->op;
  if (!plan->results[0] || plan->differs[0] || plan->nreduce[0]) return false;
  for (int i = 0; i < op->noperands; i++) {
    sp_layout *l;
    if (!plan->operands[i]) continue;
    if (!layout_of(S, plan->operands[i], op->operands[i].value->type->rank, &l)) return false;
    st->operands[i] = *l;
  }
  /* The reduction axes now shard the result dim's factor (when it has one): a copy, the
   * assignment being shared with the strategy's other variants. */
  const sp_rule_dim *rd = &n->rule->results[0].dims[st->scatter_dim];
  if (st->axis_factor && rd->nfactors == 1) {
    int8_t *af = sp_arena_alloc(S->a, (size_t)S->mesh->naxes);
    if (!af) return false;
    memcpy(af, st->axis_factor, (size_t)S->mesh->naxes);
    for (int k = 0; k < st->nreduce; k++)
      if (st->reduce_axes[k].axis >= 0 && st->reduce_axes[k].axis < S->mesh->naxes)
        af[st->reduce_axes[k].axis] = (int8_t)rd->factors[0];
    st->axis_factor = af;
  }
  st->nreduce = 0;
  st->reduce_axes = NULL;
  st->scatter_dim = -1;
  st->plain = NULL;
  return true;
}

/* The decisions for the strategies of one op, kept for the structurally identical ops of
 * repeated layers: an identical op (kind, rule, types, result sharding, keep-partial variants)
 * enumerates identical strategies, and the pass decides alike on identical shardings. */
enum { SCATTER_KEEP, SCATTER_DROP, SCATTER_PLAIN };

typedef struct scatter_memo {
  uint64_t hash;
  const sp_op *op;          /* the first op decided */
  const sp_rule *rule;
  bool partial;
  int n;                    /* its strategies as enumerated */
  uint8_t *decision;        /* [n] */
  sp_strategy *plain;       /* [n] the strategies made plain (others unset) */
} scatter_memo;

static uint64_t op_signature(const sp_op *op, const sp_rule *rule, bool partial, int n) {
  uint64_t h = sp_hash_mix(SP_HASH_SEED, (uint64_t)op->kind);
  h = sp_hash_mix(h, (uint64_t)partial);
  h = sp_hash_mix(h, (uint64_t)n);
  h = sp_hash_mix(h, (uint64_t)rule->nfactors);
  for (int f = 0; f < rule->nfactors; f++) {
    h = sp_hash_mix(h, (uint64_t)rule->factors[f].size);
    h = sp_hash_mix(h, (uint64_t)rule->factors[f].kind);
  }
  for (int i = 0; i < op->noperands; i++)
    h = sp_hash_mix(h, (uint64_t)sp_type_num_elements(op->operands[i].value->type));
  for (int r = 0; r < op->nresults; r++)
    h = sp_hash_mix(h, (uint64_t)sp_type_num_elements(op->results[r].type));
  return h;
}

static bool same_op(const scatter_memo *e, uint64_t h, const sp_op *op, const sp_rule *rule,
                    bool partial, int n) {
  if (e->hash != h || e->n != n || e->partial != partial || e->op->kind != op->kind ||
      e->op->noperands != op->noperands || e->op->nresults != op->nresults ||
      !sp_rule_equal(e->rule, rule))
    return false;
  for (int i = 0; i < op->noperands; i++)
    if (!sp_type_equal(e->op->operands[i].value->type, op->operands[i].value->type)) return false;
  for (int r = 0; r < op->nresults; r++) {
    const sp_sharding *x = e->op->results[r].sharding, *y = op->results[r].sharding;
    if (!sp_type_equal(e->op->results[r].type, op->results[r].type)) return false;
    if ((x == NULL) != (y == NULL) || (x && !sp_sharding_equal(x, y))) return false;
  }
  return true;
}

/* Asks the pass about reduce-scatter strategy `st` of `n`: its decision. */
static int decide(search *S, sp_arena *a, const pnode *n, sp_strategy *st, uint8_t *decision,
                  sp_err *err) {
  const sp_op *op = n->op;
  sp_sharding **in = sp_arena_calloc(a, (size_t)op->noperands + 1, sizeof *in);
  sp_sharding *outs[1] = {sharding_of(S, a, &st->results[0], op->results[0].sharding)};
  if (!in || !outs[0]) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < op->noperands; i++)
    if (!(in[i] = sharding_of(S, a, &st->operands[i], NULL)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_export_op_plan plan;
  int rc = sp_export_plan_op_rule(a, a, op, n->rule, S->mesh, S->mesh_ref, in, outs, &plan, err);
  if (rc) return rc;
  S->nscatter++;
  if (plan.applies && keeps_scatter(S, st, &plan, op->noperands, op->results[0].type->rank)) {
    S->nscatter_kept++;
    *decision = SCATTER_KEEP;
  } else {
    *decision = plan.applies && make_plain(S, n, st, &plan) ? SCATTER_PLAIN : SCATTER_DROP;
  }
  return SP_OK;
}

/* Strategy `st` made plain as `like` was (operand layouts copied: the arrays are the
 * strategy's own). */
static void apply_plain(sp_strategy *st, const sp_strategy *like, int noperands) {
  memcpy(st->operands, like->operands, (size_t)noperands * sizeof *st->operands);
  st->axis_factor = like->axis_factor;
  st->nreduce = 0;
  st->reduce_axes = NULL;
  st->scatter_dim = -1;
  st->plain = NULL;
}

int sp_search_reconcile_scatter(search *S, pnode *n, bool partial, sp_err *err) {
  sp_op *op = n->op;
  int n0 = n->set.n;
  bool any = false;
  for (int s = 0; s < n0 && !any; s++) any = n->set.v[s].scatter_dim >= 0;
  if (!any) return SP_OK;
  uint64_t h = op_signature(op, n->rule, partial, n0);
  scatter_memo *e = NULL;
  for (int i = 0; i < S->nsmemo && !e; i++)
    if (same_op(&S->smemo[i], h, op, n->rule, partial, n0)) e = &S->smemo[i];
  int rc = SP_OK;
  if (!e) {   /* the first of its kind: ask the pass, keep the answers */
    if (sp_arena_grow(S->a, (void **)&S->smemo, &S->capsmemo, S->nsmemo, sizeof *S->smemo))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    e = &S->smemo[S->nsmemo++];
    *e = (scatter_memo){h, op, n->rule, partial, n0, NULL, NULL};
    e->decision = sp_arena_calloc(S->a, (size_t)n0, sizeof *e->decision);
    e->plain = sp_arena_calloc(S->a, (size_t)n0, sizeof *e->plain);
    sp_arena *a = sp_arena_new(0);
    if (!e->decision || !e->plain || !a) {
      sp_arena_free(a);
      S->nsmemo--;
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    }
    for (int s = 0; s < n0 && !rc; s++) {
      sp_strategy *st = &n->set.v[s];
      if (st->scatter_dim < 0) continue;
      rc = decide(S, a, n, st, &e->decision[s], err);
      if (!rc && e->decision[s] == SCATTER_PLAIN) e->plain[s] = *st;
    }
    sp_arena_free(a);
    if (rc) {
      S->nsmemo--;
      return rc;
    }
  } else {
    for (int s = 0; s < n0; s++)
      if (n->set.v[s].scatter_dim >= 0 && e->decision[s] == SCATTER_PLAIN)
        apply_plain(&n->set.v[s], &e->plain[s], op->noperands);
  }
  int k = 0;
  for (int s = 0; s < n0; s++)
    if (e->decision[s] != SCATTER_DROP) n->set.v[k++] = n->set.v[s];
  n->set.n = k;
  return SP_OK;
}

/* ------------------------------------------------------------------ fixed nodes */

int sp_search_reconcile_fixed(search *S, sp_err *err) {
  for (int k = 0; k < S->nnodes; k++) {
    pnode *n = &S->nodes[k];
    if (n->kind != NODE_FIXED || n->whole || !n->op || !n->rule || n->set.n != 1) continue;
    int rc = reconcile_node(S, n, err);
    if (rc) return rc;
  }
  return SP_OK;
}

int sp_search_fixed_result(search *S, const pnode *n, int r, sp_reshard *out) {
  out->nsteps = 0;
  out->seconds = 0;
  const fixed_result *fr = n->fres ? &n->fres[r] : NULL;
  if (!fr || !fr->computed) return SP_OK;
  const sp_layout *to = fr->back ? &n->set.v[0].results[r] : fr->computed;
  return sp_cost_reshard_reducing(&S->cm, n->op->results[r].type, fr->red, fr->nred,
                                  fr->computed, to, out);
}

/* ------------------------------------------------------------------ first consumer */

typedef struct find_use {
  const sp_value *v;
  const sp_op *op;
  int operand;
} find_use;

/* Lowest operand of `op` reading f->v, or -1. */
static int reads(const sp_op *op, const sp_value *v) {
  for (int j = 0; j < op->noperands; j++)
    if (op->operands[j].value == v) return j;
  return -1;
}

static bool find_in(sp_op *op, void *ctx) {
  find_use *f = ctx;
  int j = reads(op, f->v);
  if (j < 0) return true;
  f->op = op;
  f->operand = j;
  return false;
}

bool sp_search_first_consumer(search *S, const sp_value *v, const sp_op **op, int *operand) {
  /* The top-level op holding the earliest use, then the first op within it in pre-order. */
  int best = -1;
  for (const sp_use *u = v->uses; u; u = u->next) {
    const sp_op *top = u->owner;
    while (top && top->block != S->body) top = sp_op_parent(top);
    int i = sp_search_op_index(S, top);
    if (i >= 0 && (best < 0 || i < best)) best = i;
  }
  if (best < 0) return false;
  find_use f = {v, NULL, -1};
  sp_op_walk(S->ops[best], find_in, &f);
  if (!f.op) return false;
  *op = f.op;
  *operand = f.operand;
  return true;
}
