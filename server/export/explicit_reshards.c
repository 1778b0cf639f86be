/*
 * explicit_reshards.c - the full version of explicit reshard insertion (see
 * explicit_reshards.h).
 */
#include "export/explicit_reshards.h"

#include <stdlib.h>
#include <string.h>

#include "export/data_flow_reshards.h"
#include "export/factor_dependencies.h"
#include "export/manual_reshards.h"
#include "export/reshard_op.h"
#include "export/single_device.h"
#include "export/unreduced_reshards.h"
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
  int64_t weight;   /* element count of the tensors whose sharding of the factor is exactly it */
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

static bool overlaps(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b) {
  if (a.axis != b.axis) return false;
  sp_ft_axis rest;
  return !sp_ft_axis_prefix_without_overlap(m, a, b, &rest) || !sp_ft_axis_equal(rest, a);
}

static bool overlaps_any(const sp_mesh *m, sp_ft_axis a, const sp_ft_axes *l) {
  for (int k = 0; k < l->n; k++)
    if (overlaps(m, a, l->v[k])) return true;
  return false;
}

/* Whether every tensor sharded along factor `f` by a non-empty prefix of `axes` reaches
 * `axes` by slicing its shard further, without moving data: none of `axes` is taken by its
 * other factors. */
static bool all_slice_to(const sp_factor_table *t, int f, const sp_ft_axes *axes) {
  for (int r = 0; r < sp_factor_table_nrows(t); r++) {
    const sp_ft_cell *cell = &t->rows[r].cells[f];
    if (!cell->present || !cell->axes.n || !sp_ft_axes_is_prefix(t->mesh, &cell->axes, axes)) continue;
    for (int g = 0; g < t->nfactors; g++) {
      const sp_ft_cell *o = &t->rows[r].cells[g];
      if (g == f || !o->present) continue;
      for (int k = 0; k < axes->n; k++)
        if (overlaps_any(t->mesh, axes->v[k], &o->axes) || overlaps_any(t->mesh, axes->v[k], &o->overflow))
          return false;
    }
  }
  return true;
}

/* The candidate the chosen `best` grows into: the longest live candidate of its factor that
 * `best` is a strict prefix of, that takes no axis already used, and that every tensor on
 * the way reaches by slicing (all_slice_to); `best` itself when there is none. */
static candidate *grown(const chooser *ch, candidate *best, const sp_ft_axes *used) {
  const sp_factor_table *t = ch->t;
  candidate *pick = best;
  for (int i = 0; i < ch->n; i++) {
    candidate *c = &ch->c[i];
    if (!c->alive || c->factor != best->factor || c->axes.n <= pick->axes.n ||
        !sp_ft_axes_is_strict_prefix(t->mesh, &best->axes, &c->axes))
      continue;
    bool free_axes = true;
    for (int k = 0; k < c->axes.n && free_axes; k++) free_axes = !overlaps_any(t->mesh, c->axes.v[k], used);
    if (free_axes && all_slice_to(t, best->factor, &c->axes)) pick = c;
  }
  return pick;
}

/* Recomputes weights: a tensor counts for a candidate when its cell holds exactly the
 * candidate's axes (a tensor sharded further along the factor would be resharded too). */
static void weigh(chooser *ch) {
  const sp_factor_table *t = ch->t;
  for (int i = 0; i < ch->n; i++) {
    candidate *c = &ch->c[i];
    c->weight = 0;
    c->devices = sp_ft_axes_product(t->mesh, &c->axes);
    for (int r = 0; r < sp_factor_table_nrows(t); r++) {
      const sp_ft_cell *cell = &t->rows[r].cells[c->factor];
      if (cell->present && sp_ft_axes_equal(&c->axes, &cell->axes))
        c->weight += ch->sizes[r];
    }
  }
}

/* The order of axes lists on a full tie: the longer list, then axis by axis the later mesh
 * axis, the later or larger part of it. */
static bool axes_after(const sp_ft_axes *x, const sp_ft_axes *y) {
  if (x->n != y->n) return x->n > y->n;
  for (int i = 0; i < x->n; i++) {
    sp_ft_axis a = x->v[i], b = y->v[i];
    if (a.axis != b.axis) return a.axis > b.axis;
    if (a.pre != b.pre) return a.pre > b.pre;
    if (a.size != b.size) return a.size > b.size;
  }
  return false;
}

/* Precedence of a factor's kind on a tie of weights: pass-through first, then
 * need-replication, reduction, permutation. */
static int kind_rank(sp_factor_kind k) {
  switch (k) {
    case SP_FACTOR_PASS_THROUGH: return 3;
    case SP_FACTOR_NEED_REPLICATION: return 2;
    case SP_FACTOR_REDUCTION: return 1;
    default: return 0;
  }
}

