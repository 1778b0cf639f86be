/*
 * reshard_to_collectives.c - reshards to all_slice / all_to_all / all_gather /
 * collective_permute (see reshard_to_collectives.h).
 */
#include "export/reshard_to_collectives.h"

#include <stdlib.h>
#include <string.h>

#include "export/reshard_layout.h"
#include "ir/axis_ref.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"

/* ---------------------------------------------------------------- ops */

typedef struct emitter {
  sp_arena *a;            /* where new shardings and attributes go */
  const sp_mesh *mesh;
  int rank;
  sp_op *reshard;         /* NULL when recording */
  sp_value *cur;          /* the value the next collective reads */
  const sp_sharding *like;      /* mesh and unreduced axes of what the collectives produce */
  const sp_sharding *like_after;/* the same after a collective_permute (device order change) */
  /* Recording (sp_reshard_to_collectives_steps): the steps instead of ops. */
  sp_reshard_step *steps;
  int nsteps, cap;
  const sp_sharding *cur_s;
} emitter;

/* Pieces merged back into axis references (adjacent parts of one axis become one). */
static sp_axis_ref *merged(sp_arena *a, const sp_mesh *mesh, const sp_rl_dim *p, int *n) {
  sp_axis_ref *v = sp_arena_alloc(a, (size_t)(p->n + 1) * sizeof *v);
  if (!v) return NULL;
  int k = 0;
  for (int i = 0; i < p->n; i++) {
    if (k && sp_axis_can_merge(&v[k - 1], &p->v[i]))
      v[k - 1] = sp_axis_merge(&v[k - 1], &p->v[i], sp_mesh_axis_size(mesh, p->v[i].name));
    else
      v[k++] = p->v[i];
  }
  *n = k;
  return v;
}

static sp_sharding *layout_sharding(emitter *e, const sp_rl_dim *dims, const sp_sharding *like) {
  sp_sharding *s = sp_sharding_new(e->a, like->mesh_name, e->rank, true);
  if (!s) return NULL;
  s->inline_mesh = like->inline_mesh;
  s->unreduced = like->unreduced; /* kept as they are (a change of them is not lowered) */
  s->nunreduced = like->nunreduced;
  s->unreduced_kind = like->unreduced_kind;
  for (int d = 0; d < e->rank; d++) {
    int n;
    sp_axis_ref *v = merged(e->a, e->mesh, &dims[d], &n);
    if (!v) return NULL;
    s->dims[d].axes = v;
    s->dims[d].naxes = n;
  }
  return s;
}

static int dim_axes_attr(emitter *e, const char *name, const sp_rl_dim *dims, sp_attr *at) {
  *at = (sp_attr){.name = name, .kind = SP_ATTR_DIM_AXES};
  sp_dim_sharding *v = sp_arena_calloc(e->a, (size_t)e->rank + 1, sizeof *v);
  if (!v) return SP_ENOMEM;
  for (int d = 0; d < e->rank; d++) {
    v[d].closed = true;
    v[d].priority = SP_NO_PRIORITY;
    v[d].axes = merged(e->a, e->mesh, &dims[d], &v[d].naxes);
    if (!v[d].axes) return SP_ENOMEM;
  }
  at->u.dim_axes.n = e->rank;
  at->u.dim_axes.v = v;
  return SP_OK;
}

static int all_to_all_attr(emitter *e, const sp_rl_step *st, sp_attr *at) {
  sp_all_to_all_param *p = sp_arena_calloc(e->a, 1, sizeof *p);
  if (!p || !(p->axes = merged(e->a, e->mesh, &st->axes[0], &p->naxes))) return SP_ENOMEM;
  p->src_dim = st->src;
  p->tgt_dim = st->tgt;
  *at = (sp_attr){.name = "params", .kind = SP_ATTR_ALL_TO_ALL};
  at->u.all_to_all.n = 1;
  at->u.all_to_all.v = p;
  return SP_OK;
}

/* The planner's callback: one collective as an op before the reshard, or as a step. */
static int emit(void *ctx, const sp_rl_step *st) {
  emitter *e = ctx;
  static const char *const names[] = {
      [SP_RL_ALL_SLICE] = "sdy.all_slice", [SP_RL_PERMUTE] = "sdy.collective_permute",
      [SP_RL_ALL_TO_ALL] = "sdy.all_to_all", [SP_RL_ALL_GATHER] = "sdy.all_gather"};
  if (st->kind == SP_RL_PERMUTE) e->like = e->like_after;
  sp_attr at = {0};
  int rc = SP_OK;
  if (st->kind == SP_RL_ALL_SLICE) rc = dim_axes_attr(e, "slicing_axes", st->axes, &at);
  else if (st->kind == SP_RL_ALL_GATHER) rc = dim_axes_attr(e, "gathering_axes", st->axes, &at);
  else if (st->kind == SP_RL_ALL_TO_ALL) rc = all_to_all_attr(e, st, &at);
  sp_sharding *s = rc ? NULL : layout_sharding(e, st->after, e->like);
  if (!s) return SP_ENOMEM;
  if (e->steps) {
    if (e->nsteps == e->cap) return SP_EUNSUPPORTED;
    e->steps[e->nsteps++] = (sp_reshard_step){.op = names[st->kind], .before = e->cur_s,
                                              .after = s, .axes = at};
    e->cur_s = s;
    return SP_OK;
  }
  sp_value *in = e->cur;
  sp_op *op = sp_op_create(e->a, names[st->kind], 1, &in, 1, &in->type, 0);
  if (!op || (at.kind && sp_attrs_set(e->a, &op->attrs, &at))) return SP_ENOMEM;
  op->loc = e->reshard->loc;
  op->results[0].sharding = s;
  sp_op_insert_before(e->reshard, op);
  e->cur = &op->results[0];
  return SP_OK;
}

