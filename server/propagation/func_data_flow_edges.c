/*
 * func_data_flow_edges.c - adding sdy.func_data_flow_edge ops (see func_data_flow_edges.h).
 */
#include "propagation/func_data_flow_edges.h"

#include <stdlib.h>

#include "propagation/export_shardings.h"

/* Puts an edge on `v` after `anchor` (at the top of `top` when NULL); the edge takes every
 * other use of `v`. Returns the edge, NULL on out-of-memory. */
static sp_op *add_edge(sp_arena *a, sp_value *v, sp_op *anchor, sp_block *top) {
  sp_op *e = sp_op_create(a, "sdy.func_data_flow_edge", 1, NULL, 1, &v->type, 0);
  if (!e) return NULL;
  e->loc = v->loc;
  e->results[0].loc = v->loc;
  e->results[0].sharding = v->sharding;
  sp_value_replace_all_uses(v, &e->results[0]);
  sp_op_set_operand(e, 0, v);
  if (anchor) sp_op_insert_after(anchor, e);
  else if (top->first) sp_op_insert_before(top->first, e);
  else sp_block_append(top, e);
  return e;
}

typedef struct op_list {
  sp_op **v;
  int n, cap;
  bool oom;
} op_list;

static bool collect_calls(sp_op *op, void *ctx) {
  op_list *l = ctx;
  if (op->kind != SP_OP_FUNC_CALL || l->oom) return true;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    sp_op **v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) {
      l->oom = true;
      return false;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = op;
  return true;
}

int sp_func_data_flow_edges_add(sp_module *m, sp_err *err) {
  sp_op *main_fn = sp_export_main_func(m);
  for (sp_op *fn = sp_module_body(m)->first; fn; fn = fn->next) {
    if (fn->kind != SP_OP_FUNC || fn == main_fn || fn->nregions != 1 ||
        fn->regions[0].nblocks == 0)
      continue;
    sp_block *body = fn->regions[0].blocks[0];
    sp_op *anchor = NULL;
    for (int i = 0; i < body->nargs; i++) {
      if (!sp_type_is_static_tensor(body->args[i]->type)) continue;
      if (!(anchor = add_edge(m->arena, body->args[i], anchor, body))) goto oom;
    }
  }
  op_list calls = {0};
  sp_op_walk(m->op, collect_calls, &calls);
  bool oom = calls.oom;
  for (int c = 0; !oom && c < calls.n; c++) {
    sp_op *anchor = calls.v[c];
    for (int i = 0; !oom && i < calls.v[c]->nresults; i++) {
      sp_value *r = &calls.v[c]->results[i];
      if (!sp_type_is_static_tensor(r->type)) continue;
      anchor = add_edge(m->arena, r, anchor, NULL);
      oom = !anchor;
    }
  }
  free(calls.v);
  if (!oom) return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory adding func data-flow edges");
}