static bool better(const sp_factor_table *t, const candidate *x, const candidate *y) {
  if (x->weight != y->weight) return x->weight > y->weight;
  int kx = kind_rank(t->rule->factors[x->factor].kind), ky = kind_rank(t->rule->factors[y->factor].kind);
  if (kx != ky) return kx > ky;
  if (x->devices != y->devices) return x->devices > y->devices;
  if (x->factor != y->factor) return x->factor > y->factor;
  return axes_after(&x->axes, &y->axes);
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

/* Whether two factors' lists (one per factor of `t`) overlap in some axis. */
static bool factors_share_an_axis(const sp_factor_table *t, const sp_ft_axes *lists) {
  for (int f = 0; f < t->nfactors; f++)
    for (int g = f + 1; g < t->nfactors; g++)
      for (int k = 0; k < lists[f].n; k++)
        if (overlaps_any(t->mesh, lists[f].v[k], &lists[g])) return true;
  return false;
}

/* The rule's tensor of row `r` (operands, then results). */
static const sp_rule_tensor *rule_tensor(const sp_rule *rule, int r) {
  return r < rule->noperands ? &rule->operands[r] : &rule->results[r - rule->noperands];
}

/* Whether every non-scalar tensor of the op maps factor `f` (scalars map no factor). */
static bool in_every_tensor(const sp_factor_table *t, int f) {
  for (int r = 0; r < sp_factor_table_nrows(t); r++)
    if (!t->rows[r].cells[f].present && rule_tensor(t->rule, r)->rank) return false;
  return true;
}

/* The row whose axes on need-replication factor `f` the op keeps busy: the list the most
 * elements are sharded by exactly, then the one over more devices, then the first; -1 when no
 * row shards `f`. */
static int need_replication_source(const sp_factor_table *t, const int64_t *sizes, int f) {
  int best = -1;
  int64_t best_weight = 0, best_devices = 0;
  for (int r = 0; r < sp_factor_table_nrows(t); r++) {
    const sp_ft_cell *cell = &t->rows[r].cells[f];
    if (!cell->present || !cell->axes.n) continue;
    int64_t weight = 0, devices = sp_ft_axes_product(t->mesh, &cell->axes);
    for (int k = 0; k < sp_factor_table_nrows(t); k++)
      if (t->rows[k].cells[f].present && sp_ft_axes_equal(&t->rows[k].cells[f].axes, &cell->axes))
        weight += sizes[k];
    if (best < 0 || weight > best_weight || (weight == best_weight && devices > best_devices)) {
      best = r;
      best_weight = weight;
      best_devices = devices;
    }
  }
  return best;
}

/* The axes of one list per need-replication factor that every tensor has (see
 * need_replication_source), when no factor got them, are appended to the first pass-through
 * factor they still divide (factor order), merged with a sub-axis they continue, so that
 * devices are not left idle. */
static int distribute_unused(sp_arena *a, const sp_factor_table *t, const int64_t *sizes,
                             sp_ft_axes *common, sp_ft_axes *used) {
  for (int f = 0; f < t->nfactors; f++) {
    if (t->rule->factors[f].kind != SP_FACTOR_NEED_REPLICATION || !in_every_tensor(t, f)) continue;
    int r = need_replication_source(t, sizes, f);
    if (r < 0) continue;
    const sp_ft_cell *cell = &t->rows[r].cells[f];
    for (int k = 0; k < cell->axes.n; k++) {
      sp_ft_axis x = cell->axes.v[k];
      if (overlaps_any(t->mesh, x, used)) continue;
      int64_t xs = sp_ft_axis_size(t->mesh, x);
      for (int g = 0; g < t->nfactors; g++) {
        if (t->rule->factors[g].kind != SP_FACTOR_PASS_THROUGH) continue;
        int64_t have = sp_ft_axes_product(t->mesh, &common[g]);
        if (t->rule->factors[g].size % (have * xs) != 0) continue;
        int rc = sp_ft_axes_push_merging(a, t->mesh, &common[g], x);
        if (!rc) rc = sp_ft_axes_push(a, used, x);
        if (rc) return rc;
        break;
      }
    }
  }
  return SP_OK;
}

/* Greedy choice of one axes list per factor into `common` (nfactors lists): the heaviest
 * candidate whose factor does not wait on a factor before it in some dimension (see
 * factor_dependencies.h) wins; the others lose the axes it took. */
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
      if (ch.c[i].alive && ch.c[i].axes.n && !sp_export_factor_waits(t, common, ch.c[i].factor) &&
          (!best || better(t, &ch.c[i], best)))
        best = &ch.c[i];
    if (!best) break;
    best = grown(&ch, best, &used);
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
  if (!rc) rc = distribute_unused(a, t, sizes, common, &used);
  return rc;
}

