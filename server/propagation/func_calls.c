/*
 * func_calls.c - calls <-> named computations around propagation (see func_calls.h).
 */
#include "propagation/func_calls.h"

#include <stdlib.h>
#include <string.h>

#include "ir/clone.h"
#include "ir/diag.h"
#include "propagation/data_flow_edges.h"
#include "propagation/mesh_import.h"
#include "propagation/sharding_walk.h"

static bool collect_calls(sp_op *op, void *ctx) {
  return op->kind != SP_OP_FUNC_CALL || sp_op_list_push(ctx, op);
}

static sp_op *callee_of(const sp_module *m, const sp_op *call) {
  const char *name = sp_op_get_str(call, "callee");
  return name ? sp_module_lookup_func(m, name) : NULL;
}

static sp_block *entry_block(const sp_op *fn) {
  return fn->nregions == 1 && fn->regions[0].nblocks ? fn->regions[0].blocks[0] : NULL;
}

static bool is_private(const sp_op *fn) {
  const char *vis = sp_op_get_str(fn, "sym_visibility");
  return vis && strcmp(vis, "private") == 0;
}

static int set_str_attr(sp_arena *a, sp_op *op, const char *name, sp_attr_kind kind,
                        const char *value) {
  sp_attr at = {.name = name, .kind = kind, .u.s = value};
  return sp_attrs_set(a, &op->attrs, &at);
}

/* A complete per-value list from `v[0..n)` (NULL entries become fully open on the mesh of the
 * first sharding); NULL when no entry has a sharding. `types` gives each entry's type. */
static sp_sharding **complete_list(sp_arena *a, sp_sharding *const *v, sp_type *const *types,
                                   int n, bool *oom) {
  const sp_sharding *first = NULL;
  for (int i = 0; i < n && !first; i++) first = v[i];
  if (!first) return NULL;
  sp_sharding **out = sp_arena_alloc(a, (size_t)n * sizeof *out);
  if (!out) {
    *oom = true;
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    int rank = sp_sharding_rank_of(types[i]);
    out[i] = v[i] ? v[i] : sp_sharding_open_like(a, first, rank < 0 ? 0 : rank);
    if (!out[i]) *oom = true;
  }
  return out;
}

/* ------------------------------------------------------------------ func -> call */

int sp_func_calls_shardings_to_calls(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, collect_calls, &l);
  bool oom = l.oom;
  for (int i = 0; !oom && i < l.n; i++) {
    sp_op *call = l.v[i], *fn = callee_of(m, call);
    if (!fn || !fn->func || !fn->func->result_shardings || fn->func->nresults != call->nresults)
      continue;
    bool has = false;
    for (int k = 0; k < call->nresults; k++) has |= call->results[k].sharding != NULL;
    if (has) continue;
    sp_sharding **v = complete_list(m->arena, fn->func->result_shardings, fn->func->result_types,
                                    call->nresults, &oom);
    for (int k = 0; v && k < call->nresults; k++) call->results[k].sharding = v[k];
  }
  sp_op_list_free(&l);
  return oom ? sp_err_set(err, SP_ENOMEM, "out of memory copying func shardings to calls") : SP_OK;
}

/* ------------------------------------------------------------------ import */

/* A call inside its own callee (directly or through copied bodies) would be imported forever. */
static bool is_recursive(const sp_op *call, const char *callee) {
  for (const sp_op *p = sp_op_parent(call); p; p = sp_op_parent(p)) {
    const char *name = p->kind == SP_OP_SDY_NAMED_COMPUTATION ? sp_op_get_str(p, "name")
                       : p->kind == SP_OP_FUNC                 ? sp_op_get_str(p, "sym_name")
                                                               : NULL;
    if (name && strcmp(name, callee) == 0) return true;
  }
  return false;
}

/* The in_shardings of a computation imported from `fn`: its argument shardings, those without
 * one fully open on the mesh of the first argument sharding that is not on a maximal mesh;
 * NULL when no argument has such a sharding (an open sharding needs a mesh with axes). */
static sp_sharding **import_in_shardings(const sp_module *m, const sp_op *fn,
                                         const sp_block *body, bool *oom) {
  const sp_sharding *first = NULL;
  for (int i = 0; i < body->nargs && !first; i++) {
    const sp_sharding *s = body->args[i]->sharding;
    if (s && !sp_mesh_is_maximal(sp_module_sharding_mesh(m, s))) first = s;
  }
  if (!first) return NULL;
  sp_sharding **out = sp_arena_alloc(m->arena, (size_t)body->nargs * sizeof *out);
  if (!out) {
    *oom = true;
    return NULL;
  }
  for (int i = 0; i < body->nargs; i++) {
    int rank = sp_sharding_rank_of(fn->func->arg_types[i]);
    out[i] = body->args[i]->sharding ? body->args[i]->sharding
                                     : sp_sharding_open_like(m->arena, first, rank < 0 ? 0 : rank);
    if (!out[i]) *oom = true;
  }
  return out;
}

