/*
 * rule.h - OpShardingRule: how an op's tensor dimensions map to shared factors.
 *
 * A rule has F factors (indices 0..F-1, printed i, j, ..., z, z_1, z_2, ...), each with a size
 * and a kind. Every operand and result dimension maps to one or more factors, major first (a
 * reshape's compound factor `ij`). A factor appears at most once per tensor. Kinds:
 * pass-through (default), reduction (contracting-like; never in a result), need-replication,
 * permutation; `blocked` is an orthogonal flag that stops propagation along the factor.
 * `custom` marks a user-supplied rule (kept by every pass).
 *
 * Text form: #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}>
 *
 * Memory: arena-owned, built with sp_rule_new/sp_rule_set_dim; immutable once attached to an op.
 */
#ifndef SP_RULE_H
#define SP_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/strbuf.h"

typedef enum sp_factor_kind {
  SP_FACTOR_PASS_THROUGH = 0,
  SP_FACTOR_REDUCTION,
  SP_FACTOR_NEED_REPLICATION,
  SP_FACTOR_PERMUTATION
} sp_factor_kind;

typedef struct sp_rule_factor {
  int64_t size;
  sp_factor_kind kind;
  bool blocked;         /* blocked_propagation */
} sp_rule_factor;

typedef struct sp_rule_dim {
  int nfactors;
  int *factors;         /* factor indices, major first */
} sp_rule_dim;

typedef struct sp_rule_tensor {
  int rank;
  sp_rule_dim *dims;
} sp_rule_tensor;

typedef struct sp_rule {
  int nfactors;
  sp_rule_factor *factors;
  int noperands;
  sp_rule_tensor *operands;
  int nresults;
  sp_rule_tensor *results;
  bool custom;
} sp_rule;

/* Printed name of factor `i` ("i".."z", then "z_1", ...) into `buf` (>= 16 bytes). */
void sp_rule_factor_name(int i, char *buf);
/* Appends the #sdy.op_sharding_rule<...> text. */
void sp_rule_print(sp_strbuf *sb, const sp_rule *r);
/* Structural equality. */
bool sp_rule_equal(const sp_rule *a, const sp_rule *b);

#endif /* SP_RULE_H */
