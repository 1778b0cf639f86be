/*
 * call_graph.c - named computations to functions, and merging copies of one function (see
 * call_graph.h).
 */
#include "propagation/call_graph.h"

#include <stdlib.h>
#include <string.h>

#include "ir/op_list.h"
#include "propagation/mesh_import.h"
#include "propagation/trace.h"

#define ORIGINAL_NAME "sdy.original_func_name"
#define FUNC_MANUAL_AXES "sdy.func_manual_axes"

static int set_str_attr(sp_arena *a, sp_op *op, const char *name, sp_attr_kind kind,
                        const char *value) {
  sp_attr at = {.name = name, .kind = kind, .u.s = value};
  return sp_attrs_set(a, &op->attrs, &at);
}

/* ------------------------------------------------------------------ named computations */

/* Appends the named computations at and below `op` to `l`, innermost first (post-order, the
 * order they are exported in); false when memory ran out. */
static bool collect_named(sp_op *op, sp_op_list *l) {
  for (int r = 0; r < op->nregions; r++)
    for (int b = 0; b < op->regions[r].nblocks; b++)
      for (sp_op *o = op->regions[r].blocks[b]->first; o; o = o->next)
        if (!collect_named(o, l)) return false;
  return op->kind != SP_OP_SDY_NAMED_COMPUTATION || sp_op_list_push(l, op);
}

/* If `v` feeds an sdy.data_flow_edge, the edge goes (its uses use `v`, which takes the origins
 * the trace recorded on it) and its sharding, when it has one, is returned; else NULL. *oom
 * is set when the trace ran out of memory. */
static sp_sharding *take_edge(sp_module *m, sp_value *v, bool *oom) {
  for (sp_use *u = v->uses; u; u = u->next) {
    sp_op *e = u->owner;
    if (e->kind != SP_OP_SDY_DATA_FLOW_EDGE || e->nresults != 1) continue;
    sp_sharding *s = e->results[0].sharding;
    if (m->trace && sp_trace_move(m->trace, &e->results[0], v)) *oom = true;
    sp_value_replace_all_uses(&e->results[0], v);
    sp_op_erase(e);
    return s;
  }
  return NULL;
}

/* One named computation to a private function and a call: the function, `nc` itself when it
 * is left alone (no name, or not one block), NULL on out-of-memory. */
static sp_op *export_one(sp_module *m, sp_op *nc, unsigned *counter) {
  sp_arena *a = m->arena;
  const char *origin = sp_op_get_str(nc, "name");
  if (!origin || nc->nregions != 1 || nc->regions[0].nblocks != 1) return nc; /* left as is */
  const char *name = sp_module_unique_symbol_counted(m, origin, counter);
  sp_op *fn = name ? sp_op_create(a, "func.func", 0, NULL, 0, NULL, 1) : NULL;
  sp_func_info *fi = fn ? sp_arena_calloc(a, 1, sizeof *fi) : NULL;
  if (!fi || set_str_attr(a, fn, "sym_name", SP_ATTR_STR, name) ||
      set_str_attr(a, fn, "sym_visibility", SP_ATTR_STR, "private") ||
      set_str_attr(a, fn, ORIGINAL_NAME, SP_ATTR_STR, origin))
    return NULL;
  fn->loc = nc->loc;
  /* Move the body. */
  fn->regions[0] = nc->regions[0];
  fn->regions[0].parent = fn;
  for (int b = 0; b < fn->regions[0].nblocks; b++) fn->regions[0].blocks[b]->parent = &fn->regions[0];
  memset(&nc->regions[0], 0, sizeof nc->regions[0]);
  nc->regions[0].parent = nc;
  sp_block *entry = fn->regions[0].blocks[0];
  sp_attr *in = sp_op_attr(nc, "in_shardings");
  fi->nargs = entry->nargs;
  fi->nresults = nc->nresults;
  fi->arg_types = sp_arena_alloc(a, (size_t)(fi->nargs + 1) * sizeof *fi->arg_types);
  fi->result_types = sp_arena_alloc(a, (size_t)(fi->nresults + 1) * sizeof *fi->result_types);
  fi->result_shardings = sp_arena_calloc(a, (size_t)(fi->nresults + 1), sizeof *fi->result_shardings);
  fi->result_attrs = sp_arena_calloc(a, (size_t)(fi->nresults + 1), sizeof *fi->result_attrs);
  if (!fi->arg_types || !fi->result_types || !fi->result_shardings || !fi->result_attrs) return NULL;
  bool oom = false;
  for (int i = 0; i < entry->nargs; i++) {
    fi->arg_types[i] = entry->args[i]->type;
    if (in && in->kind == SP_ATTR_SHARDINGS && i < in->u.shardings.n)
      entry->args[i]->sharding = in->u.shardings.v[i];
    sp_sharding *live = take_edge(m, entry->args[i], &oom);
    if (live) entry->args[i]->sharding = live;
  }
  for (int i = 0; i < nc->nresults; i++) {
    sp_sharding *live = take_edge(m, &nc->results[i], &oom);
    if (live) nc->results[i].sharding = live;
    fi->result_types[i] = nc->results[i].type;
  }
  if (oom) return NULL;
  fn->func = fi;
  if (entry->last && entry->last->kind == SP_OP_SDY_RETURN) {
    entry->last->kind = SP_OP_FUNC_RETURN;
    entry->last->name = sp_op_kind_name(SP_OP_FUNC_RETURN);
  }
  sp_block_append(sp_module_body(m), fn);

  sp_type **types = sp_arena_alloc(a, (size_t)(nc->nresults + 1) * sizeof *types);
  if (!types) return NULL;
  for (int i = 0; i < nc->nresults; i++) types[i] = nc->results[i].type;
  sp_op *call = sp_op_create(a, "func.call", nc->noperands, NULL, nc->nresults, types, 0);
  if (!call || set_str_attr(a, call, "callee", SP_ATTR_SYMBOL, name)) return NULL;
  /* The call keeps the computation's own attributes (not its name and shardings). */
  for (int i = 0; i < nc->attrs.n; i++) {
    const sp_attr *at = &nc->attrs.v[i];
    if (strcmp(at->name, "name") == 0 || strcmp(at->name, "in_shardings") == 0 ||
        strcmp(at->name, "out_shardings") == 0)
      continue;
    if (sp_attrs_set(a, &call->attrs, at)) return NULL;
  }
  call->loc = nc->loc;
  for (int i = 0; i < nc->noperands; i++) sp_op_set_operand(call, i, nc->operands[i].value);
  for (int i = 0; m->trace && i < nc->nresults; i++)
    if (sp_trace_move(m->trace, &nc->results[i], &call->results[i])) return NULL;
  sp_op_replace(nc, call);
  return fn;
}

int sp_call_graph_export_named(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  collect_named(m->op, &l);
  bool ok = !l.oom;
  unsigned counter = 0; /* one for the pass, as MLIR's SymbolTable */
  for (int i = 0; ok && i < l.n; i++) ok = export_one(m, l.v[i], &counter) != NULL;
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

int sp_call_graph_unflatten(sp_module *m, bool dedup_fully, sp_err *err) {
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
