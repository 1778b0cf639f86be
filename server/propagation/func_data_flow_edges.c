/*
 * func_data_flow_edges.c - adding sdy.func_data_flow_edge ops (see func_data_flow_edges.h).
 */
#include "propagation/func_data_flow_edges.h"

#include <stdlib.h>

#include "ir/op_list.h"
#include "propagation/export_shardings.h"
#include "propagation/sharding_walk.h"

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

static bool collect_calls(sp_op *op, void *ctx) {
  return op->kind != SP_OP_FUNC_CALL || sp_op_list_push(ctx, op);
}

static bool collect_edges(sp_op *op, void *ctx) {
  if (op->kind != SP_OP_SDY_FUNC_DATA_FLOW_EDGE || op->noperands != 1 || op->nresults != 1)
    return true;
  return sp_op_list_push(ctx, op);
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
  sp_op_list calls = {0};
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

/* ------------------------------------------------------------------ sinking */

/* The edge among `l` whose input is `v`, or NULL. */
static sp_op *edge_of(const sp_op_list *l, const sp_value *v) {
  for (int k = 0; k < l->n; k++)
    if (l->v[k] && l->v[k]->operands[0].value == v) return l->v[k];
  return NULL;
}

static int rebuild_call(sp_module *m, sp_op *call, const sp_op_list *l) {
  const sp_sharding *like = NULL;
  for (int i = 0; i < call->nresults && !like; i++) {
    sp_op *e = edge_of(l, &call->results[i]);
    if (e) like = e->results[0].sharding;
  }
  for (int i = 0; i < call->nresults && !like; i++) like = call->results[i].sharding;
  if (!like) return SP_OK;
  for (int i = 0; i < call->nresults; i++) {
    sp_op *e = edge_of(l, &call->results[i]);
    sp_sharding *s = e ? e->results[0].sharding : NULL;
    if (!s) s = sp_sharding_open_like(m->arena, like, sp_sharding_rank_of(call->results[i].type));
    if (!s) return SP_ENOMEM;
    call->results[i].sharding = s;
  }
  return SP_OK;
}

int sp_func_data_flow_edges_sink(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, collect_edges, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  /* Calls first (every edge of a call is read), then each edge goes. */
  for (int k = 0; !rc && k < l.n; k++) {
    sp_value *in = l.v[k]->operands[0].value;
    if (in->def && in->def->kind == SP_OP_FUNC_CALL) {
      bool first = true; /* rebuild each call once, at its first edge */
      for (int j = 0; j < k && first; j++) first = l.v[j]->operands[0].value->def != in->def;
      if (first) rc = rebuild_call(m, in->def, &l);
    } else if (!in->def && l.v[k]->results[0].sharding) {
      in->sharding = l.v[k]->results[0].sharding;
    }
  }
  for (int k = 0; !rc && k < l.n; k++) {
    sp_op *e = l.v[k];
    sp_value_replace_all_uses(&e->results[0], e->operands[0].value);
    sp_op_erase(e);
  }
  free(l.v);
  return rc ? sp_err_set(err, rc, "out of memory sinking func data-flow edges") : SP_OK;
}
