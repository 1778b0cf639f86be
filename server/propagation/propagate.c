/*
 * propagate.c - the worklist fixed point over a module (see propagate.h).
 *
 * Ops are numbered in pre-order once, at the start; a pointer-keyed hash table maps an op
 * back to its number, and per-number arrays hold the cached rule, the "pending" flag and the
 * stack. The stack holds every op at most once, so it never needs more than one slot per op.
 * All of this is malloc'd by the driver and freed before returning; the module only gains
 * shardings and rule attributes (in its own arena).
 */
#include "propagation/propagate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/op_attrs.h"

/* The scratch arena is replaced once it holds this much: one op's factor table and its
 * temporaries are a few KiB, so this recycles it every few thousand visits. */
#define SCRATCH_RECYCLE_BYTES (4u << 20)

enum { RULE_UNKNOWN = 0, RULE_PRESENT, RULE_NONE };

typedef struct driver {
  sp_module *m;
  const sp_propagate_options *o;
  sp_propagate_stats *stats;
  sp_arena *scratch;
  int nops;
  sp_op **ops;                /* pre-order */
  size_t map_cap;             /* power of two, > 2 * nops */
  sp_op **map_keys;
  int *map_vals;
  unsigned char *rule_state;  /* RULE_* per op */
  sp_rule **rules;
  bool *pending;
  int *stack;
  int nstack;
  sp_op *current;             /* the op being visited: never pushed */
  const char *mesh_name;      /* last mesh looked up by name */
  const sp_mesh *mesh;
} driver;

/* ------------------------------------------------------------------ op numbering */

static size_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static void map_put(driver *d, sp_op *op, int idx) {
  size_t mask = d->map_cap - 1, h = hash_ptr(op) & mask;
  while (d->map_keys[h]) h = (h + 1) & mask;
  d->map_keys[h] = op;
  d->map_vals[h] = idx;
}

static int map_get(const driver *d, const sp_op *op) {
  size_t mask = d->map_cap - 1, h = hash_ptr(op) & mask;
  while (d->map_keys[h]) {
    if (d->map_keys[h] == op) return d->map_vals[h];
    h = (h + 1) & mask;
  }
  return -1;
}

typedef struct collect {
  driver *d;
  int n;
} collect;

static bool count_op(sp_op *op, void *ctx) {
  collect *c = ctx;
  if (op != c->d->m->op) c->n++;
  return true;
}

static bool record_op(sp_op *op, void *ctx) {
  collect *c = ctx;
  if (op == c->d->m->op) return true;
  c->d->ops[c->n] = op;
  map_put(c->d, op, c->n);
  c->n++;
  return true;
}

static int number_ops(driver *d, sp_err *err) {
  collect c = {d, 0};
  sp_op_walk(d->m->op, count_op, &c);
  d->nops = c.n;
  d->map_cap = 16;
  while (d->map_cap < 2 * (size_t)d->nops + 1) d->map_cap *= 2;
  size_t n = (size_t)(d->nops ? d->nops : 1);
  d->ops = malloc(n * sizeof *d->ops);
  d->map_keys = calloc(d->map_cap, sizeof *d->map_keys);
  d->map_vals = malloc(d->map_cap * sizeof *d->map_vals);
  d->rule_state = calloc(n, sizeof *d->rule_state);
  d->rules = calloc(n, sizeof *d->rules);
  d->pending = calloc(n, sizeof *d->pending);
  d->stack = malloc(n * sizeof *d->stack);
  if (!d->ops || !d->map_keys || !d->map_vals || !d->rule_state || !d->rules || !d->pending ||
      !d->stack)
    return sp_err_set(err, SP_ENOMEM, "out of memory numbering %d ops", d->nops);
  c.n = 0;
  sp_op_walk(d->m->op, record_op, &c);
  return SP_OK;
}

