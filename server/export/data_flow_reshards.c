/*
 * data_flow_reshards.c - reshards of the values flowing into data-flow op results (see
 * data_flow_reshards.h).
 */
#include "export/data_flow_reshards.h"

#include "export/reshard_op.h"
#include "propagation/sharding_walk.h"

bool sp_export_is_data_flow_op(const sp_op *op) {
  return op->kind == SP_OP_WHILE || op->kind == SP_OP_CASE || op->kind == SP_OP_OPTIMIZATION_BARRIER;
}

/* Whether `v` is defined outside the regions of `op` (neither by an op nested in it nor as an
 * argument of one of its blocks). */
static bool defined_outside(const sp_value *v, const sp_op *op) {
  const sp_op *p = v->def ? v->def : sp_block_parent_op(v->block);
  for (; p; p = sp_op_parent(p))
    if (p == op) return false;
  return true;
}

/* Reshards operand i of `user` (a data-flow op or a region terminator) to `want`; a
 * terminator's value from outside the data-flow op `owner` is resharded right after its
 * definition, inside values right before the terminator. */
static int reshard_flow(sp_module *m, sp_op *user, int i, const sp_sharding *want, const sp_op *owner) {
  sp_value *v = user->operands[i].value;
  const sp_sharding *have = v->sharding;
  if (!v->type || v->type->kind != SP_TYPE_TENSOR) return SP_OK;
  sp_sharding *to = (sp_sharding *)want;
  if (!want) {
    if (!have || sp_sharding_is_unsharded(have)) return SP_OK;
    if (!(to = sp_sharding_new(m->arena, have->mesh_name, have->rank, true))) return SP_ENOMEM;
    to->inline_mesh = have->inline_mesh;
  } else if (!have) {
    if (sp_sharding_is_unsharded(want)) return SP_OK;
  } else if (sp_sharding_same_mesh(m, have, want) && sp_sharding_same_axes(have, want)) {
    return SP_OK;
  }
  sp_op *r = sp_export_reshard_op(m, v, NULL, to, user->loc);
  if (!r) return SP_ENOMEM;
  if (owner && defined_outside(v, owner)) sp_op_insert_after_value(v, r);
  else sp_op_insert_before(user, r);
  sp_op_set_operand(user, i, &r->results[0]);
  return SP_OK;
}

static int reshard_terminator(sp_module *m, sp_op *op, sp_region *region) {
  sp_block *b = region->nblocks ? region->blocks[0] : NULL;
  sp_op *ret = b ? b->last : NULL;
  if (!ret) return SP_OK;
  int rc = SP_OK;
  for (int i = 0; !rc && i < ret->noperands && i < op->nresults; i++)
    rc = reshard_flow(m, ret, i, op->results[i].sharding, op);
  return rc;
}

int sp_export_data_flow_reshards(sp_module *m, sp_op *op, sp_err *err) {
  int rc = SP_OK;
  if (op->kind == SP_OP_WHILE || op->kind == SP_OP_OPTIMIZATION_BARRIER)
    for (int i = 0; !rc && i < op->noperands && i < op->nresults; i++)
      rc = reshard_flow(m, op, i, op->results[i].sharding, NULL);
  if (op->kind == SP_OP_WHILE && op->nregions == 2) rc = rc ? rc : reshard_terminator(m, op, &op->regions[1]);
  for (int k = 0; op->kind == SP_OP_CASE && !rc && k < op->nregions; k++) rc = reshard_terminator(m, op, &op->regions[k]);
  return rc ? sp_err_set(err, rc, "out of memory inserting explicit reshards") : SP_OK;
}
