/*
 * sharding_constraints.c - applying sharding constraints to their inputs, and turning them
 * into reshards (see sharding_constraints.h).
 */
#include "propagation/sharding_constraints.h"

#include <stdlib.h>

#include "ir/op_list.h"
#include "propagation/data_flow_edges.h"
#include "propagation/trace.h"

static bool fully_closed(const sp_sharding *s) {
  for (int d = 0; d < s->rank; d++)
    if (!s->dims[d].closed) return false;
  return true;
}

/* A target of a data-flow edge, whose sharding is the edge's: the result of an
 * sdy.data_flow_edge, or a while body/cond argument (the edge on the while's result). */
static bool is_edge_target(const sp_value *v) {
  if (v->def) return v->def->kind == SP_OP_SDY_DATA_FLOW_EDGE;
  const sp_op *parent = sp_block_parent_op(v->block);
  return parent && parent->kind == SP_OP_WHILE;
}

static bool can_carry_sharding(const sp_value *v) {
  if (v->def) return v->def->kind != SP_OP_SDY_SHARDING_GROUP;
  const sp_op *parent = sp_block_parent_op(v->block);
  return parent && parent->kind == SP_OP_FUNC && v->block == parent->regions[0].blocks[0];
}

/* The sharding `user` asks its operand `k` to have (constraint or manual computation), or NULL
 * if it asks for none. A value a manual computation takes twice is asked by each in_sharding. */
static const sp_sharding *requested(const sp_op *user, int k) {
  if (user->kind == SP_OP_SDY_SHARDING_CONSTRAINT) return user->results[0].sharding;
  if (user->kind == SP_OP_SDY_MANUAL_COMPUTATION) {
    sp_attr *in = sp_op_attr(user, "in_shardings");
    if (!in || in->kind != SP_ATTR_SHARDINGS || k >= in->u.shardings.n) return NULL;
    return in->u.shardings.v[k];
  }
  return NULL;
}

static bool should_apply(const sp_value *x, const sp_sharding *s) {
  if (!s || x->sharding || !fully_closed(s)) return false;
  if (!can_carry_sharding(x) && !is_edge_target(x)) return false;
  for (const sp_use *u = x->uses; u; u = u->next) {
    const sp_sharding *other = requested(u->owner, u->index);
    if (other && !sp_sharding_equal(other, s)) return false;
  }
  return true;
}

/* Puts `c` (a constraint on block argument or result x) right after x and makes every other use
 * of x use it. */
static void move_after_input(sp_op *c, sp_value *x) {
  sp_op_unlink(c);
  if (x->def) {
    sp_op_insert_after(x->def, c);
  } else if (x->block->first) {
    sp_op_insert_before(x->block->first, c);
  } else {
    sp_block_append(x->block, c);
  }
  sp_value_replace_all_uses(x, &c->results[0]);
  sp_op_set_operand(c, 0, x);
}

/* The op the trace puts an applied sharding's edges on: the constraint, or the data-flow
 * edge of the manual computation's body argument `k` (the computation itself without one). */
static sp_op *trace_edge_op(sp_op *anchor, int k) {
  if (anchor->kind != SP_OP_SDY_MANUAL_COMPUTATION) return anchor;
  sp_op *e = sp_data_flow_edge_of(anchor->regions[0].blocks[0]->args[k]);
  return e ? e : anchor;
}

/* The value holding the sharding of edge target `x` (the edge itself, or the edge on the
 * matching while result), or NULL. */
static sp_value *edge_holder(sp_value *x) {
  if (x->def) return x;
  const sp_op *w = sp_block_parent_op(x->block);
  sp_op *e = w && x->index < w->nresults ? sp_data_flow_edge_of(&w->results[x->index]) : NULL;
  return e ? &e->results[0] : NULL;
}

/* An edge target keeps no sharding of its own, but the unreduced axes of the constraint are
 * still given to its edge (open dims, nothing else), when the edge has no sharding yet. */
static int set_unreduced_on_edge(sp_module *m, sp_value *x, const sp_sharding *s) {
  sp_value *h = s->nunreduced ? edge_holder(x) : NULL;
  if (!h || h->sharding) return SP_OK;
  sp_sharding *open = sp_sharding_new(m->arena, s->mesh_name, s->rank, false);
  if (!open) return SP_ENOMEM;
  open->inline_mesh = s->inline_mesh;
  open->nunreduced = s->nunreduced;
  open->unreduced = s->unreduced;
  open->unreduced_kind = s->unreduced_kind;
  h->sharding = open;
  return SP_OK;
}

