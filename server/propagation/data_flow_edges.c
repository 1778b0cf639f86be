/*
 * data_flow_edges.c - adding and sinking sdy.data_flow_edge ops (see data_flow_edges.h).
 */
#include "propagation/data_flow_edges.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/op_list.h"
#include "ir/ptr_map.h"
#include "propagation/sharding_walk.h"
#include "propagation/trace.h"

bool sp_data_flow_is_data_flow_op(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_WHILE:
    case SP_OP_CASE:
    case SP_OP_OPTIMIZATION_BARRIER:
    case SP_OP_SDY_NAMED_COMPUTATION:
    case SP_OP_SDY_MANUAL_COMPUTATION:
      return true;
    default:
      return false;
  }
}

sp_op *sp_data_flow_edge_of(const sp_value *owner) {
  for (const sp_use *u = owner->uses; u; u = u->next)
    if (u->owner->kind == SP_OP_SDY_DATA_FLOW_EDGE && u->index == 0 && u->owner->nresults == 1)
      return u->owner;
  return NULL;
}

static bool has_body_edges(const sp_op *op) {
  return (op->kind == SP_OP_SDY_NAMED_COMPUTATION || op->kind == SP_OP_SDY_MANUAL_COMPUTATION) &&
         op->nregions == 1 && op->regions[0].nblocks >= 1;
}

static const sp_axis_ref *manual_axes(const sp_op *op, int *n) {
  sp_attr *at = op->kind == SP_OP_SDY_MANUAL_COMPUTATION ? sp_op_attr(op, "manual_axes") : NULL;
  if (!at || at->kind != SP_ATTR_AXES) {
    *n = 0;
    return NULL;
  }
  *n = at->u.axes.n;
  return at->u.axes.v;
}

static bool is_manual(const sp_axis_ref *r, const sp_axis_ref *manual, int nmanual) {
  for (int i = 0; i < nmanual; i++)
    if (strcmp(manual[i].name, r->name) == 0) return true;
  return false;
}

/* Copies v[0..n) without manual axes into a new array; *out_n gets the count. */
static sp_axis_ref *without_manual(sp_arena *a, const sp_axis_ref *v, int n, const sp_axis_ref *manual,
                                   int nmanual, int *out_n, bool *oom) {
  *out_n = 0;
  if (!n) return NULL;
  sp_axis_ref *c = sp_arena_alloc(a, (size_t)n * sizeof *c);
  if (!c) {
    *oom = true;
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!is_manual(&v[i], manual, nmanual)) c[(*out_n)++] = v[i];
  return c;
}

sp_sharding *sp_data_flow_strip_manual_axes(sp_arena *a, const sp_sharding *s,
                                            const sp_axis_ref *manual, int nmanual) {
  if (!s || !nmanual) return (sp_sharding *)s;
  sp_sharding *c = sp_sharding_copy(a, s);
  if (!c) return NULL;
  bool oom = false;
  for (int d = 0; d < c->rank; d++)
    c->dims[d].axes = without_manual(a, s->dims[d].axes, s->dims[d].naxes, manual, nmanual,
                                     &c->dims[d].naxes, &oom);
  c->replicated = without_manual(a, s->replicated, s->nreplicated, manual, nmanual, &c->nreplicated, &oom);
  c->unreduced = without_manual(a, s->unreduced, s->nunreduced, manual, nmanual, &c->nunreduced, &oom);
  return oom ? NULL : c;
}

/* ------------------------------------------------------------------ adding edges */

/* Inserts an edge on `owner` after `anchor` (or at the top of `top` when anchor is NULL) and
 * redirects the owner's other uses to it. Returns the edge op (NULL on out-of-memory). */
static sp_op *insert_edge(sp_arena *a, sp_value *owner, sp_sharding *sharding, sp_op *anchor,
                          sp_block *top) {
  sp_op *e = sp_op_create(a, "sdy.data_flow_edge", 1, NULL, 1, &owner->type, 0);
  if (!e) return NULL;
  e->loc = owner->loc;
  e->results[0].loc = owner->loc;
  e->results[0].sharding = sharding;
  sp_value_replace_all_uses(owner, &e->results[0]);
  sp_op_set_operand(e, 0, owner);
  if (anchor) sp_op_insert_after(anchor, e);
  else if (top->first) sp_op_insert_before(top->first, e);
  else sp_block_append(top, e);
  return e;
}

