/*
 * canonicalize.c - `-canonicalize` for the sdy ops (see canonicalize.h).
 */
#include "propagation/canonicalize.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/op_list.h"
#include "ir/sp_limits.h"
#include "propagation/dead_ops.h"
#include "propagation/export_shardings.h"

/* Replaces the op's single result by `v` everywhere and erases the op. */
static void replace_with(sp_op *op, sp_value *v) {
  sp_value_replace_all_uses(&op->results[0], v);
  sp_op_erase(op);
}

static const sp_attr *dim_axes(const sp_op *op, const char *name) {
  const sp_attr *at = sp_op_attr(op, name);
  return at && at->kind == SP_ATTR_DIM_AXES ? at : NULL;
}

static bool all_empty(const sp_attr *at) {
  for (int d = 0; at && d < at->u.dim_axes.n; d++)
    if (at->u.dim_axes.v[d].naxes) return false;
  return true;
}

static bool same_refs(const sp_axis_ref *a, int na, const sp_axis_ref *b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!sp_axis_ref_equal(&a[i], &b[i])) return false;
  return true;
}

static bool same_dim_axes(const sp_attr *a, const sp_attr *b) {
  if (!a || !b || a->u.dim_axes.n != b->u.dim_axes.n) return false;
  for (int d = 0; d < a->u.dim_axes.n; d++)
    if (!same_refs(a->u.dim_axes.v[d].axes, a->u.dim_axes.v[d].naxes, b->u.dim_axes.v[d].axes,
                   b->u.dim_axes.v[d].naxes))
      return false;
  return true;
}

/* Same split of every dim (open or closed does not matter), same mesh. */
static bool same_layout(const sp_sharding *a, const sp_sharding *b) {
  if (!a || !b) return sp_sharding_is_unsharded(a) && sp_sharding_is_unsharded(b);
  if (a->rank != b->rank || (a->mesh_name == NULL) != (b->mesh_name == NULL) ||
      (a->mesh_name && strcmp(a->mesh_name, b->mesh_name) != 0))
    return false;
  for (int d = 0; d < a->rank; d++)
    if (!same_refs(a->dims[d].axes, a->dims[d].naxes, b->dims[d].axes, b->dims[d].naxes))
      return false;
  return true;
}

/* ------------------------------------------------------------------ null collectives */

static bool is_null_collective(const sp_op *op) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return false;
  switch (op->kind) {
    case SP_OP_SDY_ALL_GATHER: return all_empty(dim_axes(op, "gathering_axes"));
    case SP_OP_SDY_ALL_SLICE: return all_empty(dim_axes(op, "slicing_axes"));
    case SP_OP_SDY_REDUCE_SCATTER: return all_empty(dim_axes(op, "reduce_scatter_axes"));
    case SP_OP_SDY_ALL_REDUCE: {
      const sp_attr *at = sp_op_attr(op, "reduction_axes");
      return at && at->kind == SP_ATTR_AXES && at->u.axes.n == 0;
    }
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
      return same_layout(op->operands[0].value->sharding, op->results[0].sharding);
    default:
      return false;
  }
}

/* ------------------------------------------------------------------ reduce-scatter fusion */

static int64_t axis_size_in(const sp_module *m, const sp_sharding *s, const char *name) {
  const sp_mesh *mesh = sp_module_sharding_mesh(m, s);
  return mesh ? sp_mesh_axis_size(mesh, name) : 0;
}

static bool in_axes(const sp_axis_ref *r, const sp_axis_ref *set, int n) {
  for (int i = 0; i < n; i++)
    if (sp_axis_ref_equal(r, &set[i])) return true;
  return false;
}

/* `s` with `extra[d]` appended to each dim (neighbours merged); replicated axes now sharding
 * a dim are dropped. */
