/*
 * verify_stablehlo_index.c - StableHLO's verifier checks of the indexing ops (see
 * verify_stablehlo_int.h), worded as StableHLO words them where its words are known:
 *
 *   gather                 2 operands, 1 result; slice_sizes one per operand dim, within it;
 *                          collapsed and batching dims of slice size <= 1; start_index_map one
 *                          entry per index vector element, in range; index_vector_dim within
 *                          the indices' rank; offset_dims sorted; the result shape inferred
 *   scatter                N inputs, indices, N updates, N results of the inputs' types;
 *                          window/inserted/batching dims in range and adding up to the
 *                          operand rank; updates of the rank the dims imply
 *   dynamic_slice          operand + one scalar start index per dim; slice_sizes within the
 *                          operand; the result of the slice sizes
 *   dynamic_update_slice   operand, update of the operand's rank and no larger, one scalar
 *                          start index per dim; the result of the operand's type
 *
 * Memory: nothing is allocated.
 */
#include <string.h>

#include "ir/verify_stablehlo_int.h"

/* The size of the index vector: the indices' dim index_vector_dim, or 1 when that dim is the
 * implicit trailing one. */
static int64_t index_vector_size(const sp_type *idx, int64_t ivd) {
  return ivd < idx->rank ? idx->dims[ivd] : 1;
}

static int check_ivd(const sp_module *m, const sp_op *op, const sp_type *idx, int64_t *ivd,
                     sp_err *err) {
  if (!sp_op_get_int(op, "index_vector_dim", ivd))
    return sp__verify_op_fail(m, op, err, "requires attribute 'index_vector_dim'");
  if (*ivd < 0 || *ivd > idx->rank)
    return sp__verify_op_fail(m, op, err, "index_vector_dim %lld is out of bounds for start "
                              "indices with rank %d", (long long)*ivd, idx->rank);
  return SP_OK;
}

static int check_sorted(const sp_module *m, const sp_op *op, const char *what, const sp_ints *l,
                        sp_err *err) {
  for (int i = 1; i < l->n; i++)
    if (l->v[i] <= l->v[i - 1])
      return sp__verify_op_fail(m, op, err, "expects %s to be sorted, got: %lld after %lld", what,
                                (long long)l->v[i], (long long)l->v[i - 1]);
  return SP_OK;
}

int sp__verify_gather(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *idx = sp__vs_operand(op, 1);
  sp_ints offset, collapsed, obatch, ibatch, start_map, sizes;
  sp__vs_ints(op, "offset_dims", &offset);
  sp__vs_ints(op, "collapsed_slice_dims", &collapsed);
  sp__vs_ints(op, "operand_batching_dims", &obatch);
  sp__vs_ints(op, "start_indices_batching_dims", &ibatch);
  sp__vs_ints(op, "start_index_map", &start_map);
  if (!sp__vs_ints(op, "slice_sizes", &sizes))
    return sp__verify_op_fail(m, op, err, "requires attribute 'slice_sizes'");
  if (!sp__vs_static(t) || !sp__vs_static(idx)) return SP_OK;
  int64_t ivd;
  if ((rc = check_ivd(m, op, idx, &ivd, err))) return rc;
  if (sizes.n != t->rank)
    return sp__verify_op_fail(m, op, err, "slice_sizes size (%d) not equal to (implied) operand "
                              "rank (%d)", sizes.n, t->rank);
  if (start_map.n != index_vector_size(idx, ivd))
    return sp__verify_op_fail(m, op, err, "start_index_map size (%d) is not equal to size of index "
                              "dimension (%lld) of start_indices (%lld)", start_map.n,
                              (long long)ivd, (long long)index_vector_size(idx, ivd));
  if (obatch.n != ibatch.n)
    return sp__verify_op_fail(m, op, err, "operand_batching_dims and start_indices_batching_dims "
                              "should have the same size");
  bool dropped[SP_MAX_RANK] = {false}, mapped[SP_MAX_RANK] = {false};
  bool iseen[SP_MAX_RANK + 1] = {false};
  if ((rc = sp__vs_dims_in_range(m, op, "collapsed_slice_dims entry", &collapsed, t->rank,
                                 dropped, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "operand_batching_dims entry", &obatch, t->rank, dropped,
                                 err)) ||
      (rc = sp__vs_dims_in_range(m, op, "start_index_map entry", &start_map, t->rank, mapped,
                                 err)) ||
      (rc = sp__vs_dims_in_range(m, op, "start_indices_batching_dims entry", &ibatch, idx->rank,
                                 iseen, err)) ||
      (rc = check_sorted(m, op, "offset_dims", &offset, err)))
    return rc;
  for (int i = 0; i < ibatch.n; i++)
    if (ibatch.v[i] == ivd)
      return sp__verify_op_fail(m, op, err, "start_indices_batching_dims must not contain "
                                "index_vector_dim %lld", (long long)ivd);
  for (int d = 0; d < t->rank; d++) {
    if (sizes.v[d] < 0 || sizes.v[d] > t->dims[d])
      return sp__verify_op_fail(m, op, err, "slice size (%lld) is out of bounds for operand "
                                "dimension (%lld) at index %d", (long long)sizes.v[d],
                                (long long)t->dims[d], d);
    if (dropped[d] && sizes.v[d] > 1)
      return sp__verify_op_fail(m, op, err, "slice_sizes collapsed or batching dimension %d should "
                                "<= 1 but got %lld", d, (long long)sizes.v[d]);
  }
  /* The result: offset_dims take the kept slice sizes in order; the other dims are the
   * indices' batch dims (all but index_vector_dim) in order. */
  int nbatch = idx->rank - (ivd < idx->rank ? 1 : 0);
  int rank = nbatch + offset.n;
  if (rank > SP_MAX_RANK)
    return sp__verify_op_fail(m, op, err, "the result would have rank %d, beyond %d", rank,
                              SP_MAX_RANK);
  int kept = 0;
  for (int d = 0; d < t->rank; d++) kept += !dropped[d];
  if (offset.n != kept)
    return sp__verify_op_fail(m, op, err, "offset_dims size (%d) must equal the operand rank (%d) "
                              "minus collapsed_slice_dims and operand_batching_dims (%d)",
                              offset.n, t->rank, t->rank - kept);
  bool is_offset[SP_MAX_RANK] = {false};
  for (int i = 0; i < offset.n; i++) {
    if (offset.v[i] < 0 || offset.v[i] >= rank)
      return sp__verify_op_fail(m, op, err, "offset_dims entry %lld is out of range for the result "
                                "rank %d", (long long)offset.v[i], rank);
    is_offset[offset.v[i]] = true;
  }
  int64_t want[SP_MAX_RANK];
  int od = 0, bd = 0;
  for (int r = 0; r < rank; r++) {
    if (is_offset[r]) {
      while (dropped[od]) od++;
      want[r] = sizes.v[od++];
    } else {
      if (bd == ivd) bd++;
      want[r] = idx->dims[bd++];
    }
  }
  return sp__vs_result_shape(m, op, 0, want, rank, t->elem, err);
}

