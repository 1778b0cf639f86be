/*
 * propagate_int.h - the state of one propagation session and the helpers its parts share
 * (internal to server/propagation).
 *
 * The fixed point (propagate.h) is split by concept: propagate.c is the driver (numbering,
 * worklist, visiting, the main function's results, entry points), propagate_rules.c visits
 * ops with sharding rules (rule lookup, common mesh, convergence), propagate_edges.c visits
 * data-flow edges and propagation barriers (identity propagation, manual-computation views),
 * propagate_groups.c indexes the sharding groups that updates are copied through. They share
 * the session (`driver`) defined here; small helpers are static inline.
 *
 * Invariants: d->ops[i]->pass_index == i for every op the session numbered; the stack holds
 * each op number at most once (st[i].pending); a value's sharding is read and written through
 * slot(). Memory: as in propagate.h (the session's arrays are malloc'd and freed with it).
 */
#ifndef SP_PROPAGATION_PROPAGATE_INT_H
#define SP_PROPAGATION_PROPAGATE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/ptr_map.h"
#include "propagation/prop_memo.h"
#include "propagation/propagate.h"
#include "propagation/rule_cache.h"
#include "propagation/trace.h"

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
  bool elementwise;           /* with a rule: sp_rules_is_elementwise(), asked once */
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
  /* Values whose users one notification reached across a call boundary (value -> the
   * notification's number): a function called from two places whose results feed each
   * other's calls would otherwise be walked forever. */
  sp_ptr_map crossed;
  intptr_t notification;
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

static inline bool is_terminator(const sp_op *op) {
  return op->kind == SP_OP_FUNC_RETURN || op->kind == SP_OP_RETURN || op->kind == SP_OP_SDY_RETURN;
}

static inline bool is_named_or_manual(const sp_op *op) {
  return op->kind == SP_OP_SDY_NAMED_COMPUTATION || op->kind == SP_OP_SDY_MANUAL_COMPUTATION;
}

/* The terminator of region `r` of `op` (its first block's last op), or NULL. */
static inline sp_op *region_terminator(const sp_op *op, int r) {
  if (r >= op->nregions || !op->regions[r].nblocks) return NULL;
  sp_op *t = op->regions[r].blocks[0]->last;
  return t && is_terminator(t) ? t : NULL;
}

/* The result of the first sdy.data_flow_edge op that takes `owner` as its input, or NULL. */
static inline sp_value *edge_on(const sp_value *owner) {
  for (const sp_use *u = owner->uses; u; u = u->next)
    if (u->owner->kind == SP_OP_SDY_DATA_FLOW_EDGE && u->index == 0 && u->owner->nresults == 1)
      return &u->owner->results[0];
  return NULL;
}

/* Which region of its parent op a block belongs to (-1 if unknown). */
static inline int region_index(const sp_block *b) {
  sp_op *p = sp_block_parent_op(b);
  if (!p) return -1;
  for (int r = 0; r < p->nregions; r++)
    if (&p->regions[r] == b->parent) return r;
  return -1;
}

/* The value whose `sharding` field holds the sharding of `v`. */
static inline sp_value *slot(sp_value *v) {
  if (!v || v->def || !v->block) return v;
  sp_op *p = sp_block_parent_op(v->block);
  if (p && p->kind == SP_OP_WHILE && v->index < p->nresults) {
    sp_value *e = edge_on(&p->results[v->index]);
    if (e) return e;
  }
  return v;
}

/* The func.func a func.call names, or NULL. */
static inline sp_op *callee_of(const sp_module *m, const sp_op *call) {
  const char *name = sp_op_get_str(call, "callee");
  return name ? sp_module_lookup_func(m, name) : NULL;
}

/* The func.func whose entry block holds `v`, or NULL. */
static inline sp_op *func_of_arg(const sp_value *v) {
  if (v->def || !v->block) return NULL;
  sp_op *p = sp_block_parent_op(v->block);
  return p && p->kind == SP_OP_FUNC ? p : NULL;
}


/* ------------------------------------------------------------------ numbering */

