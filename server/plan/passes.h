/*
 * passes.h - the pass registry: every pass flag shardplan-opt accepts (Shardy's sdy_opt flags
 * and shardplan's own), with its help text and the function that runs it. shardplan-opt, the
 * daemon and the plan entry point (plan.h) all look passes up here; a new pass is one row in
 * passes.c.
 *
 * A pass transforms a module in place. `options` is the text after '=' in the flag (NULL when
 * absent), e.g. "conservative-propagation=true"; the pass parses it (ir/pass_options.h) and
 * reports bad options through `err` like any other failure. Warnings go to m->diags, conflicts
 * to m->conflicts; the deadline and cancel flag are read from m->ctl.
 *
 * A pass that has something to hand back besides the module (the search: its cost summary)
 * takes a sp_pass_ctx; sp_pass_run passes one to either kind. The registry is this stage's
 * table (propagation and search passes) followed by the import stage's
 * (propagation/import_passes.h) and the export stage's (export/export_passes.h); lookups
 * return a row by value.
 *
 * Thread safety: the table is constant; passes may run on different modules in different
 * threads at once. Memory: flags and help are static strings.
 */
#ifndef SP_PLAN_PASSES_H
#define SP_PLAN_PASSES_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/pass_info.h"
#include "search/plan_search.h"

/* What a pass hands back to its caller besides the module. */
typedef struct sp_pass_ctx {
  /* -shardplan-search: the plan's cost summary (lists in the module's arena) and whether it
   * was filled. */
  bool has_summary;
  sp_plan_summary summary;
  /* -shardplan-search: plan against this cluster instead of loading cluster=FILE (the
   * daemon's request carries the cluster); NULL: cluster= is required. Not owned. */
  const sp_cluster *cluster;
} sp_pass_ctx;

/* The rows (sp_pass_info: flag, run, help, run_ctx) are ir/pass_info.h's. */

/* The i-th pass (from 0, in the order `-help` lists them) into *out; false past the end. */
bool sp_pass_at(int i, sp_pass_info *out);
/* The pass whose flag is the first `n` bytes of `flag` into *out; false if there is none. */
bool sp_pass_find(const char *flag, size_t n, sp_pass_info *out);
/* Runs `p` on `m`; `ctx` may be NULL (then nothing is handed back). */
int sp_pass_run(const sp_pass_info *p, sp_module *m, const char *options, sp_pass_ctx *ctx,
                sp_err *err);

#endif /* SP_PLAN_PASSES_H */
