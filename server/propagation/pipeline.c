/*
 * pipeline.c - -sdy-propagation-pipeline and the import/export pass adapters (see
 * pipeline.h).
 */
#include "propagation/pipeline.h"

#include <string.h>

#include "ir/pass_options.h"
#include "propagation/constants.h"
#include "propagation/data_flow_edges.h"
#include "propagation/export_shardings.h"
#include "propagation/func_calls.h"
#include "propagation/func_data_flow_edges.h"
#include "propagation/gather_scatter_batching.h"
#include "propagation/mesh_import.h"
#include "propagation/prop_passes.h"
#include "propagation/sharding_constraints.h"
#include "propagation/sharding_groups.h"
#include "propagation/trace.h"
#include "propagation/trace_attrs.h"

/* ------------------------------------------------------------------ option text */

/* Calls `item` on each `key[=value]` of `text` (values may be quoted); stops at an error. */
typedef int (*option_fn)(const char *k, size_t kn, const char *v, size_t vn, void *ctx,
                         sp_err *err);

static int for_each_option(const char *text, option_fn item, void *ctx, sp_err *err) {
  const char *p = sp_options_begin(text);
  sp_option_item it;
  while (sp_options_next(&p, &it)) {
    int rc = item(it.key, it.key_len, it.value, it.value_len, ctx, err);
    if (rc) return rc;
  }
  return SP_OK;
}

static bool key_is(const char *k, size_t kn, const char *name) {
  return strlen(name) == kn && memcmp(k, name, kn) == 0;
}

static int parse_bool(const char *pass, const char *k, size_t kn, const char *v, size_t vn,
                      bool *out, sp_err *err) {
  if (vn == 0 || (vn == 4 && memcmp(v, "true", 4) == 0) || (vn == 1 && v[0] == '1')) {
    *out = true;
    return SP_OK;
  }
  if ((vn == 5 && memcmp(v, "false", 5) == 0) || (vn == 1 && v[0] == '0')) {
    *out = false;
    return SP_OK;
  }
  return sp_err_set(err, SP_EINVAL, "-%s: option %.*s expects true or false, not '%.*s'", pass,
                    (int)kn, k, (int)vn, v);
}

static const char PIPELINE[] = "sdy-propagation-pipeline";

static int pipeline_item(const char *k, size_t kn, const char *v, size_t vn, void *ctx,
                         sp_err *err) {
  sp_pipeline_options *o = ctx;
  sp_propagate_options *p = &o->prop;
  if (key_is(k, kn, "keep-sharding-rules"))
    return parse_bool(PIPELINE, k, kn, v, vn, &p->keep_sharding_rules, err);
  if (key_is(k, kn, "conservative-propagation"))
    return parse_bool(PIPELINE, k, kn, v, vn, &p->conservative, err);
  if (key_is(k, kn, "debug-sharding-origins"))
    return parse_bool(PIPELINE, k, kn, v, vn, &p->debug_origins, err);
  if (key_is(k, kn, "debug-propagation-edge-sharding"))
    return parse_bool(PIPELINE, k, kn, v, vn, &p->debug_edges, err);
  if (key_is(k, kn, "skip-convert-to-reshard"))
    return parse_bool(PIPELINE, k, kn, v, vn, &o->skip_convert_to_reshard, err);
  if (key_is(k, kn, "skip-inline")) return parse_bool(PIPELINE, k, kn, v, vn, &o->skip_inline, err);
  if (key_is(k, kn, "avoid-export-for-partitioning"))
    return parse_bool(PIPELINE, k, kn, v, vn, &o->avoid_export_for_partitioning, err);
  if (key_is(k, kn, "propagation-strategy")) {
    /* The propagation passes own the strategy names; reuse their parser on this one item. */
    char item[64];
    if (kn + vn + 2 > sizeof item)
      return sp_err_set(err, SP_EINVAL, "-%s: propagation-strategy value too long", PIPELINE);
    memcpy(item, k, kn);
    item[kn] = '=';
    memcpy(item + kn + 1, v, vn);
    item[kn + 1 + vn] = '\0';
    sp_propagate_options tmp;
    int rc = sp_prop_pass_parse_options(SP_PASS_USER_PRIORITY, item, &tmp, err);
    if (rc) return sp_err_prefix(err, "-%s", PIPELINE);
    p->strategy = tmp.strategy;
    p->basic_then_aggressive = tmp.basic_then_aggressive;
    return SP_OK;
  }
  if (key_is(k, kn, "enable-insert-explicit-collectives"))
    return parse_bool(PIPELINE, k, kn, v, vn, &o->explicit_collectives, err);
  if (key_is(k, kn, "dedup-functions-fully"))
    return parse_bool(PIPELINE, k, kn, v, vn, &o->dedup_functions_fully, err);
  if (key_is(k, kn, "keep-shardings-open"))
    return parse_bool(PIPELINE, k, kn, v, vn, &o->keep_shardings_open, err);
  if (key_is(k, kn, "module-dump-directory"))
    return sp_err_set(err, SP_EUNSUPPORTED, "-%s: module-dump-directory is not supported", PIPELINE);
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", PIPELINE, (int)kn, k);
}

