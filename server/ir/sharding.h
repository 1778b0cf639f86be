/*
 * sharding.h - tensor shardings (Shardy's TensorShardingAttr).
 *
 * A tensor sharding names a mesh (by symbol, or inline) and gives, per tensor dimension, an
 * ordered major-to-minor list of axis references. A dimension is closed ({"a"}: the list is
 * final) or open ({"a", ?}: propagation may append minor axes) and may carry a priority
 * (p0 is the most important; SP_NO_PRIORITY when absent). `replicated` axes may never shard
 * this tensor; `unreduced` axes mean the tensor holds partial results over them (reduction
 * kind "sum" unless `unreduced_kind` says "max"/"min").
 *
 * Non-shaped values (tokens) and rank-0 tensors have rank 0. A value without a sharding is
 * represented by a NULL `sp_sharding *` and behaves as fully open and unsharded.
 *
 * Memory: shardings live in an arena; the helpers here allocate from the arena passed in and
 * never free. A sharding may be shared by several values only if nobody mutates it: code that
 * changes a sharding first takes a copy (sp_sharding_copy).
 */
#ifndef SP_SHARDING_H
#define SP_SHARDING_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/mesh.h"
#include "ir/strbuf.h"

#define SP_NO_PRIORITY (-1)

typedef struct sp_dim_sharding {
  int naxes;
  sp_axis_ref *axes;   /* major to minor */
  bool closed;
  int priority;        /* SP_NO_PRIORITY, or >= 0 */
} sp_dim_sharding;

typedef struct sp_sharding {
  const char *mesh_name;   /* symbol name without '@'; NULL when `inline_mesh` is set */
  sp_mesh *inline_mesh;    /* `mesh<[...]>` written inline; NULL when referring by name */
  int rank;
  sp_dim_sharding *dims;
  int nreplicated;
  sp_axis_ref *replicated; /* sorted in mesh order */
  int nunreduced;
  sp_axis_ref *unreduced;  /* sorted in mesh order */
  const char *unreduced_kind; /* NULL for sum, else "max" or "min" */
} sp_sharding;

/* A new sharding of `rank` dims, every dim open (closed == false) or closed, no axes. */
sp_sharding *sp_sharding_new(sp_arena *a, const char *mesh_name, int rank, bool closed);
/* A deep copy (axis arrays duplicated; names and inline mesh shared). NULL in, NULL out. */
sp_sharding *sp_sharding_copy(sp_arena *a, const sp_sharding *s);
/* Structural equality (mesh reference, dims with closedness and priority, replicated,
 * unreduced). Two NULLs are equal. */
bool sp_sharding_equal(const sp_sharding *x, const sp_sharding *y);
/* True if no dim has an axis (replicated/unreduced ignored). NULL counts as empty. */
bool sp_sharding_is_unsharded(const sp_sharding *s);
/* True if every dim is open and without axes, and nothing is replicated/unreduced. */
bool sp_sharding_is_fully_open_empty(const sp_sharding *s);

/* Text forms, appended to `sb`:
 *   sp_sharding_print:      <@mesh, [{"a", ?}, {}], replicated={"b"}>   (the inner form)
 *   sp_dim_sharding_print:  {"a", "b":(2)2, ?}p1
 *   sp_axis_ref_print:      "b":(2)2
 * `sp_sharding_print` prints inline meshes as mesh<["x"=2]>. */
void sp_sharding_print(sp_strbuf *sb, const sp_sharding *s);
void sp_dim_sharding_print(sp_strbuf *sb, const sp_dim_sharding *d);
void sp_axis_ref_print(sp_strbuf *sb, const sp_axis_ref *r);
/* The axes v[0..n) joined by ", " ("a", "b":(2)2), no brackets. */
void sp_axis_refs_print(sp_strbuf *sb, const sp_axis_ref *v, int n);
void sp_mesh_print(sp_strbuf *sb, const sp_mesh *m);
/* Per-dim axis lists of the sdy collectives: [{"x"}, {}] (dims' closedness and priority are
 * not printed). */
void sp_dim_axes_print(sp_strbuf *sb, const sp_dim_sharding *v, int n);   /* <["x"=2, "y"=4], device_ids=[...]> */

#endif /* SP_SHARDING_H */