static void driver_free(driver *d) {
  free(d->ops);
  free(d->map_keys);
  free(d->map_vals);
  free(d->rule_state);
  free(d->rules);
  free(d->pending);
  free(d->stack);
  sp_arena_free(d->scratch);
}

/* ------------------------------------------------------------------ worklist */

static void push(driver *d, sp_op *op) {
  if (!op || op == d->current) return;
  int i = map_get(d, op);
  if (i < 0 || d->pending[i]) return;
  d->pending[i] = true;
  d->stack[d->nstack++] = i;
}

static bool is_terminator(const sp_op *op) {
  return op->kind == SP_OP_FUNC_RETURN || op->kind == SP_OP_RETURN || op->kind == SP_OP_SDY_RETURN;
}

/* Pushes the ops next to a value whose sharding changed: its defining op (or the op owning
 * its block), then its users newest use first; a terminator stands for its parent op. */
static void notify(driver *d, sp_value *v) {
  d->stats->updates++;
  push(d, v->def ? v->def : sp_block_parent_op(v->block));
  for (sp_use *u = v->uses; u; u = u->next)
    push(d, is_terminator(u->owner) ? sp_op_parent(u->owner) : u->owner);
}

/* ------------------------------------------------------------------ errors and checks */

/* Prefixes the message in `err` with the op's place and name; returns `rc`. */
static int op_error(const driver *d, const sp_op *op, int rc, sp_err *err) {
  if (!err) return rc;
  char msg[SP_ERR_MSG_MAX];
  memcpy(msg, err->msg, sizeof msg);
  sp_err_set(err, rc, "%s:%d:%d: op '%s': %s", d->m->filename, op->loc.line, op->loc.col,
             op->name, msg);
  return rc;
}

static bool static_or_opaque(const sp_type *t) {
  if (!t) return true;
  if (t->kind == SP_TYPE_TUPLE) return false;
  return t->kind != SP_TYPE_TENSOR || sp_type_is_static_tensor(t);
}

/* Shardy's precondition: every op result is a ranked tensor of static shape (tokens and
 * other non-tensor types are let through, tuples are not). */
static int check_types(const driver *d, sp_err *err) {
  for (int i = 0; i < d->nops; i++) {
    const sp_op *op = d->ops[i];
    for (int r = 0; r < op->nresults; r++)
      if (!static_or_opaque(op->results[r].type))
        return sp_err_set(err, SP_EINVAL,
                          "%s:%d:%d: Shardy propagation only supports ranked tensors with a "
                          "static shape (result %d of '%s')",
                          d->m->filename, op->loc.line, op->loc.col, r, op->name);
  }
  return SP_OK;
}

static sp_op *main_func(const sp_module *m, sp_err *err) {
  sp_op *only = NULL;
  int nfuncs = 0;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) {
      only = op;
      nfuncs++;
    }
  if (nfuncs == 1) return only;
  sp_op *f = sp_module_lookup_func(m, "main");
  if (!f)
    sp_err_set(err, SP_EINVAL, "%s: no main function: the module has %d functions and none is "
               "named @main", m->filename, nfuncs);
  return f;
}

/* ------------------------------------------------------------------ meshes and rules */

static const sp_mesh *mesh_of(driver *d, const sp_sharding *s) {
  if (s->inline_mesh) return s->inline_mesh;
  if (!s->mesh_name) return NULL;
  if (d->mesh_name && strcmp(d->mesh_name, s->mesh_name) == 0) return d->mesh;
  const sp_mesh *mesh = sp_module_lookup_mesh(d->m, s->mesh_name);
  if (mesh) {
    d->mesh_name = s->mesh_name;
    d->mesh = mesh;
  }
  return mesh;
}

/* The op's common mesh: shardings on the empty mesh are skipped; none, two different meshes
 * or a maximal one give NULL. *ref is the first sharding naming it. */
