/*
 * factor_propagation.c - basic and aggressive propagation over a factor table (see
 * factor_propagation.h).
 *
 * The work is all on sp_ft_axis lists: mesh-axis indices compared as integers, with
 * ir/axis_ref.h deciding how two parts of one axis relate. When a conflict log is given,
 * the table is copied first so that each record can show what every tensor held before, and
 * the reasons for cuts are collected per (row, factor); without a log none of that happens.
 */
#include "propagation/factor_propagation.h"

#include <string.h>

#include "ir/int_math.h"

typedef struct prop {
  sp_factor_table *t;
  const sp_mesh *m;
  const sp_prop_options *o;
  int nrows, nf;
  /* Only when logging: */
  sp_conflict_log *log;
  const sp_factor_table *before;
  unsigned *causes;    /* [row * nf + factor]: sp_conflict_cause bits */
  int *blockers;       /* [row * nf + factor]: the other factor that held a cut axis, or -1 */
  unsigned *fcauses;   /* [factor]: causes not tied to one tensor (conservative sub-axis) */
  bool *disagree;      /* [factor] */
} prop;

static sp_prop_direction factor_direction(const prop *p, int f) {
  if (p->t->rule->factors[f].blocked) return SP_DIR_NONE;
  return p->o->directions ? p->o->directions[f] : SP_DIR_BOTH;
}

static void note(prop *p, int row, int f, unsigned cause) {
  if (p->causes) p->causes[row * p->nf + f] |= cause;
}

/* ------------------------------------------------------------------ (a) compatible axes */

/* Folds `nxt` into the candidate `cur`. *expand says whether `cur` may still grow; it turns
 * false at the first place the lists stop agreeing, which also sets *disagree. */
static int merge_axes(sp_arena *a, const sp_mesh *m, sp_ft_axes *cur, const sp_ft_axes *nxt,
                      bool *expand, bool *disagree) {
  int k = 0;
  for (; k < cur->n && k < nxt->n; k++) {
    sp_ft_axis c = cur->v[k], n = nxt->v[k];
    if (sp_ft_axis_equal(c, n)) continue;
    if (sp_ft_axis_is_prefix_of(m, n, c)) { /* nxt holds less of this axis */
      if (k + 1 < nxt->n) {                /* ... and then goes elsewhere */
        cur->v[k] = n;
        cur->n = k + 1;
        goto disagree;
      }
      continue; /* keep the larger part; nxt ends here */
    }
    if (sp_ft_axis_is_prefix_of(m, c, n)) { /* nxt holds more of this axis */
      if (k + 1 < cur->n) {                /* ... but cur goes elsewhere after it */
        cur->n = k + 1;
        goto disagree;
      }
      if (!*expand) { /* this side may only shorten the candidate */
        cur->n = k + 1;
        return SP_OK;
      }
      cur->v[k] = n;
      continue;
    }
    cur->n = k; /* another axis, or an unrelated part of the same one */
    goto disagree;
  }
  if (*expand)
    for (; k < nxt->n; k++)
      if (sp_ft_axes_push(a, cur, nxt->v[k])) return SP_ENOMEM;
  return SP_OK;
disagree:
  *expand = false;
  *disagree = true;
  return SP_OK;
}

static int compatible_axes(const sp_factor_table *t, int f, sp_prop_direction dir,
                           sp_ft_axes *out, bool *disagree) {
  out->n = 0;
  *disagree = false;
  if (dir == SP_DIR_NONE) return SP_OK;
  bool expand = true;
  int nrows = sp_factor_table_nrows(t);
  /* The leading side may grow the candidate; the other side only when the direction is
   * BOTH. Operands lead unless the direction is BACKWARD. */
  bool results_lead = dir == SP_DIR_BACKWARD;
  for (int pass = 0; pass < 2; pass++) {
    bool results = pass == 0 ? results_lead : !results_lead;
    if (pass == 1 && dir != SP_DIR_BOTH) expand = false;
    int r0 = results ? t->noperands : 0, r1 = results ? nrows : t->noperands;
    for (int r = r0; r < r1; r++) {
      const sp_ft_cell *cell = &t->rows[r].cells[f];
      if (!cell->present) continue;
      int rc = merge_axes(t->arena, t->mesh, out, &cell->axes, &expand, disagree);
      if (rc) return rc;
    }
  }
  return SP_OK;
}