/* Devices row `r` spreads over along its permutation factors (`perm`) or its other factors. */
static int64_t row_devices(const sp_factor_table *t, int r, bool perm) {
  int64_t p = 1;
  for (int f = 0; f < t->nfactors; f++)
    if (t->rows[r].cells[f].present && (t->rule->factors[f].kind == SP_FACTOR_PERMUTATION) == perm)
      p *= sp_ft_axes_product(t->mesh, &t->rows[r].cells[f].axes);
  return p;
}

/* Which of the two tensors of a unary op (rows `pair`) gives its factor shardings to both:
 * the one with more elements (the smaller one is the cheaper to reshard), then the one
 * sharded over more devices along factors that move no data, then the one with fewer devices
 * on permutation factors (they would have to move data), then the first. */
static int unary_pick(const sp_factor_table *t, const int64_t *sizes, const int pair[2]) {
  if (sizes[pair[0]] != sizes[pair[1]]) return sizes[pair[1]] > sizes[pair[0]] ? pair[1] : pair[0];
  int64_t d0 = row_devices(t, pair[0], false), d1 = row_devices(t, pair[1], false);
  if (d0 != d1) return d1 > d0 ? pair[1] : pair[0];
  return row_devices(t, pair[1], true) < row_devices(t, pair[0], true) ? pair[1] : pair[0];
}

/* The special case of exactly two non-scalar tensors (see the header): their rows go to
 * `pair`; false when the op is not such a case. */
static bool unary_case(const sp_factor_table *t, int pair[2]) {
  const sp_rule *rule = t->rule;
  int n = 0;
  for (int r = 0; r < sp_factor_table_nrows(t); r++) {
    const sp_rule_tensor *tensor = rule_tensor(rule, r);
    if (!tensor->rank) continue;
    if (n == 2) return false;
    pair[n++] = r;
    for (int d = 0; d < tensor->rank; d++)
      if (tensor->dims[d].nfactors != 1) return false;
  }
  if (n != 2) return false;
  for (int f = 0; f < t->nfactors; f++)
    if (rule->factors[f].kind == SP_FACTOR_NEED_REPLICATION) return false;
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

/* Whether the cells of row `r` rebuild the tensor's own sharding `s` (the regrouped
 * projection may have dealt its axes in another device order). */
static bool row_keeps_layout(sp_arena *scratch, const sp_factor_table *t, int r, const sp_sharding *s) {
  if (!s) return true;
  sp_sharding *back = NULL;
  sp_err e = {0};
  if (sp_factor_table_to_sharding(scratch, t, r, s, s, &back, &e) != SP_OK) return true;
  return sp_sharding_same_dim_axes(back, s);
}

/* The sharding of row `r` with `common` axes per factor. */
static int row_sharding(sp_arena *a, sp_arena *scratch, const sp_factor_table *t, int r,
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
  int rc = sp_factor_table_to_sharding(a, c, r, old, mesh_ref, out, err);
  if (rc) return rc;
  for (int d = 0; d < (*out)->rank; d++) (*out)->dims[d].closed = true;
  return SP_OK;
}

static bool has_axes(const sp_sharding *s) {
  return s && !sp_sharding_is_unsharded(s);
}

/* Whether `want` makes more axes unreduced than `have` has (a value without sharding is left
 * alone, as Shardy does). */
static bool adds_unreduced(const sp_module *m, const sp_sharding *have, const sp_sharding *want) {
  if (!want || !want->nunreduced || !have) return false;
  const sp_mesh *mesh = sp_sharding_mesh(m, want);
  return mesh && sp_sharding_axes_product(mesh, want->unreduced, want->nunreduced) >
                     sp_sharding_axes_product(mesh, have->unreduced, have->nunreduced);
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
    bool adds = adds_unreduced(m, have, want);
    if (!has_axes(want) && !has_axes(have) && !adds) continue;
    if (want && have && sp_sharding_same_mesh(m, want, have) && sp_sharding_same_dim_axes(want, have) && !adds) continue;
    if (!want) {
      want = sp_sharding_new(m->arena, have->mesh_name, have->rank, true);
      if (!want) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
      want->inline_mesh = have->inline_mesh;
    }
    sp_op *rs = sp_export_reshard_op(m, v, NULL, want, ret->loc);
    if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    sp_op_insert_before(ret, rs);
    sp_op_set_operand(ret, i, &rs->results[0]);
  }
  return SP_OK;
}

/* Same axis names and sizes, in order (device orders may differ). */
static bool same_axes_mesh(const sp_mesh *a, const sp_mesh *b) {
  if (!a || !b || a->naxes != b->naxes) return false;
  for (int i = 0; i < a->naxes; i++)
    if (a->axes[i].size != b->axes[i].size || strcmp(a->axes[i].name, b->axes[i].name) != 0) return false;
  return true;
}

