/*
 * pipeline.h - Shardy's -sdy-propagation-pipeline, and the import/export passes
 * shardplan-opt runs on their own.
 *
 * The pipeline (shared/notes/shardy_semantics.md section 7), each step in its module:
 *   import   (sp_pipeline_import, also -sdy-import-pipeline) symbol DCE; lift inline meshes;
 *            remove size-one axes (mesh_import.h); func result shardings onto calls
 *            (func_calls.h); constant splitter (constants.h); symbol DCE; manual-axes
 *            cleanup (mesh_import.h); explicit gather/scatter batching
 *            (gather_scatter_batching.h); data-flow edges (data_flow_edges.h); unless
 *            skip-inline: flatten the call graph (flatten_call_graph.h), symbol DCE, calls
 *            imported as named computations with their data-flow edges (func_calls.h),
 *            symbol DCE; the trace started (trace.h: debugging options, or origins wanted as
 *            data); apply sharding constraints (sharding_constraints.h); sharding group
 *            import (sharding_groups.h); functions in caller-before-callee order.
 *   propagate user-priority propagation (user_priority.h: op priorities, aggressive strategy).
 *   export   sink data-flow edges; named computations back to functions; non-main
 *            functions take their returned values' shardings; un-flatten (call_graph.h: the
 *            same passes -sdy-export-pipeline runs); symbol DCE; call reshards;
 *            constant merger; sharding groups removed; constraints become reshards;
 *            non-divisible and main-function sub-axis I/O fixes; every sharding closed;
 *            explicit all-reduces / call reshards; collective canonicalizer (dead pure ops
 *            too) (export_shardings.h). Sharding rules are dropped by the propagation step
 *            (unless keep-sharding-rules).
 * The edges are sunk before the named computations are exported (Shardy exports first and
 * reads the live shardings through the edges; the result is the same). One walk before the
 * import and one before the export tell which kinds of ops the module has, and steps with
 * nothing to work on are skipped: every step walks the whole module, which on a large module
 * costs as much as the step itself.
 *
 * Options (`name=value`, separated by spaces or commas; booleans true/false/1/0):
 *   keep-sharding-rules, conservative-propagation, debug-sharding-origins,
 *   debug-propagation-edge-sharding, propagation-strategy=basic|aggressive|
 *   basic-then-aggressive, skip-convert-to-reshard (constraints stay constraints),
 *   skip-inline (calls are not imported as named computations),
 *   avoid-export-for-partitioning (no explicit all-reduces/reshards), dedup-functions-fully
 *   (as in Shardy, an option of the un-flattening only: the call graph is flattened and each
 *   copy propagated on its own as by default, then every call of one original function goes
 *   to one copy, the first called or the one of the sharding class with the most calls, keeping
 *   its own result shardings; call reshards then reconcile them with the copy's),
 *   enable-insert-explicit-collectives (every reshard and collective made explicit by the
 *   export stage's hook, see
 *   sp_pipeline_options). keep-shardings-open (shardplan's own, not Shardy's): the export
 *   leaves open dims open, so that the cost search that follows may still add axes to them
 *   (the plan stage's default before the search; the search closes them).
 *   propagation-pass=user-priority|op-priority|aggressive|basic (shardplan's own): which
 *   propagation pass runs between the import and the export (default user-priority, Shardy's;
 *   basic also sets the basic strategy): the planner's other strategies keep the import, so
 *   func.call results are propagated through as with the default.
 *   module-dump-directory is rejected (not implemented); unknown options are errors naming
 *   them.
 *
 * Memory: everything in the module's arena; the steps free their scratch memory.
 */
#ifndef SP_PIPELINE_H
#define SP_PIPELINE_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "propagation/prop_passes.h"
#include "propagation/propagate.h"

typedef struct sp_pipeline_options {
  sp_propagate_options prop;        /* user-priority propagation options */
  bool skip_convert_to_reshard;
  bool skip_inline;
  bool avoid_export_for_partitioning;
  bool explicit_collectives;        /* enable-insert-explicit-collectives */
  /* With explicit_collectives: the export stage's full explicit reshards and collectives
   * (export/export_pipeline.h sets it; the pipeline fails without it). */
  int (*explicit_reshards)(sp_module *m, sp_err *err);
  bool dedup_functions_fully;       /* un-flattening sends all calls of a function to one copy */
  bool keep_shardings_open;         /* shardplan's own: the export does not close shardings */
  sp_prop_pass_kind pass;           /* shardplan's own: the propagation step (user priority) */
} sp_pipeline_options;

/* Shardy's defaults, then the options in `text` (NULL or "" = none). */
int sp_pipeline_parse_options(const char *text, sp_pipeline_options *out, sp_err *err);

/* Runs the whole pipeline on `m`. */
int sp_pipeline_run(sp_module *m, const sp_pipeline_options *o, sp_err *err);

/* The import half alone, as the pipeline runs it (-sdy-import-pipeline): of `o` it reads
 * skip_inline and the debugging options (prop.debug_origins, prop.debug_edges: the trace
 * starts before the sharding constraints are applied, as in the pipeline). */
int sp_pipeline_import(sp_module *m, const sp_pipeline_options *o, sp_err *err);
/* -sdy-import-pipeline's options into `out` (Shardy's defaults otherwise): skip-inline,
 * debug-sharding-origins, debug-propagation-edge-sharding; module-dump-directory is rejected
 * as by the pipeline, anything else is an unknown option. */
int sp_pipeline_parse_import_options(const char *text, sp_pipeline_options *out, sp_err *err);

/* shardplan-opt entry points (`options` is the text after '=', NULL when absent):
 *   -sdy-propagation-pipeline          the options above
 *   -sdy-import-pipeline               sp_pipeline_parse_import_options; with a debugging
 *                                      option the trace's attributes are written at its end
 *   -sdy-add-data-flow-edges           no options
 *   -sdy-sink-data-flow-edges          sink-debug-sharding-origins,
 *                                      sink-debug-propagation-edge-sharding (accepted)
 *   -sdy-apply-sharding-constraints    debug-sharding-origins,
 *                                      debug-propagation-edge-sharding (accepted) */
int sp_pipeline_pass_propagation(sp_module *m, const char *options, sp_err *err);
int sp_pipeline_pass_import(sp_module *m, const char *options, sp_err *err);
int sp_pipeline_pass_add_data_flow_edges(sp_module *m, const char *options, sp_err *err);
int sp_pipeline_pass_sink_data_flow_edges(sp_module *m, const char *options, sp_err *err);
int sp_pipeline_pass_apply_sharding_constraints(sp_module *m, const char *options, sp_err *err);

#endif /* SP_PIPELINE_H */
