/*
 * trace.c - the propagation trace: per-node axis origins and per-op edges (see trace.h).
 *
 * Nodes and ops are found through pointer maps (key -> 1 + index into a record array). A
 * node's origins sit together in one pool shared by all nodes (a node that outgrows its slots
 * moves to the pool's end with twice the room: no allocation per node, at most half the pool
 * left unused); an op's edges are a small growable array of its own. Origins and edges are
 * appended and never removed.
 */
#include "propagation/trace.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "ir/ptr_map.h"
#include "propagation/data_flow_edges.h"

typedef struct node_rec {
  int first, n, cap;        /* pool[first .. first + n) in use, cap slots reserved */
} node_rec;

typedef struct op_rec {
  int n, cap;
  sp_trace_edge *v;
} op_rec;

struct sp_trace {
  bool origins, edges;      /* what is being recorded */
  bool wanted;              /* origins asked for as data only (sp_trace_want_origins) */
  bool named;               /* constraints and manual computations are numbered */
  bool labelled;            /* ... and carry sdy.sharding_origin_name */
  int next_step;
  sp_ptr_map node_of;       /* node -> 1 + index into nodes */
  node_rec *nodes;
  int nnodes, capnodes;
  sp_axis_origin *pool;     /* every node's origins */
  int npool, cappool;
  sp_ptr_map op_of;         /* op -> 1 + index into ops */
  op_rec *ops;
  int nops, capops;
  sp_ptr_map id_of;         /* constraint / manual computation -> its number */
};

static void trace_release(struct sp_trace *t) { sp_trace_free(t); }

sp_trace *sp_trace_of(sp_module *m) {
  if (m->trace) return m->trace;
  sp_trace *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  m->trace = t;
  m->trace_free = trace_release;
  return t;
}

const sp_trace *sp_trace_get(const sp_module *m) { return m->trace; }

void sp_trace_free(sp_trace *t) {
  if (!t) return;
  free(t->pool);
  for (int i = 0; i < t->nops; i++) {
    for (int k = 0; k < t->ops[i].n; k++) free(t->ops[i].v[k].targets);
    free(t->ops[i].v);
  }
  free(t->nodes);
  free(t->ops);
  sp_ptr_map_free(&t->node_of);
  sp_ptr_map_free(&t->op_of);
  sp_ptr_map_free(&t->id_of);
  free(t);
}

bool sp_trace_records_origins(const sp_trace *t) { return t && t->origins; }
bool sp_trace_records_edges(const sp_trace *t) { return t && t->edges; }
int sp_trace_steps(const sp_trace *t) { return t ? t->next_step : 0; }

/* ------------------------------------------------------------------ records */

/* The record index of `key` in `map`, a new empty record when absent; -1 on out-of-memory. */
static int record_of(sp_ptr_map *map, const void *key, void **recs, int *n, int *cap,
                     size_t elem) {
  bool fresh;
  sp_ptr_map_slot *slot = sp_ptr_map_slot_of(map, key, 0, &fresh);  /* one probe either way */
  if (!slot) return -1;
  if (!fresh) return (int)slot->val - 1;
  if (sp_grow(recs, cap, *n, elem)) {
    return -1;        /* the key stays, mapped to 0: "no record" to every lookup */
  }
  memset((char *)*recs + (size_t)*n * elem, 0, elem);
  slot->val = *n + 1;
  return (*n)++;
}

static node_rec *node_of(sp_trace *t, const void *node) {
  int i = record_of(&t->node_of, node, (void **)&t->nodes, &t->nnodes, &t->capnodes,
                    sizeof *t->nodes);
  return i < 0 ? NULL : &t->nodes[i];
}

static op_rec *op_of(sp_trace *t, const void *op) {
  int i = record_of(&t->op_of, op, (void **)&t->ops, &t->nops, &t->capops, sizeof *t->ops);
  return i < 0 ? NULL : &t->ops[i];
}

/* ------------------------------------------------------------------ axes */

static bool axis_equal(const sp_axis_ref *a, const sp_axis_ref *b) {
  return a->pre == b->pre && a->size == b->size && strcmp(a->name, b->name) == 0;
}

static int64_t axis_size(const sp_mesh *mesh, const sp_axis_ref *r) {
  return mesh ? sp_mesh_axis_size(mesh, r->name) : 0;
}

static bool overlaps(const sp_mesh *mesh, const sp_axis_ref *a, const sp_axis_ref *b) {
  if (strcmp(a->name, b->name) != 0) return false;
  if (a->pre == b->pre && a->size == b->size) return true;  /* equal: no size needed */
  int64_t n = axis_size(mesh, a);
  return n > 0 ? sp_axis_overlaps(a, b, n) : axis_equal(a, b);
}

