/*
 * plan_snapshot.c - the search's best plan so far as a planned copy of the module, made while
 * the search goes on (see plan_search.h: sp_search_incumbent_plan, sp_search_copy_planned).
 *
 * The plan is written into the module searched exactly as at the end of a search (the
 * summary, then the write-back), the module is copied (ir/module_copy.h), and the shardings
 * the write-back replaced are put back (saved_shardings.h): the search goes on with the
 * module as it was. The summary's records, the shardings written and the copy all live in the
 * copy's arena, so a snapshot costs the module searched nothing once it is freed. The
 * summary's pointers into the module are then moved to the copy, and the operand reshards are
 * inserted there, as the placement search does into the module at its end.
 */
#include <string.h>

#include "search/plan_search_int.h"
#include "search/saved_shardings.h"

/* ------------------------------------------------------------------ the copy */

#define MOVE_OP(c, x)                                              \
  do {                                                             \
    if ((x) && !((x) = sp_module_copy_op((c), (x)))) return false; \
  } while (0)

/* The summary's pointers into the module, moved to the copy in new arrays (arena `a`); false
 * when something has no counterpart or memory runs out. */
static bool move_summary(const sp_module_copy *c, sp_arena *a, sp_plan_summary *s) {
  sp_plan_op_compute *oc = sp_arena_alloc(a, (size_t)s->nop_compute * sizeof *oc + 1);
  sp_plan_operand_reshard *rs = sp_arena_alloc(a, (size_t)s->noperand_reshards * sizeof *rs + 1);
  sp_plan_operand_reshard *st = sp_arena_alloc(a, (size_t)s->nstate_results * sizeof *st + 1);
  sp_plan_value_sharding *pv = sp_arena_alloc(a, (size_t)s->npartial_values * sizeof *pv + 1);
  sp_search_collective *cl = sp_arena_alloc(a, (size_t)s->ncollectives * sizeof *cl + 1);
  sp_plan_tie_group *tg = sp_arena_alloc(a, (size_t)s->ntie_groups * sizeof *tg + 1);
  if (!oc || !rs || !st || !pv || !cl || !tg) return false;
  for (int i = 0; i < s->nop_compute; i++) {
    oc[i] = s->op_compute[i];
    MOVE_OP(c, oc[i].op);
  }
  for (int i = 0; i < s->noperand_reshards; i++) {
    rs[i] = s->operand_reshards[i];
    MOVE_OP(c, rs[i].op);
  }
  for (int i = 0; i < s->nstate_results; i++) {
    st[i] = s->state_results[i];
    MOVE_OP(c, st[i].op);
  }
  for (int i = 0; i < s->npartial_values; i++) {
    pv[i] = s->partial_values[i];
    if (!(pv[i].value = sp_module_copy_value(c, pv[i].value))) return false;
  }
  for (int i = 0; i < s->ncollectives; i++) {   /* named by value: NULL when not found */
    cl[i] = s->collectives[i];
    cl[i].value_ref = sp_module_copy_value(c, cl[i].value_ref);
    cl[i].op_ref = sp_module_copy_op(c, cl[i].op_ref);
  }
  for (int i = 0; i < s->ntie_groups; i++) {
    tg[i].n = s->ties[i].n;
    if (!(tg[i].values = sp_arena_alloc(a, (size_t)tg[i].n * sizeof *tg[i].values + 1)))
      return false;
    for (int k = 0; k < tg[i].n; k++)
      if (!(tg[i].values[k] = sp_module_copy_value(c, s->ties[i].values[k]))) return false;
  }
  s->op_compute = oc;
  s->operand_reshards = rs;
  s->state_results = st;
  s->partial_values = pv;
  s->collectives = cl;
  s->ties = tg;
  return true;
}

int sp_search_copy_planned(sp_module *m, const sp_plan_summary *s, sp_module *into,
                           sp_search_snapshot *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  int rc = sp_module_copy_make(m, into, &out->copy, err);
  if (rc) return rc;
  out->summary = *s;
  if (!move_summary(&out->copy, out->copy.module->arena, &out->summary)) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory moving the plan to the module's copy");
  } else {
    rc = sp_plan_insert_operand_reshards(out->copy.module, &out->summary, err);
  }
  if (rc) sp_module_copy_free(&out->copy);
  return rc;
}

/* ------------------------------------------------------------------ the incumbent */

int sp_search_incumbent_plan(const sp_search_incumbent *inc, const sp_axis_cost *axis,
                             sp_search_snapshot *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  search *S = inc->run->S;
  sp_module *into = sp_module_new(S->m->filename);
  sp_arena *scratch = sp_arena_new(0);
  sp_saved_shardings saved;
  if (!into || !scratch || sp_saved_shardings_init(scratch, S->func, &saved)) {
    sp_module_free(into);
    sp_arena_free(scratch);
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  sp_saved_shardings_take(&saved);
  /* The summary and the write-back as at the end of the search, recorded in the copy's
   * arena; the summary starts from what the search knew before solving (the layer ties). */
  sp_plan_summary s = *inc->run->problem;
  S->rec = into->arena;
  int rc = sp_search_describe(S, inc->run->g, inc->run->stats, inc->choice, inc->cost,
                              inc->bound, &s, err);
  if (!rc) rc = sp_search_write_back(S, inc->choice, &s, err);
  S->rec = S->m->arena;
  if (rc) {
    sp_saved_shardings_restore(&saved);
    sp_arena_free(scratch);
    sp_module_free(into);
    return rc;
  }
  s.status = SP_SG_TIMEOUT;
  s.gap = s.bound == INT64_MIN ? 1.0
        : (double)(s.cost - s.bound) / (double)(s.cost > 1 ? s.cost : 1);
  if (s.gap < 0) s.gap = 0;
  if (axis) memcpy(s.axis, axis, sizeof s.axis);
  rc = sp_search_copy_planned(S->m, &s, into, out, err);
  sp_saved_shardings_restore(&saved);
  sp_arena_free(scratch);
  return rc;
}