static int import_call(sp_module *m, sp_op *call, sp_op *fn, bool add_edges, sp_err *err) {
  sp_arena *a = m->arena;
  const char *name = sp_op_get_str(fn, "sym_name");
  const char *original = sp_op_get_str(fn, "sdy.original_func_name");
  sp_block *body = entry_block(fn);
  sp_type **types = call->nresults ? sp_arena_alloc(a, (size_t)call->nresults * sizeof *types) : NULL;
  if (call->nresults && !types) goto oom;
  for (int i = 0; i < call->nresults; i++) types[i] = call->results[i].type;
  sp_op *nc = sp_op_create(a, "sdy.named_computation", call->noperands, NULL, call->nresults,
                           types, 1);
  if (!nc || set_str_attr(a, nc, "name", SP_ATTR_STR, original ? original : name)) goto oom;
  nc->loc = call->loc;
  for (int i = 0; i < call->noperands; i++) sp_op_set_operand(nc, i, call->operands[i].value);
  /* The call's other attributes (frontend attributes, ...) stay with the computation. */
  for (int i = 0; i < call->attrs.n; i++)
    if (strcmp(call->attrs.v[i].name, "callee") != 0 && sp_attrs_set(a, &nc->attrs, &call->attrs.v[i]))
      goto oom;

  bool oom = false;
  sp_sharding **in = import_in_shardings(m, fn, body, &oom);
  if (oom) goto oom;
  if (in) {
    sp_attr at = {.name = "in_shardings", .kind = SP_ATTR_SHARDINGS};
    at.u.shardings.n = body->nargs;
    at.u.shardings.v = in;
    if (sp_attrs_set(a, &nc->attrs, &at)) goto oom;
  }

  sp_value_map map;
  sp_value_map_init(&map);
  int rc = sp_region_clone_into(a, &fn->regions[0], &nc->regions[0], &map);
  sp_value_map_free(&map);
  if (rc) goto oom;
  sp_block *copy = nc->regions[0].blocks[0];
  for (int i = 0; i < copy->nargs; i++) {
    copy->args[i]->sharding = NULL;
    memset(&copy->args[i]->attrs, 0, sizeof copy->args[i]->attrs);
  }
  if (copy->last && copy->last->kind == SP_OP_FUNC_RETURN) {
    copy->last->kind = SP_OP_SDY_RETURN;
    copy->last->name = sp_op_kind_name(SP_OP_SDY_RETURN);
  }
  sp_op_replace(call, nc);
  return add_edges ? sp_data_flow_edges_add_within(m, nc, err) : SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory importing a call to @%s", name);
}

/* Whether a function carries an argument or result sharding (cloning it per call site may then
 * be a surprise worth a warning). */
static bool has_shardings(const sp_op *fn) {
  const sp_block *body = entry_block(fn);
  for (int i = 0; body && i < body->nargs; i++)
    if (body->args[i]->sharding) return true;
  for (int i = 0; fn->func->result_shardings && i < fn->func->nresults; i++)
    if (fn->func->result_shardings[i]) return true;
  return false;
}

static bool has_call_to(sp_op *op, void *ctx) {
  const char *name = ctx;
  if (op->kind != SP_OP_FUNC_CALL) return true;
  const char *callee = sp_op_get_str(op, "callee");
  return !(callee && strcmp(callee, name) == 0);
}

int sp_func_calls_import(sp_module *m, bool add_edges, sp_err *err) {
  sp_op_list done = {0}; /* callees imported at least once */
  int rc = SP_OK;
  for (;;) {
    sp_op_list l = {0};
    sp_op_walk(m->op, collect_calls, &l);
    if (l.oom) {
      sp_op_list_free(&l);
      rc = sp_err_set(err, SP_ENOMEM, "out of memory importing calls");
      break;
    }
    int imported = 0;
    for (int i = 0; !rc && i < l.n; i++) {
      sp_op *call = l.v[i], *fn = callee_of(m, call);
      sp_block *body = fn ? entry_block(fn) : NULL;
      if (!body || fn->regions[0].nblocks != 1 || !fn->func || fn->func->nargs != body->nargs ||
          fn->func->nresults != call->nresults || body->nargs != call->noperands)
        continue;
      const char *name = sp_op_get_str(fn, "sym_name");
      if (is_recursive(call, name)) {
        rc = sp_error_at(err, SP_EUNSUPPORTED, m, call->loc, "recursive call to @%s cannot be "
                         "imported as a named computation", name);
        break;
      }
      bool seen = sp_op_list_contains(&done, fn);
      if (seen && has_shardings(fn))
        sp_module_warn(m, call->loc, "function @%s has multiple call ops, we need to clone the "
                       "function body for each call", name);
      else if (!sp_op_list_push(&done, fn))
        rc = sp_err_set(err, SP_ENOMEM, "out of memory importing calls");
      if (!rc) rc = import_call(m, call, fn, add_edges, err);
      imported++;
    }
    sp_op_list_free(&l);
    if (rc || !imported) break;
  }
  /* Imported functions nobody calls any more are gone (their bodies live in the computations). */
  for (int k = 0; !rc && k < done.n; k++) {
    const char *name = sp_op_get_str(done.v[k], "sym_name");
    if (name && sp_op_walk(m->op, has_call_to, (void *)name)) sp_op_erase(done.v[k]);
  }
  sp_op_list_free(&done);
  return rc;
}

