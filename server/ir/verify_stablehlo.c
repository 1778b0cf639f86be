/*
 * verify_stablehlo.c - the checks StableHLO's own verifier makes on the ops the engine reads
 * (see verify.h), so that a module that verifies is one the later stages may rely on.
 *
 *   every op              no operand left undefined
 *   element-wise ops      operand and result counts; every operand has the result's shape
 *                         (select's predicate and clamp's bounds may be scalars); arithmetic
 *                         ops also one element type
 *   reshape               one operand, one result, as many elements
 *   transpose             permutation of the operand's dims; result dims permuted
 *   broadcast_in_dim      one broadcast dim per operand dim, in range, unique; each operand
 *                         dim 1 or the result's
 *   dot_general           batching / contracting lists of equal length, in range, disjoint,
 *                         of equal sizes; result = batch dims, lhs free dims, rhs free dims
 *   concatenate           same rank, other dims equal, the concatenated dim sums up
 *   slice                 0 <= start <= limit <= dim, stride >= 1, result dims match
 *   reduce                inputs + inits, dims in range and unique, results the inputs
 *                         without the reduced dims
 *   iota                  iota_dimension in range
 *   gather, scatter,      verify_stablehlo_index.c
 *   dynamic_slice, dynamic_update_slice
 *   pad, reduce_window,   verify_stablehlo_window.c
 *   select_and_scatter, convolution
 *   sort, while, if, case verify_stablehlo_region.c
 *   bitcast_convert, dot, verify_stablehlo_ops.c
 *   fft, reverse, cholesky, triangular_solve, batch_norm_*, rng_bit_generator, chlo.top_k,
 *   mhlo.topk, the custom calls with a dedicated sharding rule
 *   the collectives       verify_stablehlo_collective.c
 *   optimization_barrier, verify_stablehlo_tuple.c
 *   tuple, get_tuple_element, constant, the token ops, partition_id, replica_id
 *   chlo element-wise     as the StableHLO element-wise ops (is_inf, is_neg_inf, is_pos_inf
 *                         give i1; next_after, polygamma, zeta take two operands)
 *   func.func             a single-block body ends in a terminator: a return of the function's
 *                         result types (or an op of a dialect shardplan does not know)
 * Shapes are compared only where they are static (a '?' or unranked tensor is left to the
 * stages that accept them). Element counts are computed with overflow checks.
 *
 * Messages keep MLIR's form: "t.mlir:3:8: 'stablehlo.reshape' op number of output elements
 * (12) doesn't match expected number of elements (16)".
 *
 * Memory: nothing is allocated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/verify_stablehlo_int.h"

bool sp__vs_static(const sp_type *t) { return t && sp_type_is_static_tensor(t); }

const sp_type *sp__vs_operand(const sp_op *op, int i) { return op->operands[i].value->type; }

void sp__vs_text(const sp_type *t, char *buf, size_t cap) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_type_print(&sb, t);
  snprintf(buf, cap, "%s", sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb) : "?");
  sp_strbuf_free(&sb);
}

int sp__vs_counts(const sp_module *m, const sp_op *op, int noperands, int nresults, sp_err *err) {
  if (noperands >= 0 && op->noperands != noperands)
    return sp__verify_op_fail(m, op, err, "expected %d operand%s, but found %d", noperands,
                              noperands == 1 ? "" : "s", op->noperands);
  if (op->nresults != nresults)
    return sp__verify_op_fail(m, op, err, "expected %d result%s, but found %d", nresults,
                              nresults == 1 ? "" : "s", op->nresults);
  return SP_OK;
}

bool sp__vs_ints(const sp_op *op, const char *name, sp_ints *out) {
  if (sp_op_get_ints(op, name, out)) return true;
  out->n = 0;
  out->v = NULL;
  return false;
}

int sp__vs_dims_in_range(const sp_module *m, const sp_op *op, const char *what, const sp_ints *l,
                         int rank, bool *seen, sp_err *err) {
  for (int i = 0; i < l->n; i++) {
    if (l->v[i] < 0 || l->v[i] >= rank)
      return sp__verify_op_fail(m, op, err, "%s %lld is out of range for rank %d", what,
                                (long long)l->v[i], rank);
    if (seen[l->v[i]])
      return sp__verify_op_fail(m, op, err, "%s %lld is used twice", what, (long long)l->v[i]);
    seen[l->v[i]] = true;
  }
  return SP_OK;
}

int sp__vs_result_shape(const sp_module *m, const sp_op *op, int i, const int64_t *dims,
                        int rank, const char *elem, sp_err *err) {
  const sp_type *r = op->results[i].type;
  if (!sp__vs_static(r)) return SP_OK;
  bool same = r->rank == rank && (!elem || !r->elem || strcmp(elem, r->elem) == 0);
  for (int d = 0; same && d < rank; d++) same = r->dims[d] == dims[d];
  if (same) return SP_OK;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "tensor<");
  for (int d = 0; d < rank; d++) sp_strbuf_printf(&sb, "%lldx", (long long)dims[d]);
  sp_strbuf_printf(&sb, "%s>", elem ? elem : r->elem ? r->elem : "?");
  char got[160];
  sp__vs_text(r, got, sizeof got);
  int rc = sp__verify_op_fail(m, op, err, "inferred type(s) '%.160s' are incompatible with return "
                              "type(s) of operation '%s'",
                              sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb) : "?", got);
  sp_strbuf_free(&sb);
  return rc;
}

bool sp__vs_compatible(const sp_type *a, const sp_type *b) {
  if (!a || !b) return a == b;
  if (a->kind != SP_TYPE_TENSOR || b->kind != SP_TYPE_TENSOR) return sp_type_equal(a, b);
  if (a->elem && b->elem && strcmp(a->elem, b->elem) != 0) return false;
  if (a->rank < 0 || b->rank < 0) return true;
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != SP_DYN_DIM && b->dims[d] != SP_DYN_DIM && a->dims[d] != b->dims[d])
      return false;
  return true;
}

bool sp__vs_window_out(int64_t size, int64_t base_dil, int64_t lo, int64_t hi, int64_t window,
                       int64_t win_dil, int64_t stride, int64_t *out) {
  int64_t dilated = 0, padded, eff;
  if (size > 0 && (__builtin_mul_overflow(size - 1, base_dil, &dilated) ||
                   __builtin_add_overflow(dilated, 1, &dilated)))
    return false;
  if (__builtin_add_overflow(dilated, lo, &padded) ||
      __builtin_add_overflow(padded, hi, &padded) || padded < 0)
    return false;
  if (__builtin_mul_overflow(window - 1, win_dil, &eff) || __builtin_add_overflow(eff, 1, &eff))
    return false;
  *out = padded < eff ? 0 : (padded - eff) / stride + 1;
  return true;
}

/* Element-wise: every operand (except scalars where `scalar_ok` allows) has the result's
 * shape; `same_elem` also asks for one element type. */