/* Same rank and sizes where both are known (element types may differ). */
static bool same_dims(const sp_type *a, const sp_type *b) {
  return !sp__vs_static(a) || !sp__vs_static(b) || sp_type_same_dims(a, b);
}

int sp__verify_scatter(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands < 3 || op->noperands % 2 == 0)
    return sp__verify_op_fail(m, op, err, "expects the same number of inputs and updates, and one "
                              "scatter_indices, but has %d operands", op->noperands);
  int n = (op->noperands - 1) / 2;
  if (op->nresults != n)
    return sp__verify_op_fail(m, op, err, "expected %d result%s, but found %d", n,
                              n == 1 ? "" : "s", op->nresults);
  for (int i = 0; i < n; i++)
    if (!sp__vs_compatible(sp__vs_operand(op, i), op->results[i].type)) {
      char a[128], b[128];
      sp__vs_text(sp__vs_operand(op, i), a, sizeof a);
      sp__vs_text(op->results[i].type, b, sizeof b);
      return sp__verify_op_fail(m, op, err, "expects the type of result %d (%s) to be the type of "
                                "input %d (%s)", i, b, i, a);
    }
  const sp_type *t = sp__vs_operand(op, 0), *idx = sp__vs_operand(op, n),
                *upd = sp__vs_operand(op, n + 1);
  for (int i = 1; i < n; i++)
    if (!same_dims(sp__vs_operand(op, i), t) || !same_dims(sp__vs_operand(op, n + 1 + i), upd))
      return sp__verify_op_fail(m, op, err, "expects all inputs and all updates to have the same "
                                "shapes");
  sp_ints window, inserted, ibatch, sbatch, to_operand;
  sp__vs_ints(op, "update_window_dims", &window);
  sp__vs_ints(op, "inserted_window_dims", &inserted);
  sp__vs_ints(op, "input_batching_dims", &ibatch);
  sp__vs_ints(op, "scatter_indices_batching_dims", &sbatch);
  sp__vs_ints(op, "scatter_dims_to_operand_dims", &to_operand);
  if (!sp__vs_static(t) || !sp__vs_static(idx) || !sp__vs_static(upd)) return SP_OK;
  int64_t ivd;
  int rc = check_ivd(m, op, idx, &ivd, err);
  if (rc) return rc;
  if (window.n + inserted.n + ibatch.n != t->rank)
    return sp__verify_op_fail(m, op, err, "Expects rank-of operand to match size-of('update_window_"
                              "dims') + size-of('inserted_window_dims') + size-of('input_batching_"
                              "dims') i.e. %d but got %d.", window.n + inserted.n + ibatch.n,
                              t->rank);
  int want_rank = window.n + idx->rank - (ivd < idx->rank ? 1 : 0);
  if (upd->rank != want_rank)
    return sp__verify_op_fail(m, op, err, "expects updates tensor must be of rank %d", want_rank);
  if (to_operand.n != index_vector_size(idx, ivd))
    return sp__verify_op_fail(m, op, err, "Scatter op has %d elements in scatter_dims_to_operand_"
                              "dims and the bound of dimension index_vector_dim=%lld of scatter_"
                              "indices is %lld. These two numbers must be equal.", to_operand.n,
                              (long long)ivd, (long long)index_vector_size(idx, ivd));
  if (ibatch.n != sbatch.n)
    return sp__verify_op_fail(m, op, err, "input_batching_dims and scatter_indices_batching_dims "
                              "should have the same size");
  bool wseen[SP_MAX_RANK] = {false}, dropped[SP_MAX_RANK] = {false}, mapped[SP_MAX_RANK] = {false};
  bool iseen[SP_MAX_RANK + 1] = {false};
  if ((rc = check_sorted(m, op, "update_window_dims", &window, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "update_window_dims entry", &window, upd->rank, wseen,
                                 err)) ||
      (rc = sp__vs_dims_in_range(m, op, "inserted_window_dims entry", &inserted, t->rank, dropped,
                                 err)) ||
      (rc = sp__vs_dims_in_range(m, op, "input_batching_dims entry", &ibatch, t->rank, dropped,
                                 err)) ||
      (rc = sp__vs_dims_in_range(m, op, "scatter_dims_to_operand_dims entry", &to_operand,
                                 t->rank, mapped, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "scatter_indices_batching_dims entry", &sbatch,
                                 idx->rank, iseen, err)))
    return rc;
  /* The window dims of the updates fit the operand dims they cover. */
  int od = 0;
  for (int i = 0; i < window.n; i++) {
    while (dropped[od]) od++;
    int64_t u = upd->dims[window.v[i]];
    if (u > t->dims[od])
      return sp__verify_op_fail(m, op, err, "Expects updates_window_dims[%d] (%lld) to be <= "
                                "operand dimension %d (%lld)", i, (long long)u, od,
                                (long long)t->dims[od]);
    od++;
  }
  return SP_OK;
}

