/*
 * unreduced_reshards.c - reshards to unreduced axes lowered to reshard, replicated_to_unreduced
 * and sharded_to_unreduced (see unreduced_reshards.h).
 *
 * Axes are handled as pieces: a piece is the multiplicative range [lo, hi) of one mesh axis
 * (the whole axis of size n is [1, n); "x":(p)s is [p, p*s)), so that sub-axes of one axis can
 * be cut and subtracted. Invariant: a piece list built here never holds overlapping pieces.
 */
#include "export/unreduced_reshards.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "ir/op_list.h"
#include "ir/sharding.h"
#include "propagation/sharding_walk.h"

typedef struct piece {
  const char *name;
  int64_t lo, hi;
} piece;

typedef struct pieces {
  piece *v;
  int n, cap;
} pieces;

static int push(pieces *l, piece p) {
  if (sp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v)) return SP_ENOMEM;
  l->v[l->n++] = p;
  return SP_OK;
}

static piece to_piece(const sp_mesh *mesh, const sp_axis_ref *r) {
  int64_t n = sp_mesh_axis_size(mesh, r->name);
  piece p = {r->name, 1, n};
  if (r->size) {
    p.lo = r->pre;
    p.hi = r->pre * r->size;
  }
  return p;
}

static sp_axis_ref to_ref(const sp_mesh *mesh, piece p) {
  int64_t n = sp_mesh_axis_size(mesh, p.name);
  sp_axis_ref r = {p.name, 0, 0};
  if (p.lo != 1 || p.hi != n) {
    r.pre = p.lo;
    r.size = p.hi / p.lo;
  }
  return r;
}

static bool same_name(const char *a, const char *b) { return a == b || strcmp(a, b) == 0; }

static bool covered(const pieces *l, piece p) {
  for (int i = 0; i < l->n; i++)
    if (same_name(l->v[i].name, p.name) && l->v[i].lo <= p.lo && p.hi <= l->v[i].hi) return true;
  return false;
}

/* Appends the pieces of `refs` to `out`. */
static int add_refs(pieces *out, const sp_mesh *mesh, const sp_axis_ref *refs, int n) {
  for (int i = 0; i < n; i++)
    if (push(out, to_piece(mesh, &refs[i]))) return SP_ENOMEM;
  return SP_OK;
}

/* out = a minus every piece of b. */
static int minus(pieces *out, const pieces *a, const pieces *b) {
  pieces work = {0};
  int rc = SP_OK;
  for (int i = 0; !rc && i < a->n; i++) rc = push(&work, a->v[i]);
  for (int k = 0; !rc && k < b->n; k++) {
    pieces next = {0};
    for (int i = 0; !rc && i < work.n; i++) {
      piece p = work.v[i], q = b->v[k];
      if (!same_name(p.name, q.name) || q.hi <= p.lo || q.lo >= p.hi) {
        rc = push(&next, p);
        continue;
      }
      if (q.lo > p.lo) rc = push(&next, (piece){p.name, p.lo, q.lo});
      if (!rc && q.hi < p.hi) rc = push(&next, (piece){p.name, q.hi, p.hi});
    }
    free(work.v);
    work = next;
  }
  for (int i = 0; !rc && i < work.n; i++) rc = push(out, work.v[i]);
  free(work.v);
  return rc;
}

/* The refs of `l` in mesh order, adjacent pieces of one axis merged (arena memory). */
static sp_axis_ref *sorted_refs(sp_arena *a, const sp_mesh *mesh, const pieces *l, bool merge,
                                int *n) {
  sp_axis_ref *v = sp_arena_alloc(a, (size_t)(l->n + 1) * sizeof *v);
  if (!v) return NULL;
  for (int i = 0; i < l->n; i++) v[i] = to_ref(mesh, l->v[i]);
  sp_sharding_sort_axes(v, l->n, mesh);
  int k = 0;
  for (int i = 0; i < l->n; i++) {
    if (merge && k && sp_axis_can_merge(&v[k - 1], &v[i]))
      v[k - 1] = sp_axis_merge(&v[k - 1], &v[i], sp_mesh_axis_size(mesh, v[i].name));
    else
      v[k++] = v[i];
  }
  *n = k;
  return v;
}

/* The pieces of `from` after `prefix` when `prefix` starts it (a last piece may be split);
 * false otherwise. */