static int elementwise(const sp_module *m, const sp_op *op, int noperands, unsigned scalar_ok,
                       bool same_elem, sp_err *err) {
  int rc = sp__vs_counts(m, op, noperands, 1, err);
  if (rc) return rc;
  const sp_type *r = op->results[0].type;
  for (int i = 0; i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i);
    if (!sp__vs_static(t) || !sp__vs_static(r)) continue;
    if ((scalar_ok >> i & 1u) && t->rank == 0) continue;
    if (!sp_type_same_dims(t, r)) {
      char a[128], b[128];
      sp__vs_text(t, a, sizeof a);
      sp__vs_text(r, b, sizeof b);
      return sp__verify_op_fail(m, op, err, "requires the same shape for all operands and results: operand %d "
                  "is %s, result %s", i, a, b);
    }
    if (same_elem && t->elem && r->elem && strcmp(t->elem, r->elem) != 0)
      return sp__verify_op_fail(m, op, err, "requires the same element type for all operands and results: "
                  "operand %d is %s, result %s", i, t->elem, r->elem);
  }
  return SP_OK;
}

static int verify_reshape(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *r = op->results[0].type;
  if (!sp__vs_static(t) || !sp__vs_static(r)) return SP_OK;
  int64_t a = sp_type_num_elements(t), b = sp_type_num_elements(r);
  if (a < 0 || b < 0)
    return sp__verify_op_fail(m, op, err, "the number of elements of %s does not fit in 64 bits",
                a < 0 ? "the operand" : "the result");
  if (a != b)
    return sp__verify_op_fail(m, op, err, "number of output elements (%lld) doesn't match expected number of "
                "elements (%lld)", (long long)b, (long long)a);
  return SP_OK;
}

