/*
 * propagate_edges.c - visits of data-flow edges, func data-flow edges and propagation
 * barriers in the propagation fixed point (see propagate.h, propagate_int.h): each is an
 * identity propagation between its sources and the slot it holds, with a manual
 * computation's edges seen through its manual axes (local <-> global views).
 */
#include <string.h>

#include "propagation/propagate_int.h"

/* ------------------------------------------------------------------ manual computations */

/* Whether `r` names one of the manual axes. */
static bool is_manual_axis(const sp_attr *manual, const sp_axis_ref *r) {
  for (int i = 0; manual && i < manual->u.axes.n; i++)
    if (strcmp(manual->u.axes.v[i].name, r->name) == 0) return true;
  return false;
}

static int keep_free_axes(sp_arena *a, const sp_attr *manual, sp_axis_ref **v, int *n) {
  sp_axis_ref *out = *n ? sp_arena_alloc(a, (size_t)*n * sizeof *out) : NULL;
  if (*n && !out) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (!is_manual_axis(manual, &(*v)[i])) out[k++] = (*v)[i];
  *v = out;
  *n = k;
  return SP_OK;
}

/* The local view of a global sharding: every manual axis removed. NULL in, NULL out. */
static sp_sharding *localize(sp_arena *a, const sp_sharding *g, const sp_attr *manual) {
  if (!g) return NULL;
  sp_sharding *s = sp_sharding_copy(a, g);
  if (!s) return NULL;
  for (int d = 0; d < s->rank; d++)
    if (keep_free_axes(a, manual, &s->dims[d].axes, &s->dims[d].naxes)) return NULL;
  if (keep_free_axes(a, manual, &s->replicated, &s->nreplicated) ||
      keep_free_axes(a, manual, &s->unreduced, &s->nunreduced))
    return NULL;
  return s;
}

/* The global view of a local sharding: each dim gets the manual axes that `outer` (the in- or
 * out-sharding of the computation) has in front of that dim. NULL in, NULL out. */
static sp_sharding *globalize(sp_arena *a, const sp_sharding *l, const sp_sharding *outer,
                              const sp_attr *manual) {
  if (!l) return NULL;
  sp_sharding *s = sp_sharding_copy(a, l);
  if (!s) return NULL;
  for (int d = 0; outer && d < s->rank && d < outer->rank; d++) {
    const sp_dim_sharding *od = &outer->dims[d];
    int np = 0;
    while (np < od->naxes && is_manual_axis(manual, &od->axes[np])) np++;
    if (!np) continue;
    sp_dim_sharding *sd = &s->dims[d];
    sp_axis_ref *axes = sp_arena_alloc(a, (size_t)(np + sd->naxes) * sizeof *axes);
    if (!axes) return NULL;
    memcpy(axes, od->axes, (size_t)np * sizeof *axes);
    if (sd->naxes) memcpy(axes + np, sd->axes, (size_t)sd->naxes * sizeof *axes);
    sd->axes = axes;
    sd->naxes += np;
  }
  return s;
}

/* ------------------------------------------------------------------ one identity propagation */

/* Propagates between `nsrc` source slots and one target slot as an identity rule. `view_in` /
 * `view_out` turn the target's stored sharding into the view propagation sees and back (NULL:
 * as stored). `op` is the op the propagation stands for (direction callback, conflicts). */
typedef enum edge_view { VIEW_AS_IS, VIEW_LOCAL_SEEN_GLOBAL, VIEW_GLOBAL_SEEN_LOCAL } edge_view;

typedef struct identity_job {
  sp_op *op;
  sp_value **src;
  int nsrc;
  sp_value *target;
  sp_prop_direction fixed_dir;   /* barriers: the allowed direction; else SP_DIR_BOTH */
  bool use_callback;             /* apply the op-priority direction callback */
  edge_view view;
  const sp_sharding *outer;      /* manual computation: the in/out sharding */
  const sp_attr *manual;         /* manual computation: manual_axes */
} identity_job;