static bool same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b) {
  if (a->mesh_name && b->mesh_name && strcmp(a->mesh_name, b->mesh_name) == 0) return true;
  const sp_mesh *x = sp_sharding_mesh(m, a), *y = sp_sharding_mesh(m, b);
  return x && y && sp_mesh_equal(x, y);
}

static bool same_unreduced(const sp_sharding *a, const sp_sharding *b) {
  int na = a ? a->nunreduced : 0, nb = b ? b->nunreduced : 0;
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!sp_axis_ref_equal(&a->unreduced[i], &b->unreduced[i])) return false;
  return true;
}

static bool is_reshard(const sp_op *op) { return op->kind == SP_OP_SDY_RESHARD; }

/* Same axes (names and sizes, in order), whatever their device order. */
static bool same_axes(const sp_mesh *x, const sp_mesh *y) {
  if (!x || !y || x->naxes != y->naxes) return false;
  for (int i = 0; i < x->naxes; i++)
    if (strcmp(x->axes[i].name, y->axes[i].name) != 0 || x->axes[i].size != y->axes[i].size)
      return false;
  return true;
}

/* The value a reshard really reads (through propagation barriers, which move nothing) and
 * its sharding (a while's block argument has the while's result sharding). */
static sp_value *source(sp_value *v, const sp_sharding **s) {
  while (!v->sharding && v->def && v->def->kind == SP_OP_SDY_PROPAGATION_BARRIER &&
         v->def->noperands == 1)
    v = v->def->operands[0].value;
  *s = v->sharding;
  sp_op *owner = !v->def && v->block ? sp_block_parent_op(v->block) : NULL;
  if (!*s && owner && owner->kind == SP_OP_WHILE && v->index < owner->nresults)
    *s = owner->results[v->index].sharding;
  return v;
}

static int plan(emitter *e, const sp_sharding *from, const sp_sharding *to, const sp_type *t,
                bool force_permute) {
  const int64_t *shape = t && t->rank == e->rank ? t->dims : NULL;
  return sp_rl_plan(e->mesh, from, to, e->rank, shape, force_permute, emit, e);
}

static int lower_reshard(sp_module *m, sp_op *rs, bool keep_redundant) {
  const sp_sharding *to = rs->results[0].sharding, *from;
  sp_value *in = source(rs->operands[0].value, &from);
  if (!to) return SP_OK;
  int rank = sp_sharding_rank_of(in->type);
  if (rank < 0 || rank != to->rank || (from && from->rank != rank)) return SP_OK;
  if (!same_unreduced(from, to)) return SP_OK;
  bool from_empty = sp_sharding_is_unsharded(from), to_empty = sp_sharding_is_unsharded(to);
  const sp_mesh *to_mesh = sp_sharding_mesh(m, to), *from_mesh = from ? sp_sharding_mesh(m, from) : NULL;
  emitter e = {.a = m->arena, .mesh = to_mesh, .rank = rank, .reshard = rs, .cur = in,
               .like = to, .like_after = to};
  int rc = SP_OK;
  if (from_empty && to_empty) {
    if (keep_redundant) return SP_OK;
  } else if (from && !same_mesh(m, from, to) && (to_empty || !same_axes(from_mesh, to_mesh))) {
    if (!to_empty || !from_mesh) return SP_OK;
    /* Everything gathered, straight onto the other mesh: replicated on the operand's mesh. */
    e.mesh = from_mesh;
    e.like = e.like_after = from;
    rc = plan(&e, from, NULL, in->type, false);
  } else {
    bool reorder = from && !same_mesh(m, from, to);   /* same axes, other device order */
    if (!e.mesh) return SP_OK;
    if (!reorder && (sp_sharding_same_axes(from, to) || (from_empty && to_empty))) {
      if (keep_redundant) return SP_OK;
    } else {
      if (reorder) e.like = from;
      rc = plan(&e, from, to, in->type, reorder);
    }
  }
  if (rc) return rc == SP_ENOMEM ? rc : SP_OK;
  sp_value_replace_all_uses(&rs->results[0], e.cur);
  sp_op_erase(rs);
  return SP_OK;
}

int sp_reshard_to_collectives_steps(sp_arena *a, const sp_mesh *mesh, const sp_sharding *from,
                                    const sp_sharding *to, int rank, const int64_t *shape,
                                    sp_reshard_step *steps, int cap, int *n) {
  *n = 0;
  if (sp_sharding_is_unsharded(from) && sp_sharding_is_unsharded(to)) return SP_OK;
  if (sp_sharding_same_axes(from, to)) return SP_OK;
  emitter e = {.a = a, .mesh = mesh, .rank = rank, .like = to, .like_after = to, .steps = steps,
               .cap = cap, .cur_s = from};
  int rc = sp_rl_plan(mesh, from, to, rank, shape, false, emit, &e);
  if (rc) return rc;
  *n = e.nsteps;
  return SP_OK;
}

int sp_export_reshard_to_collectives(sp_module *m, bool keep_redundant, sp_err *err) {
  sp_op_list l = {.keep = is_reshard};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = lower_reshard(m, l.v[i], keep_redundant);
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory lowering reshards to collectives") : SP_OK;
}
