/*
 * reshape_halo.c - halo exchange for reshapes that split a dim unevenly (see reshape_halo.h).
 */
#include "export/reshape_halo.h"

#include <stdlib.h>
#include <string.h>

#include "export/halo_exchange.h"
#include "export/mesh_positions.h"
#include "ir/sp_limits.h"
#include "ir/strbuf.h"
#include "propagation/sharding_walk.h"

#define OOM(err) sp_err_set(err, SP_ENOMEM, "out of memory exchanging halos of a reshape")

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int sp_reshape_groups(const sp_type *ti, const sp_type *to, sp_reshape_group *out) {
  int i = 0, j = 0, n = 0;
  while (i < ti->rank || j < to->rank) {
    sp_reshape_group g = {i, i, j, j};
    int64_t pi = 1, pj = 1;
    if (i < ti->rank) pi *= ti->dims[i++];
    if (j < to->rank) pj *= to->dims[j++];
    while (pi != pj && (i < ti->rank || j < to->rank)) {
      if ((pi < pj && i < ti->rank) || j >= to->rank) pi *= ti->dims[i++];
      else pj *= to->dims[j++];
    }
    g.i1 = i;
    g.j1 = j;
    out[n++] = g;
  }
  return n;
}

static bool same_axes(const sp_dim_sharding *x, const sp_dim_sharding *y) {
  if (x->naxes != y->naxes) return false;
  for (int i = 0; i < x->naxes; i++)
    if (strcmp(x->axes[i].name, y->axes[i].name) != 0 || x->axes[i].pre != y->axes[i].pre ||
        x->axes[i].size != y->axes[i].size)
      return false;
  return true;
}

/* The split to exchange: operand dim i0 into result dims [j0, j1). */
typedef struct split {
  int i0, j0, j1;
  int64_t shards, s_in, E, nl, nr, X;
  int64_t *start;   /* per mesh position, malloc'd */
} split;

/* The split group of `op` when it is the only one `resolve` marks and the others are 1:1. */
static bool find_split(const sp_op *op, const bool *resolve, split *sp) {
  const sp_type *ti = op->operands[0].value->type, *to = op->results[0].type;
  const sp_sharding *s = op->operands[0].value->sharding, *r = op->results[0].sharding;
  sp_reshape_group *g = calloc((size_t)(ti->rank + to->rank + 1), sizeof *g);
  int n = g ? sp_reshape_groups(ti, to, g) : 0, found = 0;
  bool ok = g != NULL;
  for (int k = 0; ok && k < n; k++) {
    bool marked = false;
    for (int d = g[k].i0; d < g[k].i1; d++) marked |= resolve[d];
    if (marked) {
      ok = ++found == 1 && g[k].i1 - g[k].i0 == 1 && g[k].j1 - g[k].j0 >= 2;
      sp->i0 = g[k].i0;
      sp->j0 = g[k].j0;
      sp->j1 = g[k].j1;
    } else {
      ok = g[k].i1 - g[k].i0 == 1 && g[k].j1 - g[k].j0 == 1 && same_axes(&s->dims[g[k].i0], &r->dims[g[k].j0]);
    }
  }
  free(g);
  return ok && found == 1;
}

/* Hops and per-position starts of the split; false when beyond S/2 each way. */
static bool plan_split(const sp_mesh *mesh, const sp_op *op, split *sp) {
  const sp_type *ti = op->operands[0].value->type, *to = op->results[0].type;
  const sp_sharding *s = op->operands[0].value->sharding, *r = op->results[0].sharding;
  int last = sp->j1 - 1;
  sp->shards = sp_dim_shard_count(mesh, s, sp->i0);
  sp->s_in = ceil_div(ti->dims[sp->i0], sp->shards);
  for (int j = sp->j0; j < last; j++)
    if (ceil_div(to->dims[j], sp_dim_shard_count(mesh, r, j)) != 1) return false;
  sp->E = ceil_div(to->dims[last], sp_dim_shard_count(mesh, r, last));
  sp->X = sp->E;
  int64_t positions = sp_mesh_positions(mesh);
  int64_t *coord = calloc((size_t)mesh->naxes + 1, sizeof *coord);
  int64_t *lin = calloc((size_t)positions + 1, sizeof *lin), *k = calloc((size_t)positions + 1, sizeof *k);
  sp->start = calloc((size_t)positions + 1, sizeof *sp->start);
  bool ok = coord && lin && k && sp->start;
  sp->nl = sp->nr = 0;
  for (int64_t p = 0; ok && p < positions; p++) {
    sp_mesh_position_coords(mesh, p, coord);
    k[p] = sp_dim_shard_index(mesh, s, sp->i0, coord);
    bool valid = true;
    int64_t stride = 1;
    for (int j = last; j >= sp->j0; j--) {
      int64_t idx = sp_dim_shard_index(mesh, r, j, coord) * (j == last ? sp->E : 1);
      valid &= idx < to->dims[j];
      lin[p] += idx * stride;
      stride *= to->dims[j];
    }
    if (!valid) continue;
    int64_t cols = to->dims[last] - sp_dim_shard_index(mesh, r, last, coord) * sp->E;
    int64_t hi = lin[p] + (cols < sp->E ? cols : sp->E) - 1;
    int64_t left = k[p] * sp->s_in - lin[p], right = hi - ((k[p] + 1) * sp->s_in - 1);
    if (left > 0 && ceil_div(left, sp->s_in) > sp->nl) sp->nl = ceil_div(left, sp->s_in);
    if (right > 0 && ceil_div(right, sp->s_in) > sp->nr) sp->nr = ceil_div(right, sp->s_in);
  }
  ok = ok && sp->nl <= sp->shards / 2 && sp->nr <= sp->shards / 2;
  int64_t size = (sp->nl + sp->nr + 1) * sp->s_in + 2 * sp->X;
  for (int64_t p = 0; ok && p < positions; p++) {
    int64_t st = sp->X + lin[p] - (k[p] - sp->nl) * sp->s_in;
    sp->start[p] = st < 0 ? 0 : st > size - sp->E ? size - sp->E : st;
  }
  free(coord);
  free(lin);
  free(k);
  return ok;
}

