/*
 * plan_json.c - the plan's one JSON writer and reader (see plan.h for the format).
 *
 * The writer builds the document from the per-element writers; the reader walks the same
 * fields back, so writing a plan read from JSON gives the same JSON. Numbers go through
 * cJSON's double; int64 fields (costs in ns, byte counts) stay exact below 2^53.
 */
#include "plan/plan.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_int.h"

#define PLAN_JSON_VERSION 1

/* ------------------------------------------------------------------ writing */

static const char *kind_name(sp_plan_value_kind k) {
  switch (k) {
    case SP_PLAN_ARG: return "arg";
    case SP_PLAN_FUNC_RESULT: return "func_result";
    case SP_PLAN_OP_RESULT: return "op_result";
  }
  return "op_result";
}

static bool add(cJSON *o, const char *k, cJSON *v) {
  if (!v) return false;
  cJSON_AddItemToObject(o, k, v);
  return true;
}

static cJSON *num(double v) { return cJSON_CreateNumber(v); }
static cJSON *text(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static cJSON *pos_json(const sp_plan_pos *p) {
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "kind", cJSON_CreateString(kind_name(p->kind))) && add(o, "func", num(p->func)) &&
      add(o, "op", num(p->op)) && add(o, "index", num(p->index)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *strings(const char *const *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < n; i++) {
    cJSON *s = cJSON_CreateString(v[i]);
    if (!s) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, s);
  }
  return a;
}

static cJSON *sharding_json(const sp_plan_value *v) {
  cJSON *o = cJSON_CreateObject(), *dims = cJSON_CreateArray();
  bool ok = o && dims;
  for (int d = 0; ok && d < v->rank; d++) {
    cJSON *dj = cJSON_CreateObject();
    ok = dj && add(dj, "axes", strings(v->dims[d].axes, v->dims[d].naxes)) &&
         add(dj, "closed", cJSON_CreateBool(v->dims[d].closed)) &&
         add(dj, "priority", num(v->dims[d].priority));
    if (dj) cJSON_AddItemToArray(dims, dj);
  }
  ok = ok && add(o, "mesh", text(v->mesh)) && add(o, "dims", dims);
  if (!ok) cJSON_Delete(dims);
  ok = ok && add(o, "replicated", strings(v->replicated, v->nreplicated)) &&
       add(o, "unreduced", strings(v->unreduced, v->nunreduced)) && add(o, "sdy", text(v->sdy)) &&
       add(o, "pspec", text(v->pspec)) && add(o, "gspmd", text(v->gspmd));
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

/* {"x": "input: 0", ...}: Shardy's attribute as JSON. */
static cJSON *origins_json(const sp_plan_value *v) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; o && i < v->norigins; i++)
    if (!add(o, v->origins[i].axis, text(v->origins[i].origin))) {
      cJSON_Delete(o);
      return NULL;
    }
  return o;
}

cJSON *sp_plan_value_to_json(const sp_plan_value *v) {
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "pos", pos_json(&v->pos)) && add(o, "name", text(v->name)) &&
      add(o, "type", text(v->type)) &&
      add(o, "sharding", v->sharded ? sharding_json(v) : cJSON_CreateNull()) &&
      (!v->norigins || add(o, "sharding_origins", origins_json(v))))
    return o;
  cJSON_Delete(o);
  return NULL;
}

cJSON *sp_plan_op_to_json(const sp_plan_op *op) {
  return op->table ? cJSON_Duplicate(op->table, 1) : NULL;
}

