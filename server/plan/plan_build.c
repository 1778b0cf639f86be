/*
 * plan_build.c - a module (and its propagation report and search summary) as plan data
 * (plan.h): values by position with their sharding in four notations, the module text, the
 * op tables, conflicts, warnings, collectives, costs, solver statistics and mesh.
 *
 * Invariant: every string and array of the plan lives in p->arena; the cJSON trees (op
 * tables, conflicts) are owned by the plan and deleted by sp_plan_free.
 */
#include "plan/plan_int.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/ptr_map.h"
#include "mlir/mlir.h"
#include "plan/sharding_forms.h"
#include "propagation/trace.h"
#include "search/plan_search.h"
#include "solver/solver.h"

void sp_plan_free(sp_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->nops; i++) cJSON_Delete(p->ops[i].table);
  cJSON_Delete(p->conflicts);
  sp_arena_free(p->arena);
}

sp_plan *sp__plan_new(void) {
  sp_arena *a = sp_arena_new(0);
  if (!a) return NULL;
  sp_plan *p = sp_arena_calloc(a, 1, sizeof *p);
  if (!p) {
    sp_arena_free(a);
    return NULL;
  }
  p->arena = a;
  return p;
}

/* ------------------------------------------------------------------ op numbers */

typedef struct numbering {
  sp_ptr_map *map;
  const sp_op *top;
  int next;
  int status;
} numbering;

static bool number_op(sp_op *op, void *ctx) {
  numbering *n = ctx;
  if (op == n->top) return true;
  bool fresh;
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(n->map, op, n->next, &fresh);
  if (!s) {
    n->status = SP_ENOMEM;
    return false;
  }
  if (fresh) n->next++;
  return true;
}

int sp__plan_number_ops(sp_module *m, sp_ptr_map *map, int *next, sp_err *err) {
  numbering n = {map, m->op, *next, SP_OK};
  sp_op_walk(m->op, number_op, &n);
  *next = n.next;
  return n.status ? sp_err_set(err, SP_ENOMEM, "out of memory numbering ops") : SP_OK;
}

/* ------------------------------------------------------------------ values */

typedef struct op_ref {
  sp_op *op;
  int number;
} op_ref;

typedef struct builder {
  sp_plan *p;
  sp_module *m;
  sp_mlir_names *names;
  sp_ptr_map *numbers;     /* op -> number */
  sp_ptr_map funcs;        /* func.func op -> function index */
  sp_ptr_map vals;         /* sp_value -> index in p->values */
  sp_ptr_map texts;        /* origin texts and axis names made once (fill_origins) */
  op_ref *ops;             /* every op by number (build_values), for the op tables' operands */
  int nops;
  int cap;
  int status;
  sp_err *err;
} builder;

static const char *str(builder *b, const char *s) {
  const char *c = sp_arena_strdup(b->p->arena, s ? s : "");
  if (!c) b->status = SP_ENOMEM;
  return c;
}

static const char *sb_str(builder *b, sp_strbuf *sb) {
  const char *c = sp_strbuf_ok(sb) ? str(b, sp_strbuf_str(sb)) : NULL;
  if (!c) b->status = SP_ENOMEM;
  sp_strbuf_free(sb);
  return c;
}

/* "x", or "x:(1)2" for a sub-axis. */
static const char *axis_text(builder *b, const sp_axis_ref *r) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (r->size) sp_strbuf_printf(&sb, "%s:(%lld)%lld", r->name, (long long)r->pre, (long long)r->size);
  else sp_strbuf_puts(&sb, r->name);
  return sb_str(b, &sb);
}

static const char **axis_list(builder *b, const sp_axis_ref *v, int n) {
  const char **out = sp_arena_calloc(b->p->arena, (size_t)(n ? n : 1), sizeof *out);
  if (!out) {
    b->status = SP_ENOMEM;
    return NULL;
  }
  for (int i = 0; i < n; i++) out[i] = axis_text(b, &v[i]);
  return out;
}

