/*
 * cost_model.c - compute, collective, resharding and memory costs (see cost_model.h).
 *
 * Everything here is arithmetic on layouts and the per-axis link costs read once by
 * sp_cost_model_init; nothing allocates except the layout constructors, the model's reshard
 * memo and sp_cost_collective_op's scratch layouts.
 */
#include "search/cost_model.h"

#include <math.h>
#include <string.h>

#include "search/reshard_memo.h"

/* ------------------------------------------------------------------ collectives */

const char *sp_collective_name(sp_collective_kind k) {
  switch (k) {
    case SP_COLL_ALL_GATHER: return "all-gather";
    case SP_COLL_REDUCE_SCATTER: return "reduce-scatter";
    case SP_COLL_ALL_REDUCE: return "all-reduce";
    case SP_COLL_ALL_TO_ALL: return "all-to-all";
    case SP_COLL_ALL_SLICE: return "all-slice";
    case SP_COLL_COLLECTIVE_PERMUTE: return "collective-permute";
  }
  return "?";
}

double sp_collective_seconds(sp_collective_kind k, int64_t n, double alpha, double bandwidth,
                             double bytes) {
  if (n <= 1) return 0.0;
  /* The cluster reader refuses such a link; NaN makes the search report it (plan_search.c)
   * instead of pricing the collective as free. */
  if (!(bandwidth > 0)) return NAN;
  double dn = (double)n, frac;
  switch (k) {
    case SP_COLL_ALL_GATHER:
    case SP_COLL_REDUCE_SCATTER: frac = (dn - 1) / dn; break;
    case SP_COLL_ALL_REDUCE: frac = 2 * (dn - 1) / dn; break;
    case SP_COLL_ALL_TO_ALL: frac = (dn - 1) / (dn * dn); break;
    case SP_COLL_COLLECTIVE_PERMUTE: frac = 1; break;
    case SP_COLL_ALL_SLICE:
    default: return 0.0;
  }
  return alpha + frac * bytes / bandwidth;
}

/* ------------------------------------------------------------------ layouts */

sp_layout *sp_layout_new_unsharded(sp_arena *a, int rank) {
  sp_layout *l = sp_arena_calloc(a, 1, sizeof *l);
  if (!l) return NULL;
  l->rank = rank;
  l->start = sp_arena_calloc(a, (size_t)rank + 1, sizeof *l->start);
  if (!l->start) return NULL;
  l->axes = NULL;
  return l;
}

sp_layout *sp_layout_from_dims(sp_arena *a, int rank, const sp_ft_axes *dims) {
  sp_layout *l = sp_layout_new_unsharded(a, rank);
  if (!l) return NULL;
  int total = 0;
  for (int d = 0; d < rank; d++) total += dims[d].n;
  if (total) {
    l->axes = sp_arena_alloc(a, (size_t)total * sizeof *l->axes);
    if (!l->axes) return NULL;
  }
  int k = 0;
  for (int d = 0; d < rank; d++) {
    l->start[d] = k;
    for (int i = 0; i < dims[d].n; i++) l->axes[k++] = dims[d].v[i];
  }
  l->start[rank] = k;
  return l;
}

