/*
 * populate.h - the `-sdy-populate-op-sharding-rules` pass: attach every op's rule.
 *
 * Walks the module in pre-order (nested ops included) and sets `sdy.sharding_rule` on each
 * op the registry gives a rule; ops that already carry one keep it. Registry warnings go to
 * `warn` (once per kind per `diag`, as Shardy warns once per process); the library does not
 * print them itself.
 *
 * Memory: rules are allocated from the module's arena.
 */
#ifndef SP_RULES_POPULATE_H
#define SP_RULES_POPULATE_H

#include "ir/err.h"
#include "ir/ir.h"
#include "rules/registry.h"

/* Called with the op a warning is about and its text ("op 'x' is unknown to ..."). */
typedef void (*sp_rules_warn_fn)(void *ctx, const sp_op *op, const char *message);

/* Parses the pass options text ("", "conservative-propagation=true", ...); NULL = defaults. */
int sp_rules_parse_options(const char *text, sp_rules_options *out, sp_err *err);

/* Attaches rules to every op of `m`. `opts`, `diag` and `warn` may be NULL. Stops at the first
 * op whose attributes are malformed, with `err` naming it. */
int sp_rules_populate(sp_module *m, const sp_rules_options *opts, sp_rules_diag *diag,
                      sp_rules_warn_fn warn, void *warn_ctx, sp_err *err);

#endif /* SP_RULES_POPULATE_H */
