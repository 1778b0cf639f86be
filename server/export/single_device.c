/*
 * single_device.c - reshards around ops placed on a single device (see single_device.h).
 */
#include "export/single_device.h"

#include <string.h>

#include "ir/diag.h"
#include "export/reshard_op.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"

bool sp_export_is_single_device(const sp_module *m, const sp_sharding *s) {
  const sp_mesh *mesh = s ? sp_sharding_mesh(m, s) : NULL;
  return mesh && sp_mesh_is_maximal(mesh);
}

static bool is_tensor(const sp_type *t) { return t && t->kind == SP_TYPE_TENSOR; }

const char *sp_export_main_mesh(const sp_module *m) {
  const sp_block *b = m->op->nregions && m->op->regions[0].nblocks ? m->op->regions[0].blocks[0] : NULL;
  for (const sp_op *op = b ? b->first : NULL; op; op = op->next) {
    if (op->kind != SP_OP_SDY_MESH) continue;
    const char *name = sp_op_get_str(op, "sym_name");
    const sp_mesh *mesh = name ? sp_module_lookup_mesh(m, name) : NULL;
    if (mesh && mesh->naxes) return name;
  }
  return NULL;
}

/* A replicated sharding of `rank` dims on the mesh `like` names (or `mesh_name`). */
static sp_sharding *replicated(sp_arena *a, const sp_sharding *like, const char *mesh_name, int rank) {
  sp_sharding *s = sp_sharding_new(a, like ? like->mesh_name : mesh_name, rank, true);
  if (s && like) s->inline_mesh = like->inline_mesh;
  return s;
}

static int fail_at(sp_module *m, sp_loc loc, sp_err *err, const char *what, int index) {
  return sp_error_at(err, SP_EINVAL, m, loc,
                     "function %s %d cannot have a single-device (maximal) sharding attribute",
                     what, index);
}

static int check_func(sp_module *m, sp_op *fn, sp_err *err) {
  sp_block *entry = fn->nregions && fn->regions[0].nblocks ? fn->regions[0].blocks[0] : NULL;
  for (int i = 0; entry && i < entry->nargs; i++)
    if (sp_export_is_single_device(m, entry->args[i]->sharding))
      return fail_at(m, fn->loc, err, "argument", i);
  for (int i = 0; fn->func && fn->func->result_shardings && i < fn->func->nresults; i++)
    if (sp_export_is_single_device(m, fn->func->result_shardings[i]))
      return fail_at(m, fn->loc, err, "result", i);
  return SP_OK;
}

/* Operand i of `op` onto the single device `dev`. */
static int place_operand(sp_module *m, sp_op *op, int i, const sp_sharding *dev, const char *main) {
  sp_value *v = op->operands[i].value;
  const sp_sharding *s = v->sharding;
  if (!is_tensor(v->type) || (s && sp_export_is_single_device(m, s) && sp_sharding_same_mesh(m, s, dev))) return SP_OK;
  int rank = v->type->rank;
  sp_sharding *first = NULL;
  if (s && !sp_export_is_single_device(m, s)) {
    sp_sharding *main_repl = main ? replicated(m->arena, NULL, main, rank) : NULL;
    if (main_repl && !sp_sharding_same_mesh(m, s, main_repl)) first = main_repl;
    else if (!sp_sharding_is_unsharded(s)) first = replicated(m->arena, s, NULL, rank);
  }
  sp_sharding *to = replicated(m->arena, dev, NULL, 0);
  if (!to) return SP_ENOMEM;
  sp_value *cur = v;
  sp_sharding *steps[2] = {first, to};
  for (int k = 0; k < 2; k++) {
    if (!steps[k]) continue;
    sp_op *r = sp_export_reshard_op(m, cur, cur->type, steps[k], op->loc);
    if (!r) return SP_ENOMEM;
    sp_op_insert_before(op, r);
    cur = &r->results[0];
  }
  sp_op_set_operand(op, i, cur);
  return SP_OK;
}

/* Result j of a single-device op back onto the devices that use it. */
static int place_result(sp_module *m, sp_op *op, int j, const sp_sharding *dev, sp_op **anchor,
                        const char *main) {
  sp_value *res = &op->results[j];
  sp_sharding *s = res->sharding;
  if (!is_tensor(res->type) || !s) return SP_OK;
  int rank = res->type->rank;
  sp_sharding *steps[2] = {NULL, NULL};
  if (sp_export_is_single_device(m, s)) {
    if (!main) return SP_OK;
    steps[0] = replicated(m->arena, NULL, main, rank);
  } else {
    /* Computed whole on the device: placed there, then replicated and sharded as it was. */
    if (!(res->sharding = replicated(m->arena, dev, NULL, 0))) return SP_ENOMEM;
    steps[0] = replicated(m->arena, s, NULL, rank);
    if (!sp_sharding_is_unsharded(s)) steps[1] = s;
  }
  if (!steps[0]) return SP_ENOMEM;
  sp_value *cur = res;
  sp_op *first = NULL;
  for (int k = 0; k < 2; k++) {
    if (!steps[k]) continue;
    sp_op *r = sp_export_reshard_op(m, NULL, res->type, steps[k], op->loc);
    if (!r) return SP_ENOMEM;
    if (!first) first = r;
    sp_op_insert_after(*anchor, r);
    *anchor = r;
    if (cur != res) sp_op_set_operand(r, 0, cur);
    cur = &r->results[0];
  }
  sp_value_replace_all_uses(res, cur);
  sp_op_set_operand(first, 0, res);
  return SP_OK;
}

static int place_op(sp_module *m, sp_op *op, const char *main, sp_err *err) {
  const sp_sharding *dev = NULL;
  for (int j = 0; j < op->nresults; j++) {
    const sp_sharding *s = op->results[j].sharding;
    if (!sp_export_is_single_device(m, s)) continue;
    if (dev && !sp_sharding_same_mesh(m, dev, s))
      return sp_op_error(err, SP_EINVAL, m, op, "has conflicting single-device result shardings");
    dev = s;
  }
  if (!dev) return SP_OK;
  int rc = SP_OK;
  for (int i = 0; !rc && i < op->noperands; i++) rc = place_operand(m, op, i, dev, main);
  sp_op *anchor = op;
  for (int j = 0; !rc && j < op->nresults; j++) rc = place_result(m, op, j, dev, &anchor, main);
  return rc ? sp_err_set(err, rc, "out of memory inserting single-device reshards") : SP_OK;
}

int sp_export_single_device_reshards(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  const char *main = sp_export_main_mesh(m);
  int rc = l.oom ? sp_err_set(err, SP_ENOMEM, "out of memory inserting single-device reshards") : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) {
    sp_op *op = l.v[i];
    if (op->kind == SP_OP_FUNC) rc = check_func(m, op, err);
    else if (strncmp(op->name, "sdy.", 4) != 0) rc = place_op(m, op, main, err);
  }
  sp_op_list_free(&l);
  return rc;
}
