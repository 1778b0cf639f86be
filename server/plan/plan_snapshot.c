/*
 * plan_snapshot.c - the search's snapshots finished into plans (plan.h:
 * sp_plan_options.on_snapshot).
 *
 * The search hands out its best plan so far as a planned copy of the module
 * (search/plan_search.h: sp_search_snapshot). It is finished here as sp_plan_run finishes the
 * module itself after the search: the collectives the export inserts, the shardings closed,
 * the report's "after" tables, the plan built. All of it happens on the copy; the op numbers
 * are the module's (through the copy's pairing), the warnings those given so far. The module
 * and the run's warning list are not touched, so the search goes on as if nothing happened.
 *
 * Memory: the plan goes to the host's callback; everything else made here is freed here.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "ir/diag.h"
#include "plan/exported.h"
#include "plan/plan_int.h"
#include "propagation/export_shardings.h"
#include "propagation/report.h"
#include "rules/registry.h"

/* The copy's op numbers: its counterpart's in the module, for every op numbered there. */
static int number_copy(const sp__plan_snapshots *x, const sp_module_copy *c, sp_ptr_map *out) {
  if (sp_ptr_map_reserve(out, (size_t)c->ops.n)) return SP_ENOMEM;
  for (int i = 0; i < c->ops.n; i++) {
    intptr_t n = sp_ptr_map_get(x->numbers, c->orig.v[i], -1);
    if (n >= 0 && sp_ptr_map_put(out, c->ops.v[i], n)) return SP_ENOMEM;
  }
  return SP_OK;
}

/* The warnings given so far, copied into `to`. */
static int copy_diags(const sp_diag_list *from, sp_diag_list *to) {
  for (int i = 0; from && i < from->n; i++)
    if (sp_diag_emit(to, from->v[i].severity, from->v[i].loc, "%s", from->v[i].msg))
      return SP_ENOMEM;
  return SP_OK;
}

void sp__plan_snapshot(void *ctx, sp_search_snapshot *snap, const sp_err *why) {
  sp__plan_snapshots *x = ctx;
  const sp_plan_options *o = x->o;
  if (!snap) {
    o->on_snapshot(o->snapshot_ctx, NULL, why);
    return;
  }
  sp_module *copy = snap->copy.module;
  sp_err err;
  sp_err_clear(&err);
  sp_diag_list diags;
  sp_diag_list_init(&diags);
  sp_rules_diag warned;
  memset(&warned, 0, sizeof warned);
  if (x->m->warned) warned = *x->m->warned;
  sp_ptr_map numbers;
  sp_ptr_map_init(&numbers);
  cJSON *report = NULL;
  sp_plan *plan = NULL;
  int rc = SP_OK;
  if (copy_diags(x->m->diags, &diags) || number_copy(x, &snap->copy, &numbers))
    rc = sp_err_set(&err, SP_ENOMEM, "out of memory finishing the best plan so far");
  copy->diags = &diags;
  copy->warned = &warned;
  if (!rc) rc = sp_plan_use_exported_collectives(copy, &snap->summary, &err);
  if (!rc && x->close_after) rc = sp_export_close_shardings(copy, &err);
  if (!rc && x->rep) rc = sp_prop_report_end_on(x->rep, x->log, &snap->copy, &report, &err);
  if (!rc) rc = sp__plan_build(copy, &numbers, x->next, report, &snap->summary, &plan, &err);
  copy->diags = NULL;
  copy->warned = NULL;
  cJSON_Delete(report);
  sp_ptr_map_free(&numbers);
  sp_diag_list_free(&diags);
  if (rc) sp_err_prefix(&err, "the best plan so far");
  o->on_snapshot(o->snapshot_ctx, rc ? NULL : plan, rc ? &err : NULL);
}
