/*
 * mesh_import.c - symbol DCE, inline-mesh lifting, size-one-axis removal and manual-axes
 * cleanup (see mesh_import.h).
 */
#include "propagation/mesh_import.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/diag.h"
#include "ir/grow.h"
#include "ir/sp_limits.h"
#include "propagation/sharding_walk.h"

/* ------------------------------------------------------------------ symbols */

sp_op *sp_module_lookup_symbol(const sp_module *m, const char *name) {
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    const char *sym = sp_op_get_str(op, "sym_name");
    if (sym && strcmp(sym, name) == 0) return op;
  }
  return NULL;
}

const char *sp_module_unique_symbol_counted(sp_module *m, const char *base, unsigned *counter) {
  if (!sp_module_lookup_symbol(m, base)) return sp_arena_strdup(m->arena, base);
  for (;;) {
    const char *name = sp_arena_printf(m->arena, "%s_%u", base, (*counter)++);
    if (!name || !sp_module_lookup_symbol(m, name)) return name;
  }
}

const char *sp_module_unique_symbol(sp_module *m, const char *base) {
  unsigned counter = 0;
  return sp_module_unique_symbol_counted(m, base, &counter);
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

/* ---- StableHLO meshes written inline in replica groups:
 *   #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<
 *       name = "z", size = 4>, ...]>, axes = [...]>
 * are lifted like sdy ones: the mesh becomes (or is found as) an sdy.mesh and is named. */

static const char HLO_MESH[] = "mesh = #stablehlo.mesh<axes = [";
static const char HLO_AXIS[] = "#stablehlo.mesh_axis<name = \"";

/* Reads the axes of an inline StableHLO mesh starting at `p` (just past HLO_MESH) into a new
 * arena mesh; *end is set past the mesh's closing '>'. NULL when the text is not that form. */
static sp_mesh *read_hlo_mesh(sp_arena *a, const char *p, const char **end) {
  int cap = 0;
  for (const char *q = p; (q = strstr(q, HLO_AXIS)) != NULL; q++) cap++;
  sp_mesh *mesh = sp_arena_calloc(a, 1, sizeof *mesh);
  if (!mesh || !(mesh->axes = sp_arena_calloc(a, (size_t)(cap ? cap : 1), sizeof *mesh->axes)))
    return NULL;
  while (strncmp(p, HLO_AXIS, sizeof HLO_AXIS - 1) == 0 && mesh->naxes < cap) {
    p += sizeof HLO_AXIS - 1;
    static const char SIZE[] = "\", size = ";
    const char *q = strchr(p, '"');
    if (!q || strncmp(q, SIZE, sizeof SIZE - 1) != 0) return NULL;
    char *after;
    long long size = strtoll(q + sizeof SIZE - 1, &after, 10);
    if (after == q + sizeof SIZE - 1 || *after != '>') return NULL;
    sp_mesh_axis *ax = &mesh->axes[mesh->naxes++];
    if (!(ax->name = sp_arena_strndup(a, p, (size_t)(q - p)))) return NULL;
    ax->size = size;
    p = after + 1;
    if (strncmp(p, ", ", 2) == 0) p += 2;
  }
  if (strncmp(p, "]>", 2) != 0) return NULL;
  *end = p + 2;
  return mesh;
}

typedef struct hlo_lift {
  sp_module *m;
  lift *l;
  int rc;
} hlo_lift;

static bool lift_hlo_meshes(sp_op *op, void *ctx) {
  hlo_lift *h = ctx;
  for (int i = 0; i < op->attrs.n && !h->rc; i++) {
    sp_attr *at = &op->attrs.v[i];
    const char *at_mesh = at->kind == SP_ATTR_TEXT ? strstr(at->u.s, HLO_MESH) : NULL;
    const char *end;
    sp_mesh *mesh = at_mesh ? read_hlo_mesh(h->m->arena, at_mesh + sizeof HLO_MESH - 1, &end) : NULL;
    if (!mesh) continue;
    sp_op *existing = find_equal_mesh(h->m, mesh);
    const char *name = existing ? sp_op_get_str(existing, "sym_name")
                                : new_mesh_symbol(h->m, h->l, mesh);
    const char *text = name ? sp_arena_printf(h->m->arena, "%.*smesh = @%s%s",
                                              (int)(at_mesh - at->u.s), at->u.s, name, end)
                            : NULL;
    if (!text) h->rc = SP_ENOMEM;
    else at->u.s = text;
  }
  return h->rc == SP_OK;
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
  hlo_lift h = {m, &l, SP_OK};
  if (!rc) sp_op_walk(m->op, lift_hlo_meshes, &h);
  free(l.renames);
  if (!rc && h.rc) rc = sp_err_set(err, h.rc, "out of memory lifting a StableHLO mesh");
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

/* The used parts of axis `name` (of size n) in dims, replicated and unreduced of `s`, as
 * [pre, next) ranges; returns how many (at most `cap`). */
static int used_parts(const sp_sharding *s, const char *name, int64_t n, int64_t (*r)[2], int cap) {
  int k = 0;
  const sp_axis_ref *lists[2] = {s->replicated, s->unreduced};
  int counts[2] = {s->nreplicated, s->nunreduced};
  for (int d = -2; d < s->rank; d++) {
    const sp_axis_ref *v = d < 0 ? lists[d + 2] : s->dims[d].axes;
    int cnt = d < 0 ? counts[d + 2] : s->dims[d].naxes;
    for (int i = 0; i < cnt && k < cap; i++) {
      if (strcmp(v[i].name, name) != 0) continue;
      r[k][0] = sp_axis_pre(&v[i]);
      r[k][1] = sp_axis_next(&v[i], n);
      k++;
    }
  }
  /* By start. */
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && r[j][0] < r[j - 1][0]; j--) {
      int64_t t0 = r[j][0], t1 = r[j][1];
      r[j][0] = r[j - 1][0];
      r[j][1] = r[j - 1][1];
      r[j - 1][0] = t0;
      r[j - 1][1] = t1;
    }
  return k;
}

/* Appends to `out` the parts of manual axis `ax` that `s` does not use (the whole axis when
 * it uses none). */
static int unused_parts(const sp_sharding *s, const sp_mesh_axis *ax, sp_axis_ref *out) {
  int64_t r[2 * SP_MAX_MESH_AXES + 8][2];
  int k = used_parts(s, ax->name, ax->size, r, (int)(sizeof r / sizeof r[0]));
  int n = 0;
  int64_t cur = 1;
  for (int i = 0; i < k; i++) {
    if (cur < r[i][0]) out[n++] = sp_axis_make(ax->name, cur, r[i][0] / cur, ax->size);
    if (r[i][1] > cur) cur = r[i][1];
  }
  if (cur < ax->size) out[n++] = sp_axis_make(ax->name, cur, ax->size / cur, ax->size);
  return n;
}

/* A copy of `s` whose replicated list also holds every part of a manual axis `s` does not use,
 * neighbouring parts of one axis merged. */
static sp_sharding *add_unused_manual_axes(sp_arena *a, const sp_sharding *s, const sp_mesh *mesh,
                                           const sp_axis_ref *manual, int nmanual) {
  int cap = s->nreplicated, extra = 0;
  for (int i = 0; i < nmanual; i++) cap += SP_MAX_MESH_AXES + 2;
  sp_axis_ref *rep = sp_arena_alloc(a, (size_t)(cap ? cap : 1) * sizeof *rep);
  if (!rep) return NULL;
  if (s->nreplicated) memcpy(rep, s->replicated, (size_t)s->nreplicated * sizeof *rep);
  int n = s->nreplicated;
  for (int i = 0; i < nmanual; i++) {
    int idx = sp_mesh_axis_index(mesh, manual[i].name);
    if (idx < 0) continue;
    int added = unused_parts(s, &mesh->axes[idx], rep + n);
    n += added;
    extra += added;
  }
  if (!extra) return (sp_sharding *)s;
  sp_sharding_sort_axes(rep, n, mesh);
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (m && sp_axis_can_merge(&rep[m - 1], &rep[i])) {
      rep[m - 1] = sp_axis_merge(&rep[m - 1], &rep[i], sp_mesh_axis_size(mesh, rep[i].name));
      continue;
    }
    rep[m++] = rep[i];
  }
  sp_sharding *c = sp_sharding_copy(a, s);
  if (!c) return NULL;
  c->replicated = rep;
  c->nreplicated = m;
  return c;
}