/* The mesh the op runs on: the only one its tensors (`rows`, operands then results; NULL
 * entries have no sharding) use, or, when they use meshes with the same axes in other device
 * orders, the one most of them use (the first on a tie); NULL when the meshes differ in their
 * axes. `other[r]` marks the rows sharded on another mesh (replicated tensors place data alike
 * on any mesh). */
static const sp_sharding *op_mesh_ref(const sp_module *m, sp_sharding *const *rows, int nrows,
                                      bool *other) {
  int best = 0;
  const sp_sharding *ref = NULL;
  for (int r = 0; r < nrows; r++) {
    const sp_sharding *s = rows[r];
    if (!s) continue;
    if (ref && !same_axes_mesh(sp_sharding_mesh(m, s), sp_sharding_mesh(m, ref))) return NULL;
    int count = 0;
    for (int k = 0; k < nrows; k++) count += rows[k] && sp_sharding_same_mesh(m, rows[k], s);
    if (count > best) {
      best = count;
      ref = s;
    }
  }
  for (int r = 0; ref && r < nrows; r++)
    other[r] = rows[r] && !sp_sharding_is_unsharded(rows[r]) && !sp_sharding_same_mesh(m, rows[r], ref);
  return ref;
}

/* Operand i's sharding as the op's mesh is chosen from: `in[i]`, except for a manual
 * computation's block argument without a sharding of its own (what the body sees of its
 * in_sharding counts for the factors, not for the mesh). */
static sp_sharding *mesh_row(const sp_op *op, int i, sp_sharding *const *in) {
  const sp_value *v = op->operands[i].value;
  return !v->sharding && !v->def && v->block ? NULL : in[i];
}

/* `x` minus the part of it `u` covers: up to two pieces (the major part before `u`, the minor
 * part after it) into `out`; returns how many. */
static int axis_minus(const sp_mesh *mesh, sp_ft_axis x, sp_ft_axis u, sp_ft_axis out[2]) {
  if (x.axis != u.axis) {
    out[0] = x;
    return 1;
  }
  int64_t xlo = sp_ft_axis_pre(x), xhi = xlo * sp_ft_axis_size(mesh, x);
  int64_t ulo = sp_ft_axis_pre(u), uhi = ulo * sp_ft_axis_size(mesh, u);
  int64_t lo = xlo > ulo ? xlo : ulo, hi = xhi < uhi ? xhi : uhi;
  if (lo >= hi) {
    out[0] = x;
    return 1;
  }
  int n = 0;
  if (lo > xlo) out[n++] = sp_ft_axis_make(mesh, x.axis, xlo, lo / xlo);
  if (hi < xhi) out[n++] = sp_ft_axis_make(mesh, x.axis, hi, xhi / hi);
  return n;
}

/* The reduction axes `red` without the parts `s` keeps unreduced into `*out` (`*n` of them,
 * in `a`). */
static int reduction_axes_left(sp_arena *a, const sp_mesh *mesh, const sp_axis_ref *red, int nred,
                               const sp_sharding *s, sp_axis_ref **out, int *n) {
  int nu = s ? s->nunreduced : 0, cap = nred * (nu + 1) + 1;
  sp_ft_axis *cur = sp_arena_alloc(a, (size_t)cap * sizeof *cur);
  sp_ft_axis *next = sp_arena_alloc(a, (size_t)cap * sizeof *next);
  *out = sp_arena_alloc(a, (size_t)cap * sizeof **out);
  if (!cur || !next || !*out) return SP_ENOMEM;
  int nc = 0;
  for (int k = 0; k < nred; k++)
    if (sp_ft_axis_from_ref(mesh, &red[k], &cur[nc]) == SP_OK) nc++;
  for (int u = 0; u < nu; u++) {
    sp_ft_axis ua;
    if (sp_ft_axis_from_ref(mesh, &s->unreduced[u], &ua) != SP_OK) continue;
    int nn = 0;
    for (int k = 0; k < nc && nn + 2 <= cap; k++) nn += axis_minus(mesh, cur[k], ua, &next[nn]);
    sp_ft_axis *t = cur;
    cur = next;
    next = t;
    nc = nn;
  }
  for (int k = 0; k < nc; k++) (*out)[k] = sp_ft_axis_ref(mesh, cur[k]);
  *n = nc;
  return SP_OK;
}

static int plan_on(sp_arena *a, sp_arena *scratch, const sp_op *op, const sp_rule *rule,
                   const sp_mesh *mesh, const sp_sharding *mesh_ref, const bool *other,
                   sp_sharding *const *in, sp_sharding *const *outs, sp_export_op_plan *plan,
                   sp_err *err);

