/*
 * export_passes.h - the export stage's passes as shardplan-opt runs them: one entry point per
 * `-sdy-...` flag, taking the option text after '=' (NULL when absent) and transforming the
 * module in place. Each parses its options (`name=value` items, booleans true/false/1/0; an
 * unknown option or value is an error naming it) and calls the pass's own module.
 *
 *   -sdy-remove-propagation-debug-info       debug_info.h
 *   -sdy-drop-sharding-rules                 non-custom sdy.sharding_rule attributes removed
 *   -sdy-remove-sharding-groups              propagation/sharding_groups.h
 *   -sdy-sharding-constraint-to-reshard      propagation/sharding_constraints.h
 *   -sdy-constant-or-scalar-merger           propagation/constants.h
 *   -sdy-drop-sharding-and-mesh, -sdy-inline-meshes        meshes.h
 *   -sdy-verify-unreduced-axes               verify_unreduced.h
 *   -sdy-export-named-computations, -sdy-propagate-to-func-results,
 *   -sdy-unflatten-call-graph (dedup-functions-fully), -sdy-insert-func-call-reshards
 *                                            propagation/func_calls.h
 *   -sdy-update-non-divisible-input-output-shardings, -sdy-remove-sub-axes-in-input-output-
 *   shardings, -sdy-close-shardings, -sdy-insert-explicit-reshards (enable-full-version)
 *                                            propagation/export_shardings.h
 *   -sdy-export-pipeline                     export_pipeline.h
 *
 * Memory: none kept.
 */
#ifndef SP_EXPORT_PASSES_H
#define SP_EXPORT_PASSES_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/pass_info.h"

/* The export passes (rows of ir/pass_info.h; run_ctx NULL), ending with an all-NULL entry. */
extern const sp_pass_info sp_export_passes[];

#endif /* SP_EXPORT_PASSES_H */
