/*
 * exported.c - the collectives the export inserts into a planned module, priced (see
 * exported.h).
 *
 * The export runs on a copy (ir/module_copy.h), whose pairing of ops and values with the
 * original's, made before the export, lets an inserted collective's source value and consumer
 * be found in the copy and named in the original.
 */
#include "plan/exported.h"

#include <limits.h>
#include <string.h>

#include "export/export_pipeline.h"
#include "ir/module_copy.h"
#include "ir/op_list.h"
#include "ir/ptr_map.h"
#include "propagation/canonicalize.h"
#include "search/cost_model.h"

static bool is_collective(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_REDUCE_SCATTER: return true;
    default: return false;
  }
}

static bool is_collective_or_reshard(const sp_op *op) {
  return is_collective(op) || op->kind == SP_OP_SDY_RESHARD;
}

/* A collective the export inserted: in the copy, paired with no op of the original. */
static bool new_collective(const sp_module_copy *p, const sp_op *op) {
  return op && is_collective(op) && !sp_module_copy_original_op(p, op);
}

/* Whether the export's collectives and reshards are looked through to find who reads a
 * value. */
static bool transparent(const sp_module_copy *p, const sp_op *op) {
  return new_collective(p, op) || op->kind == SP_OP_SDY_RESHARD;
}

/* The first reader of `v` in program order, looking through collectives the export inserted:
 * the use whose final reader comes first in the pre-order walk (the copy's op indices), then
 * has the lowest operand index. An op the walk did not index (the export made it) comes last. */
static void first_reader(const sp_module_copy *p, const sp_value *v, const sp_op **at, int *operand) {
  long best = -1;
  *at = NULL;
  *operand = -1;
  for (const sp_use *u = v->uses; u; u = u->next) {
    const sp_op *op = u->owner;
    int j = u->index;
    if (transparent(p, op)) {
      first_reader(p, &op->results[0], &op, &j);
      if (!op) continue;
    }
    long i = sp_ptr_map_get(&p->index, op, -1);
    long key = i < 0 ? LONG_MAX : i;
    if (best < 0 || key < best || (key == best && j < *operand)) {
      best = key;
      *at = op;
      *operand = j;
    }
  }
}

/* "%name" as the search's list names values. */
static const char *value_label(sp_arena *a, const sp_value *v) {
  if (v->name_hint) {
    if (v->def && v->def->nresults > 1) return sp_arena_printf(a, "%%%s#%d", v->name_hint, v->index);
    return sp_arena_printf(a, "%%%s", v->name_hint);
  }
  if (!v->def) return sp_arena_printf(a, "%%arg%d", v->index);
  return sp_arena_printf(a, "result %d of %s (line %d)", v->index, v->def->name, v->def->loc.line);
}

/* Whether reduction `c` sums only axes that `s` holds unreduced: it reads a partial value for
 * a consumer that needs it whole (not an op's own reduction). */
static bool sums_partial_value(const sp_mesh *mesh, const sp_collective *c, const sp_sharding *s) {
  if (!s || !s->nunreduced || !c->naxes) return false;
  for (int i = 0; i < c->naxes; i++) {
    bool found = false;
    for (int k = 0; k < s->nunreduced && !found; k++) {
      sp_ft_axis u;
      found = sp_ft_axis_from_ref(mesh, &s->unreduced[k], &u) == SP_OK &&
              sp_ft_axis_equal(u, c->axes[i]);
    }
    if (!found) return false;
  }
  return true;
}