static int verify_transpose(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *r = op->results[0].type;
  sp_ints perm;
  if (!sp__vs_ints(op, "permutation", &perm))
    return sp__verify_op_fail(m, op, err, "requires attribute 'permutation'");
  if (!sp__vs_static(t)) return SP_OK;
  if (perm.n != t->rank)
    return sp__verify_op_fail(m, op, err, "permutation has %d entries but the operand has rank %d", perm.n,
                t->rank);
  bool seen[SP_MAX_RANK] = {false};
  if ((rc = sp__vs_dims_in_range(m, op, "permutation entry", &perm, t->rank, seen, err))) return rc;
  if (!sp__vs_static(r)) return SP_OK;
  if (r->rank != t->rank)
    return sp__verify_op_fail(m, op, err, "result rank %d differs from the operand rank %d", r->rank, t->rank);
  for (int i = 0; i < perm.n; i++)
    if (r->dims[i] != t->dims[perm.v[i]])
      return sp__verify_op_fail(m, op, err, "result dim %d has size %lld but operand dim %lld has %lld", i,
                  (long long)r->dims[i], (long long)perm.v[i], (long long)t->dims[perm.v[i]]);
  return SP_OK;
}

static int verify_broadcast(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *r = op->results[0].type;
  sp_ints dims;
  if (!sp__vs_ints(op, "broadcast_dimensions", &dims))
    return sp__verify_op_fail(m, op, err, "requires attribute 'broadcast_dimensions'");
  if (!sp__vs_static(t) || !sp__vs_static(r)) return SP_OK;
  if (dims.n != t->rank)
    return sp__verify_op_fail(m, op, err, "broadcast_dimensions size (%d) does not match operand rank (%d)",
                dims.n, t->rank);
  bool seen[SP_MAX_RANK] = {false};
  if ((rc = sp__vs_dims_in_range(m, op, "broadcast dimension", &dims, r->rank, seen, err))) return rc;
  for (int i = 0; i < dims.n; i++) {
    int64_t in = t->dims[i], out = r->dims[dims.v[i]];
    if (in != 1 && in != out)
      return sp__verify_op_fail(m, op, err, "size of operand dimension %d (%lld) is not equal to 1 or size of "
                  "result dimension %lld (%lld)", i, (long long)in, (long long)dims.v[i],
                  (long long)out);
  }
  return SP_OK;
}

