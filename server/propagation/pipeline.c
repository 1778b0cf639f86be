/*
 * pipeline.c - -sdy-propagation-pipeline and the import/export pass adapters (see
 * pipeline.h).
 */
#include "propagation/pipeline.h"

#include <string.h>

#include "ir/pass_options.h"
#include "propagation/call_graph.h"
#include "propagation/constants.h"
#include "propagation/data_flow_edges.h"
#include "propagation/export_shardings.h"
#include "propagation/flatten_call_graph.h"
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

static const char PIPELINE[] = "sdy-propagation-pipeline";

/* One `key[=value]` item of the pipeline's options. */
/* propagation-pass=user-priority|op-priority|aggressive|basic. */
static int parse_pass(const sp_option_item *it, sp_pipeline_options *o, sp_err *err) {
  static const struct {
    const char *name;
    sp_prop_pass_kind kind;
  } passes[] = {{"user-priority", SP_PASS_USER_PRIORITY}, {"op-priority", SP_PASS_OP_PRIORITY},
                {"aggressive", SP_PASS_AGGRESSIVE},       {"basic", SP_PASS_BASIC}};
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
    if (it->value && it->value_len == strlen(passes[i].name) &&
        memcmp(it->value, passes[i].name, it->value_len) == 0) {
      o->pass = passes[i].kind;
      if (o->pass == SP_PASS_BASIC) o->prop.strategy = SP_PROP_BASIC;
      return SP_OK;
    }
  return sp_err_set(err, SP_EINVAL, "-%s: propagation-pass must be user-priority, op-priority, "
                    "aggressive or basic, not '%.*s'", PIPELINE, it->value ? (int)it->value_len : 0,
                    it->value ? it->value : "");
}

static int pipeline_item(const sp_option_item *it, sp_pipeline_options *o, sp_err *err) {
  sp_propagate_options *p = &o->prop;
  if (sp_option_is(it, "keep-sharding-rules"))
    return sp_option_bool(PIPELINE, it, &p->keep_sharding_rules, err);
  if (sp_option_is(it, "conservative-propagation"))
    return sp_option_bool(PIPELINE, it, &p->conservative, err);
  if (sp_option_is(it, "debug-sharding-origins"))
    return sp_option_bool(PIPELINE, it, &p->debug_origins, err);
  if (sp_option_is(it, "debug-propagation-edge-sharding"))
    return sp_option_bool(PIPELINE, it, &p->debug_edges, err);
  if (sp_option_is(it, "skip-convert-to-reshard"))
    return sp_option_bool(PIPELINE, it, &o->skip_convert_to_reshard, err);
  if (sp_option_is(it, "skip-inline")) return sp_option_bool(PIPELINE, it, &o->skip_inline, err);
  if (sp_option_is(it, "avoid-export-for-partitioning"))
    return sp_option_bool(PIPELINE, it, &o->avoid_export_for_partitioning, err);
  if (sp_option_is(it, "propagation-strategy"))   /* the propagation passes' names */
    return sp_prop_pass_parse_strategy(PIPELINE, it, p, err);
  if (sp_option_is(it, "enable-insert-explicit-collectives"))
    return sp_option_bool(PIPELINE, it, &o->explicit_collectives, err);
  if (sp_option_is(it, "dedup-functions-fully"))
    return sp_option_bool(PIPELINE, it, &o->dedup_functions_fully, err);
  if (sp_option_is(it, "keep-shardings-open"))
    return sp_option_bool(PIPELINE, it, &o->keep_shardings_open, err);
  if (sp_option_is(it, "propagation-pass")) return parse_pass(it, o, err);
  if (sp_option_is(it, "module-dump-directory"))
    return sp_err_set(err, SP_EUNSUPPORTED, "-%s: module-dump-directory is not supported", PIPELINE);
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", PIPELINE, (int)it->key_len,
                    it->key);
}

static const char IMPORT[] = "sdy-import-pipeline";

/* One item of -sdy-import-pipeline's options: those of the pipeline its steps read. */
static int import_item(const sp_option_item *it, sp_pipeline_options *o, sp_err *err) {
  if (sp_option_is(it, "skip-inline")) return sp_option_bool(IMPORT, it, &o->skip_inline, err);
  if (sp_option_is(it, "debug-sharding-origins"))
    return sp_option_bool(IMPORT, it, &o->prop.debug_origins, err);
  if (sp_option_is(it, "debug-propagation-edge-sharding"))
    return sp_option_bool(IMPORT, it, &o->prop.debug_edges, err);
  if (sp_option_is(it, "module-dump-directory"))
    return sp_err_set(err, SP_EUNSUPPORTED, "-%s: module-dump-directory is not supported", IMPORT);
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", IMPORT, (int)it->key_len, it->key);
}

