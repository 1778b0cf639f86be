/*
 * explicit_reshards.c - the full version of explicit reshard insertion (see
 * explicit_reshards.h).
 */
#include "export/explicit_reshards.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "ir/op_list.h"
#include "propagation/export_shardings.h"
#include "propagation/factor_projection.h"
#include "propagation/sharding_walk.h"
#include "rules/registry.h"

static bool skipped_kind(const sp_op *op) {
  if (strncmp(op->name, "sdy.", 4) == 0) return true;
  switch (op->kind) {
    case SP_OP_MODULE:
    case SP_OP_FUNC:
    case SP_OP_FUNC_CALL:
    case SP_OP_FUNC_RETURN:
    case SP_OP_RETURN:
    case SP_OP_WHILE:
    case SP_OP_CASE:
    case SP_OP_IF:
    case SP_OP_OPTIMIZATION_BARRIER:
    case SP_OP_CONSTANT:
      return true;
    default:
      return false;
  }
}

/* A candidate list of axes for one factor. */
typedef struct candidate {
  int factor;
  sp_ft_axes axes;
  int64_t weight;   /* element count of the tensors that have it (or more after it) */
  int64_t devices;  /* product of the axes' sizes */
  bool alive;
} candidate;

typedef struct chooser {
  sp_arena *a;
  const sp_factor_table *t;
  const int64_t *sizes;  /* element count per row */
  candidate *c;
  int n, cap;
} chooser;

static int add_candidate(chooser *ch, int f, const sp_ft_axes *axes) {
  for (int i = 0; i < ch->n; i++)
    if (ch->c[i].factor == f && sp_ft_axes_equal(&ch->c[i].axes, axes)) return SP_OK;
  if (sp_grow((void **)&ch->c, &ch->cap, ch->n, sizeof *ch->c)) return SP_ENOMEM;
  candidate *c = &ch->c[ch->n++];
  memset(c, 0, sizeof *c);
  c->factor = f;
  c->alive = true;
  return sp_ft_axes_assign(ch->a, &c->axes, axes);
}

/* Recomputes weights: a tensor counts for a candidate when its cell starts with the
 * candidate's axes. */
static void weigh(chooser *ch) {
  const sp_factor_table *t = ch->t;
  for (int i = 0; i < ch->n; i++) {
    candidate *c = &ch->c[i];
    c->weight = 0;
    c->devices = sp_ft_axes_product(t->mesh, &c->axes);
    for (int r = 0; r < sp_factor_table_nrows(t); r++) {
      const sp_ft_cell *cell = &t->rows[r].cells[c->factor];
      if (cell->present && sp_ft_axes_is_prefix(t->mesh, &c->axes, &cell->axes))
        c->weight += ch->sizes[r];
    }
  }
}

static bool better(const candidate *x, const candidate *y) {
  if (x->weight != y->weight) return x->weight > y->weight;
  if (x->devices != y->devices) return x->devices > y->devices;
  return x->factor < y->factor;
}

static bool overlaps(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b) {
  if (a.axis != b.axis) return false;
  sp_ft_axis rest;
  return !sp_ft_axis_prefix_without_overlap(m, a, b, &rest) || !sp_ft_axis_equal(rest, a);
}

/* Cuts `l` before its first axis that overlaps an axis of `used`. */
static void cut_before_overlap(const sp_mesh *m, sp_ft_axes *l, const sp_ft_axes *used) {
  for (int i = 0; i < l->n; i++)
    for (int k = 0; k < used->n; k++)
      if (overlaps(m, l->v[i], used->v[k])) {
        sp_ft_axis rest;
        if (sp_ft_axis_prefix_without_overlap(m, l->v[i], used->v[k], &rest) &&
            !sp_ft_axis_equal(rest, l->v[i]) && sp_ft_axis_pre(rest) == sp_ft_axis_pre(l->v[i])) {
          l->v[i] = rest;
          l->n = i + 1;
        } else {
          l->n = i;
        }
        return;
      }
}

static bool overlaps_any(const sp_mesh *m, sp_ft_axis a, const sp_ft_axes *l) {
  for (int k = 0; k < l->n; k++)
    if (overlaps(m, a, l->v[k])) return true;
  return false;
}

static bool in_every_tensor(const sp_factor_table *t, int f) {
  for (int r = 0; r < sp_factor_table_nrows(t); r++)
    if (!t->rows[r].cells[f].present) return false;
  return true;
}