static sp_sharding *append_dims(sp_module *m, const sp_sharding *s, const sp_dim_sharding *extra) {
  sp_sharding *c = sp_sharding_copy(m->arena, s);
  if (!c) return NULL;
  for (int d = 0; d < c->rank; d++) {
    int n = c->dims[d].naxes + extra[d].naxes;
    sp_axis_ref *v = n ? sp_arena_alloc(m->arena, (size_t)n * sizeof *v) : NULL;
    if (n && !v) return NULL;
    int k = 0;
    for (int i = 0; i < c->dims[d].naxes; i++) v[k++] = c->dims[d].axes[i];
    for (int i = 0; i < extra[d].naxes; i++) {
      const sp_axis_ref *r = &extra[d].axes[i];
      if (k && sp_axis_can_merge(&v[k - 1], r))
        v[k - 1] = sp_axis_merge(&v[k - 1], r, axis_size_in(m, s, r->name));
      else
        v[k++] = *r;
    }
    c->dims[d].axes = v;
    c->dims[d].naxes = k;
  }
  int kept = 0;
  for (int i = 0; i < c->nreplicated; i++) {
    bool used = false;
    for (int d = 0; d < c->rank && !used; d++) used = in_axes(&c->replicated[i], c->dims[d].axes, c->dims[d].naxes);
    if (!used) c->replicated[kept++] = c->replicated[i];
  }
  c->nreplicated = kept;
  return c;
}

static sp_op *make_collective(sp_module *m, const char *name, sp_value *in, const sp_sharding *out,
                              const char *axes_name, sp_dim_sharding *axes, int rank,
                              const char *kind, sp_op *before) {
  sp_op *op = sp_op_create(m->arena, name, 1, &in, 1, &in->type, 0);
  if (!op) return NULL;
  sp_attr at = {.name = axes_name, .kind = SP_ATTR_DIM_AXES};
  at.u.dim_axes.n = rank;
  at.u.dim_axes.v = axes;
  if (sp_attrs_set(m->arena, &op->attrs, &at)) return NULL;
  if (kind) {
    sp_attr k = {.name = "reduction_kind", .kind = SP_ATTR_ENUM, .u.s = kind};
    if (sp_attrs_set(m->arena, &op->attrs, &k)) return NULL;
  }
  op->results[0].sharding = (sp_sharding *)out;
  op->loc = before->loc;
  sp_op_insert_before(before, op);
  return op;
}

/* all_reduce R then all_slice S (every use an all_slice with the same slicing axes): when the
 * leading axes of each dim of S that are in R make up exactly R, those become a reduce_scatter
 * and what is left of S an all_slice after it, which all the uses share. */
static int fuse_reduce_scatter(sp_module *m, sp_op *ar, bool *changed) {
  const sp_attr *red = sp_op_attr(ar, "reduction_axes");
  sp_value *res = &ar->results[0];
  if (!red || red->kind != SP_ATTR_AXES || red->u.axes.n == 0 || !res->uses ||
      !ar->operands[0].value)
    return SP_OK;
  const sp_op *first = res->uses->owner;
  const sp_attr *slicing = first->kind == SP_OP_SDY_ALL_SLICE ? dim_axes(first, "slicing_axes") : NULL;
  if (!slicing) return SP_OK;
  for (const sp_use *u = res->uses; u; u = u->next)
    if (u->owner->kind != SP_OP_SDY_ALL_SLICE || !same_dim_axes(dim_axes(u->owner, "slicing_axes"), slicing) ||
        !sp_sharding_equal(u->owner->results[0].sharding, first->results[0].sharding))
      return SP_OK;
  int rank = slicing->u.dim_axes.n;
  if (rank > SP_MAX_RANK || !res->sharding || res->sharding->rank != rank) return SP_OK;
  sp_dim_sharding *rs = sp_arena_calloc(m->arena, (size_t)(rank ? rank : 1), sizeof *rs);
  sp_dim_sharding *rest = sp_arena_calloc(m->arena, (size_t)(rank ? rank : 1), sizeof *rest);
  if (!rs || !rest) return SP_ENOMEM;
  int consumed = 0;
  bool any_rest = false;
  for (int d = 0; d < rank; d++) {
    const sp_dim_sharding *sd = &slicing->u.dim_axes.v[d];
    int k = 0;
    while (k < sd->naxes && in_axes(&sd->axes[k], red->u.axes.v, red->u.axes.n)) k++;
    rs[d] = (sp_dim_sharding){k, sd->axes, true, SP_NO_PRIORITY};
    rest[d] = (sp_dim_sharding){sd->naxes - k, sd->axes + k, true, SP_NO_PRIORITY};
    consumed += k;
    any_rest |= sd->naxes > k;
  }
  if (consumed != red->u.axes.n) return SP_OK;
  const char *kind = sp_op_get_str(ar, "reduction_kind");
  sp_op *slice = res->uses->owner, *at = ar->next; /* the new ops go right after the reduce */
  if (!at) return SP_OK;
  const sp_sharding *rs_out = any_rest ? append_dims(m, res->sharding, rs) : slice->results[0].sharding;
  if (!rs_out) return SP_ENOMEM;
  sp_op *scatter = make_collective(m, "sdy.reduce_scatter", ar->operands[0].value, rs_out,
                                   "reduce_scatter_axes", rs, rank, kind, at);
  if (!scatter) return SP_ENOMEM;
  sp_value *result = &scatter->results[0];
  if (any_rest) {
    sp_op *as = make_collective(m, "sdy.all_slice", result, slice->results[0].sharding,
                                "slicing_axes", rest, rank, NULL, at);
    if (!as) return SP_ENOMEM;
    result = &as->results[0];
  }
  while (res->uses) replace_with(res->uses->owner, result);
  sp_op_erase(ar);
  *changed = true;
  return SP_OK;
}

