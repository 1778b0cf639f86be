/*
 * rule_builder.h - builds an sp_rule (OpShardingRule) the way Shardy's builder does.
 *
 * The conventions decide how a rule prints, so they are part of the contract:
 *   - factors get indices in the order they are created (sp_rule_builder_factor);
 *   - a factor is mapped to a dim by appending it (major first): sp_rule_builder_map;
 *   - a factor of size 1 is NOT mapped to a dim that already has a factor (a size-1 factor may
 *     not share a dim); sp_rule_builder_map_always is the exception ("same dim for all
 *     tensors");
 *   - at sp_rule_builder_build, every dim still without a factor gets a fresh size-1 factor
 *     of its own: operands first (operand, then dim order), then results.
 * Tensors are numbered operands first: tensor t < noperands is operand t, else result
 * t - noperands. SP_RULE_NO_DIM in a dims array means "this tensor does not take the factor".
 *
 * Errors latch: after a failure (out of memory, SP_MAX_FACTORS) the builder ignores further
 * calls and sp_rule_builder_build returns the status. Bad tensor/dim indices are bugs of the
 * caller and latch SP_EINTERNAL.
 *
 * Memory: the builder lives on the caller's stack and keeps small rules in inline storage
 * (so it must not be copied once initialised); larger ones spill to the arena. The finished rule is allocated from the arena in three
 * blocks and owned by it.
 */
#ifndef SP_RULE_BUILDER_H
#define SP_RULE_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/rule.h"

#define SP_RULE_NO_DIM (-1)

/* Inline capacities; beyond them the builder spills to the arena. */
#define SP_RULE_BUILDER_INLINE_TENSORS 8
#define SP_RULE_BUILDER_INLINE_DIMS 48
#define SP_RULE_BUILDER_INLINE_FACTORS 32
#define SP_RULE_BUILDER_INLINE_LINKS 64

typedef struct sp_rule_link {   /* factor `factor` is mapped to flat dim `dim` */
  int dim;
  int factor;
} sp_rule_link;

typedef struct sp_rule_builder {
  sp_arena *arena;
  int status;                   /* SP_OK or the first failure */
  int noperands, nresults;
  int *rank;                    /* per tensor */
  int *dim_base;                /* per tensor: index of its dim 0 in the flat dim arrays */
  int ndims;                    /* total dims of all tensors */
  int *dim_count;               /* per flat dim: factors mapped so far */
  int nfactors, capfactors;
  sp_rule_factor *factors;
  int nlinks, caplinks;
  sp_rule_link *links;          /* in mapping order */
  int inline_ints[2 * SP_RULE_BUILDER_INLINE_TENSORS + SP_RULE_BUILDER_INLINE_DIMS];
  sp_rule_factor inline_factors[SP_RULE_BUILDER_INLINE_FACTORS];
  sp_rule_link inline_links[SP_RULE_BUILDER_INLINE_LINKS];
} sp_rule_builder;

/* Prepares a builder for tensors of the given ranks (ranks >= 0). */
int sp_rule_builder_init(sp_rule_builder *b, sp_arena *a, int noperands,
                         const int *operand_ranks, int nresults, const int *result_ranks);

/* Prepares a builder for `op`'s operand and result types, which must all be ranked tensors
 * with a static shape; otherwise fails with SP_EUNSUPPORTED naming the op and the value. */
int sp_rule_builder_init_op(sp_rule_builder *b, sp_arena *a, const sp_op *op, sp_err *err);

/* Creates a factor; returns its index, or -1 once the builder has failed. */
int sp_rule_builder_factor(sp_rule_builder *b, int64_t size, sp_factor_kind kind, bool blocked);

/* Maps factor `f` to dim `dim` of tensor `t` (skipped for a size-1 factor when the dim
 * already has a factor). */
void sp_rule_builder_map(sp_rule_builder *b, int t, int dim, int f);
/* Same, without the size-1 exception. */
void sp_rule_builder_map_always(sp_rule_builder *b, int t, int dim, int f);

/* Creates a factor and maps it to operand dims `operand_dims[i]` and result dims
 * `result_dims[j]` (SP_RULE_NO_DIM to skip a tensor; NULL arrays skip all). Returns the
 * factor index (-1 after a failure). */
int sp_rule_builder_add(sp_rule_builder *b, const int *operand_dims, const int *result_dims,
                        int64_t size, sp_factor_kind kind, bool blocked);

/* Pointwise helper: for each d < rank, a factor of size shape[d] mapped to dim d of every
 * tensor whose rank equals `rank` (scalars and other ranks are left out). */
void sp_rule_builder_pointwise(sp_rule_builder *b, const int64_t *shape, int rank);

/* A factor mapped to dim `dim` of every tensor of rank `rank` (one dim of the pointwise
 * helper, with a chosen kind). Returns the factor index. */
int sp_rule_builder_pointwise_dim(sp_rule_builder *b, int rank, int dim, int64_t size,
                                  sp_factor_kind kind, bool blocked);

/* "Same dim for all tensors" helper: a factor mapped to dim `dim` of every tensor with more
 * than `dim` dims, even if it has size 1. Returns the factor index. */
int sp_rule_builder_same_dim(sp_rule_builder *b, int dim, int64_t size, sp_factor_kind kind,
                             bool blocked);

/* Number of factors mapped to dim `dim` of tensor `t` so far. */
int sp_rule_builder_dim_count(const sp_rule_builder *b, int t, int dim);

/* Sets `err` to "op 'NAME' at line L:C: <message>" (location left out when unknown) and
 * returns `code`: the error style of every rule of the registry. */
int sp_rules_op_err(sp_err *err, const sp_op *op, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Adds the size-1 factors of unmapped dims and allocates the rule. Returns the latched
 * status; on failure *out is NULL and `err` (may be NULL) says why. */
int sp_rule_builder_build(sp_rule_builder *b, sp_rule **out, sp_err *err);

#endif /* SP_RULE_BUILDER_H */
