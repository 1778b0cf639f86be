/*
 * plan_proto.c - sp_plan -> shardplan.v1 messages, labels, packing (see plan_proto.h).
 */
#include "rpc/plan_proto.h"

#include "rpc/plan_request.h"
#include "ir/strbuf.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEW(a, var, T, INIT)                    \
  do {                                          \
    (var) = sp_arena_alloc((a), sizeof(T));     \
    if (!(var)) goto oom;                       \
    T init_ = INIT;                             \
    *(var) = init_;                             \
  } while (0)

#define NEW_ARRAY(a, var, n)                                                  \
  do {                                                                        \
    (var) = (n) ? sp_arena_calloc((a), (size_t)(n), sizeof *(var)) : NULL;    \
    if ((n) && !(var)) goto oom;                                              \
  } while (0)

static char *dup(sp_arena *a, const char *s) { return sp_arena_strdup(a, s ? s : ""); }

/* ------------------------------------------------------------------ labels */

typedef struct label_walk {
  sp_rpc_labels *l;
  const sp_op *top;
  int64_t next;
  int status;
} label_walk;

static const char *hint_label(sp_arena *a, const sp_value *v) {
  return v->name_hint ? sp_arena_printf(a, "%%%s", v->name_hint) : NULL;
}

static bool count_op(sp_op *op, void *ctx) {
  label_walk *w = ctx;
  if (op != w->top) w->next++;
  return true;
}

static bool label_op(sp_op *op, void *ctx) {
  label_walk *w = ctx;
  if (op == w->top) return true;
  int64_t n = w->next++;
  sp_rpc_labels *l = w->l;
  l->op_names[n] = op->name;
  l->op_nresults[n] = op->nresults;
  l->op_results[n] = op->nresults ? hint_label(l->arena, &op->results[0]) : NULL;
  return true;
}

int sp_rpc_labels_read(const sp_module *m, sp_rpc_labels *l, sp_err *err) {
  memset(l, 0, sizeof *l);
  sp_arena *a = l->arena = sp_arena_new(0);
  if (!a) goto oom;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC && op->func) l->nfuncs++;
  NEW_ARRAY(a, l->func_names, l->nfuncs);
  NEW_ARRAY(a, l->nargs, l->nfuncs);
  NEW_ARRAY(a, l->args, l->nfuncs);
  int f = 0;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    if (op->kind != SP_OP_FUNC || !op->func) continue;
    const char *name = sp_op_get_str(op, "sym_name");
    l->func_names[f] = dup(a, name);
    sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
    int n = entry ? entry->nargs : 0;
    l->nargs[f] = n;
    NEW_ARRAY(a, l->args[f], n);
    for (int i = 0; i < n; i++) {
      const char *h = hint_label(a, entry->args[i]);
      l->args[f][i] = h ? h : "";
    }
    f++;
  }
  label_walk w = {l, m->op, 0, SP_OK};
  sp_op_walk(m->op, count_op, &w);
  l->nops = w.next;
  NEW_ARRAY(a, l->op_results, l->nops);
  NEW_ARRAY(a, l->op_nresults, l->nops);
  NEW_ARRAY(a, l->op_names, l->nops);
  w.next = 0;
  sp_op_walk(m->op, label_op, &w);
  return SP_OK;
oom:
  sp_rpc_labels_free(l);
  return sp_err_set(err, SP_ENOMEM, "out of memory reading value names");
}

void sp_rpc_labels_free(sp_rpc_labels *l) {
  if (l) sp_arena_free(l->arena);
  if (l) memset(l, 0, sizeof *l);
}

void sp_rpc_labels_get(const sp_rpc_labels *l, const Shardplan__V1__ValueAddress *a, char *buf,
                       size_t cap) {
  buf[0] = '\0';
  if (!l || !a) return;
  switch (a->kind) {
    case SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT:
      for (int f = 0; f < l->nfuncs; f++)
        if (strcmp(l->func_names[f], a->function ? a->function : "") == 0 &&
            (int)a->index < l->nargs[f]) {
          snprintf(buf, cap, "%s", l->args[f][a->index]);
          return;
        }
      return;
    case SHARDPLAN__V1__VALUE_ADDRESS__KIND__OP_RESULT:
      if ((int64_t)a->index < l->nops && l->op_results[a->index] &&
          (int)a->result < l->op_nresults[a->index]) {
        if (l->op_nresults[a->index] > 1)
          snprintf(buf, cap, "%s#%u", l->op_results[a->index], a->result);
        else
          snprintf(buf, cap, "%s", l->op_results[a->index]);
      }
      return;
    default: return;
  }
}

