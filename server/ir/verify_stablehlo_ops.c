/*
 * verify_stablehlo_ops.c - StableHLO's checks of the computing ops that carry their own shape
 * logic (see verify_stablehlo_int.h): bitcast_convert, dot, fft, reverse, cholesky,
 * triangular_solve, the three batch_norm ops, rng_bit_generator, and top-k in its three forms
 * (chlo.top_k, mhlo.topk, custom_call @mhlo.topk), plus the custom calls the rule registry
 * gives a dedicated rule (Eigh, Qr, Householder products, ApproxTopK).
 *
 * Each check makes the sharding rule of its op total: an op that verifies gets its rule
 * (server/rules) without a count, rank or dimension error. Messages keep StableHLO's wording
 * where it has one ("operand 'a' must have rank >= 2, but got 'tensor<8xf32>'"). Shapes are
 * compared only where they are static.
 *
 * Memory: nothing is allocated.
 */
#include <stdio.h>
#include <string.h>

#include "ir/verify_stablehlo_int.h"

/* 'tensor<4x8xf32>', quoted as MLIR quotes a type in a diagnostic. */
typedef struct quoted { char s[160]; } quoted;

static quoted q(const sp_type *t) {
  quoted out;
  char text[150];
  sp__vs_text(t, text, sizeof text);
  snprintf(out.s, sizeof out.s, "'%s'", text);
  return out;
}

/* The dims of a static shape as MLIR prints an ArrayRef: "4, 8". */
static void dims_text(const int64_t *dims, int rank, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)dims[d]);
}

static bool is_complex(const sp_type *t) { return t->elem && strncmp(t->elem, "complex<", 8) == 0; }

/* "complex<f32>" -> "f32" into buf. */
static const char *complex_part(const sp_type *t, char *buf, size_t cap) {
  size_t n = strlen(t->elem);
  snprintf(buf, cap, "%.*s", (int)(n > 9 ? n - 9 : 0), t->elem + 8);
  return buf;
}

/* Result `i` has the type of operand `j` (both static), or MLIR's inferred-type message. */
static int result_like(const sp_module *m, const sp_op *op, int i, const sp_type *want,
                       sp_err *err) {
  if (!sp__vs_static(want)) return SP_OK;
  return sp__vs_result_shape(m, op, i, want->dims, want->rank, want->elem, err);
}

/* ------------------------------------------------------------------ bitcast_convert */

/* Equal element widths keep the shape; otherwise the side of the narrower element type has
 * one more, innermost dim of (wider bits / narrower bits). */
static int verify_bitcast_convert(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *r = op->results[0].type;
  if (!sp__vs_static(t) || !sp__vs_static(r)) return SP_OK;
  int tb = sp_type_elem_bits(t), rb = sp_type_elem_bits(r);
  if (tb <= 0 || rb <= 0) return SP_OK; /* an element type we cannot size */
  const sp_type *small = tb < rb ? t : r, *big = tb < rb ? r : t;
  int sbits = tb < rb ? tb : rb, bbits = tb < rb ? rb : tb;
  int prefix = small->rank;
  if (sbits != bbits) {
    if (small->rank == 0)
      return sp__verify_op_fail(m, op, err, "does not allow the smaller element type to be part of a 0d "
                                "tensor, but got: %s and %s.", q(t).s, q(r).s);
    int64_t inner = small->dims[small->rank - 1], bits;
    if (__builtin_mul_overflow(inner, (int64_t)sbits, &bits) || bits != bbits)
      return sp__verify_op_fail(m, op, err, "requires compatible bit widths. Got: %s and %s, but %d * %lld "
                                "!= %d.", q(t).s, q(r).s, sbits, (long long)inner, bbits);
    prefix = small->rank - 1;
  }
  bool same = prefix == big->rank;
  for (int d = 0; same && d < prefix; d++) same = small->dims[d] == big->dims[d];
  if (!same)
    return sp__verify_op_fail(m, op, err, "operand and result shapes must match except for the innermost "
                              "dimension of the shape with the smaller element type. Got: %s and %s.",
                              q(t).s, q(r).s);
  return SP_OK;
}

/* ------------------------------------------------------------------ dot */

/* Vectors or matrices; lhs's last dim contracts with rhs's first; the result is lhs's free
 * dim then rhs's. */