/* ------------------------------------------------------------------ other folds */

/* all_slice of an all_gather over the same axes gives the gather's input back. */
static bool fold_slice_of_gather(sp_op *op) {
  sp_op *g = op->operands[0].value ? op->operands[0].value->def : NULL;
  if (!g || g->kind != SP_OP_SDY_ALL_GATHER ||
      !same_dim_axes(dim_axes(op, "slicing_axes"), dim_axes(g, "gathering_axes")))
    return false;
  replace_with(op, g->operands[0].value);
  return true;
}

/* An all_reduce that reduces exactly what a replicated_to_unreduced made unreduced gives its
 * input back; after a sharded_to_unreduced it is an all_gather of the same axes. */
static int fold_reduce_of_unreduced(sp_module *m, sp_op *op, bool *changed) {
  sp_op *u = op->operands[0].value ? op->operands[0].value->def : NULL;
  const sp_attr *red = sp_op_attr(op, "reduction_axes");
  if (!u || !red || red->kind != SP_ATTR_AXES) return SP_OK;
  if (u->kind == SP_OP_SDY_REPLICATED_TO_UNREDUCED) {
    const sp_attr *axes = sp_op_attr(u, "axes");
    if (!axes || axes->kind != SP_ATTR_AXES || axes->u.axes.n != red->u.axes.n) return SP_OK;
    for (int i = 0; i < red->u.axes.n; i++)
      if (!in_axes(&red->u.axes.v[i], axes->u.axes.v, axes->u.axes.n)) return SP_OK;
    replace_with(op, u->operands[0].value);
    *changed = true;
    return SP_OK;
  }
  if (u->kind != SP_OP_SDY_SHARDED_TO_UNREDUCED) return SP_OK;
  const sp_attr *axes = dim_axes(u, "axes");
  if (!axes) return SP_OK;
  int n = 0;
  for (int d = 0; d < axes->u.dim_axes.n; d++)
    for (int k = 0; k < axes->u.dim_axes.v[d].naxes; k++, n++)
      if (!in_axes(&axes->u.dim_axes.v[d].axes[k], red->u.axes.v, red->u.axes.n)) return SP_OK;
  if (n != red->u.axes.n) return SP_OK;
  sp_op *g = make_collective(m, "sdy.all_gather", u->operands[0].value, op->results[0].sharding,
                             "gathering_axes", axes->u.dim_axes.v, axes->u.dim_axes.n, NULL, op);
  if (!g) return SP_ENOMEM;
  replace_with(op, &g->results[0]);
  *changed = true;
  return SP_OK;
}

static int compare_params(const void *x, const void *y) {
  const sp_all_to_all_param *a = x, *b = y;
  return a->src_dim < b->src_dim ? -1 : a->src_dim > b->src_dim;
}