static bool has_axis(const sp_sharding *s, const sp_axis_ref *x) {
  for (int d = 0; s && d < s->rank; d++)
    for (int k = 0; k < s->dims[d].naxes; k++)
      if (axis_equal(&s->dims[d].axes[k], x)) return true;
  return false;
}

static bool has_overlapping(const sp_mesh *mesh, const sp_sharding *s, const sp_axis_ref *x) {
  for (int d = 0; s && d < s->rank; d++)
    for (int k = 0; k < s->dims[d].naxes; k++)
      if (overlaps(mesh, &s->dims[d].axes[k], x)) return true;
  return false;
}

/* ------------------------------------------------------------------ origins */

static const sp_origin *lookup_origin(const sp_trace *t, const sp_mesh *mesh, const void *node,
                                      const sp_axis_ref *x) {
  int n;
  const sp_axis_origin *v = sp_trace_origins(t, node, &n);
  for (int i = 0; i < n; i++)
    if (axis_equal(&v[i].axis, x)) return &v[i].origin;
  for (int i = 0; i < n; i++)
    if (overlaps(mesh, &v[i].axis, x)) return &v[i].origin;
  return NULL;
}

/* Adds axis -> origin to the node unless the node has an origin for that axis already. */
static int add_origin(sp_trace *t, const void *node, const sp_axis_ref *x, const sp_origin *o) {
  node_rec *r = node_of(t, node);
  if (!r) return SP_ENOMEM;
  for (int i = 0; i < r->n; i++)
    if (axis_equal(&t->pool[r->first + i].axis, x)) return SP_OK;
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 2;
    if (sp_grow((void **)&t->pool, &t->cappool, t->npool + cap - 1, sizeof *t->pool))
      return SP_ENOMEM;
    if (r->n) memcpy(&t->pool[t->npool], &t->pool[r->first], (size_t)r->n * sizeof *t->pool);
    r->first = t->npool;
    r->cap = cap;
    t->npool += cap;
  }
  sp_axis_origin *e = &t->pool[r->first + r->n++];
  e->axis = *x;
  e->origin = *o;
  return SP_OK;
}

/* Every axis of `s` gets origin `o` on `node`. */
static int own_axes(sp_trace *t, const void *node, const sp_sharding *s, const sp_origin *o) {
  for (int d = 0; s && d < s->rank; d++)
    for (int k = 0; k < s->dims[d].naxes; k++) {
      int rc = add_origin(t, node, &s->dims[d].axes[k], o);
      if (rc) return rc;
    }
  return SP_OK;
}

const sp_axis_origin *sp_trace_origins(const sp_trace *t, const void *node, int *n) {
  intptr_t k = t ? sp_ptr_map_get(&t->node_of, node, 0) : 0;
  *n = k ? t->nodes[k - 1].n : 0;
  return k && *n ? &t->pool[t->nodes[k - 1].first] : NULL;
}

const sp_trace_edge *sp_trace_edges(const sp_trace *t, const void *op, int *n) {
  intptr_t k = t ? sp_ptr_map_get(&t->op_of, op, 0) : 0;
  *n = k ? t->ops[k - 1].n : 0;
  return k ? t->ops[k - 1].v : NULL;
}

void sp_trace_origin_print(sp_strbuf *sb, const sp_origin *o, const void *node) {
  if (o->owner == node) {
    sp_strbuf_puts(sb, "self");
    return;
  }
  switch (o->kind) {
    case SP_ORIGIN_INPUT: sp_strbuf_printf(sb, "input: %d", o->index); return;
    case SP_ORIGIN_OUTPUT: sp_strbuf_printf(sb, "output: %d", o->index); return;
    case SP_ORIGIN_CONSTRAINT: sp_strbuf_printf(sb, "constraint_%d", o->id); return;
    case SP_ORIGIN_MC_INPUT: sp_strbuf_printf(sb, "mc_%d_input: %d", o->id, o->index); return;
    case SP_ORIGIN_MC_OUTPUT: sp_strbuf_printf(sb, "mc_%d_output: %d", o->id, o->index); return;
  }
}

const void *sp_trace_func_result_node(const sp_op *fn, int i) {
  if (!fn->func || i >= fn->func->nresults || !fn->nregions || !fn->regions[0].nblocks) return NULL;
  const sp_op *ret = fn->regions[0].blocks[0]->last;
  if (!ret || ret->kind != SP_OP_FUNC_RETURN || i >= ret->noperands) return NULL;
  return ret->operands[i].value;
}

/* ------------------------------------------------------------------ naming */

