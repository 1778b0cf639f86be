/*
 * registry.h - the OpShardingRule registry: which factors each op's dimensions map to.
 *
 * sp_rules_for_op() returns the rule of one op, following Shardy's registry op by op
 * (shared/notes/shardy_semantics.md section 2.3): an existing `sdy.sharding_rule` attribute
 * is used as is; element-wise ops are pointwise; dot_general, reshape (compound factors),
 * convolution, gather, scatter, ... have dedicated rules; custom_call is looked up by target
 * name. Ops without a rule yield *out == NULL: silently for the structural ops (func, return,
 * constants, while, sdy.mesh, ...), with a warning for ops unknown to the registry.
 *
 * Warnings: the library never prints. The caller keeps one sp_rules_diag for the whole run
 * (Shardy warns once per process); each kind of warning is produced at most once per diag,
 * in `warning`, and the caller reports it.
 *
 * Errors: malformed attributes (a contracting dim out of range, a permutation of the wrong
 * length, a non-static shape) give SP_EINVAL / SP_EUNSUPPORTED with a message naming the op,
 * its line and the attribute.
 *
 * Memory: new rules are allocated from `a`; a rule already on the op is returned as is (it
 * belongs to the op's module). Cost is linear in the op's dims and operands.
 */
#ifndef SP_RULES_REGISTRY_H
#define SP_RULES_REGISTRY_H

#include <stdbool.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/rule.h"

typedef struct sp_rules_options {
  /* conservative-propagation=true: slices, pads and windows are blocked, concatenate has no
   * shared factor on the concat dim, convolutions have no spatial factors. */
  bool conservative;
} sp_rules_options;

typedef struct sp_rules_diag {
  /* Latches kept across calls: once set, that warning is not produced again. */
  bool unknown_op_reported;
  bool unknown_custom_call_reported;
  /* Out: set by the call that produced a warning (cleared at the start of every call). */
  bool has_warning;
  sp_loc warning_loc;                  /* the op's location */
  char warning[SP_ERR_MSG_MAX];        /* e.g. "op 'mhlo.foo' is unknown to SDY ..." */
} sp_rules_diag;

/* How the registry sees an op, before looking at shapes. */
typedef enum sp_rules_class {
  SP_RULES_HAS_RULE,     /* a rule is built (may still be NULL, e.g. zero-element reshape) */
  SP_RULES_NO_RULE,      /* structural or opaque op: no rule, no warning */
  SP_RULES_UNKNOWN       /* no rule, and the registry warns */
} sp_rules_class;

/* The rule of `op`, or *out = NULL when it has none. `opts` and `diag` may be NULL. */
int sp_rules_for_op(sp_arena *a, const sp_op *op, const sp_rules_options *opts, sp_rule **out,
                    sp_rules_diag *diag, sp_err *err);

sp_rules_class sp_rules_classify(const sp_op *op);

/* Element-wise in the StableHLO sense: the pointwise math ops, select, clamp, and
 * bitcast_convert between equal shapes. */
bool sp_rules_is_elementwise(const sp_op *op);

/* The op-priority round-0 set: element-wise ops, sdy.sharding_constraint, sdy.reshard,
 * sdy.propagation_barrier, reshape, transpose, the MoveToHost / MoveToDevice custom calls,
 * sdy.data_flow_edge and sdy.func_data_flow_edge. */
bool sp_rules_is_pass_through_op(const sp_op *op);

#endif /* SP_RULES_REGISTRY_H */
