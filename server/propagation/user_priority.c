/*
 * user_priority.c - user-priority rounds over op-priority propagation (see user_priority.h).
 *
 * The shardings that carry a priority are recorded as (where the sharding lives, original
 * sharding) pairs: a value's sharding field or a func result slot. Round 0 sees every dim of
 * priority > 0 closed and empty with its axes replicated; each later round restores the dims
 * of one priority in the sharding the tensor has by then.
 */
#include "propagation/user_priority.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "propagation/op_priority.h"

typedef struct prio_record {
  sp_sharding **where;         /* &value->sharding or &func->result_shardings[i] */
  const sp_sharding *orig;     /* as written by the user */
  const sp_mesh *mesh;
} prio_record;

typedef struct prio_scan {
  sp_module *m;
  int n, cap;
  prio_record *v;
  int status;
  sp_err *err;
} prio_scan;

static bool has_edge(const sp_value *v) {
  for (const sp_use *u = v->uses; u; u = u->next)
    if (u->owner->kind == SP_OP_SDY_DATA_FLOW_EDGE) return true;
  return false;
}

static bool has_priority(const sp_sharding *s) {
  for (int d = 0; s && d < s->rank; d++)
    if (s->dims[d].priority != SP_NO_PRIORITY) return true;
  return false;
}

static int record(prio_scan *ps, sp_sharding **where) {
  if (!*where || !has_priority(*where)) return SP_OK;
  if (sp_grow((void **)&ps->v, &ps->cap, ps->n, sizeof *ps->v))
    return sp_err_set(ps->err, SP_ENOMEM, "out of memory recording user priorities");
  ps->v[ps->n++] = (prio_record){where, *where, sp_module_sharding_mesh(ps->m, *where)};
  return SP_OK;
}

static bool scan_op(sp_op *op, prio_scan *ps) {
  if (op->kind == SP_OP_FUNC && op->func) {
    if (op->nregions && op->regions[0].nblocks) {
      sp_block *b = op->regions[0].blocks[0];
      for (int i = 0; i < b->nargs && !ps->status; i++) ps->status = record(ps, &b->args[i]->sharding);
    }
    for (int i = 0; i < op->func->nresults && !ps->status; i++)
      ps->status = record(ps, &op->func->result_shardings[i]);
  }
  for (int r = 0; r < op->nresults && !ps->status; r++) {
    sp_value *v = &op->results[r];
    /* (record() skips shardings without priorities: look at the uses only for those) */
    if (has_priority(v->sharding) && !has_edge(v)) ps->status = record(ps, &v->sharding);
  }
  return ps->status == SP_OK;
}

/* Appends `add` to the replicated list of `s` (a copy owned by the caller) in mesh order. */
static int add_replicated(sp_arena *a, sp_sharding *s, const sp_axis_ref *add, int nadd,
                          const sp_mesh *mesh) {
  if (!nadd) return SP_OK;
  sp_axis_ref *v = sp_arena_alloc(a, (size_t)(s->nreplicated + nadd) * sizeof *v);
  if (!v) return SP_ENOMEM;
  int n = s->nreplicated;
  if (n) memcpy(v, s->replicated, (size_t)n * sizeof *v);
  for (int i = 0; i < nadd; i++) { /* insertion in mesh order: lists are short */
    int j = n++;
    while (j > 0 && mesh && sp_axis_compare(&v[j - 1], &add[i], mesh) > 0) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = add[i];
  }
  s->replicated = v;
  s->nreplicated = n;
  return SP_OK;
}

/* Removes from the replicated list of `s` every axis equal to one of `rm`. */
static void remove_replicated(sp_sharding *s, const sp_axis_ref *rm, int nrm) {
  int k = 0;
  for (int i = 0; i < s->nreplicated; i++) {
    bool drop = false;
    for (int j = 0; j < nrm && !drop; j++) drop = sp_axis_ref_equal(&s->replicated[i], &rm[j]);
    if (!drop) s->replicated[k++] = s->replicated[i];
  }
  s->nreplicated = k;
}