/* Fills the sharding fields of `pv` from `s` (NULL: unsharded). */
static void fill_sharding(builder *b, sp_plan_value *pv, const sp_sharding *s) {
  pv->sharded = s != NULL;
  if (!s) return;
  sp_strbuf sb = SP_STRBUF_INIT;
  if (s->mesh_name) sp_strbuf_puts(&sb, s->mesh_name);
  else if (s->inline_mesh) sp_mesh_print(&sb, s->inline_mesh);
  pv->mesh = sb_str(b, &sb);
  pv->rank = s->rank;
  pv->dims = sp_arena_calloc(b->p->arena, (size_t)(s->rank ? s->rank : 1), sizeof *pv->dims);
  if (!pv->dims) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int d = 0; d < s->rank; d++) {
    pv->dims[d].naxes = s->dims[d].naxes;
    pv->dims[d].axes = axis_list(b, s->dims[d].axes, s->dims[d].naxes);
    pv->dims[d].closed = s->dims[d].closed;
    pv->dims[d].priority = s->dims[d].priority;
  }
  pv->nreplicated = s->nreplicated;
  pv->replicated = axis_list(b, s->replicated, s->nreplicated);
  pv->nunreduced = s->nunreduced;
  pv->unreduced = axis_list(b, s->unreduced, s->nunreduced);
  sp_strbuf_puts(&sb, "#sdy.sharding");
  sp_sharding_print(&sb, s);
  pv->sdy = sb_str(b, &sb);
  sp_plan_pspec(&sb, s);
  pv->pspec = sb_str(b, &sb);
  if (sp_plan_gspmd(&sb, s, sp_module_sharding_mesh(b->m, s)) != SP_OK) sp_strbuf_reset(&sb);
  pv->gspmd = sb_str(b, &sb);
}

static sp_plan_value *add_value(builder *b) {
  sp_plan *p = b->p;
  if (sp_arena_grow(p->arena, (void **)&p->values, &b->cap, p->nvalues, sizeof *p->values)) {
    b->status = SP_ENOMEM;
    return NULL;
  }
  sp_plan_value *pv = &p->values[p->nvalues++];
  memset(pv, 0, sizeof *pv);
  return pv;
}

static int cmp_origin(const void *x, const void *y) {
  const sp_plan_origin *a = x, *c = y;
  return strcmp(a->axis, c->axis);
}

/* An origin's text as seen from `self`, made once per distinct origin: a module has a few
 * (its arguments, results, constraints), its values many. The cache key packs the origin
 * into a pointer-sized integer (never a real address: kind + 1 in the top bits). */
static const char *origin_text(builder *b, const sp_origin *o, const void *self) {
  if (o->owner == self) return "self";
  uintptr_t key = ((uintptr_t)(o->kind + 1) << 48) | ((uintptr_t)(o->id & 0xffffff) << 24) |
                  (uintptr_t)(o->index & 0xffffff);
  intptr_t hit = sp_ptr_map_get(&b->texts, (const void *)key, 0);
  if (hit) return (const char *)hit;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_trace_origin_print(&sb, o, self);
  const char *t = sb_str(b, &sb);
  if (t && sp_ptr_map_put(&b->texts, (const void *)key, (intptr_t)t)) b->status = SP_ENOMEM;
  return t;
}

/* An axis's text, a whole axis's made once per name. */
static const char *origin_axis(builder *b, const sp_axis_ref *r) {
  if (r->size) return axis_text(b, r);
  intptr_t hit = sp_ptr_map_get(&b->texts, r->name, 0);
  if (hit) return (const char *)hit;
  const char *t = axis_text(b, r);
  if (t && sp_ptr_map_put(&b->texts, r->name, (intptr_t)t)) b->status = SP_ENOMEM;
  return t;
}

/* The origins the trace recorded on `node`, printed as seen from `self` (trace.h). */
static void fill_origins(builder *b, sp_plan_value *pv, const void *node, const void *self) {
  int n = 0;
  const sp_trace *t = sp_trace_get(b->m);
  const sp_axis_origin *v = t && node ? sp_trace_origins(t, node, &n) : NULL;
  if (!v || !n) return;
  pv->origins = sp_arena_calloc(b->p->arena, (size_t)n, sizeof *pv->origins);
  if (!pv->origins) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int i = 0; i < n && !b->status; i++) {
    sp_plan_origin *po = &pv->origins[pv->norigins++];
    po->axis = origin_axis(b, &v[i].axis);
    po->origin = origin_text(b, &v[i].origin, self);
  }
  if (!b->status && n > 1) qsort(pv->origins, (size_t)pv->norigins, sizeof *pv->origins, cmp_origin);
}

