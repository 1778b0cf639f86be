/*
 * op_list.c - a growable list of ops (see op_list.h).
 */
#include "ir/op_list.h"

#include <stdlib.h>

bool sp_op_list_push(sp_op_list *l, sp_op *op) {
  if (l->oom) return false;
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

bool sp_op_list_collect(sp_op *op, void *ctx) { return sp_op_list_push(ctx, op); }

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
