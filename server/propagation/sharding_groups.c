/*
 * sharding_groups.c - sharding-group import (union, renumbering, checks) and removal (see
 * sharding_groups.h).
 */
#include "propagation/sharding_groups.h"

#include <stdint.h>
#include <stdlib.h>

#include "ir/ptr_map.h"
#include "ir/diag.h"
#include "ir/grow.h"
#include "propagation/propagate.h"

typedef struct groups {
  sp_op **ops;          /* sharding_group ops, pre-order */
  int nops, cap;
  bool oom;
} groups;

static bool collect(sp_op *op, void *ctx) {
  groups *g = ctx;
  if (op->kind != SP_OP_SDY_SHARDING_GROUP || op->noperands != 1 || !op->operands[0].value)
    return true;
  if (sp_grow((void **)&g->ops, &g->cap, g->nops, sizeof *g->ops)) {
    g->oom = true;
    return false;
  }
  g->ops[g->nops++] = op;
  return true;
}

typedef struct id_index {
  int64_t id;
  int index;
} id_index;

static int compare_id_index(const void *a, const void *b) {
  const id_index *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

static int find(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* The nearest sdy.manual_computation containing the value's definition, or NULL. */
static const sp_op *enclosing_manual(const sp_value *v) {
  const sp_op *op = v->def ? sp_op_parent(v->def) : sp_block_parent_op(v->block);
  while (op && op->kind != SP_OP_SDY_MANUAL_COMPUTATION) op = sp_op_parent(op);
  return op;
}

static bool same_shape(const sp_type *a, const sp_type *b) {
  if (!a || !b || a->kind != SP_TYPE_TENSOR || b->kind != SP_TYPE_TENSOR) return sp_type_equal(a, b);
  return sp_type_same_dims(a, b);
}

/* ------------------------------------------------------------------ initial sync */

/* A fully open sdy.sharding_constraint on `v` right after its definition (or at the top of
 * its block), taking over every use of `v`; NULL on out-of-memory. */
static sp_op *open_constraint_after(sp_module *m, sp_value *v, const sp_sharding *like) {
  sp_op *c = sp_op_create(m->arena, "sdy.sharding_constraint", 1, NULL, 1, &v->type, 0);
  int rank = v->type && v->type->kind == SP_TYPE_TENSOR && v->type->rank > 0 ? v->type->rank : 0;
  sp_sharding *s = c ? sp_sharding_new(m->arena, like->mesh_name, rank, false) : NULL;
  if (!s) return NULL;
  s->inline_mesh = like->inline_mesh;
  c->results[0].sharding = s;
  c->loc = v->def ? v->def->loc : v->loc;
  if (v->def) sp_op_insert_after(v->def, c);
  else if (v->block->first) sp_op_insert_before(v->block->first, c);
  else sp_block_append(v->block, c);
  sp_value_replace_all_uses(v, &c->results[0]);
  sp_op_set_operand(c, 0, v);
  return c;
}

/* Syncs the members of one group (ops[0..n), pre-order, id `id`): see sharding_groups.h. */
static int sync_group(sp_module *m, sp_op **ops, int n, int64_t id, bool *inserted,
                      sp_err *err) {
  const sp_sharding *common = NULL;
  bool differ = false;
  for (int i = 0; i < n; i++) {
    const sp_sharding *s = sp_propagate_live_sharding(ops[i]->operands[0].value);
    if (!s || sp_sharding_is_fully_open_empty(s)) continue;
    if (!common) common = s;
    else if (!sp_sharding_equal(common, s)) differ = true;
  }
  if (!common) return SP_OK;
  if (!differ) {
    for (int i = 0; i < n; i++)
      sp_propagate_slot(ops[i]->operands[0].value)->sharding = (sp_sharding *)common;
    return SP_OK;
  }
  sp_module_warn(m, ops[0]->loc,
                 "The initial operand shardings on the sharding groups of groupID: %lld do not "
                 "match. Inserting an open sharding constraint to all constrained values.",
                 (long long)id);
  *inserted = true;
  for (int i = 0; i < n; i++)
    if (!open_constraint_after(m, ops[i]->operands[0].value, common))
      return sp_err_set(err, SP_ENOMEM, "out of memory syncing sharding groups");
  return SP_OK;
}

/* Sorts buckets of equal ids by the position of their first op. */
static int compare_first(const void *a, const void *b) {
  const id_index *x = a, *y = b;
  return (x->index > y->index) - (x->index < y->index);
}

int sp_sharding_groups_sync(sp_module *m, sp_op **ops, int n, bool *inserted, sp_err *err) {
  if (n <= 0) return SP_OK;
  /* (id, position) sorted: each id's ops form a run in pre-order; the runs are then taken in
   * the order of their first op (the order Shardy meets the groups in). */
  id_index *order = malloc((size_t)n * sizeof *order);
  id_index *runs = malloc((size_t)n * sizeof *runs);  /* (start in order, first position) */
  sp_op **members = malloc((size_t)n * sizeof *members);
  int rc = SP_OK, nruns = 0;
  if (!order || !runs || !members) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory syncing sharding groups");
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    int64_t id = 0;
    sp_op_get_int(ops[i], "group_id", &id);
    order[i] = (id_index){id, i};
  }
  qsort(order, (size_t)n, sizeof *order, compare_id_index);
  for (int i = 0; i < n; i++)
    if (i == 0 || order[i].id != order[i - 1].id) runs[nruns++] = (id_index){i, order[i].index};
  qsort(runs, (size_t)nruns, sizeof *runs, compare_first);
  for (int r = 0; r < nruns && rc == SP_OK; r++) {
    int start = (int)runs[r].id, k = 0;
    for (int i = start; i < n && order[i].id == order[start].id; i++)
      members[k++] = ops[order[i].index];
    rc = sync_group(m, members, k, order[start].id, inserted, err);
  }
fail:
  free(order);
  free(runs);
  free(members);
  return rc;
}

int sp_sharding_groups_import(sp_module *m, sp_err *err) {
  groups g = {NULL, 0, 0, false};
  int *parent = NULL, *number = NULL, *first = NULL;
  int64_t *ids = NULL;
  id_index *order = NULL;
  sp_ptr_map member;   /* value -> index of its first op */
  sp_ptr_map_init(&member);
  int rc = SP_OK;
  sp_op_walk(m->op, collect, &g);
  if (g.oom) goto oom;
  if (!g.nops) goto done;
  /* One union-find node per op; ops with the same id, or on the same value, are joined. */
  parent = malloc((size_t)g.nops * sizeof *parent);
  number = malloc((size_t)g.nops * sizeof *number);
  first = malloc((size_t)g.nops * sizeof *first);
  ids = malloc((size_t)g.nops * sizeof *ids);
  order = malloc((size_t)g.nops * sizeof *order);
  if (!parent || !number || !first || !ids || !order) goto oom;
  for (int i = 0; i < g.nops; i++) {
    parent[i] = i;
    number[i] = -1;
    first[i] = -1;
    if (!sp_op_get_int(g.ops[i], "group_id", &ids[i])) ids[i] = INT64_MIN;
  }
  /* Ops with the same id: sorted by (id, index), neighbours with equal ids are joined. */
  for (int i = 0; i < g.nops; i++) order[i] = (id_index){ids[i], i};
  qsort(order, (size_t)g.nops, sizeof *order, compare_id_index);
  for (int i = 1; i < g.nops; i++)
    if (order[i].id == order[i - 1].id)
      parent[find(parent, order[i].index)] = find(parent, order[i - 1].index);
  /* Ops on the same value. */
  for (int i = 0; i < g.nops; i++) {
    sp_value *v = g.ops[i]->operands[0].value;
    intptr_t seen = sp_ptr_map_get(&member, v, -1);
    if (seen >= 0) parent[find(parent, i)] = find(parent, (int)seen);
    else if (sp_ptr_map_put(&member, v, i)) goto oom;
  }
  /* Renumber in order of first appearance and check each group against its first member. */
  int next = 0;
  for (int i = 0; i < g.nops; i++) {
    int root = find(parent, i);
    if (number[root] < 0) {
      number[root] = next++;
      first[root] = i;
    }
    const sp_value *v = g.ops[i]->operands[0].value, *f = g.ops[first[root]]->operands[0].value;
    if (enclosing_manual(v) != enclosing_manual(f)) {
      rc = sp_error_at(err, SP_EINVAL, m, g.ops[i]->loc, "ShardingGroupOps values cannot cross "
                       "ManualComputationOp boundaries for groupId: %lld", (long long)ids[i]);
      goto done;
    }
    if (!same_shape(v->type, f->type)) {
      rc = sp_error_at(err, SP_EINVAL, m, g.ops[i]->loc, "ShardingGroupOps values must have the "
                       "same shape for groupId: %lld", (long long)ids[i]);
      goto done;
    }
  }
  /* A value is in one group only, so any op after its first one is a duplicate. */
  for (int i = 0; i < g.nops; i++) {
    sp_op *op = g.ops[i];
    if (sp_ptr_map_get(&member, op->operands[0].value, -1) != i) {
      sp_op_erase(op);
      continue;
    }
    sp_attr id = {.name = "group_id", .kind = SP_ATTR_INT, .u.i = number[find(parent, i)]};
    if (sp_attrs_set(m->arena, &op->attrs, &id)) goto oom;
  }
  /* The initial sync over the ops left (pre-order, ids renumbered). */
  int kept = 0;
  for (int i = 0; i < g.nops; i++)
    if (g.ops[i]->block) g.ops[kept++] = g.ops[i];
  bool inserted = false;
  rc = sp_sharding_groups_sync(m, g.ops, kept, &inserted, err);
  goto done;
oom:
  rc = sp_err_set(err, SP_ENOMEM, "out of memory importing sharding groups");
done:
  sp_ptr_map_free(&member);
  free(parent);
  free(number);
  free(first);
  free(ids);
  free(order);
  free(g.ops);
  return rc;
}

int sp_sharding_groups_remove(sp_module *m, sp_err *err) {
  groups g = {NULL, 0, 0, false};
  sp_op_walk(m->op, collect, &g);
  for (int i = 0; i < g.nops; i++) sp_op_erase(g.ops[i]);
  free(g.ops);
  return g.oom ? sp_err_set(err, SP_ENOMEM, "out of memory removing sharding groups") : SP_OK;
}
