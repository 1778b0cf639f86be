/*
 * op_priority.c - op-priority rounds over the strategy fixed point (see op_priority.h).
 *
 * A round is one sp_propagate_fixed_point() whose direction callback is this file's
 * round_direction(): the union of the schedule over rounds 0..round, intersected with the
 * caller's own callback when there is one.
 */
#include "propagation/op_priority.h"

#include <string.h>

#include "ir/sp_limits.h"
#include "rules/registry.h"

/* Whether some operand that is not a scalar has more than one use ("defer multi-use ops"). */
static bool has_multi_use_operand(const sp_op *op) {
  for (int i = 0; i < op->noperands; i++) {
    const sp_value *v = op->operands[i].value;
    if (!v) continue;
    const sp_type *t = v->type;
    if (t && t->kind == SP_TYPE_TENSOR && t->rank == 0) continue;
    if (v->uses && v->uses->next) return true;
  }
  return false;
}

/* The schedule of one round alone (not yet the union), for a factor of kind `pass_through`
 * (whether the rule's factor is pass-through) of an op of class `cls`. */
typedef enum op_class { CLASS_PASS_THROUGH, CLASS_DYNAMIC_SLICE, CLASS_BROADCAST, CLASS_OTHER } op_class;

static sp_prop_direction round_only(op_class cls, bool pass_through_factor, int round,
                                    bool multi_use) {
  switch (round) {
  case 0:
  case 1: {
    bool gated = round == 0 && multi_use;
    if (cls == CLASS_PASS_THROUGH) return gated ? SP_DIR_NONE : SP_DIR_BOTH;
    if (cls == CLASS_DYNAMIC_SLICE) return gated ? SP_DIR_NONE : SP_DIR_FORWARD;
    return SP_DIR_NONE;
  }
  case 2:
    if (!pass_through_factor) return SP_DIR_NONE;
    return cls == CLASS_BROADCAST ? SP_DIR_BACKWARD : SP_DIR_BOTH;
  case 3:
    return cls == CLASS_BROADCAST ? SP_DIR_BACKWARD : SP_DIR_BOTH;
  default:
    return SP_DIR_BOTH;
  }
}

static op_class class_of(const sp_op *op) {
  if (sp_rules_is_pass_through_op(op)) return CLASS_PASS_THROUGH;
  if (op->kind == SP_OP_DYNAMIC_SLICE || op->kind == SP_OP_DYNAMIC_UPDATE_SLICE)
    return CLASS_DYNAMIC_SLICE;
  return op->kind == SP_OP_BROADCAST_IN_DIM ? CLASS_BROADCAST : CLASS_OTHER;
}

/* The union over rounds 0..round for a factor that is (or is not) pass-through. */
static sp_prop_direction union_upto(op_class cls, bool pass_through_factor, int round,
                                    bool multi_use) {
  unsigned d = SP_DIR_NONE;
  for (int r = 0; r <= round && r < SP_OP_PRIORITY_ROUNDS; r++)
    d |= round_only(cls, pass_through_factor, r, multi_use);
  return (sp_prop_direction)d;
}

void sp_op_priority_directions(const sp_op *op, const sp_rule *rule, int round,
                               sp_prop_direction *out) {
  if (rule->nfactors == 0) return;
  bool multi_use = round == 0 && has_multi_use_operand(op);
  op_class cls = class_of(op);
  /* Only round 2 looks at the factor's kind: two unions cover every factor. */
  sp_prop_direction pt = union_upto(cls, true, round, multi_use);
  sp_prop_direction other = union_upto(cls, false, round, multi_use);
  for (int f = 0; f < rule->nfactors; f++)
    out[f] = rule->factors[f].kind == SP_FACTOR_PASS_THROUGH ? pt : other;
}

typedef struct round_ctx {
  int round;
  sp_propagate_direction_fn outer;   /* the caller's callback, intersected */
  void *outer_ctx;
} round_ctx;

static void round_direction(const sp_op *op, const sp_rule *rule, sp_prop_direction *out,
                            void *ctx) {
  const round_ctx *rc = ctx;
  sp_op_priority_directions(op, rule, rc->round, out);
  if (!rc->outer || rule->nfactors == 0) return;
  sp_prop_direction outer[SP_MAX_FACTORS];
  int n = rule->nfactors < SP_MAX_FACTORS ? rule->nfactors : SP_MAX_FACTORS;
  rc->outer(op, rule, outer, rc->outer_ctx);
  for (int f = 0; f < n; f++) out[f] = (sp_prop_direction)(out[f] & outer[f]);
}

int sp_propagate_strategy_run(sp_propagate_session *s, const sp_propagate_options *o,
                              sp_propagate_stats *stats, sp_err *err) {
  if (!o->basic_then_aggressive) return sp_propagate_session_run(s, o, stats, err);
  sp_propagate_options step = *o;
  step.strategy = SP_PROP_BASIC;
  int rc = sp_propagate_session_run(s, &step, stats, err);
  if (rc) return rc;
  step.strategy = SP_PROP_AGGRESSIVE;
  return sp_propagate_session_run(s, &step, stats, err);
}

int sp_op_priority_run(sp_propagate_session *s, sp_module *m, const sp_propagate_options *o,
                       sp_propagate_stats *stats, sp_err *err) {
  if (o->skip_op_priority) return sp_propagate_strategy_run(s, o, stats, err);
  sp_conflict_log *log = o->conflicts ? o->conflicts : m->conflicts;
  int saved_round = log ? log->round : -1, rc = SP_OK;
  for (int round = 0; round < SP_OP_PRIORITY_ROUNDS && rc == SP_OK; round++) {
    round_ctx ctx = {round, o->direction, o->direction_ctx};
    sp_propagate_options step = *o;
    step.direction = round_direction;
    step.direction_ctx = &ctx;
    if (log) log->round = round;
    rc = sp_propagate_strategy_run(s, &step, stats, err);
  }
  if (log) log->round = saved_round;
  return rc;
}

/* Module-level forms: a session (without the pass prologue) around the session forms. */
int sp_propagate_strategy(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                          sp_err *err) {
  sp_propagate_session *s;
  int rc = sp_propagate_session_new(m, false, &s, err);
  if (rc) return rc;
  rc = sp_propagate_strategy_run(s, o, stats, err);
  sp_propagate_session_free(s, false, NULL);
  return rc;
}

int sp_op_priority_propagate(sp_module *m, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err) {
  sp_propagate_session *s;
  int rc = sp_propagate_session_new(m, false, &s, err);
  if (rc) return rc;
  rc = sp_op_priority_run(s, m, o, stats, err);
  sp_propagate_session_free(s, false, NULL);
  return rc;
}