int sp_pipeline_parse_options(const char *text, sp_pipeline_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  out->prop.strategy = SP_PROP_AGGRESSIVE;
  return for_each_option(text, pipeline_item, out, err);
}

/* ------------------------------------------------------------------ the pipeline */

/* What a module contains, from one walk, so that steps with nothing to do are skipped (every
 * step walks the whole module, and a walk of a large module costs as much as a small step). */
typedef struct features {
  bool private_funcs, calls, constants, manual, data_flow, named, edges, constraints, groups;
  bool func_edges, gathers;
  bool inline_meshes;
} features;

static bool has_inline_mesh(sp_sharding *const *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] && v[i]->inline_mesh) return true;
  return false;
}

static bool scan_op(sp_op *op, void *ctx) {
  features *f = ctx;
  switch (op->kind) {
    case SP_OP_FUNC: {
      const char *vis = sp_op_get_str(op, "sym_visibility");
      f->private_funcs |= vis && strcmp(vis, "private") == 0;
      sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
      for (int i = 0; entry && i < entry->nargs; i++)
        f->inline_meshes |= entry->args[i]->sharding && entry->args[i]->sharding->inline_mesh;
      if (op->func && op->func->result_shardings)
        f->inline_meshes |= has_inline_mesh(op->func->result_shardings, op->func->nresults);
      if (op->func && op->func->decl_arg_attrs) f->inline_meshes = true; /* rare: look closer */
      break;
    }
    case SP_OP_FUNC_CALL: f->calls = true; break;
    case SP_OP_CONSTANT:
    case SP_OP_SDY_CONSTANT:
    case SP_OP_IOTA:
    case SP_OP_BROADCAST_IN_DIM: f->constants = true; break;
    case SP_OP_SDY_MANUAL_COMPUTATION: f->manual = f->data_flow = true; break;
    case SP_OP_SDY_NAMED_COMPUTATION: f->named = f->data_flow = true; break;
    case SP_OP_WHILE:
    case SP_OP_CASE:
    case SP_OP_OPTIMIZATION_BARRIER: f->data_flow = true; break;
    case SP_OP_SDY_DATA_FLOW_EDGE: f->edges = true; break;
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE: f->func_edges = true; break;
    case SP_OP_GATHER:
    case SP_OP_SCATTER: f->gathers = true; break;
    case SP_OP_SDY_SHARDING_CONSTRAINT: f->constraints = true; break;
    case SP_OP_SDY_SHARDING_GROUP: f->groups = true; break;
    default: break;
  }
  for (int i = 0; i < op->nresults && !f->inline_meshes; i++)
    f->inline_meshes = op->results[i].sharding && op->results[i].sharding->inline_mesh;
  for (int i = 0; i < op->attrs.n && !f->inline_meshes; i++) {
    const sp_attr *at = &op->attrs.v[i];
    if (at->kind == SP_ATTR_SHARDING) f->inline_meshes = at->u.sharding && at->u.sharding->inline_mesh;
    if (at->kind == SP_ATTR_SHARDINGS) f->inline_meshes = has_inline_mesh(at->u.shardings.v, at->u.shardings.n);
  }
  return true;
}