static int verify_dot_general(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  const sp_type *l = sp__vs_operand(op, 0), *rt = sp__vs_operand(op, 1), *res = op->results[0].type;
  sp_ints lb, rb, lc, rc_;
  sp__vs_ints(op, "lhs_batching_dimensions", &lb);
  sp__vs_ints(op, "rhs_batching_dimensions", &rb);
  sp__vs_ints(op, "lhs_contracting_dimensions", &lc);
  sp__vs_ints(op, "rhs_contracting_dimensions", &rc_);
  if (lb.n != rb.n)
    return sp__verify_op_fail(m, op, err, "lhs and rhs should have the same number of batching dimensions");
  if (lc.n != rc_.n)
    return sp__verify_op_fail(m, op, err, "lhs and rhs should have the same number of contracting dimensions");
  if (!sp__vs_static(l) || !sp__vs_static(rt)) return SP_OK;
  bool lseen[SP_MAX_RANK] = {false}, rseen[SP_MAX_RANK] = {false};
  if ((rc = sp__vs_dims_in_range(m, op, "lhs batching dimension", &lb, l->rank, lseen, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "lhs contracting dimension", &lc, l->rank, lseen, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "rhs batching dimension", &rb, rt->rank, rseen, err)) ||
      (rc = sp__vs_dims_in_range(m, op, "rhs contracting dimension", &rc_, rt->rank, rseen, err)))
    return rc;
  for (int i = 0; i < lb.n; i++)
    if (l->dims[lb.v[i]] != rt->dims[rb.v[i]])
      return sp__verify_op_fail(m, op, err, "batching dimension sizes must match: lhs dim %lld is %lld, rhs "
                  "dim %lld is %lld", (long long)lb.v[i], (long long)l->dims[lb.v[i]],
                  (long long)rb.v[i], (long long)rt->dims[rb.v[i]]);
  for (int i = 0; i < lc.n; i++)
    if (l->dims[lc.v[i]] != rt->dims[rc_.v[i]])
      return sp__verify_op_fail(m, op, err, "contracting dimension sizes must match: lhs dim %lld is %lld, rhs "
                  "dim %lld is %lld", (long long)lc.v[i], (long long)l->dims[lc.v[i]],
                  (long long)rc_.v[i], (long long)rt->dims[rc_.v[i]]);
  if (!sp__vs_static(res)) return SP_OK;
  int64_t want[3 * SP_MAX_RANK];
  int n = 0;
  for (int i = 0; i < lb.n; i++) want[n++] = l->dims[lb.v[i]];
  for (int d = 0; d < l->rank; d++)
    if (!lseen[d]) want[n++] = l->dims[d];
  for (int d = 0; d < rt->rank; d++)
    if (!rseen[d]) want[n++] = rt->dims[d];
  if (res->rank != n)
    return sp__verify_op_fail(m, op, err, "result rank %d differs from the %d batch and free dimensions",
                res->rank, n);
  for (int d = 0; d < n; d++)
    if (res->dims[d] != want[d])
      return sp__verify_op_fail(m, op, err, "result dim %d has size %lld, expected %lld", d,
                  (long long)res->dims[d], (long long)want[d]);
  return SP_OK;
}

static int verify_concatenate(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, -1, 1, err);
  if (rc) return rc;
  if (op->noperands < 1) return sp__verify_op_fail(m, op, err, "expected at least 1 operand");
  int64_t dim;
  if (!sp_op_get_int(op, "dimension", &dim))
    return sp__verify_op_fail(m, op, err, "requires attribute 'dimension'");
  const sp_type *r = op->results[0].type;
  if (!sp__vs_static(r)) return SP_OK;
  if (dim < 0 || dim >= r->rank)
    return sp__verify_op_fail(m, op, err, "dimension %lld is out of range for rank %d", (long long)dim, r->rank);
  int64_t sum = 0;
  for (int i = 0; i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i);
    if (!sp__vs_static(t)) return SP_OK;
    if (t->rank != r->rank)
      return sp__verify_op_fail(m, op, err, "operand %d has rank %d, the result %d", i, t->rank, r->rank);
    for (int d = 0; d < r->rank; d++)
      if (d != dim && t->dims[d] != r->dims[d])
        return sp__verify_op_fail(m, op, err, "shapes of operand %d and the result do not match at non-concat "
                    "index %d: %lld != %lld", i, d, (long long)t->dims[d], (long long)r->dims[d]);
    if (__builtin_add_overflow(sum, t->dims[dim], &sum))
      return sp__verify_op_fail(m, op, err, "the concatenated dimension overflows 64 bits");
  }
  if (sum != r->dims[dim])
    return sp__verify_op_fail(m, op, err, "result dim %lld has size %lld but the operands add up to %lld",
                (long long)dim, (long long)r->dims[dim], (long long)sum);
  return SP_OK;
}