int sp_pipeline_parse_import_options(const char *text, sp_pipeline_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  out->prop.strategy = SP_PROP_AGGRESSIVE;
  const char *p = sp_options_begin(text);
  sp_option_item it;
  while (sp_options_next(&p, &it)) {
    int rc = import_item(&it, out, err);
    if (rc) return rc;
  }
  return SP_OK;
}

int sp_pipeline_parse_options(const char *text, sp_pipeline_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  out->prop.strategy = SP_PROP_AGGRESSIVE;
  out->pass = SP_PASS_USER_PRIORITY;
  const char *p = sp_options_begin(text);
  sp_option_item it;
  while (sp_options_next(&p, &it)) {
    int rc = pipeline_item(&it, out, err);
    if (rc) return rc;
  }
  return SP_OK;
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

int sp_pipeline_import(sp_module *m, const sp_pipeline_options *o, sp_err *err) {
  features f = scan(m);
  bool duplicate_meshes, size_one_axes;
  scan_meshes(m, &duplicate_meshes, &size_one_axes);
  bool inline_calls = f.calls && !o->skip_inline;
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
  STEP(inline_calls, sp_flatten_call_graph(m, err));
  STEP(inline_calls, sp_symbol_dce(m, err));
  STEP(inline_calls, sp_func_calls_import(m, true, err));
  STEP(inline_calls, sp_symbol_dce(m, err));
  /* The debugging options (or the plan's wish for origins as data, trace.h) start the trace
   * here, so that applied constraints are recorded. */
  STEP(true, sp_trace_enable(m, o->prop.debug_origins, o->prop.debug_edges, err));
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
  STEP(export_calls, sp_call_graph_export_named(m, err));
  STEP(export_calls || f.calls, sp_func_calls_results_from_returns(m, err));
  STEP(export_calls || f.calls, sp_call_graph_unflatten(m, o->dedup_functions_fully, err));
  STEP(export_calls || f.calls, sp_symbol_dce(m, err));
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
  int rc = sp_pipeline_import(m, o, err);
  if (rc) return rc;
  /* The propagation step also drops the non-custom sharding rules unless keep-sharding-rules. */
  if ((rc = sp_prop_pass_run(m, o->pass, &o->prop, err))) return rc;
  return export_steps(m, o, err);
}

/* ------------------------------------------------------------------ pass adapters */

int sp_pipeline_pass_propagation(sp_module *m, const char *options, sp_err *err) {
  sp_pipeline_options o;
  int rc = sp_pipeline_parse_options(options, &o, err);
  return rc ? rc : sp_pipeline_run(m, &o, err);
}

int sp_pipeline_pass_import(sp_module *m, const char *options, sp_err *err) {
  sp_pipeline_options o;
  int rc = sp_pipeline_parse_import_options(options, &o, err);
  if (!rc) rc = sp_pipeline_import(m, &o, err);
  /* The pipeline writes them after propagation; alone, the import's are its output. */
  return rc || !(o.prop.debug_origins || o.prop.debug_edges) ? rc : sp_trace_write_attrs(m, err);
}

int sp_pipeline_pass_add_data_flow_edges(sp_module *m, const char *options, sp_err *err) {
  int rc = sp_options_parse_bools("sdy-add-data-flow-edges", options, NULL, NULL, 0, err);
  return rc ? rc : sp_data_flow_edges_add(m, err);
}

int sp_pipeline_pass_sink_data_flow_edges(sp_module *m, const char *options, sp_err *err) {
  bool origins = false, edges = false;
  static const char *const keys[] = {"sink-debug-sharding-origins",
                                     "sink-debug-propagation-edge-sharding"};
  bool *const outs[] = {&origins, &edges};
  int rc = sp_options_parse_bools("sdy-sink-data-flow-edges", options, keys, outs, 2, err);
  if (!rc) rc = sp_trace_sink_attrs(m, origins, edges, err);
  return rc ? rc : sp_data_flow_edges_sink(m, err);
}

int sp_pipeline_pass_apply_sharding_constraints(sp_module *m, const char *options, sp_err *err) {
  bool origins = false, edges = false;
  static const char *const keys[] = {"debug-sharding-origins", "debug-propagation-edge-sharding"};
  bool *const outs[] = {&origins, &edges};
  int rc = sp_options_parse_bools("sdy-apply-sharding-constraints", options, keys, outs, 2, err);
  if (!rc) rc = sp_trace_enable(m, origins, edges, err);
  if (!rc) rc = sp_sharding_constraints_apply(m, err);
  return rc || !(origins || edges) ? rc : sp_trace_write_attrs(m, err);
}
