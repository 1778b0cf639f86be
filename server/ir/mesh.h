/*
 * mesh.h - device meshes and references to their axes.
 *
 * A mesh is an ordered list of named axes with sizes (size 1 is legal), plus optional device
 * ids. Special cases: the empty mesh (no axes, no ids: a placeholder) and the maximal mesh (no
 * axes, exactly one id: the op runs on that one device). When the ids are given and equal
 * 0..N-1 in order they are dropped (they mean the default order).
 *
 * An axis reference names a whole axis or a sub-axis "x":(pre)size: view axis x of size n as
 * reshaped to [pre, size, n/(pre*size)] and take the middle part. A full axis has pre == 0 and
 * size == 0 in the struct (use sp_axis_pre()/sp_axis_size() to read the effective values).
 *
 * Memory: names point into arena- or mesh-owned strings; nothing here frees.
 */
#ifndef SP_MESH_H
#define SP_MESH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sp_mesh_axis {
  const char *name;
  int64_t size;        /* >= 1 */
} sp_mesh_axis;

typedef struct sp_mesh {
  int naxes;
  sp_mesh_axis *axes;  /* major to minor */
  int ndevice_ids;     /* 0 = default order 0..N-1 */
  int64_t *device_ids;
} sp_mesh;

typedef struct sp_axis_ref {
  const char *name;
  int64_t pre;         /* 0 for a full axis, else >= 1 */
  int64_t size;        /* 0 for a full axis, else > 1 */
} sp_axis_ref;

/* Mesh queries. */
bool sp_mesh_is_empty(const sp_mesh *m);      /* no axes, no device ids */
bool sp_mesh_is_maximal(const sp_mesh *m);    /* no axes, exactly one device id */
int  sp_mesh_axis_index(const sp_mesh *m, const char *name); /* -1 if absent */
int64_t sp_mesh_axis_size(const sp_mesh *m, const char *name); /* 0 if absent */
int64_t sp_mesh_num_devices(const sp_mesh *m);  /* product of sizes (1 if none) */
/* Same axes (names and sizes, in order) and same device ids. */
bool sp_mesh_equal(const sp_mesh *a, const sp_mesh *b);

/* Axis references. `axis_size` is the size of the named mesh axis. */
static inline bool sp_axis_is_sub(const sp_axis_ref *r) { return r->size != 0; }
static inline int64_t sp_axis_pre(const sp_axis_ref *r) { return r->size ? r->pre : 1; }
static inline int64_t sp_axis_size(const sp_axis_ref *r, int64_t axis_size) {
  return r->size ? r->size : axis_size;
}
/* pre * size: the "next" pre-size after this part. */
static inline int64_t sp_axis_next(const sp_axis_ref *r, int64_t axis_size) {
  return r->size ? r->pre * r->size : axis_size;
}
bool sp_axis_ref_equal(const sp_axis_ref *a, const sp_axis_ref *b);

#endif /* SP_MESH_H */
