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
  unsigned counter = 0; /* one for the pass, as MLIR's SymbolTable */
  for (int i = 0; ok && i < l.n; i++) ok = sp_func_calls_export_one(m, l.v[i], true, &counter) != NULL;
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

/* Functions of one group: same original name, same manual axes, same types. */
static bool same_family(const sp_op *f, const sp_op *g) {
  return f == g || (same_group(f, g) && same_text_attr(f, g, FUNC_MANUAL_AXES) &&
                    same_signature(f, g, false));
}

static int index_of(const sp_op_list *l, const sp_op *fn, bool shardings) {
  for (int k = 0; k < l->n; k++)
    if (l->v[k] == fn || (same_family(l->v[k], fn) && (!shardings || same_signature(l->v[k], fn, true))))
      return k;
  return -1;
}

/* The callee each call gets. A class is the functions of a group with equal shardings, named
 * by the first of them called (classes.v); without dedup_fully a call goes to its class.
 * With it, a call goes to its group's function (mains.v), which is the first callee of the
 * group and changes to a later call's callee only when that call gives the callee's class
 * strictly more calls than the class of the function in place (lead). */
static int pick_callees(sp_module *m, const sp_op_list *calls, bool dedup_fully, sp_op **to) {
  sp_op_list classes = {0}, mains = {0};
  int *count = calloc((size_t)calls->n + 1, sizeof *count);
  int *lead = calloc((size_t)calls->n + 1, sizeof *lead);
  int *group_of = calloc((size_t)calls->n + 1, sizeof *group_of);
  int rc = SP_ENOMEM;
  if (!count || !lead || !group_of) goto fail;
  for (int i = 0; i < calls->n; i++) {
    const char *callee = sp_op_get_str(calls->v[i], "callee");
    sp_op *fn = callee ? sp_module_lookup_func(m, callee) : NULL;
    to[i] = NULL;
    group_of[i] = -1;
    if (!fn || !fn->func) continue;
    int c = index_of(&classes, fn, true);
    if (c < 0 && !sp_op_list_push(&classes, fn)) goto fail;
    if (c < 0) c = classes.n - 1;
    count[c]++;
    to[i] = classes.v[c];
    if (!dedup_fully) continue;
    int g = index_of(&mains, fn, false);
    if (g < 0 && !sp_op_list_push(&mains, fn)) goto fail;
    if (g < 0) {
      g = mains.n - 1;
      lead[g] = c;
    } else if (count[c] > count[lead[g]]) {
      mains.v[g] = fn;
      lead[g] = c;
    }
    group_of[i] = g;
  }
  for (int i = 0; i < calls->n; i++)
    if (group_of[i] >= 0) to[i] = mains.v[group_of[i]];
  rc = SP_OK;
fail:
  sp_op_list_free(&classes);
  sp_op_list_free(&mains);
  free(count);
  free(lead);
  free(group_of);
  return rc;
}

int sp_export_unflatten_call_graph(sp_module *m, bool dedup_fully, sp_err *err) {
  sp_op_list calls = {.keep = is_call};
  sp_op **to = NULL;
  int rc = SP_ENOMEM;
  sp_op_walk(m->op, sp_op_list_collect, &calls);
  if (calls.oom || !(to = malloc(((size_t)calls.n + 1) * sizeof *to))) goto fail;
  if ((rc = pick_callees(m, &calls, dedup_fully, to))) goto fail;
  for (int i = 0; i < calls.n; i++)
    if (to[i]) sp_op_attr(calls.v[i], "callee")->u.s = sp_op_get_str(to[i], "sym_name");
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) {
      sp_attrs_remove(&op->attrs, ORIGINAL_NAME);
      sp_attrs_remove(&op->attrs, FUNC_MANUAL_AXES);
    }
fail:
  sp_op_list_free(&calls);
  free(to);
  return rc ? sp_err_set(err, rc, "out of memory un-flattening the call graph") : SP_OK;
}
