/*
 * export_pipeline.h - Shardy's -sdy-export-pipeline: the passes that turn a propagated module
 * into one a partitioner can run, in Shardy's order:
 *   sharding groups removed; sharding constraints become reshards; data-flow edges sunk;
 *   named computations exported and the call graph un-flattened (dedup-functions-fully),
 *   functions left without callers erased;
 *   non-divisible input/output shardings fixed; sub-axes cut from the main function's open
 *   input/output dims; every sharding closed; constants and scalars merged; explicit
 *   reshards (with enable-insert-explicit-collectives all of them, chains of reshards folded,
 *   and every reshard lowered to collectives; the default version otherwise,
 *   export/explicit_reshards.h); call reshards; the canonicalizer's collective patterns
 *   (propagation/canonicalize.h); sharding rules dropped; meshes inlined; propagation debug info removed; unused private functions erased.
 *
 * Options (`name=value`, booleans): enable-insert-explicit-collectives,
 * remove-all-gather-reduce-scatter-for-cmv1, dedup-functions-fully, keep-sharding-rules,
 * avoid-export-for-partitioning (no explicit reshards or collectives). Unknown options are
 * errors naming them.
 *
 * Memory: everything in the module's arena.
 */
#ifndef SP_EXPORT_PIPELINE_H
#define SP_EXPORT_PIPELINE_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

typedef struct sp_export_options {
  bool explicit_collectives;   /* enable-insert-explicit-collectives */
  bool remove_ag_rs_cmv1;      /* remove-all-gather-reduce-scatter-for-cmv1 */
  bool dedup_functions_fully;
  bool keep_sharding_rules;
  bool avoid_export_for_partitioning;
} sp_export_options;

int sp_export_parse_options(const char *text, sp_export_options *out, sp_err *err);
int sp_export_pipeline_run(sp_module *m, const sp_export_options *o, sp_err *err);
/* The full explicit reshards, reshard-of-reshard folding and reshards to collectives: the
 * explicit-collectives part of the export (also the propagation pipeline's hook). */
int sp_export_explicit_collectives(sp_module *m, sp_err *err);
/* -sdy-propagation-pipeline (propagation/pipeline.h) with enable-insert-explicit-collectives
 * served by sp_export_explicit_collectives. */
int sp_export_propagation_pipeline_pass(sp_module *m, const char *options, sp_err *err);
/* shardplan-opt's -sdy-export-pipeline. */
int sp_export_pipeline_pass(sp_module *m, const char *options, sp_err *err);

#endif /* SP_EXPORT_PIPELINE_H */