/* Round 0's view of a recorded sharding: priority-0 dims as they are, higher ones hidden. */
static int hide_high_priorities(sp_arena *a, const prio_record *r) {
  sp_sharding *s = sp_sharding_copy(a, r->orig);
  if (!s) return SP_ENOMEM;
  for (int d = 0; d < s->rank; d++) {
    sp_dim_sharding *dim = &s->dims[d];
    int p = dim->priority;
    dim->priority = SP_NO_PRIORITY;
    if (p <= 0) continue;
    if (add_replicated(a, s, dim->axes, dim->naxes, r->mesh)) return SP_ENOMEM;
    dim->naxes = 0;
    dim->axes = NULL;
    dim->closed = true;
  }
  *r->where = s;
  return SP_OK;
}

/* Gives back the dims of priority `p` of a recorded sharding. */
static int restore_priority(sp_arena *a, const prio_record *r, int p) {
  bool any = false;
  for (int d = 0; d < r->orig->rank; d++) any = any || r->orig->dims[d].priority == p;
  if (!any || !*r->where) return SP_OK;
  sp_sharding *s = sp_sharding_copy(a, *r->where);
  if (!s) return SP_ENOMEM;
  for (int d = 0; d < r->orig->rank && d < s->rank; d++) {
    const sp_dim_sharding *o = &r->orig->dims[d];
    if (o->priority != p) continue;
    remove_replicated(s, o->axes, o->naxes);
    s->dims[d].naxes = o->naxes;
    s->dims[d].axes = o->axes;
    s->dims[d].closed = o->closed;
    s->dims[d].priority = SP_NO_PRIORITY;
  }
  *r->where = s;
  return SP_OK;
}

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* The distinct priorities > 0 in the records, increasing, into a malloc'd array. */
static int collect_priorities(const prio_scan *ps, int **out, int *nout) {
  int n = 0;
  for (int i = 0; i < ps->n; i++) n += ps->v[i].orig->rank;
  int *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < ps->n; i++)
    for (int d = 0; d < ps->v[i].orig->rank; d++)
      if (ps->v[i].orig->dims[d].priority > 0) v[k++] = ps->v[i].orig->dims[d].priority;
  qsort(v, (size_t)k, sizeof *v, cmp_int);
  int u = 0;
  for (int i = 0; i < k; i++)
    if (!u || v[u - 1] != v[i]) v[u++] = v[i];
  *out = v;
  *nout = u;
  return SP_OK;
}

int sp_user_priority_propagate(sp_module *m, const sp_propagate_options *o,
                               sp_propagate_stats *stats, sp_err *err) {
  sp_propagate_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  prio_scan ps = {m, 0, 0, NULL, SP_OK, err};
  int *prios = NULL, nprios = 0, rc;
  sp_conflict_log *log = o->conflicts ? o->conflicts : m->conflicts;
  int saved = log ? log->user_priority : -1;
  sp_propagate_session *s = NULL;
  if ((rc = sp_propagate_session_new(m, true, &s, err))) goto done;
  int nops;
  sp_op *const *ops = sp_propagate_session_ops(s, &nops);
  for (int i = 0; i < nops && scan_op(ops[i], &ps); i++) {
    /* Every op is looked at once: ask for the memory of the ones a few places ahead (the
     * op, then its results), which on a large module would each be a cache miss. */
    if (i + 16 < nops) __builtin_prefetch(ops[i + 16]);
    if (i + 8 < nops && ops[i + 8]->nresults) __builtin_prefetch(ops[i + 8]->results);
  }
  if ((rc = ps.status)) goto done;
  for (int i = 0; i < ps.n; i++)
    if (hide_high_priorities(m->arena, &ps.v[i])) {
      rc = sp_err_set(err, SP_ENOMEM, "out of memory applying user priorities");
      goto done;
    }
  if (collect_priorities(&ps, &prios, &nprios)) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory applying user priorities");
    goto done;
  }
  if (log) log->user_priority = 0;
  if ((rc = sp_op_priority_run(s, m, o, stats, err))) goto done;
  for (int k = 0; k < nprios; k++) {
    for (int i = 0; i < ps.n; i++)
      if (restore_priority(m->arena, &ps.v[i], prios[k])) {
        rc = sp_err_set(err, SP_ENOMEM, "out of memory applying user priorities");
        goto done;
      }
    sp_propagate_session_invalidate(s);
    if (log) log->user_priority = prios[k];
    if ((rc = sp_op_priority_run(s, m, o, stats, err))) goto done;
  }
done:
  sp_propagate_session_free(s, rc == SP_OK, o);
  if (log) log->user_priority = saved;
  free(ps.v);
  free(prios);
  return rc;
}