/* all_to_all of an all_to_all used only there, their dims apart: one all_to_all. */
static int fuse_all_to_all(sp_module *m, sp_op *op, bool *changed) {
  sp_value *in = op->operands[0].value;
  sp_op *inner = in ? in->def : NULL;
  const sp_attr *a = sp_op_attr(op, "params");
  const sp_attr *b = inner && inner->kind == SP_OP_SDY_ALL_TO_ALL ? sp_op_attr(inner, "params") : NULL;
  if (!a || !b || a->kind != SP_ATTR_ALL_TO_ALL || b->kind != SP_ATTR_ALL_TO_ALL ||
      sp_value_num_uses(in) != 1)
    return SP_OK;
  for (int i = 0; i < a->u.all_to_all.n; i++)
    for (int j = 0; j < b->u.all_to_all.n; j++) {
      const sp_all_to_all_param *p = &a->u.all_to_all.v[i], *q = &b->u.all_to_all.v[j];
      if (p->src_dim == q->src_dim || p->src_dim == q->tgt_dim || p->tgt_dim == q->src_dim ||
          p->tgt_dim == q->tgt_dim)
        return SP_OK;
    }
  int n = a->u.all_to_all.n + b->u.all_to_all.n;
  sp_all_to_all_param *v = sp_arena_alloc(m->arena, (size_t)n * sizeof *v);
  if (!v) return SP_ENOMEM;
  memcpy(v, b->u.all_to_all.v, (size_t)b->u.all_to_all.n * sizeof *v);
  memcpy(v + b->u.all_to_all.n, a->u.all_to_all.v, (size_t)a->u.all_to_all.n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, compare_params);
  sp_attr at = {.name = "params", .kind = SP_ATTR_ALL_TO_ALL};
  at.u.all_to_all.n = n;
  at.u.all_to_all.v = v;
  if (sp_attrs_set(m->arena, &op->attrs, &at)) return SP_ENOMEM;
  sp_op_set_operand(op, 0, inner->operands[0].value);
  sp_op_erase(inner);
  *changed = true;
  return SP_OK;
}

/* ------------------------------------------------------------------ manual computations */

static int64_t mesh_axis_size(const sp_module *m, const sp_op *mc, const char *name) {
  const sp_attr *in = sp_op_attr(mc, "in_shardings");
  const sp_sharding *s = in && in->kind == SP_ATTR_SHARDINGS && in->u.shardings.n ? in->u.shardings.v[0]
                         : mc->nresults ? mc->results[0].sharding : NULL;
  const sp_mesh *mesh = s ? sp_module_sharding_mesh(m, s) : NULL;
  return mesh ? sp_mesh_axis_size(mesh, name) : -1;
}

/* Moves the body of `mc` before it (arguments become the operands, results the returned
 * values) and erases it. */
static void inline_body(sp_op *mc) {
  sp_block *body = mc->regions[0].blocks[0];
  for (int i = 0; i < body->nargs; i++) sp_value_replace_all_uses(body->args[i], mc->operands[i].value);
  sp_op *ret = body->last;
  for (sp_op *op = body->first; op && op != ret;) {
    sp_op *next = op->next;
    sp_op_unlink(op);
    sp_op_insert_before(mc, op);
    op = next;
  }
  for (int i = 0; ret && i < mc->nresults && i < ret->noperands; i++)
    sp_value_replace_all_uses(&mc->results[i], ret->operands[i].value);
  sp_op_erase(mc);
}