static void put_value(builder *b, sp_plan_pos pos, const sp_value *v, const sp_type *type,
                      const sp_sharding *s, const void *node, const void *self) {
  sp_plan_value *pv = add_value(b);
  if (!pv) return;
  if (v && sp_ptr_map_put(&b->vals, v, b->p->nvalues - 1)) b->status = SP_ENOMEM;
  pv->pos = pos;
  sp_strbuf sb = SP_STRBUF_INIT;
  if (v) sp_mlir_names_value(b->names, &sb, v);
  else sp_strbuf_printf(&sb, "result %d", pos.index);
  pv->name = sb_str(b, &sb);
  sp_type_print(&sb, type);
  pv->type = sb_str(b, &sb);
  fill_sharding(b, pv, s);
  if (!b->status) fill_origins(b, pv, node, self);
}

/* The function index of the func.func that (transitively) holds `op`, -1 if none. */
static int func_of(builder *b, const sp_op *op) {
  for (const sp_op *o = op; o; o = sp_op_parent(o))
    if (o->kind == SP_OP_FUNC) return (int)sp_ptr_map_get(&b->funcs, o, -1);
  return -1;
}

static int cmp_op_ref(const void *x, const void *y) {
  const op_ref *a = x, *c = y;
  return (a->number > c->number) - (a->number < c->number);
}

static bool collect_op(sp_op *op, void *ctx) {
  void **c = ctx;
  builder *b = c[0];
  op_ref **v = c[1];
  int *n = c[2], *cap = c[3];
  if (op == b->m->op) return true;
  if (sp_arena_grow(b->p->arena, (void **)v, cap, *n, sizeof **v)) {
    b->status = SP_ENOMEM;
    return false;
  }
  (*v)[(*n)++] = (op_ref){op, (int)sp_ptr_map_get(b->numbers, op, -1)};
  return true;
}

static void build_values(builder *b) {
  /* Functions: arguments and result shardings. */
  int nf = 0;
  for (sp_op *op = sp_module_body(b->m)->first; op; op = op->next) {
    if (op->kind != SP_OP_FUNC || !op->func) continue;
    if (sp_ptr_map_put(&b->funcs, op, nf)) {
      b->status = SP_ENOMEM;
      return;
    }
    const sp_func_info *fi = op->func;
    sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
    for (int i = 0; i < fi->nargs; i++) {
      sp_value *v = entry && i < entry->nargs ? entry->args[i] : NULL;
      put_value(b, (sp_plan_pos){SP_PLAN_ARG, nf, -1, i}, v, fi->arg_types[i],
                v ? v->sharding : NULL, v, v);
    }
    for (int i = 0; i < fi->nresults; i++)
      put_value(b, (sp_plan_pos){SP_PLAN_FUNC_RESULT, nf, -1, i}, NULL, fi->result_types[i],
                fi->result_shardings ? fi->result_shardings[i] : NULL,
                fi->result_shardings ? sp_trace_func_result_node(op, i) : NULL,
                fi->result_shardings ? sp_trace_func_result(op, i) : NULL);
    nf++;
  }
  /* Op results, in op-number order. */
  op_ref *ops = NULL;
  int n = 0, cap = 0;
  void *ctx[4] = {b, &ops, &n, &cap};
  sp_op_walk(b->m->op, collect_op, ctx);
  qsort(ops, (size_t)n, sizeof *ops, cmp_op_ref);
  for (int k = 0; k < n && !b->status; k++) {
    sp_op *op = ops[k].op;
    for (int r = 0; r < op->nresults; r++)
      put_value(b, (sp_plan_pos){SP_PLAN_OP_RESULT, func_of(b, op), ops[k].number, r},
                &op->results[r], op->results[r].type, op->results[r].sharding, &op->results[r],
                &op->results[r]);
  }
  b->ops = ops;
  b->nops = n;
}

