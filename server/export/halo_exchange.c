/*
 * halo_exchange.c - manual computations, neighbour permutes and device index arithmetic of the
 * halo exchanges (see halo_exchange.h).
 */
#include "export/halo_exchange.h"

#include <stdlib.h>
#include <string.h>

#include "export/mesh_positions.h"
#include "ir/sp_limits.h"
#include "ir/strbuf.h"
#include "propagation/sharding_walk.h"

sp_sharding *sp_halo_replicated(sp_arena *a, const sp_sharding *like, int rank) {
  sp_sharding *s = sp_sharding_new(a, like->mesh_name, rank, true);
  if (s) s->inline_mesh = like->inline_mesh;
  return s;
}

bool sp_halo_set_replicated(sp_module *m, sp_value *v, const sp_sharding *like) {
  v->sharding = sp_halo_replicated(m->arena, like, v->type->rank);
  return v->sharding != NULL;
}

static bool uses_axis(const sp_sharding *s, const bool *dims, const char *name) {
  for (int d = 0; d < s->rank; d++)
    for (int i = 0; (!dims || dims[d]) && i < s->dims[d].naxes; i++)
      if (strcmp(s->dims[d].axes[i].name, name) == 0) return true;
  return false;
}

sp_axis_ref *sp_halo_axes_of(sp_arena *a, const sp_mesh *mesh, const sp_sharding *s, const bool *dims, int *n) {
  sp_axis_ref *axes = sp_arena_calloc(a, (size_t)mesh->naxes + 1, sizeof *axes);
  *n = 0;
  for (int k = 0; axes && k < mesh->naxes; k++)
    if (uses_axis(s, dims, mesh->axes[k].name)) axes[(*n)++].name = mesh->axes[k].name;
  return axes;
}

/* `t` with each dim divided by the sizes of its axes in `s` that are among `axes`. */
static sp_type *local_type(sp_module *m, const sp_sharding *s, const sp_type *t, const sp_axis_ref *axes,
                           int naxes) {
  const sp_mesh *mesh = sp_sharding_mesh(m, s);
  int64_t dims[SP_MAX_RANK];
  if (!mesh || t->rank > SP_MAX_RANK) return NULL;
  for (int d = 0; d < t->rank; d++) {
    dims[d] = t->dims[d];
    for (int i = 0; d < s->rank && i < s->dims[d].naxes; i++)
      for (int k = 0; k < naxes; k++)
        if (strcmp(s->dims[d].axes[i].name, axes[k].name) == 0)
          dims[d] /= sp_sharding_axis_size(mesh, &s->dims[d].axes[i]);
  }
  return sp_build_type_with_dims(m->arena, t, dims);
}

sp_op *sp_halo_manual(sp_builder *outer, sp_value *const *ins, sp_sharding *const *in_shardings, int n,
                      sp_type *out_type, sp_sharding *out, const sp_axis_ref *axes, int naxes,
                      sp_block **body) {
  sp_module *m = outer->m;
  sp_op *mc = sp_op_create(m->arena, "sdy.manual_computation", n, ins, 1, &out_type, 1);
  sp_sharding **in_s = sp_arena_calloc(m->arena, (size_t)n + 1, sizeof *in_s);
  sp_axis_ref *manual = sp_arena_calloc(m->arena, (size_t)naxes + 1, sizeof *manual);
  if (!mc || !in_s || !manual) return NULL;
  memcpy(in_s, in_shardings, (size_t)n * sizeof *in_s);
  memcpy(manual, axes, (size_t)naxes * sizeof *manual);
  sp_attr at_in = {.name = "in_shardings", .kind = SP_ATTR_SHARDINGS};
  at_in.u.shardings.n = n;
  at_in.u.shardings.v = in_s;
  sp_attr at_axes = {.name = "manual_axes", .kind = SP_ATTR_AXES};
  at_axes.u.axes.n = naxes;
  at_axes.u.axes.v = manual;
  if (sp_attrs_set(m->arena, &mc->attrs, &at_in) || sp_attrs_set(m->arena, &mc->attrs, &at_axes)) return NULL;
  mc->results[0].sharding = out;
  *body = sp_region_add_block(m->arena, &mc->regions[0]);
  if (!*body) return NULL;
  for (int i = 0; i < n; i++) {
    sp_type *lt = ins[i]->type->rank ? local_type(m, in_s[i], ins[i]->type, axes, naxes) : ins[i]->type;
    if (!lt || !sp_block_add_arg(m->arena, *body, lt)) return NULL;
  }
  sp_build_place(outer, mc);
  return mc;
}

