/*
 * reverse_halo.c - sharded reverse made local by a halo exchange and a reversed mesh (see
 * reverse_halo.h).
 */
#include "export/reverse_halo.h"

#include <stdlib.h>
#include <string.h>

#include "export/mesh_positions.h"
#include "export/reshard_op.h"
#include "ir/sp_limits.h"
#include "ir/strbuf.h"
#include "propagation/mesh_import.h"
#include "propagation/sharding_walk.h"

#define OOM(err) sp_err_set(err, SP_ENOMEM, "out of memory exchanging halos of a reverse")

typedef struct ctx {
  sp_module *m;
  const sp_mesh *mesh;
  const sp_sharding *s;   /* the operand's (= result's) sharding */
  sp_op *at;              /* new ops go before it, or into `body` when set */
  sp_block *body;
} ctx;

static void place(ctx *c, sp_op *op) {
  op->loc = c->at->loc;
  if (c->body) sp_block_append(c->body, op);
  else sp_op_insert_before(c->at, op);
}

static sp_type *with_dims(sp_arena *a, const sp_type *t, const int64_t *dims) {
  return sp_type_tensor(a, t->rank, dims, t->elem);
}

static int set_ints(sp_module *m, sp_op *op, const char *name, const int64_t *v, int n) {
  int64_t *copy = sp_arena_alloc(m->arena, (size_t)(n + 1) * sizeof *copy);
  if (!copy) return SP_ENOMEM;
  memcpy(copy, v, (size_t)n * sizeof *copy);
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS};
  at.u.ints.n = n;
  at.u.ints.v = copy;
  return sp_attrs_set(m->arena, &op->attrs, &at);
}

static int set_text(sp_module *m, sp_op *op, const char *name, const char *text) {
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT, .u.s = text};
  return sp_attrs_set(m->arena, &op->attrs, &at);
}

/* `dense<0>` in the element type's spelling. */
static const char *zero_text(const char *elem) {
  if (strcmp(elem, "i1") == 0) return "dense<false>";
  if (elem[0] == 'f' || strncmp(elem, "bf", 2) == 0) return "dense<0.000000e+00>";
  if (strncmp(elem, "complex", 7) == 0) return "dense<(0.000000e+00,0.000000e+00)>";
  return "dense<0>";
}

/* Slice of `v` keeping [lo, hi) of dim d. */
static sp_value *slice_dim(ctx *c, sp_value *v, int d, int64_t lo, int64_t hi) {
  const sp_type *t = v->type;
  int64_t start[SP_MAX_RANK], limit[SP_MAX_RANK], stride[SP_MAX_RANK], dims[SP_MAX_RANK];
  for (int i = 0; i < t->rank; i++) {
    start[i] = i == d ? lo : 0;
    limit[i] = i == d ? hi : t->dims[i];
    stride[i] = 1;
    dims[i] = limit[i] - start[i];
  }
  sp_type *rt = with_dims(c->m->arena, t, dims);
  sp_op *op = rt ? sp_op_create(c->m->arena, "stablehlo.slice", 1, &v, 1, &rt, 0) : NULL;
  if (!op || set_ints(c->m, op, "start_indices", start, t->rank) ||
      set_ints(c->m, op, "limit_indices", limit, t->rank) || set_ints(c->m, op, "strides", stride, t->rank))
    return NULL;
  place(c, op);
  return &op->results[0];
}