/* Axes the tensors put on need-replication factors that every tensor has, when no factor got
 * them, are appended to the first pass-through factor
 * they still divide (tensor order, then factor order), so that devices are not left idle. */
static int distribute_unused(sp_arena *a, const sp_factor_table *t, sp_ft_axes *common,
                             sp_ft_axes *used) {
  for (int r = 0; r < sp_factor_table_nrows(t); r++)
    for (int f = 0; f < t->nfactors; f++) {
      const sp_ft_cell *cell = &t->rows[r].cells[f];
      if (t->rule->factors[f].kind != SP_FACTOR_NEED_REPLICATION || !in_every_tensor(t, f)) continue;
      for (int k = 0; cell->present && k < cell->axes.n; k++) {
        sp_ft_axis x = cell->axes.v[k];
        if (overlaps_any(t->mesh, x, used)) continue;
        int64_t xs = sp_ft_axis_size(t->mesh, x);
        for (int g = 0; g < t->nfactors; g++) {
          if (t->rule->factors[g].kind != SP_FACTOR_PASS_THROUGH) continue;
          int64_t have = sp_ft_axes_product(t->mesh, &common[g]);
          if (t->rule->factors[g].size % (have * xs) != 0) continue;
          int rc = sp_ft_axes_push(a, &common[g], x);
          if (!rc) rc = sp_ft_axes_push(a, used, x);
          if (rc) return rc;
          break;
        }
      }
    }
  return SP_OK;
}

/* Greedy choice of one axes list per factor into `common` (nfactors lists). */
static int choose_greedy(sp_arena *a, const sp_factor_table *t, const int64_t *sizes,
                         sp_ft_axes *common) {
  chooser ch = {a, t, sizes, NULL, 0, 0};
  int rc = SP_OK;
  for (int r = 0; !rc && r < sp_factor_table_nrows(t); r++)
    for (int f = 0; !rc && f < t->nfactors; f++) {
      const sp_ft_cell *cell = &t->rows[r].cells[f];
      if (!cell->present || !cell->axes.n) continue;
      if (t->rule->factors[f].kind == SP_FACTOR_NEED_REPLICATION) continue;
      rc = add_candidate(&ch, f, &cell->axes);
    }
  sp_ft_axes used = {0};
  while (!rc) {
    weigh(&ch);
    candidate *best = NULL;
    for (int i = 0; i < ch.n; i++)
      if (ch.c[i].alive && ch.c[i].axes.n && (!best || better(&ch.c[i], best))) best = &ch.c[i];
    if (!best) break;
    if ((rc = sp_ft_axes_assign(a, &common[best->factor], &best->axes))) break;
    for (int k = 0; !rc && k < best->axes.n; k++) rc = sp_ft_axes_push(a, &used, best->axes.v[k]);
    int f = best->factor;
    for (int i = 0; i < ch.n; i++) {
      if (!ch.c[i].alive) continue;
      if (ch.c[i].factor == f) {
        ch.c[i].alive = false;
        continue;
      }
      cut_before_overlap(t->mesh, &ch.c[i].axes, &used);
      if (!ch.c[i].axes.n) ch.c[i].alive = false;
    }
  }
  free(ch.c);
  if (!rc) rc = distribute_unused(a, t, common, &used);
  return rc;
}

static int64_t row_devices(const sp_factor_table *t, int r) {
  int64_t p = 1;
  for (int f = 0; f < t->nfactors; f++)
    if (t->rows[r].cells[f].present) p *= sp_ft_axes_product(t->mesh, &t->rows[r].cells[f].axes);
  return p;
}

/* The special case of one operand and one result (see the header). */
static bool unary_case(const sp_factor_table *t) {
  if (t->noperands != 1 || t->nresults != 1) return false;
  for (int f = 0; f < t->nfactors; f++)
    if (t->rule->factors[f].kind == SP_FACTOR_NEED_REPLICATION) return false;
  const sp_rule *rule = t->rule;
  for (int d = 0; d < rule->operands[0].rank; d++)
    if (rule->operands[0].dims[d].nfactors != 1) return false;
  for (int d = 0; d < rule->results[0].rank; d++)
    if (rule->results[0].dims[d].nfactors != 1) return false;
  return true;
}

static bool row_matches(const sp_factor_table *t, int r, const sp_ft_axes *common) {
  for (int f = 0; f < t->nfactors; f++) {
    const sp_ft_cell *c = &t->rows[r].cells[f];
    if (!c->present) continue;
    if (c->overflow.n || !sp_ft_axes_equal(&c->axes, &common[f])) return false;
  }
  return true;
}

