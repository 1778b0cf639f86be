/*
 * verify.c - the IR verifier (see verify.h).
 *
 * One pass over the module in pre-order. A `verifier` carries what the pass needs besides the
 * op at hand: the table of the module's meshes (symbol name -> mesh, built once, so a lookup is
 * O(1)), the stack of axis names that enclosing manual computations are manual on, and scratch
 * space for the axis references of one sharding. Messages are formatted only when something is
 * wrong: a `where` names the op and the value (role and index) lazily.
 *
 * Checks of one sharding, in order: its mesh exists (or the inline mesh is valid); a maximal
 * mesh carries no dims; the rank fits the type; per dim the priority; per list (each dim,
 * replicated, unreduced) known names, valid sub-axes, no mergeable neighbours, and mesh order
 * for replicated/unreduced; then, over all lists together, each part of each axis used at most
 * once (refs sorted by axis and pre-size: overlaps show up between neighbours); last, no axis
 * that an enclosing manual computation binds.
 */
#include "ir/verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/diag.h"
#include "ir/grow.h"
#include "ir/op_attrs.h"
#include "ir/sp_limits.h"
#include "ir/verify_int.h"

/* ------------------------------------------------------------------ messages */

/* "FILE:LINE:COL: " then the op as `w` names it (MLIR's "'NAME' op " through sp_op_message, or
 * a lead of its own), the symbol, the value's role, and the message. */
static int failv(verifier *v, int code, sp_loc loc, const where *w, const char *fmt,
                 va_list ap) {
  char body[SP_ERR_MSG_MAX], pos[64] = "", whole[SP_ERR_MSG_MAX];
  size_t n = 0;
  if (w && w->sym) n += (size_t)snprintf(body + n, sizeof body - n, "@%s: ", w->sym);
  if (w && n < sizeof body && w->role) {
    if (w->index >= 0 && !w->bare)
      n += (size_t)snprintf(body + n, sizeof body - n, "%s %d - ", w->role, w->index);
    else
      n += (size_t)snprintf(body + n, sizeof body - n, "%s - ", w->role);
  }
  if (n < sizeof body) vsnprintf(body + n, sizeof body - n, fmt, ap);
  const char *text = body;
  if (w && w->lead) {
    snprintf(whole, sizeof whole, "%s%s", w->lead, body);
    text = whole;
  } else if (w && w->op) {
    text = sp_op_message(whole, sizeof whole, w->op, "%s", body);
  }
  if (loc.line > 0) snprintf(pos, sizeof pos, ":%d:%d", loc.line, loc.col);
  return sp_err_set(v->err, code, "%s%s: %s", v->file, pos, text);
}

int sp__verify_fail(verifier *v, sp_loc loc, const where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = failv(v, SP_EINVAL, loc, w, fmt, ap);
  va_end(ap);
  return rc;
}

int sp__verify_fail_code(verifier *v, int code, sp_loc loc, const where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = failv(v, code, loc, w, fmt, ap);
  va_end(ap);
  return rc;
}

/* A note attached to the error being reported (MLIR's attachNote), where the module's
 * diagnostics go. */
void sp__verify_note(const verifier *v, sp_loc loc, const char *msg) {
  if (v->m && v->m->diags) sp_diag_emit(v->m->diags, SP_DIAG_NOTE, loc, "%s", msg);
}

/* "x" or "x":(2)4 into buf. */
const char *sp__verify_ref_text(const sp_axis_ref *r, char *buf, size_t cap) {
  if (sp_axis_is_sub(r))
    snprintf(buf, cap, "\"%s\":(%lld)%lld", r->name, (long long)r->pre, (long long)r->size);
  else
    snprintf(buf, cap, "\"%s\"", r->name);
  return buf;
}

sp_loc sp__verify_value_loc(const sp_value *val, sp_loc fallback) {
  return val && val->loc.line > 0 ? val->loc : fallback;
}

/* ------------------------------------------------------------------ setup */

static void verifier_init(verifier *v, const sp_module *m, sp_err *err) {
  memset(v, 0, sizeof *v);
  v->m = m;
  v->file = m && m->filename ? m->filename : "<input>";
  v->err = err;
}

static void verifier_free(verifier *v) {
  free(v->meshes);
  free(v->manual);
  free(v->manual_locs);
  free(v->refs);
}

