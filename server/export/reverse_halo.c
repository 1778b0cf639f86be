/*
 * reverse_halo.c - sharded reverse made local by a halo exchange and a reversed mesh (see
 * reverse_halo.h).
 */
#include "export/reverse_halo.h"

#include <stdlib.h>
#include <string.h>

#include "export/halo_exchange.h"
#include "export/mesh_positions.h"
#include "export/op_build.h"
#include "export/reshard_op.h"
#include "ir/sp_limits.h"
#include "propagation/mesh_import.h"
#include "propagation/sharding_walk.h"

#define OOM(err) sp_err_set(err, SP_ENOMEM, "out of memory exchanging halos of a reverse")

/* Shifts the local shard `x` of dim d right by p elements (shard size s). */
static sp_value *shift_dim(sp_builder *b, const sp_mesh *mesh, const sp_sharding *sh, sp_value *x, int d,
                           int64_t s, int64_t p, int *channel) {
  int64_t q = p / s, r = p % s;
  sp_value *near = x, *far;
  if (q && !(near = sp_halo_permute(b, mesh, sh, d, q, x, channel))) return NULL;
  if (!(far = sp_halo_permute(b, mesh, sh, d, q + 1, x, channel))) return NULL;
  int64_t start[SP_MAX_RANK] = {0}, limit[SP_MAX_RANK];
  for (int i = 0; i < x->type->rank; i++) limit[i] = x->type->dims[i];
  start[d] = s - r;
  sp_value *tail = sp_build_slice(b, far, start, limit);
  start[d] = 0;
  limit[d] = s - r;
  sp_value *head = tail ? sp_build_slice(b, near, start, limit) : NULL;
  sp_value *ins[2] = {tail, head};
  return head ? sp_build_concat(b, ins, 2, d) : NULL;
}

/* The name of the mesh `mesh` with device order reversed along the reversed dims' axes. */
static const char *reversed_mesh(sp_module *m, const char *name, const sp_mesh *mesh,
                                 const sp_sharding *s, const bool *rev) {
  int64_t positions = sp_mesh_positions(mesh);
  sp_mesh *r = sp_arena_calloc(m->arena, 1, sizeof *r);
  int64_t *ids = sp_arena_alloc(m->arena, (size_t)positions * sizeof *ids);
  int64_t *coord = calloc((size_t)mesh->naxes + 1, sizeof *coord);
  if (!r || !ids || !coord) {
    free(coord);
    return NULL;
  }
  for (int64_t pos = 0; pos < positions; pos++) {
    sp_mesh_position_coords(mesh, pos, coord);
    for (int d = 0; d < s->rank; d++)
      for (int i = 0; rev[d] && i < s->dims[d].naxes; i++) sp_mesh_coords_flip(mesh, &s->dims[d].axes[i], coord);
    ids[pos] = sp_mesh_position_device(mesh, sp_mesh_position_of(mesh, coord));
  }
  free(coord);
  *r = *mesh;
  r->ndevice_ids = (int)positions;
  r->device_ids = ids;
  sp_block *top = sp_module_body(m);
  for (sp_op *op = top->first; op; op = op->next) {
    sp_attr *at = op->kind == SP_OP_SDY_MESH ? sp_op_attr(op, "mesh") : NULL;
    if (at && at->kind == SP_ATTR_MESH && sp_mesh_equal(at->u.mesh, r)) return sp_op_get_str(op, "sym_name");
  }
  const char *base = sp_arena_printf(m->arena, "%s_reversed", name);
  const char *sym = base ? sp_module_unique_symbol(m, base) : NULL;
  sp_op *op = sym ? sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0) : NULL;
  if (!op) return NULL;
  sp_attr at_name = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = sym};
  sp_attr at_mesh = {.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = r};
  if (sp_attrs_set(m->arena, &op->attrs, &at_name) || sp_attrs_set(m->arena, &op->attrs, &at_mesh)) return NULL;
  if (top->first) sp_op_insert_before(top->first, op);
  else sp_block_append(top, op);
  return sym;
}