/* Steps 1-4 of the header for one op, as a plan (see sp_export_plan_op). */
int sp_export_plan_op(sp_module *m, sp_arena *a, sp_arena *scratch, const sp_op *op,
                      sp_sharding *const *in, sp_sharding *const *outs, sp_export_op_plan *plan,
                      sp_err *err) {
  memset(plan, 0, sizeof *plan);
  if (skipped_kind(op) || sp_export_is_data_flow_op(op) ||
      op->kind == SP_OP_SDY_MANUAL_COMPUTATION)
    return SP_OK;
  int nrows = op->noperands + op->nresults;
  bool *other = sp_arena_calloc(scratch, (size_t)nrows + 1, sizeof *other);
  sp_sharding **rows = sp_arena_calloc(scratch, (size_t)nrows + 1, sizeof *rows);
  if (!other || !rows) return sp_err_set(err, SP_ENOMEM, "out of memory planning explicit reshards");
  for (int i = 0; i < op->noperands; i++) rows[i] = mesh_row(op, i, in);
  for (int j = 0; j < op->nresults; j++) rows[op->noperands + j] = outs[j];
  const sp_sharding *mesh_ref = op_mesh_ref(m, rows, nrows, other);
  if (!mesh_ref) return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, mesh_ref);
  if (!mesh || sp_mesh_is_maximal(mesh)) return SP_OK;
  sp_rule *rule = NULL;
  int rc = sp_rules_for_op(scratch, op, NULL, &rule, NULL, err);
  if (rc || !rule) return rc;
  return plan_on(a, scratch, op, rule, mesh, mesh_ref, other, in, outs, plan, err);
}

int sp_export_plan_op_rule(sp_arena *a, sp_arena *scratch, const sp_op *op, const sp_rule *rule,
                           const sp_mesh *mesh, const sp_sharding *mesh_ref,
                           sp_sharding *const *in, sp_sharding *const *outs,
                           sp_export_op_plan *plan, sp_err *err) {
  memset(plan, 0, sizeof *plan);
  bool *other = sp_arena_calloc(scratch, (size_t)(op->noperands + op->nresults) + 1, sizeof *other);
  if (!other) return sp_err_set(err, SP_ENOMEM, "out of memory planning explicit reshards");
  return plan_on(a, scratch, op, rule, mesh, mesh_ref, other, in, outs, plan, err);
}

