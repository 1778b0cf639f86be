/*
 * propagate_rules.c - visits of ops with sharding rules in the propagation fixed point (see
 * propagate.h, propagate_int.h): the op's rule (session cache, then the registry), its common
 * mesh, the convergence shortcut, the memoised factor propagation and the write-back.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/grow.h"
#include "propagation/propagate_int.h"

/* ------------------------------------------------------------------ meshes and rules */

static const sp_mesh *mesh_of(driver *d, const sp_sharding *s) {
  if (s->inline_mesh) return s->inline_mesh;
  if (!s->mesh_name) return NULL;
  if (d->mesh_name && (d->mesh_name == s->mesh_name || strcmp(d->mesh_name, s->mesh_name) == 0))
    return d->mesh;
  const sp_mesh *mesh = sp_module_lookup_mesh(d->m, s->mesh_name);
  if (mesh) {
    d->mesh_name = s->mesh_name;
    d->mesh = mesh;
  }
  return mesh;
}

/* The op's common mesh: shardings on the empty mesh are skipped; none, two different meshes
 * or a maximal one give NULL. *ref is the first sharding naming it. */
int sp_propagate_common_mesh(driver *d, sp_sharding *const *v, int n, const sp_mesh **out,
                       const sp_sharding **ref, sp_err *err) {
  const sp_mesh *common = NULL;
  *out = NULL;
  *ref = NULL;
  for (int i = 0; i < n; i++) {
    if (!v[i]) continue;
    const sp_mesh *mesh = mesh_of(d, v[i]);
    if (!mesh)
      return sp_err_set(err, SP_EINVAL, "unknown mesh @%s", v[i]->mesh_name ? v[i]->mesh_name : "");
    if (sp_mesh_is_empty(mesh)) continue;
    if (!common) {
      common = mesh;
      *ref = v[i];
    } else if (mesh != common && !sp_mesh_equal(mesh, common)) {
      *ref = NULL;
      return SP_OK; /* shardings on different meshes never meet */
    }
  }
  if (common && !sp_mesh_is_maximal(common)) *out = common;
  return SP_OK;
}

/* The identity rule of a tensor type with `nin` "operands" and one "result": one factor per
 * dim. NULL if the type is not a static tensor. */
sp_rule *sp_propagate_identity_rule(sp_arena *a, const sp_type *t, int nin) {
  if (!t || t->kind != SP_TYPE_TENSOR || !sp_type_is_static_tensor(t)) return NULL;
  int rank = t->rank;
  size_t nr = (size_t)(rank ? rank : 1);
  sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
  sp_rule_tensor *tensors = sp_arena_calloc(a, (size_t)nin + 1, sizeof *tensors);
  sp_rule_dim *dims = sp_arena_calloc(a, nr, sizeof *dims);
  int *idx = sp_arena_alloc(a, nr * sizeof *idx);
  sp_rule_factor *factors = sp_arena_calloc(a, nr, sizeof *factors);
  if (!r || !tensors || !dims || !idx || !factors) return NULL;
  for (int i = 0; i < rank; i++) {
    idx[i] = i;
    dims[i] = (sp_rule_dim){1, &idx[i]};
    factors[i].size = t->dims[i];
  }
  for (int i = 0; i <= nin; i++) tensors[i] = (sp_rule_tensor){rank, dims};
  r->factors = factors;
  r->nfactors = rank;
  r->noperands = nin;
  r->nresults = 1;
  r->operands = tensors;
  r->results = &tensors[nin];
  return r;
}

static void keep_warning(driver *d) {
  sp_rules_diag *diag = d->o->diag;
  if (!diag || !diag->has_warning) return;
  sp_module_warn(d->m, diag->warning_loc, "%s", diag->warning);
}

/* Whether every dim of every tensor of the op maps to exactly one factor: then a factor's cell
 * in a tensor is simply the axes of the dim it maps to there, and converged() can tell from
 * the shardings alone that propagation has nothing to do. */