static int common_mesh(driver *d, sp_sharding *const *v, int n, const sp_mesh **out,
                       const sp_sharding **ref, sp_err *err) {
  const sp_mesh *common = NULL;
  *out = NULL;
  *ref = NULL;
  for (int i = 0; i < n; i++) {
    if (!v[i]) continue;
    const sp_mesh *mesh = mesh_of(d, v[i]);
    if (!mesh)
      return sp_err_set(err, SP_EINVAL, "unknown mesh @%s", v[i]->mesh_name ? v[i]->mesh_name : "");
    if (sp_mesh_is_empty(mesh)) continue;
    if (!common) {
      common = mesh;
      *ref = v[i];
    } else if (mesh != common && !sp_mesh_equal(mesh, common)) {
      *ref = NULL;
      return SP_OK; /* shardings on different meshes never meet */
    }
  }
  if (common && !sp_mesh_is_maximal(common)) *out = common;
  return SP_OK;
}

/* The identity rule of a tensor type: one factor per dim (for barriers and func results).
 * NULL if the type is not a static tensor. */
static sp_rule *identity_rule(sp_arena *a, const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR || !sp_type_is_static_tensor(t)) return NULL;
  int rank = t->rank;
  sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
  sp_rule_tensor *tensors = sp_arena_calloc(a, 2, sizeof *tensors);
  sp_rule_dim *dims = sp_arena_calloc(a, (size_t)(rank ? rank : 1), sizeof *dims);
  int *idx = sp_arena_alloc(a, (size_t)(rank ? rank : 1) * sizeof *idx);
  r->factors = sp_arena_calloc(a, (size_t)(rank ? rank : 1), sizeof *r->factors);
  if (!r || !tensors || !dims || !idx || !r->factors) return NULL;
  for (int i = 0; i < rank; i++) {
    idx[i] = i;
    dims[i] = (sp_rule_dim){1, &idx[i]};
    r->factors[i].size = t->dims[i];
  }
  tensors[0] = tensors[1] = (sp_rule_tensor){rank, dims};
  r->nfactors = rank;
  r->noperands = r->nresults = 1;
  r->operands = &tensors[0];
  r->results = &tensors[1];
  return r;
}

static void keep_warning(driver *d) {
  sp_rules_diag *diag = d->o->diag;
  if (!diag || !diag->has_warning || d->stats->nwarnings >= 2) return;
  memcpy(d->stats->warnings[d->stats->nwarnings++], diag->warning, SP_ERR_MSG_MAX);
}

/* The op's rule, from the registry on the first visit (then attached to the op). */
static int rule_of(driver *d, int idx, sp_rule **out, sp_err *err) {
  *out = d->rules[idx];
  if (d->rule_state[idx] != RULE_UNKNOWN) return SP_OK;
  sp_op *op = d->ops[idx];
  sp_rules_options ro = {d->o->conservative};
  sp_rule *r = NULL;
  int rc = sp_rules_for_op(d->m->arena, op, &ro, &r, d->o->diag, err);
  keep_warning(d);
  if (rc) return rc;
  if (r && !sp_op_rule(op)) {
    sp_attr at = {.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = r};
    if (sp_attrs_set(d->m->arena, &op->attrs, &at))
      return sp_err_set(err, SP_ENOMEM, "out of memory attaching a sharding rule");
  }
  d->rules[idx] = *out = r;
  d->rule_state[idx] = r ? RULE_PRESENT : RULE_NONE;
  return SP_OK;
}

static sp_prop_direction barrier_direction(const sp_op *op) {
  const char *s = sp_op_get_str(op, "allowed_direction");
  if (s && strcmp(s, "FORWARD") == 0) return SP_DIR_FORWARD;
  if (s && strcmp(s, "BACKWARD") == 0) return SP_DIR_BACKWARD;
  if (s && strcmp(s, "BOTH") == 0) return SP_DIR_BOTH;
  return SP_DIR_NONE;
}

