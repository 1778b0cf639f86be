/*
 * verify_collectives.c - the checks of the sdy collective ops (see verify.h).
 *
 * The result's out_sharding is a tensor sharding like any other and is checked by the module
 * verifier (mesh, rank, axes); here is what relates it to the operand's sharding, as Shardy's
 * collective verifiers do. An operand without a sharding counts as fully replicated on the
 * result's mesh. Axis lists are compared after merging neighbouring sub-axes that form one
 * part ("x":(1)4 then "x":(4)2 is "x" on an axis of size 8), so that any spelling of the same
 * split compares equal.
 *
 *   all_gather   out[d] ++ gathering_axes[d] == in[d]
 *   all_slice    in[d] ++ slicing_axes[d] == out[d]
 *   reduce_scatter  in[d] ++ reduce_scatter_axes[d] == out[d]
 *   sharded_to_unreduced  out[d] ++ axes[d] == in[d]
 *   all_to_all   per param: out[src] ++ axes == in[src], in[tgt] ++ axes == out[tgt];
 *                other dims unchanged
 *   all_reduce   dims unchanged; reduction axes do not shard the result
 *   collective_permute  per dim the same number of shards
 *
 * Memory: scratch arrays on the stack (bounded by sp_limits.h); nothing is allocated.
 */
#include <stdio.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/sp_limits.h"
#include "ir/verify.h"

#define MAX_REFS (SP_MAX_MESH_AXES * 8)

typedef struct axis_list {
  int n;
  sp_axis_ref v[MAX_REFS];
} axis_list;

static int64_t axis_size(const sp_mesh *mesh, const char *name) {
  for (int i = 0; mesh && i < mesh->naxes; i++)
    if (strcmp(mesh->axes[i].name, name) == 0) return mesh->axes[i].size;
  return 0;
}

/* Appends `n` refs to `l`, merging each into the last one when they form one part. */
static bool append(axis_list *l, const sp_axis_ref *refs, int n, const sp_mesh *mesh) {
  for (int i = 0; i < n; i++) {
    if (l->n > 0 && sp_axis_can_merge(&l->v[l->n - 1], &refs[i])) {
      l->v[l->n - 1] = sp_axis_merge(&l->v[l->n - 1], &refs[i], axis_size(mesh, refs[i].name));
      continue;
    }
    if (l->n == MAX_REFS) return false;
    l->v[l->n++] = refs[i];
  }
  return true;
}

static bool same_list(const axis_list *a, const axis_list *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i].name, b->v[i].name) != 0 || a->v[i].pre != b->v[i].pre ||
        a->v[i].size != b->v[i].size)
      return false;
  return true;
}

static const sp_dim_sharding *dim_of(const sp_sharding *s, int d) {
  static const sp_dim_sharding empty = {0, NULL, true, SP_NO_PRIORITY};
  return s && d < s->rank ? &s->dims[d] : &empty;
}

/* Whether a[d] ++ extra equals b[d] (merged). */
static bool dim_plus_equals(const sp_dim_sharding *a, const sp_axis_ref *extra, int nextra,
                            const sp_dim_sharding *b, const sp_mesh *mesh) {
  axis_list x = {0}, y = {0};
  if (!append(&x, a->axes, a->naxes, mesh) || !append(&x, extra, nextra, mesh) ||
      !append(&y, b->axes, b->naxes, mesh))
    return false;
  return same_list(&x, &y);
}

static int64_t shards(const sp_dim_sharding *d, const sp_mesh *mesh) {
  int64_t k = 1;
  for (int i = 0; i < d->naxes; i++)
    k *= sp_axis_is_sub(&d->axes[i]) ? d->axes[i].size : axis_size(mesh, d->axes[i].name);
  return k;
}

static bool same_axes_shape(const sp_mesh *a, const sp_mesh *b) {
  if (!a || !b || a->naxes != b->naxes) return false;
  for (int i = 0; i < a->naxes; i++)
    if (strcmp(a->axes[i].name, b->axes[i].name) != 0 || a->axes[i].size != b->axes[i].size)
      return false;
  return true;
}