/* The plan of `op` under `rule` on `mesh` (rows on another mesh marked in `other`). */
static int plan_on(sp_arena *a, sp_arena *scratch, const sp_op *op, const sp_rule *rule,
                   const sp_mesh *mesh, const sp_sharding *mesh_ref, const bool *other,
                   sp_sharding *const *in, sp_sharding *const *outs, sp_export_op_plan *plan,
                   sp_err *err) {
  int rc = SP_OK, nrows = op->noperands + op->nresults;
  if (rule->noperands != op->noperands || rule->nresults != op->nresults) return SP_OK;
  /* A user's rule for a custom call says how shardings flow through it, not how to partition
   * it: such an op keeps the shardings it has. */
  if (rule->custom) return SP_OK;
  sp_factor_table *t = NULL;
  if (sp_factor_table_build_regrouped(scratch, rule, mesh, (sp_sharding **)in,
                                      (sp_sharding **)outs, &t, NULL) != SP_OK)
    return SP_OK;
  int64_t *sizes = sp_arena_calloc(scratch, (size_t)nrows + 1, sizeof *sizes);
  sp_ft_axes *common = sp_arena_calloc(scratch, (size_t)t->nfactors + 1, sizeof *common);
  plan->operands = sp_arena_calloc(a, (size_t)op->noperands + 1, sizeof *plan->operands);
  plan->results = sp_arena_calloc(a, (size_t)op->nresults + 1, sizeof *plan->results);
  plan->differs = sp_arena_calloc(a, (size_t)op->nresults + 1, sizeof *plan->differs);
  plan->nreduce = sp_arena_calloc(a, (size_t)op->nresults + 1, sizeof *plan->nreduce);
  plan->reduce = sp_arena_calloc(a, (size_t)op->nresults + 1, sizeof *plan->reduce);
  if (!sizes || !common || !plan->operands || !plan->results || !plan->differs ||
      !plan->nreduce || !plan->reduce)
    return sp_err_set(err, SP_ENOMEM, "out of memory planning explicit reshards");
  plan->applies = true;
  for (int r = 0; r < nrows; r++) {
    const sp_type *ty = r < op->noperands ? op->operands[r].value->type : op->results[r - op->noperands].type;
    int64_t n = sp_type_num_elements(ty);
    sizes[r] = n > 0 ? n : 1;
  }
  /* Already compatible? (Rows on another mesh never are.) */
  bool compatible = true;
  for (int r = 0; r < nrows; r++) compatible &= !other[r];
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
      return sp_err_set(err, rc, "out of memory planning explicit reshards");
  }
  /* ... and no axis serves two factors (one tensor's factor and another's alike). */
  if (compatible && factors_share_an_axis(t, common)) compatible = false;
  if (!compatible) {
    for (int f = 0; f < t->nfactors; f++) common[f].n = 0;
    int pair[2];
    if (unary_case(t, pair)) {
      int pick = unary_pick(t, sizes, pair);
      for (int f = 0; f < t->nfactors; f++)
        if (t->rows[pick].cells[f].present &&
            (rc = sp_ft_axes_assign(scratch, &common[f], &t->rows[pick].cells[f].axes)))
          return sp_err_set(err, rc, "out of memory planning explicit reshards");
    } else if ((rc = choose_greedy(scratch, t, sizes, common))) {
      return sp_err_set(err, rc, "out of memory planning explicit reshards");
    }
    sp_export_drop_dependent_factor_axes(t, common);
  }
  /* Operands. */
  for (int i = 0; i < op->noperands; i++) {
    if (row_matches(t, i, common) && !other[i] && row_keeps_layout(scratch, t, i, in[i])) continue;
    if ((rc = row_sharding(a, scratch, t, i, common, in[i], mesh_ref, &plan->operands[i], err)))
      return rc;
  }
  /* Reduction axes to all-reduce. */
  sp_axis_ref *red = NULL;
  int nred = 0, cap = 0;
  for (int f = 0; f < t->nfactors; f++)
    if (t->rule->factors[f].kind == SP_FACTOR_REDUCTION) cap += common[f].n;
  if (cap && !(red = sp_arena_alloc(scratch, (size_t)cap * sizeof *red)))
    return sp_err_set(err, SP_ENOMEM, "out of memory planning explicit reshards");
  for (int f = 0; f < t->nfactors; f++)
    if (t->rule->factors[f].kind == SP_FACTOR_REDUCTION)
      for (int k = 0; k < common[f].n; k++) red[nred++] = sp_ft_axis_ref(mesh, common[f].v[k]);
  /* Results: the sharding each is computed in, and what is all-reduced after it. */
  for (int j = 0; j < op->nresults; j++) {
    int r = op->noperands + j;
    sp_sharding *orig = outs[j];
    bool differs = !row_matches(t, r, common) || other[r] || !row_keeps_layout(scratch, t, r, orig);
    sp_sharding *s = orig;
    /* A result without a sharding still gets the all-reduce of sharded reduction axes. */
    bool rebuilt = differs || (!orig && nred);
    if (rebuilt && (rc = row_sharding(a, scratch, t, r, common, orig, mesh_ref, &s, err))) return rc;
    if (!orig && !rebuilt) continue;
    plan->results[j] = s;
    plan->differs[j] = differs;
    /* The reduction axes (or the parts of them) the result does not keep unreduced. */
    if (nred && (rc = reduction_axes_left(a, mesh, red, nred, s, &plan->reduce[j], &plan->nreduce[j])))
      return sp_err_set(err, rc, "out of memory planning explicit reshards");
    if (plan->nreduce[j]) sp_sharding_sort_axes(plan->reduce[j], plan->nreduce[j], mesh);
  }
  return SP_OK;
}

static int reconcile(sp_module *m, sp_arena *scratch, sp_op *op, sp_err *err) {
  if (op->kind == SP_OP_FUNC_RETURN) return reshard_returns(m, op, err);
  if (sp_export_is_data_flow_op(op)) return sp_export_data_flow_reshards(m, op, err);
  if (op->kind == SP_OP_SDY_MANUAL_COMPUTATION) return sp_export_manual_computation_reshards(m, op, err);
  if (skipped_kind(op)) return SP_OK;
  /* Unreduced axes of an operand that the op does not keep are all-reduced first (operand by
   * operand), so that the operands' reshards below start from reduced values. */
  for (int i = 0; i < op->noperands; i++) {
    int rc = sp_export_all_reduce_operand(m, op, i, sp_export_local_sharding(m, op->operands[i].value));
    if (rc) return sp_err_set(err, rc, "out of memory inserting explicit reshards");
  }
  sp_sharding **in = sp_arena_calloc(scratch, (size_t)op->noperands + 1, sizeof *in);
  sp_sharding **outs = sp_arena_calloc(scratch, (size_t)op->nresults + 1, sizeof *outs);
  if (!in || !outs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int i = 0; i < op->noperands; i++) in[i] = sp_export_local_sharding(m, op->operands[i].value);
  for (int i = 0; i < op->nresults; i++) outs[i] = op->results[i].sharding;
  sp_export_op_plan plan;
  int rc = sp_export_plan_op(m, m->arena, scratch, op, in, outs, &plan, err);
  if (rc || !plan.applies) return rc;
  /* Operands. */
  for (int i = 0; i < op->noperands; i++) {
    if (!plan.operands[i]) continue;
    sp_op *rs = sp_export_reshard_op(m, op->operands[i].value, NULL, plan.operands[i], op->loc);
    if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    sp_op_insert_before(op, rs);
    sp_op_set_operand(op, i, &rs->results[0]);
  }
  /* Results, their all-reduces and reshards in result order. */
  sp_op *anchor = op;
  for (int j = 0; j < op->nresults; j++) {
    sp_value *res = &op->results[j];
    sp_sharding *orig = res->sharding, *s = plan.results[j];
    if (!s) continue;
    if (orig || plan.differs[j]) res->sharding = s;
    int n = plan.nreduce[j];
    sp_value *last = res;
    sp_op *ar = NULL, *rs = NULL;
    if (n) {
      ar = sp_op_create(m->arena, "sdy.all_reduce", 1, NULL, 1, &res->type, 0);
      if (!ar) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
      ar->loc = op->loc;
      ar->results[0].sharding = s;
      sp_attr at = {.name = "reduction_axes", .kind = SP_ATTR_AXES};
      at.u.axes.n = n;
      at.u.axes.v = plan.reduce[j];
      if (sp_attrs_set(m->arena, &ar->attrs, &at))
        return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    }
    if (plan.differs[j] && orig) {
      rs = sp_export_reshard_op(m, NULL, res->type, orig, op->loc);
      if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
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
      anchor = rs;
    }
  }
  return SP_OK;
}