/* dense<[start of position 0, ...]> : tensor<Pxi64> looked up at `pos`, as a scalar. */
static sp_value *start_of(sp_builder *b, const sp_mesh *mesh, const split *sp, sp_value *pos) {
  sp_arena *a = b->m->arena;
  int64_t n = sp_mesh_positions(mesh), one = 1;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "dense<[");
  for (int64_t p = 0; p < n; p++) sp_strbuf_printf(&sb, "%s%lld", p ? ", " : "", (long long)sp->start[p]);
  sp_strbuf_puts(&sb, "]>");
  const char *dense = sp_strbuf_ok(&sb) ? sp_arena_strdup(a, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  sp_type *tt = sp_type_tensor(a, 1, &n, "i64");
  sp_value *table = dense && tt ? sp_build_constant(b, tt, dense) : NULL;
  sp_value *row = table ? sp_build_dynamic_slice(b, table, &pos, &one) : NULL;
  return row ? sp_build_op(b, "stablehlo.reshape", 1, &row, sp_type_tensor(a, 0, NULL, "i64")) : NULL;
}

/* The manual computation's body: exchange, slice out the block, reshape it. */
static sp_value *exchange(sp_builder *b, const sp_mesh *mesh, const sp_op *op, const split *sp,
                          sp_value *x, sp_value *pv, const int64_t *local_out) {
  const sp_sharding *s = op->operands[0].value->sharding;
  int rank = x->type->rank, channel = 1;
  sp_value *cat = sp_halo_with_neighbours(b, mesh, s, sp->i0, sp->nl, sp->nr, x, &channel);
  if (!cat) return NULL;
  int64_t low[SP_MAX_RANK] = {0}, high[SP_MAX_RANK] = {0}, interior[SP_MAX_RANK] = {0}, sizes[SP_MAX_RANK];
  low[sp->i0] = high[sp->i0] = sp->X;
  sp_value *buf = sp_build_pad(b, cat, pv, low, high, interior);
  if (!buf || !sp_halo_set_replicated(b->m, buf, s)) return NULL;
  sp_value *pos = sp_halo_position(b, mesh);
  sp_value *start = pos ? start_of(b, mesh, sp, pos) : NULL;
  sp_value *zero = start ? sp_build_i64(b, 0) : NULL;
  if (!zero) return NULL;
  sp_value *starts[SP_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    starts[d] = d == sp->i0 ? start : zero;
    sizes[d] = d == sp->i0 ? sp->E : x->type->dims[d];
  }
  sp_value *ds = sp_build_dynamic_slice(b, buf, starts, sizes);
  if (!ds || !sp_halo_set_replicated(b->m, ds, s)) return NULL;
  sp_type *lt = sp_build_type_with_dims(b->m->arena, op->results[0].type, local_out);
  sp_value *block = lt ? sp_build_op(b, "stablehlo.reshape", 1, &ds, lt) : NULL;
  return block && sp_halo_set_replicated(b->m, block, s) ? block : NULL;
}

