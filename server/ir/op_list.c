/*
 * op_list.c - a growable list of ops (see op_list.h).
 */
#include "ir/op_list.h"

#include <stdlib.h>

#include "ir/grow.h"

bool sp_op_list_push(sp_op_list *l, sp_op *op) {
  if (l->oom) return false;
  if (sp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v)) {
    l->oom = true;
    return false;
  }
  l->v[l->n++] = op;
  return true;
}

bool sp_op_list_collect(sp_op *op, void *ctx) {
  sp_op_list *l = ctx;
  return (l->keep && !l->keep(op)) || sp_op_list_push(l, op);
}

bool sp_op_list_contains(const sp_op_list *l, const sp_op *op) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == op) return true;
  return false;
}

void sp_op_list_free(sp_op_list *l) {
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}