/* ------------------------------------------------------------------ plan -> messages */

/* "x" or "x:(1)2" -> AxisRef */
static Shardplan__V1__AxisRef *axis_ref(sp_arena *a, const char *s) {
  Shardplan__V1__AxisRef *r;
  NEW(a, r, Shardplan__V1__AxisRef, SHARDPLAN__V1__AXIS_REF__INIT);
  const char *colon = strrchr(s, ':');
  long long pre, size;
  int used = 0;
  if (colon && sscanf(colon, ":(%lld)%lld%n", &pre, &size, &used) == 2 &&
      colon[used] == '\0') {
    r->name = sp_arena_strndup(a, s, (size_t)(colon - s));
    r->pre_size = pre;
    r->size = size;
  } else {
    r->name = dup(a, s);
  }
  if (!r->name) goto oom;
  return r;
oom:
  return NULL;
}

static int axis_list(sp_arena *a, int n, const char **in, size_t *nout,
                     Shardplan__V1__AxisRef ***out) {
  *nout = (size_t)n;
  NEW_ARRAY(a, *out, n);
  for (int i = 0; i < n; i++)
    if (!((*out)[i] = axis_ref(a, in[i]))) goto oom;
  return SP_OK;
oom:
  return SP_ENOMEM;
}

/* "\"data\", \"model\"" -> ["data", "model"] */
static int split_axes(sp_arena *a, const char *s, size_t *nout, char ***out) {
  size_t n = 0;
  for (const char *p = s; p && *p; p++)
    if (*p == '"') n++;
  n /= 2;
  *nout = 0;
  NEW_ARRAY(a, *out, n);
  const char *p = s;
  while (p && (p = strchr(p, '"'))) {
    const char *q = strchr(p + 1, '"');
    if (!q || *nout >= n) break;
    if (!((*out)[(*nout)++] = sp_arena_strndup(a, p + 1, (size_t)(q - p - 1)))) goto oom;
    p = q + 1;
  }
  return SP_OK;
oom:
  return SP_ENOMEM;
}

static Shardplan__V1__ValueAddress__Kind addr_kind(sp_plan_value_kind k) {
  return k == SP_PLAN_ARG ? SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT
         : k == SP_PLAN_FUNC_RESULT ? SHARDPLAN__V1__VALUE_ADDRESS__KIND__RESULT
                                    : SHARDPLAN__V1__VALUE_ADDRESS__KIND__OP_RESULT;
}

static int value_msg(sp_arena *a, const sp_plan_value *v, const sp_rpc_labels *names,
                     Shardplan__V1__ValueSharding **out) {
  Shardplan__V1__ValueSharding *vs;
  Shardplan__V1__ValueAddress *ad;
  NEW(a, vs, Shardplan__V1__ValueSharding, SHARDPLAN__V1__VALUE_SHARDING__INIT);
  NEW(a, ad, Shardplan__V1__ValueAddress, SHARDPLAN__V1__VALUE_ADDRESS__INIT);
  ad->kind = addr_kind(v->pos.kind);
  ad->function = dup(a, names && v->pos.func >= 0 && v->pos.func < names->nfuncs
                            ? names->func_names[v->pos.func] : "");
  ad->index = (uint32_t)(v->pos.kind == SP_PLAN_OP_RESULT ? v->pos.op : v->pos.index);
  ad->result = (uint32_t)(v->pos.kind == SP_PLAN_OP_RESULT ? v->pos.index : 0);
  vs->address = ad;
  char label[256];
  sp_rpc_labels_get(names, ad, label, sizeof label);
  vs->label = dup(a, label);
  if (v->pos.kind == SP_PLAN_OP_RESULT && names && v->pos.op >= 0 && v->pos.op < names->nops)
    vs->op_name = dup(a, names->op_names[v->pos.op]);
  if (v->sharded) {
    Shardplan__V1__Sharding *s;
    NEW(a, s, Shardplan__V1__Sharding, SHARDPLAN__V1__SHARDING__INIT);
    s->mesh_name = dup(a, v->mesh);
    s->n_dims = (size_t)v->rank;
    NEW_ARRAY(a, s->dims, v->rank);
    for (int d = 0; d < v->rank; d++) {
      Shardplan__V1__DimSharding *ds;
      NEW(a, ds, Shardplan__V1__DimSharding, SHARDPLAN__V1__DIM_SHARDING__INIT);
      if (axis_list(a, v->dims[d].naxes, v->dims[d].axes, &ds->n_axes, &ds->axes)) goto oom;
      ds->closed = v->dims[d].closed;
      ds->has_priority = v->dims[d].priority >= 0;
      ds->priority = ds->has_priority ? v->dims[d].priority : 0;
      s->dims[d] = ds;
    }
    if (axis_list(a, v->nreplicated, v->replicated, &s->n_replicated, &s->replicated) ||
        axis_list(a, v->nunreduced, v->unreduced, &s->n_unreduced, &s->unreduced))
      goto oom;
    vs->sharding = s;
    vs->sdy = dup(a, v->sdy);
    vs->partition_spec = dup(a, v->pspec);
    vs->gspmd = dup(a, v->gspmd);
  }
  *out = vs;
  return SP_OK;
oom:
  return SP_ENOMEM;
}