int sp_export_insert_explicit_reshards_full(sp_module *m, sp_err *err) {
  int rc0 = sp_export_single_device_reshards(m, err);
  if (rc0) return rc0;
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  sp_arena *scratch = sp_arena_new(0);
  int rc = l.oom || !scratch ? sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards") : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = reconcile(m, scratch, l.v[i], err);
  sp_arena_free(scratch);
  sp_op_list_free(&l);
  if (rc) return rc;
  if ((rc = sp_export_insert_explicit_reshards_mode(m, false, err))) return rc;
  return sp_export_lower_unreduced_reshards(m, err);
}

/* ------------------------------------------------------------------ default version */

/* The sharding a dot operand has: its own, or through a propagation barrier its input's. */
static sp_sharding *operand_sharding(sp_value *v) {
  while (!v->sharding && v->def && v->def->kind == SP_OP_SDY_PROPAGATION_BARRIER &&
         v->def->noperands == 1)
    v = v->def->operands[0].value;
  return v->sharding;
}

/* The operands agree: a factor both have gets the same axes, and no axis serves two factors. */
static bool operands_agree(const sp_factor_table *t, sp_ft_axes *implied) {
  for (int f = 0; f < t->nfactors; f++) {
    const sp_ft_cell *l = &t->rows[0].cells[f], *r = &t->rows[1].cells[f];
    if ((l->present && l->overflow.n) || (r->present && r->overflow.n)) return false;
    if (l->present && r->present && !sp_ft_axes_equal(&l->axes, &r->axes)) return false;
    implied[f] = l->present ? l->axes : r->present ? r->axes : (sp_ft_axes){0};
  }
  return !factors_share_an_axis(t, implied);
}

/* Shardy's default mode reshards a dot's result to what its operands imply when: the operands
 * agree, the result differs from them on exactly one factor, the operands shard that factor,
 * the result puts there exactly the axes of the reduction factors (in factor order), and the
 * result is smaller than an operand that has the factor. The result dims keep their open or
 * closed state; a reshard back to the old sharding follows the op. */
