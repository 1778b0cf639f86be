/*
 * export_shardings.c - divisibility fix, sub-axis removal, closing, explicit reshards and the
 * collective canonicalizer of the export pipeline (see export_shardings.h).
 */
#include "propagation/export_shardings.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/int_math.h"
#include "ir/op_list.h"
#include "propagation/dead_ops.h"
#include "propagation/sharding_walk.h"
#include "rules/registry.h"

sp_op *sp_export_main_func(const sp_module *m) { return sp_module_main_func(m); }

/* Applies `fix` to every sharding of a function's signature (arguments and results). */
typedef sp_sharding *(*fix_fn)(sp_arena *a, const sp_module *m, const sp_sharding *s,
                               const sp_type *t);

static int fix_slot(sp_module *m, sp_sharding **slot, const sp_type *t, fix_fn fix) {
  if (!*slot) return SP_OK;
  sp_sharding *c = fix(m->arena, m, *slot, t);
  if (!c) return SP_ENOMEM;
  *slot = c;
  return SP_OK;
}

static int fix_func_signature(sp_module *m, sp_op *fn, fix_fn fix) {
  sp_func_info *fi = fn->func;
  if (!fi) return SP_OK;
  if (fn->nregions && fn->regions[0].nblocks) {
    sp_block *entry = fn->regions[0].blocks[0];
    for (int i = 0; i < entry->nargs; i++)
      if (fix_slot(m, &entry->args[i]->sharding, entry->args[i]->type, fix)) return SP_ENOMEM;
  }
  for (int i = 0; fi->result_shardings && i < fi->nresults; i++)
    if (fix_slot(m, &fi->result_shardings[i], fi->result_types[i], fix)) return SP_ENOMEM;
  return SP_OK;
}

/* ------------------------------------------------------------------ divisibility */

static sp_sharding *divisible(sp_arena *a, const sp_module *m, const sp_sharding *s,
                              const sp_type *t) {
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  if (!mesh || !t || t->kind != SP_TYPE_TENSOR || t->rank != s->rank) return (sp_sharding *)s;
  sp_sharding *c = NULL;
  for (int d = 0; d < s->rank; d++) {
    int64_t size = t->dims[d], prod = 1;
    const sp_dim_sharding *dim = &s->dims[d];
    int keep = 0;
    sp_axis_ref cut = {0};
    bool has_cut = false;
    for (; keep < dim->naxes; keep++) {
      int64_t as = sp_sharding_axis_size(mesh, &dim->axes[keep]);
      if (as <= 0 || size == SP_DYN_DIM) break;
      if (size % (prod * as) == 0) {
        prod *= as;
        continue;
      }
      int64_t g = sp_gcd64(as, size / prod);
      if (g > 1) {
        const sp_axis_ref *r = &dim->axes[keep];
        cut = sp_axis_make(r->name, sp_axis_pre(r), g, sp_mesh_axis_size(mesh, r->name));
        has_cut = true;
      }
      break;
    }
    if (keep == dim->naxes) continue;
    if (!c && !(c = sp_sharding_copy(a, s))) return NULL;
    c->dims[d].naxes = keep + (has_cut ? 1 : 0);
    if (has_cut) c->dims[d].axes[keep] = cut;
  }
  return c ? c : (sp_sharding *)s;
}

static bool update_op_io(sp_op *op, void *ctx) {
  sp_module *m = ctx;
  if (op->kind == SP_OP_FUNC) return fix_func_signature(m, op, divisible) == SP_OK;
  if (op->kind == SP_OP_FUNC_CALL || op->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
    for (int i = 0; i < op->nresults; i++)
      if (fix_slot(m, &op->results[i].sharding, op->results[i].type, divisible)) return false;
  }
  sp_attr *in = op->kind == SP_OP_SDY_MANUAL_COMPUTATION ? sp_op_attr(op, "in_shardings") : NULL;
  if (in && in->kind == SP_ATTR_SHARDINGS) {
    sp_sharding **v = sp_arena_alloc(m->arena, (size_t)(in->u.shardings.n + 1) * sizeof *v);
    if (!v) return false;
    for (int i = 0; i < in->u.shardings.n; i++) {
      v[i] = in->u.shardings.v[i];
      const sp_type *t = i < op->noperands && op->operands[i].value ? op->operands[i].value->type : NULL;
      if (fix_slot(m, &v[i], t, divisible)) return false;
    }
    in->u.shardings.v = v;
  }
  return true;
}

