/*
 * einsum.h - sharding rules written in JAX custom_partitioning's einsum-like notation.
 *
 *   "... i j, ... j k -> ... i k"
 *
 * Operand mappings, "->", result mappings; tensors separated by commas, dims by spaces.
 * A dim is a factor name ([A-Za-z_][A-Za-z0-9_]*) or a compound "(i j)" of several factors,
 * major first. A leading "..." (or U+2026 "…") stands for the tensor's leading dims not
 * written out; those batch dims are aligned from the right across tensors (as in numpy) and
 * each position is one shared factor. An empty mapping is a scalar.
 *
 * Sizes: a factor that is a whole dim somewhere takes that dim's size. A factor used only
 * inside compound dims needs a size, given in `opts->sizes` (JAX's **factor_sizes) or inline
 * after the mappings as "{i=2, j=4}"; when all but one factor of a compound dim are known,
 * the last one is inferred. Kinds may be given in `opts` or inline as
 * "reduction={k} need_replication={...} permutation={...} blocked_propagation={...}".
 *
 * Factors are numbered in order of first appearance (batch factors where their "..." first
 * appears, left to right), so "i j, j k -> i k" gives ([i, j], [j, k])->([i, k]) back.
 * The rule is marked custom.
 *
 * Errors name the column in the rule text ("column 7: expected a factor name ...") or the
 * tensor and dim that do not fit ("operand 1 dim 0 has size 8 but (i j) is 2*3 = 6").
 *
 * Memory: the rule and all scratch come from `a`. Cost is linear in the text length.
 */
#ifndef SP_RULES_EINSUM_H
#define SP_RULES_EINSUM_H

#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/rule.h"

typedef struct sp_einsum_size {
  const char *name;
  int64_t size;
} sp_einsum_size;

typedef struct sp_einsum_options {
  int nsizes;
  const sp_einsum_size *sizes;
  int nreduction;
  const char *const *reduction;
  int nneed_replication;
  const char *const *need_replication;
  int npermutation;
  const char *const *permutation;
  int nblocked;
  const char *const *blocked;
} sp_einsum_options;

/* Builds the rule for tensors of the given types (all ranked with static shapes). `opts` may
 * be NULL. */
int sp_einsum_rule(sp_arena *a, const char *text, const sp_einsum_options *opts,
                   int noperands, sp_type *const *operand_types, int nresults,
                   sp_type *const *result_types, sp_rule **out, sp_err *err);

/* Same, for an op's operand and result types. */
int sp_einsum_rule_for_op(sp_arena *a, const char *text, const sp_einsum_options *opts,
                          const sp_op *op, sp_rule **out, sp_err *err);

#endif /* SP_RULES_EINSUM_H */
