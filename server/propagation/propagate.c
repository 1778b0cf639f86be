/*
 * propagate.c - the worklist fixed point over a module (see propagate.h).
 *
 * Ops are numbered in pre-order once per session; an op's number is kept in op->pass_index
 * (checked against the numbering, so a stale one is harmless), and one op_state per number
 * holds the cached rule and the "pending", "erased" and "clean" flags; the stack holds every
 * op at most once, so it never needs more than one slot per op. Calls are indexed by callee
 * (for func data-flow edges) and sharding group members by value, both only when the module
 * has any. Rules come from the session's rule cache (rule_cache.h: found again by op
 * signature, interned) and are attached to the ops when the session ends, if they are kept;
 * visits of ops with rules take their outcome from the session's memo (prop_memo.h) when the
 * same rule and shardings were met before and no conflict log is being kept. All of this is
 * malloc'd by the driver and freed with the session; the module only gains shardings and rule
 * attributes (in its own arena) and loses dead pure ops.
 *
 * Speed: on a large module nearly every op and value a visit touches is a cache miss, so the
 * per-op state is one small struct, per-visit arrays are reused, and nothing is looked up in
 * a hash table per push.
 *
 * Where a sharding lives: every value holds its own (value->sharding), except the arguments of
 * a while's body and condition, whose sharding is the one of the data-flow edge on the
 * matching while result (slot()). All reads and writes go through slot().
 */
#include "propagation/propagate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "ir/diag.h"
#include "ir/op_attrs.h"
#include "ir/ptr_map.h"
#include "ir/run_ctl.h"
#include "propagation/prop_memo.h"
#include "propagation/rule_cache.h"
#include "propagation/trace.h"

/* The scratch arena is replaced once it holds this much: one op's factor table and its
 * temporaries are a few KiB, so this recycles it every few thousand visits. */
#define SCRATCH_RECYCLE_BYTES (4u << 20)

enum { RULE_UNKNOWN = 0, RULE_PRESENT, RULE_NONE };

/* ------------------------------------------------------------------ the driver */

typedef struct group {
  int n;
  sp_value **members;         /* slots of the member values, first-seen order */
} group;

/* What the session knows about one op; all of it in one place, so that looking at an op
 * touches one cache line. */
typedef struct op_state {
  sp_rule *rule;              /* valid when rule_state == RULE_PRESENT */
  unsigned char rule_state;   /* RULE_* */
  bool pointwise;             /* with a rule: is_simple_rule() */
  bool session_rule;          /* the rule is this session's, to attach when it ends */
  bool pending;               /* on the stack */
  bool erased;
  /* The op's last visit found nothing any strategy or direction could move (no rule, no
   * common mesh, or every factor's axes equal in all its tensors), and it has not been pushed
   * since (a push is how every change around an op is announced). Runs after the first start
   * with the ops that are not clean only; popping a clean op would do nothing. */
  bool clean;
} op_state;

/* Arrays one visit of an op with a rule works in, reused from visit to visit (a visit never
 * starts another). */
typedef struct visit_buffers {
  int cap_tensors, cap_factors;
  sp_value **slots;           /* [cap_tensors] */
  sp_sharding **in, **out;    /* [cap_tensors] */
  const sp_dim_sharding **seen;  /* [cap_factors] */
  sp_prop_direction *dirs;    /* [cap_factors] */
} visit_buffers;

/* The driver is the session of one pass: numbering, rule cache, erased flags and indexes are
 * built once and reused by every fixed point of the pass; `o`, `log`, `stats` and the stack are
 * per fixed point. */
struct sp_propagate_session {
  sp_module *m;
  sp_op *main_fn;
  const sp_propagate_options *o;
  sp_conflict_log *log;
  sp_propagate_stats *stats;
  sp_arena *scratch;
  int nops;
  sp_op **ops;                /* pre-order */
  op_state *st;               /* per op */
  int *stack;
  int nstack;
  sp_op *current;             /* the op being visited: never pushed */
  int current_idx;
  visit_buffers vb;
  sp_rule_cache *rule_cache;  /* rules attached by this session (rule_cache.h) */
  sp_prop_memo *memo;         /* outcomes of visits with rules (prop_memo.h) */
  const char *mesh_name;      /* last mesh looked up by name */
  const sp_mesh *mesh;
  /* Calls by callee: first_call[func number] -> call number, next_call[call number]. */
  bool has_calls;
  int *first_call;
  int *next_call;
  /* Sharding groups: slot value -> group number. */
  int ngroups;
  group *groups;
  sp_ptr_map groupmap;
  bool syncing_group;         /* while copying a sharding to a group's members */
  int runs;                   /* fixed points completed */
  int ngroup_ops, capgroup_ops;
  sp_op **group_ops;          /* sdy.sharding_group ops with an operand, pre-order */
  sp_trace *trace;            /* the module's trace while it records (trace.h), else NULL */
  /* Pass prologue (sessions created with `prepare`): */
  bool prepare;
  int prologue_status;
  sp_err *err;
};

typedef struct sp_propagate_session driver;

/* ------------------------------------------------------------------ op structure helpers */

static bool is_terminator(const sp_op *op) {
  return op->kind == SP_OP_FUNC_RETURN || op->kind == SP_OP_RETURN || op->kind == SP_OP_SDY_RETURN;
}

static bool is_named_or_manual(const sp_op *op) {
  return op->kind == SP_OP_SDY_NAMED_COMPUTATION || op->kind == SP_OP_SDY_MANUAL_COMPUTATION;
}

/* The terminator of region `r` of `op` (its first block's last op), or NULL. */
static sp_op *region_terminator(const sp_op *op, int r) {
  if (r >= op->nregions || !op->regions[r].nblocks) return NULL;
  sp_op *t = op->regions[r].blocks[0]->last;
  return t && is_terminator(t) ? t : NULL;
}

/* The result of the first sdy.data_flow_edge op that takes `owner` as its input, or NULL. */
static sp_value *edge_on(const sp_value *owner) {
  for (const sp_use *u = owner->uses; u; u = u->next)
    if (u->owner->kind == SP_OP_SDY_DATA_FLOW_EDGE && u->index == 0 && u->owner->nresults == 1)
      return &u->owner->results[0];
  return NULL;
}

/* Which region of its parent op a block belongs to (-1 if unknown). */
static int region_index(const sp_block *b) {
  sp_op *p = sp_block_parent_op(b);
  if (!p) return -1;
  for (int r = 0; r < p->nregions; r++)
    if (&p->regions[r] == b->parent) return r;
  return -1;
}

/* The value whose `sharding` field holds the sharding of `v`. */
static sp_value *slot(sp_value *v) {
  if (!v || v->def || !v->block) return v;
  sp_op *p = sp_block_parent_op(v->block);
  if (p && p->kind == SP_OP_WHILE && v->index < p->nresults) {
    sp_value *e = edge_on(&p->results[v->index]);
    if (e) return e;
  }
  return v;
}

sp_sharding *sp_propagate_live_sharding(sp_value *v) {
  v = slot(v);
  return v ? v->sharding : NULL;
}

/* The func.func a func.call names, or NULL. */
static sp_op *callee_of(const sp_module *m, const sp_op *call) {
  const char *name = sp_op_get_str(call, "callee");
  return name ? sp_module_lookup_func(m, name) : NULL;
}

/* The func.func whose entry block holds `v`, or NULL. */
static sp_op *func_of_arg(const sp_value *v) {
  if (v->def || !v->block) return NULL;
  sp_op *p = sp_block_parent_op(v->block);
  return p && p->kind == SP_OP_FUNC ? p : NULL;
}