int sp_export_update_non_divisible(sp_module *m, sp_err *err) {
  if (!sp_op_walk(m->op, update_op_io, m))
    return sp_err_set(err, SP_ENOMEM, "out of memory fixing non-divisible shardings");
  return SP_OK;
}

/* ------------------------------------------------------------------ sub-axes in main */

static sp_sharding *without_sub_axes(sp_arena *a, const sp_module *m, const sp_sharding *s,
                                     const sp_type *t) {
  (void)m;
  (void)t;
  sp_sharding *c = NULL;
  for (int d = 0; d < s->rank; d++) {
    const sp_dim_sharding *dim = &s->dims[d];
    if (dim->closed) continue;
    int k = 0;
    while (k < dim->naxes && !sp_axis_is_sub(&dim->axes[k])) k++;
    if (k == dim->naxes) continue;
    if (!c && !(c = sp_sharding_copy(a, s))) return NULL;
    c->dims[d].naxes = k;
  }
  return c ? c : (sp_sharding *)s;
}

int sp_export_remove_sub_axes_in_main(sp_module *m, sp_err *err) {
  sp_op *fn = sp_export_main_func(m);
  if (fn && fix_func_signature(m, fn, without_sub_axes))
    return sp_err_set(err, SP_ENOMEM, "out of memory removing sub-axes");
  return SP_OK;
}

/* ------------------------------------------------------------------ closing */

sp_sharding *sp_export_closed(sp_arena *a, const sp_sharding *s) {
  bool done = s->nreplicated == 0;
  for (int d = 0; d < s->rank && done; d++)
    done = s->dims[d].closed && (s->dims[d].naxes || s->dims[d].priority == SP_NO_PRIORITY);
  if (done) return (sp_sharding *)s;
  sp_sharding *c = sp_sharding_copy(a, s);
  if (!c) return NULL;
  for (int d = 0; d < c->rank; d++) {
    c->dims[d].closed = true;
    if (!c->dims[d].naxes) c->dims[d].priority = SP_NO_PRIORITY;
  }
  c->nreplicated = 0;
  c->replicated = NULL;
  return c;
}

static int close_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)ctx;
  sp_sharding *c = sp_export_closed(m->arena, *s->slot);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory closing shardings");
  *s->slot = c;
  return SP_OK;
}

int sp_export_close_shardings(sp_module *m, sp_err *err) {
  return sp_sharding_walk(m, close_slot, NULL, err);
}

/* ------------------------------------------------------------------ explicit reshards */

static bool has_axis(const sp_axis_ref *v, int n, const sp_axis_ref *r) {
  for (int i = 0; i < n; i++)
    if (sp_axis_ref_equal(&v[i], r)) return true;
  return false;
}

/* Whether some axis of `v` contains `r` (sub-axes included). */
static bool covers_axis(const sp_mesh *mesh, const sp_axis_ref *v, int n, const sp_axis_ref *r) {
  int64_t size = mesh ? sp_mesh_axis_size(mesh, r->name) : 0;
  for (int i = 0; i < n; i++)
    if (sp_axis_ref_equal(&v[i], r) || (size && sp_axis_contains(&v[i], r, size))) return true;
  return false;
}