static int propagate_identity(driver *d, const identity_job *j, sp_err *err) {
  sp_arena *s = d->scratch;
  sp_rule *rule = sp_propagate_identity_rule(s, j->target->type, j->nsrc);
  if (!rule || j->nsrc == 0) return mark_clean(d);
  int n = j->nsrc + 1;
  sp_sharding **in = sp_arena_alloc(s, (size_t)n * sizeof *in);
  sp_sharding **out = sp_arena_alloc(s, (size_t)n * sizeof *out);
  sp_prop_direction *dirs = alloc_dirs(s, rule);
  if (!in || !out || !dirs) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < j->nsrc; i++) in[i] = j->src[i]->sharding;
  sp_sharding *stored = j->target->sharding;
  in[j->nsrc] = j->view == VIEW_LOCAL_SEEN_GLOBAL ? globalize(s, stored, j->outer, j->manual)
                : j->view == VIEW_GLOBAL_SEEN_LOCAL ? localize(s, stored, j->manual)
                                                    : stored;
  if (stored && !in[j->nsrc]) return sp_err_set(err, SP_ENOMEM, "out of memory");

  const sp_mesh *mesh;
  const sp_sharding *ref;
  int rc = sp_propagate_common_mesh(d, in, n, &mesh, &ref, err);
  if (rc) return sp_propagate_op_error(d, j->op, rc, err);
  if (!mesh) return mark_clean(d);
  const sp_dim_sharding **seen = sp_arena_alloc(s, (size_t)(rule->nfactors + 1) * sizeof *seen);
  if (!seen) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (converged(rule, in, seen)) return mark_clean(d);
  for (int f = 0; f < rule->nfactors; f++) dirs[f] = j->fixed_dir;
  if (j->use_callback && d->o->direction) d->o->direction(j->op, rule, dirs, d->o->direction_ctx);
  if (!moves_any_factor(rule, dirs)) return SP_OK;
  sp_prop_options po = {d->o->strategy, false, false, dirs};
  if (d->log) {
    d->log->op = op_number(d, j->op);
    d->log->op_name = j->op->name;
    d->log->line = j->op->loc.line;
    d->log->col = j->op->loc.col;
  }
  rc = sp_factor_propagate_op(d->m->arena, s, rule, mesh, ref, in, in + j->nsrc, &po, out,
                              out + j->nsrc, NULL, d->log, err);
  if (rc) return sp_propagate_op_error(d, j->op, rc, err);
  d->stats->rule_visits++;
  if (d->trace) {
    const void **nodes = sp_arena_alloc(s, (size_t)n * sizeof *nodes);
    if (!nodes) return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int i = 0; i < j->nsrc; i++) nodes[i] = j->src[i];
    nodes[j->nsrc] = j->target;
    if ((rc = sp_trace_step(d->trace, mesh, j->op, j->nsrc, 1, nodes, in, out)))
      return sp_err_set(err, rc, "out of memory");
  }

  bool changed = false;
  for (int i = 0; i < j->nsrc; i++) {
    if (!out[i] || sp_sharding_equal(j->src[i]->sharding, out[i])) continue;
    changed = true;
    if ((rc = sp_propagate_set_sharding(d, j->src[i], out[i]))) return rc;
  }
  sp_sharding *t = out[j->nsrc];
  if (t) {
    if (j->view == VIEW_LOCAL_SEEN_GLOBAL) t = localize(d->m->arena, t, j->manual);
    else if (j->view == VIEW_GLOBAL_SEEN_LOCAL) t = globalize(d->m->arena, t, j->outer, j->manual);
    if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory");
    if (!sp_sharding_equal(stored, t)) return sp_propagate_set_sharding(d, j->target, t);
  }
  /* A barrier's directions are the same in every run: as permissive as it will ever be. */
  return changed ? SP_OK : settle_if_most_permissive(d, rule, j->use_callback ? dirs : NULL);
}

/* ------------------------------------------------------------------ data-flow edges */

/* Adds slot(v) to the sources unless it is missing or the target itself. */
static void add_source(sp_value **src, int *n, sp_value *v, const sp_value *target) {
  v = slot(v);
  if (!v || v == target) return;
  for (int i = 0; i < *n; i++)
    if (src[i] == v) return;
  src[(*n)++] = v;
}