/* Already has an edge (the pass may run twice, or over a new named computation). */
static bool has_edge(const sp_value *v) {
  for (const sp_use *u = v->uses; u; u = u->next)
    if (u->owner->kind == SP_OP_SDY_DATA_FLOW_EDGE) return true;
  return false;
}

static int add_edges_to_op(sp_module *m, sp_op *op, sp_err *err) {
  sp_arena *a = m->arena;
  if (has_body_edges(op)) {
    sp_block *body = op->regions[0].blocks[0];
    sp_attr *in = sp_op_attr(op, "in_shardings");
    int nmanual;
    const sp_axis_ref *manual = manual_axes(op, &nmanual);
    sp_op *anchor = NULL;
    for (int i = 0; i < body->nargs; i++) {
      sp_value *arg = body->args[i];
      if (!sp_type_is_static_tensor(arg->type) || has_edge(arg)) continue;
      sp_sharding *s = in && in->kind == SP_ATTR_SHARDINGS && i < in->u.shardings.n
                           ? in->u.shardings.v[i] : NULL;
      if (s && !(s = sp_data_flow_strip_manual_axes(a, s, manual, nmanual))) goto oom;
      if (!(anchor = insert_edge(a, arg, s, anchor, body))) goto oom;
    }
  }
  sp_op *anchor = op;
  for (int i = 0; i < op->nresults; i++) {
    sp_value *r = &op->results[i];
    if (!sp_type_is_static_tensor(r->type) || has_edge(r)) continue;
    if (!(anchor = insert_edge(a, r, r->sharding, anchor, NULL))) goto oom;
  }
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory adding data-flow edges");
}

static bool is_edge(const sp_op *op) { return op->kind == SP_OP_SDY_DATA_FLOW_EDGE; }

int sp_data_flow_edges_add_within(sp_module *m, sp_op *root, sp_err *err) {
  sp_op_list l = {.keep = sp_data_flow_is_data_flow_op};
  sp_op_walk(root, sp_op_list_collect, &l);
  int rc = l.oom ? sp_err_set(err, SP_ENOMEM, "out of memory adding data-flow edges") : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = add_edges_to_op(m, l.v[i], err);
  sp_op_list_free(&l);
  return rc;
}

int sp_data_flow_edges_add(sp_module *m, sp_err *err) {
  return sp_data_flow_edges_add_within(m, m->op, err);
}

/* ------------------------------------------------------------------ sinking edges */

/* The edge shardings of one owner op and one kind (results or body arguments). */
typedef struct owner_group {
  sp_op *op;
  bool args;             /* body arguments, else results */
  int n;
  sp_sharding **edge;    /* per owner index: the edge's sharding, NULL if none */
  bool any;
} owner_group;

/* `orig`'s manual axes leading each dim, followed by the edge's other axes. */
static sp_sharding *with_manual_prefix(sp_arena *a, const sp_sharding *edge, const sp_sharding *orig,
                                       const sp_axis_ref *manual, int nmanual) {
  if (!nmanual || !orig || orig->rank != edge->rank) return (sp_sharding *)edge;
  sp_sharding *c = sp_sharding_copy(a, orig);
  if (!c) return NULL;
  for (int d = 0; d < c->rank; d++) {
    const sp_dim_sharding *o = &orig->dims[d], *e = &edge->dims[d];
    sp_axis_ref *v = sp_arena_alloc(a, (size_t)(o->naxes + e->naxes + 1) * sizeof *v);
    if (!v) return NULL;
    int n = 0;
    for (int i = 0; i < o->naxes && is_manual(&o->axes[i], manual, nmanual); i++) v[n++] = o->axes[i];
    for (int i = 0; i < e->naxes; i++)
      if (!is_manual(&e->axes[i], manual, nmanual)) v[n++] = e->axes[i];
    c->dims[d].axes = v;
    c->dims[d].naxes = n;
    c->dims[d].closed = e->closed;
    c->dims[d].priority = e->priority;
  }
  return c;
}

static const sp_type *owner_type(const owner_group *g, int i) {
  if (g->args) return g->op->regions[0].blocks[0]->args[i]->type;
  return g->op->results[i].type;
}

