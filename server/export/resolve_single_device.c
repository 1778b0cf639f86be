/*
 * resolve_single_device.c - single-device ops run under a partition-id guard and all-reduced
 * (see resolve_single_device.h).
 */
#include "export/resolve_single_device.h"

#include <string.h>

#include "export/op_build.h"
#include "export/single_device.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"

#define OOM(err) sp_err_set(err, SP_ENOMEM, "out of memory resolving single-device shardings")

/* The device of the op's single-device results; -1 when it has none. */
static int64_t op_device(const sp_module *m, const sp_op *op) {
  for (int j = 0; j < op->nresults; j++) {
    const sp_sharding *s = op->results[j].sharding;
    if (sp_export_is_single_device(m, s)) return sp_sharding_mesh(m, s)->device_ids[0];
  }
  return -1;
}

static bool supported_results(const sp_op *op) {
  for (int j = 0; j < op->nresults; j++) {
    const sp_type *t = op->results[j].type;
    if (t->kind != SP_TYPE_TOKEN && !sp_type_is_static_tensor(t)) return false;
  }
  return true;
}

/* partition_id == dev, as a tensor<i1>. */
static sp_value *is_device(sp_builder *b, int64_t dev) {
  sp_arena *a = b->m->arena;
  sp_value *pid = sp_build_op(b, "stablehlo.partition_id", 0, NULL, sp_type_tensor(a, 0, NULL, "ui32"));
  sp_value *id = pid ? sp_build_op(b, "stablehlo.convert", 1, &pid, sp_type_tensor(a, 0, NULL, "i64")) : NULL;
  sp_value *want = id ? sp_build_i64(b, dev) : NULL;
  sp_value *ops[2] = {id, want};
  sp_value *eq = want ? sp_build_op(b, "stablehlo.compare", 2, ops, sp_type_tensor(a, 0, NULL, "i1")) : NULL;
  sp_attr dir = {.name = "comparison_direction", .kind = SP_ATTR_ENUM, .u.s = "EQ"};
  if (!eq || sp_attrs_set(a, &eq->def->attrs, &dir)) return NULL;
  return eq;
}

/* Terminates `block` with stablehlo.return of `n` values. */
static bool add_return(sp_module *m, sp_block *block, sp_value **vs, int n) {
  sp_op *ret = sp_op_create(m->arena, "stablehlo.return", n, vs, 0, NULL, 0);
  if (!ret) return false;
  sp_block_append(block, ret);
  return true;
}

/* The false branch: zeros per tensor result, a new token per token result. */
static bool zeros_branch(sp_module *m, sp_block *block, const sp_op *op, sp_loc loc) {
  sp_value **vs = sp_arena_calloc(m->arena, (size_t)op->nresults + 1, sizeof *vs);
  sp_builder b = {m, NULL, block, loc};
  for (int j = 0; vs && j < op->nresults; j++) {
    sp_type *t = op->results[j].type;
    vs[j] = t->kind == SP_TYPE_TOKEN ? sp_build_op(&b, "stablehlo.create_token", 0, NULL, t) : sp_build_zeros(&b, t);
    if (!vs[j]) return false;
  }
  return vs && add_return(m, block, vs, op->nresults);
}

/* An all-reduce over every axis of the main mesh `main` of `v`, right after `anchor`. */
static sp_op *all_reduce(sp_module *m, sp_value *v, const char *main, sp_op *anchor) {
  const sp_mesh *mesh = sp_module_lookup_mesh(m, main);
  sp_axis_ref *axes = sp_arena_calloc(m->arena, (size_t)mesh->naxes + 1, sizeof *axes);
  sp_sharding *out = sp_sharding_new(m->arena, main, v->type->rank, true);
  sp_op *ar = axes && out ? sp_op_create(m->arena, "sdy.all_reduce", 1, &v, 1, &v->type, 0) : NULL;
  if (!ar) return NULL;
  for (int a = 0; a < mesh->naxes; a++) axes[a].name = mesh->axes[a].name;
  sp_attr at = {.name = "reduction_axes", .kind = SP_ATTR_AXES};
  at.u.axes.n = mesh->naxes;
  at.u.axes.v = axes;
  if (sp_attrs_set(m->arena, &ar->attrs, &at)) return NULL;
  ar->results[0].sharding = out;
  ar->loc = anchor->loc;
  sp_op_insert_after(anchor, ar);
  return ar;
}

