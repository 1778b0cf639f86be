/*
 * cost_model.c - compute, collective, resharding and memory costs (see cost_model.h).
 *
 * Everything here is arithmetic on layouts and the per-axis link costs read once by
 * sp_cost_model_init; nothing allocates except the layout constructors.
 */
#include "search/cost_model.h"

#include <string.h>

/* ------------------------------------------------------------------ collectives */

const char *sp_collective_name(sp_collective_kind k) {
  switch (k) {
    case SP_COLL_ALL_GATHER: return "all-gather";
    case SP_COLL_REDUCE_SCATTER: return "reduce-scatter";
    case SP_COLL_ALL_REDUCE: return "all-reduce";
    case SP_COLL_ALL_TO_ALL: return "all-to-all";
  }
  return "?";
}

double sp_collective_seconds(sp_collective_kind k, int64_t n, double alpha, double bandwidth,
                             double bytes) {
  if (n <= 1 || bandwidth <= 0) return 0.0;
  double dn = (double)n, frac;
  switch (k) {
    case SP_COLL_ALL_GATHER:
    case SP_COLL_REDUCE_SCATTER: frac = (dn - 1) / dn; break;
    case SP_COLL_ALL_REDUCE: frac = 2 * (dn - 1) / dn; break;
    case SP_COLL_ALL_TO_ALL: frac = (dn - 1) / (dn * dn); break;
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
  return s;
}

bool sp_layout_equal(const sp_layout *x, const sp_layout *y) {
  if (x == y) return true;
  if (x->rank != y->rank) return false;
  for (int d = 0; d <= x->rank; d++)
    if (x->start[d] != y->start[d]) return false;
  for (int i = 0; i < x->start[x->rank]; i++)
    if (!sp_ft_axis_equal(x->axes[i], y->axes[i])) return false;
  return true;
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
  return SP_OK;
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
  if (out) {
    memset(out, 0, sizeof *out);
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
  double bytes_per = bits > 0 ? bits / 8.0 : 4.0;
  return (double)sp_type_num_elements(type) * bytes_per;
}

double sp_cost_local_bytes(const sp_cost_model *cm, const sp_type *type, const sp_layout *l) {
  return sp_cost_tensor_bytes(type) / (double)sp_layout_shards(l, cm->mesh);
}

/* ------------------------------------------------------------------ resharding */

/* Whether some axis of `l` overlaps mesh axis part `x` (same axis, overlapping range). */
static bool layout_overlaps(const sp_mesh *m, const sp_layout *l, sp_ft_axis x) {
  for (int i = 0; i < l->start[l->rank]; i++) {
    sp_ft_axis y = l->axes[i];
    if (y.axis != x.axis) continue;
    if (sp_ft_axis_contains(m, y, x) || sp_ft_axis_contains(m, x, y)) return true;
    int64_t px = sp_ft_axis_pre(x), nx = px * sp_ft_axis_size(m, x);
    int64_t py = sp_ft_axis_pre(y), ny = py * sp_ft_axis_size(m, y);
    if (px < ny && py < nx) return true;
  }
  return false;
}

/* The dim of `l` holding exactly `x`, or -1. */
static int layout_dim_of(const sp_layout *l, sp_ft_axis x) {
  for (int d = 0; d < l->rank; d++)
    for (int i = l->start[d]; i < l->start[d + 1]; i++)
      if (sp_ft_axis_equal(l->axes[i], x)) return d;
  return -1;
}

/* Length of the common prefix of dim d in the two layouts. */
static int common_prefix(const sp_layout *x, const sp_layout *y, int d) {
  int nx = sp_layout_dim_naxes(x, d), ny = sp_layout_dim_naxes(y, d), k = 0;
  while (k < nx && k < ny && sp_ft_axis_equal(x->axes[x->start[d] + k], y->axes[y->start[d] + k]))
    k++;
  return k;
}

int sp_cost_reshard(const sp_cost_model *cm, const sp_type *type, const sp_layout *from,
                    const sp_layout *to, sp_reshard *out) {
  memset(out, 0, sizeof *out);
  if (from->rank != to->rank) return SP_EINVAL;
  const sp_mesh *m = cm->mesh;
  double local = sp_cost_local_bytes(cm, type, from);

  /* Slices of axes the source does not hold at all come first: they only shrink the data. */
  for (int i = 0; i < to->start[to->rank]; i++)
    if (!layout_overlaps(m, from, to->axes[i])) local /= (double)sp_ft_axis_size(m, to->axes[i]);

  sp_ft_axis moved[SP_MAX_MESH_AXES_CLUSTER], gathered[SP_MAX_MESH_AXES_CLUSTER];
  int nmoved = 0, ngathered = 0;
  int64_t nmove = 1, ngather = 1;
  for (int d = 0; d < from->rank; d++) {
    for (int i = from->start[d] + common_prefix(from, to, d); i < from->start[d + 1]; i++) {
      sp_ft_axis x = from->axes[i];
      int td = layout_dim_of(to, x);
      if (td >= 0 && td != d && nmoved < SP_MAX_MESH_AXES_CLUSTER) {
        moved[nmoved++] = x;
        nmove *= sp_ft_axis_size(m, x);
      } else if (ngathered < SP_MAX_MESH_AXES_CLUSTER) {
        gathered[ngathered++] = x;
        ngather *= sp_ft_axis_size(m, x);
      }
    }
  }
  if (nmoved) {
    sp_collective *c = &out->steps[out->nsteps++];
    out->seconds += sp_cost_collective(cm, SP_COLL_ALL_TO_ALL, moved, nmoved,
                                       local * (double)nmove, c);
  }
  if (ngathered) {
    local *= (double)ngather;
    sp_collective *c = &out->steps[out->nsteps++];
    out->seconds += sp_cost_collective(cm, SP_COLL_ALL_GATHER, gathered, ngathered, local, c);
  }
  return SP_OK;
}