static int verify_dot(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  const sp_type *l = sp__vs_operand(op, 0), *rt = sp__vs_operand(op, 1);
  if (!sp__vs_static(l) || !sp__vs_static(rt)) return SP_OK;
  if (l->rank < 1 || l->rank > 2 || rt->rank < 1 || rt->rank > 2)
    return sp__verify_op_fail(m, op, err, "expected operands of rank 1 or 2, but got %s and %s", q(l).s,
                              q(rt).s);
  if (l->dims[l->rank - 1] != rt->dims[0])
    return sp__verify_op_fail(m, op, err, "expected the size of lhs dimension %d (%lld) to match the size "
                              "of rhs dimension 0 (%lld)", l->rank - 1,
                              (long long)l->dims[l->rank - 1], (long long)rt->dims[0]);
  int64_t want[2];
  int n = 0;
  if (l->rank == 2) want[n++] = l->dims[0];
  if (rt->rank == 2) want[n++] = rt->dims[1];
  return sp__vs_result_shape(m, op, 0, want, n, NULL, err);
}

/* ------------------------------------------------------------------ fft */

static int verify_fft(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  sp_ints len;
  if (!sp__vs_ints(op, "fft_length", &len))
    return sp__verify_op_fail(m, op, err, "requires attribute 'fft_length'");
  const char *type = sp_op_get_str(op, "fft_type");
  if (!type) return sp__verify_op_fail(m, op, err, "requires attribute 'fft_type'");
  bool rfft = strcmp(type, "RFFT") == 0, irfft = strcmp(type, "IRFFT") == 0;
  if (!rfft && !irfft && strcmp(type, "FFT") != 0 && strcmp(type, "IFFT") != 0)
    return sp__verify_op_fail(m, op, err, "fft_type %s is not one of FFT, IFFT, RFFT, IRFFT", type);
  if (len.n < 1 || len.n > 3)
    return sp__verify_op_fail(m, op, err, "rank must be between 1 and 3, but got %d.", len.n);
  for (int i = 0; i < len.n; i++)
    if (len.v[i] < 0) return sp__verify_op_fail(m, op, err, "fft_length %lld is negative", (long long)len.v[i]);
  const sp_type *t = sp__vs_operand(op, 0);
  if (!sp__vs_static(t)) return SP_OK;
  if (t->rank < len.n)
    return sp__verify_op_fail(m, op, err, "operand rank must not be less than fft rank of %d for operand of "
                              "type %s.", len.n, q(t).s);
  if (rfft == is_complex(t))
    return sp__verify_op_fail(m, op, err, rfft ? "RFFT requires a floating point operand, but is given %s."
                                               : "FFT/IFFT/IRFFT take a complex tensor as input, but is given %s.",
                              q(t).s);
  char got[160], want[64];
  const int64_t *inner = t->dims + t->rank - len.n;
  dims_text(t->dims, t->rank, got, sizeof got);
  dims_text(len.v, len.n, want, sizeof want);
  int checked = irfft ? len.n - 1 : rfft ? len.n : 0;
  for (int i = 0; i < checked; i++)
    if (inner[i] != len.v[i])
      return sp__verify_op_fail(m, op, err, rfft ? "RFFT requires innermost dimensions match fft_length. Got: "
                                                   "%s but wanted %s."
                                                 : "IRFFT requires non-final dimensions match fft_length. "
                                                   "Got: %s but wanted %s.", got, want);
  int64_t half = len.v[len.n - 1] / 2 + 1;
  if (irfft && inner[len.n - 1] != half)
    return sp__verify_op_fail(m, op, err, "IRFFT requires innermost dimension match fft_length[-1]/2+1. Got: "
                              "%s but fft_length is %s.", got, want);
  int64_t dims[SP_MAX_RANK];
  memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
  char elem[64];
  const char *e = t->elem;
  if (rfft) {
    dims[t->rank - 1] = half;
    snprintf(elem, sizeof elem, "complex<%s>", t->elem ? t->elem : "?");
    e = elem;
  } else if (irfft) {
    dims[t->rank - 1] = len.v[len.n - 1];
    e = complex_part(t, elem, sizeof elem);
  }
  return sp__vs_result_shape(m, op, 0, dims, t->rank, e, err);
}

/* ------------------------------------------------------------------ reverse */

