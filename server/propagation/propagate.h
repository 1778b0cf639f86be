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
 *      where it is); pushing an op also pushes its ancestors (they have no rules). A popped op
 *      that is pure and whose results have no uses is erased (and the defining ops of its
 *      operands left with at most one other user are pushed). When a value's sharding changes
 *      (operands first, then results): if it is a data-flow edge, the users of the edge's other
 *      targets are pushed (a while's body and condition arguments); then its defining op (or
 *      the op owning its block), then each user in use-list order (newest use first, so the
 *      textually first user runs first). A use that feeds a data-flow edge pushes that edge
 *      op (while / optimization_barrier operands, named and manual computation operands,
 *      while-body / case-branch / sdy.return terminators); a func.return of a function with
 *      callers pushes the users of the calls' results; a func.call pushes the users of the
 *      callee's argument; other terminators push their parent op. The op being visited is
 *      never pushed. Then every other member of the value's sharding group gets the same
 *      sharding and is notified the same way;
 *   3. the returned values' shardings are pushed back onto the main function's results.
 * Each visited op with a registry rule gets it as `sdy.sharding_rule` (the session keeps it
 * for later rounds and attaches it when it ends, see below).
 *
 * Data-flow edges (shared/notes/shardy_semantics.md 6.1) propagate as identity rules between
 * their sources and the edge op, which holds the sharding of all its targets: a while body
 * argument's sharding is read from and written to the edge on the matching while result. For a
 * manual computation, a body-argument edge holds the local sharding (manual axes stripped) and
 * is seen globally (the in_sharding's manual axes put back in front) while propagating; a
 * result edge holds the global sharding and is seen locally. sdy.func_data_flow_edge ops on a
 * callee's argument take the matching operand of every call as sources, those on a call
 * result the callee's returned value. Edges always propagate non-conservatively.
 * sdy.propagation_barrier propagates as an identity in its allowed direction only.
 *
 * Shortcuts that never change the outcome: an op whose tensors' axes agree on every factor
 * (for rules with one factor per dimension) is not projected onto a factor table; within a
 * session, an op left "settled" by its last visit (no rule, no common mesh, such agreement, or
 * an aggressive visit along every factor that changed nothing) is left out of the next run's
 * initial worklist until a push marks it again, since popping it would do nothing; an op whose
 * signature (kind, types, attributes) equals an earlier op's gets that op's rule without
 * asking the registry again (rule_cache.h); and a visit whose rule, mesh, options, directions
 * and sharding contents equal an earlier visit's takes that visit's outcome, sharing its new
 * shardings, instead of building a factor table (prop_memo.h; not while conflicts are being
 * recorded, since the memo does not replay them). Rules built by a session are attached to
 * the ops when it ends, and only if they stay (a session freed without `finish`, or
 * `keep_sharding_rules`).
 *
 * A pass (sp_propagate_module) is: sp_propagate_prepare (type check; the initial sync of the
 * sharding groups, sp_sharding_groups_sync of sharding_groups.h: groups whose members'
 * shardings agree are synced, disagreeing groups get a fully open sdy.sharding_constraint
 * after every member, taking over its uses, and a warning), the fixed point, and
 * sp_propagate_finish (non-custom rules removed unless `keep_sharding_rules`). The strategy
 * hierarchy (op_priority.h, user_priority.h) runs several fixed points between one prepare and
 * one finish.
 *
 * Memory: new shardings, rules and inserted ops live in the module's arena; per-op factor
 * tables in a scratch arena that is recycled as it grows; the worklist, maps, rule cache and
 * memo are malloc'd and freed with the session. A session writes its op numbers into
 * op->pass_index. Conflict records go to `conflicts` (or m->conflicts).
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
 * are NONE regardless). Used by the op-priority rounds. Data-flow edge ops are passed with
 * their identity rule. */
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
  int64_t erased;                /* dead pure ops erased */
  /* Registry warnings are not kept here: they go to the module's one diagnostics list,
   * m->diags (ir/diag.h), at most one per kind per sp_rules_diag, as Shardy warns once. */
} sp_propagate_stats;

/* One whole pass for one strategy: prepare, fixed point, finish. Errors: SP_EINVAL for a
 * module propagation cannot work on (no main function, a dynamic or tuple result type, a
 * sharding naming an unknown mesh or axis, a malformed op attribute the rule registry
 * rejects), SP_ENOMEM. `stats` (may be NULL) is reset first. */
int sp_propagate_module(sp_module *m, const sp_propagate_options *o, sp_propagate_stats *stats,
                        sp_err *err);

/* Once per pass, before the first fixed point: the type check and the sharding-group sync. */
int sp_propagate_prepare(sp_module *m, const sp_propagate_options *o, sp_err *err);
/* Steps 1-3 once. `stats` (may be NULL) is added to, not reset. */
int sp_propagate_fixed_point(sp_module *m, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err);
/* Once per pass, at the end: drops non-custom rules unless o->keep_sharding_rules. */
void sp_propagate_finish(sp_module *m, const sp_propagate_options *o);

/* The sharding propagation reads for `v`: its own, or for a while body or condition argument
 * the one of the data-flow edge on the matching while result. */
sp_sharding *sp_propagate_live_sharding(sp_value *v);
/* The value whose `sharding` field holds that sharding (the edge's result, or `v`). */
sp_value *sp_propagate_slot(sp_value *v);

/* A session is one pass's state shared by its fixed points: the op numbering (one walk over
 * the module per pass), the rule cache, the memo of visit outcomes, the dead-op flags, the call
 * and sharding-group indexes.
 * Ops must not be added or moved between its runs (propagation itself only erases dead ones).
 * `prepare` runs sp_propagate_prepare's checks and group sync in the same walk. */
typedef struct sp_propagate_session sp_propagate_session;

int sp_propagate_session_new(sp_module *m, bool prepare, sp_propagate_session **out,
                             sp_err *err);
/* One fixed point (steps 1-3). `stats` (may be NULL) is added to. */
int sp_propagate_session_run(sp_propagate_session *s, const sp_propagate_options *o,
                             sp_propagate_stats *stats, sp_err *err);
/* Shardings were changed from outside the worklist (other than by a run): every op is looked
 * at again by the next run. */
void sp_propagate_session_invalidate(sp_propagate_session *s);
/* The session's ops in pre-order (erased ones included). */
sp_op *const *sp_propagate_session_ops(const sp_propagate_session *s, int *n);
/* Frees the session; with `finish`, first drops non-custom rules unless o->keep_sharding_rules
 * (as sp_propagate_finish, without walking the module again). The rules the session built are
 * attached to their ops now unless they would be dropped. NULL is a no-op. */
void sp_propagate_session_free(sp_propagate_session *s, bool finish,
                               const sp_propagate_options *o);

/* Removes every non-custom `sdy.sharding_rule` attribute of the module's ops. */
void sp_propagate_drop_rules(sp_module *m);

#endif /* SP_PROPAGATE_H */
