/*
 * plan_rows.c - a plan as store rows (see plan_rows.h).
 */
#include "store/plan_rows.h"

#include "ir/grow.h"
#include "plan/provenance.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(sp_plan_rows *r, const char *section, int64_t idx, const char *label,
                cJSON *json) {
  char *text = json ? cJSON_PrintUnformatted(json) : NULL;
  cJSON_Delete(json);
  char *lab = strdup(label ? label : "");
  if (!text || !lab) goto oom;
  if (sp_grow_z((void **)&r->v, &r->cap, r->n, sizeof *r->v)) goto oom;
  r->v[r->n].section = section;
  r->v[r->n].idx = idx;
  r->v[r->n].label = lab;
  r->v[r->n].json = text;
  r->n++;
  return SP_OK;
oom:
  free(text);
  free(lab);
  return SP_ENOMEM;
}

static cJSON *summary(const sp_plan *p) {
  /* the plan's JSON without its long lists: costs, solver and mesh only */
  sp_plan head = *p;
  head.nvalues = head.nops = head.ncollectives = head.nwarnings = 0;
  head.conflicts = NULL;
  head.module = "";
  cJSON *full = sp_plan_to_json(&head);
  cJSON *o = cJSON_CreateObject();
  if (!full || !o) {
    cJSON_Delete(full);
    cJSON_Delete(o);
    return NULL;
  }
  cJSON_AddBoolToObject(o, "searched", p->searched);
  cJSON_AddStringToObject(o, "file", p->filename ? p->filename : "");
  cJSON_AddNumberToObject(o, "nwarnings", p->nwarnings);
  cJSON_AddNumberToObject(o, "nvalues", p->nvalues);
  cJSON_AddNumberToObject(o, "nops", p->nops);
  cJSON_AddNumberToObject(o, "ncollectives", p->ncollectives);
  cJSON_AddNumberToObject(o, "nconflicts", cJSON_GetArraySize(p->conflicts));
  cJSON *search = cJSON_GetObjectItemCaseSensitive(full, "search");
  if (cJSON_IsObject(search)) {
    static const char *keep[] = {"costs", "solver", "mesh"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
      cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(search, keep[i]);
      if (item) cJSON_AddItemToObject(o, keep[i], item);
    }
  }
  cJSON_Delete(full);
  return o;
}

/* The ops (by op number) that read each op's results: inverted from every op's
 * "operand_values". users[n] is a cJSON array of op numbers, or NULL. */
typedef struct users_index {
  int max_op;
  cJSON **users;     /* [max_op + 1] ops reading op n's results */
  cJSON **results;   /* [max_op + 1] op n's results: {"value", "name"} */
} users_index;

static const cJSON *operand_values(const sp_plan_op *op) {
  return cJSON_GetObjectItemCaseSensitive(op->table, "operand_values");
}

static int producer_of(const sp_plan *p, int value) {
  if (value < 0 || value >= p->nvalues) return -1;
  const sp_plan_value *v = &p->values[value];
  return v->pos.kind == SP_PLAN_OP_RESULT ? v->pos.op : -1;
}

static int users_build(const sp_plan *p, users_index *u) {
  u->max_op = -1;
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i].pos.op > u->max_op) u->max_op = p->values[i].pos.op;
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i].op > u->max_op) u->max_op = p->ops[i].op;
  u->users = calloc((size_t)u->max_op + 2, sizeof *u->users);
  u->results = calloc((size_t)u->max_op + 2, sizeof *u->results);
  if (!u->users || !u->results) return SP_ENOMEM;
  for (int i = 0; i < p->nvalues; i++) {
    const sp_plan_value *pv = &p->values[i];
    if (pv->pos.kind != SP_PLAN_OP_RESULT || pv->pos.op < 0) continue;
    cJSON **list = &u->results[pv->pos.op];
    cJSON *r = cJSON_CreateObject();
    if (!r || (!*list && !(*list = cJSON_CreateArray()))) {
      cJSON_Delete(r);
      return SP_ENOMEM;
    }
    cJSON_AddNumberToObject(r, "value", i);
    cJSON_AddStringToObject(r, "name", pv->name ? pv->name : "");
    cJSON_AddItemToArray(*list, r);
  }
  for (int i = 0; i < p->nops; i++) {
    const cJSON *v;
    int last = -2;
    cJSON_ArrayForEach(v, operand_values(&p->ops[i])) {
      int prod = producer_of(p, v->valueint);
      if (prod < 0 || prod > u->max_op || prod == last) continue;
      last = prod;
      if (!u->users[prod] && !(u->users[prod] = cJSON_CreateArray())) return SP_ENOMEM;
      cJSON *n = cJSON_CreateNumber(p->ops[i].op);
      if (!n) return SP_ENOMEM;
      cJSON_AddItemToArray(u->users[prod], n);
    }
  }
  return SP_OK;
}

static void users_free(users_index *u) {
  for (int i = 0; i <= u->max_op; i++) {
    if (u->users) cJSON_Delete(u->users[i]);
    if (u->results) cJSON_Delete(u->results[i]);
  }
  free(u->users);
  free(u->results);
}

