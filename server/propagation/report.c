/*
 * report.c - before/after factor tables and conflicts as JSON (see report.h).
 *
 * The "before" tables are turned into JSON at once (the shardings they came from may be
 * replaced by the passes); rules are kept as pointers (they are immutable and live in the
 * module's arena or the report's).
 */
#include "propagation/report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"
#include "propagation/factor_projection.h"
#include "propagation/propagate.h"
#include "rules/registry.h"

typedef struct report_op {
  sp_op *op;
  int number;          /* pre-order number at _begin */
  const sp_rule *rule;
  cJSON *before;       /* NULL: no table */
} report_op;

struct sp_prop_report {
  sp_module *m;
  sp_arena *arena;     /* rules computed here, scratch tables */
  bool conservative;
  int n, cap;
  report_op *ops;
  int counter;         /* pre-order numbering while walking */
  int status;
  sp_err *err;
};

/* The op's tensors' live shardings into in[0..n-1], and the common mesh (NULL if none). */
static const sp_mesh *op_mesh(sp_module *m, sp_op *op, sp_sharding **in, const sp_sharding **ref) {
  int n = op->noperands + op->nresults;
  for (int i = 0; i < op->noperands; i++)
    in[i] = op->operands[i].value ? sp_propagate_live_sharding(op->operands[i].value) : NULL;
  for (int j = 0; j < op->nresults; j++) in[op->noperands + j] = op->results[j].sharding;
  const sp_mesh *common = NULL;
  *ref = NULL;
  for (int i = 0; i < n; i++) {
    if (!in[i]) continue;
    const sp_mesh *mesh = sp_module_sharding_mesh(m, in[i]);
    if (!mesh || sp_mesh_is_empty(mesh)) continue;
    if (!common) {
      common = mesh;
      *ref = in[i];
    } else if (mesh != common && !sp_mesh_equal(mesh, common)) {
      return NULL;
    }
  }
  return common && !sp_mesh_is_maximal(common) ? common : NULL;
}

/* The op's factor table as JSON, or *out = NULL when there is none to show. */
static int table_json(sp_prop_report *r, sp_module *m, sp_op *op, const sp_rule *rule,
                      cJSON **out, sp_err *err) {
  *out = NULL;
  if (rule->noperands != op->noperands || rule->nresults != op->nresults) return SP_OK;
  int n = op->noperands + op->nresults;
  sp_sharding **in = malloc((size_t)(n ? n : 1) * sizeof *in);
  if (!in) return sp_err_set(err, SP_ENOMEM, "out of memory building the report");
  const sp_sharding *ref;
  const sp_mesh *mesh = op_mesh(m, op, in, &ref);
  int rc = SP_OK;
  if (mesh) {
    sp_arena *scratch = sp_arena_new(0);
    sp_factor_table *t = NULL;
    if (!scratch) {
      rc = sp_err_set(err, SP_ENOMEM, "out of memory building the report");
    } else if ((rc = sp_factor_table_build(scratch, rule, mesh, in, in + op->noperands, &t,
                                           err)) == SP_OK) {
      if (!(*out = sp_factor_table_to_json(t)))
        rc = sp_err_set(err, SP_ENOMEM, "out of memory building the report");
    }
    sp_arena_free(scratch);
  }
  free(in);
  return rc;
}

static bool snapshot_op(sp_op *op, void *ctx) {
  sp_prop_report *r = ctx;
  if (op == r->m->op) return true;
  int number = r->counter++;
  sp_rules_class cls = sp_rules_classify(op);
  const sp_rule *rule = sp_op_rule(op);
  if (!rule && cls == SP_RULES_HAS_RULE) {
    sp_rules_options ro = {r->conservative};
    sp_rules_diag quiet = {.unknown_op_reported = true, .unknown_custom_call_reported = true};
    sp_rule *built = NULL;
    if (sp_rules_for_op(r->arena, op, &ro, &built, &quiet, NULL) == SP_OK) rule = built;
  }
  if (!rule) return true;
  if (sp_grow((void **)&r->ops, &r->cap, r->n, sizeof *r->ops)) {
    r->status = sp_err_set(r->err, SP_ENOMEM, "out of memory building the report");
    return false;
  }
  report_op *ro = &r->ops[r->n++];
  *ro = (report_op){op, number, rule, NULL};
  if ((r->status = table_json(r, r->m, op, rule, &ro->before, r->err))) return false;
  return true;
}

void sp_prop_report_free(sp_prop_report *r) {
  if (!r) return;
  for (int i = 0; i < r->n; i++) cJSON_Delete(r->ops[i].before);
  free(r->ops);
  sp_arena_free(r->arena);
  free(r);
}