/* Ops without side effects whose results, once unused, make them dead. */
static bool is_pure(const sp_op *op) {
  if (sp_rules_is_elementwise(op)) return true;
  switch (op->kind) {
    case SP_OP_CONSTANT:
    case SP_OP_SDY_CONSTANT:
    case SP_OP_IOTA:
    case SP_OP_BROADCAST_IN_DIM:
    case SP_OP_CONCATENATE:
    case SP_OP_CONVOLUTION:
    case SP_OP_DOT:
    case SP_OP_DOT_GENERAL:
    case SP_OP_DYNAMIC_SLICE:
    case SP_OP_DYNAMIC_UPDATE_SLICE:
    case SP_OP_FFT:
    case SP_OP_GATHER:
    case SP_OP_PAD:
    case SP_OP_REDUCE:
    case SP_OP_REDUCE_WINDOW:
    case SP_OP_RESHAPE:
    case SP_OP_REVERSE:
    case SP_OP_SCATTER:
    case SP_OP_SELECT_AND_SCATTER:
    case SP_OP_SLICE:
    case SP_OP_SORT:
    case SP_OP_TRANSPOSE:
    case SP_OP_CHOLESKY:
    case SP_OP_TRIANGULAR_SOLVE:
    case SP_OP_BATCH_NORM_INFERENCE:
    case SP_OP_BATCH_NORM_TRAINING:
    case SP_OP_BATCH_NORM_GRAD:
    case SP_OP_GET_TUPLE_ELEMENT:
    case SP_OP_TUPLE:
    case SP_OP_SDY_RESHARD:
      return true;
    default:
      return false;
  }
}

static bool results_unused(const sp_op *op) {
  for (int r = 0; r < op->nresults; r++)
    if (op->results[r].uses) return false;
  return true;
}

/* ------------------------------------------------------------------ numbering */

typedef struct collect {
  driver *d;
  int n, cap;
  bool oom;
} collect;

static bool static_or_opaque(const sp_type *t) {
  if (!t) return true;
  if (t->kind == SP_TYPE_TUPLE) return false;
  return t->kind != SP_TYPE_TENSOR || sp_type_is_static_tensor(t);
}

/* The pass prologue's look at one op: Shardy's precondition that every op result is a ranked
 * tensor of static shape (tokens and other non-tensor types are let through, tuples are not),
 * and the sharding_group ops. */
static bool prologue_op(driver *d, const sp_op *op) {
  for (int r = 0; r < op->nresults; r++)
    if (!static_or_opaque(op->results[r].type)) {
      d->prologue_status = sp_err_set(d->err, SP_EINVAL,
                                      "%s:%d:%d: Shardy propagation only supports ranked tensors "
                                      "with a static shape (result %d of '%s')",
                                      d->m->filename, op->loc.line, op->loc.col, r, op->name);
      return false;
    }
  return true;
}

/* Appends a sdy.sharding_group op (with its one operand) to d->group_ops. */
static bool record_group_op(driver *d, sp_op *op) {
  if (d->ngroup_ops == d->capgroup_ops) {
    int cap = d->capgroup_ops ? 2 * d->capgroup_ops : 16;
    sp_op **v = realloc(d->group_ops, (size_t)cap * sizeof *v);
    if (!v) return false;
    d->group_ops = v;
    d->capgroup_ops = cap;
  }
  d->group_ops[d->ngroup_ops++] = op;
  return true;
}

/* Appends every op but the module, in pre-order, to d->ops (grown by doubling), numbers it
 * and notes the sharding_group ops; with a prologue, checks it on the way (one walk over the
 * module per pass: on a large module each op touched is a cache miss). */
static bool record_op(sp_op *op, void *ctx) {
  collect *c = ctx;
  driver *d = c->d;
  if (op == d->m->op) return true;
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 1024;
    sp_op **v = realloc(d->ops, (size_t)cap * sizeof *v);
    if (!v) {
      c->oom = true;
      return false;
    }
    d->ops = v;
    c->cap = cap;
  }
  op->pass_index = c->n;
  d->ops[c->n++] = op;
  if (op->kind == SP_OP_FUNC_CALL) d->has_calls = true;
  if (op->kind == SP_OP_SDY_SHARDING_GROUP && op->noperands == 1 && op->operands[0].value &&
      !record_group_op(d, op)) {
    c->oom = true;
    return false;
  }
  return !d->prepare || prologue_op(d, op);
}

/* The session's number of `op`, or -1 for an op it did not number (the module op, an op of
 * another module). Numbers live in op->pass_index; the check against d->ops makes a stale
 * one harmless. */
static int op_number(const driver *d, const sp_op *op) {
  if (!op) return -1;
  int i = op->pass_index;
  return i >= 0 && i < d->nops && d->ops[i] == op ? i : -1;
}

static int index_calls(driver *d, sp_err *err) {
  size_t n = (size_t)(d->nops ? d->nops : 1);
  d->first_call = malloc(n * sizeof *d->first_call);
  d->next_call = malloc(n * sizeof *d->next_call);
  if (!d->first_call || !d->next_call)
    return sp_err_set(err, SP_ENOMEM, "out of memory indexing calls");
  for (int i = 0; i < d->nops; i++) d->first_call[i] = d->next_call[i] = -1;
  /* Walk backwards so that each list ends up in textual order. */
  for (int i = d->nops - 1; i >= 0; i--) {
    if (d->ops[i]->kind != SP_OP_FUNC_CALL) continue;
    sp_op *g = callee_of(d->m, d->ops[i]);
    int gi = g ? op_number(d, g) : -1;
    if (gi < 0) continue;
    d->next_call[i] = d->first_call[gi];
    d->first_call[gi] = i;
  }
  return SP_OK;
}

/* Numbers the module's ops (pre-order) and sizes the per-op arrays. */
static int number_ops(driver *d, sp_err *err) {
  collect c = {d, 0, 0, false};
  d->has_calls = false;
  sp_op_walk(d->m->op, record_op, &c);
  if (d->prologue_status) return d->prologue_status;
  d->nops = c.n;
  size_t n = (size_t)(d->nops ? d->nops : 1);
  d->st = calloc(n, sizeof *d->st);
  d->stack = malloc(n * sizeof *d->stack);
  if (c.oom || !d->st || !d->stack)
    return sp_err_set(err, SP_ENOMEM, "out of memory numbering %d ops", d->nops);
  return d->has_calls ? index_calls(d, err) : SP_OK;
}

/* ------------------------------------------------------------------ sharding groups */

/* The dense number of group id `id` (ids numbered in first-seen order). */
static int group_number(int64_t *ids, int *nids, int64_t id) {
  for (int i = 0; i < *nids; i++)
    if (ids[i] == id) return i;
  ids[*nids] = id;
  return (*nids)++;
}

/* Indexes the module's sharding groups: member slot values per group, and slot -> group. */
static int index_groups(driver *d, sp_err *err) {
  int n = d->ngroup_ops;
  if (!n) return SP_OK;
  int64_t *ids = malloc((size_t)n * sizeof *ids);
  int *gnum = malloc((size_t)n * sizeof *gnum);
  int *counts = calloc((size_t)n, sizeof *counts);
  d->groups = calloc((size_t)n, sizeof *d->groups);
  sp_value **pool = malloc((size_t)n * sizeof *pool);
  int rc = SP_OK, nids = 0, k = 0;
  if (!ids || !gnum || !counts || !d->groups || !pool || sp_ptr_map_reserve(&d->groupmap, (size_t)n)) {
    free(pool);
    rc = sp_err_set(err, SP_ENOMEM, "out of memory indexing sharding groups");
    goto out;
  }
  for (int i = 0; i < n; i++) {
    const sp_op *op = d->group_ops[i];
    int64_t id = 0;
    sp_op_get_int(op, "group_id", &id);
    gnum[k] = group_number(ids, &nids, id);
    counts[gnum[k++]]++;
  }
  for (int g = 0, off = 0; g < nids; g++) {
    d->groups[g].members = pool + off; /* groups[0].members == pool: freed through it */
    off += counts[g];
  }
  d->ngroups = nids;
  k = 0;
  for (int i = 0; i < n; i++) {
    const sp_op *op = d->group_ops[i];
    group *gr = &d->groups[gnum[k++]];
    sp_value *v = slot(op->operands[0].value);
    if ((int)sp_ptr_map_get(&d->groupmap, v, -1) >= 0) continue; /* a value belongs to one group */
    sp_ptr_map_put(&d->groupmap, v, gr - d->groups); /* reserved: cannot fail */
    gr->members[gr->n++] = v;
  }
out:
  free(ids);
  free(gnum);
  free(counts);
  return rc;
}

/* ------------------------------------------------------------------ worklist */

static void push_one(driver *d, sp_op *op) {
  if (!op || op == d->current) return;
  int i = op_number(d, op);
  if (i < 0) return;
  op_state *st = &d->st[i];
  st->clean = false;
  if (st->pending || st->erased) return;
  st->pending = true;
  d->stack[d->nstack++] = i;
}

