/*
 * meshes.c - inlining and dropping meshes (see meshes.h).
 */
#include "export/meshes.h"

#include <string.h>

#include "propagation/sharding_walk.h"

static void erase_meshes(sp_module *m) {
  sp_op *next;
  for (sp_op *op = sp_module_body(m)->first; op; op = next) {
    next = op->next;
    if (op->kind == SP_OP_SDY_MESH) sp_op_erase(op);
  }
}

static int inline_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)ctx;
  const sp_sharding *sh = *s->slot;
  if (sh->inline_mesh) return SP_OK;
  const sp_mesh *mesh = sp_module_lookup_mesh(m, sh->mesh_name);
  if (!mesh)
    return sp_err_set(err, SP_EINVAL, "-sdy-inline-meshes: unknown mesh: @%s", sh->mesh_name);
  sp_sharding *c = sp_sharding_copy(m->arena, sh);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory inlining meshes");
  c->mesh_name = NULL;
  c->inline_mesh = (sp_mesh *)mesh; /* the mesh op's mesh outlives the op (arena-owned) */
  *s->slot = c;
  return SP_OK;
}

int sp_export_inline_meshes(sp_module *m, sp_err *err) {
  int rc = sp_sharding_walk(m, inline_slot, NULL, err);
  if (rc) return rc;
  erase_meshes(m);
  return SP_OK;
}

/* Shardings that are part of the op's own syntax stay. */
static bool sharding_is_operand_of_op(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_SDY_MANUAL_COMPUTATION:
    case SP_OP_SDY_NAMED_COMPUTATION:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_REDUCE_SCATTER: return true;
    default: return false;
  }
}

static int drop_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)m;
  (void)ctx;
  (void)err;
  if (s->op && s->op->kind != SP_OP_FUNC && sharding_is_operand_of_op(s->op)) return SP_OK;
  if (s->op && s->op->kind != SP_OP_FUNC && !s->value) return SP_OK; /* attributes: below */
  *s->slot = NULL;
  return SP_OK;
}

static bool drop_attr(sp_op *op, void *ctx) {
  (void)ctx;
  if (!sharding_is_operand_of_op(op)) sp_attrs_remove(&op->attrs, "sdy.sharding");
  return true;
}

int sp_export_drop_sharding_and_mesh(sp_module *m, sp_err *err) {
  int rc = sp_sharding_walk(m, drop_slot, NULL, err);
  if (rc) return rc;
  sp_op_walk(m->op, drop_attr, NULL);
  erase_meshes(m);
  return SP_OK;
}
