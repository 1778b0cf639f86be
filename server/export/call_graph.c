/*
 * call_graph.c - named computations to functions, and merging copies of one function (see
 * call_graph.h).
 */
#include "export/call_graph.h"

#include <stdlib.h>
#include <string.h>

#include "propagation/func_calls.h"
#include "propagation/mesh_import.h"

#define ORIGINAL_NAME "sdy.original_func_name"
#define FUNC_MANUAL_AXES "sdy.func_manual_axes"

int sp_export_named_computations(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_func_calls_collect_named(m->op, &l);
  bool ok = !l.oom;
  for (int i = 0; ok && i < l.n; i++) ok = sp_func_calls_export_one(m, l.v[i], true) != NULL;
  sp_op_list_free(&l);
  return ok ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory exporting named computations");
}

/* ------------------------------------------------------------------ un-flattening */

static sp_block *entry_of(const sp_op *fn) {
  return fn->nregions == 1 && fn->regions[0].nblocks ? fn->regions[0].blocks[0] : NULL;
}

/* Whether the group of `fn` is `name` (`sdy.original_func_name`, a string attribute that the
 * reader may keep as verbatim text with its quotes, else the function's own name). */
static bool in_group(const sp_op *fn, const char *name) {
  const sp_attr *at = sp_op_attr(fn, ORIGINAL_NAME);
  if (!at) return strcmp(sp_op_get_str(fn, "sym_name"), name) == 0;
  const char *o = at->u.s;
  size_t n = strlen(name);
  if (at->kind == SP_ATTR_TEXT && o[0] == '"') return strncmp(o + 1, name, n) == 0 && strcmp(o + 1 + n, "\"") == 0;
  return strcmp(o, name) == 0;
}

static const char *group_of(const sp_op *fn) {
  const sp_attr *at = sp_op_attr(fn, ORIGINAL_NAME);
  if (!at) return sp_op_get_str(fn, "sym_name");
  return at->kind == SP_ATTR_TEXT && at->u.s[0] == '"' ? NULL : at->u.s;
}

static bool same_group(const sp_op *f, const sp_op *g) {
  const char *name = group_of(f);
  if (name) return in_group(g, name);
  /* f's original name is quoted text: compare g's against it the other way round. */
  name = group_of(g);
  if (name) return in_group(f, name);
  return strcmp(sp_op_get_str(f, ORIGINAL_NAME), sp_op_get_str(g, ORIGINAL_NAME)) == 0;
}

static bool same_text_attr(const sp_op *f, const sp_op *g, const char *name) {
  const char *a = sp_op_get_str(f, name), *b = sp_op_get_str(g, name);
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_signature(const sp_op *f, const sp_op *g, bool shardings) {
  const sp_func_info *a = f->func, *b = g->func;
  const sp_block *ea = entry_of(f), *eb = entry_of(g);
  if (!a || !b || !ea || !eb || a->nargs != b->nargs || a->nresults != b->nresults) return false;
  for (int i = 0; i < a->nargs; i++)
    if (!sp_type_equal(a->arg_types[i], b->arg_types[i]) ||
        (shardings && !sp_sharding_equal(ea->args[i]->sharding, eb->args[i]->sharding)))
      return false;
  for (int i = 0; i < a->nresults; i++) {
    const sp_sharding *x = a->result_shardings ? a->result_shardings[i] : NULL;
    const sp_sharding *y = b->result_shardings ? b->result_shardings[i] : NULL;
    if (!sp_type_equal(a->result_types[i], b->result_types[i]) ||
        (shardings && !sp_sharding_equal(x, y)))
      return false;
  }
  return true;
}

static bool is_call(const sp_op *op) { return op->kind == SP_OP_FUNC_CALL; }

int sp_export_unflatten_call_graph(sp_module *m, bool dedup_fully, sp_err *err) {
  sp_op_list calls = {.keep = is_call}, reps = {0};
  sp_op_walk(m->op, sp_op_list_collect, &calls);
  for (int i = 0; !calls.oom && !reps.oom && i < calls.n; i++) {
    const char *callee = sp_op_get_str(calls.v[i], "callee");
    sp_op *fn = callee ? sp_module_lookup_func(m, callee) : NULL;
    if (!fn || !fn->func) continue;
    sp_op *rep = NULL;
    for (int k = 0; k < reps.n && !rep; k++) {
      sp_op *r = reps.v[k];
      if (r == fn || (same_group(r, fn) &&
                      same_text_attr(r, fn, FUNC_MANUAL_AXES) && same_signature(r, fn, !dedup_fully)))
        rep = r;
    }
    if (!rep) {
      sp_op_list_push(&reps, fn);
    } else if (rep != fn) {
      sp_attr *at = sp_op_attr(calls.v[i], "callee");
      at->u.s = sp_op_get_str(rep, "sym_name");
    }
  }
  bool oom = calls.oom || reps.oom;
  sp_op_list_free(&calls);
  sp_op_list_free(&reps);
  if (oom) return sp_err_set(err, SP_ENOMEM, "out of memory un-flattening the call graph");
  /* With dedup_fully the copies stay for a later symbol DCE (the pipeline runs one). */
  int rc = dedup_fully ? SP_OK : sp_symbol_dce(m, err);
  if (rc) return rc;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) {
      sp_attrs_remove(&op->attrs, ORIGINAL_NAME);
      sp_attrs_remove(&op->attrs, FUNC_MANUAL_AXES);
    }
  return SP_OK;
}