static features scan(sp_module *m) {
  features f;
  memset(&f, 0, sizeof f);
  sp_op_walk(m->op, scan_op, &f);
  return f;
}

/* Duplicate meshes or meshes with size-one axes (top-level ops only, no walk). */
static void scan_meshes(const sp_module *m, bool *duplicates, bool *size_one) {
  *duplicates = *size_one = false;
  for (const sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    sp_attr *at = op->kind == SP_OP_SDY_MESH ? sp_op_attr(op, "mesh") : NULL;
    if (!at || at->kind != SP_ATTR_MESH) continue;
    for (int i = 0; i < at->u.mesh->naxes; i++) *size_one |= at->u.mesh->axes[i].size == 1;
    for (const sp_op *q = sp_module_body(m)->first; q != op; q = q->next) {
      sp_attr *bt = q->kind == SP_OP_SDY_MESH ? sp_op_attr(q, "mesh") : NULL;
      if (bt && bt->kind == SP_ATTR_MESH && sp_mesh_equal(bt->u.mesh, at->u.mesh)) *duplicates = true;
    }
  }
}

#define STEP(cond, call)              \
  do {                                \
    if ((cond) && (rc = (call))) return rc; \
  } while (0)

static int import_steps(sp_module *m, const sp_pipeline_options *o, sp_err *err) {
  features f = scan(m);
  bool duplicate_meshes, size_one_axes;
  scan_meshes(m, &duplicate_meshes, &size_one_axes);
  /* dedup-functions-fully: functions stay functions, linked by func data-flow edges. */
  bool inline_calls = f.calls && !o->skip_inline && !o->dedup_functions_fully;
  int rc;
  STEP(f.private_funcs, sp_symbol_dce(m, err));
  STEP(f.inline_meshes || duplicate_meshes, sp_mesh_lift_inlined(m, err));
  STEP(size_one_axes || f.inline_meshes, sp_mesh_remove_size_one_axes(m, err));
  STEP(f.calls, sp_func_calls_shardings_to_calls(m, err));
  STEP(f.constants, sp_constants_split(m, err));
  STEP(f.private_funcs, sp_symbol_dce(m, err));
  STEP(f.manual, sp_mesh_manual_axes_cleanup(m, err));
  STEP(f.gathers, sp_gather_scatter_explicit_batching(m, err));
  STEP(f.data_flow, sp_data_flow_edges_add(m, err));
  STEP(f.calls && o->dedup_functions_fully, sp_func_data_flow_edges_add(m, err));
  STEP(inline_calls, sp_func_calls_import(m, true, err));
  STEP(inline_calls, sp_symbol_dce(m, err));
  /* The debugging options start the trace here, so that applied constraints are recorded. */
  STEP(o->prop.debug_origins || o->prop.debug_edges,
       sp_trace_enable(m, o->prop.debug_origins, o->prop.debug_edges, err));
  STEP(f.constraints || f.manual, sp_sharding_constraints_apply(m, err));
  STEP(f.groups, sp_sharding_groups_import(m, err));
  STEP(true, sp_func_calls_pre_order(m, err));
  return SP_OK;
}