/* Adds "operand_values" to an op's table: the plan value index of each operand (-1 for a
 * value the plan does not list), so a reader can follow the data flow between ops. */
static void add_operand_values(builder *b, sp_plan_op *po) {
  op_ref key = {NULL, po->op};
  op_ref *r = b->nops ? bsearch(&key, b->ops, (size_t)b->nops, sizeof *b->ops, cmp_op_ref) : NULL;
  if (!r) return;
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr && i < r->op->noperands; i++) {
    const sp_value *v = r->op->operands[i].value;
    cJSON *n = cJSON_CreateNumber(v ? (double)sp_ptr_map_get(&b->vals, v, -1) : -1);
    if (!n || !cJSON_AddItemToArray(arr, n)) {
      cJSON_Delete(n);
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  if (!arr || !cJSON_AddItemToObject(po->table, "operand_values", arr)) {
    cJSON_Delete(arr);
    b->status = SP_ENOMEM;
  }
}

/* The position of a value (op result or function argument). */
static sp_plan_pos value_pos(builder *b, const sp_value *v) {
  if (!v) return (sp_plan_pos){SP_PLAN_OP_RESULT, -1, -1, -1};
  if (v->def) return (sp_plan_pos){SP_PLAN_OP_RESULT, func_of(b, v->def),
                                   (int)sp_ptr_map_get(b->numbers, v->def, -1), v->index};
  const sp_op *owner = v->block ? sp_block_parent_op(v->block) : NULL;
  if (owner && owner->kind == SP_OP_FUNC)
    return (sp_plan_pos){SP_PLAN_ARG, func_of(b, owner), -1, v->index};
  /* A nested block's argument: addressed through the op that owns the block. */
  return (sp_plan_pos){SP_PLAN_ARG, owner ? func_of(b, owner) : -1,
                       owner ? (int)sp_ptr_map_get(b->numbers, owner, -1) : -1, v->index};
}

/* ------------------------------------------------------------------ search results */

static void build_search(builder *b, const sp_plan_summary *s) {
  sp_plan *p = b->p;
  p->searched = true;
  p->costs = (sp_plan_costs){s->compute_s, s->collective_s, s->reshard_s, s->comm_s,
                             s->total_s, s->peak_memory_bytes, s->memory_limit_bytes};
  sp_plan_solver *so = &p->solver;
  so->status = sp_sg_status_name(s->status);
  so->cost = s->cost;
  so->bound = s->bound;
  so->gap = s->gap;
  so->build_s = s->build_s;
  so->solve_s = s->solve_s;
  so->ops = s->ops;
  so->nodes = s->nodes;
  so->edges = s->edges;
  so->followers = s->followers;
  so->fixed_nodes = s->fixed_nodes;
  so->strategies = s->strategies;
  so->pairs = s->pairs;
  so->ilp_cols = s->ilp_cols;
  so->ilp_rows = s->ilp_rows;
  so->red_nodes = s->red_nodes;
  so->red_edges = s->red_edges;
  so->merged = s->merged;
  so->red_strategies = s->red_strategies;
  so->red_pairs = s->red_pairs;
  so->dominated = s->dominated;
  so->tie_groups = s->ntie_groups;
  so->tied_nodes = s->tied_nodes;
  sp_plan_mesh *pm = &p->mesh;
  pm->name = str(b, s->mesh_name);
  pm->naxes = s->mesh_axes;
  pm->axes = sp_arena_calloc(p->arena, (size_t)(s->mesh_axes ? s->mesh_axes : 1), sizeof *pm->axes);
  if (!pm->axes) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int i = 0; i < s->mesh_axes && i < SP_MAX_MESH_AXES_CLUSTER; i++) {
    sp_plan_mesh_axis *ax = &pm->axes[i];
    bool named = s->mesh && i < s->mesh->naxes;
    ax->name = str(b, named ? s->mesh->axes[i].name : "");
    ax->size = named ? s->mesh->axes[i].size : 0;
    ax->link = str(b, s->axis[i].kind);
    ax->alpha_s = s->axis[i].alpha;
    ax->bandwidth = s->axis[i].bandwidth;
    ax->traffic_bytes = s->axis_traffic[i];
  }
  pm->ndevices = s->device_of ? s->ndevices : 0;
  pm->device_of = sp_arena_calloc(p->arena, (size_t)(pm->ndevices ? pm->ndevices : 1), sizeof *pm->device_of);
  if (!pm->device_of) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int64_t i = 0; i < pm->ndevices; i++) pm->device_of[i] = s->device_of[i];
  pm->placement_auto = s->placement_auto;
  pm->shape_searched = s->shape_auto;
  if (s->nchoice > 0) {
    int *ch = sp_arena_alloc(p->arena, (size_t)s->nchoice * sizeof *ch);
    if (!ch) {
      b->status = SP_ENOMEM;
      return;
    }
    memcpy(ch, s->choice, (size_t)s->nchoice * sizeof *ch);
    p->choice = ch;
    p->nchoice = s->nchoice;
  }
  p->ncollectives = s->ncollectives;
  p->collectives = sp_arena_calloc(p->arena, (size_t)(s->ncollectives ? s->ncollectives : 1),
                                   sizeof *p->collectives);
  if (!p->collectives) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int i = 0; i < s->ncollectives; i++) {
    const sp_search_collective *c = &s->collectives[i];
    sp_plan_collective *pc = &p->collectives[i];
    pc->kind = sp_collective_name(c->c.kind);
    pc->axes = str(b, c->axes);
    pc->group_size = c->c.n;
    pc->bytes = c->c.bytes;
    pc->seconds = c->c.seconds;
    pc->value = value_pos(b, c->value_ref);
    pc->value_name = str(b, c->value);
    pc->op = c->op_ref ? (int)sp_ptr_map_get(b->numbers, c->op_ref, -1) : -1;
    pc->op_name = str(b, c->op);
    pc->line = c->line;
    pc->operand = c->operand;
  }
  p->nop_costs = s->nop_compute;
  p->op_costs = sp_arena_calloc(p->arena, (size_t)(s->nop_compute ? s->nop_compute : 1),
                                sizeof *p->op_costs);
  if (!p->op_costs) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int i = 0; i < s->nop_compute; i++) {
    const sp_plan_op_compute *c = &s->op_compute[i];
    p->op_costs[i] = (sp_plan_op_cost){(int)sp_ptr_map_get(b->numbers, c->op, -1),
                                       str(b, c->op->name), c->seconds};
  }
}

