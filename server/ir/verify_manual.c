/*
 * verify_manual.c - the verifier's checks of sdy.manual_computation (see verify.h): one
 * in_sharding per operand and one out_sharding per result, all on one mesh; manual axes come
 * first in every dim and are not bound by an enclosing computation; the body's block arguments
 * and results have the local (per-device) types the shardings imply; the body is isolated from
 * above. While the body is walked its manual axes are pushed on the verifier's stack.
 *
 * Memory: the manual-axis stack grows by malloc (sp_grow) in the verifier and is freed with it
 * (verifier_free in verify.c); nothing is allocated from the module's arena.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "ir/op_attrs.h"
#include "ir/sp_limits.h"
#include "ir/verify.h"
#include "ir/verify_int.h"

/* ------------------------------------------------------------------ manual computations */

static void type_text(const sp_type *t, char *buf, size_t cap) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (t)
    sp_type_print(&sb, t);
  else
    sp_strbuf_puts(&sb, "<no type>");
  snprintf(buf, cap, "%s", sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb) : "<type>");
  sp_strbuf_free(&sb);
}

static bool axes_name_in(const sp_axis_ref *axes, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(axes[i].name, name) == 0) return true;
  return false;
}

typedef struct manual_view {
  const sp_axis_ref *axes;  /* the op's manual_axes */
  int n;
} manual_view;

/* Checks that in every dim of `s` the manual axes come first and divide the dim, and writes the
 * local (per-device along the manual axes) type of `global` into `*local` (dims in `buf`). */
static int local_type(verifier *v, const sp_sharding *s, const sp_type *global,
                      const manual_view *mv, sp_type *local, int64_t *buf, sp_loc loc,
                      const where *w) {
  char a[SP_ERR_MSG_MAX / 4], b[SP_ERR_MSG_MAX / 4];
  *local = global ? *global : (sp_type){0};
  const sp_mesh *mesh = s->inline_mesh ? s->inline_mesh : sp__verify_lookup_mesh(v, s->mesh_name);
  if (!global || global->kind != SP_TYPE_TENSOR || global->rank != s->rank || !mesh ||
      sp_mesh_is_maximal(mesh))
    return SP_OK; /* nothing is split: the local type is the global one */
  if (s->rank > SP_MAX_RANK)
    return sp__verify_fail_code(v, SP_ELIMIT, loc, w, "rank %d is above the limit of %d", s->rank,
                     SP_MAX_RANK);
  for (int d = 0; d < s->rank; d++) {
    const sp_dim_sharding *dim = &s->dims[d];
    const sp_axis_ref *free_axis = NULL;
    int64_t manual_size = 1;
    for (int k = 0; k < dim->naxes; k++) {
      const sp_axis_ref *r = &dim->axes[k];
      if (!axes_name_in(mv->axes, mv->n, r->name)) {
        if (!free_axis) free_axis = r;
        continue;
      }
      if (free_axis) {
        where wo = {w->op, NULL, -1, NULL, false, NULL};
        return sp__verify_fail(v, loc, &wo, "%s sharding at index %d must have all manual axes come before "
                    "free axes in its dimension sharding at index %d. Saw manual axis %s after "
                    "free axis %s", w->role, w->index, d, sp__verify_ref_text(r, a, sizeof a),
                    sp__verify_ref_text(free_axis, b, sizeof b));
      }
      manual_size *= sp_axis_size(r, sp_mesh_axis_size(mesh, r->name));
    }
    int64_t size = global->dims[d];
    if (size != SP_DYN_DIM && size % manual_size != 0)
      return sp__verify_fail(v, loc, w, "dimension size %lld is not divisible by the manual axes size %lld",
                  (long long)size, (long long)manual_size);
    buf[d] = size == SP_DYN_DIM ? size : size / manual_size;
  }
  local->dims = buf;
  return SP_OK;
}

static int check_manual_axes(verifier *v, const sp_op *op, const manual_view *mv,
                             const sp_mesh *mesh, const where *w) {
  if (mv->n > SP_MAX_MESH_AXES)
    return sp__verify_fail_code(v, SP_ELIMIT, op->loc, w, "%d manual axes, more than the limit of %d",
                     mv->n, SP_MAX_MESH_AXES);
  for (int i = 0; i < mv->n; i++) {
    const sp_axis_ref *r = &mv->axes[i];
    if (!r->name) return sp__verify_fail_code(v, SP_EINTERNAL, op->loc, w, "manual axis without a name");
    if (sp_axis_is_sub(r))
      return sp__verify_fail(v, op->loc, w, "manual axis \"%s\" must be a full axis", r->name);
    if (axes_name_in(mv->axes, i, r->name))
      return sp__verify_fail(v, op->loc, w, "duplicate manual axis: \"%s\"", r->name);
    if (sp__verify_is_manual_bound(v, r->name)) return sp__verify_fail_manual_bound(v, op->loc, w, r->name);
    if (mesh && sp_mesh_axis_index(mesh, r->name) < 0)
      return sp__verify_fail(v, op->loc, w, "unknown manual axis: \"%s\"", r->name);
  }
  return SP_OK;
}

