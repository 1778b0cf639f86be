/*
 * mesh.c - device meshes and axis references (see mesh.h).
 */
#include "ir/mesh.h"

#include <string.h>

bool sp_mesh_is_empty(const sp_mesh *m) { return m->naxes == 0 && m->ndevice_ids == 0; }

bool sp_mesh_is_maximal(const sp_mesh *m) { return m->naxes == 0 && m->ndevice_ids == 1; }

int sp_mesh_axis_index(const sp_mesh *m, const char *name) {
  for (int i = 0; i < m->naxes; i++)
    if (strcmp(m->axes[i].name, name) == 0) return i;
  return -1;
}

int64_t sp_mesh_axis_size(const sp_mesh *m, const char *name) {
  int i = sp_mesh_axis_index(m, name);
  return i < 0 ? 0 : m->axes[i].size;
}

int64_t sp_mesh_num_devices(const sp_mesh *m) {
  int64_t n = 1;
  for (int i = 0; i < m->naxes; i++) n *= m->axes[i].size;
  return n;
}

bool sp_mesh_equal(const sp_mesh *a, const sp_mesh *b) {
  if (a->naxes != b->naxes || a->ndevice_ids != b->ndevice_ids) return false;
  for (int i = 0; i < a->naxes; i++)
    if (a->axes[i].size != b->axes[i].size || strcmp(a->axes[i].name, b->axes[i].name) != 0)
      return false;
  for (int i = 0; i < a->ndevice_ids; i++)
    if (a->device_ids[i] != b->device_ids[i]) return false;
  return true;
}

bool sp_axis_ref_equal(const sp_axis_ref *a, const sp_axis_ref *b) {
  return a->pre == b->pre && a->size == b->size && strcmp(a->name, b->name) == 0;
}
