/*
 * plan.c - the engine's entry point (plan.h): parse or take a module, verify it, snapshot the
 * factor tables, propagate, search, and build the plan.
 *
 * Control: the options' deadline, cancel flag, progress callback and snapshot time become the
 * module's sp_run_ctl for the duration of the call (propagation and the search read it there;
 * the search's snapshots are finished into plans by plan_snapshot.c); an
 * explicit time limit is clamped to the time left before a fixed deadline, and a search
 * without one stays bounded by work, the deadline only cutting it. A cancel seen at any
 * check makes the call fail with SP_ETIMEOUT, whatever the stage returned.
 */
#include "plan/plan.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "ir/diag.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "plan/exported.h"
#include "plan/passes.h"
#include "plan/plan_int.h"
#include "propagation/conflict.h"
#include "propagation/export_shardings.h"
#include "propagation/report.h"
#include "propagation/trace.h"
#include "rules/registry.h"
#include "search/search_pass.h"
#include "solver/solver.h"

void sp_plan_options_init(sp_plan_options *o) {
  memset(o, 0, sizeof *o);
  o->mode = SP_PLAN_PROPAGATE_SEARCH;
  o->gap = -1;
  o->placement = SP_PLAN_DEFAULT;
  o->mesh_shape = SP_PLAN_DEFAULT;
}

/* Appends `key``value` to the option text in buf (len bytes so far), space-separated. */
static bool append_option(char *buf, size_t nbuf, size_t *len, const char *key,
                          const char *value) {
  if (!*key) return true;
  int n = snprintf(buf + *len, nbuf - *len, "%s%s%s", *len ? " " : "", key, value);
  if (n < 0 || (size_t)n >= nbuf - *len) return false;
  *len += (size_t)n;
  return true;
}

/* The pass that propagates (out->flag NULL for none) and its options. The default is Shardy's
 * whole pipeline with or without the search: its import turns func.call ops into named
 * computations that propagation walks through (user-priority propagation alone stops at a call,
 * whose results the search could then only keep replicated), and its export brings them back as
 * calls with their shardings. Another strategy is the pipeline's propagation step
 * (propagation-pass=), so it keeps the import and export. Before the search the export leaves
 * open dims open (keep-shardings-open), so the search may still add axes to them;
 * `*close_after` says that the shardings the search does not write (callees, nested regions)
 * are closed after it. The option text may be composed in `buf`. */
static int propagation_pass(const sp_plan_options *o, bool search, char *buf, size_t nbuf,
                            sp_pass_info *out, const char **options, bool *close_after,
                            sp_err *err) {
  static const char *const steps[] = {NULL, "op-priority", "aggressive", "basic"};
  const char *flag = o->propagation;
  *options = o->propagation_options;
  *close_after = false;
  if ((int)o->strategy < 0 || (int)o->strategy > SP_PLAN_BASIC)
    return sp_err_set(err, SP_EINVAL, "unknown propagation strategy %d", (int)o->strategy);
  if (!flag) {
    flag = "sdy-propagation-pipeline";
    const char *step = steps[o->strategy];
    bool open = search && !*options;
    if (step || open) {
      size_t len = 0;
      bool fits = append_option(buf, nbuf, &len, *options ? *options : "", "") &&
                  (!step || append_option(buf, nbuf, &len, "propagation-pass=", step)) &&
                  (!open || append_option(buf, nbuf, &len, "keep-shardings-open=true", ""));
      if (!fits)
        return sp_err_set(err, SP_EINVAL, "propagation options longer than %zu bytes", nbuf);
      *options = buf;
    }
    *close_after = open;
  }
  out->flag = NULL;
  if (!*flag) return SP_OK;
  if (!sp_pass_find(flag, strlen(flag), out))
    return sp_err_set(err, SP_EINVAL, "unknown propagation pass '%s'", flag);
  if (out->run_ctx)
    return sp_err_set(err, SP_EINVAL, "'%s' is not a propagation pass", flag);
  return SP_OK;
}

static int cancelled(const sp_run_ctl *ctl, sp_err *err) {
  return sp_err_set(err, SP_ETIMEOUT, "%s", sp_run_ctl_cancelled(ctl)
                                                ? "the request was cancelled"
                                                : "the deadline passed before propagation finished");
}