static int rewrite(sp_module *m, sp_op *op, const sp_mesh *mesh, const split *sp, sp_err *err) {
  sp_value *x = op->operands[0].value, *res = &op->results[0];
  sp_sharding *s = x->sharding, *r = res->sharding;
  const sp_type *ti = x->type, *to = res->type;
  sp_builder outer = {m, op, NULL, op->loc};
  sp_value *pv = sp_build_zeros(&outer, sp_type_tensor(m->arena, 0, NULL, ti->elem));
  if (!pv) return OOM(err);
  int64_t zeros[SP_MAX_RANK] = {0}, high[SP_MAX_RANK] = {0}, mc_dims[SP_MAX_RANK], local_out[SP_MAX_RANK];
  sp_value *in = x;
  high[sp->i0] = sp->shards * sp->s_in - ti->dims[sp->i0];
  if (high[sp->i0]) {
    if (!(in = sp_build_pad(&outer, x, pv, zeros, high, zeros))) return OOM(err);
    in->sharding = s;
  }
  bool padded = false;
  for (int j = 0; j < to->rank; j++) {
    int in_dim = j < sp->j0 ? j : j - (sp->j1 - sp->j0) + 1;
    bool group = j >= sp->j0 && j < sp->j1;
    int64_t per = group ? ceil_div(to->dims[j], sp_dim_shard_count(mesh, r, j)) : 0;
    mc_dims[j] = group ? per * sp_dim_shard_count(mesh, r, j) : to->dims[j];
    local_out[j] = group ? per : ti->dims[in_dim];
    padded |= mc_dims[j] != to->dims[j];
  }
  bool *dims_in = sp_arena_calloc(m->arena, (size_t)ti->rank + 1, sizeof *dims_in);
  bool *dims_out = sp_arena_calloc(m->arena, (size_t)to->rank + 1, sizeof *dims_out);
  if (!dims_in || !dims_out) return OOM(err);
  dims_in[sp->i0] = true;
  for (int j = sp->j0; j < sp->j1; j++) dims_out[j] = true;
  int na, nb;
  sp_axis_ref *a = sp_halo_axes_of(m->arena, mesh, s, dims_in, &na);
  sp_axis_ref *b = sp_halo_axes_of(m->arena, mesh, r, dims_out, &nb);
  sp_axis_ref *axes = sp_arena_calloc(m->arena, (size_t)mesh->naxes + 1, sizeof *axes);
  sp_sharding *scalar = sp_halo_replicated(m->arena, s, 0);
  sp_type *mc_type = sp_build_type_with_dims(m->arena, to, mc_dims);
  if (!a || !b || !axes || !scalar || !mc_type) return OOM(err);
  int naxes = 0;
  for (int k = 0; k < mesh->naxes; k++) {
    bool used = false;
    for (int i = 0; i < na; i++) used |= strcmp(a[i].name, mesh->axes[k].name) == 0;
    for (int i = 0; i < nb; i++) used |= strcmp(b[i].name, mesh->axes[k].name) == 0;
    if (used) axes[naxes++].name = mesh->axes[k].name;
  }
  sp_value *ins[2] = {in, pv};
  sp_sharding *in_s[2] = {s, scalar};
  sp_block *body;
  sp_op *mc = sp_halo_manual(&outer, ins, in_s, 2, mc_type, r, axes, naxes, &body);
  if (!mc) return OOM(err);
  sp_builder inner = {m, NULL, body, op->loc};
  sp_value *cur = exchange(&inner, mesh, op, sp, body->args[0], body->args[1], local_out);
  sp_op *ret = cur ? sp_op_create(m->arena, "sdy.return", 1, &cur, 0, NULL, 0) : NULL;
  if (!ret) return OOM(err);
  sp_build_place(&inner, ret);
  sp_value *final = &mc->results[0];
  if (padded) {
    if (!(final = sp_build_slice(&outer, final, zeros, to->dims))) return OOM(err);
    final->sharding = r;
  }
  sp_value_replace_all_uses(res, final);
  sp_op_erase(op);
  return SP_OK;
}

int sp_export_reshape_halo(sp_module *m, sp_op *op, const bool *resolve, bool *done, sp_err *err) {
  *done = false;
  if (op->kind != SP_OP_RESHAPE || op->noperands != 1 || op->nresults != 1) return SP_OK;
  sp_value *x = op->operands[0].value, *res = &op->results[0];
  sp_sharding *s = x->sharding, *r = res->sharding;
  if (!s || !r || !s->mesh_name || !r->mesh_name || strcmp(s->mesh_name, r->mesh_name) != 0 || s->nunreduced ||
      r->nunreduced || s->rank != x->type->rank || r->rank != res->type->rank || x->type->rank > SP_MAX_RANK ||
      res->type->rank > SP_MAX_RANK)
    return SP_OK;
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  split sp = {0};
  if (!mesh || !find_split(op, resolve, &sp)) return SP_OK;
  int rc = SP_OK;
  if (plan_split(mesh, op, &sp)) {
    rc = rewrite(m, op, mesh, &sp, err);
    *done = rc == SP_OK;
  }
  free(sp.start);
  return rc;
}