/* The session's number of `op`, or -1 for an op it did not number (the module op, an op of
 * another module). Numbers live in op->pass_index; the check against d->ops makes a stale
 * one harmless. */
static inline int op_number(const driver *d, const sp_op *op) {
  if (!op) return -1;
  int i = op->pass_index;
  return i >= 0 && i < d->nops && d->ops[i] == op ? i : -1;
}

/* ------------------------------------------------------------------ settling and convergence */

static inline bool same_axes(const sp_dim_sharding *x, const sp_dim_sharding *y) {
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
static inline bool converged(const sp_rule *r, sp_sharding *const *v,
                             const sp_dim_sharding **seen) {
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


/* Whether some factor may move: not blocked, and a direction other than NONE (NULL = BOTH). */
static inline bool moves_any_factor(const sp_rule *rule, const sp_prop_direction *dirs) {
  for (int f = 0; f < rule->nfactors; f++)
    if (!rule->factors[f].blocked && (!dirs || dirs[f] != SP_DIR_NONE)) return true;
  return false;
}

static inline sp_prop_direction *alloc_dirs(sp_arena *a, const sp_rule *rule) {
  return sp_arena_alloc(a, (size_t)(rule->nfactors ? rule->nfactors : 1) *
                               sizeof(sp_prop_direction));
}

/* The op being visited has nothing to move until something around it changes. */
static inline int mark_clean(driver *d) {
  d->st[d->current_idx].clean = true;
  return SP_OK;
}

/* A visit that changed nothing with the aggressive strategy along every unblocked factor in
 * both directions (`dirs` NULL: the directions every run uses), the most any run can do,
 * settles the op: a later run (another op-priority round, basic or aggressive, any
 * directions) could not change anything either until a neighbour changes. */
static inline int settle_if_most_permissive(driver *d, const sp_rule *rule,
                                            const sp_prop_direction *dirs) {
  if (d->o->strategy != SP_PROP_AGGRESSIVE) return SP_OK;
  for (int f = 0; dirs && f < rule->nfactors; f++)
    if (!rule->factors[f].blocked && dirs[f] != SP_DIR_BOTH) return SP_OK;
  return mark_clean(d);
}


/* ------------------------------------------------------------------ shared between the parts */

/* propagate.c: stores a new sharding in slot value `v` and pushes what it affects (then syncs
 * its sharding group). */
int sp_propagate_set_sharding(driver *d, sp_value *v, sp_sharding *s);
/* propagate.c: prefixes the message in `err` with the op's place and name; returns `rc`. */
int sp_propagate_op_error(const driver *d, const sp_op *op, int rc, sp_err *err);

/* propagate_rules.c: the op's common mesh: shardings on the empty mesh are skipped; none, two
 * different meshes or a maximal one give NULL. *ref is the first sharding naming it. */
int sp_propagate_common_mesh(driver *d, sp_sharding *const *v, int n, const sp_mesh **out,
                             const sp_sharding **ref, sp_err *err);
/* propagate_rules.c: the identity rule of a tensor type with `nin` "operands" and one
 * "result": one factor per dim. NULL if the type is not a static tensor. */
sp_rule *sp_propagate_identity_rule(sp_arena *a, const sp_type *t, int nin);
/* propagate_rules.c: one visit of op number `idx` through its sharding rule. */
int sp_propagate_visit_rule_op(driver *d, int idx, sp_err *err);

/* propagate_edges.c: visits of sdy.data_flow_edge, sdy.func_data_flow_edge and
 * sdy.propagation_barrier ops (identity propagation). */
int sp_propagate_visit_edge(driver *d, sp_op *op, sp_err *err);
int sp_propagate_visit_func_edge(driver *d, sp_op *op, sp_err *err);
int sp_propagate_visit_barrier(driver *d, sp_op *op, sp_err *err);

/* propagate_groups.c: indexes the session's sharding groups (member slots, slot -> group). */
int sp_propagate_index_groups(driver *d, sp_err *err);


#endif /* SP_PROPAGATION_PROPAGATE_INT_H */