/* ------------------------------------------------------------------ report and warnings */

static void build_report(builder *b, cJSON *report) {
  sp_plan *p = b->p;
  cJSON *ops = cJSON_GetObjectItemCaseSensitive(report, "ops");
  int n = cJSON_GetArraySize(ops);
  p->ops = sp_arena_calloc(p->arena, (size_t)(n ? n : 1), sizeof *p->ops);
  if (!p->ops) {
    b->status = SP_ENOMEM;
    return;
  }
  while (ops && ops->child) {
    cJSON *o = cJSON_DetachItemViaPointer(ops, ops->child);
    sp_plan_op *po = &p->ops[p->nops++];
    po->table = o;
    po->op = cJSON_GetObjectItemCaseSensitive(o, "op")->valueint;
    po->name = str(b, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "name")));
    po->line = cJSON_GetObjectItemCaseSensitive(o, "line")->valueint;
    po->col = cJSON_GetObjectItemCaseSensitive(o, "col")->valueint;
    add_operand_values(b, po);
  }
  p->conflicts = cJSON_DetachItemFromObjectCaseSensitive(report, "conflicts");
}

static void build_warnings(builder *b) {
  const sp_diag_list *d = b->m->diags;
  sp_plan *p = b->p;
  if (!d || d->n == 0) return;
  p->warnings = sp_arena_calloc(p->arena, (size_t)d->n, sizeof *p->warnings);
  if (!p->warnings) {
    b->status = SP_ENOMEM;
    return;
  }
  for (int i = 0; i < d->n; i++) {
    sp_plan_warning *w = &p->warnings[p->nwarnings++];
    w->severity = sp_diag_severity_name(d->v[i].severity);
    w->line = d->v[i].loc.line;
    w->col = d->v[i].loc.col;
    w->message = str(b, d->v[i].msg);
  }
}

