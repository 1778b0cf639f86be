/*
 * import_passes.h - Shardy's import passes as shardplan-opt runs them: one entry point per
 * `-sdy-...` flag, taking the option text after '=' (NULL when absent) and transforming the
 * module in place, and -sdy-import-pipeline running them in Shardy's order. Each parses its
 * options (`name=value` items, booleans true/false/1/0; an unknown option is an error naming
 * it) and calls the pass's own module:
 *
 *   -sdy-lift-inlined-meshes, -sdy-remove-size-one-axes, -sdy-manual-axes-cleanup
 *                                            mesh_import.h
 *   -sdy-propagate-sharding-from-func-to-call, -sdy-import-func-calls
 *   (add-data-flow-edges-on-named-computations), -sdy-pre-order-funcs
 *                                            func_calls.h
 *   -sdy-flatten-call-graph                  flatten_call_graph.h
 *   -sdy-add-func-data-flow-edges            func_data_flow_edges.h
 *   -sdy-constant-or-scalar-splitter         constants.h
 *   -sdy-explicit-gather-scatter-batching    gather_scatter_batching.h
 *   -sdy-sharding-group-import               sharding_groups.h
 *   -sdy-import-pipeline                     pipeline.h's import half (sp_pipeline_import:
 *                                            the one code path -sdy-propagation-pipeline
 *                                            runs too), with its options
 *
 * Memory: none kept.
 */
#ifndef SP_IMPORT_PASSES_H
#define SP_IMPORT_PASSES_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/pass_info.h"

/* The import passes (rows of ir/pass_info.h; run_ctx NULL), ending with an all-NULL entry. */
extern const sp_pass_info sp_import_passes[];

#endif /* SP_IMPORT_PASSES_H */