/* The result of the sdy.data_flow_edge on `owner`, or `owner` itself. */
static sp_value *edge_node(sp_value *owner) {
  sp_op *e = sp_data_flow_edge_of(owner);
  return e ? &e->results[0] : owner;
}

typedef struct namer {
  sp_module *m;
  sp_trace *t;
  bool label;               /* write sdy.sharding_origin_name */
  int nconstraints, nmc;
  size_t nvalues;           /* op results seen: what the origins will be keyed by */
  int rc;
} namer;

static int set_name(sp_module *m, sp_op *op, const char *fmt, int id) {
  sp_attr at = {.name = "sdy.sharding_origin_name", .kind = SP_ATTR_STR};
  if (!(at.u.s = sp_arena_printf(m->arena, fmt, id))) return SP_ENOMEM;
  return sp_attrs_set(m->arena, &op->attrs, &at);
}

static int name_manual(namer *nm, sp_op *op) {
  int id = nm->nmc++;
  int rc = nm->label ? set_name(nm->m, op, "mc_%d", id) : SP_OK;
  if (!rc) rc = sp_ptr_map_put(&nm->t->id_of, op, id);
  const sp_attr *in = sp_op_attr(op, "in_shardings");
  sp_block *body = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
  for (int i = 0; !rc && body && i < body->nargs; i++) {
    const sp_sharding *s = in && in->kind == SP_ATTR_SHARDINGS && i < in->u.shardings.n
                               ? in->u.shardings.v[i]
                               : NULL;
    sp_value *node = edge_node(body->args[i]);
    sp_origin o = {SP_ORIGIN_MC_INPUT, i, id, node};
    rc = own_axes(nm->t, node, s, &o);
  }
  for (int i = 0; !rc && i < op->nresults; i++) {
    sp_value *node = edge_node(&op->results[i]);
    sp_origin o = {SP_ORIGIN_MC_OUTPUT, i, id, node};
    rc = own_axes(nm->t, node, op->results[i].sharding, &o);
  }
  return rc;
}

static bool name_op(sp_op *op, void *ctx) {
  namer *nm = ctx;
  nm->nvalues += (size_t)op->nresults;
  if (op->kind == SP_OP_FUNC && op->func && op->nregions && op->regions[0].nblocks) {
    sp_block *b = op->regions[0].blocks[0];
    for (int i = 0; !nm->rc && i < b->nargs; i++) {
      sp_origin o = {SP_ORIGIN_INPUT, i, 0, b->args[i]};
      nm->rc = own_axes(nm->t, b->args[i], b->args[i]->sharding, &o);
    }
    for (int i = 0; !nm->rc && i < op->func->nresults; i++) {
      const void *node = sp_trace_func_result_node(op, i);
      sp_origin o = {SP_ORIGIN_OUTPUT, i, 0, sp_trace_func_result(op, i)};
      if (node) nm->rc = own_axes(nm->t, node, op->func->result_shardings[i], &o);
    }
  } else if (op->kind == SP_OP_SDY_SHARDING_CONSTRAINT && op->nresults == 1) {
    int id = nm->nconstraints++;
    sp_origin o = {SP_ORIGIN_CONSTRAINT, 0, id, &op->results[0]};
    nm->rc = nm->label ? set_name(nm->m, op, "constraint_%d", id) : SP_OK;
    if (!nm->rc) nm->rc = sp_ptr_map_put(&nm->t->id_of, op, id);
    if (!nm->rc) nm->rc = own_axes(nm->t, &op->results[0], op->results[0].sharding, &o);
  } else if (op->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
    nm->rc = name_manual(nm, op);
  }
  return nm->rc == SP_OK;
}

/* Writes sdy.sharding_origin_name on the ops numbered earlier without it. */
static bool label_op(sp_op *op, void *ctx) {
  namer *nm = ctx;
  intptr_t id = sp_ptr_map_get(&nm->t->id_of, op, -1);
  if (id < 0) return true;
  nm->rc = set_name(nm->m, op, op->kind == SP_OP_SDY_MANUAL_COMPUTATION ? "mc_%d" : "constraint_%d",
                    (int)id);
  return nm->rc == SP_OK;
}

int sp_trace_want_origins(sp_module *m, sp_err *err) {
  sp_trace *t = sp_trace_of(m);
  if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory starting the propagation trace");
  t->wanted = true;
  return SP_OK;
}

bool sp_trace_wants_origins(const sp_module *m) { return m->trace && m->trace->wanted; }

