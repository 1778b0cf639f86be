/*
 * mesh_import.c - symbol DCE, inline-mesh lifting, size-one-axis removal and manual-axes
 * cleanup (see mesh_import.h).
 */
#include "propagation/mesh_import.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/grow.h"
#include "propagation/sharding_walk.h"

/* ------------------------------------------------------------------ symbols */

sp_op *sp_module_lookup_symbol(const sp_module *m, const char *name) {
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    const char *sym = sp_op_get_str(op, "sym_name");
    if (sym && strcmp(sym, name) == 0) return op;
  }
  return NULL;
}

const char *sp_module_unique_symbol(sp_module *m, const char *base) {
  if (!sp_module_lookup_symbol(m, base)) return sp_arena_strdup(m->arena, base);
  for (int i = 0;; i++) {
    const char *name = sp_arena_printf(m->arena, "%s_%d", base, i);
    if (!name || !sp_module_lookup_symbol(m, name)) return name;
  }
}

static bool is_private(const sp_op *op) {
  const char *vis = sp_op_get_str(op, "sym_visibility");
  return vis && strcmp(vis, "private") == 0;
}

typedef struct dce {
  const sp_module *m;
  sp_op **live;     /* funcs marked live, also the worklist */
  int nlive, cap;
  int next;         /* next live func whose body is scanned */
} dce;

static bool marked(const dce *d, const sp_op *f) {
  for (int i = 0; i < d->nlive; i++)
    if (d->live[i] == f) return true;
  return false;
}

static int mark(dce *d, sp_op *f) {
  if (marked(d, f)) return SP_OK;
  if (sp_grow((void **)&d->live, &d->cap, d->nlive, sizeof *d->live)) return SP_ENOMEM;
  d->live[d->nlive++] = f;
  return SP_OK;
}

typedef struct ref_scan {
  dce *d;
  int rc;
} ref_scan;

static bool mark_references(sp_op *op, void *ctx) {
  ref_scan *s = ctx;
  for (int i = 0; i < op->attrs.n; i++) {
    const sp_attr *at = &op->attrs.v[i];
    if (at->kind != SP_ATTR_SYMBOL) continue;
    sp_op *target = sp_module_lookup_symbol(s->d->m, at->u.s);
    if (target && target->kind == SP_OP_FUNC && (s->rc = mark(s->d, target))) return false;
  }
  return true;
}

int sp_symbol_dce(sp_module *m, sp_err *err) {
  dce d = {m, NULL, 0, 0, 0};
  ref_scan s = {&d, SP_OK};
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    if (op->kind == SP_OP_FUNC && is_private(op)) continue;
    if (op->kind == SP_OP_FUNC) {
      if ((s.rc = mark(&d, op))) goto done;
    } else if (!sp_op_walk(op, mark_references, &s)) {
      goto done;
    }
  }
  while (d.next < d.nlive)
    if (!sp_op_walk(d.live[d.next++], mark_references, &s)) goto done;
  for (sp_op *op = sp_module_body(m)->first, *next; op; op = next) {
    next = op->next;
    if (op->kind == SP_OP_FUNC && is_private(op) && !marked(&d, op)) sp_op_erase(op);
  }
done:
  free(d.live);
  return s.rc ? sp_err_set(err, s.rc, "out of memory in symbol DCE") : SP_OK;
}

/* ------------------------------------------------------------------ lift inlined meshes */

typedef struct rename {
  const char *from, *to;
} rename;

typedef struct lift {
  rename *renames;
  int nrenames;
  sp_op *last_mesh;   /* new meshes go after it */
} lift;

static const sp_mesh *mesh_of_op(const sp_op *op) {
  sp_attr *at = sp_op_attr(op, "mesh");
  return at && at->kind == SP_ATTR_MESH ? at->u.mesh : NULL;
}