static int verify_reverse(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  sp_ints dims;
  if (!sp__vs_ints(op, "dimensions", &dims))
    return sp__verify_op_fail(m, op, err, "requires attribute 'dimensions'");
  for (int i = 0; i < dims.n; i++)
    for (int k = 0; k < i; k++)
      if (dims.v[k] == dims.v[i])
        return sp__verify_op_fail(m, op, err, "dimensions should be unique. Got: %lld is used twice",
                                  (long long)dims.v[i]);
  const sp_type *t = sp__vs_operand(op, 0);
  for (int i = 0; i < dims.n; i++) {
    if (dims.v[i] < 0)
      return sp__verify_op_fail(m, op, err, "all dimensions should be non-negative. Got dimension: %lld.",
                                (long long)dims.v[i]);
    if (sp__vs_static(t) && dims.v[i] >= t->rank)
      return sp__verify_op_fail(m, op, err, "all dimensions should be between [0, %d). Got dimension: %lld.",
                                t->rank, (long long)dims.v[i]);
  }
  return result_like(m, op, 0, t, err);
}

/* ------------------------------------------------------------------ linear algebra */

static int verify_cholesky(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *a = sp__vs_operand(op, 0);
  if (!sp__vs_static(a)) return SP_OK;
  char shape[160];
  dims_text(a->dims, a->rank, shape, sizeof shape);
  if (a->rank < 2)
    return sp__verify_op_fail(m, op, err, "argument 'a' is expected to have rank >= 2, got shape %s.", shape);
  if (a->dims[a->rank - 2] != a->dims[a->rank - 1])
    return sp__verify_op_fail(m, op, err, "minor dimensions of 'a' must have equal size, got shape %s.",
                              shape);
  return result_like(m, op, 0, a, err);
}

static int verify_triangular_solve(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  const char *tr = sp_op_get_str(op, "transpose_a");
  if (tr && strstr(tr, "TRANSPOSE_INVALID"))
    return sp__verify_op_fail(m, op, err, "Invalid transpose option value for triangular solve");
  const sp_type *a = sp__vs_operand(op, 0), *b = sp__vs_operand(op, 1);
  if (!sp__vs_static(a) || !sp__vs_static(b)) return SP_OK;
  int r = a->rank;
  if (r < 2) return sp__verify_op_fail(m, op, err, "operand 'a' must have rank >= 2, but got %s", q(a).s);
  if (a->dims[r - 2] != a->dims[r - 1])
    return sp__verify_op_fail(m, op, err, "two minor dimensions of operand 'a' must have equal size, but got "
                              "%s", q(a).s);
  if (b->rank != r)
    return sp__verify_op_fail(m, op, err, "operands must have equal rank, but got %s and %s", q(a).s,
                              q(b).s);
  /* left_side is a bool written as text (`left_side = true`). */
  const char *left = sp_op_get_str(op, "left_side");
  bool left_side = left && strncmp(left, "true", 4) == 0;
  if (a->dims[r - 1] != b->dims[r - (left_side ? 2 : 1)])
    return sp__verify_op_fail(m, op, err, "shared dimension of operands 'a' and 'b' does not match, but got "
                              "%s and %s", q(a).s, q(b).s);
  for (int d = 0; d < r - 2; d++)
    if (a->dims[d] != b->dims[d])
      return sp__verify_op_fail(m, op, err, "batch dimensions of the operands must match, but got %s and %s",
                                q(a).s, q(b).s);
  return result_like(m, op, 0, b, err);
}

/* ------------------------------------------------------------------ batch_norm */

/* operand (multi-dimensional) and `nvec` vectors of the feature count; results: the operand's
 * shape, then `nvec_out` vectors of the feature count. */
static int verify_batch_norm(const sp_module *m, const sp_op *op, int noperands, int nresults,
                             sp_err *err) {
  int rc = sp__vs_counts(m, op, noperands, nresults, err);
  if (rc) return rc;
  int64_t feature;
  if (!sp_op_get_int(op, "feature_index", &feature))
    return sp__verify_op_fail(m, op, err, "requires attribute 'feature_index'");
  /* the multi-dimensional operands: batch_norm_grad's grad_output is its last one */
  const sp_type *x = sp__vs_operand(op, 0);
  const sp_type *grad = op->kind == SP_OP_BATCH_NORM_GRAD ? sp__vs_operand(op, 4) : NULL;
  if (grad && sp__vs_static(x) && sp__vs_static(grad) && !sp__vs_compatible(x, grad))
    return sp__verify_op_fail(m, op, err, "expects multi-dimensional operands to have compatible shapes.");
  if (feature < 0)
    return sp__verify_op_fail(m, op, err, "expects featureIndex to be a non-negative number, got %lld.",
                              (long long)feature);
  if (!sp__vs_static(x)) return SP_OK;
  if (feature >= x->rank)
    return sp__verify_op_fail(m, op, err, "expects featureIndex to be smaller than the rank of "
                              "multi-dimensional operands; got featureIndex %lld, and rank %d.",
                              (long long)feature, x->rank);
  int64_t count = x->dims[feature];
  int nvec = grad ? 3 : noperands - 1;
  for (int i = 1; i <= nvec; i++) {
    const sp_type *v = sp__vs_operand(op, i);
    if (!sp__vs_static(v)) continue;
    if (v->rank != 1)
      return sp__verify_op_fail(m, op, err, "operand #%d must be 1D tensor, but got %s", i, q(v).s);
    if (v->dims[0] != count)
      return sp__verify_op_fail(m, op, err, "expects the size of single-dimensional operands to be compatible "
                                "with feature count, but the size of single-dimensional operands is "
                                "%lld and the feature count is %lld.", (long long)v->dims[0],
                                (long long)count);
  }
  if ((rc = result_like(m, op, 0, x, err))) return rc;
  for (int i = 1; i < nresults; i++)
    if ((rc = sp__vs_result_shape(m, op, i, &count, 1, x->elem, err))) return rc;
  return SP_OK;
}