static bool is_simple_rule(const sp_rule *r, const sp_op *op) {
  if (r->noperands + r->nresults != op->noperands + op->nresults) return false;
  for (int t = 0; t < r->noperands + r->nresults; t++) {
    const sp_rule_tensor *rt = t < r->noperands ? &r->operands[t] : &r->results[t - r->noperands];
    for (int dim = 0; dim < rt->rank; dim++)
      if (rt->dims[dim].nfactors != 1) return false;
  }
  return true;
}

/* The op's rule: on the first visit, the one an op of equal signature got, else the
 * registry's; kept in the op's state (and attached to the op when the session ends). */
static int rule_of(driver *d, int idx, sp_rule **out, sp_err *err) {
  op_state *st = &d->st[idx];
  *out = st->rule;
  if (st->rule_state != RULE_UNKNOWN) return SP_OK;
  sp_op *op = d->ops[idx];
  sp_rules_options ro = {d->o->conservative};
  /* A keyable op carries no rule of its own (rule_cache.h). */
  bool keyable = sp_rule_cache_keyable(op);
  sp_rule *r = keyable ? sp_rule_cache_find(d->rule_cache, op, ro.conservative) : NULL;
  bool attach = r != NULL; /* a rule of this session's, not one the op came with */
  if (!r) {
    /* Built in scratch (the builder's temporaries die there), kept as one compact copy. */
    int rc = sp_rules_for_op(d->scratch, op, &ro, &r, d->o->diag, err);
    bool warned = d->o->diag && d->o->diag->has_warning;
    keep_warning(d);
    if (rc) return rc;
    if (r && (keyable || r != sp_op_rule(op))) {
      if (!(r = sp_rule_cache_intern(d->rule_cache, d->m->arena, r)))
        return sp_err_set(err, SP_ENOMEM, "out of memory attaching a sharding rule");
      if (keyable && !warned) sp_rule_cache_remember(d->rule_cache, op, ro.conservative, r);
      attach = true;
    }
  }
  st->session_rule = attach;
  st->rule = *out = r;
  st->rule_state = r ? RULE_PRESENT : RULE_NONE;
  st->pointwise = r && is_simple_rule(r, op);
  st->elementwise = r && sp_rules_is_elementwise(op);
  return SP_OK;
}

/* ------------------------------------------------------------------ ops with rules */

/* Gives every result of `op` without a sharding a fully open one, once some result has one
 * (Shardy's per-value sharding lists always cover all results). */
static int fill_placeholders(driver *d, sp_op *op, const sp_sharding *ref, sp_err *err) {
  for (int j = 0; j < op->nresults; j++) {
    sp_value *v = &op->results[j];
    if (v->sharding || !v->type || v->type->kind != SP_TYPE_TENSOR || v->type->rank < 0) continue;
    sp_sharding *s = sp_sharding_new(d->m->arena, ref->mesh_name, v->type->rank, false);
    if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
    s->inline_mesh = ref->inline_mesh;
    v->sharding = s;
  }
  return SP_OK;
}

/* Makes the visit buffers hold `ntensors` tensors and `nfactors` factors. */
static int reserve_visit_buffers(visit_buffers *vb, int ntensors, int nfactors) {
  /* Arrays of one capacity each grow from it to the same size (room for index n - 1). */
  if (ntensors > vb->cap_tensors) {
    int cs = vb->cap_tensors, ci = vb->cap_tensors, co = vb->cap_tensors;
    if (sp_grow((void **)&vb->slots, &cs, ntensors - 1, sizeof *vb->slots) ||
        sp_grow((void **)&vb->in, &ci, ntensors - 1, sizeof *vb->in) ||
        sp_grow((void **)&vb->out, &co, ntensors - 1, sizeof *vb->out))
      return SP_ENOMEM;
    vb->cap_tensors = cs;
  }
  if (nfactors > vb->cap_factors) {
    int cs = vb->cap_factors, cd = vb->cap_factors;
    if (sp_grow((void **)&vb->seen, &cs, nfactors - 1, sizeof *vb->seen) ||
        sp_grow((void **)&vb->dirs, &cd, nfactors - 1, sizeof *vb->dirs))
      return SP_ENOMEM;
    vb->cap_factors = cs;
  }
  return SP_OK;
}