static int reshard_dot_result(sp_module *m, sp_arena *scratch, sp_op *op, sp_err *err) {
  if ((op->kind != SP_OP_DOT && op->kind != SP_OP_DOT_GENERAL) || op->noperands != 2 ||
      op->nresults != 1 || !op->results[0].sharding)
    return SP_OK;
  sp_sharding *out = op->results[0].sharding;
  sp_sharding *in[3] = {operand_sharding(op->operands[0].value),
                        operand_sharding(op->operands[1].value), NULL};
  for (int i = 0; i < 2; i++)
    if (in[i] && !sp_sharding_same_mesh(m, in[i], out)) return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, out);
  if (!mesh || sp_mesh_is_maximal(mesh)) return SP_OK;
  sp_rule *rule = NULL;
  int rc = sp_rules_for_op(scratch, op, NULL, &rule, NULL, err);
  if (rc || !rule || rule->noperands != 2 || rule->nresults != 1) return rc;
  sp_sharding *outs[2] = {out, NULL};
  sp_factor_table *t = NULL;
  if (sp_factor_table_build(scratch, rule, mesh, in, outs, &t, NULL) != SP_OK) return SP_OK;
  sp_ft_axes *implied = sp_arena_calloc(scratch, (size_t)t->nfactors + 1, sizeof *implied);
  if (!implied) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  if (!operands_agree(t, implied)) return SP_OK;
  int conflict = -1;
  for (int f = 0; f < t->nfactors; f++) {
    const sp_ft_cell *c = &t->rows[2].cells[f];
    if (!c->present) continue;
    if (c->overflow.n) return SP_OK;
    if (sp_ft_axes_equal(&c->axes, &implied[f])) continue;
    if (conflict >= 0) return SP_OK;
    conflict = f;
  }
  if (conflict < 0 || !implied[conflict].n) return SP_OK;
  sp_ft_axes reduction = {0};
  for (int f = 0; f < t->nfactors; f++)
    if (rule->factors[f].kind == SP_FACTOR_REDUCTION)
      for (int k = 0; k < implied[f].n; k++)
        if ((rc = sp_ft_axes_push_merging(scratch, mesh, &reduction, implied[f].v[k])))
          return sp_err_set(err, rc, "out of memory inserting explicit reshards");
  if (!reduction.n || !sp_ft_axes_equal(&reduction, &t->rows[2].cells[conflict].axes)) return SP_OK;
  int64_t result_size = sp_type_num_elements(op->results[0].type);
  bool smaller = false;
  for (int i = 0; i < 2; i++)
    smaller |= t->rows[i].cells[conflict].present &&
               result_size < sp_type_num_elements(op->operands[i].value->type);
  if (!smaller) return SP_OK;
  sp_sharding *s = sp_sharding_copy(m->arena, out);
  if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  for (int d = 0; d < s->rank && d < rule->results[0].rank; d++) {
    const sp_rule_dim *rd = &rule->results[0].dims[d];
    if (rd->nfactors != 1 || rd->factors[0] != conflict) continue;
    const sp_ft_axes *ax = &implied[conflict];
    s->dims[d].axes = sp_arena_alloc(m->arena, (size_t)(ax->n + 1) * sizeof(sp_axis_ref));
    if (!s->dims[d].axes) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    for (int k = 0; k < ax->n; k++) s->dims[d].axes[k] = sp_ft_axis_ref(mesh, ax->v[k]);
    s->dims[d].naxes = ax->n;
  }
  sp_value *res = &op->results[0];
  res->sharding = s;
  sp_op *rs = sp_export_reshard_op(m, res, NULL, out, op->loc);
  if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  sp_value_replace_all_uses(res, &rs->results[0]);
  sp_op_set_operand(rs, 0, res);
  sp_op_insert_after(op, rs);
  return SP_OK;
}

/* Shardy's default mode reconciles a concatenate as the full version does when an operand is
 * placed unlike the result. */
static bool concat_differs(const sp_op *op) {
  if (op->kind != SP_OP_CONCATENATE || op->nresults != 1) return false;
  for (int i = 0; i < op->noperands; i++)
    if (!sp_sharding_same_axes(op->operands[i].value->sharding, op->results[0].sharding)) return true;
  return false;
}

/* A returned value that the function result makes unreduced is resharded to it (the
 * unreduced lowering then turns that reshard into its collectives). */
static int reshard_unreduced_returns(sp_module *m, sp_op *ret, sp_err *err) {
  sp_op *fn = sp_op_parent(ret);
  if (!fn || fn->kind != SP_OP_FUNC || !fn->func || !fn->func->result_shardings) return SP_OK;
  for (int i = 0; i < ret->noperands && i < fn->func->nresults; i++) {
    sp_value *v = ret->operands[i].value;
    sp_sharding *want = fn->func->result_shardings[i];
    const sp_sharding *have = v->sharding;
    if (!adds_unreduced(m, have, want)) continue;
    sp_op *rs = sp_export_reshard_op(m, v, NULL, want, ret->loc);
    if (!rs) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    sp_op_insert_before(ret, rs);
    sp_op_set_operand(ret, i, &rs->results[0]);
  }
  return SP_OK;
}

int sp_export_insert_explicit_reshards_default(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  sp_arena *scratch = sp_arena_new(0);
  int rc = l.oom || !scratch ? sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards") : SP_OK;
  for (int i = 0; !rc && i < l.n; i++)
    rc = l.v[i]->kind == SP_OP_FUNC_RETURN ? reshard_unreduced_returns(m, l.v[i], err)
         : concat_differs(l.v[i])            ? reconcile(m, scratch, l.v[i], err)
                                             : reshard_dot_result(m, scratch, l.v[i], err);
  sp_arena_free(scratch);
  sp_op_list_free(&l);
  if (rc) return rc;
  if ((rc = sp_export_insert_explicit_reshards(m, err))) return rc;
  return sp_export_lower_unreduced_reshards(m, err);
}