/* Pushes `op`, then its ancestors up to (not including) the module. */
static void push(driver *d, sp_op *op) {
  for (; op && op != d->m->op; op = sp_op_parent(op)) push_one(d, op);
}

static void push_users(driver *d, const sp_value *v);

/* Pushes what a use of a changed value affects (see propagate.h). */
static void push_use(driver *d, const sp_use *u) {
  sp_op *user = u->owner;
  int k = u->index;
  switch (user->kind) {
    case SP_OP_WHILE:
    case SP_OP_OPTIMIZATION_BARRIER:
      if (k < user->nresults) {
        sp_value *e = edge_on(&user->results[k]);
        if (e) push(d, e->def);
      }
      push(d, user);
      return;
    case SP_OP_SDY_NAMED_COMPUTATION:
    case SP_OP_SDY_MANUAL_COMPUTATION:
      if (user->nregions && user->regions[0].nblocks) {
        sp_block *b = user->regions[0].blocks[0];
        if (k < b->nargs) {
          sp_value *e = edge_on(b->args[k]);
          if (e) push(d, e->def);
        }
      }
      push(d, user);
      return;
    case SP_OP_FUNC_CALL: {
      sp_op *g = callee_of(d->m, user);
      if (g && g->nregions && g->regions[0].nblocks && k < g->regions[0].blocks[0]->nargs)
        push_users(d, g->regions[0].blocks[0]->args[k]);
      push(d, user);
      return;
    }
    case SP_OP_FUNC_RETURN: {
      sp_op *g = sp_op_parent(user);
      int gi = g && d->has_calls ? op_number(d, g) : -1;
      for (int c = gi >= 0 ? d->first_call[gi] : -1; c >= 0; c = d->next_call[c])
        if (k < d->ops[c]->nresults) push_users(d, &d->ops[c]->results[k]);
      push(d, g);
      return;
    }
    case SP_OP_RETURN:
    case SP_OP_SDY_RETURN: {
      sp_op *p = sp_op_parent(user);
      if (!p) return;
      bool feeds_edge = p->kind == SP_OP_CASE || is_named_or_manual(p) ||
                        (p->kind == SP_OP_WHILE && region_index(user->block) == 1);
      if (feeds_edge && k < p->nresults) {
        sp_value *e = edge_on(&p->results[k]);
        if (e) push(d, e->def);
      }
      push(d, p);
      return;
    }
    default:
      push(d, user);
  }
}

static void push_users(driver *d, const sp_value *v) {
  for (const sp_use *u = v->uses; u; u = u->next) push_use(d, u);
}

static int set_sharding(driver *d, sp_value *v, sp_sharding *s);

/* Pushes the ops next to a slot value whose sharding changed, then syncs its group. */
static int notify(driver *d, sp_value *v) {
  d->stats->updates++;
  /* (i) an edge's other targets: a while's body and condition arguments. */
  if (v->def && v->def->kind == SP_OP_SDY_DATA_FLOW_EDGE && v->def->noperands == 1) {
    sp_value *owner = v->def->operands[0].value;
    sp_op *w = owner ? owner->def : NULL;
    if (w && w->kind == SP_OP_WHILE)
      for (int r = 0; r < w->nregions; r++)
        if (w->regions[r].nblocks && owner->index < w->regions[r].blocks[0]->nargs)
          push_users(d, w->regions[r].blocks[0]->args[owner->index]);
  }
  /* (ii) the defining op, or the op owning the block. */
  push(d, v->def ? v->def : sp_block_parent_op(v->block));
  /* (iii) the users. */
  push_users(d, v);
  /* The value's sharding group. */
  int g = d->ngroups && !d->syncing_group ? (int)sp_ptr_map_get(&d->groupmap, v, -1) : -1;
  if (g < 0) return SP_OK;
  d->syncing_group = true;
  int rc = SP_OK;
  for (int i = 0; i < d->groups[g].n && rc == SP_OK; i++) {
    sp_value *w = d->groups[g].members[i];
    if (w != v && !sp_sharding_equal(w->sharding, v->sharding)) rc = set_sharding(d, w, v->sharding);
  }
  d->syncing_group = false;
  return rc;
}

/* Stores a new sharding in slot value `v` and notifies. */
static int set_sharding(driver *d, sp_value *v, sp_sharding *s) {
  v->sharding = s;
  return notify(d, v);
}

/* ------------------------------------------------------------------ errors and checks */

/* Prefixes the message in `err` with the op's place and name; returns `rc`. */
static int op_error(const driver *d, const sp_op *op, int rc, sp_err *err) {
  if (!err) return rc;
  char msg[SP_ERR_MSG_MAX];
  memcpy(msg, err->msg, sizeof msg);
  sp_err_set(err, rc, "%s:%d:%d: op '%s': %s", d->m->filename, op->loc.line, op->loc.col,
             op->name, msg);
  return rc;
}

static sp_op *main_func(const sp_module *m, sp_err *err) {
  sp_op *f = sp_module_main_func(m);
  int nfuncs = 0;
  for (sp_op *op = sp_module_body(m)->first; op && !f; op = op->next) nfuncs += op->kind == SP_OP_FUNC;
  if (!f)
    sp_err_set(err, SP_EINVAL, "%s: no main function: the module has %d functions and none is "
               "named @main", m->filename, nfuncs);
  return f;
}

/* ------------------------------------------------------------------ meshes and rules */

static const sp_mesh *mesh_of(driver *d, const sp_sharding *s) {
  if (s->inline_mesh) return s->inline_mesh;
  if (!s->mesh_name) return NULL;
  if (d->mesh_name && (d->mesh_name == s->mesh_name || strcmp(d->mesh_name, s->mesh_name) == 0))
    return d->mesh;
  const sp_mesh *mesh = sp_module_lookup_mesh(d->m, s->mesh_name);
  if (mesh) {
    d->mesh_name = s->mesh_name;
    d->mesh = mesh;
  }
  return mesh;
}

/* The op's common mesh: shardings on the empty mesh are skipped; none, two different meshes
 * or a maximal one give NULL. *ref is the first sharding naming it. */
static int common_mesh(driver *d, sp_sharding *const *v, int n, const sp_mesh **out,
                       const sp_sharding **ref, sp_err *err) {
  const sp_mesh *common = NULL;
  *out = NULL;
  *ref = NULL;
  for (int i = 0; i < n; i++) {
    if (!v[i]) continue;
    const sp_mesh *mesh = mesh_of(d, v[i]);
    if (!mesh)
      return sp_err_set(err, SP_EINVAL, "unknown mesh @%s", v[i]->mesh_name ? v[i]->mesh_name : "");
    if (sp_mesh_is_empty(mesh)) continue;
    if (!common) {
      common = mesh;
      *ref = v[i];
    } else if (mesh != common && !sp_mesh_equal(mesh, common)) {
      *ref = NULL;
      return SP_OK; /* shardings on different meshes never meet */
    }
  }
  if (common && !sp_mesh_is_maximal(common)) *out = common;
  return SP_OK;
}

/* The identity rule of a tensor type with `nin` "operands" and one "result": one factor per
 * dim. NULL if the type is not a static tensor. */
static sp_rule *identity_rule(sp_arena *a, const sp_type *t, int nin) {
  if (!t || t->kind != SP_TYPE_TENSOR || !sp_type_is_static_tensor(t)) return NULL;
  int rank = t->rank;
  size_t nr = (size_t)(rank ? rank : 1);
  sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
  sp_rule_tensor *tensors = sp_arena_calloc(a, (size_t)nin + 1, sizeof *tensors);
  sp_rule_dim *dims = sp_arena_calloc(a, nr, sizeof *dims);
  int *idx = sp_arena_alloc(a, nr * sizeof *idx);
  sp_rule_factor *factors = sp_arena_calloc(a, nr, sizeof *factors);
  if (!r || !tensors || !dims || !idx || !factors) return NULL;
  for (int i = 0; i < rank; i++) {
    idx[i] = i;
    dims[i] = (sp_rule_dim){1, &idx[i]};
    factors[i].size = t->dims[i];
  }
  for (int i = 0; i <= nin; i++) tensors[i] = (sp_rule_tensor){rank, dims};
  r->factors = factors;
  r->nfactors = rank;
  r->noperands = nin;
  r->nresults = 1;
  r->operands = tensors;
  r->results = &tensors[nin];
  return r;
}