/* An op's row: its table, its operands (value, name, producing op), its results and the ops
 * that read them. */
static cJSON *op_row(const sp_plan *p, const sp_plan_op *op, users_index *u) {
  cJSON *j = sp_plan_op_to_json(op);
  if (!j) return NULL;
  cJSON *operands = cJSON_CreateArray();
  const cJSON *v;
  cJSON_ArrayForEach(v, operand_values(op)) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !operands) break;
    int idx = v->valueint;
    cJSON_AddNumberToObject(o, "value", idx);
    cJSON_AddStringToObject(o, "name", idx >= 0 && idx < p->nvalues && p->values[idx].name
                                           ? p->values[idx].name : "?");
    cJSON_AddNumberToObject(o, "producer", producer_of(p, idx));
    cJSON_AddItemToArray(operands, o);
  }
  if (operands) cJSON_AddItemToObject(j, "operands", operands);
  bool known = op->op >= 0 && op->op <= u->max_op;
  cJSON *results = known ? u->results[op->op] : NULL;
  cJSON_AddItemToObject(j, "results", results ? results : cJSON_CreateArray());
  if (known) u->results[op->op] = NULL;
  if (op->op >= 0 && op->op <= u->max_op && u->users[op->op]) {
    cJSON_AddItemToObject(j, "users", u->users[op->op]);
    u->users[op->op] = NULL;
  }
  return j;
}

/* One op's share of the plan's time: its compute and the collectives at it. */
typedef struct op_cost {
  int op;
  const char *name;
  double compute_s, comm_s, reshard_s;
} op_cost;

static int cmp_cost(const void *x, const void *y) {
  const op_cost *a = x, *b = y;
  double ta = a->compute_s + a->comm_s + a->reshard_s, tb = b->compute_s + b->comm_s + b->reshard_s;
  if (ta != tb) return ta < tb ? 1 : -1;
  return (a->op > b->op) - (a->op < b->op);
}

/* The entry of op `opn` in v (added at v[*m] the first time), or -1 for no op. */
static int slot_of(op_cost *v, int *m, int *slot, int opn, const char *name) {
  if (opn < 0) return -1;
  if (slot[opn] < 0) {
    v[*m] = (op_cost){opn, name, 0, 0, 0};
    slot[opn] = (*m)++;
  }
  return slot[opn];
}

/* The "op_cost" rows: every op with a compute time or a collective, costliest first (a chart
 * reads the first rows). */
static int push_op_costs(const sp_plan *p, sp_plan_rows *out) {
  int n = p->nop_costs + p->ncollectives;
  if (n == 0) return SP_OK;
  op_cost *v = calloc((size_t)n, sizeof *v);
  if (!v) return SP_ENOMEM;
  int max_op = -1;
  for (int i = 0; i < p->nop_costs; i++)
    if (p->op_costs[i].op > max_op) max_op = p->op_costs[i].op;
  for (int i = 0; i < p->ncollectives; i++)
    if (p->collectives[i].op > max_op) max_op = p->collectives[i].op;
  int *slot = malloc(sizeof *slot * (size_t)(max_op + 2));
  if (!slot) {
    free(v);
    return SP_ENOMEM;
  }
  for (int k = 0; k <= max_op + 1; k++) slot[k] = -1;
  int m = 0;
  for (int i = 0; i < p->nop_costs; i++) {
    int s = slot_of(v, &m, slot, p->op_costs[i].op, p->op_costs[i].name);
    if (s >= 0) v[s].compute_s += p->op_costs[i].compute_s;
  }
  for (int i = 0; i < p->ncollectives; i++) {
    const sp_plan_collective *c = &p->collectives[i];
    int s = slot_of(v, &m, slot, c->op, c->op_name);
    if (s < 0) continue;
    if (c->operand >= 0) v[s].reshard_s += c->seconds;
    else v[s].comm_s += c->seconds;
  }
  qsort(v, (size_t)m, sizeof *v, cmp_cost);
  int rc = SP_OK;
  for (int i = 0; !rc && i < m; i++) {
    cJSON *o = cJSON_CreateObject();
    if (o) {
      cJSON_AddNumberToObject(o, "op", v[i].op);
      cJSON_AddStringToObject(o, "name", v[i].name ? v[i].name : "");
      cJSON_AddNumberToObject(o, "compute_s", v[i].compute_s);
      cJSON_AddNumberToObject(o, "comm_s", v[i].comm_s);
      cJSON_AddNumberToObject(o, "reshard_s", v[i].reshard_s);
    }
    char label[160];
    snprintf(label, sizeof label, "%s #%d", v[i].name ? v[i].name : "?", v[i].op);
    rc = push(out, "op_cost", i, label, o);
  }
  free(slot);
  free(v);
  return rc;
}

int sp_plan_rows_build(const sp_plan *p, sp_plan_rows *out, sp_err *err) {
  return sp_plan_rows_build_with(p, 0, out, err);
}