/* A collective permute of `v` from each shard k of dim d to shard k + shift. */
static sp_value *permute(ctx *c, sp_value *v, int d, int64_t shift, int *channel) {
  int64_t positions = sp_mesh_positions(c->mesh), shards = sp_dim_shard_count(c->mesh, c->s, d);
  int64_t *coord = calloc((size_t)c->mesh->naxes + 1, sizeof *coord);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "dense<[");
  int64_t npairs = 0;
  for (int64_t pos = 0; coord && pos < positions; pos++) {
    sp_mesh_position_coords(c->mesh, pos, coord);
    int64_t k = sp_dim_shard_index(c->mesh, c->s, d, coord);
    if (k + shift >= shards) continue;
    sp_dim_set_shard_index(c->mesh, c->s, d, coord, k + shift);
    sp_strbuf_printf(&sb, "%s[%lld, %lld]", npairs++ ? ", " : "",
                     (long long)sp_mesh_position_device(c->mesh, pos),
                     (long long)sp_mesh_position_device(c->mesh, sp_mesh_position_of(c->mesh, coord)));
  }
  sp_strbuf_printf(&sb, "]> : tensor<%lldx2xi64>", (long long)npairs);
  free(coord);
  const char *pairs = sp_strbuf_ok(&sb) ? sp_arena_strdup(c->m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  const char *handle = sp_arena_printf(c->m->arena, "#stablehlo.channel_handle<handle = %d, type = 1>", (*channel)++);
  sp_type *t = v->type;
  sp_op *op = pairs && handle ? sp_op_create(c->m->arena, "stablehlo.collective_permute", 1, &v, 1, &t, 0) : NULL;
  if (!op || set_text(c->m, op, "source_target_pairs", pairs) || set_text(c->m, op, "channel_handle", handle))
    return NULL;
  place(c, op);
  return &op->results[0];
}