/* ------------------------------------------------------------------ visiting an op */

/* Gives every result of `op` without a sharding a fully open one, once some result has one
 * (Shardy's per-value sharding lists always cover all results). */
static int fill_placeholders(driver *d, sp_op *op, const sp_sharding *ref, sp_err *err) {
  for (int j = 0; j < op->nresults; j++) {
    sp_value *v = &op->results[j];
    if (v->sharding || !v->type || v->type->kind != SP_TYPE_TENSOR || v->type->rank < 0) continue;
    sp_sharding *s = sp_sharding_new(d->m->arena, ref->mesh_name, v->type->rank, false);
    if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
    s->inline_mesh = ref->inline_mesh;
    v->sharding = s;
  }
  return SP_OK;
}

static int visit(driver *d, int idx, sp_err *err) {
  sp_op *op = d->ops[idx];
  const sp_propagate_options *o = d->o;
  sp_arena *s = d->scratch;
  sp_rule *rule = NULL;
  sp_prop_direction *dirs = NULL;
  int rc;
  d->stats->visits++;

  if (op->kind == SP_OP_SDY_PROPAGATION_BARRIER) {
    if (op->noperands != 1 || op->nresults != 1) return SP_OK;
    if (!(rule = identity_rule(s, op->results[0].type))) return SP_OK;
    dirs = sp_arena_alloc(s, (size_t)(rule->nfactors ? rule->nfactors : 1) * sizeof *dirs);
    if (!dirs) return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int f = 0; f < rule->nfactors; f++) dirs[f] = barrier_direction(op);
  } else {
    if ((rc = rule_of(d, idx, &rule, err))) return rc;
    if (!rule) return SP_OK;
  }
  if (rule->noperands != op->noperands || rule->nresults != op->nresults) return SP_OK;

  int n = op->noperands + op->nresults;
  sp_sharding **in = sp_arena_alloc(s, (size_t)(n ? n : 1) * sizeof *in);
  sp_sharding **out = sp_arena_alloc(s, (size_t)(n ? n : 1) * sizeof *out);
  if (!in || !out) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < op->noperands; i++)
    in[i] = op->operands[i].value ? op->operands[i].value->sharding : NULL;
  for (int j = 0; j < op->nresults; j++) in[op->noperands + j] = op->results[j].sharding;

  const sp_mesh *mesh;
  const sp_sharding *ref;
  if ((rc = common_mesh(d, in, n, &mesh, &ref, err))) return op_error(d, op, rc, err);
  if (!mesh) return SP_OK;

  if (!dirs && o->direction) {
    dirs = sp_arena_alloc(s, (size_t)(rule->nfactors ? rule->nfactors : 1) * sizeof *dirs);
    if (!dirs) return sp_err_set(err, SP_ENOMEM, "out of memory");
    o->direction(op, rule, dirs, o->direction_ctx);
  }
  sp_prop_options po = {o->strategy, o->conservative, sp_rules_is_elementwise(op), dirs};
  if (o->conflicts) {
    o->conflicts->op = idx;
    o->conflicts->op_name = op->name;
  }
  rc = sp_factor_propagate_op(d->m->arena, s, rule, mesh, ref, in, in + op->noperands, &po, out,
                              out + op->noperands, NULL, o->conflicts, err);
  if (rc) return op_error(d, op, rc, err);
  d->stats->rule_visits++;

  /* Operands first, then results, each notified once its new sharding is in place. */
  bool result_changed = false;
  for (int i = 0; i < n; i++) {
    if (!out[i]) continue;
    sp_value *v = i < op->noperands ? op->operands[i].value : &op->results[i - op->noperands];
    if (sp_sharding_equal(v->sharding, out[i])) continue; /* e.g. add %x, %x */
    v->sharding = out[i];
    result_changed = result_changed || i >= op->noperands;
    notify(d, v);
  }
  if (result_changed && op->nresults > 1) return fill_placeholders(d, op, ref, err);
  return SP_OK;
}