/* The one mesh of all in/out shardings (empty meshes aside); NULL if there is none. */
static int common_mesh(verifier *v, const sp_op *op, sp_sharding *const *in, int nin,
                       const sp_mesh **out, const where *w) {
  *out = NULL;
  for (int i = 0; i < nin + op->nresults; i++) {
    const sp_sharding *s = i < nin ? in[i] : op->results[i - nin].sharding;
    const sp_mesh *mesh = s->inline_mesh ? s->inline_mesh : sp__verify_lookup_mesh(v, s->mesh_name);
    if (!mesh || sp_mesh_is_empty(mesh)) continue;
    if (!*out)
      *out = mesh;
    else if (*out != mesh && !sp_mesh_equal(*out, mesh))
      return sp__verify_fail(v, op->loc, w, "all in and out shardings must be bound to the same mesh or an "
                  "empty mesh.");
  }
  return SP_OK;
}

static int check_local_types(verifier *v, const sp_op *op, sp_sharding *const *in,
                             const manual_view *mv, const where *w) {
  char a[SP_ERR_MSG_MAX / 3], b[SP_ERR_MSG_MAX / 3];
  int64_t buf[SP_MAX_RANK];
  sp_type local;
  const sp_block *body = op->regions[0].blocks[0];
  for (int i = 0; i < op->noperands; i++) {
    where wi = {op->name, "operand", i, NULL, op->noperands == 1, NULL};
    const sp_type *global = sp__verify_value_type(op->operands[i].value);
    int rc = local_type(v, in[i], global, mv, &local, buf, op->loc, &wi);
    if (rc) return rc;
    const sp_value *arg = body->args[i];
    if (global && !sp_type_equal(&local, arg->type)) {
      type_text(arg->type, a, sizeof a);
      type_text(&local, b, sizeof b);
      return sp__verify_fail(v, op->loc, w, "operand shape, corresponding sharding, and region operand "
                  "shape at index %d must match. Expected local shape '%s', actual local shape "
                  "'%s'", i, b, a);
    }
  }
  const sp_op *ret = body->last;
  if (!ret || ret->kind != SP_OP_SDY_RETURN) return SP_OK;
  if (ret->noperands != op->nresults)
    return sp__verify_fail(v, op->loc, w, "number of op results and region results must match. Op has %d "
                "op results and %d region results", op->nresults, ret->noperands);
  for (int i = 0; i < op->nresults; i++) {
    where wi = {op->name, "result", i, NULL, op->nresults == 1, NULL};
    const sp_type *global = op->results[i].type;
    int rc = local_type(v, op->results[i].sharding, global, mv, &local, buf, op->loc, &wi);
    if (rc) return rc;
    const sp_type *got = sp__verify_value_type(ret->operands[i].value);
    if (global && got && !sp_type_equal(&local, got)) {
      type_text(got, a, sizeof a);
      type_text(&local, b, sizeof b);
      return sp__verify_fail(v, op->loc, w, "result shape, corresponding sharding, and region result shape "
                  "at index %d must match. Expected local shape '%s', actual local shape '%s'", i,
                  b, a);
    }
  }
  return SP_OK;
}

static int push_manual(verifier *v, const manual_view *mv, sp_loc loc) {
  /* Two arrays of one capacity: each grows from the same count to the same size. */
  int cap = v->capmanual, cap_locs = v->capmanual, last = v->nmanual + mv->n - 1;
  if (sp_grow((void **)&v->manual, &cap, last, sizeof *v->manual) ||
      sp_grow((void **)&v->manual_locs, &cap_locs, last, sizeof *v->manual_locs))
    return sp_err_set(v->err, SP_ENOMEM, "out of memory verifying manual axes");
  v->capmanual = cap;
  for (int i = 0; i < mv->n; i++) {
    v->manual_locs[v->nmanual] = loc;
    v->manual[v->nmanual++] = mv->axes[i].name;
  }
  return SP_OK;
}


