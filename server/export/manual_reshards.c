/*
 * manual_reshards.c - explicit reshards at the boundary of sdy.manual_computation (see
 * manual_reshards.h).
 */
#include "export/manual_reshards.h"

#include <string.h>

#include "export/reshard_op.h"
#include "propagation/sharding_walk.h"

static bool is_manual(const sp_attr *manual, const sp_axis_ref *r) {
  for (int i = 0; manual && i < manual->u.axes.n; i++)
    if (strcmp(manual->u.axes.v[i].name, r->name) == 0) return true;
  return false;
}

/* `s` less the axes of `mc`'s manual_axes, in its dims and its unreduced list (a copy in the
 * module's arena). */
static sp_sharding *without_manual(sp_module *m, const sp_op *mc, const sp_sharding *s) {
  sp_sharding *c = sp_sharding_copy(m->arena, s);
  const sp_attr *manual = sp_op_attr(mc, "manual_axes");
  if (!c || !manual || manual->kind != SP_ATTR_AXES) return c;
  for (int d = 0; d < c->rank; d++) {
    int n = 0;
    for (int k = 0; k < c->dims[d].naxes; k++)
      if (!is_manual(manual, &c->dims[d].axes[k])) c->dims[d].axes[n++] = c->dims[d].axes[k];
    c->dims[d].naxes = n;
  }
  int n = 0;
  for (int k = 0; k < c->nunreduced; k++)
    if (!is_manual(manual, &c->unreduced[k])) c->unreduced[n++] = c->unreduced[k];
  c->nunreduced = n;
  if (!n) c->unreduced_kind = NULL;
  return c;
}

/* Whether `have` already places data as `want` does (same mesh and dim axes; unreduced axes
 * are the all-reduce step's business; no sharding counts as replicated; two replicated
 * shardings match whatever their meshes). */
static bool matches(const sp_module *m, const sp_sharding *have, const sp_sharding *want) {
  if (!have || sp_sharding_is_unsharded(have)) return sp_sharding_is_unsharded(want);
  return sp_sharding_same_mesh(m, have, want) && sp_sharding_same_dim_axes(have, want);
}

static int reshard_operand(sp_module *m, sp_op *user, int i, sp_sharding *want, sp_err *err) {
  sp_op *r = sp_export_reshard_op(m, user->operands[i].value, NULL, want, user->loc);
  if (!r) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
  sp_op_insert_before(user, r);
  sp_op_set_operand(user, i, &r->results[0]);
  return SP_OK;
}

int sp_export_manual_computation_reshards(sp_module *m, sp_op *mc, sp_err *err) {
  const sp_attr *in = sp_op_attr(mc, "in_shardings");
  for (int i = 0; in && in->kind == SP_ATTR_SHARDINGS && i < mc->noperands && i < in->u.shardings.n; i++) {
    sp_sharding *want = in->u.shardings.v[i];
    if (!want || matches(m, mc->operands[i].value->sharding, want)) continue;
    int rc = reshard_operand(m, mc, i, want, err);
    if (rc) return rc;
  }
  if (!mc->nregions || !mc->regions[0].nblocks) return SP_OK;
  sp_op *ret = mc->regions[0].blocks[0]->last;
  if (!ret || strcmp(ret->name, "sdy.return") != 0) return SP_OK;
  for (int j = 0; j < ret->noperands && j < mc->nresults; j++) {
    if (!mc->results[j].sharding) continue;
    sp_sharding *want = without_manual(m, mc, mc->results[j].sharding);
    if (!want) return sp_err_set(err, SP_ENOMEM, "out of memory inserting explicit reshards");
    if (matches(m, sp_export_local_sharding(m, ret->operands[j].value), want)) continue;
    int rc = reshard_operand(m, ret, j, want, err);
    if (rc) return rc;
  }
  return SP_OK;
}

sp_sharding *sp_export_local_sharding(sp_module *m, sp_value *v) {
  if (v->sharding || v->def || !v->block) return v->sharding;
  sp_op *mc = sp_block_parent_op(v->block);
  if (!mc || mc->kind != SP_OP_SDY_MANUAL_COMPUTATION) return NULL;
  const sp_attr *in = sp_op_attr(mc, "in_shardings");
  if (!in || in->kind != SP_ATTR_SHARDINGS || v->index >= in->u.shardings.n ||
      !in->u.shardings.v[v->index])
    return NULL;
  return without_manual(m, mc, in->u.shardings.v[v->index]);
}
