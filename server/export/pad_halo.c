/*
 * pad_halo.c - halo exchange for sharded pads and slices (see pad_halo.h).
 */
#include "export/pad_halo.h"

#include <string.h>

#include "export/halo_exchange.h"
#include "export/mesh_positions.h"
#include "ir/sp_limits.h"
#include "propagation/sharding_walk.h"

#define OOM(err) sp_err_set(err, SP_ENOMEM, "out of memory exchanging halos of a pad or slice")

/* The op as a pad: per dim low, high, interior padding; operand size I, result size O. */
typedef struct pad_form {
  int rank;
  int64_t low[SP_MAX_RANK], high[SP_MAX_RANK], interior[SP_MAX_RANK];
  int64_t in[SP_MAX_RANK], out[SP_MAX_RANK];
  int64_t shards[SP_MAX_RANK], s_in[SP_MAX_RANK], s_out[SP_MAX_RANK];
  int64_t nl[SP_MAX_RANK], nr[SP_MAX_RANK];
  bool exchange[SP_MAX_RANK];
} pad_form;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static bool read_form(const sp_op *op, pad_form *f) {
  const sp_type *ti = op->operands[0].value->type, *to = op->results[0].type;
  if (ti->rank > SP_MAX_RANK || ti->rank != to->rank) return false;
  f->rank = ti->rank;
  sp_ints a, b, c;
  if (op->kind == SP_OP_PAD) {
    if (!sp_op_get_ints(op, "edge_padding_low", &a) || !sp_op_get_ints(op, "edge_padding_high", &b) ||
        !sp_op_get_ints(op, "interior_padding", &c) || a.n != f->rank || b.n != f->rank || c.n != f->rank)
      return false;
  } else {
    if (!sp_op_get_ints(op, "start_indices", &a) || !sp_op_get_ints(op, "limit_indices", &b) || a.n != f->rank ||
        b.n != f->rank)
      return false;
    if (sp_op_get_ints(op, "strides", &c))
      for (int d = 0; d < c.n; d++)
        if (c.v[d] != 1) return false;
  }
  for (int d = 0; d < f->rank; d++) {
    f->in[d] = ti->dims[d];
    f->out[d] = to->dims[d];
    bool pad = op->kind == SP_OP_PAD;
    f->low[d] = pad ? a.v[d] : -a.v[d];
    f->high[d] = pad ? b.v[d] : b.v[d] - ti->dims[d];
    f->interior[d] = pad ? c.v[d] : 0;
    if (f->in[d] < 1 || f->interior[d] < 0) return false;
  }
  return true;
}

/* Hops of dim d each way; false when beyond S/2. */
static bool count_hops(pad_form *f, int d) {
  int64_t S = f->shards[d], si = f->s_in[d], so = f->s_out[d], step = f->interior[d] + 1;
  int64_t last = (f->in[d] - 1) * step;
  f->nl[d] = f->nr[d] = 0;
  for (int64_t i = 0; i < S; i++) {
    int64_t a = i * so - f->low[d], b = ((i + 1) * so < f->out[d] ? (i + 1) * so : f->out[d]) - 1 - f->low[d];
    if (a < 0) a = 0;
    if (b > last) b = last;
    if (a > b) continue;
    int64_t lo = a / step, hi = b / step + (step > 1);
    if (hi > f->in[d] - 1) hi = f->in[d] - 1;
    int64_t left = i * si - lo, right = hi - ((i + 1) * si - 1);
    if (left > 0 && ceil_div(left, si) > f->nl[d]) f->nl[d] = ceil_div(left, si);
    if (right > 0 && ceil_div(right, si) > f->nr[d]) f->nr[d] = ceil_div(right, si);
  }
  return f->nl[d] <= S / 2 && f->nr[d] <= S / 2;
}