int sp_plan_run(const sp_plan_input *in, const sp_cluster *cluster, const sp_plan_options *o,
                sp_plan **out, sp_err *err) {
  *out = NULL;
  sp_plan_options defaults;
  if (!o) {
    sp_plan_options_init(&defaults);
    o = &defaults;
  }
  bool search = o->mode == SP_PLAN_PROPAGATE_SEARCH;
  if (search && !cluster)
    return sp_err_set(err, SP_EINVAL, "planning with the search needs a cluster");
  if (!in || (!in->module && !in->text))
    return sp_err_set(err, SP_EINVAL, "no module to plan");
  sp_pass_info prop;
  const char *prop_options;
  bool close_after;
  char prop_buf[1024];
  int rc = propagation_pass(o, search, prop_buf, sizeof prop_buf, &prop, &prop_options,
                            &close_after, err);
  if (rc) return rc;

  sp_module *owned = NULL, *m = in->module;
  sp_diag_list diags;
  sp_diag_list_init(&diags);
  sp_arena *log_arena = NULL;
  sp_conflict_log log;
  sp_prop_report *rep = NULL;
  cJSON *report = NULL;
  sp_ptr_map numbers;
  sp_ptr_map_init(&numbers);
  sp_pass_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  sp_run_ctl ctl = {.deadline = o->deadline, .cancel = o->cancel, .progress = o->progress,
                    .progress_ctx = o->progress_ctx, .moving_deadline_us = o->moving_deadline_us,
                    .snapshot_at_us = o->snapshot_at_us};
  struct sp_diag_list *saved_diags = NULL;
  struct sp_conflict_log *saved_log = NULL;
  const struct sp_run_ctl *saved_ctl = NULL;
  struct sp_rules_diag *saved_warned = NULL;
  sp_rules_diag warned;  /* registry warnings: once per kind per request */
  bool own_trace = false;
  memset(&warned, 0, sizeof warned);

  if (!m) {
    const char *file = in->filename ? in->filename : "<request>";
    if ((rc = sp_mlir_parse(in->text, in->len, file, 1, &owned, err))) return rc;
    m = owned;
  }
  saved_diags = m->diags;
  saved_log = m->conflicts;
  saved_ctl = m->ctl;
  saved_warned = m->warned;
  m->diags = &diags;
  m->ctl = &ctl;
  m->warned = &warned;
  if ((rc = sp_verify_module(m, err))) goto done;
  int next = 0;
  if ((rc = sp__plan_number_ops(m, &numbers, &next, err))) goto done;
  if (!o->no_tables) {
    if (!(log_arena = sp_arena_new(0))) {
      rc = sp_err_set(err, SP_ENOMEM, "out of memory");
      goto done;
    }
    sp_conflict_log_init(&log, log_arena);
    m->conflicts = &log;
    if ((rc = sp_prop_report_begin(m, false, &rep, err))) goto done;
  }
  /* Shardy's sharding origins as data (trace.h): recorded where the debugging trace would
   * start, no attribute written. A module that has a trace already keeps it as it is. */
  own_trace = !o->no_origins && !m->trace;
  if (own_trace && (rc = sp_trace_want_origins(m, err))) goto done;
  if (prop.flag && (rc = sp_pass_run(&prop, m, prop_options, NULL, err))) goto done;
  if (sp_run_ctl_stopped(&ctl)) {
    rc = cancelled(&ctl, err);
    goto done;
  }
  if (search) {
    sp_search_overrides ov;
    sp_search_overrides_init(&ov);
    ov.cluster = cluster;
    ov.time_limit = o->time_limit > 0 ? o->time_limit : -1;
    ov.default_time_limit = 0;   /* no time limit given: bounded by work */
    ov.nincumbent = o->nincumbent;
    ov.incumbent = o->incumbent;
    if (sp_run_ctl_deadline(&ctl) > 0) {
      /* The deadline cuts the search; it shortens an explicit time limit, but a search
       * bounded by work stays so (the deadline only stops it where it is). A moving deadline
       * is read as the search goes. */
      double left = sp_run_ctl_left(&ctl);
      if (left <= 0) {
        rc = cancelled(&ctl, err);
        goto done;
      }
      if (!o->moving_deadline_us && ov.time_limit > 0 && left < ov.time_limit)
        ov.time_limit = left;
    }
    ov.gap = o->gap;
    ov.placement = o->placement;
    ov.mesh_shape = o->mesh_shape;
    sp__plan_snapshots snaps = {o, m, &numbers, next, rep, log_arena ? &log : NULL, close_after};
    if (o->snapshot_at_us && o->on_snapshot) {
      ov.on_snapshot = sp__plan_snapshot;
      ov.snapshot_ctx = &snaps;
    }
    if ((rc = sp_search_pass_with(m, o->search_options, &ov, &ctx.summary, err))) goto done;
    /* The plan reports and prices the collectives the export inserts (plan/exported.h). */
    if ((rc = sp_plan_use_exported_collectives(m, &ctx.summary, err))) goto done;
    ctx.has_summary = true;
    if (close_after && (rc = sp_export_close_shardings(m, err))) goto done;
  }
  if (sp_run_ctl_cancelled(&ctl)) {
    rc = cancelled(&ctl, err);
    goto done;
  }
  if (rep && (rc = sp_prop_report_end(rep, &log, &report, err))) goto done;
  rc = sp__plan_build(m, &numbers, -1, report, ctx.has_summary ? &ctx.summary : NULL, out, err);
done:
  if (rc && sp_run_ctl_cancelled(&ctl) && rc != SP_ETIMEOUT) rc = cancelled(&ctl, err);
  m->diags = saved_diags;
  m->conflicts = saved_log;
  m->ctl = saved_ctl;
  m->warned = saved_warned;
  if (own_trace && m->trace) {   /* the plan has the origins now; the caller's module goes on without */
    m->trace_free(m->trace);
    m->trace = NULL;
  }
  cJSON_Delete(report);
  sp_prop_report_free(rep);
  sp_arena_free(log_arena);
  sp_ptr_map_free(&numbers);
  sp_diag_list_free(&diags);
  sp_module_free(owned);
  return rc;
}

void sp_plan_thread_end(void) { sp_sg_thread_end(); }