const char *sp_rpc_status_word(const Shardplan__V1__PlanResponse *r) {
  if (r->provisional) return "provisional";
  switch (r->status) {
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL: return "optimal";
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_FEASIBLE: return "feasible";
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_CUT_SHORT: return "provisional";
    default: return "propagated";
  }
}

Shardplan__V1__PlanStatus sp_rpc_status_from_word(const char *w) {
  if (!w) return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_UNSPECIFIED;
  if (!strcmp(w, "optimal")) return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL;
  if (!strcmp(w, "feasible")) return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_FEASIBLE;
  if (!strcmp(w, "provisional")) return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_CUT_SHORT;
  if (!strcmp(w, "propagated")) return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED;
  return SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_UNSPECIFIED;
}

int sp_rpc_plan_summary(const sp_plan *p, const sp_rpc_labels *names, const char *key,
                        sp_arena *a, Shardplan__V1__PlanResponse **out, sp_err *err) {
  Shardplan__V1__PlanResponse *r;
  Shardplan__V1__Plan *pl;
  NEW(a, r, Shardplan__V1__PlanResponse, SHARDPLAN__V1__PLAN_RESPONSE__INIT);
  NEW(a, pl, Shardplan__V1__Plan, SHARDPLAN__V1__PLAN__INIT);
  r->key = dup(a, key);
  r->plan = pl;
  pl->planner_version = dup(a, sp_rpc_planner_version());
  if (names && names->nfuncs) {
    pl->n_functions = (size_t)names->nfuncs;
    NEW_ARRAY(a, pl->functions, names->nfuncs);
    for (int i = 0; i < names->nfuncs; i++) pl->functions[i] = dup(a, names->func_names[i]);
  }
  pl->n_values = (size_t)p->nvalues;
  NEW_ARRAY(a, pl->values, p->nvalues);
  for (int i = 0; i < p->nvalues; i++)
    if (value_msg(a, &p->values[i], names, &pl->values[i])) goto oom;
  r->status = SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED;
  if (p->searched) {
    const char *st = p->solver.status ? p->solver.status : "";
    if (!strcmp(st, "optimal")) {
      r->status = SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL;
    } else if (!strcmp(st, "timeout")) {
      r->status = SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_CUT_SHORT;
      r->provisional = true;
    } else {
      r->status = SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_FEASIBLE;
    }
    if (r->status != SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL) r->gap = p->solver.gap;
    Shardplan__V1__Costs *c;
    NEW(a, c, Shardplan__V1__Costs, SHARDPLAN__V1__COSTS__INIT);
    c->compute_seconds = p->costs.compute_s;
    c->communication_seconds = p->costs.comm_s;
    c->total_seconds = p->costs.total_s;
    c->peak_memory_bytes = p->costs.peak_memory_bytes;
    c->memory_limit_bytes = p->costs.memory_limit_bytes;
    pl->costs = c;
    Shardplan__V1__SolverStats *s;
    NEW(a, s, Shardplan__V1__SolverStats, SHARDPLAN__V1__SOLVER_STATS__INIT);
    s->status = dup(a, st);
    s->variables = p->solver.ilp_cols ? p->solver.ilp_cols : p->solver.strategies;
    s->rows = p->solver.ilp_rows;
    s->nodes = p->solver.nodes;
    s->edges = p->solver.edges;
    s->objective = (double)p->solver.cost;
    s->bound = p->solver.bound == INT64_MIN ? 0 : (double)p->solver.bound;
    s->gap = p->solver.gap;
    pl->solver = s;
    Shardplan__V1__MeshPlan *mp;
    NEW(a, mp, Shardplan__V1__MeshPlan, SHARDPLAN__V1__MESH_PLAN__INIT);
    mp->name = dup(a, p->mesh.name);
    mp->n_axes = (size_t)p->mesh.naxes;
    NEW_ARRAY(a, mp->axes, p->mesh.naxes);
    for (int i = 0; i < p->mesh.naxes; i++) {
      NEW(a, mp->axes[i], Shardplan__V1__MeshAxis, SHARDPLAN__V1__MESH_AXIS__INIT);
      mp->axes[i]->name = dup(a, p->mesh.axes[i].name);
      mp->axes[i]->size = p->mesh.axes[i].size;
    }
    mp->n_device_ids = (size_t)p->mesh.ndevices;
    NEW_ARRAY(a, mp->device_ids, p->mesh.ndevices);
    for (int64_t i = 0; i < p->mesh.ndevices; i++) mp->device_ids[i] = p->mesh.device_of[i];
    pl->n_meshes = 1;
    NEW_ARRAY(a, pl->meshes, 1);
    pl->meshes[0] = mp;
    pl->n_collectives = (size_t)p->ncollectives;
    NEW_ARRAY(a, pl->collectives, p->ncollectives);
    for (int i = 0; i < p->ncollectives; i++) {
      const sp_plan_collective *pc = &p->collectives[i];
      Shardplan__V1__Collective *cm;
      NEW(a, cm, Shardplan__V1__Collective, SHARDPLAN__V1__COLLECTIVE__INIT);
      cm->kind = dup(a, pc->kind);
      if (split_axes(a, pc->axes, &cm->n_axes, &cm->axes)) goto oom;
      cm->bytes = pc->bytes;
      cm->seconds = pc->seconds;
      cm->value = dup(a, pc->value_name);
      cm->op = dup(a, pc->op_name);
      cm->operand = pc->operand;
      cm->line = pc->line;
      pl->collectives[i] = cm;
    }
  }
  int nconf = p->conflicts ? cJSON_GetArraySize(p->conflicts) : 0;
  pl->n_conflicts = (size_t)nconf;
  NEW_ARRAY(a, pl->conflicts, nconf);
  for (int i = 0; i < nconf; i++) {
    const cJSON *cj = cJSON_GetArrayItem(p->conflicts, i);
    Shardplan__V1__Conflict *cm;
    NEW(a, cm, Shardplan__V1__Conflict, SHARDPLAN__V1__CONFLICT__INIT);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cj, "op");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cj, "name");
    if (cJSON_IsNumber(op) && op->valuedouble >= 0) cm->op_index = (uint32_t)op->valuedouble;
    cm->op_name = dup(a, cJSON_IsString(name) ? name->valuestring : "");
    char *text = cJSON_PrintUnformatted(cj);
    cm->description = dup(a, text ? text : "");
    free(text);
    pl->conflicts[i] = cm;
  }
  r->n_warnings = (size_t)p->nwarnings;
  NEW_ARRAY(a, r->warnings, p->nwarnings);
  for (int i = 0; i < p->nwarnings; i++) {
    const sp_plan_warning *w = &p->warnings[i];
    r->warnings[i] = w->line ? sp_arena_printf(a, "%d:%d: %s: %s", w->line, w->col,
                                               w->severity, w->message)
                             : sp_arena_printf(a, "%s: %s", w->severity, w->message);
    if (!r->warnings[i]) goto oom;
  }
  *out = r;
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory building the answer");
}

