/*
 * factor_projection.c - the factor table: projection of shardings onto a rule's factors and
 * back, copying, comparison and printing (see factor_projection.h).
 *
 * Sizes are int64. Axis parts come from shardings whose sub-axes were checked with
 * sp_axis_is_valid, so every part's size divides its mesh axis and the gcd walks below always
 * terminate: each step either splits the current axis into a strictly smaller remainder or
 * moves on to the next axis.
 */
#include "propagation/factor_projection.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/int_math.h"
#include "ir/sp_limits.h"

/* ------------------------------------------------------------------ axes */

static int64_t axis_n(const sp_mesh *m, sp_ft_axis a) { return m->axes[a.axis].size; }

sp_axis_ref sp_ft_axis_ref(const sp_mesh *m, sp_ft_axis a) {
  sp_axis_ref r = {m->axes[a.axis].name, a.pre, a.size};
  return r;
}

static sp_ft_axis from_ref(int axis, sp_axis_ref r) {
  sp_ft_axis a = {axis, r.pre, r.size};
  return a;
}

sp_ft_axis sp_ft_axis_make(const sp_mesh *m, int axis, int64_t pre, int64_t size) {
  assert(axis >= 0 && axis < m->naxes);
  return from_ref(axis, sp_axis_make(m->axes[axis].name, pre, size, m->axes[axis].size));
}

int sp_ft_axis_from_ref(const sp_mesh *m, const sp_axis_ref *r, sp_ft_axis *out) {
  /* Names are usually interned by the reader: try pointers before comparing strings. */
  int i = -1;
  for (int k = 0; k < m->naxes && i < 0; k++)
    if (m->axes[k].name == r->name) i = k;
  if (i < 0) i = sp_mesh_axis_index(m, r->name);
  if (i < 0) return SP_ENOTFOUND;
  int64_t n = m->axes[i].size;
  if (n < 1 || !sp_axis_is_valid(r, n)) return SP_EINVAL;
  *out = sp_ft_axis_make(m, i, sp_axis_pre(r), sp_axis_size(r, n));
  return SP_OK;
}

int64_t sp_ft_axis_size(const sp_mesh *m, sp_ft_axis a) { return a.size ? a.size : axis_n(m, a); }
int64_t sp_ft_axis_pre(sp_ft_axis a) { return a.size ? a.pre : 1; }
bool sp_ft_axis_is_sub(sp_ft_axis a) { return a.size != 0; }

bool sp_ft_axis_equal(sp_ft_axis a, sp_ft_axis b) {
  return a.axis == b.axis && a.pre == b.pre && a.size == b.size;
}

bool sp_ft_axis_contains(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b) {
  if (a.axis != b.axis) return false;
  sp_axis_ref ra = sp_ft_axis_ref(m, a), rb = sp_ft_axis_ref(m, b);
  return sp_axis_contains(&ra, &rb, axis_n(m, a));
}

bool sp_ft_axis_is_prefix_of(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b) {
  if (a.axis != b.axis) return false;
  sp_axis_ref ra = sp_ft_axis_ref(m, a), rb = sp_ft_axis_ref(m, b);
  return sp_axis_is_prefix_of(&ra, &rb, axis_n(m, a));
}

bool sp_ft_axis_prefix_without_overlap(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b,
                                       sp_ft_axis *out) {
  if (a.axis != b.axis) { /* different axes never overlap */
    *out = a;
    return true;
  }
  sp_axis_ref ra = sp_ft_axis_ref(m, a), rb = sp_ft_axis_ref(m, b), r;
  if (!sp_axis_prefix_without_overlap(&ra, &rb, axis_n(m, a), &r)) return false;
  *out = from_ref(a.axis, r);
  return true;
}

void sp_ft_axis_print(sp_strbuf *sb, const sp_mesh *m, sp_ft_axis a, bool quoted) {
  const char *q = quoted ? "\"" : "";
  sp_strbuf_printf(sb, "%s%s%s", q, m->axes[a.axis].name, q);
  if (a.size) sp_strbuf_printf(sb, ":(%lld)%lld", (long long)a.pre, (long long)a.size);
}

/* ------------------------------------------------------------------ axis lists */

/* Room for `need` axes (most lists hold a few: 4 first). */
static int axes_reserve(sp_arena *a, sp_ft_axes *l, int need) {
  return need ? sp_arena_grow_from(a, (void **)&l->v, &l->cap, need - 1, sizeof *l->v, 4) : SP_OK;
}

int sp_ft_axes_push(sp_arena *a, sp_ft_axes *l, sp_ft_axis x) {
  if (axes_reserve(a, l, l->n + 1)) return SP_ENOMEM;
  l->v[l->n++] = x;
  return SP_OK;
}

