/*
 * rule_cache.h - the sharding rules a propagation session attaches: interned, and found again
 * by op signature.
 *
 * Interning: rules are immutable once attached, so ops with equal rules (the same layer
 * repeated, element-wise chains) share one compact copy (one allocation: the rule, its
 * factors, tensors, dims and factor indices side by side).
 *
 * Signatures: for most ops the registry's rule is a function of the op kind, the operand and
 * result types (shapes and element types), the op's attributes and the conservative flag
 * alone. Such an op gets the rule an earlier op of equal signature got, without running the
 * registry again. Ops whose rule also depends on something else (custom calls: the target's
 * own logic; concatenate and dynamic_update_slice: the ops defining their operands) and ops
 * carrying attributes that are not plain values (an existing sdy.sharding_rule, shardings,
 * meshes, axes) are never keyed. Only rules the registry built without error or warning are
 * remembered, so looking one up never changes what is reported.
 *
 * Memory: the tables are malloc'd and freed by sp_rule_cache_free; interned rules live in the
 * arena passed to sp_rule_cache_intern (the module's), borrowed ops must outlive the cache.
 */
#ifndef SP_RULE_CACHE_H
#define SP_RULE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "ir/rule.h"

typedef struct sp_rule_cache sp_rule_cache;

/* NULL on out-of-memory. */
sp_rule_cache *sp_rule_cache_new(void);
/* NULL is a no-op. */
void sp_rule_cache_free(sp_rule_cache *c);

/* The cache's copy of a rule equal to `r` (which may live in scratch memory), allocated from
 * `a` on first sight. NULL on out-of-memory. */
sp_rule *sp_rule_cache_intern(sp_rule_cache *c, sp_arena *a, const sp_rule *r);

/* Whether `op`'s registry rule depends only on its signature (see above). */
bool sp_rule_cache_keyable(const sp_op *op);
/* The rule remembered for an op of the same signature as keyable `op`, or NULL. */
sp_rule *sp_rule_cache_find(const sp_rule_cache *c, const sp_op *op, bool conservative);
/* Remembers interned rule `r` (non-NULL) as the rule of keyable `op`'s signature. A failure
 * to grow the table only means the signature is not remembered. */
void sp_rule_cache_remember(sp_rule_cache *c, const sp_op *op, bool conservative, sp_rule *r);

#endif /* SP_RULE_CACHE_H */
