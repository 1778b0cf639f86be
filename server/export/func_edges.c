/*
 * func_edges.c - sinks sdy.func_data_flow_edge ops (see func_edges.h).
 */
#include "export/func_edges.h"

#include <stdlib.h>

#include "propagation/sharding_walk.h"

typedef struct edge_list {
  sp_op **v;
  int n, cap;
  bool oom;
} edge_list;

static bool collect(sp_op *op, void *ctx) {
  edge_list *l = ctx;
  if (op->kind != SP_OP_SDY_FUNC_DATA_FLOW_EDGE || op->noperands != 1 || op->nresults != 1) return true;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    sp_op **nv = realloc(l->v, (size_t)cap * sizeof *nv);
    if (!nv) {
      l->oom = true;
      return false;
    }
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = op;
  return true;
}

/* The edge among `l` whose input is `v`, or NULL. */
static sp_op *edge_of(const edge_list *l, const sp_value *v) {
  for (int k = 0; k < l->n; k++)
    if (l->v[k] && l->v[k]->operands[0].value == v) return l->v[k];
  return NULL;
}

static int rebuild_call(sp_module *m, sp_op *call, const edge_list *l) {
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

int sp_export_sink_func_data_flow_edges(sp_module *m, sp_err *err) {
  edge_list l = {0};
  sp_op_walk(m->op, collect, &l);
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