int sp_layout_from_sharding(sp_arena *a, const sp_sharding *s, int rank, const sp_mesh *mesh,
                            sp_layout **out, sp_err *err) {
  *out = NULL;
  if (s && s->rank != rank)
    return sp_err_set(err, SP_EINVAL, "sharding has %d dimensions, the tensor %d", s->rank,
                      rank);
  int total = 0;
  for (int d = 0; s && d < rank; d++) total += s->dims[d].naxes;
  sp_layout *l = sp_layout_new_unsharded(a, rank);
  if (!l) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (total) {
    l->axes = sp_arena_alloc(a, (size_t)total * sizeof *l->axes);
    if (!l->axes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  int k = 0;
  for (int d = 0; d < rank; d++) {
    l->start[d] = k;
    for (int i = 0; s && i < s->dims[d].naxes; i++) {
      const sp_axis_ref *r = &s->dims[d].axes[i];
      int rc = sp_ft_axis_from_ref(mesh, r, &l->axes[k]);
      if (rc == SP_ENOTFOUND)
        return sp_err_set(err, SP_EINVAL, "dimension %d: axis \"%s\" is not in the mesh", d,
                          r->name);
      if (rc) return sp_err_set(err, SP_EINVAL, "dimension %d: invalid sub-axis of \"%s\"", d,
                                r->name);
      k++;
    }
  }
  l->start[rank] = k;
  *out = l;
  return SP_OK;
}

sp_sharding *sp_layout_to_sharding(sp_arena *a, const sp_layout *l, const sp_mesh *mesh,
                                   const char *mesh_name, const sp_sharding *old) {
  sp_sharding *s = sp_sharding_new(a, mesh_name, l->rank, true);
  if (!s) return NULL;
  for (int d = 0; d < l->rank; d++) {
    int n = sp_layout_dim_naxes(l, d);
    sp_dim_sharding *ds = &s->dims[d];
    ds->naxes = n;
    ds->axes = n ? sp_arena_alloc(a, (size_t)n * sizeof *ds->axes) : NULL;
    if (n && !ds->axes) return NULL;
    for (int i = 0; i < n; i++) ds->axes[i] = sp_ft_axis_ref(mesh, l->axes[l->start[d] + i]);
    ds->closed = true;
    ds->priority = (old && old->rank == l->rank) ? old->dims[d].priority : SP_NO_PRIORITY;
  }
  if (old) {
    s->nreplicated = old->nreplicated;
    s->replicated = old->replicated;
    s->nunreduced = old->nunreduced;
    s->unreduced = old->unreduced;
    s->unreduced_kind = old->unreduced_kind;
  }
  if (l->unreduced) {
    int n = 0;
    for (int i = 0; i < mesh->naxes && i < 32; i++) n += (l->unreduced >> i) & 1u;
    sp_axis_ref *u = sp_arena_alloc(a, (size_t)n * sizeof *u);
    if (!u) return NULL;
    n = 0;
    for (int i = 0; i < mesh->naxes && i < 32; i++)
      if ((l->unreduced >> i) & 1u) u[n++] = sp_ft_axis_ref(mesh, sp_ft_axis_make(mesh, i, 0, 0));
    s->unreduced = u;
    s->nunreduced = n;
    s->unreduced_kind = NULL;
  }
  return s;
}

bool sp_layout_equal(const sp_layout *x, const sp_layout *y) {
  if (x == y) return true;
  if (x->rank != y->rank || x->unreduced != y->unreduced) return false;
  /* (The hot path of the reshard memo's lookups: compared in place, not by call.) */
  for (int d = 1; d <= x->rank; d++)
    if (x->start[d] != y->start[d]) return false;
  for (int i = 0; i < x->start[x->rank]; i++) {
    const sp_ft_axis *a = &x->axes[i], *b = &y->axes[i];
    if (a->axis != b->axis || a->pre != b->pre || a->size != b->size) return false;
  }
  return true;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t sp_layout_dims_hash(const sp_layout *l) {
  if (l->hash) return l->hash;
  uint64_t h = mix(0x51ed270b27a3c4f1ULL, (uint64_t)l->rank);
  for (int d = 1; d <= l->rank; d++) h = mix(h, (uint64_t)l->start[d]);
  for (int i = 0; i < l->start[l->rank]; i++)
    h = mix(h, (uint64_t)l->axes[i].axis ^ ((uint64_t)l->axes[i].pre << 8) ^
                   ((uint64_t)l->axes[i].size << 36));
  ((sp_layout *)l)->hash = h ? h : 1;   /* a cache in a layout that is otherwise immutable */
  return l->hash;
}

int64_t sp_layout_dim_shards(const sp_layout *l, const sp_mesh *mesh, int d) {
  int64_t p = 1;
  for (int i = l->start[d]; i < l->start[d + 1]; i++) p *= sp_ft_axis_size(mesh, l->axes[i]);
  return p;
}

int64_t sp_layout_shards(const sp_layout *l, const sp_mesh *mesh) {
  int64_t p = 1;
  for (int i = 0; i < l->start[l->rank]; i++) p *= sp_ft_axis_size(mesh, l->axes[i]);
  return p;
}

bool sp_layout_uses_axis(const sp_layout *l, int axis) {
  for (int i = 0; i < l->start[l->rank]; i++)
    if (l->axes[i].axis == axis) return true;
  return false;
}

void sp_layout_print(sp_strbuf *sb, const sp_layout *l, const sp_mesh *mesh) {
  sp_strbuf_putc(sb, '[');
  for (int d = 0; d < l->rank; d++) {
    if (d) sp_strbuf_puts(sb, ", ");
    sp_strbuf_putc(sb, '{');
    for (int i = l->start[d]; i < l->start[d + 1]; i++) {
      if (i > l->start[d]) sp_strbuf_puts(sb, ", ");
      sp_ft_axis_print(sb, mesh, l->axes[i], true);
    }
    sp_strbuf_putc(sb, '}');
  }
  sp_strbuf_putc(sb, ']');
  if (!l->unreduced) return;
  sp_strbuf_puts(sb, " unreduced={");
  bool first = true;
  for (int i = 0; i < mesh->naxes && i < 32; i++)
    if ((l->unreduced >> i) & 1u) {
      sp_strbuf_printf(sb, "%s\"%s\"", first ? "" : ", ", mesh->axes[i].name);
      first = false;
    }
  sp_strbuf_putc(sb, '}');
}

/* ------------------------------------------------------------------ the model */

int sp_cost_model_init(sp_cost_model *cm, const sp_cluster *c, const sp_mesh *mesh,
                       const int64_t *device_of, sp_err *err) {
  memset(cm, 0, sizeof *cm);
  if (mesh->naxes > SP_MAX_MESH_AXES_CLUSTER)
    return sp_err_set(err, SP_EINVAL, "mesh has %d axes; the cost model handles at most %d",
                      mesh->naxes, SP_MAX_MESH_AXES_CLUSTER);
  int64_t ndev = sp_mesh_num_devices(mesh);
  if (ndev > c->ndevices)
    return sp_err_set(err, SP_EINVAL, "mesh has %lld devices, the cluster only %d",
                      (long long)ndev, c->ndevices);
  int rc = sp_cluster_axis_costs(c, mesh, device_of, cm->axis, err);
  if (rc) return rc;
  cm->cluster = c;
  cm->mesh = mesh;
  if (device_of) cm->device0 = (int)device_of[0];
  else if (mesh->ndevice_ids > 0) cm->device0 = (int)mesh->device_ids[0];
  else cm->device0 = 0;
  if (cm->device0 < 0 || cm->device0 >= c->ndevices)
    return sp_err_set(err, SP_EINVAL, "mesh device %d is not a device of the cluster",
                      cm->device0);
  cm->memory_bytes = sp_cluster_device_memory(c, cm->device0);
  cm->no_reduce_scatter = c->no_reduce_scatter;
  cm->memo = sp_reshard_memo_new(mesh);
  if (!cm->memo) return sp_err_set(err, SP_ENOMEM, "out of memory");
  return SP_OK;
}

void sp_cost_model_free(sp_cost_model *cm) {
  sp_reshard_memo_free(cm->memo);
  cm->memo = NULL;
}

double sp_cost_collective(const sp_cost_model *cm, sp_collective_kind k, const sp_ft_axis *axes,
                          int naxes, double bytes, sp_collective *out) {
  int64_t n = 1;
  double alpha = 0, bw = 0;
  for (int i = 0; i < naxes; i++) {
    const sp_axis_cost *ac = &cm->axis[axes[i].axis];
    n *= sp_ft_axis_size(cm->mesh, axes[i]);
    if (ac->alpha > alpha) alpha = ac->alpha;
    if (i == 0 || ac->bandwidth < bw) bw = ac->bandwidth;
  }
  double s = sp_collective_seconds(k, n, alpha, bw, bytes);
  if (out) {   /* (not zeroed whole: the search prices often; axes past naxes are unused) */
    out->kind = k;
    out->naxes = naxes < SP_MAX_MESH_AXES_CLUSTER ? naxes : SP_MAX_MESH_AXES_CLUSTER;
    for (int i = 0; i < out->naxes; i++) out->axes[i] = axes[i];
    out->n = n;
    out->bytes = bytes;
    out->seconds = s;
  }
  return s;
}

double sp_cost_compute(const sp_cost_model *cm, double flops, int64_t devices, const char *dtype) {
  if (flops <= 0) return 0.0;
  double peak = sp_cluster_device_flops(cm->cluster, cm->device0, dtype ? dtype : "f32");
  if (peak <= 0) return 0.0;
  return flops / (double)(devices > 0 ? devices : 1) / peak;
}

double sp_cost_tensor_bytes(const sp_type *type) {
  if (!type || !sp_type_is_static_tensor(type)) return 0.0;
  int bits = sp_type_elem_bits(type);
  /* XLA keeps a boolean (i1, its pred) in a whole byte, in memory and on the wire: a mask
   * gathered as pred[...] moves one byte per element (found by the JAX corpus: Llama's
   * attention masks, 8x their bit count). Wider types use their width. */
  double bytes_per = bits <= 0 ? 4.0 : bits < 8 ? 1.0 : bits / 8.0;
  return (double)sp_type_num_elements(type) * bytes_per;
}

/* sp_cost_tensor_bytes of the tensor last priced, kept in the model: edges price one tensor
 * for many pairs of layouts in a row. */
static double model_bytes(const sp_cost_model *cm, const sp_type *type) {
  if (type && type == cm->bytes_type) return cm->bytes;
  sp_cost_model *w = (sp_cost_model *)cm;   /* a cache in a model otherwise read-only here */
  w->bytes = sp_cost_tensor_bytes(type);
  w->bytes_type = type;
  return w->bytes;
}

double sp_cost_local_bytes(const sp_cost_model *cm, const sp_type *type, const sp_layout *l) {
  return model_bytes(cm, type) / (double)sp_layout_shards(l, cm->mesh);
}

/* ------------------------------------------------------------------ collective shapes */

static int shape_kind(const char *op_name, sp_collective_kind *k) {
  static const struct { const char *name; sp_collective_kind kind; } names[] = {
      {"sdy.all_gather", SP_COLL_ALL_GATHER},       {"sdy.reduce_scatter", SP_COLL_REDUCE_SCATTER},
      {"sdy.all_reduce", SP_COLL_ALL_REDUCE},       {"sdy.all_to_all", SP_COLL_ALL_TO_ALL},
      {"sdy.all_slice", SP_COLL_ALL_SLICE},         {"sdy.collective_permute", SP_COLL_COLLECTIVE_PERMUTE}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(op_name, names[i].name) == 0) {
      *k = names[i].kind;
      return SP_OK;
    }
  return SP_EINVAL;
}

static int push_axis(const sp_mesh *mesh, const sp_axis_ref *r, int dim, sp_reshard_shape *out,
                     sp_err *err) {
  if (out->naxes == SP_MAX_MESH_AXES_CLUSTER)
    return sp_err_set(err, SP_EINVAL, "more than %d axes in one collective",
                      SP_MAX_MESH_AXES_CLUSTER);
  if (sp_ft_axis_from_ref(mesh, r, &out->axes[out->naxes]))
    return sp_err_set(err, SP_EINVAL, "axis \"%s\" is not in the mesh", r->name);
  out->dim[out->naxes++] = (int8_t)dim;
  return SP_OK;
}

/* The axes of a collective_permute: every mesh axis some part of which is not at the same
 * place (dimension, position, part) in both layouts, in mesh order. */
static void permute_axes(const sp_mesh *mesh, const sp_layout *x, const sp_layout *y,
                         sp_reshard_shape *out) {
  for (int a = 0; a < mesh->naxes && out->naxes < SP_MAX_MESH_AXES_CLUSTER; a++) {
    bool moved = false;
    for (int w = 0; w < 2 && !moved; w++) {
      const sp_layout *p = w ? y : x, *q = w ? x : y;
      for (int d = 0; d < p->rank && !moved; d++)
        for (int i = p->start[d]; i < p->start[d + 1] && !moved; i++) {
          if (p->axes[i].axis != a) continue;
          int k = i - p->start[d];
          moved = k >= sp_layout_dim_naxes(q, d) ||
                  !sp_ft_axis_equal(q->axes[q->start[d] + k], p->axes[i]);
        }
    }
    if (moved) out->axes[out->naxes++] = sp_ft_axis_make(mesh, a, 0, 0);
  }
}

int sp_collective_shape(sp_arena *scratch, const sp_mesh *mesh, const char *op_name,
                        const sp_attr *axes, const sp_sharding *before, const sp_sharding *after,
                        int rank, sp_reshard_shape *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  if (shape_kind(op_name, &out->kind))
    return sp_err_set(err, SP_EINVAL, "'%s' is not a collective the cost model prices", op_name);
  sp_arena *a = scratch ? scratch : sp_arena_new(0);
  if (!a) return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_layout *lb, *la;
  int rc = sp_layout_from_sharding(a, before, rank, mesh, &lb, err);
  if (!rc) rc = sp_layout_from_sharding(a, after, rank, mesh, &la, err);
  if (rc) goto done;
  out->shards_before = sp_layout_shards(lb, mesh);
  out->shards_after = sp_layout_shards(la, mesh);
  if (out->kind == SP_COLL_COLLECTIVE_PERMUTE) {
    permute_axes(mesh, lb, la, out);
  } else if (axes && axes->kind == SP_ATTR_AXES) {
    for (int i = 0; !rc && i < axes->u.axes.n; i++) rc = push_axis(mesh, &axes->u.axes.v[i], -1, out, err);
  } else if (axes && axes->kind == SP_ATTR_DIM_AXES) {
    for (int d = 0; !rc && d < axes->u.dim_axes.n; d++)
      for (int i = 0; !rc && i < axes->u.dim_axes.v[d].naxes; i++)
        rc = push_axis(mesh, &axes->u.dim_axes.v[d].axes[i], d, out, err);
  } else if (axes && axes->kind == SP_ATTR_ALL_TO_ALL) {
    for (int p = 0; !rc && p < axes->u.all_to_all.n; p++)
      for (int i = 0; !rc && i < axes->u.all_to_all.v[p].naxes; i++)
        rc = push_axis(mesh, &axes->u.all_to_all.v[p].axes[i], -1, out, err);
  } else {
    rc = sp_err_set(err, SP_EINVAL, "%s without its axes", op_name);
  }
done:
  if (!scratch) sp_arena_free(a);
  return rc;
}

/* B of a collective (see the top comment of cost_model.h) from a device's bytes around it. */
static double group_bytes(sp_collective_kind k, int64_t n, double before, double after) {
  switch (k) {
    case SP_COLL_ALL_GATHER: return after;
    case SP_COLL_ALL_TO_ALL: return before * (double)n;
    case SP_COLL_ALL_SLICE: return 0.0;   /* nothing moves */
    case SP_COLL_REDUCE_SCATTER:
    case SP_COLL_ALL_REDUCE:
    case SP_COLL_COLLECTIVE_PERMUTE: return before;
  }
  return before;
}

/* sp_cost_shape for a tensor of `bytes`. */
static double price_shape(const sp_cost_model *cm, double bytes, const sp_reshard_shape *sh,
                          sp_collective *out) {
  int64_t n = 1;
  for (int i = 0; i < sh->naxes; i++) n *= sp_ft_axis_size(cm->mesh, sh->axes[i]);
  double b = group_bytes(sh->kind, n, bytes / (double)sh->shards_before,
                         bytes / (double)sh->shards_after);
  return sp_cost_collective(cm, sh->kind, sh->axes, sh->naxes, b, out);
}

double sp_cost_shape(const sp_cost_model *cm, const sp_type *type, const sp_reshard_shape *sh,
                     sp_collective *out) {
  return price_shape(cm, model_bytes(cm, type), sh, out);
}

int sp_cost_collective_op(const sp_cost_model *cm, const sp_op *op, sp_collective *out,
                          sp_err *err) {
  static const char *const attr_names[] = {"gathering_axes", "slicing_axes", "params",
                                           "reduction_axes", "reduce_scatter_axes"};
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value)
    return sp_err_set(err, SP_EINVAL, "%s: not a collective of one tensor", op->name);
  const sp_attr *axes = NULL;
  for (size_t i = 0; !axes && i < sizeof attr_names / sizeof attr_names[0]; i++)
    axes = sp_op_attr(op, attr_names[i]);
  const sp_type *t = op->results[0].type;
  int rank = t && t->kind == SP_TYPE_TENSOR ? t->rank : 0;
  sp_reshard_shape sh;
  int rc = sp_collective_shape(NULL, cm->mesh, op->name, axes, op->operands[0].value->sharding,
                               op->results[0].sharding, rank, &sh, err);
  if (rc) return rc;
  sp_cost_shape(cm, t, &sh, out);
  return SP_OK;
}

/* ------------------------------------------------------------------ resharding */

/* The all_reduce of the whole mesh axes in `mask` (mesh order) on a tensor sharded `from`. */
static sp_reshard_shape all_reduce_shape(const sp_cost_model *cm, uint32_t mask,
                                         const sp_layout *from) {
  sp_reshard_shape ar;
  memset(&ar, 0, sizeof ar);
  ar.kind = SP_COLL_ALL_REDUCE;
  ar.shards_before = ar.shards_after = sp_layout_shards(from, cm->mesh);
  for (int a = 0; a < cm->mesh->naxes && a < 32 && ar.naxes < SP_MAX_MESH_AXES_CLUSTER; a++)
    if ((mask >> a) & 1u) {
      ar.dim[ar.naxes] = -1;
      ar.axes[ar.naxes++] = sp_ft_axis_make(cm->mesh, a, 0, 0);
    }
  return ar;
}

/* The canonicalizer's fusion of all_reduce `ar` with the all_slice `sl` right after it
 * (propagation/canonicalize.c): when the leading axes of each sliced dim that are reduced make
 * up exactly the reduced axes, they become one reduce_scatter (`*rs`) and the rest of the slice
 * an all_slice after it (`*rest`, naxes 0 when nothing is left). False when they do not fuse.
 * The export fuses them whatever the runtime; one without reduce-scatter runs the fused op as
 * the all_reduce it is made of (the same tensor reduced, B alike), then each device keeps its
 * part: `*rs` is then that all_reduce, over the reduce_scatter's axes. */
static bool fuse_reduce_scatter(const sp_cost_model *cm, const sp_reshard_shape *ar,
                                const sp_reshard_shape *sl, sp_reshard_shape *rs,
                                sp_reshard_shape *rest) {
  memset(rs, 0, sizeof *rs);
  memset(rest, 0, sizeof *rest);
  rs->kind = cm->no_reduce_scatter ? SP_COLL_ALL_REDUCE : SP_COLL_REDUCE_SCATTER;
  rest->kind = SP_COLL_ALL_SLICE;
  int64_t redprod = 1;
  for (int i = 0; i < sl->naxes; i++) {
    bool leading = true;   /* every axis before it in its dim is reduced */
    for (int k = 0; k < i && leading; k++) {
      if (sl->dim[k] != sl->dim[i]) continue;
      bool reduced = false;
      for (int r = 0; r < ar->naxes; r++) reduced |= sp_ft_axis_equal(sl->axes[k], ar->axes[r]);
      leading = reduced;
    }
    bool reduced = false;
    for (int r = 0; r < ar->naxes; r++) reduced |= sp_ft_axis_equal(sl->axes[i], ar->axes[r]);
    sp_reshard_shape *to = leading && reduced ? rs : rest;
    to->dim[to->naxes] = sl->dim[i];
    to->axes[to->naxes++] = sl->axes[i];
    if (to == rs) redprod *= sp_ft_axis_size(cm->mesh, sl->axes[i]);
  }
  if (rs->naxes != ar->naxes) return false;
  rs->shards_before = sl->shards_before;
  rs->shards_after = sl->shards_before * redprod;
  rest->shards_before = rs->shards_after;
  rest->shards_after = sl->shards_after;
  return true;
}

/* Appends shape `sh` priced for a tensor of `bytes` to `out`. */
static void add_step(const sp_cost_model *cm, double bytes, const sp_reshard_shape *sh,
                     sp_reshard *out) {
  out->seconds += price_shape(cm, bytes, sh,
                              out->nsteps < SP_RESHARD_MAX_STEPS ? &out->steps[out->nsteps++] : NULL);
}

/* `from` -> `to` (dims only) after the all-reduce `ar` (NULL: none), as the export lowers
 * and the canonicalizer fuses it. */
static int reshard_after_reduce(const sp_cost_model *cm, const sp_type *type,
                                const sp_reshard_shape *ar, const sp_layout *from,
                                const sp_layout *to, sp_reshard *out) {
  double bytes = model_bytes(cm, type);
  sp_layout_dims_hash(from);   /* (cached in the layouts, then in their copies) */
  sp_layout_dims_hash(to);
  sp_layout fd = *from, td = *to;   /* the dims alone */
  fd.unreduced = td.unreduced = 0;
  const sp_reshard_shape *steps = NULL;
  int n = 0, k = 0;
  const int64_t *shape = type && sp_type_is_static_tensor(type) && type->rank == from->rank
                             ? type->dims : NULL;
  int rc = sp_layout_equal(&fd, &td) ? SP_OK
                                     : sp_reshard_memo_get(cm->memo, &fd, &td, shape, &steps, &n);
  if (rc == SP_EUNSUPPORTED) {   /* not recorded as the export lowers it: never planned */
    out->seconds = SP_COST_NEVER;
    return SP_OK;
  }
  if (rc) return rc;
  if (ar) {
    sp_reshard_shape rs, rest;
    if (rc == SP_OK && n > 0 && steps[0].kind == SP_COLL_ALL_SLICE &&
        fuse_reduce_scatter(cm, ar, &steps[0], &rs, &rest)) {
      add_step(cm, bytes, &rs, out);
      if (rest.naxes) add_step(cm, bytes, &rest, out);
      k = 1;
    } else {
      add_step(cm, bytes, ar, out);
    }
  }
  for (; k < n; k++) add_step(cm, bytes, &steps[k], out);
  return SP_OK;
}

int sp_cost_reshard(const sp_cost_model *cm, const sp_type *type, const sp_layout *from,
                    const sp_layout *to, sp_reshard *out) {
  out->nsteps = 0;
  out->seconds = 0;
  if (from->rank != to->rank) return SP_EINVAL;
  if (sp_layout_equal(from, to)) return SP_OK;
  if (to->unreduced & ~from->unreduced) {
    out->seconds = SP_COST_NEVER;
    return SP_OK;
  }
  /* Partial sums no longer kept: all-reduced first, in the source's dims. */
  uint32_t reduce = from->unreduced & ~to->unreduced;
  if (!reduce) return reshard_after_reduce(cm, type, NULL, from, to, out);
  sp_reshard_shape ar = all_reduce_shape(cm, reduce, from);
  return reshard_after_reduce(cm, type, &ar, from, to, out);
}

int sp_cost_reshard_reducing(const sp_cost_model *cm, const sp_type *type, const sp_ft_axis *red,
                             int nred, const sp_layout *from, const sp_layout *to,
                             sp_reshard *out) {
  out->nsteps = 0;
  out->seconds = 0;
  if (from->rank != to->rank || nred > SP_MAX_MESH_AXES_CLUSTER) return SP_EINVAL;
  if (!nred) return reshard_after_reduce(cm, type, NULL, from, to, out);
  sp_reshard_shape ar;
  memset(&ar, 0, sizeof ar);
  ar.kind = SP_COLL_ALL_REDUCE;
  ar.shards_before = ar.shards_after = sp_layout_shards(from, cm->mesh);
  for (int i = 0; i < nred; i++) {
    ar.dim[i] = -1;
    ar.axes[ar.naxes++] = red[i];
  }
  return reshard_after_reduce(cm, type, &ar, from, to, out);
}