/* The sharding of row `r` with `common` axes per factor. */
static int row_sharding(sp_module *m, sp_arena *scratch, const sp_factor_table *t, int r,
                        const sp_ft_axes *common, const sp_sharding *old,
                        const sp_sharding *mesh_ref, sp_sharding **out, sp_err *err) {
  sp_factor_table *c = sp_factor_table_copy(scratch, t);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int f = 0; f < c->nfactors; f++) {
    sp_ft_cell *cell = &c->rows[r].cells[f];
    if (!cell->present) continue;
    cell->closed = true;
    cell->overflow.n = 0;
    int rc = sp_ft_axes_assign(scratch, &cell->axes, &common[f]);
    if (rc) return sp_err_set(err, rc, "out of memory inserting explicit reshards");
  }
  int rc = sp_factor_table_to_sharding(m->arena, c, r, old, mesh_ref, out, err);
  if (rc) return rc;
  for (int d = 0; d < (*out)->rank; d++) (*out)->dims[d].closed = true;
  return SP_OK;
}

static sp_op *make_reshard(sp_module *m, sp_value *v, sp_sharding *s, sp_loc loc) {
  sp_op *r = sp_op_create(m->arena, "sdy.reshard", 1, &v, 1, &v->type, 0);
  if (!r) return NULL;
  r->loc = loc;
  r->results[0].sharding = s;
  return r;
}

static bool same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b) {
  if (a->mesh_name && b->mesh_name) return strcmp(a->mesh_name, b->mesh_name) == 0;
  const sp_mesh *x = sp_sharding_mesh(m, a), *y = sp_sharding_mesh(m, b);
  return x && y && sp_mesh_equal(x, y);
}

static bool has_axes(const sp_sharding *s) {
  return s && !sp_sharding_is_unsharded(s);
}

/* Same axes in every dim (unreduced axes are the all-reduce step's business). */
static bool same_dims(const sp_sharding *a, const sp_sharding *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d].naxes != b->dims[d].naxes) return false;
    for (int i = 0; i < a->dims[d].naxes; i++)
      if (!sp_axis_ref_equal(&a->dims[d].axes[i], &b->dims[d].axes[i])) return false;
  }
  return true;
}

/* A returned value whose sharding differs from the function result's is resharded to it
 * right before the return (a missing sharding is replicated; two replicated shardings match
 * whatever their meshes). */
static int reshard_returns(sp_module *m, sp_op *ret, sp_err *err) {
  sp_op *fn = sp_op_parent(ret);
  if (!fn || fn->kind != SP_OP_FUNC || !fn->func) return SP_OK;
  for (int i = 0; i < ret->noperands && i < fn->func->nresults; i++) {
    sp_value *v = ret->operands[i].value;
    sp_sharding *want = fn->func->result_shardings ? fn->func->result_shardings[i] : NULL;
    const sp_sharding *have = v->sharding;
    bool adds_unreduced = want && want->nunreduced && !(have && have->nunreduced >= want->nunreduced);
    if (!has_axes(want) && !has_axes(have) && !adds_unreduced) continue;
    if (want && have && same_mesh(m, want, have) && same_dims(want, have) && !adds_unreduced) continue;
    if (!want) {
      want = sp_sharding_new(m->arena, have->mesh_name, have->rank, true);
      if (!want) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
      want->inline_mesh = have->inline_mesh;
    }
    sp_op *rs = make_reshard(m, v, want, ret->loc);
    if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    sp_op_insert_before(ret, rs);
    sp_op_set_operand(ret, i, &rs->results[0]);
  }
  return SP_OK;
}