int sp_plan_rows_origins(const sp_plan *p, sp_plan_rows *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  cJSON *origins = NULL;
  int rc = sp_plan_provenance(p, &origins, err);
  if (rc) return rc;
  for (int i = 0; !rc && i < p->nvalues; i++) {
    cJSON *o = cJSON_DetachItemFromArray(origins, 0);  /* origins[i], in order */
    rc = push(out, "origin", i, p->values[i].name, o ? o : cJSON_CreateArray());
  }
  cJSON_Delete(origins);
  if (rc) {
    sp_plan_rows_free(out);
    return sp_err_set(err, SP_ENOMEM, "plan rows: out of memory");
  }
  return SP_OK;
}

int sp_plan_rows_store_origins(sp_store *s, const char *key, const sp_plan *p, sp_err *err) {
  sp_plan *read = NULL;
  sp_store_row_page pg = {0};
  sp_plan_rows rows = {0};
  int rc = SP_OK;
  if (!p) {
    sp_store_row_query q = {.section = "plan", .limit = 1, .skip_total = true};
    rc = sp_store_rows(s, key, &q, &pg, err);
    if (rc == SP_OK && pg.n == 0)
      rc = sp_err_set(err, SP_ENOTFOUND, "plan %.16s has no stored plan JSON to trace", key);
    if (rc == SP_OK) rc = sp_plan_from_json(pg.rows[0].json, strlen(pg.rows[0].json), &read, err);
    if (rc != SP_OK) goto done;
    p = read;
  }
  rc = sp_plan_rows_origins(p, &rows, err);
  if (rc == SP_OK && rows.n) rc = sp_store_add_rows(s, key, rows.v, rows.n, err);
done:
  sp_plan_rows_free(&rows);
  sp_store_row_page_free(&pg);
  sp_plan_free(read);
  return rc;
}

int sp_plan_rows_build_with(const sp_plan *p, unsigned flags, sp_plan_rows *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  users_index u = {-1, NULL, NULL};
  int rc = users_build(p, &u);
  if (!rc) rc = push(out, "summary", 0, p->filename, summary(p));
  cJSON *origins = NULL;
  if (!rc && !(flags & SP_PLAN_ROWS_NO_ORIGINS) && sp_plan_provenance(p, &origins, err) != SP_OK)
    rc = SP_ENOMEM;
  for (int i = 0; !rc && i < p->nvalues; i++) {
    cJSON *v = sp_plan_value_to_json(&p->values[i]);
    cJSON *o = cJSON_DetachItemFromArray(origins, 0);  /* origins[i], in order */
    if (v && o) cJSON_AddItemToObject(v, "origins", o);
    else cJSON_Delete(o);
    rc = push(out, "value", i, p->values[i].name, v);
  }
  cJSON_Delete(origins);
  for (int i = 0; !rc && i < p->nops; i++) {
    char label[160];
    snprintf(label, sizeof label, "%s #%d", p->ops[i].name ? p->ops[i].name : "?", p->ops[i].op);
    rc = push(out, "op", p->ops[i].op, label, op_row(p, &p->ops[i], &u));
  }
  for (int i = 0; !rc && i < p->ncollectives; i++) {
    const sp_plan_collective *c = &p->collectives[i];
    char label[200];
    snprintf(label, sizeof label, "%s %s at %s", c->kind ? c->kind : "",
             c->value_name ? c->value_name : "", c->op_name ? c->op_name : "");
    rc = push(out, "collective", i, label, sp_plan_collective_to_json(c));
  }
  int nconf = cJSON_GetArraySize(p->conflicts);
  for (int i = 0; !rc && i < nconf; i++) {
    cJSON *c = sp_plan_conflict_to_json(p, i);
    char label[200];
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "op_name");
    const cJSON *opn = cJSON_GetObjectItemCaseSensitive(c, "op");
    const cJSON *fac = cJSON_GetObjectItemCaseSensitive(c, "factor");
    snprintf(label, sizeof label, "%s #%d factor %s",
             cJSON_IsString(name) ? name->valuestring : "?",
             cJSON_IsNumber(opn) ? opn->valueint : -1,
             cJSON_IsString(fac) ? fac->valuestring : "?");
    rc = push(out, "conflict", i, label, c);
  }
  if (!rc) rc = push_op_costs(p, out);
  for (int i = 0; !rc && i < p->nwarnings; i++) {
    const sp_plan_warning *w = &p->warnings[i];
    cJSON *o = cJSON_CreateObject();
    if (o) {
      cJSON_AddStringToObject(o, "severity", w->severity ? w->severity : "warning");
      cJSON_AddNumberToObject(o, "line", w->line);
      cJSON_AddNumberToObject(o, "col", w->col);
      cJSON_AddStringToObject(o, "message", w->message ? w->message : "");
    }
    rc = push(out, "warning", i, w->message, o);
  }
  users_free(&u);
  if (rc) {
    sp_plan_rows_free(out);
    return sp_err_set(err, SP_ENOMEM, "plan rows: out of memory");
  }
  return SP_OK;
}

void sp_plan_rows_free(sp_plan_rows *r) {
  for (size_t i = 0; i < r->n; i++) {
    free((char *)r->v[i].label);
    free((char *)r->v[i].json);
  }
  free(r->v);
  memset(r, 0, sizeof *r);
}