int sp_factor_compatible_axes(const sp_factor_table *t, int f, sp_prop_direction dir,
                              sp_ft_axes *out, bool *disagree) {
  bool d;
  int rc = compatible_axes(t, f, dir, out, &d);
  if (disagree) *disagree = d;
  return rc;
}

/* ------------------------------------------------------------------ (b) cuts */

enum { CHECK_WITHIN = 1, CHECK_ACROSS = 2 };

/* Cuts `b` back to its major part that overlaps no axis of `l`; false if nothing is left. */
static bool cut_by(const sp_mesh *m, sp_ft_axis *b, const sp_ft_axes *l) {
  for (int i = 0; i < l->n; i++)
    if (!sp_ft_axis_prefix_without_overlap(m, *b, l->v[i], b)) return false;
  return true;
}

/* The part of `b` that row `row` accepts along its own factor `f`, given that the axes
 * before `b` in the candidate have product `prev`: not replicated or unreduced there, and
 * either already held, or addable to an open cell (whole if the factor is minor-most, else
 * as much as keeps it divisible). A closed or blocked cell can still cut `b` back to its own
 * last axis. */
static bool within(prop *p, int row, int f, sp_ft_axis b, int64_t prev, sp_ft_axis *out) {
  const sp_mesh *m = p->m;
  const sp_ft_row *rw = &p->t->rows[row];
  const sp_ft_cell *cell = &rw->cells[f];
  int64_t fsize = p->t->rule->factors[f].size;
  sp_ft_axis orig = b;
  if (!cut_by(m, &b, &rw->replicated) || !cut_by(m, &b, &rw->unreduced)) {
    note(p, row, f, SP_CONFLICT_REPLICATED);
    return false;
  }
  if (!sp_ft_axis_equal(b, orig)) note(p, row, f, SP_CONFLICT_REPLICATED);
  for (int i = 0; i < cell->axes.n; i++)
    if (sp_ft_axis_contains(m, cell->axes.v[i], b)) {
      *out = b;
      return true;
    }
  if (!cell->closed && cell->overflow.n == 0) {
    if (cell->minor_most) {
      *out = b;
      return true;
    }
    if (prev > 0 && fsize % prev == 0) {
      int64_t bs = sp_ft_axis_size(m, b), g = sp_gcd64(fsize / prev, bs);
      if (g == bs) {
        *out = b;
        return true;
      }
      if (g > 1) { /* the major part of b that still divides the factor */
        *out = sp_ft_axis_make(m, b.axis, sp_ft_axis_pre(b), g);
        note(p, row, f, SP_CONFLICT_INDIVISIBLE);
        return true;
      }
    }
  }
  unsigned why = cell->closed ? SP_CONFLICT_CLOSED : SP_CONFLICT_INDIVISIBLE;
  note(p, row, f, why);
  if (cell->axes.n && sp_ft_axis_is_prefix_of(m, cell->axes.v[cell->axes.n - 1], b)) {
    *out = cell->axes.v[cell->axes.n - 1];
    return true;
  }
  return false;
}

/* The part of `b` that row `row` accepts for factor `f` under `checks`. */
static bool accept_in_row(prop *p, int row, int f, sp_ft_axis b, int64_t prev, unsigned checks,
                          sp_ft_axis *out) {
  const sp_ft_row *rw = &p->t->rows[row];
  if (checks & CHECK_ACROSS) {
    for (int g = 0; g < p->nf; g++) {
      const sp_ft_cell *c = &rw->cells[g];
      if (g == f || !c->present) continue;
      sp_ft_axis orig = b;
      bool left = cut_by(p->m, &b, &c->axes) && cut_by(p->m, &b, &c->overflow);
      if (!left || !sp_ft_axis_equal(b, orig)) {
        note(p, row, f, SP_CONFLICT_AXIS_IN_USE);
        if (p->blockers) p->blockers[row * p->nf + f] = g;
      }
      if (!left) return false;
    }
  }
  if ((checks & CHECK_WITHIN) && rw->cells[f].present && !within(p, row, f, b, prev, &b))
    return false;
  *out = b;
  return true;
}