/* Drops operands whose body argument is unused (with their in_sharding). */
static int drop_unused_args(sp_module *m, sp_op *mc, bool *changed) {
  sp_block *body = mc->regions[0].blocks[0];
  sp_attr *in = sp_op_attr(mc, "in_shardings");
  if (!in || in->kind != SP_ATTR_SHARDINGS || in->u.shardings.n != mc->noperands ||
      body->nargs != mc->noperands)
    return SP_OK;
  int keep = 0;
  for (int i = 0; i < body->nargs; i++) keep += sp_value_has_uses(body->args[i]);
  if (keep == body->nargs) return SP_OK;
  sp_value **vals = sp_arena_alloc(m->arena, (size_t)(keep ? keep : 1) * sizeof *vals);
  sp_sharding **shs = sp_arena_alloc(m->arena, (size_t)(keep ? keep : 1) * sizeof *shs);
  sp_value **args = sp_arena_alloc(m->arena, (size_t)(keep ? keep : 1) * sizeof *args);
  sp_use *uses = sp_arena_calloc(m->arena, (size_t)(keep ? keep : 1), sizeof *uses);
  if (!vals || !shs || !args || !uses) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < body->nargs; i++) {
    if (!sp_value_has_uses(body->args[i])) continue;
    vals[k] = mc->operands[i].value;
    shs[k] = in->u.shardings.v[i];
    args[k] = body->args[i];
    args[k]->index = k;
    k++;
  }
  for (int i = 0; i < mc->noperands; i++) sp_op_set_operand(mc, i, NULL);
  mc->operands = uses;
  mc->noperands = keep;
  for (int i = 0; i < keep; i++) {
    uses[i].owner = mc;
    uses[i].index = i;
    sp_op_set_operand(mc, i, vals[i]);
  }
  body->args = args;
  body->nargs = keep;
  in->u.shardings.v = shs;
  in->u.shardings.n = keep;
  *changed = true;
  return SP_OK;
}

static int canonicalize_manual(sp_module *m, sp_op *mc, bool *changed) {
  if (mc->nregions != 1 || mc->regions[0].nblocks != 1) return SP_OK;
  sp_block *body = mc->regions[0].blocks[0];
  const sp_attr *ma = sp_op_attr(mc, "manual_axes");
  int nmanual = ma && ma->kind == SP_ATTR_AXES ? ma->u.axes.n : 0;
  if (mc->noperands == 0 && mc->nresults == 0) {
    bool empty = body->first == body->last;
    if (empty || nmanual == 0) {
      inline_body(mc);
      *changed = true;
    }
    return SP_OK;
  }
  bool all_size_one = nmanual > 0;
  for (int i = 0; i < nmanual && all_size_one; i++)
    all_size_one = mesh_axis_size(m, mc, ma->u.axes.v[i].name) == 1;
  if (all_size_one) {
    inline_body(mc);
    *changed = true;
    return SP_OK;
  }
  return drop_unused_args(m, mc, changed);
}

/* ------------------------------------------------------------------ the driver */

static int visit(sp_module *m, sp_op *op, bool collectives_only, bool *changed) {
  if (sp_op_is_trivially_dead(op)) {
    sp_op_erase(op);
    *changed = true;
    return SP_OK;
  }
  if (is_null_collective(op)) {
    replace_with(op, op->operands[0].value);
    *changed = true;
    return SP_OK;
  }
  switch (op->kind) {
    case SP_OP_SDY_ALL_SLICE:
      if (fold_slice_of_gather(op)) *changed = true;
      return SP_OK;
    case SP_OP_SDY_ALL_REDUCE: {
      int rc = fold_reduce_of_unreduced(m, op, changed);
      if (rc || *changed) return rc;
      return fuse_reduce_scatter(m, op, changed);
    }
    case SP_OP_SDY_ALL_TO_ALL:
      return fuse_all_to_all(m, op, changed);
    case SP_OP_SDY_MANUAL_COMPUTATION:
      return collectives_only ? SP_OK : canonicalize_manual(m, op, changed);
    default:
      return SP_OK;
  }
}

static int run(sp_module *m, bool collectives_only, sp_err *err) {
  for (int round = 0; round < 64; round++) {
    sp_op_list l = {0};
    for (sp_op *top = sp_module_body(m)->first; top; top = top->next)
      sp_op_walk(top, sp_op_list_collect, &l);
    int rc = l.oom ? SP_ENOMEM : SP_OK;
    bool changed = false;
    /* Users before producers (reverse walk order), so chains fold from their ends; each op
     * is visited at most once a round (one change per round keeps the list valid). */
    for (int i = l.n - 1; i >= 0 && !rc && !changed; i--)
      if (l.v[i]->block) rc = visit(m, l.v[i], collectives_only, &changed);
    sp_op_list_free(&l);
    if (rc) return sp_err_set(err, rc, "out of memory canonicalizing");
    if (!changed) return SP_OK;
  }
  return SP_OK;
}

int sp_canonicalize(sp_module *m, sp_err *err) { return run(m, false, err); }

int sp_canonicalize_collectives(sp_module *m, sp_err *err) { return run(m, true, err); }