int sp_propagate_visit_rule_op(driver *d, int idx, sp_err *err) {
  sp_op *op = d->ops[idx];
  const sp_propagate_options *o = d->o;
  sp_arena *s = d->scratch;
  sp_rule *rule = NULL;
  int rc;
  if ((rc = rule_of(d, idx, &rule, err))) return rc;
  if (!rule || rule->noperands != op->noperands || rule->nresults != op->nresults)
    return mark_clean(d);
  int n = op->noperands + op->nresults;
  if (reserve_visit_buffers(&d->vb, n, rule->nfactors))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_value **slots = d->vb.slots;
  sp_sharding **in = d->vb.in, **out = d->vb.out;
  for (int i = 0; i < op->noperands; i++) slots[i] = slot(op->operands[i].value);
  for (int j = 0; j < op->nresults; j++) slots[op->noperands + j] = &op->results[j];
  for (int i = 0; i < n; i++) in[i] = slots[i] ? slots[i]->sharding : NULL;

  /* Settled ops first (whatever the direction, so later rounds can skip them), then the
   * directions: a visit along no factor at all changes nothing (op-priority rounds). */
  const sp_mesh *mesh;
  const sp_sharding *ref;
  if ((rc = sp_propagate_common_mesh(d, in, n, &mesh, &ref, err)))
    return sp_propagate_op_error(d, op, rc, err);
  if (!mesh) return mark_clean(d);
  if (d->st[idx].pointwise && converged(rule, in, d->vb.seen)) return mark_clean(d);
  sp_prop_direction *dirs = NULL;
  if (o->direction) {
    dirs = d->vb.dirs;
    o->direction(op, rule, dirs, o->direction_ctx);
  }
  if (!moves_any_factor(rule, dirs)) return SP_OK;

  sp_prop_options po = {o->strategy, o->conservative, d->st[idx].elementwise, dirs};
  /* The same rule and shardings met before give the same outcome (prop_memo.h); conflict
   * records are not replayed, so a session that logs them always propagates. */
  sp_prop_memo_key key = {rule, mesh, &po, n, in, 0};
  bool memo = !d->log;
  if (memo) sp_prop_memo_hash(d->memo, &key);
  if (!memo || !sp_prop_memo_find(d->memo, &key, out)) {
    if (d->log) {
      d->log->op = idx;
      d->log->op_name = op->name;
      d->log->line = op->loc.line;
      d->log->col = op->loc.col;
    }
    rc = sp_factor_propagate_op(d->m->arena, s, rule, mesh, ref, in, in + op->noperands, &po,
                                out, out + op->noperands, NULL, d->log, err);
    if (rc) return sp_propagate_op_error(d, op, rc, err);
    if (memo) sp_prop_memo_add(d->memo, &key, out);
  }
  d->stats->rule_visits++;
  if (d->trace && (rc = sp_trace_step(d->trace, mesh, op, op->noperands, op->nresults,
                                      (const void *const *)slots, in, out)))
    return sp_err_set(err, rc, "out of memory");

  /* Operands first, then results, each notified once its new sharding is in place. */
  bool result_changed = false, changed = false;
  for (int i = 0; i < n; i++) {
    if (!out[i] || !slots[i]) continue;
    if (sp_sharding_equal(slots[i]->sharding, out[i])) continue; /* e.g. add %x, %x */
    result_changed = result_changed || i >= op->noperands;
    changed = true;
    if ((rc = sp_propagate_set_sharding(d, slots[i], out[i]))) return rc;
  }
  if (!changed) return settle_if_most_permissive(d, rule, dirs);
  if (result_changed && op->nresults > 1 && (rc = fill_placeholders(d, op, ref, err))) return rc;
  /* Agreeing now along every factor, the op would only find that out on its next visit
   * (nothing changes its tensors without pushing it, which marks it again). */
  if (d->st[idx].pointwise) {
    for (int i = 0; i < n; i++) in[i] = slots[i] ? slots[i]->sharding : NULL;
    if (converged(rule, in, d->vb.seen)) return mark_clean(d);
  }
  return SP_OK;
}
