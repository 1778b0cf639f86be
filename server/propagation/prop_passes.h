/*
 * prop_passes.h - the propagation passes as shardplan-opt runs them: `=option` text in, module
 * transformed in place.
 *
 *   -sdy-populate-op-sharding-rules   conservative-propagation
 *   -sdy-basic-propagate              conservative-propagation, keep-sharding-rules,
 *                                     debug-propagation-edge-sharding, debug-sharding-origins
 *   -sdy-aggressive-propagate         + propagation-strategy=basic|aggressive|basic-then-aggressive
 *   -sdy-op-priority-propagate        + run-op-priority-propagation
 *   -sdy-user-priority-propagate      (same options)
 * Options are `name=value` pairs separated by spaces or commas; booleans accept true/false/1/0.
 * An unknown option or value is an error naming it. Warnings (registry) go to m->diags, as
 * Shardy emits them: once for each kind per latch, the module's m->warned when set (a tool
 * shares one across the modules of a run), else a fresh one per pass run.
 */
#ifndef SP_PROP_PASSES_H
#define SP_PROP_PASSES_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/pass_options.h"
#include "propagation/propagate.h"

typedef enum sp_prop_pass_kind {
  SP_PASS_BASIC = 0,
  SP_PASS_AGGRESSIVE,
  SP_PASS_OP_PRIORITY,
  SP_PASS_USER_PRIORITY
} sp_prop_pass_kind;

/* Fills `out` with the defaults of `kind` (basic strategy for SP_PASS_BASIC, aggressive for
 * the others) and then the options in `text` (NULL or "" = none). */
int sp_prop_pass_parse_options(sp_prop_pass_kind kind, const char *text,
                               sp_propagate_options *out, sp_err *err);
/* The propagation-strategy=basic|aggressive|basic-then-aggressive item `it` of pass `pass`
 * into o->strategy and o->basic_then_aggressive; another value is an error naming `pass`. */
int sp_prop_pass_parse_strategy(const char *pass, const sp_option_item *it,
                                sp_propagate_options *o, sp_err *err);

/* The pass entry points (shardplan-opt's pass signature). */
int sp_prop_pass_basic(sp_module *m, const char *options, sp_err *err);
int sp_prop_pass_aggressive(sp_module *m, const char *options, sp_err *err);
int sp_prop_pass_op_priority(sp_module *m, const char *options, sp_err *err);
int sp_prop_pass_user_priority(sp_module *m, const char *options, sp_err *err);
int sp_prop_pass_populate_rules(sp_module *m, const char *options, sp_err *err);

/* Runs pass `kind` with parsed options; registry warnings go to m->diags (o->diag, else
 * m->warned, else a latch of this run decides whether each is given). */
int sp_prop_pass_run(sp_module *m, sp_prop_pass_kind kind, const sp_propagate_options *o,
                     sp_err *err);

#endif /* SP_PROP_PASSES_H */
