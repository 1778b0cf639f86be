/*
 * propagate_groups.c - sharding groups in the propagation fixed point (see propagate.h,
 * propagate_int.h): the session's index (member slots per group, slot -> group) that
 * sp_propagate_set_sharding() uses to copy an update to every member, and the pass
 * prologue's initial sync of each group.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ir/diag.h"
#include "propagation/propagate_int.h"

/* ------------------------------------------------------------------ sharding groups */

/* The dense number of group id `id` (ids numbered in first-seen order). */
static int group_number(int64_t *ids, int *nids, int64_t id) {
  for (int i = 0; i < *nids; i++)
    if (ids[i] == id) return i;
  ids[*nids] = id;
  return (*nids)++;
}

/* Indexes the module's sharding groups: member slot values per group, and slot -> group. */
int sp_propagate_index_groups(driver *d, sp_err *err) {
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
int sp_propagate_sync_groups(sp_module *m, sp_op **gops, int ngops, bool *inserted, sp_err *err) {
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