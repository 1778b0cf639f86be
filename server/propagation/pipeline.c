/*
 * pipeline.c - -sdy-propagation-pipeline and the import/export pass adapters (see
 * pipeline.h).
 */
#include "propagation/pipeline.h"

#include <string.h>

#include "propagation/constants.h"
#include "propagation/data_flow_edges.h"
#include "propagation/export_shardings.h"
#include "propagation/func_calls.h"
#include "propagation/mesh_import.h"
#include "propagation/prop_passes.h"
#include "propagation/sharding_constraints.h"
#include "propagation/sharding_groups.h"

/* ------------------------------------------------------------------ option text */

/* Calls `item` on each `key[=value]` of `text` (values may be quoted); stops at an error. */
typedef int (*option_fn)(const char *k, size_t kn, const char *v, size_t vn, void *ctx,
                         sp_err *err);

static int for_each_option(const char *text, option_fn item, void *ctx, sp_err *err) {
  const char *p = text ? text : "";
  if (*p == '{') p++;
  while (*p) {
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (!*p || *p == '}') break;
    const char *k = p;
    while (*p && *p != '=' && *p != ' ' && *p != ',' && *p != '}') p++;
    size_t kn = (size_t)(p - k);
    const char *v = p;
    size_t vn = 0;
    if (*p == '=') {
      v = ++p;
      char quote = (*p == '"' || *p == '\'') ? *p : 0;
      if (quote) {
        v = ++p;
        while (*p && *p != quote) p++;
        vn = (size_t)(p - v);
        if (*p) p++;
      } else {
        while (*p && *p != ' ' && *p != ',' && *p != '}') p++;
        vn = (size_t)(p - v);
      }
    }
    int rc = item(k, kn, v, vn, ctx, err);
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
  bool on = false;
  if (key_is(k, kn, "dedup-functions-fully") || key_is(k, kn, "enable-insert-explicit-collectives")) {
    int rc = parse_bool(PIPELINE, k, kn, v, vn, &on, err);
    if (rc || !on) return rc;
    return sp_err_set(err, SP_EUNSUPPORTED, "-%s: %.*s=true is not supported", PIPELINE, (int)kn, k);
  }
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", PIPELINE, (int)kn, k);
}

int sp_pipeline_parse_options(const char *text, sp_pipeline_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  out->prop.strategy = SP_PROP_AGGRESSIVE;
  return for_each_option(text, pipeline_item, out, err);
}

/* ------------------------------------------------------------------ the pipeline */

typedef int (*step_fn)(sp_module *m, sp_err *err);

static int run_steps(sp_module *m, const step_fn *steps, int n, sp_err *err) {
  for (int i = 0; i < n; i++) {
    if (!steps[i]) continue;
    int rc = steps[i](m, err);
    if (rc) return rc;
  }
  return SP_OK;
}

static int import_calls(sp_module *m, sp_err *err) {
  int rc = sp_func_calls_import(m, err);
  return rc ? rc : sp_symbol_dce(m, err);
}

static int export_calls(sp_module *m, sp_err *err) {
  int rc = sp_func_calls_export(m, err);
  if (!rc) rc = sp_func_calls_results_from_returns(m, err);
  if (!rc) rc = sp_symbol_dce(m, err);
  if (!rc) rc = sp_func_calls_insert_reshards(m, err);
  return rc;
}

static int drop_rules(sp_module *m, sp_err *err) {
  (void)err;
  sp_propagate_drop_rules(m);
  return SP_OK;
}

int sp_pipeline_run(sp_module *m, const sp_pipeline_options *o, sp_err *err) {
  const step_fn import[] = {
      sp_symbol_dce,
      sp_mesh_lift_inlined,
      sp_mesh_remove_size_one_axes,
      sp_func_calls_shardings_to_calls,
      sp_constants_split,
      sp_symbol_dce,
      sp_mesh_manual_axes_cleanup,
      sp_data_flow_edges_add,
      o->skip_inline ? NULL : import_calls,
      sp_sharding_constraints_apply,
      sp_sharding_groups_import,
      sp_func_calls_pre_order,
  };
  const step_fn exporting[] = {
      sp_data_flow_edges_sink,
      o->skip_inline ? NULL : export_calls,
      sp_constants_merge,
      sp_sharding_groups_remove,
      o->skip_convert_to_reshard ? NULL : sp_sharding_constraints_to_reshard,
      sp_export_update_non_divisible,
      sp_export_remove_sub_axes_in_main,
      sp_export_close_shardings,
      o->avoid_export_for_partitioning ? NULL : sp_export_insert_explicit_reshards,
      sp_export_canonicalize,
      o->prop.keep_sharding_rules ? NULL : drop_rules,
  };
  int rc = run_steps(m, import, (int)(sizeof import / sizeof import[0]), err);
  if (rc) return rc;
  if ((rc = sp_prop_pass_run(m, SP_PASS_USER_PRIORITY, &o->prop, err))) return rc;
  return run_steps(m, exporting, (int)(sizeof exporting / sizeof exporting[0]), err);
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
  return rc ? rc : sp_data_flow_edges_sink(m, err);
}

int sp_pipeline_pass_apply_sharding_constraints(sp_module *m, const char *options, sp_err *err) {
  debug_flags f = {"sdy-apply-sharding-constraints", "debug-sharding-origins",
                   "debug-propagation-edge-sharding", false, false};
  int rc = for_each_option(options, debug_item, &f, err);
  return rc ? rc : sp_sharding_constraints_apply(m, err);
}
