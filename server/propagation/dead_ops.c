/*
 * dead_ops.c - the ops that may be erased when dead (see dead_ops.h).
 */
#include "propagation/dead_ops.h"

#include "rules/registry.h"

/* Ops free of memory effects whatever their operands (StableHLO's and sdy's `Pure`). */
static bool is_pure_kind(sp_op_kind k) {
  switch (k) {
    case SP_OP_CONSTANT:
    case SP_OP_SDY_CONSTANT:
    case SP_OP_IOTA:
    case SP_OP_BITCAST_CONVERT:
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
    case SP_OP_RESHAPE:
    case SP_OP_REVERSE:
    case SP_OP_SLICE:
    case SP_OP_TRANSPOSE:
    case SP_OP_CHOLESKY:
    case SP_OP_TRIANGULAR_SOLVE:
    case SP_OP_BATCH_NORM_INFERENCE:
    case SP_OP_BATCH_NORM_TRAINING:
    case SP_OP_BATCH_NORM_GRAD:
    case SP_OP_GET_TUPLE_ELEMENT:
    case SP_OP_TUPLE:
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_PROPAGATION_BARRIER:
    case SP_OP_SDY_ALL_TO_ALL:   /* the one pure collective: a dead one goes (all_to_all_no_use) */
      return true;
    default:
      return false;
  }
}

/* Ops whose effects are those of their bodies (RecursiveMemoryEffects). */
static bool has_recursive_effects(sp_op_kind k) {
  switch (k) {
    case SP_OP_REDUCE:
    case SP_OP_REDUCE_WINDOW:
    case SP_OP_SCATTER:
    case SP_OP_SELECT_AND_SCATTER:
    case SP_OP_SORT:
      return true;
    default:
      return false;
  }
}

static bool bodies_are_pure(const sp_op *op) {
  for (int r = 0; r < op->nregions; r++)
    for (int b = 0; b < op->regions[r].nblocks; b++)
      for (const sp_op *o = op->regions[r].blocks[b]->first; o; o = o->next)
        if (o->kind != SP_OP_RETURN && !sp_op_is_pure(o)) return false;
  return true;
}

bool sp_op_is_pure(const sp_op *op) {
  if (sp_rules_is_elementwise(op) || is_pure_kind(op->kind)) return true;
  return has_recursive_effects(op->kind) && bodies_are_pure(op);
}
