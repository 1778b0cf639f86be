/*
 * plan_partial.c - which values of the strategy graph may carry partial sums (Shardy's
 * unreduced axes; docs/cost-model.md, "Partial sums").
 *
 * A dot, dot_general or add-reduce may keep its reduction partial when its one result has one
 * use and that use is linear in it; linear element-wise followers (add, subtract, negate,
 * multiply, divide's numerator, float-to-float convert) carry it on under the same one-use rule.
 * One use, so that the all-reduce the export inserts where the sum is read whole is exactly the
 * one the search prices. Pure predicates over the module and the build state of
 * plan_search_int.h; nothing here allocates.
 */
#include <string.h>

#include "search/plan_search_int.h"

/* Whether a floating-point element type ("f32", "bf16", "f8E4M3FN", ...). */
static bool is_float(const sp_type *t) {
  return t && t->kind == SP_TYPE_TENSOR && t->elem && (t->elem[0] == 'f' || strncmp(t->elem, "bf", 2) == 0);
}

/* Whether element-wise `op` is linear in its operand j, so a partial sum there gives a partial
 * sum of its result: add, subtract, negate, multiply (by a whole value), divide (a partial
 * numerator) and a float-to-float convert. */
static bool linear_in(const sp_op *op, int j) {
  switch (op->kind) {
    case SP_OP_ADD:
    case SP_OP_SUBTRACT:
    case SP_OP_NEGATE:
    case SP_OP_MULTIPLY: return true;
    case SP_OP_DIVIDE: return j == 0;
    case SP_OP_CONVERT:
      return op->noperands == 1 && op->nresults == 1 && op->operands[0].value &&
             is_float(op->operands[0].value->type) && is_float(op->results[0].type);
    default: return false;
  }
}

/* The only use of `v`, or NULL when it has none or several. */
static const sp_use *only_use(const sp_value *v) {
  return v->uses && !v->uses->next ? v->uses : NULL;
}

/* Whether `v` may be partial: it has one use, by a top-level op other than the return (the
 * function's results are whole sums). One use, so that the all-reduce the export inserts for it
 * is the one the search prices (no two consumers share one). */
static bool may_be_partial(search *S, const sp_value *v) {
  const sp_use *u = only_use(v);
  return u && u->owner->block == S->body && u->owner->kind != SP_OP_FUNC_RETURN;
}

/* Whether partial sums in `v` can flow on: it may be partial and its use is linear in it. */
static bool may_stay_partial(search *S, const sp_value *v) {
  return may_be_partial(S, v) && linear_in(v->uses->owner, v->uses->index);
}

/* Whether an add/subtract's operands other than j can come partial: each is defined by an op
 * that may make partial sums (a cheap test that keeps keep-partial strategies away from
 * reductions whose sum meets a whole value; sp_search_carries_partial decides exactly). */
static bool others_may_come_partial(const sp_op *op, int j) {
  if (op->kind != SP_OP_ADD && op->kind != SP_OP_SUBTRACT) return true;
  for (int k = 0; k < op->noperands; k++) {
    const sp_op *d = k == j || !op->operands[k].value ? NULL : op->operands[k].value->def;
    if (k == j) continue;
    if (!d) return false;
    bool maker = d->kind == SP_OP_DOT || d->kind == SP_OP_DOT_GENERAL || d->kind == SP_OP_REDUCE;
    if (!maker && !linear_in(d, 0)) return false;
  }
  return true;
}

/* Whether the reduction of `op` may be kept partial: a dot or a sum-reduce of one result whose
 * sum flows into a linear use. */
bool sp_search_offers_partial(search *S, const sp_op *op) {
  if (S->o->no_partial || op->nresults != 1) return false;
  bool sum = op->kind == SP_OP_DOT || op->kind == SP_OP_DOT_GENERAL;
  if (op->kind == SP_OP_REDUCE && op->noperands == 2 && op->nregions == 1 &&
      op->regions[0].nblocks == 1 && op->regions[0].blocks[0]->first)
    sum = op->regions[0].blocks[0]->first->kind == SP_OP_ADD;
  if (!sum || !may_stay_partial(S, &op->results[0])) return false;
  const sp_use *u = only_use(&op->results[0]);
  return others_may_come_partial(u->owner, u->index);
}

/* Whether follower `op` (following member `mb` through operand j) carries partial sums on:
 * the followed value may be partial, the op is linear in it, its own result may be partial,
 * and for add/subtract every other operand may be partial too (a whole value added to a
 * partial sum would be counted once per device: such a follower takes its operands whole). */
bool sp_search_carries_partial(search *S, const sp_op *op, int j, const member *mb) {
  if (!mb->may_partial || !linear_in(op, j) || !may_be_partial(S, &op->results[0])) return false;
  if (op->kind != SP_OP_ADD && op->kind != SP_OP_SUBTRACT) return true;
  for (int k = 0; k < op->noperands; k++) {
    if (k == j) continue;
    const sp_value *v = op->operands[k].value;
    int slot = v ? (int)sp_ptr_map_get(&S->valmap, v, -1) : -1;
    if (slot < 0 || !S->nodes[S->slot_node[slot]].mem[S->slot_mem[slot]].may_partial) return false;
  }
  return true;
}