/* The manual computation that shifts every padded dim; NULL on out-of-memory. */
static sp_value *halo_shift(sp_builder *outer, const sp_mesh *mesh, const sp_sharding *sh, sp_value *padded,
                            const int64_t *shard, const int64_t *pad, int *channel) {
  sp_module *m = outer->m;
  const sp_type *t = padded->type;
  bool dims[SP_MAX_RANK];
  for (int d = 0; d < t->rank; d++) dims[d] = pad[d] > 0;
  int naxes;
  sp_axis_ref *axes = sp_halo_axes_of(m->arena, mesh, sh, dims, &naxes);
  sp_sharding *in_s = (sp_sharding *)sh;
  sp_block *body;
  sp_op *mc = axes ? sp_halo_manual(outer, &padded, &in_s, 1, padded->type, in_s, axes, naxes, &body) : NULL;
  if (!mc) return NULL;
  sp_builder inner = {m, NULL, body, outer->loc};
  sp_value *x = body->args[0];
  for (int d = 0; d < t->rank && x; d++)
    if (pad[d]) x = shift_dim(&inner, mesh, sh, x, d, shard[d], pad[d], channel);
  sp_op *ret = x ? sp_op_create(m->arena, "sdy.return", 1, &x, 0, NULL, 0) : NULL;
  if (!ret) return NULL;
  sp_build_place(&inner, ret);
  return &mc->results[0];
}

int sp_export_reverse_halo(sp_module *m, sp_op *op, bool *done, sp_err *err) {
  *done = false;
  sp_value *in = op->operands[0].value, *res = &op->results[0];
  sp_sharding *s = in->sharding, *out = res->sharding;
  sp_ints dims;
  if (op->kind != SP_OP_REVERSE || !s || !out || !s->mesh_name || !out->mesh_name ||
      strcmp(s->mesh_name, out->mesh_name) != 0 || !sp_sharding_same_dim_axes(s, out) || s->nunreduced ||
      out->nunreduced || !sp_op_get_ints(op, "dimensions", &dims))
    return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  const sp_type *t = in->type;
  if (!mesh || t->rank > SP_MAX_RANK || s->rank != t->rank) return SP_OK;
  bool rev[SP_MAX_RANK] = {false};
  int64_t shard[SP_MAX_RANK] = {0}, pad[SP_MAX_RANK] = {0}, padded[SP_MAX_RANK];
  bool any_pad = false, any_rev = false;
  for (int i = 0; i < dims.n; i++)
    if (dims.v[i] >= 0 && dims.v[i] < t->rank) rev[dims.v[i]] = s->dims[dims.v[i]].naxes > 0;
  for (int d = 0; d < t->rank; d++) {
    padded[d] = t->dims[d];
    if (!rev[d]) continue;
    int64_t n = sp_dim_shard_count(mesh, s, d);
    shard[d] = (t->dims[d] + n - 1) / n;
    pad[d] = n * shard[d] - t->dims[d];
    padded[d] += pad[d];
    any_pad |= pad[d] > 0;
    any_rev = true;
  }
  if (!any_rev) return SP_OK;
  const char *rname = reversed_mesh(m, s->mesh_name, mesh, s, rev);
  if (!rname) return OOM(err);
  sp_builder b = {m, op, NULL, op->loc};
  int channel = 1;
  sp_value *cur = in;
  sp_type *pt = sp_build_type_with_dims(m->arena, t, padded);
  if (!pt) return OOM(err);
  if (any_pad) {
    int64_t zeros[SP_MAX_RANK] = {0};
    sp_value *zero = sp_build_zeros(&b, sp_type_tensor(m->arena, 0, NULL, t->elem));
    sp_value *p = zero ? sp_build_pad(&b, in, zero, zeros, pad, zeros) : NULL;
    if (!p) return OOM(err);
    p->sharding = s;
    if (!(cur = halo_shift(&b, mesh, s, p, shard, pad, &channel))) return OOM(err);
  }
  sp_sharding *on_rev = sp_sharding_copy(m->arena, out);
  sp_op *rs = on_rev ? sp_export_reshard_op(m, NULL, pt, out, op->loc) : NULL;
  if (!rs) return OOM(err);
  on_rev->mesh_name = rname;
  sp_op_insert_after(op, rs);
  sp_value *final = &rs->results[0];
  if (any_pad) {
    int64_t start[SP_MAX_RANK] = {0};
    sp_builder after = {m, rs->next, rs->next ? NULL : rs->block, op->loc};
    if (!(final = sp_build_slice(&after, final, start, t->dims))) return OOM(err);
    final->sharding = out;
  }
  sp_value_replace_all_uses(res, final);
  sp_op_set_operand(op, 0, cur);
  res->type = pt;
  res->sharding = on_rev;
  sp_op_set_operand(rs, 0, res);
  *done = true;
  return SP_OK;
}