/* ------------------------------------------------------------------ rng_bit_generator */

static int verify_rng_bit_generator(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 2, err);
  if (rc) return rc;
  const sp_type *state = sp__vs_operand(op, 0), *out = op->results[0].type;
  if (sp__vs_static(state) && sp__vs_static(out) && !sp__vs_compatible(state, out))
    return sp__verify_op_fail(m, op, err, "output state shape must be compatible with initial state shape. "
                              "Got: %s and %s", q(state).s, q(out).s);
  return SP_OK;
}

/* ------------------------------------------------------------------ top-k */

/* chlo.top_k / mhlo.topk (`k` an attribute) and custom_call @mhlo.topk (`k` inside
 * mhlo.attributes): one operand of rank >= 1 whose last dim is at least k; values and indices
 * of the operand's shape with k in the last dim. */
static int verify_top_k(const sp_module *m, const sp_op *op, int64_t k, bool have_k,
                        sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 2, err);
  if (rc) return rc;
  if (k < 0) return sp__verify_op_fail(m, op, err, "k must be non-negative, but got %lld", (long long)k);
  const sp_type *t = sp__vs_operand(op, 0);
  if (!sp__vs_static(t)) return SP_OK;
  if (t->rank < 1) return sp__verify_op_fail(m, op, err, "operand's rank must be at least 1");
  /* without a k (a custom call whose attributes do not say), the values' last dim is k */
  const sp_type *values = op->results[0].type;
  if (!have_k && sp__vs_static(values) && values->rank >= 1) k = values->dims[values->rank - 1];
  if (t->dims[t->rank - 1] < k)
    return sp__verify_op_fail(m, op, err, "operand's last dimension must be at least %lld", (long long)k);
  int64_t dims[SP_MAX_RANK];
  memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
  dims[t->rank - 1] = k;
  if ((rc = sp__vs_result_shape(m, op, 0, dims, t->rank, t->elem, err))) return rc;
  return sp__vs_result_shape(m, op, 1, dims, t->rank, op->kind == SP_OP_CUSTOM_CALL ? NULL : "i32",
                             err);
}

/* `k = N` in a custom call's mhlo.attributes dictionary (verbatim text). */
static bool attributes_k(const sp_op *op, int64_t *k) {
  const char *s = sp_op_get_str(op, "mhlo.attributes");
  for (const char *p = s; p && (p = strstr(p, "k")); p++) {
    bool word = (p == s || p[-1] == '{' || p[-1] == ' ' || p[-1] == ',') && p[1] == ' ' &&
                p[2] == '=';
    long long v;
    if (word && sscanf(p + 3, " %lld", &v) == 1) {
      *k = v;
      return true;
    }
  }
  return false;
}

/* An integer attribute read as one (the custom form `k = 4`) or kept as text (the generic
 * form `{k = 4 : i64}`, which the reader keeps verbatim for ops it has no schema entry for). */
static bool int_attr(const sp_op *op, const char *name, int64_t *out) {
  if (sp_op_get_int(op, name, out)) return true;
  const char *s = sp_op_get_str(op, name);
  long long v;
  char tail;
  if (!s || sscanf(s, "%lld %c", &v, &tail) < 1) return false;
  *out = v;
  return true;
}

/* ------------------------------------------------------------------ custom calls */

/* The targets the rule registry gives a dedicated rule (rules_custom_call.c): the counts and
 * ranks each rule reads. Any other target is opaque to StableHLO and to the engine. */
