/*
 * op_rules.h - private interface between the registry and the per-op rule builders.
 *
 * Each sp_rules_build_* fills a builder that sp_rules_for_op() has already initialised from
 * the op's types (so every operand and result is a ranked tensor with a static shape). It
 * returns SP_OK to have the rule built, SP_RULES_NONE when the op gets no rule after all
 * (a zero-element reshape, a custom call with nothing to map), or a negative status with
 * `err` set.
 *
 * The attribute helpers read the structured attributes of ir/op_attrs.h and fail with a
 * message naming the op and the attribute when one is missing or malformed.
 */
#ifndef SP_RULES_OP_RULES_H
#define SP_RULES_OP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "rules/registry.h"
#include "rules/rule_builder.h"

#define SP_RULES_NONE 1

typedef int (*sp_rules_build_fn)(sp_rule_builder *b, const sp_op *op,
                                 const sp_rules_options *opts, sp_err *err);

/* ---- shapes (valid once the builder accepted the op) ---- */
static inline const sp_type *sp_rules_operand_type(const sp_op *op, int i) {
  return op->operands[i].value->type;
}
static inline int sp_rules_operand_rank(const sp_op *op, int i) {
  return op->operands[i].value->type->rank;
}
static inline const int64_t *sp_rules_operand_shape(const sp_op *op, int i) {
  return op->operands[i].value->type->dims;
}
static inline int sp_rules_result_rank(const sp_op *op, int i) {
  return op->results[i].type->rank;
}
static inline const int64_t *sp_rules_result_shape(const sp_op *op, int i) {
  return op->results[i].type->dims;
}

/* The builder's tensor number of result `j`. */
static inline int sp_rules_res(const sp_rule_builder *b, int j) { return b->noperands + j; }

/* ---- attributes ---- */
/* Required INT / INTS attributes. */
int sp_rules_need_int(const sp_op *op, const char *name, int64_t *out, sp_err *err);
int sp_rules_need_ints(const sp_op *op, const char *name, sp_ints *out, sp_err *err);
/* Optional INTS: an empty list when absent. */
int sp_rules_opt_ints(const sp_op *op, const char *name, sp_ints *out, sp_err *err);
/* A boolean flag given as BOOL, UNIT, or text "true"/"false"; `dflt` when absent. */
bool sp_rules_flag(const sp_op *op, const char *name, bool dflt);
/* Checks that every entry of `v` is a dim of a rank-`rank` tensor and none repeats. */
int sp_rules_check_dims(const sp_op *op, const char *what, const sp_ints *v, int rank,
                        sp_err *err);
/* Checks 0 <= dim < rank. */
int sp_rules_check_dim(const sp_op *op, const char *what, int64_t dim, int rank, sp_err *err);
/* Requires op->noperands / op->nresults within bounds. */
int sp_rules_check_arity(const sp_op *op, int min_operands, int max_operands, int min_results,
                         int max_results, sp_err *err);
/* True if `ints` contains `x`. */
bool sp_rules_ints_has(const sp_ints *ints, int64_t x);
/* Index of `x` in `ints`, -1 if absent. */
int sp_rules_ints_find(const sp_ints *ints, int64_t x);
/* Writes "4x8" ("scalar" for rank 0) into buf. */
void sp_rules_shape_str(const int64_t *shape, int rank, char *buf, size_t n);
/* The name of the custom call target ("" if missing). */
const char *sp_rules_custom_call_target(const sp_op *op);

/* ---- builders, by family ---- */
/* rules_math.c */
int sp_rules_build_pointwise(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
/* Pointwise without the shape check: tensors of another shape get size-1 factors only. */
int sp_rules_build_pointwise_lenient(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                     sp_err *);
int sp_rules_build_bitcast_convert(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                   sp_err *);
int sp_rules_build_reduce(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_sort(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_fft(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_cholesky(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_triangular_solve(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                    sp_err *);
int sp_rules_build_batch_norm_inference(sp_rule_builder *, const sp_op *,
                                        const sp_rules_options *, sp_err *);
int sp_rules_build_rng_bit_generator(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                     sp_err *);
/* rules_data_movement.c */
int sp_rules_build_broadcast_in_dim(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                    sp_err *);
int sp_rules_build_transpose(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                             sp_err *);
int sp_rules_build_concatenate(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                               sp_err *);
int sp_rules_build_slice(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_pad(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_dynamic_slice(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                 sp_err *);
int sp_rules_build_dynamic_update_slice(sp_rule_builder *, const sp_op *,
                                        const sp_rules_options *, sp_err *);
int sp_rules_build_reverse(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
/* rules_collective.c */
int sp_rules_build_all_gather(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                              sp_err *);
int sp_rules_build_all_to_all(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                              sp_err *);
int sp_rules_build_reduce_scatter(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                  sp_err *);
/* rules_reshape.c */
int sp_rules_build_reshape(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
/* rules_contraction.c */
int sp_rules_build_dot(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_dot_general(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                               sp_err *);
int sp_rules_build_convolution(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                               sp_err *);
/* rules_gather_scatter.c */
int sp_rules_build_gather(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
int sp_rules_build_scatter(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
/* rules_window.c */
int sp_rules_build_reduce_window(sp_rule_builder *, const sp_op *, const sp_rules_options *,
                                 sp_err *);
int sp_rules_build_select_and_scatter(sp_rule_builder *, const sp_op *,
                                      const sp_rules_options *, sp_err *);
/* rules_custom_call.c: top-k (custom call @mhlo.topk, chlo.top_k, mhlo.topk); the builder for
 * a registered target (NULL if the target has none), and whether an unregistered target is
 * silently ruleless. */
int sp_rules_build_topk(sp_rule_builder *, const sp_op *, const sp_rules_options *, sp_err *);
sp_rules_build_fn sp_rules_custom_call_builder(const char *target);
bool sp_rules_custom_call_is_silent(const char *target);

#endif /* SP_RULES_OP_RULES_H */