static void keep_warning(driver *d) {
  sp_rules_diag *diag = d->o->diag;
  if (!diag || !diag->has_warning) return;
  if (d->stats->nwarnings < 2)
    memcpy(d->stats->warnings[d->stats->nwarnings++], diag->warning, SP_ERR_MSG_MAX);
  sp_module_warn(d->m, diag->warning_loc, "%s", diag->warning);
}

/* Whether every dim of every tensor of the op maps to exactly one factor: then a factor's cell
 * in a tensor is simply the axes of the dim it maps to there, and converged() can tell from
 * the shardings alone that propagation has nothing to do. */
static bool is_simple_rule(const sp_rule *r, const sp_op *op) {
  if (r->noperands + r->nresults != op->noperands + op->nresults) return false;
  for (int t = 0; t < r->noperands + r->nresults; t++) {
    const sp_rule_tensor *rt = t < r->noperands ? &r->operands[t] : &r->results[t - r->noperands];
    for (int dim = 0; dim < rt->rank; dim++)
      if (rt->dims[dim].nfactors != 1) return false;
  }
  return true;
}

static bool same_axes(const sp_dim_sharding *x, const sp_dim_sharding *y) {
  if (x->naxes != y->naxes) return false;
  if (x->axes == y->axes) return true; /* shared arrays, or none */
  for (int i = 0; i < x->naxes; i++) {
    const sp_axis_ref *a = &x->axes[i], *b = &y->axes[i];
    if (a->pre != b->pre || a->size != b->size) return false;
    if (a->name != b->name && strcmp(a->name, b->name) != 0) return false;
  }
  return true;
}

/* For a simple rule (is_simple_rule): whether every factor's axes agree in all the tensors
 * that have it (a tensor without a sharding holds none), so that no strategy can expand any
 * cell. `seen` is scratch for rule->nfactors entries. */
static bool converged(const sp_rule *r, sp_sharding *const *v, const sp_dim_sharding **seen) {
  static const sp_dim_sharding none = {0, NULL, false, SP_NO_PRIORITY};
  for (int f = 0; f < r->nfactors; f++) seen[f] = NULL;
  for (int t = 0; t < r->noperands + r->nresults; t++) {
    const sp_rule_tensor *rt = t < r->noperands ? &r->operands[t] : &r->results[t - r->noperands];
    if (v[t] && v[t]->rank != rt->rank) return false;
    for (int dim = 0; dim < rt->rank; dim++) {
      const sp_dim_sharding *cur = v[t] ? &v[t]->dims[dim] : &none;
      int f = rt->dims[dim].factors[0];
      if (f < 0 || f >= r->nfactors) return false;
      if (!seen[f]) seen[f] = cur;
      else if (!same_axes(seen[f], cur)) return false;
    }
  }
  return true;
}

/* The op's rule: on the first visit, the one an op of equal signature got, else the
 * registry's; kept in the op's state (and attached to the op when the session ends). */
static int rule_of(driver *d, int idx, sp_rule **out, sp_err *err) {
  op_state *st = &d->st[idx];
  *out = st->rule;
  if (st->rule_state != RULE_UNKNOWN) return SP_OK;
  sp_op *op = d->ops[idx];
  sp_rules_options ro = {d->o->conservative};
  /* A keyable op carries no rule of its own (rule_cache.h). */
  bool keyable = sp_rule_cache_keyable(op);
  sp_rule *r = keyable ? sp_rule_cache_find(d->rule_cache, op, ro.conservative) : NULL;
  bool attach = r != NULL; /* a rule of this session's, not one the op came with */
  if (!r) {
    /* Built in scratch (the builder's temporaries die there), kept as one compact copy. */
    int rc = sp_rules_for_op(d->scratch, op, &ro, &r, d->o->diag, err);
    bool warned = d->o->diag && d->o->diag->has_warning;
    keep_warning(d);
    if (rc) return rc;
    if (r && (keyable || r != sp_op_rule(op))) {
      if (!(r = sp_rule_cache_intern(d->rule_cache, d->m->arena, r)))
        return sp_err_set(err, SP_ENOMEM, "out of memory attaching a sharding rule");
      if (keyable && !warned) sp_rule_cache_remember(d->rule_cache, op, ro.conservative, r);
      attach = true;
    }
  }
  st->session_rule = attach;
  st->rule = *out = r;
  st->rule_state = r ? RULE_PRESENT : RULE_NONE;
  st->pointwise = r && is_simple_rule(r, op);
  return SP_OK;
}

static sp_prop_direction barrier_direction(const sp_op *op) {
  const char *s = sp_op_get_str(op, "allowed_direction");
  if (s && strcmp(s, "FORWARD") == 0) return SP_DIR_FORWARD;
  if (s && strcmp(s, "BACKWARD") == 0) return SP_DIR_BACKWARD;
  if (s && strcmp(s, "BOTH") == 0) return SP_DIR_BOTH;
  return SP_DIR_NONE;
}

/* Whether some factor may move: not blocked, and a direction other than NONE (NULL = BOTH). */
static bool moves_any_factor(const sp_rule *rule, const sp_prop_direction *dirs) {
  for (int f = 0; f < rule->nfactors; f++)
    if (!rule->factors[f].blocked && (!dirs || dirs[f] != SP_DIR_NONE)) return true;
  return false;
}

static sp_prop_direction *alloc_dirs(sp_arena *a, const sp_rule *rule) {
  return sp_arena_alloc(a, (size_t)(rule->nfactors ? rule->nfactors : 1) *
                               sizeof(sp_prop_direction));
}

/* The op being visited has nothing to move until something around it changes. */
static int mark_clean(driver *d) {
  d->st[d->current_idx].clean = true;
  return SP_OK;
}

/* A visit that changed nothing with the aggressive strategy along every unblocked factor in
 * both directions (`dirs` NULL: the directions every run uses), the most any run can do,
 * settles the op: a later run (another op-priority round, basic or aggressive, any
 * directions) could not change anything either until a neighbour changes. */
static int settle_if_most_permissive(driver *d, const sp_rule *rule, const sp_prop_direction *dirs) {
  if (d->o->strategy != SP_PROP_AGGRESSIVE) return SP_OK;
  for (int f = 0; dirs && f < rule->nfactors; f++)
    if (!rule->factors[f].blocked && dirs[f] != SP_DIR_BOTH) return SP_OK;
  return mark_clean(d);
}

/* ------------------------------------------------------------------ manual computations */

/* Whether `r` names one of the manual axes. */
static bool is_manual_axis(const sp_attr *manual, const sp_axis_ref *r) {
  for (int i = 0; manual && i < manual->u.axes.n; i++)
    if (strcmp(manual->u.axes.v[i].name, r->name) == 0) return true;
  return false;
}

static int keep_free_axes(sp_arena *a, const sp_attr *manual, sp_axis_ref **v, int *n) {
  sp_axis_ref *out = *n ? sp_arena_alloc(a, (size_t)*n * sizeof *out) : NULL;
  if (*n && !out) return SP_ENOMEM;
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (!is_manual_axis(manual, &(*v)[i])) out[k++] = (*v)[i];
  *v = out;
  *n = k;
  return SP_OK;
}

/* The local view of a global sharding: every manual axis removed. NULL in, NULL out. */
static sp_sharding *localize(sp_arena *a, const sp_sharding *g, const sp_attr *manual) {
  if (!g) return NULL;
  sp_sharding *s = sp_sharding_copy(a, g);
  if (!s) return NULL;
  for (int d = 0; d < s->rank; d++)
    if (keep_free_axes(a, manual, &s->dims[d].axes, &s->dims[d].naxes)) return NULL;
  if (keep_free_axes(a, manual, &s->replicated, &s->nreplicated) ||
      keep_free_axes(a, manual, &s->unreduced, &s->nunreduced))
    return NULL;
  return s;
}

/* The global view of a local sharding: each dim gets the manual axes that `outer` (the in- or
 * out-sharding of the computation) has in front of that dim. NULL in, NULL out. */
