/*
 * mesh_positions.c - mesh positions and dim shards (see mesh_positions.h).
 */
#include "export/mesh_positions.h"

#include <stdbool.h>

/* The axis index and the (stride, size) of the digit `r` names; false for unknown axes. */
static bool digit_of(const sp_mesh *mesh, const sp_axis_ref *r, int *axis, int64_t *stride,
                     int64_t *size) {
  int a = sp_mesh_axis_index(mesh, r->name);
  if (a < 0) return false;
  int64_t n = mesh->axes[a].size, pre = r->size ? r->pre : 1;
  *size = r->size ? r->size : n;
  *stride = n / (pre * *size);
  *axis = a;
  return *stride > 0;
}

int64_t sp_mesh_positions(const sp_mesh *mesh) {
  int64_t d = 1;
  for (int a = 0; a < mesh->naxes; a++) d *= mesh->axes[a].size;
  return d;
}

void sp_mesh_position_coords(const sp_mesh *mesh, int64_t pos, int64_t *coord) {
  for (int a = mesh->naxes - 1; a >= 0; a--) {
    coord[a] = pos % mesh->axes[a].size;
    pos /= mesh->axes[a].size;
  }
}

int64_t sp_mesh_position_of(const sp_mesh *mesh, const int64_t *coord) {
  int64_t pos = 0;
  for (int a = 0; a < mesh->naxes; a++) pos = pos * mesh->axes[a].size + coord[a];
  return pos;
}

int64_t sp_mesh_position_device(const sp_mesh *mesh, int64_t pos) {
  return mesh->ndevice_ids ? mesh->device_ids[pos] : pos;
}

int64_t sp_dim_shard_count(const sp_mesh *mesh, const sp_sharding *s, int d) {
  int64_t k = 1;
  for (int i = 0; s && d < s->rank && i < s->dims[d].naxes; i++) {
    int a;
    int64_t stride, size;
    if (digit_of(mesh, &s->dims[d].axes[i], &a, &stride, &size)) k *= size;
  }
  return k;
}

int64_t sp_dim_shard_index(const sp_mesh *mesh, const sp_sharding *s, int d, const int64_t *coord) {
  int64_t k = 0;
  for (int i = 0; s && d < s->rank && i < s->dims[d].naxes; i++) {
    int a;
    int64_t stride, size;
    if (digit_of(mesh, &s->dims[d].axes[i], &a, &stride, &size))
      k = k * size + (coord[a] / stride) % size;
  }
  return k;
}

void sp_dim_set_shard_index(const sp_mesh *mesh, const sp_sharding *s, int d, int64_t *coord, int64_t k) {
  for (int i = (s && d < s->rank) ? s->dims[d].naxes - 1 : -1; i >= 0; i--) {
    int a;
    int64_t stride, size;
    if (!digit_of(mesh, &s->dims[d].axes[i], &a, &stride, &size)) continue;
    int64_t old = (coord[a] / stride) % size, want = k % size;
    coord[a] += (want - old) * stride;
    k /= size;
  }
}

void sp_mesh_coords_flip(const sp_mesh *mesh, const sp_axis_ref *r, int64_t *coord) {
  int a;
  int64_t stride, size;
  if (!digit_of(mesh, r, &a, &stride, &size)) return;
  int64_t digit = (coord[a] / stride) % size;
  coord[a] += (size - 1 - 2 * digit) * stride;
}