static bool is_tensor(const sp_type *t) { return t && t->kind == SP_TYPE_TENSOR; }

/* The first in/out sharding of the computation on a non-empty mesh (the computation's mesh,
 * as written there: by name or inline), or NULL. */
static const sp_sharding *common_mesh_ref(const sp_module *m, const sp_op *op, const sp_attr *in) {
  for (int i = 0; in && in->kind == SP_ATTR_SHARDINGS && i < in->u.shardings.n; i++) {
    const sp_sharding *s = in->u.shardings.v[i];
    const sp_mesh *mesh = s ? sp_module_sharding_mesh(m, s) : NULL;
    if (mesh && !sp_mesh_is_empty(mesh)) return s;
  }
  for (int i = 0; i < op->nresults; i++) {
    const sp_sharding *s = op->results[i].sharding;
    const sp_mesh *mesh = s ? sp_module_sharding_mesh(m, s) : NULL;
    if (mesh && !sp_mesh_is_empty(mesh)) return s;
  }
  return NULL;
}

/* `s` referring to the computation's mesh the way `ref` does, when it is on that mesh spelt
 * otherwise or on the empty mesh (every in/out sharding then names the one mesh). */
static sp_sharding *on_common_mesh(const sp_module *m, sp_sharding *s, const sp_sharding *ref) {
  if (!s || !ref) return s;
  const sp_mesh *mesh = sp_module_sharding_mesh(m, s), *common = sp_module_sharding_mesh(m, ref);
  bool same_ref = s->inline_mesh ? s->inline_mesh == ref->inline_mesh
                                 : s->mesh_name && ref->mesh_name && strcmp(s->mesh_name, ref->mesh_name) == 0;
  if (same_ref || !mesh || !common || (!sp_mesh_is_empty(mesh) && !sp_mesh_equal(mesh, common)))
    return s;
  sp_sharding *c = sp_sharding_copy(m->arena, s);
  if (!c) return NULL;
  c->inline_mesh = ref->inline_mesh;
  c->mesh_name = ref->mesh_name;
  return c;
}

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
  const sp_sharding *ref = common_mesh_ref(e->m, op, in);
  const sp_mesh *mesh = ref ? sp_module_sharding_mesh(e->m, ref) : op_sharding_mesh(e->m, op);
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
      if (!(v[i] = on_common_mesh(e->m, v[i], ref)) ||
          !(v[i] = add_unused_manual_axes(a, v[i], mesh, sorted, axes->u.axes.n)))
        goto oom;
    }
    in->u.shardings.v = v;
  }
  for (int i = 0; i < op->nresults; i++) {
    sp_value *r = &op->results[i];
    if (!r->sharding || !is_tensor(r->type)) continue;
    if (!(r->sharding = on_common_mesh(e->m, r->sharding, ref)) ||
        !(r->sharding = add_unused_manual_axes(a, r->sharding, mesh, sorted, axes->u.axes.n)))
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
    return sp_op_error(err, SP_EINVAL, m, e.bad, "has manual_axes when there are no in/out "
                       "shardings and the body is not empty");
  return e.rc ? sp_err_set(err, e.rc, "out of memory in manual-axes cleanup") : SP_OK;
}