/* in_shardings of manual and named computations: one per operand, each fits its operand. */
int sp__verify_check_in_shardings(verifier *v, const sp_op *op, sp_sharding *const **in_out) {
  where w = {op->name, NULL, -1, NULL, false, NULL};
  sp_attr *at = sp_op_attr(op, "in_shardings");
  int nin = at && at->kind == SP_ATTR_SHARDINGS ? at->u.shardings.n : 0;
  if (nin != op->noperands)
    return sp__verify_fail(v, op->loc, &w, "operand shardings don't match number of values: %d shardings "
                "vs %d values", nin, op->noperands);
  sp_sharding *const *in = nin ? at->u.shardings.v : NULL;
  for (int i = 0; i < nin; i++) {
    where wi = {op->name, "operand", i, NULL, nin == 1, NULL};
    if (!in[i]) return sp__verify_fail_code(v, SP_EINTERNAL, op->loc, &wi, "missing in_sharding");
    int rc = sp__verify_check_sharding(v, in[i], sp__verify_value_type(op->operands[i].value), op->loc, &wi);
    if (rc) return rc;
  }
  *in_out = in;
  return SP_OK;
}

/* Whether `val` is defined inside `region_owner` (by an op nested in it or as an argument of
 * one of its blocks). */
static bool defined_inside(const sp_value *val, const sp_op *region_owner) {
  const sp_op *at = val->def ? sp_op_parent(val->def) : sp_block_parent_op(val->block);
  for (; at; at = sp_op_parent(at))
    if (at == region_owner) return true;
  return false;
}

typedef struct isolation_scan {
  const sp_op *owner;
  const sp_op *offender;
} isolation_scan;

static bool find_free_use(sp_op *op, void *ctx) {
  isolation_scan *s = ctx;
  for (int i = 0; i < op->noperands && !s->offender; i++)
    if (op->operands[i].value && !defined_inside(op->operands[i].value, s->owner)) s->offender = op;
  return !s->offender;
}

/* A manual computation's body is isolated from above: it only sees its own arguments. */
static int check_isolated(verifier *v, const sp_op *op) {
  isolation_scan s = {op, NULL};
  for (int r = 0; r < op->nregions && !s.offender; r++)
    for (int b = 0; b < op->regions[r].nblocks && !s.offender; b++)
      for (sp_op *x = op->regions[r].blocks[b]->first; x && !s.offender; x = x->next)
        sp_op_walk(x, find_free_use, &s);
  if (!s.offender) return SP_OK;
  sp__verify_note(v, op->loc, "required by region isolation constraints");
  where w = {s.offender->name, NULL, -1, NULL, false, NULL};
  return sp__verify_fail(v, s.offender->loc, &w, "using value defined outside the region");
}

int sp__verify_manual_computation(verifier *v, const sp_op *op) {
  where w = {op->name, NULL, -1, NULL, false, NULL};
  sp_sharding *const *in = NULL;
  int rc = sp__verify_check_in_shardings(v, op, &in);
  if (rc) return rc;
  for (int i = 0; i < op->nresults; i++)
    if (!op->results[i].sharding)
      return sp__verify_fail(v, op->loc, &w, "number of out_shardings doesn't match number of results: "
                  "result %d has none", i);
  /* Results (out_shardings) are checked like any op's results, outside the manual scope. */
  for (int i = 0; i < op->nresults; i++) {
    where wi = {op->name, "result", i, NULL, op->nresults == 1, NULL};
    const sp_value *r = &op->results[i];
    if ((rc = sp__verify_check_sharding(v, r->sharding, r->type, sp__verify_value_loc(r, op->loc), &wi))) return rc;
  }
  sp_attr *ma = sp_op_attr(op, "manual_axes");
  manual_view mv = {NULL, 0};
  if (ma && ma->kind == SP_ATTR_AXES) mv = (manual_view){ma->u.axes.v, ma->u.axes.n};
  const sp_mesh *mesh = NULL;
  if (mv.n && (rc = common_mesh(v, op, in, op->noperands, &mesh, &w))) return rc;
  if ((rc = check_manual_axes(v, op, &mv, mesh, &w))) return rc;
  if (op->nregions != 1 || op->regions[0].nblocks != 1)
    return sp__verify_fail(v, op->loc, &w, "expects one region with one block");
  if ((rc = check_isolated(v, op))) return rc;
  const sp_block *body = op->regions[0].blocks[0];
  if (body->nargs != op->noperands)
    return sp__verify_fail(v, op->loc, &w, "number of op operands and region operands must match. Op has "
                "%d op operands and %d region operands", op->noperands, body->nargs);
  if ((rc = check_local_types(v, op, in, &mv, &w))) return rc;
  int saved = v->nmanual;
  if ((rc = push_manual(v, &mv, op->loc))) return rc;
  rc = sp__verify_regions(v, op);
  v->nmanual = saved;
  return rc;
}