static sp_sharding *globalize(sp_arena *a, const sp_sharding *l, const sp_sharding *outer,
                              const sp_attr *manual) {
  if (!l) return NULL;
  sp_sharding *s = sp_sharding_copy(a, l);
  if (!s) return NULL;
  for (int d = 0; outer && d < s->rank && d < outer->rank; d++) {
    const sp_dim_sharding *od = &outer->dims[d];
    int np = 0;
    while (np < od->naxes && is_manual_axis(manual, &od->axes[np])) np++;
    if (!np) continue;
    sp_dim_sharding *sd = &s->dims[d];
    sp_axis_ref *axes = sp_arena_alloc(a, (size_t)(np + sd->naxes) * sizeof *axes);
    if (!axes) return NULL;
    memcpy(axes, od->axes, (size_t)np * sizeof *axes);
    if (sd->naxes) memcpy(axes + np, sd->axes, (size_t)sd->naxes * sizeof *axes);
    sd->axes = axes;
    sd->naxes += np;
  }
  return s;
}

/* ------------------------------------------------------------------ one identity propagation */

/* Propagates between `nsrc` source slots and one target slot as an identity rule. `view_in` /
 * `view_out` turn the target's stored sharding into the view propagation sees and back (NULL:
 * as stored). `op` is the op the propagation stands for (direction callback, conflicts). */
typedef enum edge_view { VIEW_AS_IS, VIEW_LOCAL_SEEN_GLOBAL, VIEW_GLOBAL_SEEN_LOCAL } edge_view;

typedef struct identity_job {
  sp_op *op;
  sp_value **src;
  int nsrc;
  sp_value *target;
  sp_prop_direction fixed_dir;   /* barriers: the allowed direction; else SP_DIR_BOTH */
  bool use_callback;             /* apply the op-priority direction callback */
  edge_view view;
  const sp_sharding *outer;      /* manual computation: the in/out sharding */
  const sp_attr *manual;         /* manual computation: manual_axes */
} identity_job;

static int propagate_identity(driver *d, const identity_job *j, sp_err *err) {
  sp_arena *s = d->scratch;
  sp_rule *rule = identity_rule(s, j->target->type, j->nsrc);
  if (!rule || j->nsrc == 0) return mark_clean(d);
  int n = j->nsrc + 1;
  sp_sharding **in = sp_arena_alloc(s, (size_t)n * sizeof *in);
  sp_sharding **out = sp_arena_alloc(s, (size_t)n * sizeof *out);
  sp_prop_direction *dirs = alloc_dirs(s, rule);
  if (!in || !out || !dirs) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < j->nsrc; i++) in[i] = j->src[i]->sharding;
  sp_sharding *stored = j->target->sharding;
  in[j->nsrc] = j->view == VIEW_LOCAL_SEEN_GLOBAL ? globalize(s, stored, j->outer, j->manual)
                : j->view == VIEW_GLOBAL_SEEN_LOCAL ? localize(s, stored, j->manual)
                                                    : stored;
  if (stored && !in[j->nsrc]) return sp_err_set(err, SP_ENOMEM, "out of memory");

  const sp_mesh *mesh;
  const sp_sharding *ref;
  int rc = common_mesh(d, in, n, &mesh, &ref, err);
  if (rc) return op_error(d, j->op, rc, err);
  if (!mesh) return mark_clean(d);
  const sp_dim_sharding **seen = sp_arena_alloc(s, (size_t)(rule->nfactors + 1) * sizeof *seen);
  if (!seen) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (converged(rule, in, seen)) return mark_clean(d);
  for (int f = 0; f < rule->nfactors; f++) dirs[f] = j->fixed_dir;
  if (j->use_callback && d->o->direction) d->o->direction(j->op, rule, dirs, d->o->direction_ctx);
  if (!moves_any_factor(rule, dirs)) return SP_OK;
  sp_prop_options po = {d->o->strategy, false, false, dirs};
  if (d->log) {
    d->log->op = op_number(d, j->op);
    d->log->op_name = j->op->name;
    d->log->line = j->op->loc.line;
    d->log->col = j->op->loc.col;
  }
  rc = sp_factor_propagate_op(d->m->arena, s, rule, mesh, ref, in, in + j->nsrc, &po, out,
                              out + j->nsrc, NULL, d->log, err);
  if (rc) return op_error(d, j->op, rc, err);
  d->stats->rule_visits++;
  if (d->trace) {
    const void **nodes = sp_arena_alloc(s, (size_t)n * sizeof *nodes);
    if (!nodes) return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int i = 0; i < j->nsrc; i++) nodes[i] = j->src[i];
    nodes[j->nsrc] = j->target;
    if ((rc = sp_trace_step(d->trace, mesh, j->op, j->nsrc, 1, nodes, in, out)))
      return sp_err_set(err, rc, "out of memory");
  }

  bool changed = false;
  for (int i = 0; i < j->nsrc; i++) {
    if (!out[i] || sp_sharding_equal(j->src[i]->sharding, out[i])) continue;
    changed = true;
    if ((rc = set_sharding(d, j->src[i], out[i]))) return rc;
  }
  sp_sharding *t = out[j->nsrc];
  if (t) {
    if (j->view == VIEW_LOCAL_SEEN_GLOBAL) t = localize(d->m->arena, t, j->manual);
    else if (j->view == VIEW_GLOBAL_SEEN_LOCAL) t = globalize(d->m->arena, t, j->outer, j->manual);
    if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory");
    if (!sp_sharding_equal(stored, t)) return set_sharding(d, j->target, t);
  }
  /* A barrier's directions are the same in every run: as permissive as it will ever be. */
  return changed ? SP_OK : settle_if_most_permissive(d, rule, j->use_callback ? dirs : NULL);
}

/* ------------------------------------------------------------------ data-flow edges */

/* Adds slot(v) to the sources unless it is missing or the target itself. */
static void add_source(sp_value **src, int *n, sp_value *v, const sp_value *target) {
  v = slot(v);
  if (!v || v == target) return;
  for (int i = 0; i < *n; i++)
    if (src[i] == v) return;
  src[(*n)++] = v;
}

static int visit_edge(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *owner = op->operands[0].value, *target = &op->results[0];
  identity_job j = {op, NULL, 0, target, SP_DIR_BOTH, true, VIEW_AS_IS, NULL, NULL};
  sp_op *p = owner->def ? owner->def : sp_block_parent_op(owner->block);
  if (!p) return SP_OK;
  int k = owner->index;
  int cap = 2 + p->nregions;
  if (!(j.src = sp_arena_alloc(d->scratch, (size_t)cap * sizeof *j.src)))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_op *t;
  if (owner->def) {
    switch (p->kind) {
      case SP_OP_WHILE:
        if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
        if ((t = region_terminator(p, 1)) && k < t->noperands)
          add_source(j.src, &j.nsrc, t->operands[k].value, target);
        break;
      case SP_OP_CASE:
        for (int r = 0; r < p->nregions; r++)
          if ((t = region_terminator(p, r)) && k < t->noperands)
            add_source(j.src, &j.nsrc, t->operands[k].value, target);
        break;
      case SP_OP_OPTIMIZATION_BARRIER:
        if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
        break;
      case SP_OP_SDY_NAMED_COMPUTATION:
      case SP_OP_SDY_MANUAL_COMPUTATION:
        if ((t = region_terminator(p, 0)) && k < t->noperands)
          add_source(j.src, &j.nsrc, t->operands[k].value, target);
        if (p->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
          j.view = VIEW_GLOBAL_SEEN_LOCAL;
          j.outer = p->results[k].sharding;
          j.manual = sp_op_attr(p, "manual_axes");
        }
        break;
      default:
        return SP_OK;
    }
  } else if (is_named_or_manual(p)) {
    if (k < p->noperands) add_source(j.src, &j.nsrc, p->operands[k].value, target);
    if (p->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
      const sp_attr *ins = sp_op_attr(p, "in_shardings");
      j.view = VIEW_LOCAL_SEEN_GLOBAL;
      j.outer = ins && ins->kind == SP_ATTR_SHARDINGS && k < ins->u.shardings.n
                    ? ins->u.shardings.v[k]
                    : NULL;
      j.manual = sp_op_attr(p, "manual_axes");
    }
  } else {
    return SP_OK;
  }
  if (j.manual && j.manual->kind != SP_ATTR_AXES) j.manual = NULL;
  if (!j.manual) j.view = VIEW_AS_IS;
  return propagate_identity(d, &j, err);
}