static int check_dim_axes(const sp_module *m, const sp_op *op, const char *attr,
                          const sp_sharding *in, const sp_sharding *out, const sp_mesh *mesh,
                          bool out_plus_axes_is_in, sp_err *err) {
  sp_attr *at = sp_op_attr(op, attr);
  if (!at || at->kind != SP_ATTR_DIM_AXES) return sp__verify_op_fail(m, op, err, "requires attribute '%s'", attr);
  if (at->u.dim_axes.n != out->rank)
    return sp__verify_op_fail(m, op, err, "%s has %d dimensions but the tensor has rank %d", attr,
                at->u.dim_axes.n, out->rank);
  for (int d = 0; d < out->rank; d++) {
    const sp_dim_sharding *axes = &at->u.dim_axes.v[d];
    bool ok = out_plus_axes_is_in
                  ? dim_plus_equals(dim_of(out, d), axes->axes, axes->naxes, dim_of(in, d), mesh)
                  : dim_plus_equals(dim_of(in, d), axes->axes, axes->naxes, dim_of(out, d), mesh);
    if (ok) continue;
    if (out_plus_axes_is_in)
      return sp__verify_op_fail(m, op, err, "%s of dimension %d must be the minor axes the operand's sharding "
                  "has beyond the result's", attr, d);
    return sp__verify_op_fail(m, op, err, "result sharding of dimension %d must be the operand's with the %s "
                "appended", d, attr);
  }
  return SP_OK;
}

static int check_unchanged_dims(const sp_module *m, const sp_op *op, const sp_sharding *in,
                                const sp_sharding *out, const sp_mesh *mesh, const bool *skip,
                                sp_err *err) {
  for (int d = 0; d < out->rank; d++) {
    if (skip && skip[d]) continue;
    if (!dim_plus_equals(dim_of(in, d), NULL, 0, dim_of(out, d), mesh))
      return sp__verify_op_fail(m, op, err, "dimension %d of the operand and result shardings must match", d);
  }
  return SP_OK;
}

static int check_all_to_all(const sp_module *m, const sp_op *op, const sp_sharding *in,
                            const sp_sharding *out, const sp_mesh *mesh, sp_err *err) {
  sp_attr *at = sp_op_attr(op, "params");
  if (!at || at->kind != SP_ATTR_ALL_TO_ALL) return sp__verify_op_fail(m, op, err, "requires attribute 'params'");
  if (at->u.all_to_all.n == 0) return sp__verify_op_fail(m, op, err, "params must not be empty");
  bool used[SP_MAX_RANK] = {false};
  for (int i = 0; i < at->u.all_to_all.n; i++) {
    const sp_all_to_all_param *q = &at->u.all_to_all.v[i];
    if (q->src_dim < 0 || q->src_dim >= out->rank)
      return sp__verify_op_fail(m, op, err, "source dimension %lld is not in [0, %d)", (long long)q->src_dim,
                  out->rank);
    if (q->tgt_dim < 0 || q->tgt_dim >= out->rank)
      return sp__verify_op_fail(m, op, err, "target dimension %lld is not in [0, %d)", (long long)q->tgt_dim,
                  out->rank);
    if (q->src_dim == q->tgt_dim)
      return sp__verify_op_fail(m, op, err, "source and target dimensions must differ: %lld", (long long)q->src_dim);
    if (used[q->src_dim] || used[q->tgt_dim])
      return sp__verify_op_fail(m, op, err, "dimension %lld is used by more than one param",
                  (long long)(used[q->src_dim] ? q->src_dim : q->tgt_dim));
    if (q->naxes == 0) return sp__verify_op_fail(m, op, err, "param %d has no axes", i);
    used[q->src_dim] = used[q->tgt_dim] = true;
    if (!dim_plus_equals(dim_of(out, (int)q->src_dim), q->axes, q->naxes,
                         dim_of(in, (int)q->src_dim), mesh))
      return sp__verify_op_fail(m, op, err, "axes of param %d must be the minor axes of source dimension %lld "
                  "that the result drops", i, (long long)q->src_dim);
    if (!dim_plus_equals(dim_of(in, (int)q->tgt_dim), q->axes, q->naxes,
                         dim_of(out, (int)q->tgt_dim), mesh))
      return sp__verify_op_fail(m, op, err, "axes of param %d must be appended to target dimension %lld", i,
                  (long long)q->tgt_dim);
  }
  return check_unchanged_dims(m, op, in, out, mesh, used, err);
}