/* The first sdy.mesh op whose mesh equals `mesh`. */
static sp_op *find_equal_mesh(const sp_module *m, const sp_mesh *mesh) {
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_SDY_MESH && mesh_of_op(op) && sp_mesh_equal(mesh_of_op(op), mesh))
      return op;
  return NULL;
}

static const char *new_mesh_symbol(sp_module *m, lift *l, const sp_mesh *mesh) {
  const char *base = "mesh";
  if (sp_mesh_is_maximal(mesh))
    base = sp_arena_printf(m->arena, "maximal_mesh_%lld", (long long)mesh->device_ids[0]);
  else if (sp_mesh_is_empty(mesh))
    base = "empty_mesh";
  const char *name = base ? sp_module_unique_symbol(m, base) : NULL;
  sp_op *op = name ? sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0) : NULL;
  if (!op) return NULL;
  sp_attr sym = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = name};
  sp_attr at = {.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = (sp_mesh *)mesh};
  if (sp_attrs_set(m->arena, &op->attrs, &sym) || sp_attrs_set(m->arena, &op->attrs, &at))
    return NULL;
  sp_block *body = sp_module_body(m);
  if (l->last_mesh) sp_op_insert_after(l->last_mesh, op);
  else if (body->first) sp_op_insert_before(body->first, op);
  else sp_block_append(body, op);
  l->last_mesh = op;
  return name;
}

static int lift_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  lift *l = ctx;
  const sp_sharding *sh = *s->slot;
  const char *to = NULL;
  if (sh->inline_mesh) {
    sp_op *existing = find_equal_mesh(m, sh->inline_mesh);
    to = existing ? sp_op_get_str(existing, "sym_name") : new_mesh_symbol(m, l, sh->inline_mesh);
    if (!to) return sp_err_set(err, SP_ENOMEM, "out of memory lifting an inline mesh");
  } else if (sh->mesh_name) {
    for (int i = 0; i < l->nrenames && !to; i++)
      if (strcmp(l->renames[i].from, sh->mesh_name) == 0) to = l->renames[i].to;
    if (!to) return SP_OK;
  } else {
    return SP_OK;
  }
  sp_sharding *c = sp_sharding_copy(m->arena, sh);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory lifting an inline mesh");
  c->mesh_name = to;
  c->inline_mesh = NULL;
  *s->slot = c;
  return SP_OK;
}

int sp_mesh_lift_inlined(sp_module *m, sp_err *err) {
  lift l = {NULL, 0, NULL};
  int n = 0, rc = SP_OK;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) n += op->kind == SP_OP_SDY_MESH;
  if (n && !(l.renames = calloc((size_t)n, sizeof *l.renames)))
    return sp_err_set(err, SP_ENOMEM, "out of memory lifting meshes");
  for (sp_op *op = sp_module_body(m)->first, *next; op; op = next) {
    next = op->next;
    if (op->kind != SP_OP_SDY_MESH || !mesh_of_op(op)) continue;
    sp_op *first = find_equal_mesh(m, mesh_of_op(op));
    if (first != op) {
      l.renames[l.nrenames++] = (rename){sp_op_get_str(op, "sym_name"), sp_op_get_str(first, "sym_name")};
      sp_op_erase(op);
    } else {
      l.last_mesh = op;
    }
  }
  rc = sp_sharding_walk(m, lift_slot, &l, err);
  free(l.renames);
  return rc;
}

/* ------------------------------------------------------------------ size-one axes */

static bool size_one(const sp_mesh *mesh, const sp_axis_ref *r) {
  return !sp_axis_is_sub(r) && sp_mesh_axis_size(mesh, r->name) == 1;
}

static bool any_size_one(const sp_mesh *mesh, const sp_axis_ref *v, int n) {
  for (int i = 0; i < n; i++)
    if (size_one(mesh, &v[i])) return true;
  return false;
}

/* Removes size-one axes from v[0..*n) in place. */
static void drop_size_one(const sp_mesh *mesh, sp_axis_ref *v, int *n) {
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (!size_one(mesh, &v[i])) v[k++] = v[i];
  *n = k;
}

