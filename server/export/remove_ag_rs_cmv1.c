/*
 * remove_ag_rs_cmv1.c - all-gathers into and reduce-scatters out of dots removed for CMV1
 * (see remove_ag_rs_cmv1.h).
 */
#include "export/remove_ag_rs_cmv1.h"

#include "ir/op_list.h"

static bool is_dot(const sp_op *op) { return op->kind == SP_OP_DOT || op->kind == SP_OP_DOT_GENERAL; }

/* The one op that uses `v`, NULL when it has none or several uses. */
static sp_op *only_user(const sp_value *v) {
  return v->uses && !v->uses->next ? v->uses->owner : NULL;
}

static void remove_around(sp_op *dot) {
  for (int i = 0; i < dot->noperands; i++) {
    sp_op *ag = dot->operands[i].value->def;
    if (!ag || ag->kind != SP_OP_SDY_ALL_GATHER || only_user(&ag->results[0]) != dot) continue;
    sp_op_set_operand(dot, i, ag->operands[0].value);
    sp_op_erase(ag);
  }
  if (dot->nresults != 1) return;
  sp_value *res = &dot->results[0];
  sp_op *rs = only_user(res);
  if (!rs || rs->kind != SP_OP_SDY_REDUCE_SCATTER || (res->sharding && res->sharding->nunreduced)) return;
  res->sharding = rs->results[0].sharding;
  sp_value_replace_all_uses(&rs->results[0], res);
  sp_op_erase(rs);
}

int sp_export_remove_ag_rs_cmv1(sp_module *m, sp_err *err) {
  sp_op_list l = {.keep = is_dot};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  if (l.oom) {
    sp_op_list_free(&l);
    return sp_err_set(err, SP_ENOMEM, "out of memory removing all-gathers and reduce-scatters for CMV1");
  }
  for (int i = 0; i < l.n; i++) remove_around(l.v[i]);
  sp_op_list_free(&l);
  return SP_OK;
}