static int verify_custom_call(const sp_module *m, const sp_op *op, sp_err *err) {
  const char *target = sp_op_get_str(op, "call_target_name");
  if (!target) return SP_OK;
  if (strcmp(target, "mhlo.topk") == 0) {
    int64_t k = 0; /* without a readable k, the counts and the rank only */
    bool have_k = attributes_k(op, &k);
    return verify_top_k(m, op, k, have_k, err);
  }
  bool eigh = strcmp(target, "Eigh") == 0;
  bool qr = strcmp(target, "Qr") == 0 || strcmp(target, "QrDecompositionBlock") == 0;
  bool house = strcmp(target, "ProductOfElementaryHouseholderReflectors") == 0;
  if (eigh || qr || house) {
    int rc = sp__vs_counts(m, op, house ? 2 : 1, house ? 1 : 2, err);
    if (rc) return rc;
    const sp_type *a = sp__vs_operand(op, 0);
    if (!sp__vs_static(a)) return SP_OK;
    if (a->rank < 2)
      return sp__verify_op_fail(m, op, err, "custom call @%s expects a batch of matrices, but got %s",
                                target, q(a).s);
    /* the second tensor (eigenvalues, taus) has one dim less */
    const sp_type *second = house ? sp__vs_operand(op, 1) : op->results[1].type;
    const sp_type *first = op->results[0].type;
    if (sp__vs_static(first) && first->rank != a->rank)
      return sp__verify_op_fail(m, op, err, "custom call @%s: result 0 has rank %d, expected %d", target,
                                first->rank, a->rank);
    if (sp__vs_static(second) && second->rank != a->rank - 1)
      return sp__verify_op_fail(m, op, err, "custom call @%s: %s 1 has rank %d, expected %d", target,
                                house ? "operand" : "result", second->rank, a->rank - 1);
    return SP_OK;
  }
  if (strcmp(target, "ApproxTopK") == 0 || strcmp(target, "PartialReduce") == 0) {
    int n = op->nresults;
    if (n < 1 || op->noperands != 2 * n)
      return sp__verify_op_fail(m, op, err, "custom call @%s: %d operands for %d results (want an input "
                                "and an init value per result)", target, op->noperands, n);
    const sp_type *a = sp__vs_operand(op, 0);
    if (sp__vs_static(a)) {
      int64_t rd = a->rank - 1;   /* the default: the minor dim */
      sp_op_backend_config_int(op, "reduction_dim", &rd);
      if (rd < 0 || rd >= a->rank)
        return sp__verify_op_fail(m, op, err, "custom call @%s: reduction_dim %lld is out of range for "
                                  "rank %d", target, (long long)rd, a->rank);
    }
    for (int i = 0; i < n; i++) {
      const sp_type *in = sp__vs_operand(op, i), *out = op->results[i].type;
      if (sp__vs_static(a) && ((sp__vs_static(in) && in->rank != a->rank) ||
                               (sp__vs_static(out) && out->rank != a->rank)))
        return sp__verify_op_fail(m, op, err, "custom call @%s: inputs and results differ in rank",
                                  target);
    }
    return SP_OK;
  }
  return SP_OK;
}

int sp__verify_stablehlo_ops(const sp_module *m, const sp_op *op, sp_err *err) {
  int64_t k;
  switch (op->kind) {
    case SP_OP_BITCAST_CONVERT: return verify_bitcast_convert(m, op, err);
    case SP_OP_DOT: return verify_dot(m, op, err);
    case SP_OP_FFT: return verify_fft(m, op, err);
    case SP_OP_REVERSE: return verify_reverse(m, op, err);
    case SP_OP_CHOLESKY: return verify_cholesky(m, op, err);
    case SP_OP_TRIANGULAR_SOLVE: return verify_triangular_solve(m, op, err);
    case SP_OP_BATCH_NORM_INFERENCE: return verify_batch_norm(m, op, 5, 1, err);
    case SP_OP_BATCH_NORM_TRAINING: return verify_batch_norm(m, op, 3, 3, err);
    case SP_OP_BATCH_NORM_GRAD: return verify_batch_norm(m, op, 5, 3, err);
    case SP_OP_RNG_BIT_GENERATOR: return verify_rng_bit_generator(m, op, err);
    case SP_OP_CUSTOM_CALL: return verify_custom_call(m, op, err);
    case SP_OP_CHLO_TOP_K: case SP_OP_MHLO_TOPK:
      if (!int_attr(op, "k", &k)) return sp__verify_op_fail(m, op, err, "requires attribute 'k'");
      return verify_top_k(m, op, k, true, err);
    default:
      return SP_OK;
  }
}