static int remove_size_one_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)ctx;
  const sp_sharding *sh = *s->slot;
  const sp_mesh *mesh = sp_sharding_mesh(m, sh);
  if (!mesh) return SP_OK; /* the verifier reports unknown meshes */
  bool any = any_size_one(mesh, sh->replicated, sh->nreplicated) ||
             any_size_one(mesh, sh->unreduced, sh->nunreduced);
  for (int d = 0; d < sh->rank && !any; d++)
    any = any_size_one(mesh, sh->dims[d].axes, sh->dims[d].naxes);
  if (!any) return SP_OK;
  sp_sharding *c = sp_sharding_copy(m->arena, sh);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory removing size-one axes");
  for (int d = 0; d < c->rank; d++) {
    sp_dim_sharding *dim = &c->dims[d];
    drop_size_one(mesh, dim->axes, &dim->naxes);
    if (dim->naxes == 0 && dim->closed) dim->priority = SP_NO_PRIORITY;
  }
  drop_size_one(mesh, c->replicated, &c->nreplicated);
  drop_size_one(mesh, c->unreduced, &c->nunreduced);
  *s->slot = c;
  return SP_OK;
}

/* The mesh of an op's first sharding (in_shardings, then results). */
static const sp_mesh *op_sharding_mesh(const sp_module *m, const sp_op *op) {
  sp_attr *in = sp_op_attr(op, "in_shardings");
  if (in && in->kind == SP_ATTR_SHARDINGS)
    for (int i = 0; i < in->u.shardings.n; i++)
      if (in->u.shardings.v[i]) return sp_sharding_mesh(m, in->u.shardings.v[i]);
  for (int i = 0; i < op->nresults; i++)
    if (op->results[i].sharding) return sp_sharding_mesh(m, op->results[i].sharding);
  return NULL;
}

typedef struct axes_edit {
  const sp_module *m;
  int rc;
  const sp_op *bad;  /* the op an SP_EINVAL is about */
} axes_edit;

static bool remove_size_one_axes_attrs(sp_op *op, void *ctx) {
  axes_edit *e = ctx;
  /* A manual computation keeps its manual axes (Shardy drops size-one axes from shardings
   * only); an all-reduce over a size-one axis reduces nothing. */
  const char *name = op->kind == SP_OP_SDY_ALL_REDUCE ? "reduction_axes" : NULL;
  sp_attr *at = name ? sp_op_attr(op, name) : NULL;
  if (!at || at->kind != SP_ATTR_AXES) return true;
  const sp_mesh *mesh = op_sharding_mesh(e->m, op);
  if (!mesh || !any_size_one(mesh, at->u.axes.v, at->u.axes.n)) return true;
  sp_axis_ref *v = sp_arena_alloc(e->m->arena, (size_t)at->u.axes.n * sizeof *v);
  if (!v) {
    e->rc = SP_ENOMEM;
    return false;
  }
  memcpy(v, at->u.axes.v, (size_t)at->u.axes.n * sizeof *v);
  at->u.axes.v = v;
  drop_size_one(mesh, at->u.axes.v, &at->u.axes.n);
  return true;
}

int sp_mesh_remove_size_one_axes(sp_module *m, sp_err *err) {
  axes_edit e = {m, SP_OK, NULL};
  sp_op_walk(m->op, remove_size_one_axes_attrs, &e);
  if (e.rc) return sp_err_set(err, e.rc, "out of memory removing size-one axes");
  return sp_sharding_walk(m, remove_size_one_slot, NULL, err);
}

/* ------------------------------------------------------------------ manual axes cleanup */