int sp_propagate_visit_edge(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *owner = op->operands[0].value, *target = &op->results[0];
  identity_job j = {op, NULL, 0, target, SP_DIR_BOTH, true, VIEW_AS_IS, NULL, NULL};
  sp_op *p = owner->def ? owner->def : sp_block_parent_op(owner->block);
  if (!p) return SP_OK;
  int k = owner->index;
  int cap = 2 + p->nregions;
  if (!(j.src = sp_arena_alloc(d->scratch, (size_t)cap * sizeof *j.src)))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_op *t;
  if (owner->def) {
    switch (p->kind) {
      case SP_OP_WHILE:
        if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
        if ((t = region_terminator(p, 1)) && k < t->noperands)
          add_source(j.src, &j.nsrc, t->operands[k].value, target);
        break;
      case SP_OP_CASE:
        for (int r = 0; r < p->nregions; r++)
          if ((t = region_terminator(p, r)) && k < t->noperands)
            add_source(j.src, &j.nsrc, t->operands[k].value, target);
        break;
      case SP_OP_OPTIMIZATION_BARRIER:
        if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
        break;
      case SP_OP_SDY_NAMED_COMPUTATION:
      case SP_OP_SDY_MANUAL_COMPUTATION:
        if ((t = region_terminator(p, 0)) && k < t->noperands)
          add_source(j.src, &j.nsrc, t->operands[k].value, target);
        if (p->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
          j.view = VIEW_GLOBAL_SEEN_LOCAL;
          j.outer = p->results[k].sharding;
          j.manual = sp_op_attr(p, "manual_axes");
        }
        break;
      default:
        return SP_OK;
    }
  } else if (is_named_or_manual(p)) {
    if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
    if (p->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
      const sp_attr *ins = sp_op_attr(p, "in_shardings");
      j.view = VIEW_LOCAL_SEEN_GLOBAL;
      j.outer = ins && ins->kind == SP_ATTR_SHARDINGS && k < ins->u.shardings.n
                    ? ins->u.shardings.v[k]
                    : NULL;
      j.manual = sp_op_attr(p, "manual_axes");
    }
  } else {
    return SP_OK;
  }
  if (j.manual && j.manual->kind != SP_ATTR_AXES) j.manual = NULL;
  if (!j.manual) j.view = VIEW_AS_IS;
  return propagate_identity(d, &j, err);
}

int sp_propagate_visit_func_edge(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *owner = op->operands[0].value, *target = &op->results[0];
  identity_job j = {op, NULL, 0, target, SP_DIR_BOTH, true, VIEW_AS_IS, NULL, NULL};
  int k = owner->index;
  sp_op *g = func_of_arg(owner);
  if (g) {
    int gi = d->has_calls ? op_number(d, g) : -1;
    int n = 0;
    for (int c = gi >= 0 ? d->first_call[gi] : -1; c >= 0; c = d->next_call[c]) n++;
    if (!n) return SP_OK;
    if (!(j.src = sp_arena_alloc(d->scratch, (size_t)n * sizeof *j.src)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int c = d->first_call[gi]; c >= 0; c = d->next_call[c])
      if (k < d->ops[c]->noperands) add_source(j.src, &j.nsrc, d->ops[c]->operands[k].value, target);
  } else if (owner->def && owner->def->kind == SP_OP_FUNC_CALL) {
    sp_op *callee = callee_of(d->m, owner->def);
    sp_op *ret = callee ? region_terminator(callee, 0) : NULL;
    if (!ret || k >= ret->noperands) return SP_OK;
    if (!(j.src = sp_arena_alloc(d->scratch, sizeof *j.src)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    add_source(j.src, &j.nsrc, ret->operands[k].value, target);
  } else {
    return SP_OK;
  }
  return propagate_identity(d, &j, err);
}

static sp_prop_direction barrier_direction(const sp_op *op) {
  const char *s = sp_op_get_str(op, "allowed_direction");
  if (s && strcmp(s, "FORWARD") == 0) return SP_DIR_FORWARD;
  if (s && strcmp(s, "BACKWARD") == 0) return SP_DIR_BACKWARD;
  if (s && strcmp(s, "BOTH") == 0) return SP_DIR_BOTH;
  return SP_DIR_NONE;
}

int sp_propagate_visit_barrier(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *src = slot(op->operands[0].value);
  identity_job j = {op, &src, 1, &op->results[0], barrier_direction(op), false, VIEW_AS_IS,
                    NULL, NULL};
  return propagate_identity(d, &j, err);
}
