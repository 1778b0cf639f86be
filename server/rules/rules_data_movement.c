/*
 * rules_data_movement.c - rules of the ops that move data without computing on it:
 * broadcast_in_dim, transpose, concatenate, slice, pad, dynamic_slice, dynamic_update_slice,
 * reverse.
 *
 * Factor sizes follow Shardy: slice/pad/dynamic_slice use the operand's sizes, concatenate
 * the result's, transpose the (equal) source/result size.
 */
#include <assert.h>

#include "rules/op_rules.h"

/* ------------------------------------------------------------------ broadcast_in_dim */

/* Walking result dims in order: fed by an operand dim of the same size -> one shared factor;
 * fed by an operand dim of another size (1, expanded) -> a size-1 operand factor, then a
 * result factor; not fed -> a result-only factor. */
int sp_rules_build_broadcast_in_dim(sp_rule_builder *b, const sp_op *op,
                                    const sp_rules_options *opts, sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, 1, 1, 1, err);
  if (rc != SP_OK) return rc;
  int in_rank = sp_rules_operand_rank(op, 0), out_rank = sp_rules_result_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *out = sp_rules_result_shape(op, 0);
  sp_ints dims;
  rc = sp_rules_need_ints(op, "broadcast_dimensions", &dims, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "broadcast dimension", &dims, out_rank, err);
  if (rc != SP_OK) return rc;
  if (dims.n != in_rank)
    return sp_rules_op_err(err, op, SP_EINVAL,
                           "broadcast_dimensions has %d entries for an operand of rank %d",
                           dims.n, in_rank);
  int res = sp_rules_res(b, 0);
  for (int r = 0; r < out_rank; r++) {
    int d = sp_rules_ints_find(&dims, r);
    if (d >= 0 && in[d] == out[r]) {
      int f = sp_rule_builder_factor(b, out[r], SP_FACTOR_PASS_THROUGH, false);
      sp_rule_builder_map(b, 0, d, f);
      sp_rule_builder_map(b, res, r, f);
      continue;
    }
    if (d >= 0) {
      if (in[d] != 1)
        return sp_rules_op_err(err, op, SP_EINVAL,
                               "operand dim %d of size %lld cannot broadcast to size %lld", d,
                               (long long)in[d], (long long)out[r]);
      sp_rule_builder_map(b, 0, d, sp_rule_builder_factor(b, 1, SP_FACTOR_PASS_THROUGH, false));
    }
    sp_rule_builder_map(b, res, r, sp_rule_builder_factor(b, out[r], SP_FACTOR_PASS_THROUGH, false));
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ transpose */

/* One factor per result dim, in result order; operand dim permutation[r] takes factor r. */
int sp_rules_build_transpose(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                             sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, 1, 1, 1, err);
  if (rc != SP_OK) return rc;
  int rank = sp_rules_result_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0);
  sp_ints perm;
  rc = sp_rules_need_ints(op, "permutation", &perm, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "permutation entry", &perm, rank, err);
  if (rc != SP_OK) return rc;
  if (perm.n != rank || sp_rules_operand_rank(op, 0) != rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "permutation has %d entries for rank %d",
                           perm.n, rank);
  for (int r = 0; r < rank; r++) {
    int f = sp_rule_builder_factor(b, in[perm.v[r]], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, (int)perm.v[r], f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), r, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ concatenate */

static const sp_op *def_op(const sp_op *op, int i) {
  const sp_value *v = op->operands[i].value;
  return v ? v->def : NULL;
}

/* The concat dim is a permutation (not need_replication) when every operand is a slice, or
 * when the operands are one value and slices of it, at least one a slice. */
static bool concat_is_permutation(const sp_op *op) {
  bool all_slices = true, any_slice = false, one_source = true;
  const sp_value *source = NULL;
  for (int i = 0; i < op->noperands; i++) {
    const sp_op *d = def_op(op, i);
    bool is_slice = d && d->kind == SP_OP_SLICE && d->noperands >= 1;
    const sp_value *src = is_slice ? d->operands[0].value : op->operands[i].value;
    all_slices = all_slices && is_slice;
    any_slice = any_slice || is_slice;
    if (i == 0)
      source = src;
    else if (src != source)
      one_source = false;
  }
  return all_slices || (one_source && any_slice);
}

/* Pointwise over the result's shape; the concat dim's factor has the result size (dropped in
 * conservative mode, leaving each tensor a size-1 factor there). */
int sp_rules_build_concatenate(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                               sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, -1, 1, 1, err);
  if (rc != SP_OK) return rc;
  int rank = sp_rules_result_rank(op, 0);
  const int64_t *out = sp_rules_result_shape(op, 0);
  int64_t dim;
  rc = sp_rules_need_int(op, "dimension", &dim, err);
  if (rc == SP_OK) rc = sp_rules_check_dim(op, "concatenate dimension", dim, rank, err);
  if (rc != SP_OK) return rc;
  for (int i = 0; i < op->noperands; i++) {
    const int64_t *in = sp_rules_operand_shape(op, i);
    bool ok = sp_rules_operand_rank(op, i) == rank;
    for (int d = 0; ok && d < rank; d++) ok = d == dim || in[d] == out[d];
    if (!ok)
      return sp_rules_op_err(err, op, SP_EINVAL,
                             "operand %d does not match the result outside dimension %lld", i,
                             (long long)dim);
  }
  sp_factor_kind concat_kind =
      concat_is_permutation(op) ? SP_FACTOR_PERMUTATION : SP_FACTOR_NEED_REPLICATION;
  for (int d = 0; d < rank; d++) {
    if (d == dim && opts->conservative) continue;
    sp_rule_builder_pointwise_dim(b, rank, d, out[d],
                                  d == dim ? concat_kind : SP_FACTOR_PASS_THROUGH, false);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ slices */

/* Operand 0 and result 0 share one factor per dim, of the operand's size; dims whose size
 * changes get `changed_kind` (blocked if `changed_blocked`). Scalar operands (pad value,
 * start indices) map nothing. */
static int slice_like(sp_rule_builder *b, const sp_op *op, sp_factor_kind changed_kind,
                      bool changed_blocked, sp_err *err) {
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *out = sp_rules_result_shape(op, 0);
  if (sp_rules_result_rank(op, 0) != rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "result rank %d differs from operand rank %d",
                           sp_rules_result_rank(op, 0), rank);
  for (int d = 0; d < rank; d++) {
    bool changed = in[d] != out[d];
    int f = sp_rule_builder_factor(b, in[d], changed ? changed_kind : SP_FACTOR_PASS_THROUGH,
                                   changed && changed_blocked);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  return SP_OK;
}

int sp_rules_build_slice(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                         sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, 1, 1, 1, err);
  if (rc != SP_OK) return rc;
  return slice_like(b, op, SP_FACTOR_PERMUTATION, opts->conservative, err);
}

int sp_rules_build_pad(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                       sp_err *err) {
  int rc = sp_rules_check_arity(op, 2, 2, 1, 1, err);
  if (rc != SP_OK) return rc;
  return slice_like(b, op, SP_FACTOR_PERMUTATION, opts->conservative, err);
}

int sp_rules_build_dynamic_slice(sp_rule_builder *b, const sp_op *op,
                                 const sp_rules_options *opts, sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, -1, 1, 1, err);
  if (rc != SP_OK) return rc;
  return slice_like(b, op, SP_FACTOR_NEED_REPLICATION, true, err);
}

/* Reverse: pointwise; the reversed dims are permutations. */
int sp_rules_build_reverse(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                           sp_err *err) {
  /* The verifier checked the counts, the dims (in range, unique) and the result type. */
  assert(op->noperands == 1 && op->nresults == 1);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0);
  sp_ints dims = {0, NULL};
  sp_op_get_ints(op, "dimensions", &dims);
  assert(sp_rules_result_rank(op, 0) == rank);
  for (int d = 0; d < rank; d++) {
    int f = sp_rule_builder_factor(
        b, in[d], sp_rules_ints_has(&dims, d) ? SP_FACTOR_PERMUTATION : SP_FACTOR_PASS_THROUGH,
        false);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ dynamic_update_slice */

static bool is_constant(const sp_value *v) {
  return v && v->def && (v->def->kind == SP_OP_CONSTANT || v->def->kind == SP_OP_SDY_CONSTANT);
}

/* Operands: operand, update, start indices; result like the operand. A dim of equal operand
 * and update size is one shared factor. Otherwise operand and result share a factor of the
 * operand's size and the update gets its own, need_replication unless every start index is a
 * constant. */
int sp_rules_build_dynamic_update_slice(sp_rule_builder *b, const sp_op *op,
                                        const sp_rules_options *opts, sp_err *err) {
  int rc = sp_rules_check_arity(op, 2, -1, 1, 1, err);
  if (rc != SP_OK) return rc;
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *upd = sp_rules_operand_shape(op, 1);
  if (sp_rules_operand_rank(op, 1) != rank || sp_rules_result_rank(op, 0) != rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "operand, update and result ranks differ");
  bool constant_starts = true;
  for (int i = 2; i < op->noperands; i++)
    constant_starts = constant_starts && is_constant(op->operands[i].value);
  sp_factor_kind upd_kind = constant_starts ? SP_FACTOR_PASS_THROUGH : SP_FACTOR_NEED_REPLICATION;
  int res = sp_rules_res(b, 0);
  for (int d = 0; d < rank; d++) {
    int f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, res, d, f);
    if (in[d] == upd[d])
      sp_rule_builder_map(b, 1, d, f);
    else
      sp_rule_builder_map(b, 1, d, sp_rule_builder_factor(b, upd[d], upd_kind, false));
  }
  return SP_OK;
}