static int check_all_reduce(const sp_module *m, const sp_op *op, const sp_sharding *in,
                            const sp_sharding *out, const sp_mesh *mesh, sp_err *err) {
  sp_attr *at = sp_op_attr(op, "reduction_axes");
  if (!at || at->kind != SP_ATTR_AXES)
    return sp__verify_op_fail(m, op, err, "requires attribute 'reduction_axes'");
  for (int i = 0; i < at->u.axes.n; i++)
    for (int d = 0; d < out->rank; d++)
      for (int k = 0; k < out->dims[d].naxes; k++)
        if (sp_axis_overlaps(&at->u.axes.v[i], &out->dims[d].axes[k],
                             axis_size(mesh, at->u.axes.v[i].name)))
          return sp__verify_op_fail(m, op, err, "reduction axis \"%s\" overlaps a dimension sharding of the "
                      "result", at->u.axes.v[i].name);
  return check_unchanged_dims(m, op, in, out, mesh, NULL, err);
}

static int check_permute(const sp_module *m, const sp_op *op, const sp_sharding *in,
                         const sp_sharding *out, const sp_mesh *in_mesh, const sp_mesh *mesh,
                         sp_err *err) {
  for (int d = 0; d < out->rank; d++)
    if (shards(dim_of(in, d), in_mesh) != shards(dim_of(out, d), mesh))
      return sp__verify_op_fail(m, op, err, "dimension %d of the operand and result must be split into the "
                  "same number of shards: %lld != %lld", d,
                  (long long)shards(dim_of(in, d), in_mesh), (long long)shards(dim_of(out, d), mesh));
  return SP_OK;
}

int sp_verify_collective(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value)
    return sp__verify_op_fail(m, op, err, "requires one operand and one result");
  const sp_sharding *out = op->results[0].sharding;
  const sp_sharding *in = op->operands[0].value->sharding;
  if (!out) return sp__verify_op_fail(m, op, err, "requires an out_sharding");
  if (!sp_type_equal(op->operands[0].value->type, op->results[0].type))
    return sp__verify_op_fail(m, op, err, "requires the same type for the operand and the result");
  const sp_mesh *mesh = sp_module_sharding_mesh(m, out);
  if (!mesh) return SP_OK; /* the sharding check reports the unknown mesh */
  const sp_mesh *in_mesh = in ? sp_module_sharding_mesh(m, in) : mesh;
  if (in && in->rank != out->rank) return SP_OK; /* reported on the operand's holder */
  if (op->kind == SP_OP_SDY_COLLECTIVE_PERMUTE) {
    if (in && !same_axes_shape(in_mesh, mesh))
      return sp__verify_op_fail(m, op, err, "operand and result meshes must have the same axes");
    return check_permute(m, op, in, out, in_mesh, mesh, err);
  }
  if (in && in_mesh != mesh && !same_axes_shape(in_mesh, mesh))
    return sp__verify_op_fail(m, op, err, "operand and result shardings must be on the same mesh");
  switch (op->kind) {
    case SP_OP_SDY_ALL_GATHER:
      return check_dim_axes(m, op, "gathering_axes", in, out, mesh, true, err);
    case SP_OP_SDY_SHARDED_TO_UNREDUCED:
      return check_dim_axes(m, op, "axes", in, out, mesh, true, err);
    case SP_OP_SDY_ALL_SLICE:
      return check_dim_axes(m, op, "slicing_axes", in, out, mesh, false, err);
    case SP_OP_SDY_REDUCE_SCATTER:
      return check_dim_axes(m, op, "reduce_scatter_axes", in, out, mesh, false, err);
    case SP_OP_SDY_ALL_TO_ALL:
      return check_all_to_all(m, op, in, out, mesh, err);
    case SP_OP_SDY_ALL_REDUCE:
      return check_all_reduce(m, op, in, out, mesh, err);
    case SP_OP_SDY_REPLICATED_TO_UNREDUCED:
      return check_unchanged_dims(m, op, in, out, mesh, NULL, err);
    default:
      return SP_OK;
  }
}
