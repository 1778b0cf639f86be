/*
 * propagate_groups.c - sharding groups in the propagation fixed point (see propagate.h,
 * propagate_int.h): the session's index (member slots per group, slot -> group) that
 * sp_propagate_set_sharding() uses to copy an update to every member. (The initial sync of
 * the pass prologue is sharding_groups.h's, the same as import's.)
 */
#include <stdint.h>
#include <stdlib.h>

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