/* Whether `v` is a stablehlo.constant of zeros. */
static bool is_zero_constant(const sp_value *v) {
  const sp_op *def = v->def;
  const char *text = def && def->kind == SP_OP_CONSTANT ? sp_op_get_str(def, "value") : NULL;
  if (!text || v->type->kind != SP_TYPE_TENSOR) return false;
  const char *zero = sp_build_zero_text(v->type->elem);
  size_t n = strlen(zero);
  return strncmp(text, zero, n) == 0 && (text[n] == '\0' || text[n] == ' ' || text[n] == ':');
}

/* One exchanged dim inside the manual computation: permutes, concatenate, pad, dynamic slice. */
static sp_value *exchange_dim(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, const pad_form *f,
                              int d, sp_value *x, sp_value *pv, int *channel) {
  int64_t nl = f->nl[d];
  sp_value *cat = sp_halo_with_neighbours(b, mesh, s, d, nl, f->nr[d], x, channel);
  if (!cat) return NULL;
  int64_t step = f->interior[d] + 1, X = f->s_out[d] * step;
  int64_t low[SP_MAX_RANK] = {0}, high[SP_MAX_RANK] = {0}, interior[SP_MAX_RANK] = {0};
  low[d] = high[d] = X;
  interior[d] = f->interior[d];
  sp_value *buf = sp_build_pad(b, cat, pv, low, high, interior);
  if (!buf || !sp_halo_set_replicated(b->m, buf, s)) return NULL;
  sp_value *pos = sp_halo_position(b, mesh);
  sp_value *k = pos ? sp_halo_shard_index(b, mesh, s, d, pos) : NULL;
  sp_value *stride = k ? sp_build_i64(b, f->s_out[d] - f->s_in[d] * step) : NULL;
  sp_value *offset = stride ? sp_build_i64(b, X - f->low[d] + nl * f->s_in[d] * step) : NULL;
  sp_value *mul = offset ? sp_build_binary(b, "stablehlo.multiply", k, stride) : NULL;
  sp_value *add = mul ? sp_build_binary(b, "stablehlo.add", mul, offset) : NULL;
  sp_value *zero = add ? sp_build_i64(b, 0) : NULL;
  sp_value *start = zero ? sp_build_binary(b, "stablehlo.maximum", add, zero) : NULL;
  if (!start) return NULL;
  sp_value *starts[SP_MAX_RANK];
  int64_t sizes[SP_MAX_RANK];
  for (int i = 0; i < f->rank; i++) {
    starts[i] = i == d ? start : zero;
    sizes[i] = i == d ? f->s_out[d] : x->type->dims[i];
  }
  sp_value *ds = sp_build_dynamic_slice(b, buf, starts, sizes);
  return ds && sp_halo_set_replicated(b->m, ds, s) ? ds : NULL;
}

/* The op's padding (or slicing) of its unsharded dims, on the local value `x`. */
static sp_value *finish_unsharded(sp_builder *b, const sp_op *op, const pad_form *f, const sp_sharding *s,
                                  sp_value *x, sp_value *pv) {
  int64_t low[SP_MAX_RANK] = {0}, high[SP_MAX_RANK] = {0}, interior[SP_MAX_RANK] = {0};
  int64_t start[SP_MAX_RANK], limit[SP_MAX_RANK];
  bool any = false;
  for (int d = 0; d < f->rank; d++) {
    start[d] = 0;
    limit[d] = x->type->dims[d];
    if (f->shards[d] > 1) continue;
    low[d] = f->low[d];
    high[d] = f->high[d];
    interior[d] = f->interior[d];
    start[d] = -f->low[d];
    limit[d] = f->in[d] + f->high[d];
    any |= low[d] || high[d] || interior[d];
  }
  if (!any) return x;
  sp_value *r = op->kind == SP_OP_PAD ? sp_build_pad(b, x, pv, low, high, interior) : sp_build_slice(b, x, start, limit);
  return r && sp_halo_set_replicated(b->m, r, s) ? r : NULL;
}