/* Users of `ar` that reshard it to its own sharding read it directly. */
static void fold_same_reshards(sp_op *ar) {
  sp_value *v = &ar->results[0];
  for (sp_use *u = v->uses, *next; u; u = next) {
    next = u->next;
    sp_op *r = u->owner;
    if (r->kind != SP_OP_SDY_RESHARD || !sp_sharding_equal(r->results[0].sharding, v->sharding)) continue;
    sp_value_replace_all_uses(&r->results[0], v);
    sp_op_erase(r);
  }
}

static int resolve_op(sp_module *m, sp_op *op, const char *main, sp_err *err) {
  int64_t dev = op_device(m, op);
  if (dev < 0 || !supported_results(op)) return SP_OK;
  for (int i = 0; i < op->noperands; i++) {
    sp_op *r = op->operands[i].value->def;
    if (!r || r->kind != SP_OP_SDY_RESHARD || !sp_export_is_single_device(m, r->results[0].sharding)) continue;
    sp_op_set_operand(op, i, r->operands[0].value);
    if (!sp_value_has_uses(&r->results[0])) sp_op_erase(r);
  }
  sp_builder b = {m, op, NULL, op->loc};
  sp_value *cond = is_device(&b, dev);
  sp_type **types = sp_arena_calloc(m->arena, (size_t)op->nresults + 1, sizeof *types);
  bool *single = sp_arena_calloc(m->arena, (size_t)op->nresults + 1, sizeof *single);
  if (!cond || !types || !single) return OOM(err);
  for (int j = 0; j < op->nresults; j++) {
    types[j] = op->results[j].type;
    single[j] = sp_export_is_single_device(m, op->results[j].sharding) && types[j]->kind == SP_TYPE_TENSOR;
  }
  sp_op *guard = sp_op_create(m->arena, "stablehlo.if", 1, &cond, op->nresults, types, 2);
  sp_block *then = guard ? sp_region_add_block(m->arena, &guard->regions[0]) : NULL;
  sp_block *other = then ? sp_region_add_block(m->arena, &guard->regions[1]) : NULL;
  if (!other || !zeros_branch(m, other, op, op->loc)) return OOM(err);
  sp_build_place(&b, guard);
  sp_value **rets = sp_arena_calloc(m->arena, (size_t)op->nresults + 1, sizeof *rets);
  if (!rets) return OOM(err);
  for (int j = 0; j < op->nresults; j++) {
    sp_value_replace_all_uses(&op->results[j], &guard->results[j]);
    op->results[j].sharding = NULL;
    rets[j] = &op->results[j];
  }
  sp_op_unlink(op);
  sp_block_append(then, op);
  if (!add_return(m, then, rets, op->nresults)) return OOM(err);
  sp_op *anchor = guard;
  for (int j = 0; j < guard->nresults; j++) {
    if (!single[j]) continue;
    sp_value *r = &guard->results[j];
    sp_op *ar = all_reduce(m, r, main, anchor);
    if (!ar) return OOM(err);
    sp_value_replace_all_uses(r, &ar->results[0]);
    sp_op_set_operand(ar, 0, r);
    fold_same_reshards(ar);
    anchor = ar;
  }
  return SP_OK;
}

int sp_export_resolve_single_device(sp_module *m, sp_err *err) {
  const char *main = sp_export_main_mesh(m);
  if (!main) return SP_OK;
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? OOM(err) : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) {
    sp_op *op = l.v[i];
    if (op->kind != SP_OP_FUNC && strncmp(op->name, "sdy.", 4) != 0) rc = resolve_op(m, op, main, err);
  }
  sp_op_list_free(&l);
  return rc;
}
