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

/* The pass signature of shardplan-opt. */
typedef int (*sp_export_pass_fn)(sp_module *m, const char *options, sp_err *err);

typedef struct sp_export_pass {
  const char *flag;   /* without the leading dash */
  sp_export_pass_fn run;
  const char *help;
} sp_export_pass;

/* The export passes, ending with an all-NULL entry. */
extern const sp_export_pass sp_export_passes[];

/* Parses boolean options: `keys[i]` sets `*outs[i]` (n entries); other keys are errors naming
 * `pass`. */
int sp_export_parse_bools(const char *pass, const char *text, const char *const *keys,
                          bool *const *outs, int n, sp_err *err);

#endif /* SP_EXPORT_PASSES_H */