/* A copy of `s` whose replicated list also holds every manual axis `s` does not mention. */
static sp_sharding *add_unused_manual_axes(sp_arena *a, const sp_sharding *s, const sp_mesh *mesh,
                                           const sp_axis_ref *manual, int nmanual) {
  int extra = 0;
  for (int i = 0; i < nmanual; i++) extra += !sp_sharding_uses_axis_name(s, manual[i].name);
  if (!extra) return (sp_sharding *)s;
  sp_sharding *c = sp_sharding_copy(a, s);
  sp_axis_ref *rep = c ? sp_arena_alloc(a, (size_t)(s->nreplicated + extra) * sizeof *rep) : NULL;
  if (!rep) return NULL;
  if (s->nreplicated) memcpy(rep, s->replicated, (size_t)s->nreplicated * sizeof *rep);
  int n = s->nreplicated;
  for (int i = 0; i < nmanual; i++)
    if (!sp_sharding_uses_axis_name(s, manual[i].name)) rep[n++] = manual[i];
  sp_sharding_sort_axes(rep, n, mesh);
  c->replicated = rep;
  c->nreplicated = n;
  return c;
}

static bool is_tensor(const sp_type *t) { return t && t->kind == SP_TYPE_TENSOR; }

static bool cleanup_manual(sp_op *op, void *ctx) {
  axes_edit *e = ctx;
  if (op->kind != SP_OP_SDY_MANUAL_COMPUTATION) return true;
  sp_attr *axes = sp_op_attr(op, "manual_axes");
  /* Without in/out shardings there is no mesh to put the manual axes on. */
  const sp_block *body = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
  if (op->noperands == 0 && op->nresults == 0 && axes && axes->kind == SP_ATTR_AXES &&
      axes->u.axes.n && body && body->first != body->last) {
    e->rc = SP_EINVAL;
    e->bad = op;
    return false;
  }
  sp_attr *in = sp_op_attr(op, "in_shardings");
  const sp_mesh *mesh = op_sharding_mesh(e->m, op);
  if (!axes || axes->kind != SP_ATTR_AXES || !axes->u.axes.n || !mesh) return true;
  sp_arena *a = e->m->arena;
  sp_axis_ref *sorted = sp_arena_alloc(a, (size_t)axes->u.axes.n * sizeof *sorted);
  if (!sorted) goto oom;
  memcpy(sorted, axes->u.axes.v, (size_t)axes->u.axes.n * sizeof *sorted);
  sp_sharding_sort_axes(sorted, axes->u.axes.n, mesh);
  axes->u.axes.v = sorted;
  if (in && in->kind == SP_ATTR_SHARDINGS) {
    sp_sharding **v = sp_arena_alloc(a, (size_t)(in->u.shardings.n ? in->u.shardings.n : 1) * sizeof *v);
    if (!v) goto oom;
    for (int i = 0; i < in->u.shardings.n; i++) {
      v[i] = in->u.shardings.v[i];
      const sp_type *t = i < op->noperands && op->operands[i].value ? op->operands[i].value->type : NULL;
      if (!v[i] || !is_tensor(t)) continue;
      if (!(v[i] = add_unused_manual_axes(a, v[i], mesh, sorted, axes->u.axes.n))) goto oom;
    }
    in->u.shardings.v = v;
  }
  for (int i = 0; i < op->nresults; i++) {
    sp_value *r = &op->results[i];
    if (!r->sharding || !is_tensor(r->type)) continue;
    if (!(r->sharding = add_unused_manual_axes(a, r->sharding, mesh, sorted, axes->u.axes.n)))
      goto oom;
  }
  return true;
oom:
  e->rc = SP_ENOMEM;
  return false;
}

int sp_mesh_manual_axes_cleanup(sp_module *m, sp_err *err) {
  axes_edit e = {m, SP_OK, NULL};
  sp_op_walk(m->op, cleanup_manual, &e);
  if (e.rc == SP_EINVAL)
    return sp_err_set(err, SP_EINVAL, "%s:%d:%d: '%s' op has manual_axes when there are no in/out "
                      "shardings and the body is not empty", m->filename, e.bad->loc.line,
                      e.bad->loc.col, e.bad->name);
  return e.rc ? sp_err_set(err, e.rc, "out of memory in manual-axes cleanup") : SP_OK;
}