int sp_ft_axes_push_merging(sp_arena *a, const sp_mesh *m, sp_ft_axes *l, sp_ft_axis x) {
  if (l->n) {
    sp_ft_axis *last = &l->v[l->n - 1];
    sp_axis_ref rl = sp_ft_axis_ref(m, *last), rx = sp_ft_axis_ref(m, x);
    if (last->axis == x.axis && sp_axis_can_merge(&rl, &rx)) {
      *last = from_ref(x.axis, sp_axis_merge(&rl, &rx, axis_n(m, x)));
      return SP_OK;
    }
  }
  return sp_ft_axes_push(a, l, x);
}

int sp_ft_axes_assign(sp_arena *a, sp_ft_axes *dst, const sp_ft_axes *src) {
  if (dst == src) return SP_OK;
  if (axes_reserve(a, dst, src->n)) return SP_ENOMEM;
  if (src->n) memcpy(dst->v, src->v, (size_t)src->n * sizeof *src->v);
  dst->n = src->n;
  return SP_OK;
}

bool sp_ft_axes_equal(const sp_ft_axes *x, const sp_ft_axes *y) {
  if (x->n != y->n) return false;
  for (int i = 0; i < x->n; i++)
    if (!sp_ft_axis_equal(x->v[i], y->v[i])) return false;
  return true;
}

bool sp_ft_axes_is_prefix(const sp_mesh *m, const sp_ft_axes *x, const sp_ft_axes *y) {
  if (x->n > y->n) return false;
  if (x->n == 0) return true;
  int last = x->n - 1;
  for (int i = 0; i < last; i++)
    if (!sp_ft_axis_equal(x->v[i], y->v[i])) return false;
  return sp_ft_axis_equal(x->v[last], y->v[last]) ||
         sp_ft_axis_is_prefix_of(m, x->v[last], y->v[last]);
}

bool sp_ft_axes_is_strict_prefix(const sp_mesh *m, const sp_ft_axes *x, const sp_ft_axes *y) {
  return sp_ft_axes_is_prefix(m, x, y) && !sp_ft_axes_equal(x, y);
}

int64_t sp_ft_axes_product(const sp_mesh *m, const sp_ft_axes *l) {
  int64_t p = 1;
  for (int i = 0; i < l->n; i++) p = sp_mul_sat(p, sp_ft_axis_size(m, l->v[i]));
  return p;
}

/* ------------------------------------------------------------------ building */

void sp_factor_table_row_name(const sp_factor_table *t, int row, char *buf) {
  if (row < t->noperands)
    snprintf(buf, 32, "operand %d", row);
  else
    snprintf(buf, 32, "result %d", row - t->noperands);
}

static const sp_rule_tensor *rule_tensor(const sp_rule *r, int row) {
  return row < r->noperands ? &r->operands[row] : &r->results[row - r->noperands];
}

/* Checks what projection relies on: factor indices in range, each at most once per tensor,
 * every dimension mapped, sizes not negative. */
static int validate_rule(sp_arena *a, const sp_rule *r, sp_err *err) {
  if (r->nfactors < 0 || r->nfactors > SP_MAX_FACTORS)
    return sp_err_set(err, SP_ELIMIT, "sharding rule has %d factors (limit SP_MAX_FACTORS = %d)",
                      r->nfactors, SP_MAX_FACTORS);
  if (r->noperands < 0 || r->nresults < 0 || r->noperands > SP_MAX_OPERANDS ||
      r->nresults > SP_MAX_OPERANDS)
    return sp_err_set(err, SP_EINVAL, "sharding rule has %d operands and %d results",
                      r->noperands, r->nresults);
  for (int f = 0; f < r->nfactors; f++)
    if (r->factors[f].size < 0)
      return sp_err_set(err, SP_EINVAL, "sharding rule: factor %d has negative size %lld", f,
                        (long long)r->factors[f].size);
  int *seen = sp_arena_alloc(a, (size_t)(r->nfactors ? r->nfactors : 1) * sizeof *seen);
  if (!seen) return sp_err_set(err, SP_ENOMEM, "out of memory building a factor table");
  for (int f = 0; f < r->nfactors; f++) seen[f] = -1;
  int nrows = r->noperands + r->nresults;
  for (int row = 0; row < nrows; row++) {
    const sp_rule_tensor *rt = rule_tensor(r, row);
    const char *side = row < r->noperands ? "operand" : "result";
    int idx = row < r->noperands ? row : row - r->noperands;
    for (int d = 0; d < rt->rank; d++) {
      const sp_rule_dim *rd = &rt->dims[d];
      if (rd->nfactors < 1)
        return sp_err_set(err, SP_EINVAL, "sharding rule: %s %d dim %d maps to no factor", side,
                          idx, d);
      for (int k = 0; k < rd->nfactors; k++) {
        int f = rd->factors[k];
        if (f < 0 || f >= r->nfactors)
          return sp_err_set(err, SP_EINVAL,
                            "sharding rule: %s %d dim %d maps factor %d, but the rule has %d "
                            "factors", side, idx, d, f, r->nfactors);
        if (seen[f] == row)
          return sp_err_set(err, SP_EINVAL, "sharding rule: factor %d appears twice in %s %d", f,
                            side, idx);
        seen[f] = row;
      }
    }
  }
  return SP_OK;
}

