/*
 * flatten_call_graph.c - one call site per function (see flatten_call_graph.h).
 */
#include "propagation/flatten_call_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clone.h"
#include "ir/diag.h"
#include "ir/op_list.h"

#define ORIGINAL_NAME "sdy.original_func_name"

static bool collect_calls(sp_op *op, void *ctx) {
  if (op->kind == SP_OP_FUNC_CALL) sp_op_list_push(ctx, op);
  return !((sp_op_list *)ctx)->oom;
}

/* The calls inside `fn`, in walk order (the caller frees l->v). */
static sp_op_list calls_in(sp_op *fn) {
  sp_op_list l = {0};
  for (int r = 0; r < fn->nregions; r++)
    for (int b = 0; b < fn->regions[r].nblocks; b++)
      for (sp_op *op = fn->regions[r].blocks[b]->first; op; op = op->next)
        sp_op_walk(op, collect_calls, &l);
  return l;
}

typedef struct flattener {
  sp_module *m;
  sp_op_list order;  /* functions, callees first */
  sp_op_list used;   /* functions that already have their call site */
  int counter;    /* the module-wide suffix counter */
  bool oom;
  sp_op *cycle;   /* the first call found closing a cycle (it cannot be flattened) */
} flattener;

static sp_op *callee(const flattener *f, const sp_op *call) {
  const char *name = sp_op_get_str(call, "callee");
  sp_op *fn = name ? sp_module_lookup_func(f->m, name) : NULL;
  return fn && fn->kind == SP_OP_FUNC ? fn : NULL;
}

static void post_order(flattener *f, sp_op *fn, sp_op_list *visiting) {
  if (sp_op_list_contains(&f->order, fn) || sp_op_list_contains(visiting, fn) || f->oom) return;
  if (!sp_op_list_push(visiting, fn)) {
    f->oom = true;
    return;
  }
  sp_op_list calls = calls_in(fn);
  f->oom |= calls.oom;
  for (int i = 0; i < calls.n && !f->oom; i++) {
    sp_op *g = callee(f, calls.v[i]);
    if (g && sp_op_list_contains(visiting, g) && !f->cycle) f->cycle = calls.v[i];
    if (g) post_order(f, g, visiting);
  }
  free(calls.v);
  if (!f->oom && !sp_op_list_push(&f->order, fn)) f->oom = true;
  visiting->n--;
}

static int set_str(sp_arena *a, sp_op *op, const char *name, const char *value, sp_attr_kind kind) {
  sp_attr at = {.name = name, .kind = kind};
  at.u.s = sp_arena_strdup(a, value);
  return at.u.s ? sp_attrs_set(a, &op->attrs, &at) : SP_ENOMEM;
}

/* A deep copy of `fn` appended to the module; returns its name (NULL on out-of-memory). */
static const char *deep_copy(flattener *f, sp_op *fn) {
  sp_arena *a = f->m->arena;
  sp_value_map map;
  sp_value_map_init(&map);
  sp_op *copy = sp_op_clone(a, fn, &map);
  sp_value_map_free(&map);
  if (!copy) return NULL;
  /* The copy's callees already have their call site: they are copied too. */
  sp_op_list calls = calls_in(copy);
  for (int i = 0; i < calls.n && !calls.oom; i++) {
    sp_op *g = callee(f, calls.v[i]);
    const char *name = g ? deep_copy(f, g) : NULL;
    if (g && (!name || set_str(a, calls.v[i], "callee", name, SP_ATTR_SYMBOL))) calls.oom = true;
  }
  bool oom = calls.oom;
  free(calls.v);
  if (oom) return NULL;
  const char *base = sp_op_get_str(fn, "sym_name");
  char name[512];
  do snprintf(name, sizeof name, "%s_%d", base, f->counter++);
  while (sp_module_lookup_func(f->m, name));
  const char *original = sp_op_get_str(fn, ORIGINAL_NAME);
  if (set_str(a, copy, "sym_name", name, SP_ATTR_STR) ||
      set_str(a, copy, "sym_visibility", "private", SP_ATTR_STR) ||
      set_str(a, copy, ORIGINAL_NAME, original ? original : base, SP_ATTR_STR))
    return NULL;
  sp_block_append(sp_module_body(f->m), copy);
  return sp_op_get_str(copy, "sym_name");
}

int sp_flatten_call_graph(sp_module *m, sp_err *err) {
  flattener f = {.m = m};
  sp_op_list visiting = {0};
  for (sp_op *op = sp_module_body(m)->first; op && !f.oom; op = op->next)
    if (op->kind == SP_OP_FUNC) post_order(&f, op, &visiting);
  free(visiting.v);
  if (f.cycle && !f.oom) {
    free(f.order.v);
    return sp_error_at(err, SP_EUNSUPPORTED, m, f.cycle->loc, "recursive call to @%s: the call "
                       "graph cannot be flattened", sp_op_get_str(f.cycle, "callee"));
  }
  for (int i = 0; i < f.order.n && !f.oom; i++) {
    sp_op_list calls = calls_in(f.order.v[i]);
    f.oom |= calls.oom;
    for (int c = 0; c < calls.n && !f.oom; c++) {
      sp_op *g = callee(&f, calls.v[c]);
      if (!g) continue;
      if (!sp_op_list_contains(&f.used, g)) {
        f.oom = !sp_op_list_push(&f.used, g);
        continue;
      }
      const char *name = deep_copy(&f, g);
      f.oom = !name || set_str(m->arena, calls.v[c], "callee", name, SP_ATTR_SYMBOL);
    }
    free(calls.v);
  }
  free(f.order.v);
  free(f.used.v);
  return f.oom ? sp_err_set(err, SP_ENOMEM, "out of memory flattening the call graph") : SP_OK;
}