cJSON *sp_plan_collective_to_json(const sp_plan_collective *c) {
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "kind", text(c->kind)) && add(o, "axes", text(c->axes)) &&
      add(o, "group_size", num((double)c->group_size)) && add(o, "bytes", num(c->bytes)) &&
      add(o, "seconds", num(c->seconds)) && add(o, "value", pos_json(&c->value)) &&
      add(o, "value_name", text(c->value_name)) && add(o, "op", num(c->op)) &&
      add(o, "op_name", text(c->op_name)) && add(o, "line", num(c->line)) &&
      add(o, "operand", num(c->operand)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

cJSON *sp_plan_conflict_to_json(const sp_plan *p, int i) {
  cJSON *c = p->conflicts ? cJSON_GetArrayItem(p->conflicts, i) : NULL;
  return c ? cJSON_Duplicate(c, 1) : NULL;
}

static cJSON *warning_json(const sp_plan_warning *w) {
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "severity", text(w->severity)) && add(o, "line", num(w->line)) &&
      add(o, "col", num(w->col)) && add(o, "message", text(w->message)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *search_json(const sp_plan *p) {
  cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject(), *s = cJSON_CreateObject(),
        *m = cJSON_CreateObject(), *axes = cJSON_CreateArray(), *devs = cJSON_CreateArray(),
        *colls = cJSON_CreateArray(), *opc = cJSON_CreateArray();
  bool ok = o && c && s && m && axes && devs && colls && opc;
  const sp_plan_costs *k = &p->costs;
  ok = ok && add(c, "compute_s", num(k->compute_s)) && add(c, "collective_s", num(k->collective_s)) &&
       add(c, "reshard_s", num(k->reshard_s)) && add(c, "communication_s", num(k->comm_s)) &&
       add(c, "total_s", num(k->total_s)) && add(c, "peak_memory_bytes", num(k->peak_memory_bytes)) &&
       add(c, "memory_limit_bytes", num(k->memory_limit_bytes));
  const sp_plan_solver *v = &p->solver;
  ok = ok && add(s, "status", text(v->status)) && add(s, "cost", num((double)v->cost)) &&
       add(s, "bound", v->bound == INT64_MIN ? cJSON_CreateNull() : num((double)v->bound)) &&
       add(s, "gap", num(v->gap)) && add(s, "build_s", num(v->build_s)) &&
       add(s, "solve_s", num(v->solve_s)) && add(s, "ops", num(v->ops)) &&
       add(s, "nodes", num(v->nodes)) && add(s, "edges", num(v->edges)) &&
       add(s, "followers", num(v->followers)) && add(s, "fixed_nodes", num(v->fixed_nodes)) &&
       add(s, "strategies", num((double)v->strategies)) && add(s, "pairs", num((double)v->pairs)) &&
       add(s, "ilp_cols", num((double)v->ilp_cols)) && add(s, "ilp_rows", num((double)v->ilp_rows)) &&
       add(s, "reduced_nodes", num(v->red_nodes)) && add(s, "reduced_edges", num(v->red_edges)) &&
       add(s, "reduced_strategies", num((double)v->red_strategies)) &&
       add(s, "reduced_pairs", num((double)v->red_pairs)) && add(s, "merged_nodes", num(v->merged)) &&
       add(s, "dominated_strategies", num((double)v->dominated)) &&
       add(s, "tie_groups", num(v->tie_groups)) && add(s, "tied_nodes", num(v->tied_nodes));
  for (int i = 0; ok && i < p->mesh.naxes; i++) {
    const sp_plan_mesh_axis *a = &p->mesh.axes[i];
    cJSON *aj = cJSON_CreateObject();
    ok = aj && add(aj, "name", text(a->name)) && add(aj, "size", num((double)a->size)) &&
         add(aj, "link", text(a->link)) && add(aj, "alpha_s", num(a->alpha_s)) &&
         add(aj, "bandwidth", num(a->bandwidth)) && add(aj, "traffic_bytes", num(a->traffic_bytes));
    if (aj) cJSON_AddItemToArray(axes, aj);
  }
  for (int64_t i = 0; ok && i < p->mesh.ndevices; i++) {
    cJSON *d = num((double)p->mesh.device_of[i]);
    ok = d != NULL;
    if (d) cJSON_AddItemToArray(devs, d);
  }
  ok = ok && add(m, "name", text(p->mesh.name)) && add(m, "axes", axes);
  if (ok) axes = NULL;
  ok = ok && add(m, "device_of", devs);
  if (ok) devs = NULL;
  ok = ok && add(m, "placement_auto", cJSON_CreateBool(p->mesh.placement_auto)) &&
       add(m, "shape_searched", cJSON_CreateBool(p->mesh.shape_searched));
  for (int i = 0; ok && i < p->ncollectives; i++) {
    cJSON *x = sp_plan_collective_to_json(&p->collectives[i]);
    ok = x != NULL;
    if (x) cJSON_AddItemToArray(colls, x);
  }
  ok = ok && add(o, "costs", c);
  if (ok) c = NULL;
  ok = ok && add(o, "solver", s);
  if (ok) s = NULL;
  ok = ok && add(o, "mesh", m);
  if (ok) m = NULL;
  ok = ok && add(o, "collectives", colls);
  if (ok) colls = NULL;
  for (int i = 0; ok && i < p->nop_costs; i++) {
    const sp_plan_op_cost *k2 = &p->op_costs[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && add(x, "op", num(k2->op)) && add(x, "name", text(k2->name)) &&
         add(x, "compute_s", num(k2->compute_s));
    if (x) cJSON_AddItemToArray(opc, x);
  }
  ok = ok && add(o, "op_compute", opc);
  if (ok) opc = NULL;
  cJSON_Delete(c);
  cJSON_Delete(s);
  cJSON_Delete(m);
  cJSON_Delete(axes);
  cJSON_Delete(devs);
  cJSON_Delete(colls);
  cJSON_Delete(opc);
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

cJSON *sp_plan_to_json(const sp_plan *p) {
  cJSON *o = cJSON_CreateObject(), *values = cJSON_CreateArray(), *ops = cJSON_CreateArray(),
        *warnings = cJSON_CreateArray();
  bool ok = o && values && ops && warnings;
  for (int i = 0; ok && i < p->nvalues; i++) {
    cJSON *x = sp_plan_value_to_json(&p->values[i]);
    ok = x != NULL;
    if (x) cJSON_AddItemToArray(values, x);
  }
  for (int i = 0; ok && i < p->nops; i++) {
    cJSON *x = sp_plan_op_to_json(&p->ops[i]);
    ok = x != NULL;
    if (x) cJSON_AddItemToArray(ops, x);
  }
  for (int i = 0; ok && i < p->nwarnings; i++) {
    cJSON *x = warning_json(&p->warnings[i]);
    ok = x != NULL;
    if (x) cJSON_AddItemToArray(warnings, x);
  }
  ok = ok && add(o, "version", num(PLAN_JSON_VERSION)) && add(o, "file", text(p->filename)) &&
       add(o, "module", text(p->module)) && add(o, "values", values);
  if (ok) values = NULL;
  ok = ok && add(o, "ops", ops);
  if (ok) ops = NULL;
  ok = ok && add(o, "conflicts", p->conflicts ? cJSON_Duplicate(p->conflicts, 1) : cJSON_CreateArray());
  ok = ok && add(o, "warnings", warnings);
  if (ok) warnings = NULL;
  ok = ok && add(o, "search", p->searched ? search_json(p) : cJSON_CreateNull());
  cJSON_Delete(values);
  cJSON_Delete(ops);
  cJSON_Delete(warnings);
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

char *sp_plan_to_json_text(const sp_plan *p, bool formatted) {
  cJSON *j = sp_plan_to_json(p);
  char *t = j ? (formatted ? cJSON_Print(j) : cJSON_PrintUnformatted(j)) : NULL;
  cJSON_Delete(j);
  return t;
}

/* ------------------------------------------------------------------ reading */

typedef struct reader {
  sp_plan *p;
  sp_err *err;
  int rc;
  const char *where;   /* the element being read, for messages */
} reader;

static bool bad(reader *r, const char *field, const char *want) {
  if (!r->rc) r->rc = sp_err_set(r->err, SP_EINVAL, "plan JSON: %s: field \"%s\" missing or not %s",
                                 r->where, field, want);
  return false;
}

static cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static double rnum(reader *r, const cJSON *o, const char *k) {
  cJSON *x = get(o, k);
  if (!cJSON_IsNumber(x)) return bad(r, k, "a number"), 0;
  return x->valuedouble;
}

static int rinteger(reader *r, const cJSON *o, const char *k) { return (int)rnum(r, o, k); }

static bool rbool(reader *r, const cJSON *o, const char *k) {
  cJSON *x = get(o, k);
  if (!cJSON_IsBool(x)) return bad(r, k, "true or false");
  return cJSON_IsTrue(x);
}

/* A string (copied into the plan), or NULL for JSON null. */
static const char *rstr(reader *r, const cJSON *o, const char *k) {
  cJSON *x = get(o, k);
  if (cJSON_IsNull(x)) return NULL;
  if (!cJSON_IsString(x)) return bad(r, k, "a string"), NULL;
  const char *s = sp_arena_strdup(r->p->arena, x->valuestring);
  if (!s && !r->rc) r->rc = sp_err_set(r->err, SP_ENOMEM, "out of memory reading the plan");
  return s;
}

static void *alloc(reader *r, int n, size_t size) {
  void *v = sp_arena_calloc(r->p->arena, (size_t)(n > 0 ? n : 1), size);
  if (!v && !r->rc) r->rc = sp_err_set(r->err, SP_ENOMEM, "out of memory reading the plan");
  return v;
}

static cJSON *rarr(reader *r, const cJSON *o, const char *k) {
  cJSON *x = get(o, k);
  if (!cJSON_IsArray(x)) return bad(r, k, "an array"), NULL;
  return x;
}

static cJSON *robj(reader *r, const cJSON *o, const char *k) {
  cJSON *x = get(o, k);
  if (!cJSON_IsObject(x)) return bad(r, k, "an object"), NULL;
  return x;
}

static sp_plan_pos rpos(reader *r, const cJSON *o, const char *k) {
  sp_plan_pos p = {SP_PLAN_OP_RESULT, -1, -1, -1};
  cJSON *x = robj(r, o, k);
  if (!x) return p;
  cJSON *kind = get(x, "kind");
  const char *ks = cJSON_GetStringValue(kind);
  if (ks && strcmp(ks, "arg") == 0) p.kind = SP_PLAN_ARG;
  else if (ks && strcmp(ks, "func_result") == 0) p.kind = SP_PLAN_FUNC_RESULT;
  else if (ks && strcmp(ks, "op_result") == 0) p.kind = SP_PLAN_OP_RESULT;
  else bad(r, "kind", "\"arg\", \"func_result\" or \"op_result\"");
  p.func = rinteger(r, x, "func");
  p.op = rinteger(r, x, "op");
  p.index = rinteger(r, x, "index");
  return p;
}

static const char **rstrings(reader *r, const cJSON *o, const char *k, int *n) {
  cJSON *a = rarr(r, o, k);
  *n = a ? cJSON_GetArraySize(a) : 0;
  const char **v = alloc(r, *n, sizeof *v);
  int i = 0;
  cJSON *x;
  cJSON_ArrayForEach(x, a) {
    if (!cJSON_IsString(x)) {
      bad(r, k, "an array of strings");
      break;
    }
    if (v && !(v[i++] = sp_arena_strdup(r->p->arena, x->valuestring)) && !r->rc)
      r->rc = sp_err_set(r->err, SP_ENOMEM, "out of memory reading the plan");
  }
  return v;
}

/* "sharding_origins" (optional: plans without origins leave it out). */
static void read_origins(reader *r, const cJSON *o, sp_plan_value *v) {
  cJSON *x = get(o, "sharding_origins");
  if (!x) return;
  if (!cJSON_IsObject(x)) {
    bad(r, "sharding_origins", "an object");
    return;
  }
  int n = cJSON_GetArraySize(x);
  if (!(v->origins = alloc(r, n, sizeof *v->origins))) return;
  cJSON *e;
  cJSON_ArrayForEach(e, x) {
    sp_plan_origin *po = &v->origins[v->norigins++];
    if (!cJSON_IsString(e)) {
      bad(r, "sharding_origins", "an object of strings");
      return;
    }
    po->axis = sp_arena_strdup(r->p->arena, e->string);
    po->origin = sp_arena_strdup(r->p->arena, e->valuestring);
    if ((!po->axis || !po->origin) && !r->rc)
      r->rc = sp_err_set(r->err, SP_ENOMEM, "out of memory reading the plan");
  }
}

static void read_value(reader *r, const cJSON *o, sp_plan_value *v) {
  v->pos = rpos(r, o, "pos");
  v->name = rstr(r, o, "name");
  v->type = rstr(r, o, "type");
  read_origins(r, o, v);
  cJSON *s = get(o, "sharding");
  if (cJSON_IsNull(s)) return;
  if (!cJSON_IsObject(s)) {
    bad(r, "sharding", "an object or null");
    return;
  }
  v->sharded = true;
  v->mesh = rstr(r, s, "mesh");
  cJSON *dims = rarr(r, s, "dims");
  v->rank = dims ? cJSON_GetArraySize(dims) : 0;
  v->dims = alloc(r, v->rank, sizeof *v->dims);
  int d = 0;
  cJSON *dj;
  cJSON_ArrayForEach(dj, dims) {
    if (!v->dims) break;
    sp_plan_dim *pd = &v->dims[d++];
    pd->axes = rstrings(r, dj, "axes", &pd->naxes);
    pd->closed = rbool(r, dj, "closed");
    pd->priority = rinteger(r, dj, "priority");
  }
  v->replicated = rstrings(r, s, "replicated", &v->nreplicated);
  v->unreduced = rstrings(r, s, "unreduced", &v->nunreduced);
  v->sdy = rstr(r, s, "sdy");
  v->pspec = rstr(r, s, "pspec");
  v->gspmd = rstr(r, s, "gspmd");
}

static void read_collective(reader *r, const cJSON *o, sp_plan_collective *c) {
  c->kind = rstr(r, o, "kind");
  c->axes = rstr(r, o, "axes");
  c->group_size = (int64_t)rnum(r, o, "group_size");
  c->bytes = rnum(r, o, "bytes");
  c->seconds = rnum(r, o, "seconds");
  c->value = rpos(r, o, "value");
  c->value_name = rstr(r, o, "value_name");
  c->op = rinteger(r, o, "op");
  c->op_name = rstr(r, o, "op_name");
  c->line = rinteger(r, o, "line");
  c->operand = rinteger(r, o, "operand");
}

static void read_search(reader *r, const cJSON *o) {
  sp_plan *p = r->p;
  p->searched = true;
  cJSON *c = robj(r, o, "costs"), *s = robj(r, o, "solver"), *m = robj(r, o, "mesh");
  cJSON *colls = rarr(r, o, "collectives");
  if (r->rc) return;
  r->where = "search.costs";
  p->costs = (sp_plan_costs){rnum(r, c, "compute_s"), rnum(r, c, "collective_s"),
                             rnum(r, c, "reshard_s"), rnum(r, c, "communication_s"),
                             rnum(r, c, "total_s"), rnum(r, c, "peak_memory_bytes"),
                             rnum(r, c, "memory_limit_bytes")};
  r->where = "search.solver";
  sp_plan_solver *v = &p->solver;
  v->status = rstr(r, s, "status");
  v->cost = (int64_t)rnum(r, s, "cost");
  v->bound = cJSON_IsNull(get(s, "bound")) ? INT64_MIN : (int64_t)rnum(r, s, "bound");
  v->gap = rnum(r, s, "gap");
  v->build_s = rnum(r, s, "build_s");
  v->solve_s = rnum(r, s, "solve_s");
  v->ops = rinteger(r, s, "ops");
  v->nodes = rinteger(r, s, "nodes");
  v->edges = rinteger(r, s, "edges");
  v->followers = rinteger(r, s, "followers");
  v->fixed_nodes = rinteger(r, s, "fixed_nodes");
  v->strategies = (int64_t)rnum(r, s, "strategies");
  v->pairs = (int64_t)rnum(r, s, "pairs");
  v->ilp_cols = (int64_t)rnum(r, s, "ilp_cols");
  v->ilp_rows = (int64_t)rnum(r, s, "ilp_rows");
  v->red_nodes = rinteger(r, s, "reduced_nodes");
  v->red_edges = rinteger(r, s, "reduced_edges");
  v->red_strategies = (int64_t)rnum(r, s, "reduced_strategies");
  v->red_pairs = (int64_t)rnum(r, s, "reduced_pairs");
  v->merged = rinteger(r, s, "merged_nodes");
  v->dominated = (int64_t)rnum(r, s, "dominated_strategies");
  v->tie_groups = rinteger(r, s, "tie_groups");
  v->tied_nodes = rinteger(r, s, "tied_nodes");
  r->where = "search.mesh";
  p->mesh.name = rstr(r, m, "name");
  cJSON *axes = rarr(r, m, "axes"), *devs = rarr(r, m, "device_of");
  p->mesh.naxes = axes ? cJSON_GetArraySize(axes) : 0;
  p->mesh.axes = alloc(r, p->mesh.naxes, sizeof *p->mesh.axes);
  int i = 0;
  cJSON *x;
  cJSON_ArrayForEach(x, axes) {
    if (!p->mesh.axes) break;
    sp_plan_mesh_axis *a = &p->mesh.axes[i++];
    a->name = rstr(r, x, "name");
    a->size = (int64_t)rnum(r, x, "size");
    a->link = rstr(r, x, "link");
    a->alpha_s = rnum(r, x, "alpha_s");
    a->bandwidth = rnum(r, x, "bandwidth");
    a->traffic_bytes = rnum(r, x, "traffic_bytes");
  }
  p->mesh.ndevices = devs ? cJSON_GetArraySize(devs) : 0;
  p->mesh.device_of = alloc(r, (int)p->mesh.ndevices, sizeof *p->mesh.device_of);
  i = 0;
  cJSON_ArrayForEach(x, devs) {
    if (!cJSON_IsNumber(x)) {
      bad(r, "device_of", "an array of numbers");
      break;
    }
    if (p->mesh.device_of) p->mesh.device_of[i++] = (int64_t)x->valuedouble;
  }
  p->mesh.placement_auto = rbool(r, m, "placement_auto");
  p->mesh.shape_searched = rbool(r, m, "shape_searched");
  r->where = "search.collectives";
  p->ncollectives = colls ? cJSON_GetArraySize(colls) : 0;
  p->collectives = alloc(r, p->ncollectives, sizeof *p->collectives);
  i = 0;
  cJSON_ArrayForEach(x, colls) {
    if (!p->collectives || r->rc) break;
    read_collective(r, x, &p->collectives[i++]);
  }
  r->where = "search.op_compute";
  cJSON *opc = rarr(r, o, "op_compute");
  p->nop_costs = opc ? cJSON_GetArraySize(opc) : 0;
  p->op_costs = alloc(r, p->nop_costs, sizeof *p->op_costs);
  i = 0;
  cJSON_ArrayForEach(x, opc) {
    if (!p->op_costs || r->rc) break;
    sp_plan_op_cost *k = &p->op_costs[i++];
    k->op = rinteger(r, x, "op");
    k->name = rstr(r, x, "name");
    k->compute_s = rnum(r, x, "compute_s");
  }
}

int sp_plan_from_json(const char *json, size_t len, sp_plan **out, sp_err *err) {
  *out = NULL;
  cJSON *root = cJSON_ParseWithLength(json, len);
  if (!root) return sp_err_set(err, SP_EINVAL, "plan JSON: not valid JSON");
  reader r = {sp__plan_new(), err, SP_OK, "plan"};
  if (!r.p) {
    cJSON_Delete(root);
    return sp_err_set(err, SP_ENOMEM, "out of memory reading the plan");
  }
  sp_plan *p = r.p;
  if (!cJSON_IsObject(root)) bad(&r, "(root)", "an object");
  else if (rinteger(&r, root, "version") != PLAN_JSON_VERSION && !r.rc)
    r.rc = sp_err_set(err, SP_EINVAL, "plan JSON: version %d, expected %d",
                      rinteger(&r, root, "version"), PLAN_JSON_VERSION);
  if (!r.rc) {
    p->filename = rstr(&r, root, "file");
    p->module = rstr(&r, root, "module");
  }
  cJSON *values = r.rc ? NULL : rarr(&r, root, "values");
  cJSON *ops = r.rc ? NULL : rarr(&r, root, "ops");
  cJSON *conflicts = r.rc ? NULL : rarr(&r, root, "conflicts");
  cJSON *warnings = r.rc ? NULL : rarr(&r, root, "warnings");
  cJSON *search = r.rc ? NULL : get(root, "search");
  cJSON *x;
  if (!r.rc) {
    r.where = "values";
    p->values = alloc(&r, cJSON_GetArraySize(values), sizeof *p->values);
    cJSON_ArrayForEach(x, values) {
      if (r.rc) break;
      read_value(&r, x, &p->values[p->nvalues++]);
    }
  }
  if (!r.rc) {
    r.where = "ops";
    p->ops = alloc(&r, cJSON_GetArraySize(ops), sizeof *p->ops);
    cJSON_ArrayForEach(x, ops) {
      if (r.rc) break;
      sp_plan_op *po = &p->ops[p->nops];
      po->op = rinteger(&r, x, "op");
      po->name = rstr(&r, x, "name");
      po->line = rinteger(&r, x, "line");
      po->col = rinteger(&r, x, "col");
      if (!(po->table = cJSON_Duplicate(x, 1)) && !r.rc)
        r.rc = sp_err_set(err, SP_ENOMEM, "out of memory reading the plan");
      p->nops++;
    }
  }
  if (!r.rc && !(p->conflicts = cJSON_Duplicate(conflicts, 1)))
    r.rc = sp_err_set(err, SP_ENOMEM, "out of memory reading the plan");
  if (!r.rc) {
    r.where = "warnings";
    p->warnings = alloc(&r, cJSON_GetArraySize(warnings), sizeof *p->warnings);
    cJSON_ArrayForEach(x, warnings) {
      if (r.rc) break;
      sp_plan_warning *w = &p->warnings[p->nwarnings++];
      w->severity = rstr(&r, x, "severity");
      w->line = rinteger(&r, x, "line");
      w->col = rinteger(&r, x, "col");
      w->message = rstr(&r, x, "message");
    }
  }
  if (!r.rc && cJSON_IsObject(search)) read_search(&r, search);
  else if (!r.rc && !cJSON_IsNull(search)) bad(&r, "search", "an object or null");
  cJSON_Delete(root);
  if (r.rc) {
    sp_plan_free(p);
    return r.rc;
  }
  *out = p;
  return SP_OK;
}