static size_t name_hash(const char *s) {
  size_t h = 1469598103934665603ULL; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static mesh_slot *mesh_slot_for(const verifier *v, const char *name) {
  size_t mask = v->mesh_cap - 1;
  for (size_t i = name_hash(name) & mask;; i = (i + 1) & mask)
    if (!v->meshes[i].name || strcmp(v->meshes[i].name, name) == 0) return &v->meshes[i];
}

const sp_mesh *sp__verify_lookup_mesh(const verifier *v, const char *name) {
  if (v->mesh_cap == 0 || !name) return NULL;
  return mesh_slot_for(v, name)->mesh;
}

static int verify_mesh(verifier *v, const sp_mesh *mesh, sp_loc loc, const where *w);

/* Builds the symbol table of the module's meshes and verifies each mesh once. With `check`
 * false (single-sharding checks) the meshes are only registered. */
static int build_mesh_table(verifier *v, bool check) {
  if (!v->m || !v->m->op || v->m->op->nregions == 0) return SP_OK;
  size_t count = 0;
  for (const sp_op *op = sp_module_body(v->m)->first; op; op = op->next)
    if (op->kind == SP_OP_SDY_MESH) count++;
  if (count == 0) return SP_OK;
  size_t cap = 4;
  while (cap < 2 * count) cap *= 2;
  v->meshes = calloc(cap, sizeof *v->meshes);
  if (!v->meshes) return sp_err_set(v->err, SP_ENOMEM, "out of memory verifying meshes");
  v->mesh_cap = cap;
  for (const sp_op *op = sp_module_body(v->m)->first; op; op = op->next) {
    if (op->kind != SP_OP_SDY_MESH) continue;
    const char *name = sp_op_get_str(op, "sym_name");
    sp_attr *at = sp_op_attr(op, "mesh");
    /* Shardy verifies a mesh while it parses the sdy.mesh op. */
    where w = {op->name, NULL, -1, NULL, false, "custom op 'sdy.mesh' "};
    if (!name) {
      if (check) return sp__verify_fail(v, op->loc, &w, "requires a symbol name");
      continue;
    }
    if (!at || at->kind != SP_ATTR_MESH) {
      if (check) return sp__verify_fail(v, op->loc, &w, "requires a mesh attribute");
      continue;
    }
    mesh_slot *slot = mesh_slot_for(v, name);
    if (slot->name) {
      if (check) return sp__verify_fail(v, op->loc, NULL, "redefinition of symbol named '%s'", name);
      continue;
    }
    if (check) {
      int rc = verify_mesh(v, at->u.mesh, op->loc, &w);
      if (rc) return rc;
    }
    slot->name = name;
    slot->mesh = at->u.mesh;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ meshes */

static int verify_device_ids(verifier *v, const sp_mesh *mesh, int64_t ndevices, sp_loc loc,
                             const where *w) {
  if (mesh->ndevice_ids == 0) return SP_OK; /* the default order */
  for (int i = 0; i < mesh->ndevice_ids; i++)
    if (mesh->device_ids[i] < 0)
      return sp__verify_fail(v, loc, w, "device id must be non-negative, got: %lld",
                  (long long)mesh->device_ids[i]);
  if (mesh->naxes == 0) {
    if (mesh->ndevice_ids > 1)
      return sp__verify_fail(v, loc, w, "axes is empty and device_ids has more than one element");
    return SP_OK; /* the maximal mesh */
  }
  if (mesh->ndevice_ids != ndevices)
    return sp__verify_fail(v, loc, w,
                "total product of axis sizes must match total number of device ids, got: "
                "%lld != %d", (long long)ndevices, mesh->ndevice_ids);
  /* A permutation of 0..N-1: every id in range and none twice. */
  unsigned char *seen = calloc((size_t)ndevices, 1);
  if (!seen) return sp_err_set(v->err, SP_ENOMEM, "out of memory verifying device ids");
  bool iota = true;
  for (int i = 0; i < mesh->ndevice_ids && iota; i++) {
    int64_t id = mesh->device_ids[i];
    iota = id < ndevices && !seen[id]++;
  }
  free(seen);
  if (iota) return SP_OK;
  /* Shardy prints the sorted ids. */
  int64_t *sorted = malloc((size_t)mesh->ndevice_ids * sizeof *sorted);
  if (!sorted) return sp_err_set(v->err, SP_ENOMEM, "out of memory verifying device ids");
  memcpy(sorted, mesh->device_ids, (size_t)mesh->ndevice_ids * sizeof *sorted);
  for (int i = 1; i < mesh->ndevice_ids; i++)
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int64_t t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  char list[SP_ERR_MSG_MAX / 2];
  size_t n = 0;
  list[0] = '\0';
  for (int i = 0; i < mesh->ndevice_ids && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld", i ? ", " : "", (long long)sorted[i]);
  free(sorted);
  return sp__verify_fail(v, loc, w, "sorted device ids must be iota(product(axes)), got: %s", list);
}

static int verify_mesh(verifier *v, const sp_mesh *mesh, sp_loc loc, const where *w) {
  if (mesh->naxes < 0 || mesh->ndevice_ids < 0 || (mesh->naxes && !mesh->axes) ||
      (mesh->ndevice_ids && !mesh->device_ids))
    return sp__verify_fail_code(v, SP_EINTERNAL, loc, w, "malformed mesh");
  if (mesh->naxes > SP_MAX_MESH_AXES)
    return sp__verify_fail_code(v, SP_ELIMIT, loc, w, "mesh has %d axes, more than the limit of %d",
                     mesh->naxes, SP_MAX_MESH_AXES);
  int64_t ndevices = 1;
  for (int i = 0; i < mesh->naxes; i++) {
    const sp_mesh_axis *ax = &mesh->axes[i];
    if (!ax->name) return sp__verify_fail_code(v, SP_EINTERNAL, loc, w, "mesh axis %d has no name", i);
    /* Shardy checks an axis while parsing the mesh's axis list: the sdy.mesh op then also
     * reports that list as unparsable. */
    if (ax->size < 1)
      return sp__verify_fail(v, loc, w, "axis size must be at least 1, got: %lld%s", (long long)ax->size,
                  w && w->lead ? "\ncustom op 'sdy.mesh' failed to parse Sdy_Mesh parameter "
                                 "'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`"
                               : "");
    /* Axes are few (<= SP_MAX_MESH_AXES): pairwise is cheaper than a table. */
    for (int j = 0; j < i; j++)
      if (strcmp(mesh->axes[j].name, ax->name) == 0)
        return sp__verify_fail(v, loc, w, "duplicate axis name: \"%s\"", ax->name);
    if (ax->size > SP_MAX_DEVICES / ndevices)
      return sp__verify_fail_code(v, SP_ELIMIT, loc, w, "mesh has more than %d devices (SP_MAX_DEVICES)",
                       SP_MAX_DEVICES);
    ndevices *= ax->size;
  }
  return verify_device_ids(v, mesh, ndevices, loc, w);
}

int sp_verify_mesh(const sp_module *m, const sp_mesh *mesh, sp_loc loc, sp_err *err) {
  verifier v;
  verifier_init(&v, m, err);
  int rc = verify_mesh(&v, mesh, loc, NULL);
  verifier_free(&v);
  return rc;
}

/* ------------------------------------------------------------------ shardings */

static int reserve_refs(verifier *v, int n) {
  if (sp_grow((void **)&v->refs, &v->caprefs, n - 1, sizeof *v->refs))
    return sp_err_set(v->err, SP_ENOMEM, "out of memory verifying a sharding");
  return SP_OK;
}

/* Shardy's message for an invalid sub-axis `r` of an axis of size n. */
static int fail_sub_axis(verifier *v, sp_loc loc, const where *w, const sp_axis_ref *r,
                         int64_t n) {
  char a[SP_ERR_MSG_MAX / 4];
  sp__verify_ref_text(r, a, sizeof a);
  if (r->pre < 1) return sp__verify_fail(v, loc, w, "sub-axis pre-size must be at least 1: %s", a);
  if (r->size <= 1) return sp__verify_fail(v, loc, w, "sub-axis sizes must be greater than 1: %s", a);
  int64_t next;
  if (__builtin_mul_overflow(r->pre, r->size, &next))   /* the product is named as one */
    return sp__verify_fail(v, loc, w, "sub-axis next pre-size %lld*%lld doesn't divide the size of the full "
                "axis %lld: %s", (long long)r->pre, (long long)r->size, (long long)n, a);
  if (r->pre > n / r->size || n % next != 0)
    return sp__verify_fail(v, loc, w, "sub-axis next pre-size %lld doesn't divide the size of the full "
                "axis %lld: %s", (long long)next, (long long)n, a);
  return sp__verify_fail(v, loc, w, "sub-axis size is equal to the full axis size: %s", a);
}

/* Checks one list (dim `dim`'s axes, or replicated/unreduced named `list_name` with dim -1) on
 * its own and appends its refs to v->refs[*nrefs...]. `ordered` asks for mesh order. */
static int check_axis_list(verifier *v, const sp_mesh *mesh, const sp_axis_ref *axes, int naxes,
                           const char *list_name, int dim, bool ordered, int *nrefs, sp_loc loc,
                           const where *w) {
  char a[SP_ERR_MSG_MAX / 4], b[SP_ERR_MSG_MAX / 4];
  (void)dim;
  if (naxes > 0 && !axes) return sp__verify_fail_code(v, SP_EINTERNAL, loc, w, "malformed axis list");
  int rc = reserve_refs(v, *nrefs + naxes);
  if (rc) return rc;
  for (int i = 0; i < naxes; i++) {
    const sp_axis_ref *r = &axes[i];
    if (!r->name) return sp__verify_fail_code(v, SP_EINTERNAL, loc, w, "axis ref without a name");
    int idx = sp_mesh_axis_index(mesh, r->name);
    if (idx < 0) return sp__verify_fail(v, loc, w, "unknown axis name: \"%s\"", r->name);
    int64_t n = mesh->axes[idx].size;
    /* As Shardy: neighbours that form one part are reported before the parts themselves. */
    if (i > 0 && sp_axis_can_merge(&axes[i - 1], r))
      return sp__verify_fail(v, loc, w, "two consecutive sub-axes can be merged: %s, %s",
                  sp__verify_ref_text(&axes[i - 1], a, sizeof a), sp__verify_ref_text(r, b, sizeof b));
    if (!sp_axis_is_valid(r, n)) return fail_sub_axis(v, loc, w, r, n);
    if (ordered && i > 0 && sp_axis_compare(&axes[i - 1], r, mesh) > 0)
      return sp__verify_fail(v, loc, w, "%s axes are not ordered w.r.t. mesh: %s comes before %s",
                  list_name, sp__verify_ref_text(&axes[i - 1], a, sizeof a), sp__verify_ref_text(r, b, sizeof b));
    ref_slot *s = &v->refs[(*nrefs)++];
    s->ref = *r;
    s->axis = idx;
    s->n = n;
    s->pre = sp_axis_pre(r);
    s->next = sp_axis_next(r, n);
  }
  return SP_OK;
}

static int compare_ref_slots(const void *x, const void *y) {
  const ref_slot *a = x, *b = y;
  if (a->axis != b->axis) return a->axis < b->axis ? -1 : 1;
  if (a->pre != b->pre) return a->pre < b->pre ? -1 : 1;
  if (a->next != b->next) return a->next < b->next ? -1 : 1;
  return 0;
}

/* Every part of every axis is used at most once across dims, replicated and unreduced. After
 * sorting by (axis, pre-size), two parts of one axis that overlap have overlapping neighbours
 * between them, so neighbours are all we compare. */
static int check_axis_uses(verifier *v, int nrefs, sp_loc loc, const where *w) {
  char a[SP_ERR_MSG_MAX / 4], b[SP_ERR_MSG_MAX / 4];
  if (nrefs < 2) return SP_OK;
  if (nrefs <= 16) { /* the usual case: a handful of refs, cheaper than qsort's set-up */
    for (int i = 1; i < nrefs; i++) {
      ref_slot t = v->refs[i];
      int j = i;
      for (; j > 0 && compare_ref_slots(&v->refs[j - 1], &t) > 0; j--) v->refs[j] = v->refs[j - 1];
      v->refs[j] = t;
    }
  } else {
    qsort(v->refs, (size_t)nrefs, sizeof *v->refs, compare_ref_slots);
  }
  for (int i = 0; i < nrefs;) {
    int j = i + 1;
    while (j < nrefs && v->refs[j].axis == v->refs[i].axis) j++;
    /* [i, j) is one axis. A full axis excludes every other use of it. */
    int full = -1, sub = -1;
    for (int k = i; k < j; k++) {
      if (sp_axis_is_sub(&v->refs[k].ref)) {
        if (sub < 0) sub = k;
      } else if (full >= 0) {
        return sp__verify_fail(v, loc, w, "duplicate axis ref: %s", sp__verify_ref_text(&v->refs[k].ref, a, sizeof a));
      } else {
        full = k;
      }
    }
    if (full >= 0 && sub >= 0)
      return sp__verify_fail(v, loc, w, "both sub-axis and full-axis are used for axis name: \"%s\"",
                  v->refs[full].ref.name);
    for (int k = i + 1; k < j && full < 0; k++) {
      const ref_slot *p = &v->refs[k - 1], *q = &v->refs[k];
      if (sp_axis_ref_equal(&p->ref, &q->ref))
        return sp__verify_fail(v, loc, w, "duplicate axis ref: %s", sp__verify_ref_text(&q->ref, a, sizeof a));
      if (sp_axis_overlaps(&p->ref, &q->ref, p->n))
        return sp__verify_fail(v, loc, w, "overlapping sub-axes: %s, %s",
                    sp__verify_ref_text(&p->ref, a, sizeof a), sp__verify_ref_text(&q->ref, b, sizeof b));
      if (!sp_axis_can_coexist(&p->ref, &q->ref, p->n))
        return sp__verify_fail(v, loc, w, "sub-axes %s and %s can't coexist",
                    sp__verify_ref_text(&p->ref, a, sizeof a), sp__verify_ref_text(&q->ref, b, sizeof b));
    }
    i = j;
  }
  return SP_OK;
}

bool sp__verify_is_manual_bound(const verifier *v, const char *name) {
  for (int i = 0; i < v->nmanual; i++)
    if (strcmp(v->manual[i], name) == 0) return true;
  return false;
}

/* Shardy's error for an axis an enclosing manual computation binds, with its note there. */
int sp__verify_fail_manual_bound(verifier *v, sp_loc loc, const where *w, const char *name) {
  for (int i = v->nmanual - 1; i >= 0; i--)
    if (strcmp(v->manual[i], name) == 0) {
      sp__verify_note(v, v->manual_locs[i], "parent bounding this axis as manual");
      break;
    }
  return sp__verify_fail(v, loc, w, "operates on axis \"%s\" which is already bound by a parent "
              "sdy.manual_computation op", name);
}

/* The rank a sharding must have for type `t`; -1 when not checked, -2 for unranked. */
static int check_type(verifier *v, const sp_sharding *s, const sp_type *t, sp_loc loc,
                      const where *w) {
  while (t && t->kind == SP_TYPE_TUPLE) {
    if (t->nelems != 1)
      return sp__verify_fail(v, loc, w, "ops can only have a sharding for a tuple of size 1");
    t = t->elems[0];
  }
  if (!t) return SP_OK;
  if (t->kind == SP_TYPE_TENSOR) {
    if (t->rank < 0) return sp__verify_fail(v, loc, w, "only ranked tensors can have a sharding");
    if (s->rank != t->rank)
      return sp__verify_fail(v, loc, w, "sharding doesn't match tensor rank: %d != %d", s->rank, t->rank);
    return SP_OK;
  }
  if (s->rank != 0 || s->nreplicated || s->nunreduced)
    return sp__verify_fail(v, loc, w, "non-shaped tensors can only have a sharding with rank 0 and no "
                "replicated or unreduced axes.");
  return SP_OK;
}

static int resolve_mesh(verifier *v, const sp_sharding *s, const sp_mesh **out, sp_loc loc,
                        const where *w) {
  if (s->inline_mesh) {
    if (s->inline_mesh != v->last_inline) {
      int rc = verify_mesh(v, s->inline_mesh, loc, w);
      if (rc) return rc;
      v->last_inline = s->inline_mesh;
    }
    *out = s->inline_mesh;
    return SP_OK;
  }
  if (!s->mesh_name) return sp__verify_fail(v, loc, w, "sharding names no mesh");
  *out = sp__verify_lookup_mesh(v, s->mesh_name);
  if (!*out) return sp__verify_fail(v, loc, w, "unknown mesh: @%s", s->mesh_name);
  return SP_OK;
}

int sp__verify_check_sharding(verifier *v, const sp_sharding *s, const sp_type *t, sp_loc loc,
                              const where *w) {
  const sp_mesh *mesh;
  int rc = resolve_mesh(v, s, &mesh, loc, w);
  if (rc) return rc;
  if (s->rank < 0 || (s->rank > 0 && !s->dims))
    return sp__verify_fail_code(v, SP_EINTERNAL, loc, w, "malformed sharding");
  if (sp_mesh_is_maximal(mesh)) {
    /* A maximal sharding puts the whole value on one device, whatever its shape. */
    if (s->rank != 0 || s->nreplicated || s->nunreduced)
      return sp__verify_fail(v, loc, w, "a maximal sharding can only have a sharding with rank 0 and no "
                  "replicated or unreduced axes");
    return SP_OK;
  }
  if ((rc = check_type(v, s, t, loc, w))) return rc;
  int nrefs = 0;
  for (int d = 0; d < s->rank; d++) {
    const sp_dim_sharding *dim = &s->dims[d];
    if (dim->priority < SP_NO_PRIORITY)
      return sp__verify_fail(v, loc, w, "dim %d has a negative priority: p%d", d, dim->priority);
    if (dim->closed && dim->naxes == 0 && dim->priority != SP_NO_PRIORITY)
      return sp__verify_fail(v, loc, w, "dim %d is empty and closed but has a priority", d);
    rc = check_axis_list(v, mesh, dim->axes, dim->naxes, NULL, d, false, &nrefs, loc, w);
    if (rc) return rc;
  }
  rc = check_axis_list(v, mesh, s->replicated, s->nreplicated, "replicated", -1, true, &nrefs,
                       loc, w);
  if (rc) return rc;
  rc = check_axis_list(v, mesh, s->unreduced, s->nunreduced, "unreduced", -1, true, &nrefs, loc,
                       w);
  if (rc) return rc;
  if (s->unreduced_kind && strcmp(s->unreduced_kind, "max") != 0 &&
      strcmp(s->unreduced_kind, "min") != 0)
    return sp__verify_fail(v, loc, w, "unknown unreduced reduction kind: %s", s->unreduced_kind);
  if ((rc = check_axis_uses(v, nrefs, loc, w))) return rc;
  for (int i = 0; i < nrefs && v->nmanual; i++)
    if (sp__verify_is_manual_bound(v, v->refs[i].ref.name))
      return sp__verify_fail_manual_bound(v, loc, w, v->refs[i].ref.name);
  return SP_OK;
}

int sp_verify_sharding(const sp_module *m, const sp_sharding *s, const sp_type *type, sp_loc loc,
                       sp_err *err) {
  verifier v;
  verifier_init(&v, m, err);
  int rc = build_mesh_table(&v, false);
  if (rc == SP_OK) rc = sp__verify_check_sharding(&v, s, type, loc, NULL);
  verifier_free(&v);
  return rc;
}

/* ------------------------------------------------------------------ sharding rules */

const sp_type *sp__verify_value_type(const sp_value *val) { return val ? val->type : NULL; }

static int check_rule_tensor(verifier *v, const sp_op *op, const sp_rule *rule,
                             const sp_rule_tensor *t, const sp_type *type, const char *role,
                             int index, int stamp_id, int *stamp, bool *used, const where *w) {
  char name[16];
  if (t->rank < 0 || (t->rank > 0 && !t->dims))
    return sp__verify_fail_code(v, SP_EINTERNAL, op->loc, w, "malformed sharding rule");
  if (type && type->kind == SP_TYPE_TENSOR && type->rank >= 0 && type->rank != t->rank)
    return sp__verify_fail(v, op->loc, w, "sharding rule: %s %d has %d dims in the rule but its type has "
                "rank %d", role, index, t->rank, type->rank);
  for (int d = 0; d < t->rank; d++) {
    const sp_rule_dim *dim = &t->dims[d];
    if (dim->nfactors < 1 || !dim->factors)
      return sp__verify_fail(v, op->loc, w, "sharding rule: dim %d of %s %d has no factors", d, role, index);
    for (int k = 0; k < dim->nfactors; k++) {
      int f = dim->factors[k];
      if (f < 0 || f >= rule->nfactors)
        return sp__verify_fail(v, op->loc, w, "sharding rule: factor index %d is out of range [0, %d) in "
                    "%s %d", f, rule->nfactors, role, index);
      sp_rule_factor_name(f, name);
      if (stamp[f] == stamp_id)
        return sp__verify_fail(v, op->loc, w, "sharding rule: factor %s appears more than once in %s %d",
                    name, role, index);
      stamp[f] = stamp_id;
      used[f] = true;
      if (dim->nfactors > 1 && rule->factors[f].size == 1)
        return sp__verify_fail(v, op->loc, w, "sharding rule: size-1 factor %s shares dim %d of %s %d with "
                    "other factors", name, d, role, index);
      if (stamp_id < 0 && rule->factors[f].kind == SP_FACTOR_REDUCTION)
        return sp__verify_fail(v, op->loc, w, "reduction factor cannot be in result mappings: factor %s in "
                    "result %d", name, index);
    }
  }
  return SP_OK;
}

static int check_rule(verifier *v, const sp_op *op, const sp_rule *rule) {
  where w = {op->name, NULL, -1, NULL, false, NULL};
  char name[16];
  if (rule->nfactors < 0 || (rule->nfactors > 0 && !rule->factors) || rule->noperands < 0 ||
      rule->nresults < 0)
    return sp__verify_fail_code(v, SP_EINTERNAL, op->loc, &w, "malformed sharding rule");
  if (rule->nfactors > SP_MAX_FACTORS)
    return sp__verify_fail_code(v, SP_ELIMIT, op->loc, &w, "sharding rule has %d factors, more than the "
                     "limit of %d", rule->nfactors, SP_MAX_FACTORS);
  if (op->noperands == 0 || op->nresults == 0)
    return sp__verify_fail(v, op->loc, &w, "sharding rule: an op needs at least one operand and one result "
                "to have a sharding rule");
  if (rule->noperands != op->noperands)
    return sp__verify_fail(v, op->loc, &w, "sharding rule: number of operand mappings doesn't match number "
                "of operands: %d != %d", rule->noperands, op->noperands);
  if (rule->nresults != op->nresults)
    return sp__verify_fail(v, op->loc, &w, "sharding rule: number of result mappings doesn't match number "
                "of results: %d != %d", rule->nresults, op->nresults);
  /* stamp[f] = the last tensor that used factor f: operands 1.., results -1.. */
  int stamp[SP_MAX_FACTORS];
  bool used[SP_MAX_FACTORS];
  for (int f = 0; f < rule->nfactors; f++) {
    stamp[f] = 0;
    used[f] = false;
  }
  int rc;
  for (int i = 0; i < rule->noperands; i++) {
    rc = check_rule_tensor(v, op, rule, &rule->operands[i], sp__verify_value_type(op->operands[i].value),
                           "operand", i, i + 1, stamp, used, &w);
    if (rc) return rc;
  }
  for (int i = 0; i < rule->nresults; i++) {
    rc = check_rule_tensor(v, op, rule, &rule->results[i], op->results[i].type, "result", i,
                           -(i + 1), stamp, used, &w);
    if (rc) return rc;
  }
  for (int f = 0; f < rule->nfactors; f++) {
    if (used[f]) continue;
    sp_rule_factor_name(f, name);
    return sp__verify_fail(v, op->loc, &w, "sharding rule: factor %s is not used by any operand or result",
                name);
  }
  return SP_OK;
}

int sp_verify_rule(const sp_module *m, const sp_op *op, const sp_rule *rule, sp_err *err) {
  verifier v;
  verifier_init(&v, m, err);
  int rc = check_rule(&v, op, rule);
  verifier_free(&v);
  return rc;
}

static int verify_op(verifier *v, const sp_op *op);

/* ------------------------------------------------------------------ the walk */

static int verify_results(verifier *v, const sp_op *op) {
  for (int i = 0; i < op->nresults; i++) {
    const sp_value *r = &op->results[i];
    if (!r->sharding) continue;
    /* The inline sharding of a constraint or reshard is the op's own: no value prefix. */
    bool inline_sharding = op->kind == SP_OP_SDY_SHARDING_CONSTRAINT ||
                           op->kind == SP_OP_SDY_RESHARD || op->kind == SP_OP_SDY_DATA_FLOW_EDGE;
    where w = {op->name, inline_sharding ? NULL : "result", i, NULL, op->nresults == 1, NULL};
    int rc = sp__verify_check_sharding(v, r->sharding, r->type, sp__verify_value_loc(r, op->loc), &w);
    if (rc) return rc;
  }
  return SP_OK;
}

static int verify_func(verifier *v, const sp_op *op) {
  const sp_func_info *fi = op->func;
  if (!fi || !fi->result_shardings) return SP_OK;
  for (int i = 0; i < fi->nresults; i++) {
    if (!fi->result_shardings[i]) continue;
    where w = {op->name, "result", i, NULL, false, NULL};
    const sp_type *t = fi->result_types ? fi->result_types[i] : NULL;
    int rc = sp__verify_check_sharding(v, fi->result_shardings[i], t, op->loc, &w);
    if (rc) return rc;
  }
  return SP_OK;
}

static int verify_block(verifier *v, const sp_op *parent, const sp_block *b, bool func_entry) {
  for (int i = 0; i < b->nargs; i++) {
    const sp_value *arg = b->args[i];
    where w = {parent->name, func_entry ? "arg" : "block argument", i, NULL, false, NULL};
    if (!arg->sharding) continue;
    int rc = sp__verify_check_sharding(v, arg->sharding, arg->type, sp__verify_value_loc(arg, parent->loc), &w);
    if (rc) return rc;
  }
  for (const sp_op *op = b->first; op; op = op->next) {
    int rc = verify_op(v, op);
    if (rc) return rc;
  }
  /* A function argument's sdy.sharding the reader could not take is not a single sharding;
   * MLIR checks argument attributes with the function's regions, after the body. */
  for (int i = 0; func_entry && i < b->nargs; i++)
    if (sp_attrs_get(&b->args[i]->attrs, "sdy.sharding")) {
      where w = {parent->name, "arg", i, NULL, false, NULL};
      return sp__verify_fail(v, parent->loc, &w, "should have a sharding attribute of type "
                  "TensorShardingAttr");
    }
  return SP_OK;
}

int sp__verify_regions(verifier *v, const sp_op *op) {
  for (int r = 0; r < op->nregions; r++) {
    const sp_region *reg = &op->regions[r];
    for (int b = 0; b < reg->nblocks; b++) {
      bool func_entry = op->kind == SP_OP_FUNC && r == 0 && b == 0;
      int rc = verify_block(v, op, reg->blocks[b], func_entry);
      if (rc) return rc;
    }
  }
  return SP_OK;
}

/* Shardings the readers left as attributes: the op-level `sdy.sharding` of an op without
 * results, and inline shardings of ops whose results could not take them. */
static int verify_sharding_attrs(verifier *v, const sp_op *op) {
  for (int i = 0; i < op->attrs.n; i++) {
    const sp_attr *at = &op->attrs.v[i];
    where w = {op->name, at->name, -1, NULL, false, NULL};
    int rc = SP_OK;
    if (at->kind == SP_ATTR_SHARDING && strcmp(at->name, "sdy.sharding") == 0) {
      where ow = {op->name, NULL, -1, NULL, false, NULL};
      return sp__verify_fail(v, op->loc, &ow, "should have a sharding attribute of type "
                  "TensorShardingPerValueAttr");
    } else if (at->kind == SP_ATTR_SHARDING && at->u.sharding) {
      rc = sp__verify_check_sharding(v, at->u.sharding, NULL, op->loc, &w);
    } else if (at->kind == SP_ATTR_SHARDINGS && strcmp(at->name, "sdy.sharding") == 0) {
      int n = at->u.shardings.n;
      /* An op without results may carry one sharding: where it runs, not how it splits. */
      int want = op->nresults ? op->nresults : n == 0 ? 0 : 1;
      if (n != want)
        return sp__verify_fail(v, op->loc, &w, "shardings don't match number of values: %d != %d", n,
                    op->nresults);
      for (int k = 0; k < n && rc == SP_OK; k++) {
        const sp_sharding *s = at->u.shardings.v[k];
        if (!s) return sp__verify_fail_code(v, SP_EINTERNAL, op->loc, &w, "missing sharding");
        const sp_type *t = op->nresults ? op->results[k].type : NULL;
        rc = sp__verify_check_sharding(v, s, t, op->loc, &w);
        if (rc == SP_OK && op->nresults == 0 && !sp_sharding_is_unsharded(s) &&
            !sp_mesh_is_maximal(s->inline_mesh ? s->inline_mesh : sp__verify_lookup_mesh(v, s->mesh_name)))
          return sp__verify_fail(v, op->loc, &w, "an op without results can only carry a maximal or fully "
                      "replicated sharding");
      }
    }
    if (rc) return rc;
  }
  return SP_OK;
}

/* The input of a data-flow edge: a static shape and no other user; for sdy.data_flow_edge
 * not made by an sdy op, for sdy.func_data_flow_edge a call result or a function argument. */
static int check_edge_input(verifier *v, const sp_op *op) {
  where w = {op->name, NULL, -1, NULL, false, NULL};
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0].value)
    return sp__verify_fail(v, op->loc, &w, "requires one operand and one result");
  bool func_edge = op->kind == SP_OP_SDY_FUNC_DATA_FLOW_EDGE;
  const char *what = func_edge ? "operand" : "input";
  const sp_value *in = op->operands[0].value;
  if (!sp_type_is_static_tensor(op->results[0].type) &&
      op->results[0].type->kind == SP_TYPE_TENSOR)
    return sp__verify_fail(v, op->loc, &w, "expected %s to have a static-shaped result", op->name);
  if (sp_value_num_uses(in) != 1)
    return sp__verify_fail(v, op->loc, &w, "expected %s of %s to have a single user", what, op->name);
  if (!func_edge) {
    /* Data-flow ops of the sdy dialect own their edges; any other sdy op may not. */
    if (in->def && strncmp(in->def->name, "sdy.", 4) == 0 &&
        in->def->kind != SP_OP_SDY_MANUAL_COMPUTATION &&
        in->def->kind != SP_OP_SDY_NAMED_COMPUTATION) {
      sp__verify_note(v, in->def->loc, "sdy op defining the input of the sdy.data_flow_edge");
      return sp__verify_fail(v, op->loc, &w, "expected input of sdy.data_flow_edge to not be defined by an "
                  "SdyDialect op");
    }
    return SP_OK;
  }
  if (in->def && in->def->kind != SP_OP_FUNC_CALL)
    return sp__verify_fail(v, op->loc, &w, "expected operand of sdy.func_data_flow_edge to be a result of "
                "call op.");
  if (!in->def) {
    const sp_op *owner = in->block ? sp_block_parent_op(in->block) : NULL;
    if (!owner || owner->kind != SP_OP_FUNC)
      return sp__verify_fail(v, op->loc, &w, "expected operand of sdy.func_data_flow_edge to be a block "
                  "argument of a func op.");
  }
  return SP_OK;
}

/* A constraint or reshard may drop unreduced axes and introduce `sum` ones, but not change the
 * reduction of the axes it keeps nor introduce other kinds (Shardy's wording). */
static int check_unreduced_kinds(verifier *v, const sp_op *op) {
  const sp_sharding *in = op->noperands == 1 && op->operands[0].value
                              ? op->operands[0].value->sharding : NULL;
  const sp_sharding *out = op->results[0].sharding;
  const char *in_kind = in && in->unreduced_kind ? in->unreduced_kind : "sum";
  const char *out_kind = out->unreduced_kind ? out->unreduced_kind : "sum";
  where w = {op->name, NULL, -1, NULL, false, NULL};
  bool kept = false, introduced = false;
  for (int i = 0; i < out->nunreduced; i++) {
    bool found = false;
    for (int k = 0; in && k < in->nunreduced && !found; k++)
      found = sp_axis_ref_equal(&in->unreduced[k], &out->unreduced[i]);
    if (found) kept = true;
    else introduced = true;
  }
  if (kept && strcmp(in_kind, out_kind) != 0)
    return sp__verify_fail(v, op->loc, &w, "cannot change the reduction operator of kept unreduced axes from "
                "%s to %s.", in_kind, out_kind);
  if (introduced && strcmp(out_kind, "sum") != 0)
    return sp__verify_fail(v, op->loc, &w, "cannot introduce '%s' unreduced axes. Expected 'sum'.", out_kind);
  return SP_OK;
}

static int verify_op(verifier *v, const sp_op *op) {
  /* The debugging attributes sort before sdy.sharding, and MLIR checks an op's dialect
   * attributes (in name order) before the op itself. */
  int rc = sp_verify_edge_attrs(v->m, op, v->err);
  if (rc) return rc;
  bool collective = false;
  switch (op->kind) {
    case SP_OP_SDY_MESH:
      if (op->block != sp_module_body(v->m)) { /* top-level meshes were checked up front */
        sp_attr *at = sp_op_attr(op, "mesh");
        where w = {op->name, NULL, -1, sp_op_get_str(op, "sym_name"), false, NULL};
        if (at && at->kind == SP_ATTR_MESH) rc = verify_mesh(v, at->u.mesh, op->loc, &w);
      }
      break;
    case SP_OP_FUNC:
      rc = verify_func(v, op);
      break;

    case SP_OP_SDY_MANUAL_COMPUTATION:
      return sp__verify_manual_computation(v, op);
    case SP_OP_SDY_PROPAGATION_BARRIER: {
      const char *dir = sp_op_get_str(op, "allowed_direction");
      where w = {op->name, NULL, -1, NULL, false, NULL};
      if (dir && strcmp(dir, "BOTH") == 0)
        rc = sp__verify_fail(v, op->loc, &w, "cannot specify `BOTH` as the direction");
      break;
    }
    case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE:
      rc = check_edge_input(v, op);
      break;
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_SHARDING_CONSTRAINT:
      if (op->nresults != 1 || !op->results[0].sharding) {
        where w = {op->name, NULL, -1, NULL, false, NULL};
        rc = sp__verify_fail(v, op->loc, &w, "requires one result with a sharding");
      } else {
        rc = check_unreduced_kinds(v, op);
      }
      break;
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_REDUCE_SCATTER:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_SHARDED_TO_UNREDUCED:
    case SP_OP_SDY_REPLICATED_TO_UNREDUCED:
      /* The out_sharding first (mesh, rank, axes), then how it relates to the operand. */
      collective = true;
      break;
    case SP_OP_SDY_NAMED_COMPUTATION: {
      /* A named computation's in_shardings are optional (absent: none of its operands has
       * one); when given there is one per operand. */
      sp_sharding *const *in;
      if (sp_op_attr(op, "in_shardings")) rc = sp__verify_check_in_shardings(v, op, &in);
      break;
    }
    default:
      break;
  }
  if (rc) return rc;
  if ((rc = sp_verify_stablehlo_op(v->m, op, v->err))) return rc;
  if ((rc = verify_results(v, op))) return rc;
  if (collective && (rc = sp_verify_collective(v->m, op, v->err))) return rc;
  if ((rc = verify_sharding_attrs(v, op))) return rc;
  sp_rule *rule = sp_op_rule(op);
  if (rule && (rc = check_rule(v, op, rule))) return rc;
  if ((rc = sp__verify_regions(v, op))) return rc;
  return op->kind == SP_OP_FUNC ? sp_verify_func_return(v->m, op, v->err) : SP_OK;
}

int sp_verify_module(const sp_module *m, sp_err *err) {
  verifier v;
  verifier_init(&v, m, err);
  int rc;
  if (!m || !m->op || m->op->nregions != 1 || m->op->regions[0].nblocks != 1)
    rc = sp_err_set(err, SP_EINVAL, "%s: malformed module", v.file);
  else if ((rc = build_mesh_table(&v, true)) == SP_OK)
    rc = sp__verify_regions(&v, m->op);
  verifier_free(&v);
  if (rc == SP_OK) sp_err_clear(err);
  return rc;
}
