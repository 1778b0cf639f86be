/*
 * exported.c - the collectives the export inserts into a planned module, priced (see
 * exported.h).
 *
 * The export runs on a copy (ir/module_copy.h), whose pairing of ops and values with the
 * original's, made before the export, lets an inserted collective's source value and consumer
 * be found in the copy and named in the original.
 */
#include "plan/exported.h"

#include <string.h>

#include "export/export_pipeline.h"
#include "ir/module_copy.h"
#include "ir/op_list.h"
#include "propagation/canonicalize.h"
#include "search/cost_model.h"

static bool is_collective(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_REDUCE_SCATTER: return true;
    default: return false;
  }
}

/* A collective the export inserted: in the copy, paired with no op of the original. */
static bool new_collective(const sp_module_copy *p, const sp_op *op) {
  return op && is_collective(op) && !sp_module_copy_original_op(p, op);
}

/* "%name" as the search's list names values. */
static const char *value_label(sp_arena *a, const sp_value *v) {
  if (v->name_hint) {
    if (v->def && v->def->nresults > 1) return sp_arena_printf(a, "%%%s#%d", v->name_hint, v->index);
    return sp_arena_printf(a, "%%%s", v->name_hint);
  }
  if (!v->def) return sp_arena_printf(a, "%%arg%d", v->index);
  return sp_arena_printf(a, "result %d of %s (line %d)", v->index, v->def->name, v->def->loc.line);
}

/* Whether reduction `c` sums only axes that `s` holds unreduced: it reads a partial value for
 * a consumer that needs it whole (not an op's own reduction). */
static bool sums_partial_value(const sp_mesh *mesh, const sp_collective *c, const sp_sharding *s) {
  if (!s || !s->nunreduced || !c->naxes) return false;
  for (int i = 0; i < c->naxes; i++) {
    bool found = false;
    for (int k = 0; k < s->nunreduced && !found; k++) {
      sp_ft_axis u;
      found = sp_ft_axis_from_ref(mesh, &s->unreduced[k], &u) == SP_OK &&
              sp_ft_axis_equal(u, c->axes[i]);
    }
    if (!found) return false;
  }
  return true;
}

static int add_entry(sp_module *m, const sp_module_copy *p, const sp_cost_model *cm, sp_op *op,
                     sp_search_collective **out, int *n, int *cap, sp_err *err) {
  sp_collective c;
  int rc = sp_cost_collective_op(cm, op, &c, err);
  if (rc) return sp_err_prefix(err, "%s:%d", m->filename, op->loc.line);
  /* The value it moves: back through the collectives inserted before it. */
  sp_value *src = op->operands[0].value;
  while (src->def && new_collective(p, src->def)) src = src->def->operands[0].value;
  const sp_op *at = NULL;
  int operand = -1;
  bool own = (op->kind == SP_OP_SDY_ALL_REDUCE || op->kind == SP_OP_SDY_REDUCE_SCATTER) &&
             !sums_partial_value(cm->mesh, &c, src->sharding);
  if (own) {
    at = src->def;
  } else {
    const sp_use *u = op->results[0].uses;
    while (u && new_collective(p, u->owner)) u = u->owner->results[0].uses;
    if (u) {
      at = u->owner;
      operand = u->index;
    }
  }
  if (sp_arena_grow(m->arena, (void **)out, cap, *n, sizeof **out))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_search_collective *e = &(*out)[(*n)++];
  memset(e, 0, sizeof *e);
  e->c = c;
  e->operand = operand;
  e->value_ref = sp_module_copy_original_value(p, src);
  e->op_ref = sp_module_copy_original_op(p, at);
  e->value = value_label(m->arena, e->value_ref ? e->value_ref : src);
  e->op = e->op_ref ? e->op_ref->name : (at ? at->name : op->name);
  e->line = e->op_ref ? e->op_ref->loc.line : op->loc.line;
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; i < c.naxes; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, cm->mesh, c.axes[i], true);
  }
  e->axes = sp_strbuf_ok(&sb) ? sp_arena_strdup(m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  if (!e->value || !e->axes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  return SP_OK;
}

int sp_plan_exported_collectives(sp_module *m, const sp_plan_summary *s,
                                 sp_search_collective **out, int *n, sp_err *err) {
  *out = NULL;
  *n = 0;
  if (!s->mesh) return sp_err_set(err, SP_EINVAL, "the plan has no searched mesh");
  sp_cost_model cm;
  memset(&cm, 0, sizeof cm);
  cm.mesh = s->mesh;
  memcpy(cm.axis, s->axis, sizeof cm.axis);   /* links only: nothing here prices compute */
  sp_module_copy p;
  sp_op_list found = {.keep = is_collective};
  int rc = sp_module_copy_make(m, NULL, &p, err), cap = 0;
  if (rc) return rc;
  sp_module *copy = p.module;
  copy->diags = m->diags;
  copy->warned = m->warned;
  if ((rc = sp_export_explicit_collectives(copy, err)) || (rc = sp_canonicalize(copy, err))) {
    sp_err_prefix(err, "exporting the plan");
    goto done;
  }
  sp_op_walk(copy->op, sp_op_list_collect, &found);
  if (found.oom) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; !rc && i < found.n; i++)
    if (new_collective(&p, found.v[i])) rc = add_entry(m, &p, &cm, found.v[i], out, n, &cap, err);
done:
  sp_op_list_free(&found);
  sp_module_copy_free(&p);
  return rc;
}

int sp_plan_use_exported_collectives(sp_module *m, sp_plan_summary *s, sp_err *err) {
  sp_search_collective *list;
  int n;
  int rc = sp_plan_exported_collectives(m, s, &list, &n, err);
  if (rc) return rc;
  s->collectives = list;
  s->ncollectives = n;
  s->collective_s = s->reshard_s = 0;
  for (int i = 0; i < n; i++) {
    if (list[i].operand < 0) s->collective_s += list[i].c.seconds;
    else s->reshard_s += list[i].c.seconds;
  }
  s->comm_s = s->collective_s + s->reshard_s;
  s->total_s = s->compute_s + s->comm_s;
  return SP_OK;
}