/* ------------------------------------------------------------------ packing */

/* Appends a varint to buf at *n. */
static void put_varint(uint8_t *buf, size_t *n, uint64_t v) {
  while (v >= 0x80) {
    buf[(*n)++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  buf[(*n)++] = (uint8_t)v;
}

/* ------------------------------------------------------------------ renamed functions */

bool sp_rpc_func_map_of(const Shardplan__V1__PlanResponse *resp, const sp_rpc_labels *names,
                        sp_rpc_func_map *out) {
  memset(out, 0, sizeof *out);
  const Shardplan__V1__Plan *pl = resp ? resp->plan : NULL;
  if (!names || !pl || pl->n_functions == 0 || (int)pl->n_functions != names->nfuncs)
    return false;
  bool same = true;
  for (int i = 0; i < names->nfuncs; i++)
    if (strcmp(pl->functions[i], names->func_names[i]) != 0) same = false;
  if (same) return false;
  out->n = names->nfuncs;
  out->from = (const char *const *)pl->functions;
  out->to = names->func_names;
  return true;
}

static bool bare_symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '$' || c == '.' || c == '-';
}

static void put_symbol(sp_strbuf *sb, const char *name) {
  bool bare = *name && !(name[0] >= '0' && name[0] <= '9') && name[0] != '-';
  for (const char *c = name; *c && bare; c++) bare = bare_symbol_char(*c);
  if (bare) sp_strbuf_printf(sb, "@%s", name);
  else sp_strbuf_printf(sb, "@\"%s\"", name);
}

char *sp_rpc_rename_functions(const char *text, const sp_rpc_func_map *map) {
  sp_strbuf sb = SP_STRBUF_INIT;
  const char *t = text ? text : "";
  while (*t) {
    if (*t == '"') {   /* a string literal: copied as it is */
      const char *e = t + 1;
      while (*e && *e != '"') e += (*e == '\\' && e[1]) ? 2 : 1;
      if (*e) e++;
      sp_strbuf_putn(&sb, t, (size_t)(e - t));
      t = e;
      continue;
    }
    if (*t != '@') {
      const char *e = t;
      while (*e && *e != '@' && *e != '"') e++;
      sp_strbuf_putn(&sb, t, (size_t)(e - t));
      t = e;
      continue;
    }
    /* @name or @"name" */
    const char *s = t + 1, *e;
    size_t n;
    bool quoted = *s == '"';
    if (quoted) {
      e = s + 1;
      while (*e && *e != '"') e += (*e == '\\' && e[1]) ? 2 : 1;
      n = (size_t)(e - s - 1);
      s++;
      if (*e) e++;
    } else {
      e = s;
      while (bare_symbol_char(*e)) e++;
      n = (size_t)(e - s);
    }
    int hit = -1;
    for (int i = 0; i < map->n && hit < 0; i++)
      if (strlen(map->from[i]) == n && memcmp(map->from[i], s, n) == 0) hit = i;
    if (hit >= 0) put_symbol(&sb, map->to[hit]);
    else sp_strbuf_putn(&sb, t, (size_t)(e - t));
    t = e;
  }
  if (!sp_strbuf_ok(&sb)) {
    sp_strbuf_free(&sb);
    return NULL;
  }
  return sp_strbuf_detach(&sb);
}

/* The plan's JSON text, its module renamed by `map` (may be NULL). */
static char *plan_json(const sp_plan *p, const sp_rpc_func_map *map, const char *module) {
  if (!map) return sp_plan_to_json_text(p, false);
  cJSON *j = sp_plan_to_json(p);
  cJSON *m = j ? cJSON_CreateString(module) : NULL;
  char *text = NULL;
  if (m && cJSON_ReplaceItemInObject(j, "module", m)) text = cJSON_PrintUnformatted(j);
  else cJSON_Delete(m);
  cJSON_Delete(j);
  return text;
}

int sp_rpc_plan_full_extras(const sp_plan *p, const sp_rpc_func_map *map, uint8_t **out,
                            size_t *len, sp_err *err) {
  *out = NULL;
  *len = 0;
  sp_arena *a = sp_arena_new(0);
  char *json = NULL, *renamed = NULL;
  if (!a) goto oom;
  if (map && map->n == 0) map = NULL;
  if (map && !(renamed = sp_rpc_rename_functions(p->module, map))) goto oom;
  Shardplan__V1__Plan *pl;
  NEW(a, pl, Shardplan__V1__Plan, SHARDPLAN__V1__PLAN__INIT);
  pl->module_sdy = dup(a, renamed ? renamed : p->module);
  json = plan_json(p, map, renamed);
  if (!json) goto oom;
  pl->json = json;
  pl->n_factor_tables = (size_t)p->nops;
  NEW_ARRAY(a, pl->factor_tables, p->nops);
  for (int i = 0; i < p->nops; i++) {
    Shardplan__V1__FactorTable *t;
    NEW(a, t, Shardplan__V1__FactorTable, SHARDPLAN__V1__FACTOR_TABLE__INIT);
    t->op_index = (uint32_t)p->ops[i].op;
    t->op_name = dup(a, p->ops[i].name);
    char *tj = p->ops[i].table ? cJSON_PrintUnformatted(p->ops[i].table) : NULL;
    t->json = dup(a, tj ? tj : "");
    free(tj);
    pl->factor_tables[i] = t;
  }
  size_t body = shardplan__v1__plan__get_packed_size(pl);
  uint8_t *buf = malloc(body + 16);
  if (!buf) goto oom;
  size_t n = 0;
  buf[n++] = (6 << 3) | 2;   /* PlanResponse.plan, length-delimited */
  put_varint(buf, &n, body);
  shardplan__v1__plan__pack(pl, buf + n);
  *out = buf;
  *len = n + body;
  free(json);
  free(renamed);
  sp_arena_free(a);
  return SP_OK;
oom:
  free(json);
  free(renamed);
  sp_arena_free(a);
  return sp_err_set(err, SP_ENOMEM, "out of memory building the full plan");
}

/* Appends cache_hit (field 2) and server_ms (field 8) and the extras. */
static int finish_bytes(uint8_t *head, size_t head_len, bool own_head, bool cache_hit,
                        double server_ms, const uint8_t *extras, size_t extras_len, uint8_t **out,
                        size_t *len) {
  size_t cap = head_len + 16 + extras_len;
  uint8_t *buf = own_head ? realloc(head, cap) : malloc(cap);
  if (!buf) {
    if (own_head) free(head);
    return SP_ENOMEM;
  }
  if (!own_head) memcpy(buf, head, head_len);
  size_t n = head_len;
  if (cache_hit) {
    buf[n++] = (2 << 3) | 0;
    buf[n++] = 1;
  }
  buf[n++] = (8 << 3) | 1;
  memcpy(buf + n, &server_ms, 8);   /* little-endian hosts (x86-64, arm64) */
  n += 8;
  if (extras_len) memcpy(buf + n, extras, extras_len);
  n += extras_len;
  *out = buf;
  *len = n;
  return SP_OK;
}

int sp_rpc_pack_response(Shardplan__V1__PlanResponse *resp, const sp_rpc_labels *names,
                         bool cache_hit, bool coalesced, double server_ms, const uint8_t *extras,
                         size_t extras_len, uint8_t **out, size_t *len) {
  Shardplan__V1__Plan *pl = resp->plan;
  size_t nv = pl ? pl->n_values : 0;
  char **saved = NULL, *labels = NULL, **saved_fn = NULL, **saved_funcs = NULL;
  sp_rpc_func_map map;
  bool renamed = sp_rpc_func_map_of(resp, names, &map);
  if (names && nv) {
    saved = malloc(nv * sizeof *saved);
    saved_fn = malloc(nv * sizeof *saved_fn);
    labels = malloc(nv * 256);
    if (!saved || !saved_fn || !labels) {
      free(saved);
      free(saved_fn);
      free(labels);
      return SP_ENOMEM;
    }
    for (size_t i = 0; i < nv; i++) {
      Shardplan__V1__ValueAddress *ad = pl->values[i]->address;
      saved[i] = pl->values[i]->label;
      saved_fn[i] = ad ? ad->function : NULL;
      for (int f = 0; renamed && ad && ad->function && f < map.n; f++)
        if (strcmp(ad->function, map.from[f]) == 0) {
          ad->function = (char *)map.to[f];
          break;
        }
      sp_rpc_labels_get(names, ad, labels + i * 256, 256);
      pl->values[i]->label = labels + i * 256;
    }
  }
  if (renamed) {
    saved_funcs = pl->functions;
    pl->functions = (char **)map.to;
  }
  protobuf_c_boolean saved_coal = resp->coalesced;
  resp->coalesced = coalesced;
  size_t n = shardplan__v1__plan_response__get_packed_size(resp);
  uint8_t *buf = malloc(n ? n : 1);
  if (buf) shardplan__v1__plan_response__pack(resp, buf);
  resp->coalesced = saved_coal;
  if (saved)
    for (size_t i = 0; i < nv; i++) {
      pl->values[i]->label = saved[i];
      if (pl->values[i]->address) pl->values[i]->address->function = saved_fn[i];
    }
  if (renamed) pl->functions = saved_funcs;
  free(saved);
  free(saved_fn);
  free(labels);
  if (!buf) return SP_ENOMEM;
  return finish_bytes(buf, n, true, cache_hit, server_ms, extras, extras_len, out, len);
}

int sp_rpc_repack_hit(const uint8_t *stored, size_t stored_len, double server_ms,
                      const uint8_t *extras, size_t extras_len, uint8_t **out, size_t *len) {
  return finish_bytes((uint8_t *)stored, stored_len, false, true, server_ms, extras, extras_len,
                      out, len);
}