int sp_export_pad_halo(sp_module *m, sp_op *op, bool *done, sp_err *err) {
  *done = false;
  if ((op->kind != SP_OP_PAD && op->kind != SP_OP_SLICE) || op->nresults != 1) return SP_OK;
  sp_value *x = op->operands[0].value, *res = &op->results[0];
  sp_sharding *s = x->sharding, *out = res->sharding;
  pad_form f;
  if (!s || !out || !s->mesh_name || !out->mesh_name || strcmp(s->mesh_name, out->mesh_name) != 0 ||
      !sp_sharding_same_dim_axes(s, out) || s->nunreduced || out->nunreduced || s->rank != x->type->rank ||
      !read_form(op, &f))
    return SP_OK;
  if (op->kind == SP_OP_PAD && !is_zero_constant(op->operands[1].value)) return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  if (!mesh) return SP_OK;
  bool any = false, uneven = false, any_out_pad = false;
  int64_t pre_high[SP_MAX_RANK] = {0}, zeros[SP_MAX_RANK] = {0}, mc_dims[SP_MAX_RANK];
  for (int d = 0; d < f.rank; d++) {
    f.shards[d] = sp_dim_shard_count(mesh, s, d);
    f.s_in[d] = ceil_div(f.in[d], f.shards[d]);
    f.s_out[d] = ceil_div(f.out[d], f.shards[d]);
    mc_dims[d] = f.shards[d] * f.s_out[d];
    f.exchange[d] = f.shards[d] > 1 && (f.interior[d] || f.low[d] || f.s_in[d] != f.s_out[d]);
    if (f.exchange[d] && !count_hops(&f, d)) return SP_OK;
    any |= f.exchange[d];
    pre_high[d] = f.shards[d] * f.s_in[d] - f.in[d];
    uneven |= pre_high[d] > 0;
    any_out_pad |= mc_dims[d] != f.out[d];
  }
  if (!any) return SP_OK;
  sp_builder outer = {m, op, NULL, op->loc};
  sp_value *pv = op->kind == SP_OP_PAD ? op->operands[1].value
                                       : sp_build_zeros(&outer, sp_type_tensor(m->arena, 0, NULL, x->type->elem));
  if (!pv) return OOM(err);
  sp_value *in = x;
  if (uneven) {
    if (!(in = sp_build_pad(&outer, x, pv, zeros, pre_high, zeros))) return OOM(err);
    in->sharding = s;
  }
  int naxes;
  sp_axis_ref *axes = sp_halo_axes_of(m->arena, mesh, s, NULL, &naxes);
  sp_sharding *scalar = sp_halo_replicated(m->arena, s, 0);
  sp_type *mc_type = sp_build_type_with_dims(m->arena, res->type, mc_dims);
  if (!axes || !scalar || !mc_type) return OOM(err);
  sp_value *ins[2] = {in, pv};
  sp_sharding *in_s[2] = {s, scalar};
  sp_block *body;
  sp_op *mc = sp_halo_manual(&outer, ins, in_s, 2, mc_type, out, axes, naxes, &body);
  if (!mc) return OOM(err);
  sp_builder inner = {m, NULL, body, op->loc};
  sp_value *cur = body->args[0];
  int channel = 1;
  for (int d = 0; d < f.rank && cur; d++)
    if (f.exchange[d]) cur = exchange_dim(&inner, mesh, s, &f, d, cur, body->args[1], &channel);
  if (cur) cur = finish_unsharded(&inner, op, &f, s, cur, body->args[1]);
  sp_op *ret = cur ? sp_op_create(m->arena, "sdy.return", 1, &cur, 0, NULL, 0) : NULL;
  if (!ret) return OOM(err);
  sp_build_place(&inner, ret);
  sp_value *final = &mc->results[0];
  if (any_out_pad) {
    if (!(final = sp_build_slice(&outer, final, zeros, f.out))) return OOM(err);
    final->sharding = out;
  }
  sp_value_replace_all_uses(res, final);
  sp_op_erase(op);
  *done = true;
  return SP_OK;
}