/* ------------------------------------------------------------------ pre-order funcs */

typedef struct func_graph {
  sp_op **funcs;
  int n;
  bool *placed;
  const sp_module *m;
} func_graph;

typedef struct caller_scan {
  const func_graph *g;
  const sp_op *target;
  bool found;
} caller_scan;

static bool calls_target(sp_op *op, void *ctx) {
  caller_scan *s = ctx;
  if (op->kind == SP_OP_FUNC_CALL && callee_of(s->g->m, op) == s->target) s->found = true;
  return !s->found;
}

/* Whether an unplaced function other than `f` calls `f`. */
static bool has_unplaced_caller(const func_graph *g, int f) {
  for (int i = 0; i < g->n; i++) {
    if (i == f || g->placed[i]) continue;
    caller_scan s = {g, g->funcs[f], false};
    sp_op_walk(g->funcs[i], calls_target, &s);
    if (s.found) return true;
  }
  return false;
}

int sp_func_calls_pre_order(sp_module *m, sp_err *err) {
  func_graph g = {NULL, 0, NULL, m};
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) g.n += op->kind == SP_OP_FUNC;
  if (!g.n) return SP_OK;
  g.funcs = malloc((size_t)g.n * sizeof *g.funcs);
  g.placed = calloc((size_t)g.n, sizeof *g.placed);
  if (!g.funcs || !g.placed) {
    free(g.funcs);
    free(g.placed);
    return sp_err_set(err, SP_ENOMEM, "out of memory ordering functions");
  }
  int k = 0;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) g.funcs[k++] = op;
  /* Stable topological order: the first function (in module order) without unplaced callers
   * goes next; a cycle falls back to module order. */
  for (int placed = 0; placed < g.n; placed++) {
    int pick = -1;
    for (int i = 0; i < g.n && pick < 0; i++)
      if (!g.placed[i] && !has_unplaced_caller(&g, i)) pick = i;
    for (int i = 0; i < g.n && pick < 0; i++)
      if (!g.placed[i]) pick = i;
    g.placed[pick] = true;
    sp_op_unlink(g.funcs[pick]);
    sp_block_append(sp_module_body(m), g.funcs[pick]);
  }
  free(g.funcs);
  free(g.placed);
  return SP_OK;
}

/* ------------------------------------------------------------------ results and reshards */

int sp_func_calls_results_from_returns(sp_module *m, sp_err *err) {
  (void)err;
  for (sp_op *fn = sp_module_body(m)->first; fn; fn = fn->next) {
    sp_block *entry = fn->kind == SP_OP_FUNC ? entry_block(fn) : NULL;
    if (!entry || !is_private(fn) || !fn->func || !fn->func->result_shardings) continue;
    sp_op *ret = entry->last;
    if (!ret || ret->kind != SP_OP_FUNC_RETURN) continue;
    for (int i = 0; i < ret->noperands && i < fn->func->nresults; i++) {
      sp_value *v = ret->operands[i].value;
      if (v) fn->func->result_shardings[i] = v->sharding;
    }
  }
  return SP_OK;
}

int sp_func_calls_insert_reshards(sp_module *m, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, collect_calls, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) {
    sp_op *call = l.v[i], *fn = callee_of(m, call);
    if (!fn || !fn->func || fn->func->nresults != call->nresults || !fn->func->result_shardings)
      continue;
    sp_op *const anchor = call;
    for (int k = 0; k < call->nresults; k++) {
      sp_value *r = &call->results[k];
      sp_sharding *want = fn->func->result_shardings[k];
      if (r->sharding && !sp_sharding_same_axes(r->sharding, want)) {
        sp_op *rs = sp_op_create(m->arena, "sdy.reshard", 1, NULL, 1, &r->type, 0);
        if (!rs) {
          rc = SP_ENOMEM;
          break;
        }
        rs->loc = call->loc;
        rs->results[0].sharding = r->sharding;
        sp_value_replace_all_uses(r, &rs->results[0]);
        sp_op_set_operand(rs, 0, r);
        sp_op_insert_after(anchor, rs); /* right after the call: later results come first */
      }
      /* A callee result without a sharding is replicated: say so on the call's mesh. */
      if (!want && r->sharding) {
        want = sp_sharding_new(m->arena, r->sharding->mesh_name, r->sharding->rank, true);
        if (!want) {
          rc = SP_ENOMEM;
          break;
        }
        want->inline_mesh = r->sharding->inline_mesh;
      }
      r->sharding = want;
    }
  }
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory inserting call reshards") : SP_OK;
}