static int rest_after_prefix(const sp_mesh *mesh, const sp_dim_sharding *from,
                             const sp_dim_sharding *prefix, pieces *rest, bool *ok) {
  *ok = false;
  pieces f = {0};
  if (add_refs(&f, mesh, from->axes, from->naxes)) return SP_ENOMEM;
  int j = 0;
  for (int i = 0; i < prefix->naxes; i++) {
    piece t = to_piece(mesh, &prefix->axes[i]);
    if (j >= f.n || !same_name(f.v[j].name, t.name) || f.v[j].lo != t.lo || t.hi > f.v[j].hi) {
      free(f.v);
      return SP_OK;
    }
    if (t.hi == f.v[j].hi) j++;
    else f.v[j].lo = t.hi;
  }
  int rc = SP_OK;
  for (; !rc && j < f.n; j++) rc = push(rest, f.v[j]);
  free(f.v);
  *ok = !rc;
  return rc;
}

static bool kinds_match(const sp_sharding *from, const sp_sharding *to) {
  if (!from || !from->nunreduced) return true;
  const char *a = from->unreduced_kind, *b = to->unreduced_kind;
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}


static sp_op *new_op(sp_module *m, const char *name, sp_value *in, sp_sharding *out,
                     const sp_attr *attr, sp_op *before) {
  sp_op *op = sp_op_create(m->arena, name, 1, &in, 1, &in->type, 0);
  if (!op || (attr && sp_attrs_set(m->arena, &op->attrs, attr))) return NULL;
  op->loc = before->loc;
  op->results[0].sharding = out;
  sp_op_insert_before(before, op);
  return op;
}

typedef struct plan {
  pieces *s2u;      /* [rank] pieces going from sharded to unreduced, operand order */
  pieces all_s2u;   /* all of them */
  pieces r2u;       /* replicated to unreduced */
} plan;

static void plan_free(plan *p, int rank) {
  for (int d = 0; p->s2u && d < rank; d++) free(p->s2u[d].v);
  free(p->s2u);
  free(p->all_s2u.v);
  free(p->r2u.v);
}

/* Fills `p`; *applies false when the reshard is not a reshard to unreduced axes. */
static int make_plan(const sp_mesh *mesh, const sp_sharding *from, const sp_sharding *to,
                     plan *p, bool *applies) {
  *applies = false;
  int rank = to->rank;
  pieces want = {0}, have = {0}, gone = {0};
  int rc = add_refs(&want, mesh, to->unreduced, to->nunreduced);
  if (!rc && from) rc = add_refs(&have, mesh, from->unreduced, from->nunreduced);
  for (int i = 0; !rc && i < have.n; i++)
    if (!covered(&want, have.v[i])) goto done; /* some unreduced axis would be reduced */
  if (!rc && !(p->s2u = calloc((size_t)rank + 1, sizeof *p->s2u))) rc = SP_ENOMEM;
  for (int d = 0; !rc && from && d < rank; d++) {
    pieces rest = {0};
    bool ok;
    rc = rest_after_prefix(mesh, &from->dims[d], &to->dims[d], &rest, &ok);
    for (int i = 0; !rc && ok && i < rest.n; i++)
      if (covered(&want, rest.v[i]) && !(rc = push(&p->s2u[d], rest.v[i])))
        rc = push(&p->all_s2u, rest.v[i]);
    free(rest.v);
  }
  if (!rc) rc = minus(&gone, &want, &have);
  if (!rc) rc = minus(&p->r2u, &gone, &p->all_s2u);
  if (!rc) *applies = p->r2u.n || p->all_s2u.n;
done:
  free(want.v);
  free(have.v);
  free(gone.v);
  return rc;
}

/* The sharding after the reshard step: the target's dims plus the sharded-to-unreduced axes,
 * the operand's unreduced axes. */
static sp_sharding *intermediate(sp_arena *a, const sp_mesh *mesh, const sp_sharding *from,
                                 const sp_sharding *to, const plan *p) {
  sp_sharding *s = sp_sharding_copy(a, to);
  if (!s) return NULL;
  s->nreplicated = 0;
  s->replicated = NULL;
  s->unreduced = from ? from->unreduced : NULL;
  s->nunreduced = from ? from->nunreduced : 0;
  s->unreduced_kind = from && from->nunreduced ? from->unreduced_kind : NULL;
  for (int d = 0; d < s->rank; d++) {
    pieces l = {0};
    if (add_refs(&l, mesh, to->dims[d].axes, to->dims[d].naxes)) return NULL;
    for (int i = 0; i < p->s2u[d].n; i++)
      if (push(&l, p->s2u[d].v[i])) {
        free(l.v);
        return NULL;
      }
    sp_axis_ref *v = sp_arena_alloc(a, (size_t)(l.n + 1) * sizeof *v);
    int k = 0;
    for (int i = 0; v && i < l.n; i++) {
      sp_axis_ref r = to_ref(mesh, l.v[i]);
      if (k && sp_axis_can_merge(&v[k - 1], &r))
        v[k - 1] = sp_axis_merge(&v[k - 1], &r, sp_mesh_axis_size(mesh, r.name));
      else
        v[k++] = r;
    }
    free(l.v);
    if (!v) return NULL;
    s->dims[d].axes = v;
    s->dims[d].naxes = k;
    s->dims[d].closed = true;
  }
  return s;
}