int sp_prop_report_begin(sp_module *m, bool conservative, sp_prop_report **out, sp_err *err) {
  *out = NULL;
  sp_prop_report *r = calloc(1, sizeof *r);
  if (!r || !(r->arena = sp_arena_new(0))) {
    free(r);
    return sp_err_set(err, SP_ENOMEM, "out of memory building the report");
  }
  r->m = m;
  r->conservative = conservative;
  r->err = err;
  sp_op_walk(m->op, snapshot_op, r);
  r->err = NULL;
  if (r->status) {
    int rc = r->status;
    sp_prop_report_free(r);
    return rc;
  }
  *out = r;
  return SP_OK;
}

/* Whether `op` is still in the module (it and its ancestors are attached). */
static bool attached(const sp_module *m, const sp_op *op) {
  for (; op && op != m->op; op = sp_op_parent(op))
    if (!op->block) return false;
  return op == m->op;
}

static bool add(cJSON *o, const char *k, cJSON *v) {
  if (!v) return false;
  cJSON_AddItemToObject(o, k, v);
  return true;
}

/* The op's entry; its "after" table read from the op's counterpart in `copy` (NULL: the op). */
static cJSON *op_json(sp_prop_report *r, report_op *ro, const sp_module_copy *copy, sp_err *err,
                      int *rc) {
  cJSON *o = cJSON_CreateObject();
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_rule_print(&sb, ro->rule);
  sp_module *m = copy ? copy->module : r->m;
  sp_op *at = copy ? sp_module_copy_op(copy, ro->op) : ro->op;
  bool erased = !at || !attached(m, at);
  cJSON *after = NULL;
  if (!erased && (*rc = table_json(r, m, at, ro->rule, &after, err))) {
    sp_strbuf_free(&sb);
    cJSON_Delete(o);
    return NULL;
  }
  bool ok = o && sp_strbuf_ok(&sb) && add(o, "op", cJSON_CreateNumber(ro->number)) &&
            add(o, "name", cJSON_CreateString(ro->op->name)) &&
            add(o, "line", cJSON_CreateNumber(ro->op->loc.line)) &&
            add(o, "col", cJSON_CreateNumber(ro->op->loc.col)) &&
            add(o, "rule", cJSON_CreateString(sp_strbuf_str(&sb))) &&
            add(o, "erased", cJSON_CreateBool(erased));
  sp_strbuf_free(&sb);
  if (ok) {
    cJSON *before = ro->before ? cJSON_Duplicate(ro->before, 1) : cJSON_CreateNull();
    ok = add(o, "before", before);
  }
  if (ok) {
    ok = add(o, "after", after ? after : cJSON_CreateNull());
    after = NULL;
  }
  cJSON_Delete(after);
  if (ok) return o;
  cJSON_Delete(o);
  *rc = sp_err_set(err, SP_ENOMEM, "out of memory building the report");
  return NULL;
}

int sp_prop_report_end_on(sp_prop_report *r, const sp_conflict_log *log,
                          const sp_module_copy *copy, cJSON **out, sp_err *err) {
  *out = NULL;
  int rc = SP_OK;
  cJSON *o = cJSON_CreateObject(), *ops = cJSON_CreateArray();
  bool ok = o && ops && add(o, "file", cJSON_CreateString(r->m->filename));
  for (int i = 0; ok && i < r->n; i++) {
    cJSON *x = op_json(r, &r->ops[i], copy, err, &rc);
    ok = x != NULL;
    if (ok) cJSON_AddItemToArray(ops, x);
  }
  if (ok) {
    ok = add(o, "ops", ops);
    ops = NULL;
  }
  if (ok) {
    cJSON *c = NULL;
    if (log) {
      c = sp_conflict_log_to_json(log);
    } else if ((c = cJSON_CreateObject())) {
      cJSON_AddItemToObject(c, "conflicts", cJSON_CreateArray());
      cJSON_AddItemToObject(c, "dropped", cJSON_CreateFalse());
    }
    if (c) {
      cJSON *conf = cJSON_DetachItemFromObject(c, "conflicts");
      cJSON *dropped = cJSON_DetachItemFromObject(c, "dropped");
      ok = add(o, "conflicts", conf) && add(o, "dropped", dropped);
      cJSON_Delete(c);
    } else {
      ok = false;
    }
  }
  cJSON_Delete(ops);
  if (!ok) {
    cJSON_Delete(o);
    return rc ? rc : sp_err_set(err, SP_ENOMEM, "out of memory building the report");
  }
  *out = o;
  return SP_OK;
}

int sp_prop_report_end(sp_prop_report *r, const sp_conflict_log *log, cJSON **out, sp_err *err) {
  return sp_prop_report_end_on(r, log, NULL, out, err);
}