/* ------------------------------------------------------------------ invariants */

#ifndef NDEBUG
/* What plan.h says of a plan, checked in debug builds on every plan the engine builds (a plan
 * read from JSON is checked by its reader instead, as input): positions are well formed;
 * functions' arguments and results come first, then op results in op-number order; an
 * unsharded value has empty sharding fields; ops are listed in op order; a searched plan's
 * mesh maps every coordinate to a device. */
static bool value_valid(const sp_plan_value *v) {
  const sp_plan_pos *q = &v->pos;
  if (q->index < 0 || (q->kind == SP_PLAN_OP_RESULT ? q->op < 0 || q->func < -1
                                                     : q->op != -1 || q->func < 0))
    return false;
  if (!v->name || !v->type) return false;
  if (!v->sharded) return !v->rank && !v->dims && !v->nreplicated && !v->nunreduced;
  return v->rank >= 0 && (!v->rank || v->dims) && v->sdy;
}

static bool plan_valid(const sp_plan *p) {
  if (!p->arena || !p->module || p->nvalues < 0 || p->nops < 0) return false;
  int last_op = -1;
  bool in_ops = false;
  for (int i = 0; i < p->nvalues; i++) {
    const sp_plan_value *v = &p->values[i];
    if (!value_valid(v)) return false;
    if (v->pos.kind == SP_PLAN_OP_RESULT) {
      if (v->pos.op < last_op) return false;
      last_op = v->pos.op;
      in_ops = true;
    } else if (in_ops) {
      return false;
    }
  }
  for (int i = 1; i < p->nops; i++)
    if (p->ops[i].op <= p->ops[i - 1].op) return false;
  if (p->searched) {
    int64_t n = 1;
    for (int a = 0; a < p->mesh.naxes; a++) n *= p->mesh.axes[a].size;
    if (p->mesh.ndevices && n != p->mesh.ndevices) return false;
    for (int64_t d = 0; d < p->mesh.ndevices; d++)
      if (!p->mesh.device_of || p->mesh.device_of[d] < 0) return false;
  }
  return true;
}
#endif

/* ------------------------------------------------------------------ API */

int sp__plan_build(sp_module *m, sp_ptr_map *numbers, int next, cJSON *report,
                   const sp_plan_summary *summary, sp_plan **out, sp_err *err) {
  *out = NULL;
  sp_ptr_map own;
  sp_ptr_map_init(&own);
  if (next < 0) next = numbers ? (int)numbers->n : 0;
  if (!numbers) numbers = &own;
  builder b = {.m = m, .numbers = numbers, .err = err};
  sp_ptr_map_init(&b.funcs);
  sp_ptr_map_init(&b.vals);
  sp_ptr_map_init(&b.texts);
  int rc = sp__plan_number_ops(m, numbers, &next, err);
  if (rc) goto fail;
  if (!(b.p = sp__plan_new())) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory building the plan");
    goto fail;
  }
  if ((rc = sp_mlir_names_new(m, &b.names, err))) goto fail;
  b.p->filename = str(&b, m->filename);
  sp_strbuf text = SP_STRBUF_INIT;
  if ((rc = sp_mlir_print(m, &text, err))) {
    sp_strbuf_free(&text);
    goto fail;
  }
  b.p->module = sb_str(&b, &text);
  build_values(&b);
  if (!b.status && summary) build_search(&b, summary);
  if (!b.status && report) build_report(&b, report);
  if (!b.status) build_warnings(&b);
  if (b.status) {
    rc = sp_err_set(err, b.status, "out of memory building the plan");
    goto fail;
  }
  assert(plan_valid(b.p));
  *out = b.p;
  b.p = NULL;
fail:
  sp_plan_free(b.p);
  sp_mlir_names_free(b.names);
  sp_ptr_map_free(&b.funcs);
  sp_ptr_map_free(&b.vals);
  sp_ptr_map_free(&b.texts);
  sp_ptr_map_free(&own);
  return rc;
}

int sp_plan_from_module(sp_module *m, cJSON *report, const struct sp_plan_summary *summary,
                        sp_plan **out, sp_err *err) {
  return sp__plan_build(m, NULL, -1, report, summary, out, err);
}