static int reconcile(sp_module *m, sp_arena *scratch, sp_op *op, sp_err *err) {
  if (op->kind == SP_OP_FUNC_RETURN) return reshard_returns(m, op, err);
  if (skipped_kind(op)) return SP_OK;
  const sp_sharding *mesh_ref = NULL;
  for (int i = 0; i < op->noperands && !mesh_ref; i++) mesh_ref = op->operands[i].value->sharding;
  for (int i = 0; i < op->nresults && !mesh_ref; i++) mesh_ref = op->results[i].sharding;
  if (!mesh_ref) return SP_OK;
  for (int i = 0; i < op->noperands; i++) {
    const sp_sharding *s = op->operands[i].value->sharding;
    if (s && !same_mesh(m, s, mesh_ref)) return SP_OK;
  }
  for (int i = 0; i < op->nresults; i++) {
    const sp_sharding *s = op->results[i].sharding;
    if (s && !same_mesh(m, s, mesh_ref)) return SP_OK;
  }
  const sp_mesh *mesh = sp_sharding_mesh(m, mesh_ref);
  if (!mesh || sp_mesh_is_maximal(mesh)) return SP_OK;
  sp_rule *rule = NULL;
  int rc = sp_rules_for_op(scratch, op, NULL, &rule, NULL, err);
  if (rc || !rule || rule->noperands != op->noperands || rule->nresults != op->nresults) return rc;
  sp_sharding **in = sp_arena_calloc(scratch, (size_t)op->noperands + 1, sizeof *in);
  sp_sharding **outs = sp_arena_calloc(scratch, (size_t)op->nresults + 1, sizeof *outs);
  if (!in || !outs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int i = 0; i < op->noperands; i++) in[i] = op->operands[i].value->sharding;
  for (int i = 0; i < op->nresults; i++) outs[i] = op->results[i].sharding;
  sp_factor_table *t = NULL;
  if (sp_factor_table_build(scratch, rule, mesh, in, outs, &t, NULL) != SP_OK) return SP_OK;
  int nrows = sp_factor_table_nrows(t);
  int64_t *sizes = sp_arena_calloc(scratch, (size_t)nrows + 1, sizeof *sizes);
  sp_ft_axes *common = sp_arena_calloc(scratch, (size_t)t->nfactors + 1, sizeof *common);
  if (!sizes || !common) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int r = 0; r < nrows; r++) {
    const sp_type *ty = r < op->noperands ? op->operands[r].value->type : op->results[r - op->noperands].type;
    int64_t n = sp_type_num_elements(ty);
    sizes[r] = n > 0 ? n : 1;
  }
  /* Already compatible? */
  bool compatible = true;
  for (int f = 0; f < t->nfactors && compatible; f++) {
    const sp_ft_axes *first = NULL;
    for (int r = 0; r < nrows && compatible; r++) {
      const sp_ft_cell *c = &t->rows[r].cells[f];
      if (!c->present) continue;
      if (c->overflow.n) compatible = false;
      else if (!first) first = &c->axes;
      else if (!sp_ft_axes_equal(first, &c->axes)) compatible = false;
    }
    if (first && first->n && t->rule->factors[f].kind == SP_FACTOR_NEED_REPLICATION) compatible = false;
    if (compatible && first && (rc = sp_ft_axes_assign(scratch, &common[f], first)))
      return sp_err_set(err, rc, "out of memory inserting explicit reshards");
  }
  if (!compatible) {
    for (int f = 0; f < t->nfactors; f++) common[f].n = 0;
    if (unary_case(t)) {
      int pick = row_devices(t, 1) > row_devices(t, 0) ? 1 : 0;
      for (int f = 0; f < t->nfactors; f++)
        if (t->rows[pick].cells[f].present &&
            (rc = sp_ft_axes_assign(scratch, &common[f], &t->rows[pick].cells[f].axes)))
          return sp_err_set(err, rc, "out of memory inserting explicit reshards");
    } else if ((rc = choose_greedy(scratch, t, sizes, common))) {
      return sp_err_set(err, rc, "out of memory inserting explicit reshards");
    }
  }
  /* Operands. */
  for (int i = 0; i < op->noperands; i++) {
    if (row_matches(t, i, common)) continue;
    sp_sharding *s;
    if ((rc = row_sharding(m, scratch, t, i, common, in[i], mesh_ref, &s, err))) return rc;
    sp_op *rs = make_reshard(m, op->operands[i].value, s, op->loc);
    if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    sp_op_insert_before(op, rs);
    sp_op_set_operand(op, i, &rs->results[0]);
  }
  /* Reduction axes to all-reduce. */
  sp_axis_ref *red = NULL;
  int nred = 0, cap = 0;
  for (int f = 0; f < t->nfactors; f++)
    if (t->rule->factors[f].kind == SP_FACTOR_REDUCTION) cap += common[f].n;
  if (cap && !(red = sp_arena_alloc(m->arena, (size_t)cap * sizeof *red)))
    return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int f = 0; f < t->nfactors; f++)
    if (t->rule->factors[f].kind == SP_FACTOR_REDUCTION)
      for (int k = 0; k < common[f].n; k++) red[nred++] = sp_ft_axis_ref(mesh, common[f].v[k]);
  /* Results. */
  for (int j = 0; j < op->nresults; j++) {
    int r = op->noperands + j;
    sp_value *res = &op->results[j];
    sp_sharding *orig = res->sharding;
    bool differs = !row_matches(t, r, common);
    sp_sharding *s = orig;
    if (differs && (rc = row_sharding(m, scratch, t, r, common, orig, mesh_ref, &s, err))) return rc;
    if (!orig && !differs) continue;
    res->sharding = s;
    sp_op *anchor = op;
    /* All-reduce the reduction axes the result does not keep unreduced. */
    int n = 0;
    sp_axis_ref *axes = nred ? sp_arena_alloc(m->arena, (size_t)nred * sizeof *axes) : NULL;
    for (int k = 0; k < nred; k++) {
      bool kept = false;
      for (int u = 0; s && u < s->nunreduced; u++)
        kept |= sp_axis_contains(&s->unreduced[u], &red[k], sp_mesh_axis_size(mesh, red[k].name));
      if (!kept) axes[n++] = red[k];
    }
    sp_value *last = res;
    sp_op *ar = NULL, *rs = NULL;
    if (n) {
      sp_sharding_sort_axes(axes, n, mesh);
      ar = sp_op_create(m->arena, "sdy.all_reduce", 1, NULL, 1, &res->type, 0);
      if (!ar) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
      ar->loc = op->loc;
      ar->results[0].sharding = s;
      sp_attr at = {.name = "reduction_axes", .kind = SP_ATTR_AXES};
      at.u.axes.n = n;
      at.u.axes.v = axes;
      if (sp_attrs_set(m->arena, &ar->attrs, &at))
        return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    }
    if (differs && orig) {
      rs = sp_op_create(m->arena, "sdy.reshard", 1, NULL, 1, &res->type, 0);
      if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
      rs->loc = op->loc;
      rs->results[0].sharding = orig;
    }
    sp_value *final = rs ? &rs->results[0] : ar ? &ar->results[0] : NULL;
    if (!final) continue;
    sp_value_replace_all_uses(res, final);
    if (ar) {
      sp_op_set_operand(ar, 0, last);
      sp_op_insert_after(anchor, ar);
      anchor = ar;
      last = &ar->results[0];
    }
    if (rs) {
      sp_op_set_operand(rs, 0, last);
      sp_op_insert_after(anchor, rs);
    }
  }
  return SP_OK;
}