/* The sharding whose unreduced axes the user `user` keeps for its operand `i`, for the users
 * that name it themselves (reshard/constraint, return, call, manual computation); NULL
 * otherwise. *skip: the user
 * never needs an all-reduce in front of it (collectives, groups, edges, region terminators). */
static const sp_sharding *unreduced_target(const sp_module *m, const sp_op *user, int i,
                                           bool *skip) {
  *skip = false;
  switch (user->kind) {
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_SHARDING_CONSTRAINT:
      return user->results[0].sharding;
    case SP_OP_FUNC_RETURN: {
      sp_op *fn = sp_op_parent(user);
      if (!fn || fn->kind != SP_OP_FUNC || !fn->func || i >= fn->func->nresults ||
          !fn->func->result_shardings)
        return NULL;
      return fn->func->result_shardings[i];
    }
    case SP_OP_FUNC_CALL: {
      const char *callee = sp_op_get_str(user, "callee");
      sp_op *fn = callee ? sp_module_lookup_func(m, callee) : NULL;
      if (!fn || !fn->nregions || !fn->regions[0].nblocks || i >= fn->regions[0].blocks[0]->nargs)
        return NULL;
      return fn->regions[0].blocks[0]->args[i]->sharding;
    }
    case SP_OP_SDY_MANUAL_COMPUTATION: {
      const sp_attr *in = sp_op_attr(user, "in_shardings");
      if (!in || in->kind != SP_ATTR_SHARDINGS || i >= in->u.shardings.n) return NULL;
      return in->u.shardings.v[i];
    }
    case SP_OP_SDY_RETURN: {
      /* A manual computation's body gives back what its out_sharding lists unreduced. */
      sp_op *mc = sp_op_parent(user);
      if (mc && mc->kind == SP_OP_SDY_MANUAL_COMPUTATION && i < mc->nresults)
        return mc->results[i].sharding;
      *skip = true;
      return NULL;
    }
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_SHARDING_GROUP:
    case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_RETURN:
      *skip = true;
      return NULL;
    default:
      return NULL;
  }
}

/* Whether axis r is unreduced in every result of `user` (for users other than the special
 * cases of unreduced_target). */
static bool kept_by_results(const sp_op *user, const sp_axis_ref *r) {
  if (!user->nresults) return false;
  for (int j = 0; j < user->nresults; j++) {
    const sp_sharding *s = user->results[j].sharding;
    if (!s || !has_axis(s->unreduced, s->nunreduced, r)) return false;
  }
  return true;
}

static bool uses_result_unreduced(const sp_op *user) {
  switch (user->kind) {
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_FUNC_RETURN:
    case SP_OP_FUNC_CALL:
    case SP_OP_SDY_MANUAL_COMPUTATION:
    case SP_OP_SDY_RETURN:
      return false;
    default:
      return true;
  }
}

/* Splits unreduced axis `r` into the parts `target` keeps unreduced (appended to keep) and
 * the rest (appended to reduce). Target axes do not overlap one another, so each one splits
 * at most one remaining part (into the pieces before and after it). */
static int split_by_unreduced(sp_arena *a, const sp_mesh *mesh, const sp_axis_ref *r,
                              const sp_sharding *target, sp_axis_ref *keep, int *nkeep,
                              sp_axis_ref *reduce, int *nreduce) {
  int64_t n = sp_mesh_axis_size(mesh, r->name);
  size_t cap = (size_t)target->nunreduced + 2;
  sp_axis_ref *cur = sp_arena_alloc(a, cap * sizeof *cur);
  sp_axis_ref *next = sp_arena_alloc(a, cap * sizeof *next);
  if (!cur || !next) return SP_ENOMEM;
  int nc = 0;
  cur[nc++] = *r;
  for (int u = 0; u < target->nunreduced; u++) {
    const sp_axis_ref *t = &target->unreduced[u];
    int nn = 0;
    for (int k = 0; k < nc; k++) {
      sp_axis_ref p = cur[k], part, before, after;
      if (!sp_axis_same_name(&p, t) || !sp_axis_overlaps(&p, t, n) ||
          !sp_axis_overlap_part(&p, t, n, &part)) {
        next[nn++] = p;
        continue;
      }
      keep[(*nkeep)++] = part;
      if (sp_axis_prefix_without_overlap(&p, t, n, &before)) next[nn++] = before;
      if (sp_axis_suffix_without_overlap(&p, t, n, &after)) next[nn++] = after;
    }
    sp_axis_ref *swap = cur;
    cur = next;
    next = swap;
    nc = nn;
  }
  for (int k = 0; k < nc; k++) reduce[(*nreduce)++] = cur[k];
  return SP_OK;
}