static int visit_func_edge(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *owner = op->operands[0].value, *target = &op->results[0];
  identity_job j = {op, NULL, 0, target, SP_DIR_BOTH, true, VIEW_AS_IS, NULL, NULL};
  int k = owner->index;
  sp_op *g = func_of_arg(owner);
  if (g) {
    int gi = d->has_calls ? op_number(d, g) : -1;
    int n = 0;
    for (int c = gi >= 0 ? d->first_call[gi] : -1; c >= 0; c = d->next_call[c]) n++;
    if (!n) return SP_OK;
    if (!(j.src = sp_arena_alloc(d->scratch, (size_t)n * sizeof *j.src)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int c = d->first_call[gi]; c >= 0; c = d->next_call[c])
      if (k < d->ops[c]->noperands) add_source(j.src, &j.nsrc, d->ops[c]->operands[k].value, target);
  } else if (owner->def && owner->def->kind == SP_OP_FUNC_CALL) {
    sp_op *callee = callee_of(d->m, owner->def);
    sp_op *ret = callee ? region_terminator(callee, 0) : NULL;
    if (!ret || k >= ret->noperands) return SP_OK;
    if (!(j.src = sp_arena_alloc(d->scratch, sizeof *j.src)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    add_source(j.src, &j.nsrc, ret->operands[k].value, target);
  } else {
    return SP_OK;
  }
  return propagate_identity(d, &j, err);
}

static int visit_barrier(driver *d, sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value) return SP_OK;
  sp_value *src = slot(op->operands[0].value);
  identity_job j = {op, &src, 1, &op->results[0], barrier_direction(op), false, VIEW_AS_IS,
                    NULL, NULL};
  return propagate_identity(d, &j, err);
}

/* ------------------------------------------------------------------ ops with rules */

/* Gives every result of `op` without a sharding a fully open one, once some result has one
 * (Shardy's per-value sharding lists always cover all results). */
static int fill_placeholders(driver *d, sp_op *op, const sp_sharding *ref, sp_err *err) {
  for (int j = 0; j < op->nresults; j++) {
    sp_value *v = &op->results[j];
    if (v->sharding || !v->type || v->type->kind != SP_TYPE_TENSOR || v->type->rank < 0) continue;
    sp_sharding *s = sp_sharding_new(d->m->arena, ref->mesh_name, v->type->rank, false);
    if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
    s->inline_mesh = ref->inline_mesh;
    v->sharding = s;
  }
  return SP_OK;
}

/* Makes the visit buffers hold `ntensors` tensors and `nfactors` factors. */
static int reserve_visit_buffers(visit_buffers *vb, int ntensors, int nfactors) {
  if (ntensors > vb->cap_tensors) {
    int cap = ntensors < 8 ? 8 : ntensors;
    sp_value **slots = realloc(vb->slots, (size_t)cap * sizeof *slots);
    if (slots) vb->slots = slots;
    sp_sharding **in = realloc(vb->in, (size_t)cap * sizeof *in);
    if (in) vb->in = in;
    sp_sharding **out = realloc(vb->out, (size_t)cap * sizeof *out);
    if (out) vb->out = out;
    if (!slots || !in || !out) return SP_ENOMEM;
    vb->cap_tensors = cap;
  }
  if (nfactors > vb->cap_factors) {
    int cap = nfactors < 16 ? 16 : nfactors;
    const sp_dim_sharding **seen = realloc(vb->seen, (size_t)cap * sizeof *seen);
    if (seen) vb->seen = seen;
    sp_prop_direction *dirs = realloc(vb->dirs, (size_t)cap * sizeof *dirs);
    if (dirs) vb->dirs = dirs;
    if (!seen || !dirs) return SP_ENOMEM;
    vb->cap_factors = cap;
  }
  return SP_OK;
}

static int visit_rule_op(driver *d, int idx, sp_err *err) {
  sp_op *op = d->ops[idx];
  const sp_propagate_options *o = d->o;
  sp_arena *s = d->scratch;
  sp_rule *rule = NULL;
  int rc;
  if ((rc = rule_of(d, idx, &rule, err))) return rc;
  if (!rule || rule->noperands != op->noperands || rule->nresults != op->nresults)
    return mark_clean(d);
  int n = op->noperands + op->nresults;
  if (reserve_visit_buffers(&d->vb, n, rule->nfactors))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_value **slots = d->vb.slots;
  sp_sharding **in = d->vb.in, **out = d->vb.out;
  for (int i = 0; i < op->noperands; i++) slots[i] = slot(op->operands[i].value);
  for (int j = 0; j < op->nresults; j++) slots[op->noperands + j] = &op->results[j];
  for (int i = 0; i < n; i++) in[i] = slots[i] ? slots[i]->sharding : NULL;

  /* Settled ops first (whatever the direction, so later rounds can skip them), then the
   * directions: a visit along no factor at all changes nothing (op-priority rounds). */
  const sp_mesh *mesh;
  const sp_sharding *ref;
  if ((rc = common_mesh(d, in, n, &mesh, &ref, err))) return op_error(d, op, rc, err);
  if (!mesh) return mark_clean(d);
  if (d->st[idx].pointwise && converged(rule, in, d->vb.seen)) return mark_clean(d);
  sp_prop_direction *dirs = NULL;
  if (o->direction) {
    dirs = d->vb.dirs;
    o->direction(op, rule, dirs, o->direction_ctx);
  }
  if (!moves_any_factor(rule, dirs)) return SP_OK;

  sp_prop_options po = {o->strategy, o->conservative, sp_rules_is_elementwise(op), dirs};
  /* The same rule and shardings met before give the same outcome (prop_memo.h); conflict
   * records are not replayed, so a session that logs them always propagates. */
  sp_prop_memo_key key = {rule, mesh, &po, n, in, 0};
  bool memo = !d->log;
  if (memo) sp_prop_memo_hash(d->memo, &key);
  if (!memo || !sp_prop_memo_find(d->memo, &key, out)) {
    if (d->log) {
      d->log->op = idx;
      d->log->op_name = op->name;
      d->log->line = op->loc.line;
      d->log->col = op->loc.col;
    }
    rc = sp_factor_propagate_op(d->m->arena, s, rule, mesh, ref, in, in + op->noperands, &po,
                                out, out + op->noperands, NULL, d->log, err);
    if (rc) return op_error(d, op, rc, err);
    if (memo) sp_prop_memo_add(d->memo, &key, out);
  }
  d->stats->rule_visits++;
  if (d->trace && (rc = sp_trace_step(d->trace, mesh, op, op->noperands, op->nresults,
                                      (const void *const *)slots, in, out)))
    return sp_err_set(err, rc, "out of memory");

  /* Operands first, then results, each notified once its new sharding is in place. */
  bool result_changed = false, changed = false;
  for (int i = 0; i < n; i++) {
    if (!out[i] || !slots[i]) continue;
    if (sp_sharding_equal(slots[i]->sharding, out[i])) continue; /* e.g. add %x, %x */
    result_changed = result_changed || i >= op->noperands;
    changed = true;
    if ((rc = set_sharding(d, slots[i], out[i]))) return rc;
  }
  if (!changed) return settle_if_most_permissive(d, rule, dirs);
  if (result_changed && op->nresults > 1 && (rc = fill_placeholders(d, op, ref, err))) return rc;
  /* Agreeing now along every factor, the op would only find that out on its next visit
   * (nothing changes its tensors without pushing it, which marks it again). */
  if (d->st[idx].pointwise) {
    for (int i = 0; i < n; i++) in[i] = slots[i] ? slots[i]->sharding : NULL;
    if (converged(rule, in, d->vb.seen)) return mark_clean(d);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ dead ops */

static bool mark_erased(sp_op *op, void *ctx) {
  driver *d = ctx;
  int i = op_number(d, op);
  if (i >= 0) d->st[i].erased = true;
  return true;
}

/* MLIR's greedy driver: the defining op of an operand left with at most one other user may
 * now be dead or simpler, so it is pushed. */
static void push_operand_defs(driver *d, sp_op *op) {
  for (int i = 0; i < op->noperands; i++) {
    sp_value *v = op->operands[i].value;
    if (!v || !v->def) continue;
    const sp_op *other = NULL;
    bool more = false;
    for (const sp_use *u = v->uses; u && !more; u = u->next) {
      if (u->owner == op || u->owner == other) continue;
      if (!other) other = u->owner;
      else more = true;
    }
    if (!more) push(d, v->def);
  }
}

static void erase_dead(driver *d, sp_op *op) {
  push_operand_defs(d, op);
  sp_op_walk(op, mark_erased, d);
  sp_op_erase(op);
  d->stats->erased++;
}

/* ------------------------------------------------------------------ visiting */

static int visit(driver *d, int idx, sp_err *err) {
  sp_op *op = d->ops[idx];
  d->stats->visits++;
  /* Dead ops are all found in a session's first run (every op is popped, erasures cascade);
   * propagation never makes an op dead, so later runs skip the check. */
  if (d->runs == 0 && op->nresults > 0 && is_pure(op) && !is_terminator(op) &&
      results_unused(op)) {
    erase_dead(d, op);
    return SP_OK;
  }
  switch (op->kind) {
    case SP_OP_SDY_DATA_FLOW_EDGE:
      return visit_edge(d, op, err);
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE:
      return visit_func_edge(d, op, err);
    case SP_OP_SDY_PROPAGATION_BARRIER:
      return visit_barrier(d, op, err);
    default:
      return visit_rule_op(d, idx, err);
  }
}

/* ------------------------------------------------------------------ main function results */

/* A sharding changed outside the worklist: its defining op and users may move again. */
static void mark_dirty_around(driver *d, const sp_value *v) {
  int i = op_number(d, v->def ? v->def : sp_block_parent_op(v->block));
  if (i >= 0) d->st[i].clean = false;
  for (const sp_use *u = v->uses; u; u = u->next)
    if ((i = op_number(d, u->owner)) >= 0) d->st[i].clean = false;
}

/* Propagates between each value the main function returns and the function's result
 * sharding, as an identity op in both directions. */
static int sync_func_results(driver *d, sp_op *fn, sp_err *err) {
  sp_op *ret = fn->func ? region_terminator(fn, 0) : NULL;
  if (!ret || ret->kind != SP_OP_FUNC_RETURN) return SP_OK;
  int n = ret->noperands < fn->func->nresults ? ret->noperands : fn->func->nresults;
  for (int i = 0; i < n; i++) {
    sp_value *v = slot(ret->operands[i].value);
    if (!v || (!v->sharding && !fn->func->result_shardings[i])) continue;
    sp_sharding *in[2] = {v->sharding, fn->func->result_shardings[i]}, *out[2] = {NULL, NULL};
    if (in[0] && in[1] && in[0]->rank == in[1]->rank) { /* settled: equal axes everywhere */
      int dim = 0;
      while (dim < in[0]->rank && same_axes(&in[0]->dims[dim], &in[1]->dims[dim])) dim++;
      if (dim == in[0]->rank) continue;
    }
    if (!v->type || v->type->kind != SP_TYPE_TENSOR || !sp_type_is_static_tensor(v->type))
      continue; /* no identity rule */
    const sp_mesh *mesh;
    const sp_sharding *ref;
    int rc = common_mesh(d, in, 2, &mesh, &ref, err);
    if (rc) return op_error(d, fn, rc, err);
    if (!mesh) continue;
    /* No axis on either side: nothing to propagate. */
    if (sp_sharding_is_unsharded(in[0]) && sp_sharding_is_unsharded(in[1])) continue;
    /* Interned, so that results of one shape and sharding share a remembered outcome. */
    sp_rule *rule = identity_rule(d->scratch, v->type, 1);
    if (!rule || !(rule = sp_rule_cache_intern(d->rule_cache, d->m->arena, rule)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    sp_prop_options po = {d->o->strategy, false, false, NULL};
    sp_prop_memo_key key = {rule, mesh, &po, 2, in, 0};
    sp_prop_memo_hash(d->memo, &key);
    if (!sp_prop_memo_find(d->memo, &key, out)) {
      rc = sp_factor_propagate_op(d->m->arena, d->scratch, rule, mesh, ref, in, in + 1, &po, out,
                                  out + 1, NULL, NULL, err);
      if (rc) return op_error(d, fn, rc, err);
      sp_prop_memo_add(d->memo, &key, out);
    }
    const void *nodes[2] = {v, v}; /* a func result shares its value's origins (trace.h) */
    if (d->trace && (rc = sp_trace_step(d->trace, mesh, fn, 1, 1, nodes, in, out)))
      return sp_err_set(err, rc, "out of memory");
    if (out[0]) {
      v->sharding = out[0];
      d->stats->updates++;
      mark_dirty_around(d, v);
    }
    if (out[1]) {
      fn->func->result_shardings[i] = out[1];
      d->stats->updates++;
    }
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ entry points */

static void driver_free(driver *d) {
  free(d->ops);
  free(d->st);
  free(d->vb.slots);
  free(d->vb.in);
  free(d->vb.out);
  free(d->vb.seen);
  free(d->vb.dirs);
  sp_rule_cache_free(d->rule_cache);
  sp_prop_memo_free(d->memo);
  free(d->stack);
  free(d->first_call);
  free(d->next_call);
  if (d->groups) free(d->groups[0].members);
  free(d->groups);
  sp_ptr_map_free(&d->groupmap);
  free(d->group_ops);
  sp_arena_free(d->scratch);
}

static int recycle_scratch(driver *d, sp_err *err) {
  if (sp_arena_bytes(d->scratch) <= SCRATCH_RECYCLE_BYTES) return SP_OK;
  sp_arena_free(d->scratch);
  d->scratch = sp_arena_new(0);
  return d->scratch ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory");
}

static const sp_propagate_options default_options = {.strategy = SP_PROP_BASIC};

static int sync_groups(sp_module *m, sp_op **gops, int ngops, bool *inserted, sp_err *err);

int sp_propagate_session_new(sp_module *m, bool prepare, sp_propagate_session **out,
                             sp_err *err) {
  *out = NULL;
  driver *d = calloc(1, sizeof *d);
  if (!d) return sp_err_set(err, SP_ENOMEM, "out of memory");
  d->m = m;
  d->prepare = prepare;
  d->err = err;
  int rc;
  if (!(d->main_fn = main_func(m, err))) {
    rc = SP_EINVAL;
    goto fail;
  }
  if (!(d->scratch = sp_arena_new(0)) || !(d->rule_cache = sp_rule_cache_new()) ||
      !(d->memo = sp_prop_memo_new())) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = number_ops(d, err))) goto fail;
  if (prepare) {
    bool inserted = false;
    if ((rc = sync_groups(m, d->group_ops, d->ngroup_ops, &inserted, err))) goto fail;
    if (inserted) { /* constraints were added: number again, without the prologue */
      sp_propagate_session_free(d, false, NULL);
      return sp_propagate_session_new(m, false, out, err);
    }
  }
  d->prepare = false;
  d->err = NULL;
  if ((rc = index_groups(d, err))) goto fail;
  *out = d;
  return SP_OK;
fail:
  driver_free(d);
  free(d);
  return rc;
}

/* Rules the session built are attached to their ops (as `sdy.sharding_rule`) only when the
 * session ends, and only if they are to stay: nothing reads them from the ops meanwhile
 * (the session keeps them per op), and a pass that drops them at its end then never touches
 * the ops for them. The state left is the same as attaching each on the op's first visit. */
static void attach_session_rules(driver *d) {
  for (int i = 0; i < d->nops; i++) {
    if (!d->st[i].session_rule) continue;
    sp_attr at = {.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = d->st[i].rule};
    sp_attrs_set(d->m->arena, &d->ops[i]->attrs, &at); /* (out of memory: left unattached) */
  }
}

/* Removes the non-custom rules the session's ops came with (rules of the session's own were
 * never attached). Its numbering covers every op that can hold one; ops whose rule it looked
 * up already tell whether they have one of their own. */
static void drop_own_rules(driver *d) {
  for (int i = 0; i < d->nops; i++) {
    if (d->st[i].rule_state == RULE_NONE || d->st[i].session_rule) continue;
    /* Attribute names are unique, so the rule attribute is the one of kind RULE with that name
     * (looking at the kind first spares the string comparisons). */
    sp_attrs *attrs = &d->ops[i]->attrs;
    for (int k = 0; k < attrs->n; k++) {
      const sp_attr *at = &attrs->v[k];
      if (at->kind != SP_ATTR_RULE || strcmp(at->name, SP_ATTR_SHARDING_RULE) != 0) continue;
      if (at->u.rule && !at->u.rule->custom) {
        memmove(&attrs->v[k], &attrs->v[k + 1], (size_t)(attrs->n - k - 1) * sizeof *attrs->v);
        attrs->n--;
      }
      break;
    }
  }
}

void sp_propagate_session_free(sp_propagate_session *d, bool finish,
                               const sp_propagate_options *o) {
  if (!d) return;
  if (finish && !(o && o->keep_sharding_rules)) drop_own_rules(d);
  else attach_session_rules(d);
  driver_free(d);
  free(d);
}

int sp_propagate_session_run(sp_propagate_session *d, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err) {
  sp_propagate_stats local;
  if (!stats) {
    memset(&local, 0, sizeof local);
    stats = &local;
  }
  d->o = o ? o : &default_options;
  d->log = d->o->conflicts ? d->o->conflicts : d->m->conflicts;
  d->stats = stats;
  d->nstack = 0;
  d->trace = d->m->trace && (sp_trace_records_origins(d->m->trace) ||
                             sp_trace_records_edges(d->m->trace))
                 ? d->m->trace
                 : NULL;
  int rc = sync_func_results(d, d->main_fn, err);
  if (rc) return rc;
  /* Pre-order: the first op must be popped first. */
  for (int i = d->nops - 1; i >= 0; i--) {
    if (d->st[i].erased || d->st[i].clean) continue;
    d->st[i].pending = true;
    d->stack[d->nstack++] = i;
  }
  const sp_run_ctl *ctl = d->m->ctl;
  double started = ctl ? sp_clock_now() : 0;
  unsigned tick = 0;
  while (d->nstack) {
    /* The caller's cancel flag and deadline, every 1024 visits (a clock read is ~20 ns). */
    if (ctl && (++tick & 1023u) == 0 && sp_run_ctl_stopped(ctl)) {
      rc = sp_err_set(err, SP_ETIMEOUT, "%s", sp_run_ctl_cancelled(ctl)
                          ? "propagation cancelled"
                          : "the deadline passed during propagation");
      break;
    }
    int i = d->stack[--d->nstack];
    d->st[i].pending = false;
    if (d->st[i].erased) continue;
    d->current = d->ops[i];
    d->current_idx = i;
    d->st[i].clean = false;
    rc = visit(d, i, err);
    d->current = NULL;
    if (rc || (rc = recycle_scratch(d, err))) break;
  }
  for (int i = 0; i < d->nstack; i++) d->st[d->stack[i]].pending = false;
  d->nstack = 0;
  d->runs++;
  if (!rc && ctl) {
    sp_progress pr = {.stage = "propagation", .seconds = sp_clock_now() - started,
                      .round = d->runs, .visits = stats->visits, .updates = stats->updates,
                      .bound = INT64_MIN, .gap = 1};
    sp_run_ctl_report(ctl, &pr);
  }
  return rc ? rc : sync_func_results(d, d->main_fn, err);
}

void sp_propagate_session_invalidate(sp_propagate_session *d) {
  for (int i = 0; i < d->nops; i++) d->st[i].clean = false;
}

sp_op *const *sp_propagate_session_ops(const sp_propagate_session *d, int *n) {
  *n = d->nops;
  return d->ops;
}

int sp_propagate_fixed_point(sp_module *m, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err) {
  sp_propagate_session *d;
  int rc = sp_propagate_session_new(m, false, &d, err);
  if (rc) return rc;
  rc = sp_propagate_session_run(d, o, stats, err);
  sp_propagate_session_free(d, false, NULL);
  return rc;
}

/* ------------------------------------------------------------------ pass prologue: groups */

static int64_t group_id_of(const sp_op *op) {
  int64_t id = 0;
  sp_op_get_int(op, "group_id", &id);
  return id;
}

/* A fully open sdy.sharding_constraint on `v`, inserted right after its definition (or at the
 * top of its block); returns its result. */
static sp_value *insert_open_constraint(sp_module *m, sp_value *v, const sp_sharding *like) {
  sp_op *c = sp_op_create(m->arena, "sdy.sharding_constraint", 1, &v, 1, &v->type, 0);
  if (!c) return NULL;
  int rank = v->type && v->type->kind == SP_TYPE_TENSOR && v->type->rank > 0 ? v->type->rank : 0;
  sp_sharding *s = sp_sharding_new(m->arena, like->mesh_name, rank, false);
  if (!s) return NULL;
  s->inline_mesh = like->inline_mesh;
  c->results[0].sharding = s;
  c->loc = v->def ? v->def->loc : v->loc;
  if (v->def) {
    sp_op_insert_after(v->def, c);
  } else if (v->block->first) {
    sp_op_insert_before(v->block->first, c);
  } else {
    sp_block_append(v->block, c);
  }
  return &c->results[0];
}

/* Syncs one group (its ops are gops[0..n-1]): see propagate.h. */
static int sync_group(sp_module *m, sp_op **gops, int n, bool *inserted, sp_err *err) {
  const sp_sharding *common = NULL;
  bool differ = false;
  for (int i = 0; i < n; i++) {
    const sp_sharding *s = slot(gops[i]->operands[0].value)->sharding;
    if (!s || sp_sharding_is_fully_open_empty(s)) continue;
    if (!common) common = s;
    else if (!sp_sharding_equal(common, s)) differ = true;
  }
  if (!common) return SP_OK;
  if (!differ) {
    for (int i = 0; i < n; i++) slot(gops[i]->operands[0].value)->sharding = (sp_sharding *)common;
    return SP_OK;
  }
  sp_module_warn(m, gops[0]->loc,
                 "The initial operand shardings on the sharding groups of groupID: %lld do not "
                 "match. Inserting an open sharding constraint to all constrained values.",
                 (long long)group_id_of(gops[0]));
  *inserted = true;
  for (int i = 0; i < n; i++) {
    sp_value *c = insert_open_constraint(m, gops[i]->operands[0].value, common);
    if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory inserting a sharding constraint");
    sp_op_set_operand(gops[i], 0, c);
  }
  return SP_OK;
}

/* Syncs the groups of the sharding_group ops `gops` (pre-order), one group id at a time.
 * *inserted tells whether constraints were added. */
static int sync_groups(sp_module *m, sp_op **gops, int ngops, bool *inserted, sp_err *err) {
  if (!ngops) return SP_OK;
  sp_op **members = malloc((size_t)ngops * sizeof *members);
  bool *done = calloc((size_t)ngops, sizeof *done);
  int rc = SP_OK;
  if (!members || !done) rc = sp_err_set(err, SP_ENOMEM, "out of memory syncing sharding groups");
  for (int i = 0; i < ngops && rc == SP_OK; i++) {
    if (done[i]) continue;
    int64_t id = group_id_of(gops[i]);
    int n = 0;
    for (int j = i; j < ngops; j++)
      if (!done[j] && group_id_of(gops[j]) == id) {
        done[j] = true;
        members[n++] = gops[j];
      }
    rc = sync_group(m, members, n, inserted, err);
  }
  free(members);
  free(done);
  return rc;
}

int sp_propagate_prepare(sp_module *m, const sp_propagate_options *o, sp_err *err) {
  (void)o;
  sp_propagate_session *d;
  int rc = sp_propagate_session_new(m, true, &d, err);
  sp_propagate_session_free(d, false, NULL);
  return rc;
}

void sp_propagate_finish(sp_module *m, const sp_propagate_options *o) {
  if (!o || !o->keep_sharding_rules) sp_propagate_drop_rules(m);
}

int sp_propagate_module(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                        sp_err *err) {
  if (!o) o = &default_options;
  if (stats) memset(stats, 0, sizeof *stats);
  sp_propagate_session *d;
  int rc = sp_propagate_session_new(m, true, &d, err);
  if (rc) return rc;
  rc = sp_propagate_session_run(d, o, stats, err);
  sp_propagate_session_free(d, rc == SP_OK, o);
  return rc;
}

static bool drop_rule(sp_op *op, void *ctx) {
  (void)ctx;
  sp_attr *at = sp_op_attr(op, SP_ATTR_SHARDING_RULE);
  if (at && at->kind == SP_ATTR_RULE && at->u.rule && !at->u.rule->custom)
    sp_attrs_remove(&op->attrs, SP_ATTR_SHARDING_RULE);
  return true;
}

void sp_propagate_drop_rules(sp_module *m) { sp_op_walk(m->op, drop_rule, NULL); }