static int export_steps(sp_module *m, const sp_pipeline_options *o, sp_err *err) {
  features f = scan(m);
  bool export_calls = f.named && !o->skip_inline;
  int rc;
  STEP(f.func_edges, sp_func_data_flow_edges_sink(m, err));
  STEP(f.edges && (o->prop.debug_origins || o->prop.debug_edges),
       sp_trace_sink_attrs(m, o->prop.debug_origins, o->prop.debug_edges, err));
  STEP(f.edges, sp_data_flow_edges_sink(m, err));
  STEP(export_calls, sp_func_calls_export(m, err));
  STEP(export_calls || f.calls, sp_func_calls_results_from_returns(m, err));
  STEP(export_calls, sp_symbol_dce(m, err));
  STEP(export_calls || f.calls, sp_func_calls_insert_reshards(m, err));
  STEP(f.constants, sp_constants_merge(m, err));
  STEP(f.groups, sp_sharding_groups_remove(m, err));
  STEP(f.constraints && !o->skip_convert_to_reshard, sp_sharding_constraints_to_reshard(m, err));
  STEP(true, sp_export_update_non_divisible(m, err));
  STEP(true, sp_export_remove_sub_axes_in_main(m, err));
  STEP(!o->keep_shardings_open, sp_export_close_shardings(m, err));
  if (!o->avoid_export_for_partitioning && o->explicit_collectives) {
    if (!o->explicit_reshards)
      return sp_err_set(err, SP_EUNSUPPORTED, "-%s: enable-insert-explicit-collectives needs the "
                        "export stage (run the pipeline through the pass registry)", PIPELINE);
    STEP(true, o->explicit_reshards(m, err));
  }
  STEP(!o->avoid_export_for_partitioning && !o->explicit_collectives,
       sp_export_insert_explicit_reshards(m, err));
  STEP(true, sp_export_canonicalize(m, err));
  return SP_OK;
}

#undef STEP

int sp_pipeline_run(sp_module *m, const sp_pipeline_options *o, sp_err *err) {
  int rc = import_steps(m, o, err);
  if (rc) return rc;
  /* The propagation step also drops the non-custom sharding rules unless keep-sharding-rules. */
  if ((rc = sp_prop_pass_run(m, SP_PASS_USER_PRIORITY, &o->prop, err))) return rc;
  return export_steps(m, o, err);
}

/* ------------------------------------------------------------------ pass adapters */

int sp_pipeline_pass_propagation(sp_module *m, const char *options, sp_err *err) {
  sp_pipeline_options o;
  int rc = sp_pipeline_parse_options(options, &o, err);
  return rc ? rc : sp_pipeline_run(m, &o, err);
}

static int no_options(const char *k, size_t kn, const char *v, size_t vn, void *ctx,
                      sp_err *err) {
  (void)v;
  (void)vn;
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", (const char *)ctx, (int)kn, k);
}

int sp_pipeline_pass_add_data_flow_edges(sp_module *m, const char *options, sp_err *err) {
  int rc = for_each_option(options, no_options, "sdy-add-data-flow-edges", err);
  return rc ? rc : sp_data_flow_edges_add(m, err);
}

typedef struct debug_flags {
  const char *pass;
  const char *origins_key, *edges_key;
  bool origins, edges;
} debug_flags;

static int debug_item(const char *k, size_t kn, const char *v, size_t vn, void *ctx,
                      sp_err *err) {
  debug_flags *f = ctx;
  if (key_is(k, kn, f->origins_key)) return parse_bool(f->pass, k, kn, v, vn, &f->origins, err);
  if (key_is(k, kn, f->edges_key)) return parse_bool(f->pass, k, kn, v, vn, &f->edges, err);
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", f->pass, (int)kn, k);
}

int sp_pipeline_pass_sink_data_flow_edges(sp_module *m, const char *options, sp_err *err) {
  debug_flags f = {"sdy-sink-data-flow-edges", "sink-debug-sharding-origins",
                   "sink-debug-propagation-edge-sharding", false, false};
  int rc = for_each_option(options, debug_item, &f, err);
  if (!rc) rc = sp_trace_sink_attrs(m, f.origins, f.edges, err);
  return rc ? rc : sp_data_flow_edges_sink(m, err);
}

int sp_pipeline_pass_apply_sharding_constraints(sp_module *m, const char *options, sp_err *err) {
  debug_flags f = {"sdy-apply-sharding-constraints", "debug-sharding-origins",
                   "debug-propagation-edge-sharding", false, false};
  int rc = for_each_option(options, debug_item, &f, err);
  if (!rc) rc = sp_trace_enable(m, f.origins, f.edges, err);
  if (!rc) rc = sp_sharding_constraints_apply(m, err);
  return rc || !(f.origins || f.edges) ? rc : sp_trace_write_attrs(m, err);
}
