/*
 * rules_math.c - rules of the computing ops: element-wise (pointwise), bitcast_convert,
 * reduce, sort, fft, cholesky, triangular_solve, batch_norm_inference, rng_bit_generator.
 *
 * Factor order is the contract (it decides the printed names): each builder below creates
 * factors in the order Shardy's registry does, documented per function.
 *
 * The builders of bitcast_convert, fft, cholesky, triangular_solve, batch_norm_inference and
 * rng_bit_generator read counts, ranks, sizes and attributes the verifier has checked
 * (ir/verify_stablehlo_ops.c: a rule is only built for an op of a verified module, and only
 * once every shape is static); they assert what they index.
 */
#include <assert.h>
#include <string.h>

#include "rules/op_rules.h"

/* ------------------------------------------------------------------ pointwise */

static bool shape_is(const sp_type *t, const int64_t *shape, int rank) {
  if (t->rank != rank) return false;
  for (int d = 0; d < rank; d++)
    if (t->dims[d] != shape[d]) return false;
  return true;
}

/* Pointwise over the first result's shape: dim d of every tensor of that shape maps to
 * factor d; scalars (select's predicate, clamp's bounds) map nothing. `strict` rejects any
 * other shape; otherwise such tensors are left to the size-1 fill. */
static int pointwise(sp_rule_builder *b, const sp_op *op, bool strict, sp_err *err) {
  int rank = sp_rules_result_rank(op, 0);
  const int64_t *shape = sp_rules_result_shape(op, 0);
  for (int i = 0; strict && i < op->noperands + op->nresults; i++) {
    const sp_type *t = i < op->noperands ? sp_rules_operand_type(op, i)
                                         : op->results[i - op->noperands].type;
    if (t->rank != 0 && !shape_is(t, shape, rank)) {
      char want[128], got[128];
      sp_rules_shape_str(shape, rank, want, sizeof want);
      sp_rules_shape_str(t->dims, t->rank, got, sizeof got);
      return sp_rules_op_err(err, op, SP_EINVAL,
                             "%s %d has shape %s; an element-wise op needs %s or a scalar",
                             i < op->noperands ? "operand" : "result",
                             i < op->noperands ? i : i - op->noperands, got, want);
    }
  }
  sp_rule_builder_pointwise(b, shape, rank);
  return SP_OK;
}

int sp_rules_build_pointwise(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                             sp_err *err) {
  return pointwise(b, op, true, err);
}

int sp_rules_build_pointwise_lenient(sp_rule_builder *b, const sp_op *op,
                                     const sp_rules_options *opts, sp_err *err) {
  return pointwise(b, op, false, err);
}

/* ------------------------------------------------------------------ bitcast_convert */

/* Equal ranks: pointwise. Otherwise the wider element type has one dim less; the shared dims
 * are pass-through and the extra minor dim of the other side is need_replication. */