/* Walks the candidate `n` major first and cuts it at the first axis that a row refuses or
 * accepts only in part. `only` < 0 checks every row, else that row alone. */
static void truncate(prop *p, int f, sp_ft_axes *n, int only, unsigned checks) {
  int r0 = only < 0 ? 0 : only, r1 = only < 0 ? p->nrows : only + 1;
  int64_t prev = 1;
  for (int idx = 0; idx < n->n; idx++) {
    sp_ft_axis a = n->v[idx], b = a;
    bool ok = true;
    for (int r = r0; ok && r < r1; r++) ok = accept_in_row(p, r, f, b, prev, checks, &b);
    if (ok && p->o->conservative && sp_ft_axis_is_sub(b)) {
      if (p->fcauses) p->fcauses[f] |= SP_CONFLICT_SUB_AXIS;
      ok = false;
    }
    if (!ok) {
      n->n = idx;
      return;
    }
    if (!sp_ft_axis_equal(b, a)) {
      n->v[idx] = b;
      n->n = idx + 1;
      return;
    }
    prev = sp_mul_sat(prev, sp_ft_axis_size(p->m, b));
  }
}

/* ------------------------------------------------------------------ conflict records */

static sp_axis_ref *refs_of(prop *p, const sp_ft_axes *l) {
  if (l->n == 0) return NULL;
  sp_axis_ref *v = sp_arena_alloc(p->log->arena, (size_t)l->n * sizeof *v);
  if (!v) return NULL;
  for (int i = 0; i < l->n; i++) v[i] = sp_ft_axis_ref(p->m, l->v[i]);
  return v;
}

static unsigned factor_causes(const prop *p, int f) {
  unsigned c = p->fcauses[f];
  for (int r = 0; r < p->nrows; r++) c |= p->causes[r * p->nf + f];
  return c;
}

static bool column_changed(const prop *p, int f) {
  for (int r = 0; r < p->nrows; r++)
    if (!sp_ft_axes_equal(&p->before->rows[r].cells[f].axes, &p->t->rows[r].cells[f].axes))
      return true;
  return false;
}

/* Marks as incompatible every tensor whose axes the candidate does not extend. */
static void note_disagreement(prop *p, int f, const sp_ft_axes *cand) {
  if (!p->causes) return;
  p->disagree[f] = true;
  for (int r = 0; r < p->nrows; r++) {
    const sp_ft_cell *cell = &p->t->rows[r].cells[f];
    if (cell->present && !sp_ft_axes_is_prefix(p->m, &cell->axes, cand))
      note(p, r, f, SP_CONFLICT_INCOMPATIBLE);
  }
}

