/*
 * rule_builder.c - OpShardingRule builder with Shardy's conventions (see rule_builder.h).
 *
 * Mappings are recorded as (flat dim, factor) links in creation order and laid out per dim
 * only at build time, so mapping is O(1) and building is linear in dims + links.
 */
#include "rules/rule_builder.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/sp_limits.h"

int sp_rules_op_err(sp_err *err, const sp_op *op, int code, const char *fmt, ...) {
  char msg[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (op->loc.line > 0)
    return sp_err_set(err, code, "op '%s' at line %d:%d: %s", op->name, op->loc.line,
                      op->loc.col, msg);
  return sp_err_set(err, code, "op '%s': %s", op->name, msg);
}

static void fail(sp_rule_builder *b, int status) {
  if (b->status == SP_OK) b->status = status;
}

int sp_rule_builder_init(sp_rule_builder *b, sp_arena *a, int noperands,
                         const int *operand_ranks, int nresults, const int *result_ranks) {
  int ntensors = noperands + nresults;
  b->arena = a;
  b->status = SP_OK;
  b->noperands = noperands;
  b->nresults = nresults;
  b->ndims = 0;
  for (int t = 0; t < ntensors; t++) {
    int r = t < noperands ? operand_ranks[t] : result_ranks[t - noperands];
    if (r < 0 || r > SP_MAX_RANK) return b->status = SP_EINTERNAL;
    b->ndims += r;
  }
  size_t nints = 2 * (size_t)ntensors + (size_t)b->ndims;
  int *ints = b->inline_ints;
  if (nints > sizeof b->inline_ints / sizeof b->inline_ints[0]) {
    ints = sp_arena_alloc(a, nints * sizeof *ints);
    if (!ints) return b->status = SP_ENOMEM;
  }
  b->rank = ints;
  b->dim_base = ints + ntensors;
  b->dim_count = ints + 2 * ntensors;
  int base = 0;
  for (int t = 0; t < ntensors; t++) {
    b->rank[t] = t < noperands ? operand_ranks[t] : result_ranks[t - noperands];
    b->dim_base[t] = base;
    base += b->rank[t];
  }
  memset(b->dim_count, 0, (size_t)b->ndims * sizeof *b->dim_count);
  b->nfactors = 0;
  b->capfactors = SP_RULE_BUILDER_INLINE_FACTORS;
  b->factors = b->inline_factors;
  b->nlinks = 0;
  b->caplinks = SP_RULE_BUILDER_INLINE_LINKS;
  b->links = b->inline_links;
  return SP_OK;
}

static int value_rank(const sp_value *v) {
  return v && v->type && sp_type_is_static_tensor(v->type) ? v->type->rank : -1;
}

int sp_rule_builder_init_op(sp_rule_builder *b, sp_arena *a, const sp_op *op, sp_err *err) {
  int small[SP_RULE_BUILDER_INLINE_TENSORS];
  int n = op->noperands + op->nresults;
  int *ranks = small;
  if (n > SP_RULE_BUILDER_INLINE_TENSORS) {
    ranks = sp_arena_alloc(a, (size_t)n * sizeof *ranks);
    if (!ranks) return sp_err_set(err, SP_ENOMEM, "out of memory building a sharding rule");
  }
  for (int i = 0; i < op->noperands; i++) {
    ranks[i] = value_rank(op->operands[i].value);
    if (ranks[i] < 0)
      return sp_rules_op_err(err, op, SP_EUNSUPPORTED,
                             "operand %d is not a tensor with a static shape", i);
  }
  for (int i = 0; i < op->nresults; i++) {
    ranks[op->noperands + i] = value_rank(&op->results[i]);
    if (ranks[op->noperands + i] < 0)
      return sp_rules_op_err(err, op, SP_EUNSUPPORTED,
                             "result %d is not a tensor with a static shape", i);
  }
  int rc = sp_rule_builder_init(b, a, op->noperands, ranks, op->nresults, ranks + op->noperands);
  if (rc != SP_OK)
    return sp_rules_op_err(err, op, rc, "cannot start a sharding rule (%s)", sp_status_name(rc));
  return SP_OK;
}

int sp_rule_builder_factor(sp_rule_builder *b, int64_t size, sp_factor_kind kind, bool blocked) {
  if (b->status != SP_OK) return -1;
  if (b->nfactors >= SP_MAX_FACTORS) {
    fail(b, SP_ELIMIT);
    return -1;
  }
  /* The arrays start inline; sp_arena_grow copies them out (the inline block is dropped). */
  if (sp_arena_grow(b->arena, (void **)&b->factors, &b->capfactors, b->nfactors,
                    sizeof *b->factors)) {
    fail(b, SP_ENOMEM);
    return -1;
  }
  sp_rule_factor *f = &b->factors[b->nfactors];
  f->size = size;
  f->kind = kind;
  f->blocked = blocked;
  return b->nfactors++;
}

static void link(sp_rule_builder *b, int t, int dim, int f, bool always) {
  if (b->status != SP_OK) return;
  if (t < 0 || t >= b->noperands + b->nresults || dim < 0 || dim >= b->rank[t] || f < 0 ||
      f >= b->nfactors) {
    fail(b, SP_EINTERNAL);
    return;
  }
  int flat = b->dim_base[t] + dim;
  if (!always && b->factors[f].size == 1 && b->dim_count[flat] > 0) return;
  if (sp_arena_grow(b->arena, (void **)&b->links, &b->caplinks, b->nlinks, sizeof *b->links)) {
    fail(b, SP_ENOMEM);
    return;
  }
  b->links[b->nlinks].dim = flat;
  b->links[b->nlinks].factor = f;
  b->nlinks++;
  b->dim_count[flat]++;
}

void sp_rule_builder_map(sp_rule_builder *b, int t, int dim, int f) { link(b, t, dim, f, false); }

void sp_rule_builder_map_always(sp_rule_builder *b, int t, int dim, int f) {
  link(b, t, dim, f, true);
}

int sp_rule_builder_add(sp_rule_builder *b, const int *operand_dims, const int *result_dims,
                        int64_t size, sp_factor_kind kind, bool blocked) {
  int f = sp_rule_builder_factor(b, size, kind, blocked);
  if (f < 0) return -1;
  for (int i = 0; operand_dims && i < b->noperands; i++)
    if (operand_dims[i] != SP_RULE_NO_DIM) link(b, i, operand_dims[i], f, false);
  for (int i = 0; result_dims && i < b->nresults; i++)
    if (result_dims[i] != SP_RULE_NO_DIM) link(b, b->noperands + i, result_dims[i], f, false);
  return f;
}

int sp_rule_builder_pointwise_dim(sp_rule_builder *b, int rank, int dim, int64_t size,
                                  sp_factor_kind kind, bool blocked) {
  int f = sp_rule_builder_factor(b, size, kind, blocked);
  if (f < 0) return -1;
  for (int t = 0; t < b->noperands + b->nresults; t++)
    if (b->rank[t] == rank) link(b, t, dim, f, false);
  return f;
}

void sp_rule_builder_pointwise(sp_rule_builder *b, const int64_t *shape, int rank) {
  for (int d = 0; d < rank; d++)
    sp_rule_builder_pointwise_dim(b, rank, d, shape[d], SP_FACTOR_PASS_THROUGH, false);
}

int sp_rule_builder_same_dim(sp_rule_builder *b, int dim, int64_t size, sp_factor_kind kind,
                             bool blocked) {
  int f = sp_rule_builder_factor(b, size, kind, blocked);
  if (f < 0) return -1;
  for (int t = 0; t < b->noperands + b->nresults; t++)
    if (b->rank[t] > dim) link(b, t, dim, f, true);
  return f;
}

int sp_rule_builder_dim_count(const sp_rule_builder *b, int t, int dim) {
  if (t < 0 || t >= b->noperands + b->nresults || dim < 0 || dim >= b->rank[t]) return 0;
  return b->dim_count[b->dim_base[t] + dim];
}

/* Every dim without a factor gets a size-1 factor of its own; flat dims are ordered operands
 * first, then results, so this is the Shardy order. */
static void fill_unmapped_dims(sp_rule_builder *b) {
  int ntensors = b->noperands + b->nresults;
  for (int t = 0; t < ntensors; t++)
    for (int d = 0; d < b->rank[t]; d++)
      if (b->dim_count[b->dim_base[t] + d] == 0) {
        int f = sp_rule_builder_factor(b, 1, SP_FACTOR_PASS_THROUGH, false);
        if (f < 0) return;
        link(b, t, d, f, true);
      }
}

static int build_fail(sp_rule_builder *b, sp_rule **out, sp_err *err) {
  *out = NULL;
  switch (b->status) {
    case SP_ENOMEM:
      return sp_err_set(err, SP_ENOMEM, "out of memory building a sharding rule");
    case SP_ELIMIT:
      return sp_err_set(err, SP_ELIMIT, "sharding rule needs more than %d factors (SP_MAX_FACTORS)",
                        SP_MAX_FACTORS);
    default:
      return sp_err_set(err, b->status, "internal error building a sharding rule (%s)",
                        sp_status_name(b->status));
  }
}

#ifndef NDEBUG
/* ir/rule.h's invariants: a factor appears at most once per tensor, a reduction factor in no
 * result. */
static bool rule_invariants_hold(const sp_rule *r) {
  for (int t = 0; t < r->noperands + r->nresults; t++) {
    const sp_rule_tensor *rt = t < r->noperands ? &r->operands[t] : &r->results[t - r->noperands];
    for (int d = 0; d < rt->rank; d++)
      for (int k = 0; k < rt->dims[d].nfactors; k++) {
        int f = rt->dims[d].factors[k];
        if (f < 0 || f >= r->nfactors) return false;
        if (t >= r->noperands && r->factors[f].kind == SP_FACTOR_REDUCTION) return false;
        for (int d2 = d; d2 < rt->rank; d2++)
          for (int k2 = d2 == d ? k + 1 : 0; k2 < rt->dims[d2].nfactors; k2++)
            if (rt->dims[d2].factors[k2] == f) return false;
      }
  }
  return true;
}
#endif

int sp_rule_builder_build(sp_rule_builder *b, sp_rule **out, sp_err *err) {
  if (b->status == SP_OK) fill_unmapped_dims(b);
  if (b->status != SP_OK) return build_fail(b, out, err);
  int ntensors = b->noperands + b->nresults;
  sp_arena *a = b->arena;
  sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
  sp_rule_tensor *tensors = sp_arena_calloc(a, (size_t)ntensors + 1, sizeof *tensors);
  sp_rule_dim *dims = sp_arena_calloc(a, (size_t)b->ndims + 1, sizeof *dims);
  int *idx = sp_arena_alloc(a, ((size_t)b->nlinks + 1) * sizeof *idx);
  sp_rule_factor *factors =
      sp_arena_alloc(a, ((size_t)b->nfactors + 1) * sizeof *factors);
  if (!r || !tensors || !dims || !idx || !factors) {
    b->status = SP_ENOMEM;
    return build_fail(b, out, err);
  }
  memcpy(factors, b->factors, (size_t)b->nfactors * sizeof *factors);
  /* Lay the links out per dim: offsets from the counts, then a stable scatter. */
  int off = 0;
  for (int d = 0; d < b->ndims; d++) {
    dims[d].factors = idx + off;
    dims[d].nfactors = 0;
    off += b->dim_count[d];
  }
  for (int k = 0; k < b->nlinks; k++) {
    sp_rule_dim *dm = &dims[b->links[k].dim];
    dm->factors[dm->nfactors++] = b->links[k].factor;
  }
  for (int t = 0; t < ntensors; t++) {
    tensors[t].rank = b->rank[t];
    tensors[t].dims = dims + b->dim_base[t];
  }
  r->nfactors = b->nfactors;
  r->factors = factors;
  r->noperands = b->noperands;
  r->operands = tensors;
  r->nresults = b->nresults;
  r->results = tensors + b->noperands;
  r->custom = false;
  assert(rule_invariants_hold(r));
  *out = r;
  return SP_OK;
}
