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
 *
 * This file is the driver (numbering, worklist, visiting, the main function's results, the
 * entry points); visits of ops with rules are in propagate_rules.c, of data-flow edges and
 * barriers in propagate_edges.c, the sharding groups in propagate_groups.c, and the session
 * they share in propagate_int.h.
 */
#include "propagation/propagate.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "ir/diag.h"
#include "ir/grow.h"
#include "ir/op_attrs.h"
#include "ir/run_ctl.h"
#include "propagation/dead_ops.h"
#include "propagation/propagate_int.h"
#include "propagation/sharding_groups.h"

/* The scratch arena is replaced once it holds this much: one op's factor table and its
 * temporaries are a few KiB, so this recycles it every few thousand visits. */
#define SCRATCH_RECYCLE_BYTES (4u << 20)

/* ------------------------------------------------------------------ op structure helpers */


sp_sharding *sp_propagate_live_sharding(sp_value *v) {
  v = slot(v);
  return v ? v->sharding : NULL;
}

sp_value *sp_propagate_slot(sp_value *v) { return slot(v); }

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
      d->prologue_status = sp_error_at(d->err, SP_EINVAL, d->m, op->loc,
                                       "Shardy propagation only supports ranked tensors with a "
                                       "static shape (result %d of '%s')", r, op->name);
      return false;
    }
  return true;
}

/* Appends a sdy.sharding_group op (with its one operand) to d->group_ops. */
static bool record_group_op(driver *d, sp_op *op) {
  if (sp_grow((void **)&d->group_ops, &d->capgroup_ops, d->ngroup_ops, sizeof *d->group_ops))
    return false;
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
  if (sp_grow((void **)&d->ops, &c->cap, c->n, sizeof *d->ops)) {
    c->oom = true;
    return false;
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

/* ------------------------------------------------------------------ worklist */

static void push_one(driver *d, sp_op *op) {
  if (!op || op == d->current) return;
  int i = op_number(d, op);
  if (i < 0) return;
  op_state *st = &d->st[i];
  st->clean = false;
  if (st->pending || st->erased) return;
  st->pending = true;
  assert(d->nstack < d->nops); /* each op at most once */
  d->stack[d->nstack++] = i;
}

/* Pushes `op`, then its ancestors up to (not including) the module. */
static void push(driver *d, sp_op *op) {
  for (; op && op != d->m->op; op = sp_op_parent(op)) push_one(d, op);
}

static void push_users(driver *d, const sp_value *v);
static void push_users_across(driver *d, const sp_value *v);

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
        push_users_across(d, g->regions[0].blocks[0]->args[k]);
      push(d, user);
      return;
    }
    case SP_OP_FUNC_RETURN: {
      sp_op *g = sp_op_parent(user);
      int gi = g && d->has_calls ? op_number(d, g) : -1;
      for (int c = gi >= 0 ? d->first_call[gi] : -1; c >= 0; c = d->next_call[c])
        if (k < d->ops[c]->nresults) push_users_across(d, &d->ops[c]->results[k]);
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

/* push_users for a value reached through a call or a function's return: once per
 * notification. Out of memory, the walk stops there rather than risk an endless one. */
static void push_users_across(driver *d, const sp_value *v) {
  bool inserted;
  sp_ptr_map_slot *slot = sp_ptr_map_slot_of(&d->crossed, v, d->notification, &inserted);
  if (!slot || (!inserted && slot->val == d->notification)) return;
  slot->val = d->notification;
  push_users(d, v);
}

/* Pushes the ops next to a slot value whose sharding changed, then syncs its group. */
static int notify(driver *d, sp_value *v) {
  d->stats->updates++;
  d->notification++;
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
    if (w != v && !sp_sharding_equal(w->sharding, v->sharding))
      rc = sp_propagate_set_sharding(d, w, v->sharding);
  }
  d->syncing_group = false;
  return rc;
}

/* Stores a new sharding in slot value `v` and notifies. */
int sp_propagate_set_sharding(driver *d, sp_value *v, sp_sharding *s) {
  assert(v == slot(v)); /* every write goes to the slot */
  v->sharding = s;
  return notify(d, v);
}

/* ------------------------------------------------------------------ errors and checks */

/* Prefixes the message in `err` with the op's place and name; returns `rc`. */
int sp_propagate_op_error(const driver *d, const sp_op *op, int rc, sp_err *err) {
  if (!err) return rc;
  char msg[SP_ERR_MSG_MAX];
  memcpy(msg, err->msg, sizeof msg);
  sp_error_at(err, rc, d->m, op->loc, "op '%s': %s", op->name, msg);
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
  if (d->runs == 0 && sp_op_is_trivially_dead(op)) {
    erase_dead(d, op);
    return SP_OK;
  }
  switch (op->kind) {
    case SP_OP_SDY_DATA_FLOW_EDGE:
      return sp_propagate_visit_edge(d, op, err);
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE:
      return sp_propagate_visit_func_edge(d, op, err);
    case SP_OP_SDY_PROPAGATION_BARRIER:
      return sp_propagate_visit_barrier(d, op, err);
    default:
      return sp_propagate_visit_rule_op(d, idx, err);
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
    int rc = sp_propagate_common_mesh(d, in, 2, &mesh, &ref, err);
    if (rc) return sp_propagate_op_error(d, fn, rc, err);
    if (!mesh) continue;
    /* No axis on either side: nothing to propagate. */
    if (sp_sharding_is_unsharded(in[0]) && sp_sharding_is_unsharded(in[1])) continue;
    /* Interned, so that results of one shape and sharding share a remembered outcome. */
    sp_rule *rule = sp_propagate_identity_rule(d->scratch, v->type, 1);
    if (!rule || !(rule = sp_rule_cache_intern(d->rule_cache, d->m->arena, rule)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    sp_prop_options po = {d->o->strategy, false, false, NULL};
    sp_prop_memo_key key = {rule, mesh, &po, 2, in, 0};
    sp_prop_memo_hash(d->memo, &key);
    if (!sp_prop_memo_find(d->memo, &key, out)) {
      rc = sp_factor_propagate_op(d->m->arena, d->scratch, rule, mesh, ref, in, in + 1, &po, out,
                                  out + 1, NULL, NULL, err);
      if (rc) return sp_propagate_op_error(d, fn, rc, err);
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
  sp_ptr_map_free(&d->crossed);
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
    if ((rc = sp_sharding_groups_sync(m, d->group_ops, d->ngroup_ops, &inserted, err))) goto fail;
    if (inserted) { /* constraints were added: number again, without the prologue */
      sp_propagate_session_free(d, false, NULL);
      return sp_propagate_session_new(m, false, out, err);
    }
  }
  d->prepare = false;
  d->err = NULL;
  if ((rc = sp_propagate_index_groups(d, err))) goto fail;
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
#ifndef NDEBUG
  /* propagate.h: ops are not added or moved between runs; numbers are the session's. */
  for (int i = 0; i < d->nops; i++) assert(d->st[i].erased || d->ops[i]->pass_index == i);
#endif
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