/* Appends a record for factor `f` if anything stood in the way along it. */
static int maybe_record(prop *p, int f, const sp_ft_axes *chosen, sp_conflict_level level,
                        int source) {
  if (!p->log) return SP_OK;
  unsigned causes = factor_causes(p, f);
  if (!causes && !p->disagree[f]) return SP_OK;
  sp_conflict *c = sp_conflict_log_add(p->log);
  if (!c) return SP_ENOMEM;
  bool moved = column_changed(p, f);
  c->factor = f;
  c->factor_size = p->t->rule->factors[f].size;
  c->level = level;
  c->conservative = p->o->conservative;
  c->causes = causes;
  c->resolution = !moved ? SP_CONFLICT_NOTHING_MOVED
                  : level == SP_CONFLICT_LEVEL_AGGRESSIVE ? SP_CONFLICT_SOURCE_WON
                                                          : SP_CONFLICT_COMMON_PREFIX;
  c->source = source;
  c->noperands = p->t->noperands;
  c->nchosen = chosen->n;
  c->chosen = refs_of(p, chosen);
  if (chosen->n && !c->chosen) return SP_ENOMEM;
  int n = 0;
  for (int r = 0; r < p->nrows; r++)
    n += p->t->rows[r].cells[f].present || p->causes[r * p->nf + f];
  if (sp_conflict_alloc_entries(p->log, c, n)) return SP_ENOMEM;
  int i = 0;
  for (int r = 0; r < p->nrows; r++) {
    const sp_ft_cell *now = &p->t->rows[r].cells[f], *was = &p->before->rows[r].cells[f];
    if (!now->present && !p->causes[r * p->nf + f]) continue;
    sp_conflict_entry *e = &c->entries[i++];
    e->tensor = r;
    e->has_factor = now->present;
    e->causes = p->causes[r * p->nf + f];
    e->blocking_factor = p->blockers[r * p->nf + f];
    e->closed = now->closed;
    e->nbefore = was->axes.n;
    e->before = refs_of(p, &was->axes);
    e->nafter = now->axes.n;
    e->after = refs_of(p, &now->axes);
    if ((e->nbefore && !e->before) || (e->nafter && !e->after)) return SP_ENOMEM;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ basic */

static int expand_all(prop *p, int f, const sp_ft_axes *cand) {
  for (int r = 0; r < p->nrows; r++) {
    sp_ft_cell *cell = &p->t->rows[r].cells[f];
    if (!cell->present || cell->closed || !sp_ft_axes_is_strict_prefix(p->m, &cell->axes, cand))
      continue;
    if (sp_ft_axes_assign(p->t->arena, &cell->axes, cand)) return SP_ENOMEM;
    p->t->rows[r].updated = true;
  }
  return SP_OK;
}

/* Whether some tensor's axes along f are a strict prefix of `cand`. Cuts only shorten the
 * candidate, so when none is, nothing can grow and the cuts need not run. */
static bool some_row_would_grow(const prop *p, int f, const sp_ft_axes *cand) {
  for (int r = 0; r < p->nrows; r++) {
    const sp_ft_cell *cell = &p->t->rows[r].cells[f];
    if (cell->present && sp_ft_axes_is_strict_prefix(p->m, &cell->axes, cand)) return true;
  }
  return false;
}

static int propagate_basic(prop *p) {
  sp_ft_axes cand = {0, 0, NULL};
  for (int f = 0; f < p->nf; f++) {
    bool disagree;
    int rc = compatible_axes(p->t, f, factor_direction(p, f), &cand, &disagree);
    if (rc) return rc;
    if (disagree) note_disagreement(p, f, &cand);
    if (!some_row_would_grow(p, f, &cand)) cand.n = 0;
    if (cand.n) truncate(p, f, &cand, -1, CHECK_WITHIN | CHECK_ACROSS);
    if (cand.n && (rc = expand_all(p, f, &cand))) return rc;
    if ((rc = maybe_record(p, f, &cand, SP_CONFLICT_LEVEL_BASIC, -1))) return rc;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ aggressive */

typedef struct order_key {
  int64_t source_size;
  int64_t cand_size;
  int source;
} order_key;

/* Whether factor f goes before factor g. */
static bool factor_before(const prop *p, const order_key *k, int f, int g) {
  if (k[f].source_size != k[g].source_size) return k[f].source_size > k[g].source_size;
  if (p->o->elementwise && k[f].cand_size != k[g].cand_size)
    return k[f].cand_size > k[g].cand_size;
  if (k[f].source != k[g].source) return k[f].source < k[g].source;
  return f < g;
}

/* The source of each factor: the largest tensor (first on ties) whose axes hold the
 * candidate; then the factors in propagation order. */
static void order_factors(const prop *p, const sp_ft_axes *cand, order_key *key, int *order) {
  for (int f = 0; f < p->nf; f++) {
    key[f] = (order_key){-1, sp_ft_axes_product(p->m, &cand[f]), -1};
    for (int r = 0; r < p->nrows; r++) {
      const sp_ft_row *rw = &p->t->rows[r];
      if (rw->cells[f].present && rw->size > key[f].source_size &&
          sp_ft_axes_is_prefix(p->m, &cand[f], &rw->cells[f].axes)) {
        key[f].source_size = rw->size;
        key[f].source = r;
      }
    }
  }
  for (int i = 0; i < p->nf; i++) { /* insertion sort: rules have few factors */
    int f = i, j = i;
    for (; j > 0 && factor_before(p, key, f, order[j - 1]); j--) order[j] = order[j - 1];
    order[j] = f;
  }
}

/* Expands row `r` along factor `f` as far as that tensor alone allows. */
static int expand_row(prop *p, int r, int f, const sp_ft_axes *cand, sp_ft_axes *n) {
  sp_ft_cell *cell = &p->t->rows[r].cells[f];
  if (!cell->present) return SP_OK;
  if (sp_ft_axes_assign(p->t->arena, n, cand)) return SP_ENOMEM;
  /* Reasons found here only count if this tensor would otherwise have grown. */
  bool would_grow = sp_ft_axes_is_strict_prefix(p->m, &cell->axes, cand);
  unsigned saved = p->causes ? p->causes[r * p->nf + f] : 0;
  unsigned fsaved = p->fcauses ? p->fcauses[f] : 0;
  /* (blockers are only set by the across-factor cut below, never by this one) */
  truncate(p, f, n, r, CHECK_WITHIN);
  if (!sp_ft_axes_is_strict_prefix(p->m, &cell->axes, n)) {
    if (p->causes && !would_grow) {
      p->causes[r * p->nf + f] = saved;
      p->fcauses[f] = fsaved;
    }
    return SP_OK;
  }
  truncate(p, f, n, r, CHECK_ACROSS);
  if (p->o->elementwise && r < p->t->noperands) {
    for (int q = p->t->noperands; q < p->nrows; q++) {
      const sp_ft_cell *res = &p->t->rows[q].cells[f];
      if (res->present && sp_ft_axes_is_strict_prefix(p->m, &res->axes, n)) {
        if (sp_ft_axes_assign(p->t->arena, n, &res->axes)) return SP_ENOMEM;
        note(p, r, f, SP_CONFLICT_RESULT_LIMITED);
      }
    }
  }
  if (!cell->closed && sp_ft_axes_is_strict_prefix(p->m, &cell->axes, n)) {
    if (sp_ft_axes_assign(p->t->arena, &cell->axes, n)) return SP_ENOMEM;
    p->t->rows[r].updated = true;
  }
  return SP_OK;
}

static int propagate_aggressive(prop *p) {
  sp_arena *a = p->t->arena;
  int nf = p->nf, rc;
  sp_ft_axes *cand = sp_arena_calloc(a, (size_t)(nf ? nf : 1), sizeof *cand);
  order_key *key = sp_arena_alloc(a, (size_t)(nf ? nf : 1) * sizeof *key);
  int *order = sp_arena_alloc(a, (size_t)(nf ? nf : 1) * sizeof *order);
  if (!cand || !key || !order) return SP_ENOMEM;
  bool any = false;
  for (int f = 0; f < nf; f++) {
    bool disagree;
    if ((rc = compatible_axes(p->t, f, factor_direction(p, f), &cand[f], &disagree))) return rc;
    if (disagree) note_disagreement(p, f, &cand[f]);
    any = any || cand[f].n > 0;
  }
  if (any) {
    order_factors(p, cand, key, order);
    sp_ft_axes n = {0, 0, NULL};
    /* Results first, then operands. */
    for (int i = 0; i < p->nrows; i++) {
      int r = i < p->t->nresults ? p->t->noperands + i : i - p->t->nresults;
      for (int k = 0; k < nf; k++)
        if ((rc = expand_row(p, r, order[k], &cand[order[k]], &n))) return rc;
    }
  }
  for (int f = 0; f < nf && p->log; f++)
    if ((rc = maybe_record(p, f, &cand[f], SP_CONFLICT_LEVEL_AGGRESSIVE,
                           any ? key[f].source : -1)))
      return rc;
  return SP_OK;
}

/* ------------------------------------------------------------------ entry points */

int sp_factor_propagate(sp_factor_table *t, const sp_prop_options *o, sp_conflict_log *log,
                        sp_err *err) {
  static const sp_prop_options defaults = {SP_PROP_BASIC, false, false, NULL};
  prop p = {t, t->mesh, o ? o : &defaults, sp_factor_table_nrows(t), t->nfactors,
            log, NULL, NULL, NULL, NULL, NULL};
  for (int r = 0; r < p.nrows; r++) t->rows[r].updated = false;
  if (log) {
    size_t cells = (size_t)p.nrows * (size_t)p.nf, nf = (size_t)(p.nf ? p.nf : 1);
    p.before = sp_factor_table_copy(t->arena, t);
    p.causes = sp_arena_calloc(t->arena, cells ? cells : 1, sizeof *p.causes);
    p.blockers = sp_arena_alloc(t->arena, (cells ? cells : 1) * sizeof *p.blockers);
    for (size_t i = 0; p.blockers && i < cells; i++) p.blockers[i] = -1;
    p.fcauses = sp_arena_calloc(t->arena, nf, sizeof *p.fcauses);
    p.disagree = sp_arena_calloc(t->arena, nf, sizeof *p.disagree);
    if (!p.before || !p.causes || !p.blockers || !p.fcauses || !p.disagree)
      return sp_err_set(err, SP_ENOMEM, "out of memory propagating through an op");
  }
  int rc = p.o->strategy == SP_PROP_AGGRESSIVE ? propagate_aggressive(&p) : propagate_basic(&p);
  if (rc) return sp_err_set(err, rc, "out of memory propagating through an op");
  return SP_OK;
}

static const sp_sharding *first_sharding(sp_sharding *const *v, int n) {
  for (int i = 0; v && i < n; i++)
    if (v[i]) return v[i];
  return NULL;
}

int sp_factor_propagate_op(sp_arena *a, sp_arena *scratch, const sp_rule *rule,
                           const sp_mesh *mesh, const sp_sharding *mesh_ref,
                           sp_sharding *const *operands, sp_sharding *const *results,
                           const sp_prop_options *o, sp_sharding **new_operands,
                           sp_sharding **new_results, int *nupdated, sp_conflict_log *log,
                           sp_err *err) {
  for (int i = 0; new_operands && i < rule->noperands; i++) new_operands[i] = NULL;
  for (int i = 0; new_results && i < rule->nresults; i++) new_results[i] = NULL;
  if (nupdated) *nupdated = 0;
  const sp_sharding *any = first_sharding(operands, rule->noperands);
  if (!any) any = first_sharding(results, rule->nresults);
  if (!any || sp_mesh_is_maximal(mesh)) return SP_OK;
  if (!mesh_ref) mesh_ref = any;

  sp_factor_table *t;
  int rc = sp_factor_table_build(scratch, rule, mesh, operands, results, &t, err);
  if (rc) return rc;
  if ((rc = sp_factor_propagate(t, o, log, err))) return rc;
  for (int r = 0; r < sp_factor_table_nrows(t); r++) {
    if (!t->rows[r].updated) continue;
    bool is_operand = r < t->noperands;
    int idx = is_operand ? r : r - t->noperands;
    sp_sharding *const *in = is_operand ? operands : results;
    const sp_sharding *old = in ? in[idx] : NULL;
    sp_sharding *s;
    if ((rc = sp_factor_table_to_sharding(scratch, t, r, old, mesh_ref, &s, err))) return rc;
    /* Re-projection may drop what a factor gained (see factor_projection.h). */
    if (old ? sp_sharding_equal(old, s) : sp_sharding_is_unsharded(s)) continue;
    if (a != scratch && !(s = sp_sharding_copy(a, s)))
      return sp_err_set(err, SP_ENOMEM, "out of memory propagating through an op");
    sp_sharding **out = is_operand ? new_operands : new_results;
    if (out) out[idx] = s;
    if (nupdated) (*nupdated)++;
  }
  return SP_OK;
}
