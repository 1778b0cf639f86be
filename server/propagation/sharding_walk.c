/*
 * sharding_walk.c - every sharding slot of a module, and shared sharding helpers (see
 * sharding_walk.h).
 */
#include "propagation/sharding_walk.h"

#include <assert.h>
#include <string.h>

#include "ir/axis_ref.h"

typedef struct walk {
  sp_module *m;
  sp_sharding_slot_fn fn;
  void *ctx;
  sp_err *err;
  int rc;
} walk;

static bool call(walk *w, sp_sharding **slot, const sp_type *type, sp_op *op, sp_value *v) {
  assert(slot != NULL);
  if (!*slot) return true;
  sp_sharding_slot s = {slot, type, op, v};
  w->rc = w->fn(w->m, &s, w->ctx, w->err);
  return w->rc == SP_OK;
}

static bool visit_func_signature(walk *w, sp_op *fn) {
  sp_func_info *fi = fn->func;
  const sp_block *entry = fn->nregions && fn->regions[0].nblocks ? fn->regions[0].blocks[0] : NULL;
  if (entry) {
    for (int i = 0; i < entry->nargs; i++)
      if (!call(w, &entry->args[i]->sharding, entry->args[i]->type, fn, entry->args[i]))
        return false;
  } else if (fi->decl_arg_attrs) {
    for (int i = 0; i < fi->nargs; i++) {
      sp_attr *at = sp_attrs_get(&fi->decl_arg_attrs[i], "sdy.sharding");
      if (at && at->kind == SP_ATTR_SHARDING &&
          !call(w, &at->u.sharding, fi->arg_types[i], fn, NULL))
        return false;
    }
  }
  for (int i = 0; fi->result_shardings && i < fi->nresults; i++)
    if (!call(w, &fi->result_shardings[i], fi->result_types[i], fn, NULL)) return false;
  return true;
}

/* The type a SHARDINGS attribute entry describes: operands for in_shardings, else unknown. */
static const sp_type *list_entry_type(const sp_op *op, const sp_attr *at, int i) {
  if (strcmp(at->name, "in_shardings") == 0 && i < op->noperands && op->operands[i].value)
    return op->operands[i].value->type;
  return NULL;
}

static bool visit_op(sp_op *op, void *ctx) {
  walk *w = ctx;
  if (op->kind == SP_OP_FUNC && op->func && !visit_func_signature(w, op)) return false;
  for (int i = 0; i < op->nresults; i++)
    if (!call(w, &op->results[i].sharding, op->results[i].type, op, &op->results[i])) return false;
  for (int i = 0; i < op->attrs.n; i++) {
    sp_attr *at = &op->attrs.v[i];
    if (at->kind == SP_ATTR_SHARDING && !call(w, &at->u.sharding, NULL, op, NULL)) return false;
    if (at->kind == SP_ATTR_SHARDINGS)
      for (int k = 0; k < at->u.shardings.n; k++)
        if (!call(w, &at->u.shardings.v[k], list_entry_type(op, at, k), op, NULL)) return false;
  }
  if (op->kind == SP_OP_FUNC) return true; /* entry arguments were visited as the signature */
  for (int r = 0; r < op->nregions; r++)
    for (int b = 0; b < op->regions[r].nblocks; b++) {
      sp_block *blk = op->regions[r].blocks[b];
      for (int i = 0; i < blk->nargs; i++)
        if (!call(w, &blk->args[i]->sharding, blk->args[i]->type, op, blk->args[i])) return false;
    }
  return true;
}

int sp_sharding_walk(sp_module *m, sp_sharding_slot_fn fn, void *ctx, sp_err *err) {
  walk w = {m, fn, ctx, err, SP_OK};
  sp_op_walk(m->op, visit_op, &w);
  return w.rc;
}

/* ------------------------------------------------------------------ helpers */

const sp_mesh *sp_sharding_mesh(const sp_module *m, const sp_sharding *s) {
  return sp_module_sharding_mesh(m, s);
}

bool sp_sharding_same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b) {
  if (a->mesh_name && b->mesh_name) return strcmp(a->mesh_name, b->mesh_name) == 0;
  const sp_mesh *x = sp_sharding_mesh(m, a), *y = sp_sharding_mesh(m, b);
  return x && y && sp_mesh_equal(x, y);
}

bool sp_sharding_same_dim_axes(const sp_sharding *a, const sp_sharding *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d].naxes != b->dims[d].naxes) return false;
    for (int i = 0; i < a->dims[d].naxes; i++)
      if (!sp_axis_ref_equal(&a->dims[d].axes[i], &b->dims[d].axes[i])) return false;
  }
  return true;
}

int64_t sp_sharding_axis_size(const sp_mesh *mesh, const sp_axis_ref *r) {
  int64_t n = mesh ? sp_mesh_axis_size(mesh, r->name) : 0;
  return sp_axis_is_sub(r) ? r->size : n;
}

int64_t sp_sharding_axes_product(const sp_mesh *mesh, const sp_axis_ref *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= sp_sharding_axis_size(mesh, &v[i]);
  return p;
}

sp_sharding *sp_sharding_open_like(sp_arena *a, const sp_sharding *like, int rank) {
  sp_sharding *s = sp_sharding_new(a, like->mesh_name, rank < 0 ? 0 : rank, false);
  if (s) s->inline_mesh = like->inline_mesh;
  return s;
}

int sp_sharding_rank_of(const sp_type *t) {
  if (!t) return -1;
  if (t->kind == SP_TYPE_TENSOR) return t->rank;
  if (t->kind == SP_TYPE_TUPLE) return -1;
  return 0;
}

void sp_sharding_sort_axes(sp_axis_ref *v, int n, const sp_mesh *mesh) {
  for (int i = 1; i < n; i++) {
    sp_axis_ref x = v[i];
    int j = i - 1;
    while (j >= 0 && sp_axis_compare(&v[j], &x, mesh) > 0) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

static bool list_uses(const sp_axis_ref *v, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(v[i].name, name) == 0) return true;
  return false;
}

bool sp_sharding_uses_axis_name(const sp_sharding *s, const char *name) {
  for (int d = 0; d < s->rank; d++)
    if (list_uses(s->dims[d].axes, s->dims[d].naxes, name)) return true;
  return list_uses(s->replicated, s->nreplicated, name) ||
         list_uses(s->unreduced, s->nunreduced, name);
}

/* Same axes per dim and same unreduced axes; NULL means no axes at all. */
bool sp_sharding_same_axes(const sp_sharding *x, const sp_sharding *y) {
  if (!x || !y) {
    const sp_sharding *s = x ? x : y;
    return !s || (sp_sharding_is_unsharded(s) && s->nunreduced == 0);
  }
  if (x->nunreduced != y->nunreduced) return false;
  if ((x->mesh_name && y->mesh_name && strcmp(x->mesh_name, y->mesh_name) != 0)) return false;
  if (!sp_sharding_same_dim_axes(x, y)) return false;
  for (int k = 0; k < x->nunreduced; k++)
    if (!sp_axis_ref_equal(&x->unreduced[k], &y->unreduced[k])) return false;
  return true;
}