static int verify_slice(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  sp_ints start, limit, strides;
  if (!sp__vs_ints(op, "start_indices", &start) || !sp__vs_ints(op, "limit_indices", &limit))
    return sp__verify_op_fail(m, op, err, "requires attributes 'start_indices' and 'limit_indices'");
  bool have_strides = sp__vs_ints(op, "strides", &strides);
  const sp_type *t = sp__vs_operand(op, 0), *r = op->results[0].type;
  if (!sp__vs_static(t)) return SP_OK;
  if (start.n != t->rank || limit.n != t->rank || (have_strides && strides.n != t->rank))
    return sp__verify_op_fail(m, op, err, "start, limit and strides need one entry per operand dim (%d)",
                t->rank);
  for (int d = 0; d < t->rank; d++) {
    int64_t s = start.v[d], l = limit.v[d], st = have_strides ? strides.v[d] : 1;
    if (s < 0 || l < s || l > t->dims[d])
      return sp__verify_op_fail(m, op, err, "dim %d: start %lld and limit %lld must satisfy 0 <= start <= limit "
                  "<= %lld", d, (long long)s, (long long)l, (long long)t->dims[d]);
    if (st < 1) return sp__verify_op_fail(m, op, err, "dim %d: stride %lld must be positive", d, (long long)st);
    int64_t want = (l - s) / st + ((l - s) % st != 0);
    if (sp__vs_static(r) && r->rank == t->rank && r->dims[d] != want)
      return sp__verify_op_fail(m, op, err, "result dim %d has size %lld, expected %lld", d,
                  (long long)r->dims[d], (long long)want);
  }
  if (sp__vs_static(r) && r->rank != t->rank)
    return sp__verify_op_fail(m, op, err, "result rank %d differs from the operand rank %d", r->rank, t->rank);
  return SP_OK;
}

static int verify_reduce(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands == 0 || op->noperands % 2 != 0)
    return sp__verify_op_fail(m, op, err, "expects as many inputs as init values, but has %d operands",
                op->noperands);
  int n = op->noperands / 2;
  if (op->nresults != n)
    return sp__verify_op_fail(m, op, err, "expected %d result%s, but found %d", n, n == 1 ? "" : "s",
                op->nresults);
  sp_ints dims;
  if (!sp__vs_ints(op, "dimensions", &dims))
    return sp__verify_op_fail(m, op, err, "requires attribute 'dimensions'");
  for (int i = 0; i < n; i++) {
    const sp_type *t = sp__vs_operand(op, i), *r = op->results[i].type;
    if (!sp__vs_static(t)) continue;
    bool seen[SP_MAX_RANK] = {false};
    int rc = sp__vs_dims_in_range(m, op, "reduced dimension", &dims, t->rank, seen, err);
    if (rc) return rc;
    if (!sp__vs_static(r)) continue;
    int k = 0;
    for (int d = 0; d < t->rank; d++) {
      if (seen[d]) continue;
      if (k >= r->rank || r->dims[k] != t->dims[d])
        return sp__verify_op_fail(m, op, err, "result %d does not have the shape of input %d without the "
                    "reduced dimensions", i, i);
      k++;
    }
    if (k != r->rank)
      return sp__verify_op_fail(m, op, err, "result %d does not have the shape of input %d without the "
                  "reduced dimensions", i, i);
  }
  return SP_OK;
}

static int verify_iota(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 0, 1, err);
  if (rc) return rc;
  int64_t dim;
  const sp_type *r = op->results[0].type;
  if (!sp_op_get_int(op, "iota_dimension", &dim))
    return sp__verify_op_fail(m, op, err, "requires attribute 'iota_dimension'");
  if (sp__vs_static(r) && (dim < 0 || dim >= r->rank))
    return sp__verify_op_fail(m, op, err, "iota dimension %lld is out of range for rank %d", (long long)dim,
                r->rank);
  return SP_OK;
}

int sp_verify_func_return(const sp_module *m, const sp_op *op, sp_err *err) {
  const sp_func_info *f = op->func;
  if (!f || op->nregions == 0 || op->regions[0].nblocks != 1) return SP_OK;
  const sp_op *ret = op->regions[0].blocks[0]->last;
  if (!ret) return sp__verify_op_fail(m, op, err, "empty block: expect at least a terminator");
  /* An op of another dialect may be the terminator (Shardy's tests use "test.terminator"). */
  if (ret->kind == SP_OP_UNKNOWN) return SP_OK;
  if (ret->kind != SP_OP_FUNC_RETURN)
    return sp__verify_op_fail(m, ret, err, "block with no terminator: the body of a func.func ends in a "
                "func.return");
  if (ret->noperands != f->nresults)
    return sp__verify_op_fail(m, ret, err, "has %d operands, but enclosing function (@%s) returns %d",
                ret->noperands, sp_op_get_str(op, "sym_name") ? sp_op_get_str(op, "sym_name") : "",
                f->nresults);
  for (int i = 0; i < f->nresults; i++) {
    const sp_type *t = sp__vs_operand(ret, i);
    if (!sp_type_equal(t, f->result_types[i])) {
      char a[128], b[128];
      sp__vs_text(t, a, sizeof a);
      sp__vs_text(f->result_types[i], b, sizeof b);
      return sp__verify_op_fail(m, ret, err, "type of return operand %d (%s) doesn't match function result "
                  "type (%s) in function @%s", i, a, b,
                  sp_op_get_str(op, "sym_name") ? sp_op_get_str(op, "sym_name") : "");
    }
  }
  return SP_OK;
}