int sp_trace_enable(sp_module *m, bool origins, bool edges, sp_err *err) {
  bool wanted = m->trace && m->trace->wanted;
  if (!origins && !edges && !wanted) return SP_OK;
  sp_trace *t = sp_trace_of(m);
  if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory starting the propagation trace");
  t->edges = t->edges || edges;
  if (!origins && !wanted) return SP_OK;
  namer nm = {m, t, origins, 0, 0, 0, SP_OK};
  if (!t->named) {
    t->origins = t->named = true;
    t->labelled = origins;
    sp_op_walk(m->op, name_op, &nm);
    /* Room for an origin on every op result: no rehash while propagating. */
    if (!nm.rc && sp_ptr_map_reserve(&t->node_of, nm.nvalues)) nm.rc = SP_ENOMEM;
  } else if (origins && !t->labelled) {
    t->labelled = true;
    sp_op_walk(m->op, label_op, &nm);
  }
  return nm.rc ? sp_err_set(err, nm.rc, "out of memory naming sharding origins") : SP_OK;
}

int sp_trace_move(sp_trace *t, const void *from, const void *to) {
  int n;
  const sp_axis_origin *v = t && t->origins ? sp_trace_origins(t, from, &n) : NULL;
  for (int i = 0; v && i < n; i++) {
    sp_origin o = v[i].origin;
    if (o.owner == from) o.owner = to;
    sp_axis_ref axis = v[i].axis;
    int rc = add_origin(t, to, &axis, &o);   /* may grow the records: v is re-read */
    if (rc) return rc;
    v = sp_trace_origins(t, from, &n);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ steps */

/* One axis moved in a step: from `source` to `targets`. */
typedef struct moved {
  sp_axis_ref axis;
  sp_edge_end source;
  int ntargets;
  sp_edge_end *targets;
} moved;

static sp_edge_end end_of(int i, int noperands) {
  sp_edge_end e = {i >= noperands, i >= noperands ? i - noperands : i};
  return e;
}

/* Tensor s held, before the step, an axis overlapping every axis of `dim`. */
static bool covers(const sp_mesh *mesh, const sp_sharding *s, const sp_dim_sharding *dim) {
  if (!s) return false;
  for (int k = 0; k < dim->naxes; k++)
    if (!has_overlapping(mesh, s, &dim->axes[k])) return false;
  return true;
}

/* Where the axis `x` of dim `dim` of tensor `i` came from, or -1. */
static int source_of(const sp_mesh *mesh, int n, sp_sharding *const *before, int i,
                     const sp_dim_sharding *dim, const sp_axis_ref *x) {
  for (int s = 0; s < n; s++)
    if (s != i && covers(mesh, before[s], dim)) return s;
  for (int s = 0; s < n; s++)
    if (s != i && has_overlapping(mesh, before[s], x)) return s;
  return -1;
}

static int cmp_moved_mesh(const moved *a, const moved *b, const sp_mesh *mesh) {
  return sp_axis_compare(&a->axis, &b->axis, mesh);
}

static void sort_moved(moved *v, int n, const sp_mesh *mesh) {
  for (int i = 1; i < n; i++) {
    moved x = v[i];
    int j = i - 1;
    while (j >= 0 && cmp_moved_mesh(&v[j], &x, mesh) > 0) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

/* Keeps the first record per axis of `op`; takes ownership of each entry's targets. */
static int keep_edges(sp_trace *t, const void *op, int step, moved *v, int n) {
  op_rec *r = t->edges ? op_of(t, op) : NULL;
  int rc = t->edges && !r ? SP_ENOMEM : SP_OK;
  for (int i = 0; i < n; i++) {
    bool known = !r || rc;
    for (int k = 0; !known && k < r->n; k++) known = axis_equal(&r->v[k].axis, &v[i].axis);
    if (!known && sp_grow((void **)&r->v, &r->cap, r->n, sizeof *r->v)) rc = SP_ENOMEM;
    if (known || rc) {
      free(v[i].targets);
      continue;
    }
    sp_trace_edge e = {step, v[i].axis, v[i].source, v[i].ntargets, v[i].targets};
    r->v[r->n++] = e;
  }
  return rc;
}

static moved *find_moved(moved *v, int n, const sp_axis_ref *x) {
  for (int i = 0; i < n; i++)
    if (axis_equal(&v[i].axis, x)) return &v[i];
  return NULL;
}

static int add_target(moved *m, sp_edge_end e, int cap) {
  for (int k = 0; k < m->ntargets; k++)
    if (m->targets[k].result == e.result && m->targets[k].index == e.index) return SP_OK;
  if (!m->targets && !(m->targets = malloc((size_t)cap * sizeof *m->targets))) return SP_ENOMEM;
  m->targets[m->ntargets++] = e;
  return SP_OK;
}

/* Records axis x gained by tensor i (dim `dim`) in this step. */
static int gained(sp_trace *t, const sp_mesh *mesh, int noperands, int n,
                  const void *const *nodes, sp_sharding *const *before, int i,
                  const sp_dim_sharding *dim, const sp_axis_ref *x, moved *v, int *nv) {
  int s = source_of(mesh, n, before, i, dim, x);
  if (s < 0) return SP_OK;
  if (t->origins && nodes[s]) {
    const sp_origin *o = lookup_origin(t, mesh, nodes[s], x);
    if (o) {
      sp_origin copy = *o;
      int rc = add_origin(t, nodes[i], x, &copy);
      if (rc) return rc;
    }
  }
  if (!v) return SP_OK; /* origins only */
  moved *m = find_moved(v, *nv, x);
  if (!m) {
    m = &v[(*nv)++];
    m->axis = *x;
    m->source = end_of(s, noperands);
    m->ntargets = 0;
    m->targets = NULL;
  }
  return add_target(m, end_of(i, noperands), n);
}

static int count_axes(const sp_sharding *s) {
  int k = 0;
  for (int d = 0; s && d < s->rank; d++) k += s->dims[d].naxes;
  return k;
}

int sp_trace_step(sp_trace *t, const sp_mesh *mesh, const void *op, int noperands, int nresults,
                  const void *const *nodes, sp_sharding *const *before,
                  sp_sharding *const *after) {
  if (!t || (!t->origins && !t->edges)) return SP_OK;
  int n = noperands + nresults, cap = 0;
  for (int i = 0; i < n; i++) cap += after[i] ? count_axes(after[i]) : 0;
  if (!cap) return SP_OK;
  /* Recording origins only (the plan's default) needs no edge list. */
  moved *v = t->edges ? calloc((size_t)cap, sizeof *v) : NULL;
  if (t->edges && !v) return SP_ENOMEM;
  int nv = 0, rc = SP_OK;
  bool any = false;
  for (int i = 0; i < n && !rc; i++) {
    const sp_sharding *a = nodes[i] ? after[i] : NULL;
    for (int d = 0; a && d < a->rank && !rc; d++)
      for (int k = 0; k < a->dims[d].naxes && !rc; k++) {
        const sp_axis_ref *x = &a->dims[d].axes[k];
        if (has_axis(before[i], x)) continue;
        any = true;
        rc = gained(t, mesh, noperands, n, nodes, before, i, &a->dims[d], x, v, &nv);
      }
  }
  if (!any || rc) {
    for (int i = 0; i < nv; i++) free(v[i].targets);
    free(v);
    return rc;
  }
  int step = t->next_step++;
  if (!v) return SP_OK;
  sort_moved(v, nv, mesh);
  rc = keep_edges(t, op, step, v, nv);
  free(v);
  return rc;
}

int sp_trace_applied(sp_trace *t, const sp_mesh *mesh, sp_op *anchor, int index, sp_op *edge_op,
                     sp_value *x, const sp_sharding *s) {
  if (!t || (!t->origins && !t->edges) || !s) return SP_OK;
  int naxes = count_axes(s);
  if (!naxes) return SP_OK;
  int rc = SP_OK;
  if (t->origins) {
    int id = (int)sp_ptr_map_get(&t->id_of, anchor, 0);
    sp_origin o = {SP_ORIGIN_CONSTRAINT, 0, id, &anchor->results[0]};
    if (anchor->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
      sp_block *body = anchor->nregions && anchor->regions[0].nblocks
                           ? anchor->regions[0].blocks[0]
                           : NULL;
      if (!body || index >= body->nargs) return SP_OK;
      o.kind = SP_ORIGIN_MC_INPUT;
      o.index = index;
      o.owner = edge_node(body->args[index]);
    }
    rc = own_axes(t, x, s, &o);
  }
  int step = t->next_step++;
  if (rc || !t->edges) return rc;
  moved *v = calloc((size_t)naxes, sizeof *v);
  if (!v) return SP_ENOMEM;
  int nv = 0;
  for (int d = 0; d < s->rank && !rc; d++)
    for (int k = 0; k < s->dims[d].naxes && !rc; k++) {
      moved *m = &v[nv++];
      m->axis = s->dims[d].axes[k];
      m->source = end_of(1, 1);
      rc = add_target(m, end_of(0, 1), 1);
    }
  sort_moved(v, nv, mesh);
  if (!rc) rc = keep_edges(t, edge_op, step, v, nv);
  else
    for (int i = 0; i < nv; i++) free(v[i].targets);
  free(v);
  return rc;
}