int sp_rules_build_bitcast_convert(sp_rule_builder *b, const sp_op *op,
                                   const sp_rules_options *opts, sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 1);
  int in_rank = sp_rules_operand_rank(op, 0), out_rank = sp_rules_result_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *out = sp_rules_result_shape(op, 0);
  if (in_rank == out_rank) return pointwise(b, op, true, err);
  assert(in_rank == out_rank + 1 || out_rank == in_rank + 1);
  int common = in_rank < out_rank ? in_rank : out_rank;
  for (int d = 0; d < common; d++) {
    int f = sp_rule_builder_factor(b, out[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  if (in_rank > out_rank) {
    int f = sp_rule_builder_factor(b, in[common], SP_FACTOR_NEED_REPLICATION, false);
    sp_rule_builder_map(b, 0, common, f);
  } else {
    int f = sp_rule_builder_factor(b, out[common], SP_FACTOR_NEED_REPLICATION, false);
    sp_rule_builder_map(b, sp_rules_res(b, 0), common, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ reduce */

/* Operands: N inputs then N init values; N results. Walking the input dims in order, a
 * reduced dim is a reduction factor of all inputs, a kept dim a factor shared with the next
 * result dim. */
int sp_rules_build_reduce(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                          sp_err *err) {
  int n = op->nresults;
  if (op->noperands != 2 * n)
    return sp_rules_op_err(err, op, SP_EINVAL, "%d operands for %d results (want inputs and "
                           "one init value per result)", op->noperands, n);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0);
  sp_ints dims;
  int rc = sp_rules_need_ints(op, "dimensions", &dims, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "reduced dimension", &dims, rank, err);
  if (rc != SP_OK) return rc;
  for (int i = 0; i < n; i++) {
    if (!shape_is(sp_rules_operand_type(op, i), in, rank))
      return sp_rules_op_err(err, op, SP_EINVAL, "inputs of different shapes");
    if (sp_rules_result_rank(op, i) != rank - dims.n)
      return sp_rules_op_err(err, op, SP_EINVAL, "result %d has rank %d, expected %d", i,
                             sp_rules_result_rank(op, i), rank - dims.n);
  }
  int r = 0;
  for (int d = 0; d < rank; d++) {
    bool reduced = sp_rules_ints_has(&dims, d);
    int f = sp_rule_builder_factor(b, in[d],
                                   reduced ? SP_FACTOR_REDUCTION : SP_FACTOR_PASS_THROUGH, false);
    for (int i = 0; i < n; i++) sp_rule_builder_map(b, i, d, f);
    if (reduced) continue;
    for (int i = 0; i < n; i++) sp_rule_builder_map(b, sp_rules_res(b, i), r, f);
    r++;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ sort */

/* Pointwise over the operands' shape; the sort dim is need_replication, and blocked when
 * every other dim has size 1 (nothing else could carry the sharding). */
int sp_rules_build_sort(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                        sp_err *err) {
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *shape = sp_rules_operand_shape(op, 0);
  for (int i = 0; i < op->noperands + op->nresults; i++) {
    const sp_type *t = i < op->noperands ? sp_rules_operand_type(op, i)
                                         : op->results[i - op->noperands].type;
    if (!shape_is(t, shape, rank))
      return sp_rules_op_err(err, op, SP_EINVAL, "operands and results differ in shape");
  }
  int64_t dim = -1;
  if (!sp_op_get_int(op, "dimension", &dim)) dim = -1; /* StableHLO's default */
  if (dim < 0) dim += rank;
  int rc = sp_rules_check_dim(op, "sort dimension", dim, rank, err);
  if (rc != SP_OK) return rc;
  bool others_trivial = true;
  for (int d = 0; d < rank; d++)
    if (d != dim && shape[d] != 1) others_trivial = false;
  for (int d = 0; d < rank; d++) {
    bool sorted = d == dim;
    sp_rule_builder_pointwise_dim(b, rank, d, shape[d],
                                  sorted ? SP_FACTOR_NEED_REPLICATION : SP_FACTOR_PASS_THROUGH,
                                  sorted && others_trivial);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ fft */

/* Leading dims pass-through; the fft_length dims (the minor ones) need replication; the last
 * dim is also blocked when its size changes (RFFT, IRFFT). Sizes are the operand's. */
int sp_rules_build_fft(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                       sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 1);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *out = sp_rules_result_shape(op, 0);
  sp_ints len = {0, NULL};
  sp_op_get_ints(op, "fft_length", &len);
  assert(sp_rules_result_rank(op, 0) == rank && len.n <= rank);
  for (int d = 0; d < rank; d++) {
    bool fft_dim = d >= rank - len.n;
    bool blocked = d == rank - 1 && fft_dim && in[d] != out[d];
    int f = sp_rule_builder_factor(
        b, in[d], fft_dim ? SP_FACTOR_NEED_REPLICATION : SP_FACTOR_PASS_THROUGH, blocked);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ linear algebra */

/* Batch dims pass-through, the two matrix dims need replication. */
int sp_rules_build_cholesky(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                            sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 1);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *shape = sp_rules_operand_shape(op, 0);
  assert(rank >= 2 && shape_is(op->results[0].type, shape, rank));
  for (int d = 0; d < rank; d++)
    sp_rule_builder_pointwise_dim(
        b, rank, d, shape[d], d >= rank - 2 ? SP_FACTOR_NEED_REPLICATION : SP_FACTOR_PASS_THROUGH,
        false);
  return SP_OK;
}

static bool transpose_a(const sp_op *op) {
  const char *s = sp_op_get_str(op, "transpose_a");
  if (!s || strstr(s, "NO_TRANSPOSE")) return false;
  return strstr(s, "TRANSPOSE") || strstr(s, "ADJOINT");
}

/* op(a) x = b (left side) or x op(a) = b (right side). Factors: batch dims (all three), then
 * j on b's dim -2, k on b's dim -1, l on a's other matrix dim, each shared with the dim of the
 * other tensors it is equal to, all need_replication. */
int sp_rules_build_triangular_solve(sp_rule_builder *b, const sp_op *op,
                                    const sp_rules_options *opts, sp_err *err) {
  assert(op->noperands == 2 && op->nresults == 1);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *a = sp_rules_operand_shape(op, 0), *bs = sp_rules_operand_shape(op, 1);
  assert(rank >= 2 && sp_rules_operand_rank(op, 1) == rank &&
         sp_rules_result_rank(op, 0) == rank);
  for (int d = 0; d < rank - 2; d++)
    sp_rule_builder_pointwise_dim(b, rank, d, a[d], SP_FACTOR_PASS_THROUGH, false);
  bool left = sp_rules_flag(op, "left_side", false), tr = transpose_a(op);
  int row = rank - 2, col = rank - 1, x = sp_rules_res(b, 0);
  const sp_factor_kind nr = SP_FACTOR_NEED_REPLICATION;
  int j = sp_rule_builder_factor(b, bs[row], nr, false);
  int k = sp_rule_builder_factor(b, bs[col], nr, false);
  sp_rule_builder_map(b, 1, row, j);
  sp_rule_builder_map(b, 1, col, k);
  if (left) {
    /* b[m,n] = sum_p op(a)[m,p] x[p,n]: a's m dim with b's rows, a's p dim with x's rows. */
    int a_m = tr ? col : row, a_p = tr ? row : col;
    int l = sp_rule_builder_factor(b, a[a_p], nr, false);
    sp_rule_builder_map(b, 0, a_m, j);
    sp_rule_builder_map(b, x, col, k);
    sp_rule_builder_map(b, 0, a_p, l);
    sp_rule_builder_map(b, x, row, l);
  } else {
    /* b[m,n] = sum_p x[m,p] op(a)[p,n]: a's n dim with b's cols, a's p dim with x's cols. */
    int a_n = tr ? row : col, a_p = tr ? col : row;
    int l = sp_rule_builder_factor(b, a[a_p], nr, false);
    sp_rule_builder_map(b, x, row, j);
    sp_rule_builder_map(b, 0, a_n, k);
    sp_rule_builder_map(b, 0, a_p, l);
    sp_rule_builder_map(b, x, col, l);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ batch_norm_inference */

/* Pointwise over the operand; scale, offset, mean and variance share the feature factor. */
int sp_rules_build_batch_norm_inference(sp_rule_builder *b, const sp_op *op,
                                        const sp_rules_options *opts, sp_err *err) {
  assert(op->noperands == 5 && op->nresults == 1);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *shape = sp_rules_operand_shape(op, 0);
  int64_t feature = -1;
  sp_op_get_int(op, "feature_index", &feature);
  assert(feature >= 0 && feature < rank && shape_is(op->results[0].type, shape, rank));
  for (int i = 1; i < 5; i++) assert(sp_rules_operand_rank(op, i) == 1);
  for (int d = 0; d < rank; d++) {
    int f = sp_rule_builder_factor(b, shape[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, d, f);
    if (d == feature)
      for (int i = 1; i < 5; i++) sp_rule_builder_map(b, i, 0, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ rng_bit_generator */

/* The state (operand and result 0) is need_replication and blocked; the output's dims get
 * result-only factors. */
int sp_rules_build_rng_bit_generator(sp_rule_builder *b, const sp_op *op,
                                     const sp_rules_options *opts, sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 2);
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *state = sp_rules_operand_shape(op, 0);
  assert(shape_is(op->results[0].type, state, rank));
  for (int d = 0; d < rank; d++) {
    int f = sp_rule_builder_factor(b, state[d], SP_FACTOR_NEED_REPLICATION, true);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, sp_rules_res(b, 0), d, f);
  }
  const int64_t *out = sp_rules_result_shape(op, 1);
  for (int d = 0; d < sp_rules_result_rank(op, 1); d++) {
    int f = sp_rule_builder_factor(b, out[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, sp_rules_res(b, 1), d, f);
  }
  return SP_OK;
}