/* Shifts the local shard `x` of dim d right by p elements (shard size s). */
static sp_value *shift_dim(ctx *c, sp_value *x, int d, int64_t s, int64_t p, int *channel) {
  int64_t q = p / s, r = p % s;
  sp_value *near = x, *far;
  if (q) {
    near = permute(c, x, d, q, channel);
    if (!near) return NULL;
  }
  if (!(far = permute(c, x, d, q + 1, channel))) return NULL;
  sp_value *tail = slice_dim(c, far, d, s - r, s);
  sp_value *head = tail ? slice_dim(c, near, d, 0, s - r) : NULL;
  if (!head) return NULL;
  int64_t dims[SP_MAX_RANK];
  for (int i = 0; i < x->type->rank; i++) dims[i] = x->type->dims[i];
  sp_type *rt = with_dims(c->m->arena, x->type, dims);
  sp_value *ins[2] = {tail, head};
  sp_op *op = rt ? sp_op_create(c->m->arena, "stablehlo.concatenate", 2, ins, 1, &rt, 0) : NULL;
  sp_attr at = {.name = "dimension", .kind = SP_ATTR_INT, .u.i = d};
  if (!op || sp_attrs_set(c->m->arena, &op->attrs, &at)) return NULL;
  place(c, op);
  return &op->results[0];
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
static sp_value *halo_shift(ctx *c, sp_value *padded, const int64_t *shard, const int64_t *pad,
                            int *channel) {
  sp_module *m = c->m;
  const sp_type *t = padded->type;
  int naxes = 0;
  sp_axis_ref *manual = sp_arena_alloc(m->arena, (size_t)(c->mesh->naxes + 1) * sizeof *manual);
  if (!manual) return NULL;
  for (int a = 0; a < c->mesh->naxes; a++) {
    bool used = false;
    for (int d = 0; d < t->rank; d++)
      for (int i = 0; pad[d] && i < c->s->dims[d].naxes; i++)
        used |= strcmp(c->s->dims[d].axes[i].name, c->mesh->axes[a].name) == 0;
    if (used) manual[naxes++] = (sp_axis_ref){c->mesh->axes[a].name, 0, 0};
  }
  int64_t local[SP_MAX_RANK];
  for (int d = 0; d < t->rank; d++) {
    local[d] = t->dims[d];
    for (int i = 0; i < c->s->dims[d].naxes; i++)
      for (int k = 0; k < naxes; k++)
        if (strcmp(c->s->dims[d].axes[i].name, manual[k].name) == 0)
          local[d] /= sp_sharding_axis_size(c->mesh, &c->s->dims[d].axes[i]);
  }
  sp_type *tt = (sp_type *)t;
  sp_op *mc = sp_op_create(m->arena, "sdy.manual_computation", 1, &padded, 1, &tt, 1);
  sp_sharding **ins = sp_arena_alloc(m->arena, sizeof *ins);
  sp_type *lt = with_dims(m->arena, t, local);
  if (!mc || !ins || !lt) return NULL;
  ins[0] = (sp_sharding *)c->s;
  sp_attr at_in = {.name = "in_shardings", .kind = SP_ATTR_SHARDINGS};
  at_in.u.shardings.n = 1;
  at_in.u.shardings.v = ins;
  sp_attr at_axes = {.name = "manual_axes", .kind = SP_ATTR_AXES};
  at_axes.u.axes.n = naxes;
  at_axes.u.axes.v = manual;
  if (sp_attrs_set(m->arena, &mc->attrs, &at_in) || sp_attrs_set(m->arena, &mc->attrs, &at_axes)) return NULL;
  mc->results[0].sharding = (sp_sharding *)c->s;
  place(c, mc);
  sp_block *body = sp_region_add_block(m->arena, &mc->regions[0]);
  sp_value *x = body ? sp_block_add_arg(m->arena, body, lt) : NULL;
  if (!x) return NULL;
  ctx inner = *c;
  inner.body = body;
  for (int d = 0; d < t->rank && x; d++)
    if (pad[d]) x = shift_dim(&inner, x, d, shard[d], pad[d], channel);
  sp_op *ret = x ? sp_op_create(m->arena, "sdy.return", 1, &x, 0, NULL, 0) : NULL;
  if (!ret) return NULL;
  place(&inner, ret);
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
  ctx c = {m, mesh, s, op, NULL};
  int channel = 1;
  sp_value *cur = in;
  sp_type *pt = with_dims(m->arena, t, padded);
  if (!pt) return OOM(err);
  if (any_pad) {
    sp_type *scalar = sp_type_tensor(m->arena, 0, NULL, t->elem);
    sp_op *cst = scalar ? sp_op_create(m->arena, "stablehlo.constant", 0, NULL, 1, &scalar, 0) : NULL;
    const char *value = sp_arena_printf(m->arena, "%s : tensor<%s>", zero_text(t->elem), t->elem);
    if (!cst || !value || set_text(m, cst, "value", value)) return OOM(err);
    place(&c, cst);
    sp_value *pin[2] = {in, &cst->results[0]};
    sp_op *p = sp_op_create(m->arena, "stablehlo.pad", 2, pin, 1, &pt, 0);
    int64_t zeros[SP_MAX_RANK] = {0};
    if (!p || set_ints(m, p, "edge_padding_low", zeros, t->rank) ||
        set_ints(m, p, "edge_padding_high", pad, t->rank) || set_ints(m, p, "interior_padding", zeros, t->rank))
      return OOM(err);
    p->results[0].sharding = s;
    place(&c, p);
    if (!(cur = halo_shift(&c, &p->results[0], shard, pad, &channel))) return OOM(err);
  }
  sp_sharding *on_rev = sp_sharding_copy(m->arena, out);
  sp_op *rs = on_rev ? sp_export_reshard_op(m, NULL, pt, out, op->loc) : NULL;
  if (!rs) return OOM(err);
  on_rev->mesh_name = rname;
  sp_value *final = &rs->results[0];
  sp_op *sl = NULL;
  if (any_pad) {
    int64_t start[SP_MAX_RANK] = {0}, stride[SP_MAX_RANK];
    for (int d = 0; d < t->rank; d++) stride[d] = 1;
    sp_type *rt = res->type;
    sl = sp_op_create(m->arena, "stablehlo.slice", 1, NULL, 1, &rt, 0);
    if (!sl || set_ints(m, sl, "start_indices", start, t->rank) ||
        set_ints(m, sl, "limit_indices", t->dims, t->rank) || set_ints(m, sl, "strides", stride, t->rank))
      return OOM(err);
    sl->loc = op->loc;
    sl->results[0].sharding = out;
    final = &sl->results[0];
  }
  sp_value_replace_all_uses(res, final);
  sp_op_set_operand(op, 0, cur);
  res->type = pt;
  res->sharding = on_rev;
  sp_op_set_operand(rs, 0, res);
  sp_op_insert_after(op, rs);
  if (sl) {
    sp_op_set_operand(sl, 0, &rs->results[0]);
    sp_op_insert_after(rs, sl);
  }
  *done = true;
  return SP_OK;
}