/* Where an axis list sits in the input, for messages only (formatted when an error occurs,
 * so that the projection of correct input does no string work). */
typedef struct place {
  int row;
  int dim;            /* >= 0: a dimension; else one of the lists below */
} place;
enum { PLACE_REPLICATED = -1, PLACE_UNREDUCED = -2 };

static void place_name(const sp_factor_table *t, place p, char *buf, size_t cap) {
  char row[32];
  sp_factor_table_row_name(t, p.row, row);
  if (p.dim >= 0)
    snprintf(buf, cap, "%s dim %d", row, p.dim);
  else
    snprintf(buf, cap, "%s %s", row, p.dim == PLACE_REPLICATED ? "replicated" : "unreduced");
}

static int resolve_list(sp_factor_table *t, const sp_axis_ref *v, int n, place p,
                        sp_ft_axes *out, sp_err *err) {
  for (int i = 0; i < n; i++) {
    sp_ft_axis x;
    int rc = sp_ft_axis_from_ref(t->mesh, &v[i], &x);
    if (rc) {
      char where[64];
      place_name(t, p, where, sizeof where);
      if (rc == SP_ENOTFOUND)
        return sp_err_set(err, SP_EINVAL, "%s: unknown axis name \"%s\" (not in the mesh)",
                          where, v[i].name);
      return sp_err_set(err, SP_EINVAL, "%s: invalid sub-axis \"%s\":(%lld)%lld", where,
                        v[i].name, (long long)v[i].pre, (long long)v[i].size);
    }
    if (sp_ft_axes_push(t->arena, out, x)) return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  return SP_OK;
}

/* The axis being dealt, as an effective (pre, size) pair that shrinks as factors take its
 * major parts. */
typedef struct cursor {
  const sp_ft_axis *src;
  int n, next;
  bool have;
  int axis;
  int64_t pre, size;
} cursor;

static void cursor_advance(const sp_mesh *m, cursor *c) {
  c->have = c->next < c->n;
  if (!c->have) return;
  sp_ft_axis a = c->src[c->next++];
  c->axis = a.axis;
  c->pre = sp_ft_axis_pre(a);
  c->size = sp_ft_axis_size(m, a);
}

static sp_ft_axis cursor_axis(const sp_mesh *m, const cursor *c) {
  return sp_ft_axis_make(m, c->axis, c->pre, c->size);
}

/* Deals the remaining axes (current part first) into `l`. */
static int cursor_drain(sp_arena *a, const sp_mesh *m, cursor *c, sp_ft_axes *l, bool merging) {
  while (c->have) {
    sp_ft_axis x = cursor_axis(m, c);
    int rc = merging ? sp_ft_axes_push_merging(a, m, l, x) : sp_ft_axes_push(a, l, x);
    if (rc) return rc;
    cursor_advance(m, c);
  }
  return SP_OK;
}

/* Takes from the cursor the axes that tile a non-minor-most factor of `size`; returns the
 * part of the size left uncovered. */
static int take_tiling_axes(sp_arena *a, const sp_mesh *m, cursor *c, int64_t size,
                            sp_ft_axes *l, int64_t *left) {
  int64_t rem = size;
  while (c->have) {
    int64_t g = sp_gcd64(rem, c->size);
    if (c->size != 1 && g <= 1) break; /* coprime with what is left */
    if (c->size > g) {                 /* take the major part of the axis */
      if (sp_ft_axes_push(a, l, sp_ft_axis_make(m, c->axis, c->pre, g))) return SP_ENOMEM;
      c->pre *= g;
      c->size /= g;
      rem /= g;
    } else {
      if (sp_ft_axes_push(a, l, cursor_axis(m, c))) return SP_ENOMEM;
      rem /= c->size;
      cursor_advance(m, c);
    }
  }
  *left = rem;
  return SP_OK;
}

/* The regrouped projection of one factor of a dimension of several factors (see
 * sp_factor_table_build_regrouped): from each part of `pend` in order, the major part that
 * divides what is left of `size` goes to `l` (size-1 axes too); what is not taken stays in
 * `pend`, in order. */
static int take_dividing_parts(sp_arena *a, const sp_mesh *m, sp_ft_axes *pend, int64_t size,
                               sp_ft_axes *l) {
  int64_t rem = size;
  int n = 0;
  for (int i = 0; i < pend->n; i++) {
    sp_ft_axis p = pend->v[i];
    int64_t ps = sp_ft_axis_size(m, p), g = sp_gcd64(rem, ps);
    if (ps == 1 || g == ps) {
      if (sp_ft_axes_push(a, l, p)) return SP_ENOMEM;
      rem /= ps;
    } else if (g > 1) {
      if (sp_ft_axes_push(a, l, sp_ft_axis_make(m, p.axis, sp_ft_axis_pre(p), g))) return SP_ENOMEM;
      pend->v[n++] = sp_ft_axis_make(m, p.axis, sp_ft_axis_pre(p) * g, ps / g);
      rem /= g;
    } else {
      pend->v[n++] = p;
    }
  }
  pend->n = n;
  return SP_OK;
}

static int project_dim_regrouped(sp_factor_table *t, sp_ft_row *row, const sp_rule_dim *rd,
                                 const sp_dim_sharding *ds, place where, sp_ft_axes *left,
                                 sp_err *err) {
  const sp_mesh *m = t->mesh;
  sp_ft_axes pend = {0, 0, NULL};
  int rc = resolve_list(t, ds ? ds->axes : NULL, ds ? ds->naxes : 0, where, &pend, err);
  if (rc) return rc;
  for (int k = 0; k < rd->nfactors; k++) {
    sp_ft_cell *cell = &row->cells[rd->factors[k]];
    cell->present = true;
    cell->minor_most = k == rd->nfactors - 1;
    cell->closed = ds ? ds->closed : false;
    if (cell->minor_most && rd->nfactors == 1) {
      for (int i = 0; i < pend.n; i++)
        if (sp_ft_axes_push_merging(t->arena, m, &cell->axes, pend.v[i])) goto oom;
    } else if (take_dividing_parts(t->arena, m, &pend, t->rule->factors[rd->factors[k]].size,
                                   &cell->axes)) {
      goto oom;
    }
  }
  if (rd->nfactors > 1)
    for (int i = 0; i < pend.n; i++)
      if (sp_ft_axes_push(t->arena, left, pend.v[i])) goto oom;
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory building a factor table");
}

static int project_dim(sp_factor_table *t, sp_ft_row *row, const sp_rule_dim *rd,
                       const sp_dim_sharding *ds, place where, sp_err *err) {
  const sp_mesh *m = t->mesh;
  sp_arena *a = t->arena;
  int naxes = ds ? ds->naxes : 0;
  sp_ft_axes src = {0, 0, NULL};
  int rc = resolve_list(t, ds ? ds->axes : NULL, naxes, where, &src, err);
  if (rc) return rc;

  cursor c = {src.v, src.n, 0, false, 0, 0, 0};
  cursor_advance(m, &c);
  bool overflow_seen = false;
  for (int k = 0; k < rd->nfactors; k++) {
    int f = rd->factors[k];
    sp_ft_cell *cell = &row->cells[f];
    cell->present = true;
    cell->minor_most = k == rd->nfactors - 1;
    if (overflow_seen) { /* the axes could not be split over the previous factor */
      cell->closed = true;
      break;
    }
    cell->closed = ds ? ds->closed : false;
    if (cell->minor_most) {
      if (cursor_drain(a, m, &c, &cell->axes, true)) goto oom;
      break;
    }
    int64_t left;
    if (take_tiling_axes(a, m, &c, t->rule->factors[f].size, &cell->axes, &left)) goto oom;
    if (left > 1 && c.have) {
      if (cursor_drain(a, m, &c, &cell->overflow, false)) goto oom;
      overflow_seen = true;
    }
  }
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory building a factor table");
}

static int project_row(sp_factor_table *t, int r, const sp_sharding *s, sp_err *err) {
  sp_ft_row *row = &t->rows[r];
  const sp_rule_tensor *rt = rule_tensor(t->rule, r);

  row->sharded = s != NULL;
  row->size = 1;
  for (int d = 0; d < rt->rank; d++)
    for (int k = 0; k < rt->dims[d].nfactors; k++)
      row->size = sp_mul_sat(row->size, t->rule->factors[rt->dims[d].factors[k]].size);

  if (s && s->rank != rt->rank) {
    char label[32];
    sp_factor_table_row_name(t, r, label);
    return sp_err_set(err, SP_EINVAL, "%s: sharding has %d dims but the sharding rule maps %d",
                      label, s->rank, rt->rank);
  }
  if (s) {
    int rc = resolve_list(t, s->replicated, s->nreplicated, (place){r, PLACE_REPLICATED},
                          &row->replicated, err);
    if (!rc)
      rc = resolve_list(t, s->unreduced, s->nunreduced, (place){r, PLACE_UNREDUCED},
                        &row->unreduced, err);
    if (rc) return rc;
  }
  sp_ft_axes left = {0, 0, NULL};
  sp_ft_cell *last = NULL;
  for (int d = 0; d < rt->rank; d++) {
    const sp_dim_sharding *ds = s ? &s->dims[d] : NULL;
    int rc = t->regrouped ? project_dim_regrouped(t, row, &rt->dims[d], ds, (place){r, d}, &left, err)
                          : project_dim(t, row, &rt->dims[d], ds, (place){r, d}, err);
    if (rc) return rc;
    if (rt->dims[d].nfactors) last = &row->cells[rt->dims[d].factors[rt->dims[d].nfactors - 1]];
  }
  for (int i = 0; last && i < left.n; i++)
    if (sp_ft_axes_push_merging(t->arena, t->mesh, &last->axes, left.v[i]))
      return sp_err_set(err, SP_ENOMEM, "out of memory building a factor table");
  return SP_OK;
}

#ifndef NDEBUG
/* The header's invariants, checked in debug builds: a cell that is not present has no axes,
 * every axis names an axis of the table's mesh with a part inside it, and a list holds no
 * more than its capacity. */
static bool axes_valid(const sp_factor_table *t, const sp_ft_axes *l) {
  if (l->n < 0 || l->n > l->cap || (l->n && !l->v)) return false;
  for (int i = 0; i < l->n; i++) {
    sp_ft_axis x = l->v[i];
    if (x.axis < 0 || x.axis >= t->mesh->naxes) return false;
    int64_t n = axis_n(t->mesh, x);
    if (x.size && (x.pre < 1 || x.size < 1 || x.pre * x.size > n)) return false;
  }
  return true;
}

static bool table_valid(const sp_factor_table *t) {
  for (int r = 0; r < sp_factor_table_nrows(t); r++) {
    const sp_ft_row *row = &t->rows[r];
    if (!axes_valid(t, &row->replicated) || !axes_valid(t, &row->unreduced)) return false;
    for (int f = 0; f < t->nfactors; f++) {
      const sp_ft_cell *c = &row->cells[f];
      if (!c->present && (c->axes.n || c->overflow.n)) return false;
      if (!axes_valid(t, &c->axes) || !axes_valid(t, &c->overflow)) return false;
    }
  }
  return true;
}
#endif

static int build(sp_arena *a, const sp_rule *rule, const sp_mesh *mesh, bool regrouped,
                 sp_sharding *const *operands, sp_sharding *const *results,
                 sp_factor_table **out, sp_err *err) {
  *out = NULL;
  int rc = validate_rule(a, rule, err);
  if (rc) return rc;
  sp_factor_table *t = sp_arena_calloc(a, 1, sizeof *t);
  if (!t) goto oom;
  t->arena = a;
  t->mesh = mesh;
  t->rule = rule;
  t->nfactors = rule->nfactors;
  t->noperands = rule->noperands;
  t->nresults = rule->nresults;
  t->regrouped = regrouped;
  int nrows = sp_factor_table_nrows(t);
  t->rows = sp_arena_calloc(a, (size_t)nrows, sizeof *t->rows);
  sp_ft_cell *cells = sp_arena_calloc(a, (size_t)nrows * (size_t)t->nfactors, sizeof *cells);
  if (!t->rows || !cells) goto oom;
  for (int r = 0; r < nrows; r++) {
    t->rows[r].cells = cells + (size_t)r * (size_t)t->nfactors;
    const sp_sharding *s = r < t->noperands ? (operands ? operands[r] : NULL)
                                            : (results ? results[r - t->noperands] : NULL);
    rc = project_row(t, r, s, err);
    if (rc) return rc;
  }
  assert(table_valid(t));
  *out = t;
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory building a factor table");
}

int sp_factor_table_build(sp_arena *a, const sp_rule *rule, const sp_mesh *mesh,
                          sp_sharding *const *operands, sp_sharding *const *results,
                          sp_factor_table **out, sp_err *err) {
  return build(a, rule, mesh, false, operands, results, out, err);
}

int sp_factor_table_build_regrouped(sp_arena *a, const sp_rule *rule, const sp_mesh *mesh,
                                    sp_sharding *const *operands, sp_sharding *const *results,
                                    sp_factor_table **out, sp_err *err) {
  return build(a, rule, mesh, true, operands, results, out, err);
}

/* ------------------------------------------------------------------ copy and compare */

static bool copy_axes(sp_arena *a, sp_ft_axes *dst, const sp_ft_axes *src) {
  *dst = (sp_ft_axes){0, 0, NULL};
  return sp_ft_axes_assign(a, dst, src) == SP_OK;
}

sp_factor_table *sp_factor_table_copy(sp_arena *a, const sp_factor_table *t) {
  sp_factor_table *c = sp_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *t;
  c->arena = a;
  int nrows = sp_factor_table_nrows(t);
  c->rows = sp_arena_calloc(a, (size_t)nrows, sizeof *c->rows);
  sp_ft_cell *cells = sp_arena_calloc(a, (size_t)nrows * (size_t)t->nfactors, sizeof *cells);
  if (!c->rows || !cells) return NULL;
  for (int r = 0; r < nrows; r++) {
    const sp_ft_row *src = &t->rows[r];
    sp_ft_row *dst = &c->rows[r];
    *dst = *src;
    dst->cells = cells + (size_t)r * (size_t)t->nfactors;
    if (!copy_axes(a, &dst->replicated, &src->replicated) ||
        !copy_axes(a, &dst->unreduced, &src->unreduced))
      return NULL;
    for (int f = 0; f < t->nfactors; f++) {
      dst->cells[f] = src->cells[f];
      if (!copy_axes(a, &dst->cells[f].axes, &src->cells[f].axes) ||
          !copy_axes(a, &dst->cells[f].overflow, &src->cells[f].overflow))
        return NULL;
    }
  }
  return c;
}

bool sp_factor_table_equal(const sp_factor_table *x, const sp_factor_table *y) {
  if (x->nfactors != y->nfactors || x->noperands != y->noperands || x->nresults != y->nresults)
    return false;
  for (int r = 0; r < sp_factor_table_nrows(x); r++) {
    const sp_ft_row *a = &x->rows[r], *b = &y->rows[r];
    if (!sp_ft_axes_equal(&a->replicated, &b->replicated) ||
        !sp_ft_axes_equal(&a->unreduced, &b->unreduced))
      return false;
    for (int f = 0; f < x->nfactors; f++) {
      const sp_ft_cell *p = &a->cells[f], *q = &b->cells[f];
      if (p->present != q->present || p->closed != q->closed || p->minor_most != q->minor_most ||
          !sp_ft_axes_equal(&p->axes, &q->axes) || !sp_ft_axes_equal(&p->overflow, &q->overflow))
        return false;
    }
  }
  return true;
}

/* ------------------------------------------------------------------ back to shardings */

static sp_axis_ref *to_refs(sp_arena *a, const sp_mesh *m, const sp_ft_axes *l) {
  if (l->n == 0) return NULL;
  sp_axis_ref *v = sp_arena_alloc(a, (size_t)l->n * sizeof *v);
  if (!v) return NULL;
  for (int i = 0; i < l->n; i++) v[i] = sp_ft_axis_ref(m, l->v[i]);
  return v;
}

static sp_axis_ref *copy_refs(sp_arena *a, const sp_axis_ref *v, int n) {
  if (n == 0) return NULL;
  sp_axis_ref *c = sp_arena_alloc(a, (size_t)n * sizeof *c);
  if (c) memcpy(c, v, (size_t)n * sizeof *c);
  return c;
}

/* Concatenates the cells of one dimension into `l`; returns whether the dim is closed. */
static int rebuild_dim(const sp_factor_table *t, const sp_ft_row *row, const sp_rule_dim *rd,
                       sp_ft_axes *l, bool *closed) {
  const sp_mesh *m = t->mesh;
  *closed = false;
  l->n = 0;
  for (int k = 0; k < rd->nfactors; k++) {
    int f = rd->factors[k];
    const sp_ft_cell *cell = &row->cells[f];
    assert(cell->present || (!cell->axes.n && !cell->overflow.n));
    if (!cell->present) break;
    *closed = *closed || cell->closed;
    for (int i = 0; i < cell->axes.n; i++) {
      assert(cell->axes.v[i].axis >= 0 && cell->axes.v[i].axis < m->naxes);
      int rc = i == 0 ? sp_ft_axes_push_merging(t->arena, m, l, cell->axes.v[i])
                      : sp_ft_axes_push(t->arena, l, cell->axes.v[i]);
      if (rc) return rc;
    }
    if (cell->overflow.n) {
      for (int i = 0; i < cell->overflow.n; i++) {
        int rc = i == 0 ? sp_ft_axes_push_merging(t->arena, m, l, cell->overflow.v[i])
                        : sp_ft_axes_push(t->arena, l, cell->overflow.v[i]);
        if (rc) return rc;
      }
      break;
    }
    /* A factor not filled by its axes ends the dimension: axes of later factors would need
     * a strided layout. */
    if (sp_ft_axes_product(m, &cell->axes) < t->rule->factors[f].size) break;
  }
  return SP_OK;
}

int sp_factor_table_to_sharding(sp_arena *a, const sp_factor_table *t, int row,
                                const sp_sharding *old, const sp_sharding *mesh_ref,
                                sp_sharding **out, sp_err *err) {
  *out = NULL;
  if (row < 0 || row >= sp_factor_table_nrows(t))
    return sp_err_set(err, SP_EINVAL, "factor table has no row %d", row);
  if (!mesh_ref)
    return sp_err_set(err, SP_EINVAL, "rebuilding a sharding needs a mesh reference");
  const sp_rule_tensor *rt = rule_tensor(t->rule, row);
  sp_sharding *s = sp_sharding_new(a, mesh_ref->mesh_name, rt->rank, false);
  if (!s) goto oom;
  s->inline_mesh = mesh_ref->inline_mesh;
  sp_ft_axes l = {0, 0, NULL};
  for (int d = 0; d < rt->rank; d++) {
    bool closed;
    if (rebuild_dim(t, &t->rows[row], &rt->dims[d], &l, &closed)) goto oom;
    s->dims[d].closed = closed;
    s->dims[d].naxes = l.n;
    s->dims[d].axes = to_refs(a, t->mesh, &l);
    if (l.n && !s->dims[d].axes) goto oom;
  }
  if (old) {
    s->nreplicated = old->nreplicated;
    s->replicated = copy_refs(a, old->replicated, old->nreplicated);
    s->nunreduced = old->nunreduced;
    s->unreduced = copy_refs(a, old->unreduced, old->nunreduced);
    s->unreduced_kind = old->unreduced_kind;
    if ((s->nreplicated && !s->replicated) || (s->nunreduced && !s->unreduced)) goto oom;
  }
  *out = s;
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory rebuilding a sharding");
}

/* ------------------------------------------------------------------ text */

static void print_axes(sp_strbuf *sb, const sp_mesh *m, const sp_ft_axes *l) {
  for (int i = 0; i < l->n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_ft_axis_print(sb, m, l->v[i], true);
  }
}

static void print_cell(sp_strbuf *sb, const sp_mesh *m, const sp_ft_cell *c) {
  if (!c->present) {
    sp_strbuf_putc(sb, '-');
    return;
  }
  sp_strbuf_putc(sb, '{');
  print_axes(sb, m, &c->axes);
  if (!c->closed) sp_strbuf_puts(sb, c->axes.n ? ", ?" : "?");
  sp_strbuf_putc(sb, '}');
  if (c->overflow.n) {
    sp_strbuf_puts(sb, " +{");
    print_axes(sb, m, &c->overflow);
    sp_strbuf_putc(sb, '}');
  }
}

static void print_set(sp_strbuf *sb, const sp_mesh *m, const sp_ft_axes *l) {
  sp_strbuf_putc(sb, '{');
  print_axes(sb, m, l);
  sp_strbuf_putc(sb, '}');
}

static const char *kind_name(sp_factor_kind k) {
  switch (k) {
    case SP_FACTOR_REDUCTION: return "reduction";
    case SP_FACTOR_NEED_REPLICATION: return "need_replication";
    case SP_FACTOR_PERMUTATION: return "permutation";
    default: return "pass_through";
  }
}

static void print_header(sp_strbuf *sb, const sp_factor_table *t, int col) {
  if (col < t->nfactors) {
    char name[16];
    const sp_rule_factor *f = &t->rule->factors[col];
    sp_rule_factor_name(col, name);
    sp_strbuf_printf(sb, "%s=%lld", name, (long long)f->size);
    if (f->kind != SP_FACTOR_PASS_THROUGH) sp_strbuf_printf(sb, " %s", kind_name(f->kind));
    if (f->blocked) sp_strbuf_puts(sb, " blocked");
  } else {
    sp_strbuf_puts(sb, col == t->nfactors ? "replicated" : "unreduced");
  }
}

/* Appends the text of cell (row, col) to sb; row -1 is the header, col -1 the row name. */
static void print_grid_cell(sp_strbuf *sb, const sp_factor_table *t, int row, int col) {
  if (col < 0) {
    char name[32] = "";
    if (row >= 0) sp_factor_table_row_name(t, row, name);
    sp_strbuf_puts(sb, name);
  } else if (row < 0) {
    print_header(sb, t, col);
  } else if (col < t->nfactors) {
    print_cell(sb, t->mesh, &t->rows[row].cells[col]);
  } else {
    print_set(sb, t->mesh, col == t->nfactors ? &t->rows[row].replicated
                                              : &t->rows[row].unreduced);
  }
}

void sp_factor_table_print(sp_strbuf *sb, const sp_factor_table *t) {
  int nrows = sp_factor_table_nrows(t), ncols = t->nfactors + 2;
  /* Widths first (columns -1 .. ncols-1), then the lines. */
  size_t *width = calloc((size_t)ncols + 1, sizeof *width);
  if (!width) {
    sp_strbuf_puts(sb, "(out of memory)\n");
    return;
  }
  sp_strbuf tmp = SP_STRBUF_INIT;
  for (int row = -1; row < nrows; row++)
    for (int col = -1; col < ncols; col++) {
      sp_strbuf_reset(&tmp);
      print_grid_cell(&tmp, t, row, col);
      if (tmp.len > width[col + 1]) width[col + 1] = tmp.len;
    }
  for (int row = -1; row < nrows; row++) {
    size_t line_start = sb->len;
    for (int col = -1; col < ncols; col++) {
      size_t start = sb->len;
      print_grid_cell(sb, t, row, col);
      if (col + 1 < ncols)
        for (size_t w = sb->len - start; w < width[col + 1] + 2; w++) sp_strbuf_putc(sb, ' ');
    }
    while (sb->len > line_start && sb->buf[sb->len - 1] == ' ') sb->buf[--sb->len] = '\0';
    sp_strbuf_putc(sb, '\n');
  }
  sp_strbuf_free(&tmp);
  free(width);
}

/* ------------------------------------------------------------------ JSON */

static cJSON *axes_json(const sp_mesh *m, const sp_ft_axes *l) {
  cJSON *arr = cJSON_CreateArray();
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; arr && i < l->n; i++) {
    sp_strbuf_reset(&sb);
    sp_ft_axis_print(&sb, m, l->v[i], false);
    cJSON *s = sp_strbuf_ok(&sb) ? cJSON_CreateString(sp_strbuf_str(&sb)) : NULL;
    if (!s || !cJSON_AddItemToArray(arr, s)) {
      cJSON_Delete(s);
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  sp_strbuf_free(&sb);
  return arr;
}

/* Adds `item` under `key`; on failure deletes it and returns false. */
static bool add(cJSON *obj, const char *key, cJSON *item) {
  if (item && cJSON_AddItemToObject(obj, key, item)) return true;
  cJSON_Delete(item);
  return false;
}

static cJSON *cell_json(const sp_mesh *m, const sp_ft_cell *c) {
  if (!c->present) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (add(o, "axes", axes_json(m, &c->axes)) && add(o, "closed", cJSON_CreateBool(c->closed)) &&
      add(o, "minor_most", cJSON_CreateBool(c->minor_most)) &&
      add(o, "overflow", axes_json(m, &c->overflow)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *row_json(const sp_factor_table *t, int r) {
  const sp_ft_row *row = &t->rows[r];
  char name[32];
  sp_factor_table_row_name(t, r, name);
  cJSON *o = cJSON_CreateObject(), *cells = cJSON_CreateArray();
  bool ok = o && cells && add(o, "tensor", cJSON_CreateString(name)) &&
            add(o, "sharded", cJSON_CreateBool(row->sharded)) &&
            add(o, "updated", cJSON_CreateBool(row->updated)) &&
            add(o, "size", cJSON_CreateNumber((double)row->size)) &&
            add(o, "replicated", axes_json(t->mesh, &row->replicated)) &&
            add(o, "unreduced", axes_json(t->mesh, &row->unreduced));
  for (int f = 0; ok && f < t->nfactors; f++) {
    cJSON *c = cell_json(t->mesh, &row->cells[f]);
    ok = c && cJSON_AddItemToArray(cells, c);
    if (!ok) cJSON_Delete(c);
  }
  if (ok && add(o, "cells", cells)) return o;
  if (!ok) cJSON_Delete(cells);
  cJSON_Delete(o);
  return NULL;
}

static cJSON *factor_json(const sp_factor_table *t, int f) {
  char name[16];
  sp_rule_factor_name(f, name);
  const sp_rule_factor *rf = &t->rule->factors[f];
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "name", cJSON_CreateString(name)) &&
      add(o, "size", cJSON_CreateNumber((double)rf->size)) &&
      add(o, "kind", cJSON_CreateString(kind_name(rf->kind))) &&
      add(o, "blocked", cJSON_CreateBool(rf->blocked)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *mesh_json(const sp_mesh *m) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr && i < m->naxes; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !add(o, "name", cJSON_CreateString(m->axes[i].name)) ||
        !add(o, "size", cJSON_CreateNumber((double)m->axes[i].size)) ||
        !cJSON_AddItemToArray(arr, o)) {
      cJSON_Delete(o);
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  return arr;
}

cJSON *sp_factor_table_to_json(const sp_factor_table *t) {
  cJSON *o = cJSON_CreateObject(), *factors = cJSON_CreateArray(), *rows = cJSON_CreateArray();
  bool ok = o && factors && rows;
  for (int f = 0; ok && f < t->nfactors; f++) {
    cJSON *x = factor_json(t, f);
    ok = x && cJSON_AddItemToArray(factors, x);
    if (!ok) cJSON_Delete(x);
  }
  for (int r = 0; ok && r < sp_factor_table_nrows(t); r++) {
    cJSON *x = row_json(t, r);
    ok = x && cJSON_AddItemToArray(rows, x);
    if (!ok) cJSON_Delete(x);
  }
  if (ok && add(o, "mesh", mesh_json(t->mesh))) {
    bool f_ok = add(o, "factors", factors);
    factors = NULL;
    if (f_ok && add(o, "tensors", rows)) return o;
    rows = NULL;
  }
  cJSON_Delete(factors);
  cJSON_Delete(rows);
  cJSON_Delete(o);
  return NULL;
}