static bool in_list(const sp_axis_ref *v, int n, const sp_axis_ref *r) {
  for (int i = 0; i < n; i++)
    if (sp_axis_ref_equal(&v[i], r)) return true;
  return false;
}

static sp_op *unreduced_op(sp_module *m, const char *name, sp_value *in, sp_sharding *out,
                           const sp_attr *axes, sp_op *before) {
  sp_op *op = sp_op_create(m->arena, name, 1, &in, 1, &in->type, 0);
  if (!op || sp_attrs_set(m->arena, &op->attrs, axes)) return NULL;
  op->loc = before->loc;
  op->results[0].sharding = out;
  sp_op_insert_before(before, op);
  return op;
}

/* A reshard that makes axes unreduced: those the operand does not shard by
 * sdy.replicated_to_unreduced, those it shards by sdy.sharded_to_unreduced (which unshards
 * them); the reshard stays only for what else differs. */
static int lower_to_unreduced(sp_module *m, sp_op *rs) {
  sp_value *in = rs->operands[0].value;
  sp_sharding *to = rs->results[0].sharding;
  const sp_sharding *from = in->sharding;
  if (!to || !to->nunreduced || (from && !same_mesh(m, from, to)) ||
      (from && from->unreduced_kind != to->unreduced_kind))
    return SP_OK;
  int rank = to->rank, nfrom = from ? from->nunreduced : 0;
  const sp_mesh *mesh = sp_sharding_mesh(m, to);
  if (!mesh || (from && from->rank != rank)) return SP_OK;
  sp_axis_ref *repl = sp_arena_alloc(m->arena, (size_t)to->nunreduced * sizeof *repl);
  sp_dim_sharding *sharded = sp_arena_calloc(m->arena, (size_t)rank + 1, sizeof *sharded);
  sp_sharding *cur = from ? sp_sharding_copy(m->arena, from) : sp_sharding_new(m->arena, to->mesh_name, rank, true);
  if (!repl || !sharded || !cur) return SP_ENOMEM;
  cur->inline_mesh = from ? from->inline_mesh : to->inline_mesh;
  int nrepl = 0, nsharded = 0;
  for (int d = 0; d < rank; d++) {
    sharded[d].closed = true;
    sharded[d].priority = SP_NO_PRIORITY;
    sharded[d].axes = sp_arena_alloc(m->arena, (size_t)(cur->dims[d].naxes + 1) * sizeof(sp_axis_ref));
    if (!sharded[d].axes) return SP_ENOMEM;
  }
  for (int k = 0; k < to->nunreduced; k++) {
    const sp_axis_ref *r = &to->unreduced[k];
    if (from && in_list(from->unreduced, nfrom, r)) continue;
    bool found = false;
    for (int d = 0; d < rank && !found; d++)
      for (int i = 0; i < cur->dims[d].naxes && !found; i++)
        if (sp_axis_ref_equal(&cur->dims[d].axes[i], r)) {
          sharded[d].axes[sharded[d].naxes++] = *r;
          nsharded++;
          found = true;
        }
    if (!found) repl[nrepl++] = *r;
  }
  if (!nrepl && !nsharded) return SP_OK;
  sp_value *v = in;
  if (nrepl) {
    sp_sharding *out = sp_sharding_copy(m->arena, cur);
    sp_axis_ref *u = out ? sp_arena_alloc(m->arena, (size_t)(nfrom + nrepl) * sizeof *u) : NULL;
    if (!u) return SP_ENOMEM;
    for (int i = 0; i < nfrom; i++) u[i] = from->unreduced[i];
    for (int i = 0; i < nrepl; i++) u[nfrom + i] = repl[i];
    sp_sharding_sort_axes(u, nfrom + nrepl, mesh);
    out->unreduced = u;
    out->nunreduced = nfrom + nrepl;
    out->unreduced_kind = to->unreduced_kind;
    sp_attr at = {.name = "axes", .kind = SP_ATTR_AXES};
    at.u.axes.n = nrepl;
    at.u.axes.v = repl;
    sp_op *op = unreduced_op(m, "sdy.replicated_to_unreduced", v, out, &at, rs);
    if (!op) return SP_ENOMEM;
    v = &op->results[0];
    cur = out;
  }
  if (nsharded) {
    sp_sharding *out = sp_sharding_copy(m->arena, cur);
    if (!out) return SP_ENOMEM;
    for (int d = 0; d < rank; d++) {
      int n = 0;
      for (int i = 0; i < out->dims[d].naxes; i++)
        if (!in_list(sharded[d].axes, sharded[d].naxes, &out->dims[d].axes[i])) out->dims[d].axes[n++] = out->dims[d].axes[i];
      out->dims[d].naxes = n;
    }
    out->unreduced = to->unreduced;
    out->nunreduced = to->nunreduced;
    out->unreduced_kind = to->unreduced_kind;
    sp_attr at = {.name = "axes", .kind = SP_ATTR_DIM_AXES};
    at.u.dim_axes.n = rank;
    at.u.dim_axes.v = sharded;
    sp_op *op = unreduced_op(m, "sdy.sharded_to_unreduced", v, out, &at, rs);
    if (!op) return SP_ENOMEM;
    v = &op->results[0];
    cur = out;
  }
  if (same_dims(cur, to) && cur->nunreduced == to->nunreduced) {
    sp_value_replace_all_uses(&rs->results[0], v);
    sp_op_erase(rs);
  } else {
    sp_op_set_operand(rs, 0, v);
  }
  return SP_OK;
}

static bool is_reshard(const sp_op *op) { return op->kind == SP_OP_SDY_RESHARD; }

int sp_export_insert_explicit_reshards_full(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  sp_arena *scratch = sp_arena_new(0);
  int rc = l.oom || !scratch ? sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards") : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = reconcile(m, scratch, l.v[i], err);
  sp_arena_free(scratch);
  sp_op_list_free(&l);
  if (rc) return rc;
  if ((rc = sp_export_insert_explicit_reshards_mode(m, false, err))) return rc;
  sp_op_list rl = {.keep = is_reshard};
  sp_op_walk(m->op, sp_op_list_collect, &rl);
  rc = rl.oom ? SP_ENOMEM : SP_OK;
  for (int i = 0; !rc && i < rl.n; i++) rc = lower_to_unreduced(m, rl.v[i]);
  sp_op_list_free(&rl);
  return rc ? sp_err_set(err, rc, "out of memory inserting explicit reshards") : SP_OK;
}