static int apply_to(sp_module *m, sp_op *anchor, int k, sp_value *x, const sp_sharding *s) {
  if (!should_apply(x, s)) return SP_OK;
  if (!is_edge_target(x)) {
    x->sharding = (sp_sharding *)s;
    return m->trace ? sp_trace_applied(m->trace, sp_module_sharding_mesh(m, s), anchor, k,
                                       trace_edge_op(anchor, k), x, s)
                    : SP_OK;
  }
  int rc = set_unreduced_on_edge(m, x, s);
  if (rc) return rc;
  if (anchor->kind == SP_OP_SDY_SHARDING_CONSTRAINT) {
    move_after_input(anchor, x);
    return SP_OK;
  }
  sp_op *c = sp_op_create(m->arena, "sdy.sharding_constraint", 1, &x, 1, &x->type, 0);
  if (!c) return SP_ENOMEM;
  c->loc = anchor->loc;
  c->results[0].sharding = (sp_sharding *)s;
  sp_block_append(x->def ? x->def->block : x->block, c); /* placeholder, moved right away */
  move_after_input(c, x);
  return SP_OK;
}

/* ------------------------------------------------------------------ chains */

static bool single_use(const sp_value *v) { return v->uses && !v->uses->next; }

static bool is_constraint(const sp_op *op) { return op->kind == SP_OP_SDY_SHARDING_CONSTRAINT; }

static bool is_constraint_or_manual(const sp_op *op) {
  return is_constraint(op) || op->kind == SP_OP_SDY_MANUAL_COMPUTATION;
}

static int constraint_users(const sp_value *v) {
  int n = 0;
  for (const sp_use *u = v->uses; u; u = u->next) n += is_constraint(u->owner);
  return n;
}

/* Users that ask for a sharding of their own: constraints and manual computations. */
static bool feeds_sharding_request(const sp_value *v) {
  for (const sp_use *u = v->uses; u; u = u->next)
    if (is_constraint(u->owner) || u->owner->kind == SP_OP_SDY_MANUAL_COMPUTATION) return true;
  return false;
}

/* Whether `a` comes after `b` in their (shared) block. */
static bool after(const sp_op *a, const sp_op *b) {
  for (const sp_op *o = b->next; o; o = o->next)
    if (o == a) return true;
  return false;
}

/* The tail of the chain starting at `head`, or NULL when `head` does not start one. */
static sp_op *chain_tail(const sp_op *head) {
  const sp_value *x = head->operands[0].value;
  if (!x || x->sharding || constraint_users(x) != 1) return NULL;
  const sp_op *c = head;
  while (single_use(&c->results[0]) && is_constraint(c->results[0].uses->owner))
    c = c->results[0].uses->owner;
  /* The tail feeds another constraint or a manual computation. */
  if (feeds_sharding_request(&c->results[0])) return NULL;
  return (sp_op *)c;
}

static void redirect_later_uses(sp_value *x, sp_op *tail) {
  for (sp_use *u = x->uses, *next; u; u = next) {
    next = u->next;
    sp_op *owner = u->owner;
    if (owner->block != tail->block || owner->kind == SP_OP_FUNC_RETURN || !after(owner, tail))
      continue;
    sp_op_set_operand(owner, u->index, &tail->results[0]);
  }
}

int sp_sharding_constraints_apply(sp_module *m, sp_err *err) {
  sp_op_list l = {.keep = is_constraint_or_manual};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  /* Chains are found on the module as written, before any input gains a sharding. */
  sp_op **tails = rc ? NULL : calloc((size_t)(l.n ? l.n : 1), sizeof *tails);
  if (!rc && !tails) rc = SP_ENOMEM;
  for (int i = 0; !rc && i < l.n; i++)
    if (is_constraint(l.v[i]) && l.v[i]->operands[0].value) tails[i] = chain_tail(l.v[i]);
  for (int i = 0; !rc && i < l.n; i++) {
    sp_op *op = l.v[i];
    if (is_constraint(op)) {
      if (op->operands[0].value)
        rc = apply_to(m, op, 0, op->operands[0].value, op->results[0].sharding);
      continue;
    }
    for (int k = 0; !rc && k < op->noperands; k++)
      if (op->operands[k].value)
        rc = apply_to(m, op, k, op->operands[k].value, requested(op, k));
  }
  for (int i = 0; !rc && i < l.n; i++)
    if (tails[i] && l.v[i]->operands[0].value)
      redirect_later_uses(l.v[i]->operands[0].value, tails[i]);
  free(tails);
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory applying sharding constraints") : SP_OK;
}

int sp_sharding_constraints_to_reshard(sp_module *m, sp_err *err) {
  sp_op_list l = {.keep = is_constraint};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  for (int i = 0; i < l.n; i++) {
    l.v[i]->kind = SP_OP_SDY_RESHARD;
    l.v[i]->name = sp_op_kind_name(SP_OP_SDY_RESHARD);
  }
  sp_op_list_free(&l);
  return l.oom ? sp_err_set(err, SP_ENOMEM, "out of memory converting constraints") : SP_OK;
}