/* One entry for `op` (an inserted collective, or a reshard between meshes) moving as `c`. */
static int add_entry(sp_module *m, const sp_module_copy *p, const sp_cost_model *cm, sp_op *op,
                     sp_collective c, sp_search_collective **out, int *n, int *cap,
                     sp_err *err) {
  /* The value it moves: back through the collectives inserted before it. */
  sp_value *src = op->operands[0].value;
  while (src->def && new_collective(p, src->def)) src = src->def->operands[0].value;
  const sp_op *at = NULL;
  int operand = -1;
  bool own = (op->kind == SP_OP_SDY_ALL_REDUCE || op->kind == SP_OP_SDY_REDUCE_SCATTER) &&
             !sums_partial_value(cm->mesh, &c, src->sharding);
  if (own) {
    at = src->def;
  } else {
    first_reader(p, &op->results[0], &at, &operand);
    if (!at) at = src->def;   /* nothing reads it: the producer's (operand -1) */
  }
  if (sp_arena_grow(m->arena, (void **)out, cap, *n, sizeof **out))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_search_collective *e = &(*out)[(*n)++];
  memset(e, 0, sizeof *e);
  e->c = c;
  e->operand = operand;
  e->value_ref = sp_module_copy_original_value(p, src);
  e->op_ref = sp_module_copy_original_op(p, at);
  e->value = value_label(m->arena, e->value_ref ? e->value_ref : src);
  e->op = e->op_ref ? e->op_ref->name : (at ? at->name : op->name);
  e->line = e->op_ref ? e->op_ref->loc.line : op->loc.line;
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; i < c.naxes; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, cm->mesh, c.axes[i], true);
  }
  e->axes = sp_strbuf_ok(&sb) ? sp_arena_strdup(m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  if (!e->value || !e->axes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  return SP_OK;
}

/* An inserted collective, priced. On a runtime without reduce-scatter (cluster.h) the
 * canonicalizer's reduce_scatter runs as the all_reduce it was made of (the same tensor
 * reduced, B alike), then each device keeps its part. */
static int add_collective(sp_module *m, const sp_module_copy *p, const sp_cost_model *cm, sp_op *op,
                          bool no_reduce_scatter, sp_search_collective **out, int *n, int *cap,
                          sp_err *err) {
  sp_collective c;
  int rc = sp_cost_collective_op(cm, op, &c, err);
  if (rc) return sp_err_prefix(err, "%s:%d", m->filename, op->loc.line);
  if (no_reduce_scatter && c.kind == SP_COLL_REDUCE_SCATTER) {
    const sp_collective rs = c;
    sp_cost_collective(cm, SP_COLL_ALL_REDUCE, rs.axes, rs.naxes, rs.bytes, &c);
  }
  return add_entry(m, p, cm, op, c, out, n, cap, err);
}

/* The searched mesh's axes that shard `s` (none when it is not on that mesh's axes). */
static int sharded_axes(sp_module *m, const sp_cost_model *cm, const sp_value *v,
                        sp_ft_axis *axes, int *naxes, sp_err *err) {
  *naxes = 0;
  int rank = v->type && v->type->kind == SP_TYPE_TENSOR ? v->type->rank : 0;
  sp_layout *l;
  int rc = sp_layout_from_sharding(m->arena, v->sharding, rank, cm->mesh, &l, err);
  if (rc) return rc;
  for (int i = 0; i < l->start[rank] && i < SP_MAX_MESH_AXES_CLUSTER; i++) axes[(*naxes)++] = l->axes[i];
  return SP_OK;
}

/* A reshard the export leaves between two meshes (a single-device op's operand or result: XLA
 * runs it as collectives over the whole program's devices, the export has none for it):
 *   onto one device from the searched mesh: an all-gather of the value over the axes that
 *     shard it (B: the whole tensor; nothing when it is replicated);
 *   from one device onto the searched mesh: an all-reduce over every axis (B: the whole
 *     tensor), XLA's broadcast (the device's value summed with zeros everywhere else).
 * Other pairs of meshes are not priced. */
static int add_cross_mesh(sp_module *m, const sp_module_copy *p, const sp_cost_model *cm,
                          sp_module *copy, sp_op *op, sp_search_collective **out, int *n,
                          int *cap, sp_err *err) {
  const sp_value *v = op->operands[0].value;
  const sp_mesh *from = v ? sp_module_sharding_mesh(copy, v->sharding) : NULL;
  const sp_mesh *to = sp_module_sharding_mesh(copy, op->results[0].sharding);
  if (!from || !to || from == to || sp_mesh_equal(from, to)) return SP_OK;
  bool into = sp_mesh_is_maximal(to) && !sp_mesh_is_maximal(from);
  bool outof = sp_mesh_is_maximal(from) && !sp_mesh_is_maximal(to);
  if (!into && !outof) return SP_OK;
  sp_ft_axis axes[SP_MAX_MESH_AXES_CLUSTER];
  int naxes = 0;
  if (into) {
    if (v->sharding && v->sharding->nunreduced) return SP_OK;
    int rc = sharded_axes(copy, cm, v, axes, &naxes, err);
    if (rc) return sp_err_prefix(err, "%s:%d", m->filename, op->loc.line);
  } else {
    for (int a = 0; a < cm->mesh->naxes && a < SP_MAX_MESH_AXES_CLUSTER; a++)
      axes[naxes++] = (sp_ft_axis){.axis = a, .pre = 0, .size = 0};   /* the whole axis */
  }
  if (!naxes) return SP_OK;
  sp_collective c;
  sp_cost_collective(cm, into ? SP_COLL_ALL_GATHER : SP_COLL_ALL_REDUCE, axes, naxes,
                     sp_cost_tensor_bytes(op->results[0].type), &c);
  return add_entry(m, p, cm, op, c, out, n, cap, err);
}

int sp_plan_exported_collectives(sp_module *m, const sp_plan_summary *s,
                                 sp_search_collective **out, int *n, sp_err *err) {
  *out = NULL;
  *n = 0;
  if (!s->mesh) return sp_err_set(err, SP_EINVAL, "the plan has no searched mesh");
  sp_cost_model cm;
  memset(&cm, 0, sizeof cm);
  cm.mesh = s->mesh;
  memcpy(cm.axis, s->axis, sizeof cm.axis);   /* links only: nothing here prices compute */
  sp_module_copy p;
  sp_op_list found = {.keep = is_collective_or_reshard};
  int rc = sp_module_copy_make(m, NULL, &p, err), cap = 0;
  if (rc) return rc;
  sp_module *copy = p.module;
  copy->diags = m->diags;
  copy->warned = m->warned;
  if ((rc = sp_export_explicit_collectives(copy, err)) || (rc = sp_canonicalize(copy, err))) {
    sp_err_prefix(err, "exporting the plan");
    goto done;
  }
  sp_op_walk(copy->op, sp_op_list_collect, &found);
  if (found.oom) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; !rc && i < found.n; i++) {
    if (new_collective(&p, found.v[i]))
      rc = add_collective(m, &p, &cm, found.v[i], s->no_reduce_scatter, out, n, &cap, err);
    else if (found.v[i]->kind == SP_OP_SDY_RESHARD)
      rc = add_cross_mesh(m, &p, &cm, copy, found.v[i], out, n, &cap, err);
  }
done:
  sp_op_list_free(&found);
  sp_module_copy_free(&p);
  return rc;
}

int sp_plan_use_exported_collectives(sp_module *m, sp_plan_summary *s, sp_err *err) {
  sp_search_collective *list;
  int n;
  int rc = sp_plan_exported_collectives(m, s, &list, &n, err);
  if (rc) return rc;
  s->collectives = list;
  s->ncollectives = n;
  s->collective_s = s->reshard_s = 0;
  for (int i = 0; i < n; i++) {
    if (list[i].operand < 0) s->collective_s += list[i].c.seconds;
    else s->reshard_s += list[i].c.seconds;
  }
  s->comm_s = s->collective_s + s->reshard_s;
  s->total_s = s->compute_s + s->comm_s;
  return SP_OK;
}