int sp_export_all_reduce_operand(sp_module *m, sp_op *user, int i, const sp_sharding *s) {
  sp_value *v = user->operands[i].value;
  if (!s || !s->nunreduced) return SP_OK;
  bool skip;
  const sp_sharding *target = unreduced_target(m, user, i, &skip);
  if (skip) return SP_OK;
  int nt = target ? target->nunreduced : 0, cap = s->nunreduced * (2 * nt + 2) + 1;
  sp_axis_ref *reduce = sp_arena_alloc(m->arena, (size_t)cap * sizeof *reduce);
  sp_axis_ref *keep = sp_arena_alloc(m->arena, (size_t)cap * sizeof *keep);
  if (!reduce || !keep) return SP_ENOMEM;
  int nreduce = 0, nkeep = 0;
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  for (int k = 0; k < s->nunreduced; k++) {
    const sp_axis_ref *r = &s->unreduced[k];
    if (uses_result_unreduced(user)) {
      if (kept_by_results(user, r)) keep[nkeep++] = *r;
      else reduce[nreduce++] = *r;
    } else if (target && covers_axis(mesh, target->unreduced, target->nunreduced, r)) {
      keep[nkeep++] = *r;
    } else if (target && mesh) {
      int rc = split_by_unreduced(m->arena, mesh, r, target, keep, &nkeep, reduce, &nreduce);
      if (rc) return rc;
    } else {
      reduce[nreduce++] = *r;
    }
  }
  if (nkeep > 1) sp_sharding_sort_axes(keep, nkeep, mesh);
  if (nreduce > 1) sp_sharding_sort_axes(reduce, nreduce, mesh);
  if (!nreduce) return SP_OK;
  sp_sharding *out = sp_sharding_copy(m->arena, s);
  sp_op *ar = out ? sp_op_create(m->arena, "sdy.all_reduce", 1, &v, 1, &v->type, 0) : NULL;
  if (!ar) return SP_ENOMEM;
  out->unreduced = nkeep ? keep : NULL;
  out->nunreduced = nkeep;
  if (!nkeep) out->unreduced_kind = NULL;
  ar->loc = user->loc;
  ar->results[0].sharding = out;
  sp_attr axes = {.name = "reduction_axes", .kind = SP_ATTR_AXES};
  axes.u.axes.n = nreduce;
  axes.u.axes.v = reduce;
  if (sp_attrs_set(m->arena, &ar->attrs, &axes)) return SP_ENOMEM;
  if (s->unreduced_kind) {
    sp_attr kind = {.name = "reduction_kind", .kind = SP_ATTR_ENUM};
    kind.u.s = s->unreduced_kind;
    if (sp_attrs_set(m->arena, &ar->attrs, &kind)) return SP_ENOMEM;
  }
  sp_op_insert_before(user, ar);
  sp_op_set_operand(user, i, &ar->results[0]);
  return SP_OK;
}

/* The sharding `v` has: a while's body or condition argument carries none of its own once the
 * data-flow edges are sunk; it has the while result's at its place (the edge's owner). */
static const sp_sharding *sharding_of(const sp_value *v) {
  if (!v->sharding && !v->def && v->block) {
    const sp_op *p = sp_block_parent_op(v->block);
    if (p && p->kind == SP_OP_WHILE && v->index < p->nresults) return p->results[v->index].sharding;
  }
  return v->sharding;
}