sp_value *sp_halo_permute(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, int64_t shift,
                          sp_value *v, int *channel) {
  sp_module *m = b->m;
  int64_t positions = sp_mesh_positions(mesh), shards = sp_dim_shard_count(mesh, s, d);
  int64_t *coord = calloc((size_t)mesh->naxes + 1, sizeof *coord);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "dense<[");
  int64_t npairs = 0;
  for (int64_t pos = 0; coord && pos < positions; pos++) {
    sp_mesh_position_coords(mesh, pos, coord);
    int64_t k = sp_dim_shard_index(mesh, s, d, coord) + shift;
    if (k < 0 || k >= shards) continue;
    sp_dim_set_shard_index(mesh, s, d, coord, k);
    sp_strbuf_printf(&sb, "%s[%lld, %lld]", npairs++ ? ", " : "", (long long)sp_mesh_position_device(mesh, pos),
                     (long long)sp_mesh_position_device(mesh, sp_mesh_position_of(mesh, coord)));
  }
  sp_strbuf_printf(&sb, "]> : tensor<%lldx2xi64>", (long long)npairs);
  const char *pairs = coord && sp_strbuf_ok(&sb) ? sp_arena_strdup(m->arena, sp_strbuf_str(&sb)) : NULL;
  free(coord);
  sp_strbuf_free(&sb);
  const char *handle = sp_arena_printf(m->arena, "#stablehlo.channel_handle<handle = %d, type = 1>", (*channel)++);
  sp_op *op = pairs && handle ? sp_op_create(m->arena, "stablehlo.collective_permute", 1, &v, 1, &v->type, 0) : NULL;
  if (!op || sp_build_set_text(m, op, "source_target_pairs", pairs) || sp_build_set_text(m, op, "channel_handle", handle))
    return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_halo_with_neighbours(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, int64_t nl,
                                  int64_t nr, sp_value *x, int *channel) {
  int64_t n = 0;
  sp_value **vs = sp_arena_calloc(b->m->arena, (size_t)(nl + nr + 1), sizeof *vs);
  if (!vs) return NULL;
  for (int64_t h = nl; h >= 1; h--)
    if (!(vs[n++] = sp_halo_permute(b, mesh, s, d, h, x, channel))) return NULL;
  vs[n++] = x;
  for (int64_t h = 1; h <= nr; h++)
    if (!(vs[n++] = sp_halo_permute(b, mesh, s, d, -h, x, channel))) return NULL;
  if (n == 1) return x;
  sp_value *cat = sp_build_concat(b, vs, (int)n, d);
  return cat && sp_halo_set_replicated(b->m, cat, s) ? cat : NULL;
}

/* dense<[position of device 0, of device 1, ...]>, NULL when the ids are not 0..n-1. */
static const char *position_table(sp_arena *a, const sp_mesh *mesh) {
  int64_t n = sp_mesh_positions(mesh);
  int64_t *pos = malloc((size_t)n * sizeof *pos);
  bool ok = pos != NULL;
  for (int64_t i = 0; ok && i < n; i++) pos[i] = -1;
  for (int64_t p = 0; ok && p < n; p++) {
    int64_t dev = sp_mesh_position_device(mesh, p);
    ok = dev >= 0 && dev < n && pos[dev] < 0;
    if (ok) pos[dev] = p;
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "dense<[");
  for (int64_t i = 0; ok && i < n; i++) sp_strbuf_printf(&sb, "%s%lld", i ? ", " : "", (long long)pos[i]);
  sp_strbuf_puts(&sb, "]>");
  const char *text = ok && sp_strbuf_ok(&sb) ? sp_arena_strdup(a, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  free(pos);
  return text;
}

sp_value *sp_halo_position(sp_builder *b, const sp_mesh *mesh) {
  sp_arena *a = b->m->arena;
  sp_value *pid = sp_build_op(b, "stablehlo.partition_id", 0, NULL, sp_type_tensor(a, 0, NULL, "ui32"));
  sp_type *i64 = sp_type_tensor(a, 0, NULL, "i64");
  sp_value *id = pid ? sp_build_op(b, "stablehlo.convert", 1, &pid, i64) : NULL;
  if (!id || !mesh->ndevice_ids) return id;
  int64_t n = sp_mesh_positions(mesh), one = 1;
  const char *dense = position_table(a, mesh);
  sp_type *tt = sp_type_tensor(a, 1, &n, "i64");
  sp_value *table = dense && tt ? sp_build_constant(b, tt, dense) : NULL;
  sp_value *row = table ? sp_build_dynamic_slice(b, table, &id, &one) : NULL;
  return row ? sp_build_op(b, "stablehlo.reshape", 1, &row, i64) : NULL;
}

sp_value *sp_halo_shard_index(sp_builder *b, const sp_mesh *mesh, const sp_sharding *s, int d, sp_value *pos) {
  sp_value *k = NULL;
  for (int i = 0; i < s->dims[d].naxes; i++) {
    const sp_axis_ref *r = &s->dims[d].axes[i];
    int a = sp_mesh_axis_index(mesh, r->name);
    if (a < 0) return NULL;
    int64_t n = mesh->axes[a].size, size = r->size ? r->size : n, minor = n / ((r->size ? r->pre : 1) * size);
    for (int j = a + 1; j < mesh->naxes; j++) minor *= mesh->axes[j].size;
    sp_value *digit = pos;
    if (minor != 1) {
      sp_value *c = sp_build_i64(b, minor);
      if (!c || !(digit = sp_build_binary(b, "stablehlo.divide", pos, c))) return NULL;
    }
    sp_value *c = sp_build_i64(b, size);
    if (!c || !(digit = sp_build_binary(b, "stablehlo.remainder", digit, c))) return NULL;
    if (k) {
      sp_value *w = sp_build_i64(b, size);
      sp_value *scaled = w ? sp_build_binary(b, "stablehlo.multiply", k, w) : NULL;
      if (!scaled || !(digit = sp_build_binary(b, "stablehlo.add", scaled, digit))) return NULL;
    }
    k = digit;
  }
  return k;
}