static int lower_one(sp_module *m, sp_op *rs) {
  sp_value *in = rs->operands[0].value;
  sp_sharding *to = rs->results[0].sharding;
  const sp_sharding *from = in->sharding;
  if (!to || !to->nunreduced || !kinds_match(from, to)) return SP_OK;
  if (from && (from->rank != to->rank || !sp_sharding_same_mesh(m, from, to))) return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, to);
  if (!mesh) return SP_OK;
  plan p = {0};
  bool applies;
  int rc = make_plan(mesh, from, to, &p, &applies);
  if (rc || !applies) goto done;
  rc = SP_ENOMEM;
  sp_sharding *mid = intermediate(m->arena, mesh, from, to, &p);
  if (!mid) goto done;
  sp_value *v = in;
  if (!from || !sp_sharding_same_dim_axes(from, mid)) {
    sp_op *r = new_op(m, "sdy.reshard", v, mid, NULL, rs);
    if (!r) goto done;
    v = &r->results[0];
  }
  sp_sharding *cur = mid;
  if (p.r2u.n) {
    sp_attr at = {.name = "axes", .kind = SP_ATTR_AXES};
    at.u.axes.v = sorted_refs(m->arena, mesh, &p.r2u, false, &at.u.axes.n);
    pieces all = {0};
    if (!at.u.axes.v || add_refs(&all, mesh, cur->unreduced, cur->nunreduced) ||
        add_refs(&all, mesh, at.u.axes.v, at.u.axes.n)) {
      free(all.v);
      goto done;
    }
    sp_sharding *out = sp_sharding_copy(m->arena, cur);
    if (out) out->unreduced = sorted_refs(m->arena, mesh, &all, true, &out->nunreduced);
    free(all.v);
    if (!out || !out->unreduced) goto done;
    out->unreduced_kind = to->unreduced_kind;
    sp_op *op = new_op(m, "sdy.replicated_to_unreduced", v, out, &at, rs);
    if (!op) goto done;
    v = &op->results[0];
    cur = out;
  }
  if (p.all_s2u.n) {
    sp_dim_sharding *dims = sp_arena_calloc(m->arena, (size_t)to->rank + 1, sizeof *dims);
    if (!dims) goto done;
    for (int d = 0; d < to->rank; d++) {
      dims[d].closed = true;
      dims[d].priority = SP_NO_PRIORITY;
      dims[d].axes = sp_arena_alloc(m->arena, (size_t)(p.s2u[d].n + 1) * sizeof(sp_axis_ref));
      if (!dims[d].axes) goto done;
      for (int i = 0; i < p.s2u[d].n; i++) dims[d].axes[dims[d].naxes++] = to_ref(mesh, p.s2u[d].v[i]);
    }
    sp_attr at = {.name = "axes", .kind = SP_ATTR_DIM_AXES};
    at.u.dim_axes.n = to->rank;
    at.u.dim_axes.v = dims;
    sp_sharding *out = sp_sharding_copy(m->arena, to);
    if (!out) goto done;
    out->nreplicated = 0;
    out->replicated = NULL;
    sp_op *op = new_op(m, "sdy.sharded_to_unreduced", v, out, &at, rs);
    if (!op) goto done;
    v = &op->results[0];
  }
  sp_value_replace_all_uses(&rs->results[0], v);
  sp_op_erase(rs);
  rc = SP_OK;
done:
  plan_free(&p, to->rank);
  return rc;
}

static bool is_reshard(const sp_op *op) { return op->kind == SP_OP_SDY_RESHARD; }

int sp_export_lower_unreduced_reshards(sp_module *m, sp_err *err) {
  sp_op_list l = {.keep = is_reshard};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = lower_one(m, l.v[i]);
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory lowering reshards to unreduced axes") : SP_OK;
}