static int write_back(sp_module *m, owner_group *g, sp_err *err) {
  if (!g->any) return SP_OK;
  sp_arena *a = m->arena;
  const sp_sharding *first = NULL;
  for (int i = 0; i < g->n && !first; i++) first = g->edge[i];
  int nmanual;
  const sp_axis_ref *manual = manual_axes(g->op, &nmanual);
  sp_attr *in = sp_op_attr(g->op, "in_shardings");
  if (g->args && (!in || in->kind != SP_ATTR_SHARDINGS || in->u.shardings.n != g->n)) in = NULL;
  sp_sharding **list = g->args ? sp_arena_calloc(a, (size_t)(g->n ? g->n : 1), sizeof *list) : NULL;
  if (g->args && !list) goto oom;
  for (int i = 0; i < g->n; i++) {
    sp_sharding *s = g->edge[i];
    sp_sharding *orig = g->args ? (in ? in->u.shardings.v[i] : NULL) : g->op->results[i].sharding;
    if (!s) {
      int rank = sp_sharding_rank_of(owner_type(g, i));
      s = rank < 0 ? orig : sp_sharding_open_like(a, first, rank);
      if (rank >= 0 && !s) goto oom;
    } else if (nmanual && !(s = with_manual_prefix(a, s, orig, manual, nmanual))) {
      goto oom;
    }
    if (g->args) list[i] = s;
    else g->op->results[i].sharding = s;
  }
  if (g->args) {
    sp_attr at = {.name = "in_shardings", .kind = SP_ATTR_SHARDINGS};
    at.u.shardings.n = g->n;
    at.u.shardings.v = list;
    if (sp_attrs_set(a, &g->op->attrs, &at)) goto oom;
  }
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory sinking data-flow edges");
}

/* Where an edge's input lives: the owning op, whether it is a body argument, and its index. */
static bool edge_owner(const sp_op *edge, sp_op **op, bool *is_arg, int *index) {
  sp_value *v = edge->noperands == 1 ? edge->operands[0].value : NULL;
  if (!v) return false;
  *is_arg = v->def == NULL;
  *op = v->def ? v->def : sp_block_parent_op(v->block);
  *index = v->index;
  if (!*op) return false;
  if (*is_arg) return has_body_edges(*op) && v->block == (*op)->regions[0].blocks[0];
  return true;
}

int sp_data_flow_edges_sink(sp_module *m, sp_err *err) {
  sp_op_list l = {.keep = is_edge};
  owner_group *groups = NULL;
  sp_ptr_map index_of;   /* owner key -> group index */
  sp_ptr_map_init(&index_of);
  int ngroups = 0, rc = SP_OK;
  sp_op_walk(m->op, sp_op_list_collect, &l);
  if (l.oom) goto oom;
  groups = calloc((size_t)(l.n ? l.n : 1), sizeof *groups);
  if (!groups) goto oom;
  for (int i = 0; i < l.n; i++) {
    sp_op *owner;
    bool is_arg;
    int index;
    if (!edge_owner(l.v[i], &owner, &is_arg, &index)) continue;
    /* The group is found through the owner's first result / first body argument. */
    const sp_value *key = is_arg ? owner->regions[0].blocks[0]->args[0] : &owner->results[0];
    intptr_t k = sp_ptr_map_get(&index_of, key, -1);
    owner_group *g = k >= 0 ? &groups[k] : NULL;
    if (!g) {
      if (sp_ptr_map_put(&index_of, key, ngroups)) goto oom;
      g = &groups[ngroups++];
      g->op = owner;
      g->args = is_arg;
      g->n = is_arg ? owner->regions[0].blocks[0]->nargs : owner->nresults;
      g->edge = sp_arena_calloc(m->arena, (size_t)(g->n ? g->n : 1), sizeof *g->edge);
      if (!g->edge) goto oom;
    }
    if (index < g->n && l.v[i]->results[0].sharding) {
      g->edge[index] = l.v[i]->results[0].sharding;
      g->any = true;
    }
  }
  for (int k = 0; k < ngroups && !rc; k++) rc = write_back(m, &groups[k], err);
  for (int i = 0; !rc && i < l.n; i++) {
    sp_op *e = l.v[i];
    if (e->noperands != 1 || e->nresults != 1 || !e->operands[0].value) continue;
    /* The owner is the value now: it keeps the origins recorded on the edge. */
    if (m->trace && sp_trace_move(m->trace, &e->results[0], e->operands[0].value)) goto oom;
    sp_value_replace_all_uses(&e->results[0], e->operands[0].value);
    sp_op_erase(e);
  }
  sp_ptr_map_free(&index_of);
  free(groups);
  sp_op_list_free(&l);
  return rc;
oom:
  sp_ptr_map_free(&index_of);
  free(groups);
  sp_op_list_free(&l);
  return sp_err_set(err, SP_ENOMEM, "out of memory sinking data-flow edges");
}
