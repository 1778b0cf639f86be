/*
 * sharding_groups.c - sharding-group import (union, renumbering, checks) and removal (see
 * sharding_groups.h).
 */
#include "propagation/sharding_groups.h"

#include <stdint.h>
#include <stdlib.h>

#include "ir/clone.h"

typedef struct groups {
  sp_op **ops;          /* sharding_group ops, pre-order */
  int nops, cap;
  bool oom;
} groups;

static bool collect(sp_op *op, void *ctx) {
  groups *g = ctx;
  if (op->kind != SP_OP_SDY_SHARDING_GROUP || op->noperands != 1 || !op->operands[0].value)
    return true;
  if (g->nops == g->cap) {
    int cap = g->cap ? 2 * g->cap : 16;
    sp_op **v = realloc(g->ops, (size_t)cap * sizeof *v);
    if (!v) {
      g->oom = true;
      return false;
    }
    g->ops = v;
    g->cap = cap;
  }
  g->ops[g->nops++] = op;
  return true;
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
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

int sp_sharding_groups_import(sp_module *m, sp_err *err) {
  groups g = {NULL, 0, 0, false};
  int *parent = NULL, *number = NULL, *first = NULL;
  int64_t *ids = NULL;
  sp_value_map member;   /* value -> 1 + index of its first op */
  sp_value_map_init(&member);
  int rc = SP_OK;
  sp_op_walk(m->op, collect, &g);
  if (g.oom) goto oom;
  if (!g.nops) goto done;
  /* One union-find node per op; ops with the same id, or on the same value, are joined. */
  parent = malloc((size_t)g.nops * sizeof *parent);
  number = malloc((size_t)g.nops * sizeof *number);
  first = malloc((size_t)g.nops * sizeof *first);
  ids = malloc((size_t)g.nops * sizeof *ids);
  if (!parent || !number || !first || !ids) goto oom;
  for (int i = 0; i < g.nops; i++) {
    parent[i] = i;
    number[i] = -1;
    first[i] = -1;
    if (!sp_op_get_int(g.ops[i], "group_id", &ids[i])) ids[i] = INT64_MIN;
  }
  for (int i = 0; i < g.nops; i++) {
    for (int j = 0; j < i; j++)
      if (ids[j] == ids[i]) {
        parent[find(parent, i)] = find(parent, j);
        break;
      }
    sp_value *v = g.ops[i]->operands[0].value;
    sp_value *seen = sp_value_map_get(&member, v);
    if (seen) parent[find(parent, i)] = find(parent, (int)((intptr_t)seen - 1));
    else if (sp_value_map_put(&member, v, (sp_value *)(intptr_t)(i + 1))) goto oom;
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
      rc = sp_err_set(err, SP_EINVAL, "%s:%d:%d: ShardingGroupOps values cannot cross "
                      "ManualComputationOp boundaries for groupId: %lld", m->filename,
                      g.ops[i]->loc.line, g.ops[i]->loc.col, (long long)ids[i]);
      goto done;
    }
    if (!same_shape(v->type, f->type)) {
      rc = sp_err_set(err, SP_EINVAL, "%s:%d:%d: ShardingGroupOps values must have the same "
                      "shape for groupId: %lld", m->filename, g.ops[i]->loc.line,
                      g.ops[i]->loc.col, (long long)ids[i]);
      goto done;
    }
  }
  for (int i = 0; i < g.nops; i++) {
    sp_op *op = g.ops[i];
    int root = find(parent, i);
    bool duplicate = false;
    for (int j = 0; j < i && !duplicate; j++)
      duplicate = g.ops[j]->block && find(parent, j) == root &&
                  g.ops[j]->operands[0].value == op->operands[0].value;
    if (duplicate) {
      sp_op_erase(op);
      continue;
    }
    sp_attr id = {.name = "group_id", .kind = SP_ATTR_INT, .u.i = number[root]};
    if (sp_attrs_set(m->arena, &op->attrs, &id)) goto oom;
  }
  goto done;
oom:
  rc = sp_err_set(err, SP_ENOMEM, "out of memory importing sharding groups");
done:
  sp_value_map_free(&member);
  free(parent);
  free(number);
  free(first);
  free(ids);
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
