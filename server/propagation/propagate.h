/*
 * propagate.h - propagation over a whole module to a fixed point, for one strategy.
 *
 * This is the core of Shardy's -sdy-basic-propagate / -sdy-aggressive-propagate: a worklist of
 * ops, each visited op propagating through its sharding rule (factor_propagation.h), and every
 * op next to a changed value visited again, until nothing changes.
 *
 *   1. the main function's result shardings are pushed onto the values it returns (identity
 *      rule, both directions); main = the only func.func, else @main;
 *   2. the worklist runs: it starts as the module's ops in pre-order and is a stack (the op
 *      pushed last runs next) that never holds an op twice (pushing a pending op leaves it
 *      where it is). When a value's sharding changes (operands first, then results), its
 *      defining op (or the op owning its block) is pushed, then each user in use-list order
 *      (newest use first, so the textually first user runs first); a use by a terminator
 *      pushes the terminator's parent op instead. The op being visited is never pushed;
 *   3. the returned values' shardings are pushed back onto the main function's results.
 * Each visited op with a registry rule gets it attached as `sdy.sharding_rule` (so later
 * rounds reuse it); at the end non-custom rules are removed unless `keep_sharding_rules`.
 * sdy.propagation_barrier propagates as an identity in its allowed direction only.
 *
 * Not handled yet (see the report of this stage): data-flow edges (while/case/optimization
 * barrier/named and manual computations), func.call to non-inlined callees, sharding groups,
 * erasure of dead pure ops, pushing of ancestors (they have no rules, so visiting them is a
 * no-op).
 *
 * Memory: new shardings and attached rules live in the module's arena; per-op factor tables
 * in a scratch arena that is recycled as it grows. Conflict records go to `conflicts`.
 */
#ifndef SP_PROPAGATE_H
#define SP_PROPAGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "propagation/conflict.h"
#include "propagation/factor_propagation.h"
#include "rules/registry.h"

/* Fills out[0..rule->nfactors-1] with the direction of each factor of `op` (blocked factors
 * are NONE regardless). Used by the op-priority rounds. */
typedef void (*sp_propagate_direction_fn)(const sp_op *op, const sp_rule *rule,
                                          sp_prop_direction *out, void *ctx);

typedef struct sp_propagate_options {
  sp_prop_strategy strategy;
  bool conservative;             /* rules and propagation in conservative mode */
  bool keep_sharding_rules;
  sp_propagate_direction_fn direction;  /* NULL = BOTH for every factor */
  void *direction_ctx;
  sp_conflict_log *conflicts;    /* may be NULL (then the module's m->conflicts, if any) */
  sp_rules_diag *diag;           /* registry warnings, may be NULL */
  /* Fields below are read by the strategy hierarchy (op_priority.h, user_priority.h); a
   * zeroed struct means Shardy's defaults for the pass in question except `strategy`. */
  bool basic_then_aggressive;    /* propagation-strategy=basic-then-aggressive: a full basic
                                    fixed point, then a full aggressive one */
  bool skip_op_priority;         /* run-op-priority-propagation=false (user-priority pass) */
  bool debug_edges;              /* debug-propagation-edge-sharding=true (accepted) */
  bool debug_origins;            /* debug-sharding-origins=true (accepted) */
} sp_propagate_options;

typedef struct sp_propagate_stats {
  int64_t visits;                /* ops popped from the worklist */
  int64_t rule_visits;           /* ... of which had a rule and a common mesh */
  int64_t updates;               /* value shardings changed */
  /* Registry warnings met (at most one per kind per sp_rules_diag, as Shardy warns once). */
  int nwarnings;
  char warnings[2][SP_ERR_MSG_MAX];
} sp_propagate_stats;

/* Runs steps 1-3 above on `m`. Errors: SP_EINVAL for a module propagation cannot work on
 * (no main function, a dynamic or tuple result type, a sharding naming an unknown mesh or
 * axis, a malformed op attribute the rule registry rejects), SP_ENOMEM. `stats` may be NULL. */
int sp_propagate_module(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                        sp_err *err);

/* Removes every non-custom `sdy.sharding_rule` attribute of the module's ops. */
void sp_propagate_drop_rules(sp_module *m);

#endif /* SP_PROPAGATE_H */