/* A static tensor's element and byte counts fit in int64 (the cost model and the search count
 * them). */
static int check_size(const sp_module *m, const sp_op *op, const char *what, int index,
                      const sp_type *t, sp_err *err) {
  if (!sp__vs_static(t)) return SP_OK;
  int64_t n = 1, bytes;
  bool over = false;
  for (int d = 0; d < t->rank && !over; d++) over = __builtin_mul_overflow(n, t->dims[d], &n);
  int bits = sp_type_elem_bits(t);
  if (!over) over = __builtin_mul_overflow(n, (int64_t)(bits > 8 ? bits / 8 : 1), &bytes);
  if (!over) return SP_OK;
  char text[128];
  sp__vs_text(t, text, sizeof text);
  return sp__verify_op_fail(m, op, err, "%s %d - %s holds more than 2^63 elements or bytes", what, index, text);
}

int sp_verify_stablehlo_op(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc;
  for (int i = 0; i < op->noperands; i++)
    if (!op->operands[i].value) return sp__verify_op_fail(m, op, err, "operand %d is undefined", i);
  for (int i = 0; i < op->nresults; i++)
    if ((rc = check_size(m, op, "result", i, op->results[i].type, err))) return rc;
  for (int r = 0; r < op->nregions; r++)
    for (int b = 0; b < op->regions[r].nblocks; b++) {
      const sp_block *blk = op->regions[r].blocks[b];
      for (int i = 0; i < blk->nargs; i++)
        if ((rc = check_size(m, op, op->kind == SP_OP_FUNC ? "arg" : "block argument", i,
                             blk->args[i]->type, err)))
          return rc;
    }
  switch (op->kind) {
    /* Unary, same element type. */
    case SP_OP_CBRT: case SP_OP_CEIL: case SP_OP_COSINE: case SP_OP_EXP: case SP_OP_EXPM1:
    case SP_OP_FLOOR: case SP_OP_LOG: case SP_OP_LOG1P: case SP_OP_LOGISTIC: case SP_OP_NEGATE:
    case SP_OP_NOT: case SP_OP_ROUND_AFZ: case SP_OP_ROUND_EVEN: case SP_OP_RSQRT:
    case SP_OP_SIGN: case SP_OP_SINE: case SP_OP_SQRT: case SP_OP_TAN: case SP_OP_TANH:
    case SP_OP_CLZ: case SP_OP_POPCNT: case SP_OP_REDUCE_PRECISION:
      return elementwise(m, op, 1, 0, true, err);
    /* Unary, element type may change. */
    case SP_OP_ABS: case SP_OP_CONVERT: case SP_OP_IMAG: case SP_OP_REAL: case SP_OP_IS_FINITE:
      return elementwise(m, op, 1, 0, false, err);
    /* Binary, same element type. */
    case SP_OP_ADD: case SP_OP_AND: case SP_OP_ATAN2: case SP_OP_DIVIDE: case SP_OP_MAXIMUM:
    case SP_OP_MINIMUM: case SP_OP_MULTIPLY: case SP_OP_OR: case SP_OP_POWER:
    case SP_OP_REMAINDER: case SP_OP_SHIFT_LEFT: case SP_OP_SHIFT_RIGHT_ARITHMETIC:
    case SP_OP_SHIFT_RIGHT_LOGICAL: case SP_OP_SUBTRACT: case SP_OP_XOR:
      return elementwise(m, op, 2, 0, true, err);
    case SP_OP_COMPARE: case SP_OP_COMPLEX:
      return elementwise(m, op, 2, 0, false, err);
    case SP_OP_SELECT:
      return elementwise(m, op, 3, 1u, false, err);   /* the predicate may be a scalar */
    case SP_OP_CLAMP:
      return elementwise(m, op, 3, 5u, false, err);   /* min and max may be scalars */
    case SP_OP_RESHAPE:
      return verify_reshape(m, op, err);
    case SP_OP_TRANSPOSE:
      return verify_transpose(m, op, err);
    case SP_OP_BROADCAST_IN_DIM:
      return verify_broadcast(m, op, err);
    case SP_OP_DOT_GENERAL:
      return verify_dot_general(m, op, err);
    case SP_OP_CONCATENATE:
      return verify_concatenate(m, op, err);
    case SP_OP_SLICE:
      return verify_slice(m, op, err);
    case SP_OP_REDUCE:
      return verify_reduce(m, op, err);
    case SP_OP_IOTA:
      return verify_iota(m, op, err);
    case SP_OP_GATHER:
      return sp__verify_gather(m, op, err);
    case SP_OP_SCATTER:
      return sp__verify_scatter(m, op, err);
    case SP_OP_DYNAMIC_SLICE:
      return sp__verify_dynamic_slice(m, op, err);
    case SP_OP_DYNAMIC_UPDATE_SLICE:
      return sp__verify_dynamic_update_slice(m, op, err);
    case SP_OP_PAD:
      return sp__verify_pad(m, op, err);
    case SP_OP_REDUCE_WINDOW:
      return sp__verify_reduce_window(m, op, err);
    case SP_OP_SELECT_AND_SCATTER:
      return sp__verify_select_and_scatter(m, op, err);
    case SP_OP_CONVOLUTION:
      return sp__verify_convolution(m, op, err);
    case SP_OP_SORT:
      return sp__verify_sort(m, op, err);
    case SP_OP_WHILE:
      return sp__verify_while(m, op, err);
    case SP_OP_IF: case SP_OP_CASE:
      return sp__verify_if_case(m, op, err);
    /* chlo: what JAX emits for lax.erf, lax.square, ...; same shapes, one element type */
    case SP_OP_CHLO_ACOS: case SP_OP_CHLO_ACOSH: case SP_OP_CHLO_ASIN: case SP_OP_CHLO_ASINH:
    case SP_OP_CHLO_ATAN: case SP_OP_CHLO_ATANH: case SP_OP_CHLO_BESSEL_I1E:
    case SP_OP_CHLO_CONJ: case SP_OP_CHLO_COSH: case SP_OP_CHLO_SINH: case SP_OP_CHLO_TAN:
    case SP_OP_CHLO_DIGAMMA: case SP_OP_CHLO_ERF: case SP_OP_CHLO_ERF_INV:
    case SP_OP_CHLO_ERFC: case SP_OP_CHLO_LGAMMA: case SP_OP_CHLO_SQUARE:
      return elementwise(m, op, 1, 0, true, err);
    case SP_OP_CHLO_IS_INF: case SP_OP_CHLO_IS_NEG_INF: case SP_OP_CHLO_IS_POS_INF:
      return elementwise(m, op, 1, 0, false, err);
    case SP_OP_CHLO_NEXT_AFTER: case SP_OP_CHLO_POLYGAMMA: case SP_OP_CHLO_ZETA:
      return elementwise(m, op, 2, 0, true, err);
    case SP_OP_ALL_GATHER: case SP_OP_ALL_TO_ALL: case SP_OP_REDUCE_SCATTER:
    case SP_OP_ALL_REDUCE: case SP_OP_COLLECTIVE_PERMUTE: case SP_OP_COLLECTIVE_BROADCAST:
      return sp__verify_collective(m, op, err);
    case SP_OP_OPTIMIZATION_BARRIER: case SP_OP_GET_TUPLE_ELEMENT: case SP_OP_TUPLE:
    case SP_OP_CONSTANT: case SP_OP_PARTITION_ID: case SP_OP_REPLICA_ID:
    case SP_OP_CREATE_TOKEN: case SP_OP_AFTER_ALL: case SP_OP_INFEED: case SP_OP_OUTFEED:
    case SP_OP_SEND: case SP_OP_RECV:
      return sp__verify_tuple_token(m, op, err);
    default:
      return sp__verify_stablehlo_ops(m, op, err);
  }
}