/* ------------------------------------------------------------------ main function results */

/* Propagates between each value the main function returns and the function's result
 * sharding, as an identity op in both directions. */
static int sync_func_results(driver *d, sp_op *fn, sp_err *err) {
  sp_region *body = fn->nregions ? &fn->regions[0] : NULL;
  if (!body || !body->nblocks || !fn->func) return SP_OK;
  sp_op *ret = body->blocks[0]->last;
  if (!ret || ret->kind != SP_OP_FUNC_RETURN) return SP_OK;
  int n = ret->noperands < fn->func->nresults ? ret->noperands : fn->func->nresults;
  for (int i = 0; i < n; i++) {
    sp_value *v = ret->operands[i].value;
    sp_rule *rule = v ? identity_rule(d->scratch, v->type) : NULL;
    if (!rule) continue;
    sp_sharding *in[2] = {v->sharding, fn->func->result_shardings[i]}, *out[2] = {NULL, NULL};
    const sp_mesh *mesh;
    const sp_sharding *ref;
    int rc = common_mesh(d, in, 2, &mesh, &ref, err);
    if (rc) return op_error(d, fn, rc, err);
    if (!mesh) continue;
    sp_prop_options po = {d->o->strategy, false, false, NULL};
    rc = sp_factor_propagate_op(d->m->arena, d->scratch, rule, mesh, ref, in, in + 1, &po, out,
                                out + 1, NULL, NULL, err);
    if (rc) return op_error(d, fn, rc, err);
    if (out[0]) {
      v->sharding = out[0];
      d->stats->updates++;
    }
    if (out[1]) {
      fn->func->result_shardings[i] = out[1];
      d->stats->updates++;
    }
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ entry points */

static int recycle_scratch(driver *d, sp_err *err) {
  if (sp_arena_bytes(d->scratch) <= SCRATCH_RECYCLE_BYTES) return SP_OK;
  sp_arena_free(d->scratch);
  d->scratch = sp_arena_new(0);
  return d->scratch ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory");
}

int sp_propagate_module(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                        sp_err *err) {
  static const sp_propagate_options defaults = {.strategy = SP_PROP_BASIC};
  sp_propagate_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  driver d = {0};
  d.m = m;
  d.o = o ? o : &defaults;
  d.stats = stats;
  int rc;
  sp_op *fn = main_func(m, err);
  if (!fn) return SP_EINVAL;
  if (!(d.scratch = sp_arena_new(0))) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if ((rc = number_ops(&d, err)) || (rc = check_types(&d, err))) goto done;
  if ((rc = sync_func_results(&d, fn, err))) goto done;

  /* Pre-order: the first op must be popped first. */
  for (int i = d.nops - 1; i >= 0; i--) {
    d.pending[i] = true;
    d.stack[d.nstack++] = i;
  }
  while (d.nstack) {
    int i = d.stack[--d.nstack];
    d.pending[i] = false;
    d.current = d.ops[i];
    rc = visit(&d, i, err);
    d.current = NULL;
    if (rc || (rc = recycle_scratch(&d, err))) goto done;
  }
  if ((rc = sync_func_results(&d, fn, err))) goto done;
  if (!d.o->keep_sharding_rules) sp_propagate_drop_rules(m);
done:
  driver_free(&d);
  return rc;
}

static bool drop_rule(sp_op *op, void *ctx) {
  (void)ctx;
  sp_attr *at = sp_op_attr(op, SP_ATTR_SHARDING_RULE);
  if (at && at->kind == SP_ATTR_RULE && at->u.rule && !at->u.rule->custom)
    sp_attrs_remove(&op->attrs, SP_ATTR_SHARDING_RULE);
  return true;
}

void sp_propagate_drop_rules(sp_module *m) { sp_op_walk(m->op, drop_rule, NULL); }