static int reshard_call_operands(sp_module *m, sp_op *call) {
  const char *callee = sp_op_get_str(call, "callee");
  sp_op *fn = callee ? sp_module_lookup_func(m, callee) : NULL;
  if (!fn || !fn->nregions || !fn->regions[0].nblocks) return SP_OK;
  sp_block *entry = fn->regions[0].blocks[0];
  for (int i = 0; i < call->noperands && i < entry->nargs; i++) {
    sp_value *v = call->operands[i].value;
    sp_sharding *want = entry->args[i]->sharding;
    if (!v || !want || sp_sharding_same_axes(sharding_of(v), want)) continue;
    sp_op *r = sp_op_create(m->arena, "sdy.reshard", 1, &v, 1, &v->type, 0);
    if (!r) return SP_ENOMEM;
    r->loc = call->loc;
    r->results[0].sharding = want;
    sp_op_insert_after_value(v, r); /* where Shardy places a call operand's reshard */
    sp_op_set_operand(call, i, &r->results[0]);
  }
  return SP_OK;
}

/* Appends the axes of `s` on the dims of tensor `t` that map to a single reduction factor. */
static int add_reduction_axes(const sp_rule *rule, const sp_rule_tensor *t, const sp_sharding *s,
                              sp_axis_ref *out, int *n, int cap) {
  if (!s || s->rank != t->rank) return SP_OK;
  for (int d = 0; d < t->rank; d++) {
    if (t->dims[d].nfactors != 1 || rule->factors[t->dims[d].factors[0]].kind != SP_FACTOR_REDUCTION)
      continue;
    for (int k = 0; k < s->dims[d].naxes; k++) {
      if (has_axis(out, *n, &s->dims[d].axes[k])) continue;
      if (*n == cap) return SP_ELIMIT;
      out[(*n)++] = s->dims[d].axes[k];
    }
  }
  return SP_OK;
}

/* One all-reduce of the reduction axes `red` (n of them) that result `r` does not list as
 * unreduced, inserted after `*anchor` (which then becomes it); none when no axis is left. */
static int reduce_result(sp_module *m, sp_op *op, sp_value *r, const sp_axis_ref *red, int n,
                         sp_op **anchor) {
  const sp_sharding *rs = r->sharding;
  sp_axis_ref *axes = sp_arena_alloc(m->arena, (size_t)n * sizeof *axes);
  if (!axes) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!has_axis(rs->unreduced, rs->nunreduced, &red[i])) axes[k++] = red[i];
  if (!k) return SP_OK;
  sp_sharding_sort_axes(axes, k, sp_sharding_mesh(m, rs));
  sp_op *ar = sp_op_create(m->arena, "sdy.all_reduce", 1, NULL, 1, &r->type, 0);
  if (!ar) return SP_ENOMEM;
  ar->loc = op->loc;
  ar->results[0].sharding = (sp_sharding *)rs;
  sp_attr at = {.name = "reduction_axes", .kind = SP_ATTR_AXES};
  at.u.axes.n = k;
  at.u.axes.v = axes;
  if (sp_attrs_set(m->arena, &ar->attrs, &at)) return SP_ENOMEM;
  sp_value_replace_all_uses(r, &ar->results[0]);
  sp_op_set_operand(ar, 0, r);
  sp_op_insert_after(*anchor, ar);
  *anchor = ar;
  return SP_OK;
}

/* After an op a result of which already carries unreduced axes, the axes that shard its
 * reduction factors are all-reduced right after it, per result with a sharding, less the
 * axes that result lists as unreduced (the all-reduce's out_sharding is the result's
 * sharding; the all-reduces follow in result order). */