/* The start indices (operands from `first` on): one per dim of `rank`, each a scalar. */
static int check_start_indices(const sp_module *m, const sp_op *op, int first, int rank,
                               const char *fmt_count, sp_err *err) {
  if (op->noperands - first != rank)
    return sp__verify_op_fail(m, op, err, fmt_count, op->noperands - first, rank);
  for (int i = first; i < op->noperands; i++) {
    const sp_type *s = sp__vs_operand(op, i);
    if (s && s->kind == SP_TYPE_TENSOR && s->rank > 0)
      return sp__verify_op_fail(m, op, err, "start index %d must be a 0-dimensional tensor, not of "
                                "rank %d", i - first, s->rank);
  }
  return SP_OK;
}

int sp__verify_dynamic_slice(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands < 1) return sp__verify_op_fail(m, op, err, "expected at least 1 operand");
  int rc = sp__vs_counts(m, op, -1, 1, err);
  if (rc) return rc;
  sp_ints sizes;
  if (!sp__vs_ints(op, "slice_sizes", &sizes))
    return sp__verify_op_fail(m, op, err, "requires attribute 'slice_sizes'");
  if (sizes.n != op->noperands - 1)
    return sp__verify_op_fail(m, op, err, "has mismatched number of slice sizes (%d) and number of "
                              "start indices (%d)", sizes.n, op->noperands - 1);
  const sp_type *t = sp__vs_operand(op, 0);
  if (!sp__vs_static(t)) return SP_OK;
  if ((rc = check_start_indices(m, op, 1, t->rank, "has mismatched number of start indices (%d) "
                                "and the rank of operand (%d)", err)))
    return rc;
  for (int d = 0; d < t->rank; d++) {
    if (sizes.v[d] < 0)
      return sp__verify_op_fail(m, op, err, "has negative size index to dynamic slice: %lld",
                                (long long)sizes.v[d]);
    if (sizes.v[d] > t->dims[d])
      return sp__verify_op_fail(m, op, err, "has slice size %lld greater than dimension size %lld "
                                "in dimension %d of operand", (long long)sizes.v[d],
                                (long long)t->dims[d], d);
  }
  return sp__vs_result_shape(m, op, 0, sizes.v, sizes.n, t->elem, err);
}

int sp__verify_dynamic_update_slice(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands < 2) return sp__verify_op_fail(m, op, err, "expected at least 2 operands");
  int rc = sp__vs_counts(m, op, -1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *u = sp__vs_operand(op, 1);
  if (!sp__vs_static(t) || !sp__vs_static(u)) return SP_OK;
  if (u->rank != t->rank)
    return sp__verify_op_fail(m, op, err, "update rank does not match operand rank: %d vs %d.",
                              u->rank, t->rank);
  if ((rc = check_start_indices(m, op, 2, t->rank, "expects number of start_indices to match "
                                "operand rank: %d vs %d.", err)))
    return rc;
  for (int d = 0; d < t->rank; d++)
    if (u->dims[d] > t->dims[d])
      return sp__verify_op_fail(m, op, err, "expects size at dimension %d of update to be in range "
                                "[0, %lld]. Got: %lld.", d, (long long)t->dims[d],
                                (long long)u->dims[d]);
  return sp__vs_result_shape(m, op, 0, t->dims, t->rank, t->elem, err);
}