static int reduce_after_op(sp_module *m, sp_op *op, sp_err *err) {
  if (strncmp(op->name, "sdy.", 4) == 0) return SP_OK;
  bool any = false;
  for (int j = 0; j < op->nresults; j++)
    any |= op->results[j].sharding && op->results[j].sharding->nunreduced;
  if (!any) return SP_OK;
  sp_rule *rule = NULL;
  int rc = sp_rules_for_op(m->arena, op, NULL, &rule, NULL, err);
  if (rc || !rule || rule->noperands != op->noperands) return rc;
  int cap = 0;
  for (int i = 0; i < op->noperands; i++) {
    const sp_sharding *s = op->operands[i].value ? op->operands[i].value->sharding : NULL;
    for (int d = 0; s && d < s->rank; d++) cap += s->dims[d].naxes;
  }
  if (!cap) return SP_OK;
  sp_axis_ref *red = sp_arena_alloc(m->arena, (size_t)cap * sizeof *red);
  if (!red) return sp_err_set(err, SP_ENOMEM, "out of memory inserting an all-reduce");
  int n = 0;
  for (int i = 0; i < op->noperands; i++)
    add_reduction_axes(rule, &rule->operands[i],
                       op->operands[i].value ? op->operands[i].value->sharding : NULL, red, &n, cap);
  sp_op *anchor = op;
  for (int j = 0; n && j < op->nresults; j++)
    if (op->results[j].sharding && (rc = reduce_result(m, op, &op->results[j], red, n, &anchor)))
      return sp_err_set(err, rc, "out of memory inserting an all-reduce");
  return SP_OK;
}

int sp_export_insert_explicit_reshards(sp_module *m, sp_err *err) {
  return sp_export_insert_explicit_reshards_mode(m, true, err);
}

int sp_export_insert_explicit_reshards_mode(sp_module *m, bool reduce_after_ops, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  for (int k = 0; !rc && k < l.n; k++) {
    sp_op *op = l.v[k];
    for (int i = 0; !rc && i < op->noperands; i++) {
      const sp_value *v = op->operands[i].value;
      if (v && v->sharding && v->sharding->nunreduced)
        rc = sp_export_all_reduce_operand(m, op, i, v->sharding);
    }
    if (!rc && op->kind == SP_OP_FUNC_CALL) rc = reshard_call_operands(m, op);
    if (!rc && reduce_after_ops && (rc = reduce_after_op(m, op, err))) {
      sp_op_list_free(&l);
      return rc;
    }
  }
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory inserting explicit reshards") : SP_OK;
}

/* ------------------------------------------------------------------ canonicalizer */

/* An sdy collective whose axis list is empty does nothing. */
static bool is_noop_collective(const sp_op *op) {
  if (op->kind != SP_OP_SDY_ALL_REDUCE || op->noperands != 1 || op->nresults != 1) return false;
  sp_attr *at = sp_op_attr(op, "reduction_axes");
  return at && at->kind == SP_ATTR_AXES && at->u.axes.n == 0;
}

int sp_export_canonicalize(sp_module *m, sp_err *err) {
  for (bool changed = true; changed;) {
    changed = false;
    sp_op_list l = {0};
    sp_op_walk(m->op, sp_op_list_collect, &l);
    if (l.oom) {
      sp_op_list_free(&l);
      return sp_err_set(err, SP_ENOMEM, "out of memory in the canonicalizer");
    }
    /* Backwards: a dead op's operands may die with it in the same sweep. */
    for (int k = l.n - 1; k >= 0; k--) {
      sp_op *op = l.v[k];
      if (!op->block) continue;
      if (is_noop_collective(op) && op->operands[0].value) {
        sp_value_replace_all_uses(&op->results[0], op->operands[0].value);
        sp_op_erase(op);
        changed = true;
      } else if (sp_op_is_trivially_dead(op)) {
        sp_op_erase(op);
        changed = true;
      }
    }
    sp_op_list_free(&l);
  }
  return SP_OK;
}
