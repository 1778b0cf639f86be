/*
 * verify_stablehlo_window.c - StableHLO's verifier checks of the padding and window ops (see
 * verify_stablehlo_int.h), worded as StableHLO words them where its words are known:
 *
 *   pad                  operand and a scalar padding value; low, high and interior padding
 *                        one entry per dim, interior >= 0; the result shape inferred
 *   reduce_window        N inputs + N init values, N results; window dimensions, strides and
 *                        dilations one per dim and positive, padding a pair per dim; each
 *                        result the window output of its input
 *   select_and_scatter   operand, source, init value; the source the window output of the
 *                        operand; the result of the operand's shape
 *   convolution          lhs and rhs of one rank >= 2; batch, feature and spatial dims of each
 *                        a permutation of its dims; strides, dilations and padding one per
 *                        spatial dim; feature and batch group counts dividing their dims; the
 *                        result shape inferred
 * Every size is computed with overflow checks (sp__vs_window_out): a window whose arithmetic
 * does not fit in 64 bits is an error naming the dimension.
 *
 * Memory: nothing is allocated.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/verify_stablehlo_int.h"

int sp__verify_pad(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  sp_ints lo, hi, in;
  if (!sp__vs_ints(op, "edge_padding_low", &lo) || !sp__vs_ints(op, "edge_padding_high", &hi) ||
      !sp__vs_ints(op, "interior_padding", &in))
    return sp__verify_op_fail(m, op, err, "requires attributes 'edge_padding_low', "
                              "'edge_padding_high' and 'interior_padding'");
  const sp_type *t = sp__vs_operand(op, 0), *pv = sp__vs_operand(op, 1);
  if (pv && pv->kind == SP_TYPE_TENSOR && pv->rank > 0)
    return sp__verify_op_fail(m, op, err, "padding value type should be a rank-0 tensor, is rank "
                              "%d", pv->rank);
  if (!sp__vs_static(t)) return SP_OK;
  if (lo.n != t->rank)
    return sp__verify_op_fail(m, op, err, "edge_padding_low length (%d) must match operand rank "
                              "(%d)", lo.n, t->rank);
  if (hi.n != t->rank)
    return sp__verify_op_fail(m, op, err, "edge_padding_high length (%d) must match operand rank "
                              "(%d)", hi.n, t->rank);
  if (in.n != t->rank)
    return sp__verify_op_fail(m, op, err, "interior_padding length (%d) must match operand rank "
                              "(%d)", in.n, t->rank);
  int64_t want[SP_MAX_RANK];
  for (int d = 0; d < t->rank; d++) {
    if (in.v[d] < 0)
      return sp__verify_op_fail(m, op, err, "Interior padding cannot be negative: %lld",
                                (long long)in.v[d]);
    /* dim + lo + hi + (dim - 1) * interior, in 128 bits */
    __int128 size = (__int128)t->dims[d] + lo.v[d] + hi.v[d] +
                    (__int128)(t->dims[d] > 0 ? t->dims[d] - 1 : 0) * in.v[d];
    if (size < 0)
      return sp__verify_op_fail(m, op, err, "Padding result in negative size for dimension %d", d);
    if (size > INT64_MAX)
      return sp__verify_op_fail(m, op, err, "the padded size of dimension %d does not fit in 64 "
                                "bits", d);
    want[d] = (int64_t)size;
  }
  return sp__vs_result_shape(m, op, 0, want, t->rank, t->elem, err);
}

/* A window attribute of one entry per dim (absent: all `dflt`), each >= `min`. */
static int window_list(const sp_module *m, const sp_op *op, const char *name, int rank,
                       int64_t dflt, int64_t min, int64_t *out, sp_err *err) {
  sp_ints l;
  if (!sp__vs_ints(op, name, &l)) {
    for (int d = 0; d < rank; d++) out[d] = dflt;
    return SP_OK;
  }
  if (l.n != rank)
    return sp__verify_op_fail(m, op, err, "expects %s to have one entry per dimension (%d), but "
                              "got: %d.", name, rank, l.n);
  for (int d = 0; d < rank; d++) {
    if (l.v[d] < min)
      return sp__verify_op_fail(m, op, err, "expects %s to have positive value for %d-th window "
                                "dimension, but got %lld.", name, d, (long long)l.v[d]);
    out[d] = l.v[d];
  }
  return SP_OK;
}

/* The padding attribute: a (low, high) pair per dim (absent: zeros). */
static int window_padding(const sp_module *m, const sp_op *op, int rank, int64_t *lo, int64_t *hi,
                          sp_err *err) {
  sp_ints p;
  if (!sp__vs_ints(op, "padding", &p)) {
    for (int d = 0; d < rank; d++) lo[d] = hi[d] = 0;
    return SP_OK;
  }
  if (p.n != 2 * rank)
    return sp__verify_op_fail(m, op, err, "expects padding-entries to have same dimension-size as "
                              "size of window dimensions (%d), but got: %d.", rank, p.n / 2);
  for (int d = 0; d < rank; d++) {
    lo[d] = p.v[2 * d];
    hi[d] = p.v[2 * d + 1];
  }
  return SP_OK;
}

typedef struct window {
  int rank;
  int64_t dims[SP_MAX_RANK], strides[SP_MAX_RANK], base[SP_MAX_RANK], dil[SP_MAX_RANK];
  int64_t lo[SP_MAX_RANK], hi[SP_MAX_RANK];
} window;

/* The window attributes of reduce_window / select_and_scatter over an input of rank `rank`. */
static int read_window(const sp_module *m, const sp_op *op, const sp_type *input, window *w,
                       sp_err *err) {
  sp_ints dims;
  if (!sp__vs_ints(op, "window_dimensions", &dims))
    return sp__verify_op_fail(m, op, err, "requires attribute 'window_dimensions'");
  w->rank = input->rank;
  if (dims.n != input->rank) {
    char text[128];
    sp__vs_text(input, text, sizeof text);
    return sp__verify_op_fail(m, op, err, "expects window-dimensions size == input rank, but got "
                              "window-dimensions size: %d and input: %s with rank = %d.", dims.n,
                              text, input->rank);
  }
  int rc;
  if ((rc = window_list(m, op, "window_dimensions", w->rank, 1, 1, w->dims, err)) ||
      (rc = window_list(m, op, "window_strides", w->rank, 1, 1, w->strides, err)) ||
      (rc = window_list(m, op, "base_dilations", w->rank, 1, 1, w->base, err)) ||
      (rc = window_list(m, op, "window_dilations", w->rank, 1, 1, w->dil, err)) ||
      (rc = window_padding(m, op, w->rank, w->lo, w->hi, err)))
    return rc;
  return SP_OK;
}

/* The window output shape of `input` under `w`. */
static int window_shape(const sp_module *m, const sp_op *op, const sp_type *input,
                        const window *w, int64_t *out, sp_err *err) {
  for (int d = 0; d < w->rank; d++)
    if (!sp__vs_window_out(input->dims[d], w->base[d], w->lo[d], w->hi[d], w->dims[d], w->dil[d],
                           w->strides[d], &out[d]))
      return sp__verify_op_fail(m, op, err, "the padded or dilated size of dimension %d is negative "
                                "or does not fit in 64 bits", d);
  return SP_OK;
}

int sp__verify_reduce_window(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands == 0 || op->noperands % 2 != 0)
    return sp__verify_op_fail(m, op, err, "expects as many inputs as init values, but has %d "
                              "operands", op->noperands);
  int n = op->noperands / 2;
  if (op->nresults != n)
    return sp__verify_op_fail(m, op, err, "expected %d result%s, but found %d", n,
                              n == 1 ? "" : "s", op->nresults);
  for (int i = 0; i < n; i++) {
    const sp_type *t = sp__vs_operand(op, i), *init = sp__vs_operand(op, n + i);
    if (init && init->kind == SP_TYPE_TENSOR && init->rank > 0)
      return sp__verify_op_fail(m, op, err, "expects init value %d to be a 0-dimensional tensor, "
                                "not of rank %d", i, init->rank);
    if (!sp__vs_static(t)) continue;
    window w;
    int64_t want[SP_MAX_RANK];
    int rc = read_window(m, op, t, &w, err);
    if (!rc) rc = window_shape(m, op, t, &w, want, err);
    if (!rc) rc = sp__vs_result_shape(m, op, i, want, w.rank, NULL, err);
    if (rc) return rc;
  }
  return SP_OK;
}

int sp__verify_select_and_scatter(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 3, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0), *src = sp__vs_operand(op, 1);
  if (!sp__vs_static(t)) return SP_OK;
  if ((rc = sp__vs_result_shape(m, op, 0, t->dims, t->rank, t->elem, err))) return rc;
  if (!sp__vs_static(src)) return SP_OK;
  window w;
  int64_t want[SP_MAX_RANK];
  if ((rc = read_window(m, op, t, &w, err)) || (rc = window_shape(m, op, t, &w, want, err)))
    return rc;
  bool same = src->rank == w.rank;
  for (int d = 0; same && d < w.rank; d++) same = src->dims[d] == want[d];
  if (same) return SP_OK;
  char got[128];
  sp__vs_text(src, got, sizeof got);
  char exp[256];
  size_t k = (size_t)snprintf(exp, sizeof exp, "tensor<");
  for (int d = 0; d < w.rank && k < sizeof exp; d++)
    k += (size_t)snprintf(exp + k, sizeof exp - k, "%lldx", (long long)want[d]);
  if (k < sizeof exp) snprintf(exp + k, sizeof exp - k, "%s>", src->elem ? src->elem : "?");
  return sp__verify_op_fail(m, op, err, "expects source-type to be %s, but got: %s", exp, got);
}

/* ---------------------------------------------------------------- convolution */

typedef struct conv_dims {
  int64_t batch, feature;          /* input / output: batch and feature; kernel: in and out */
  sp_ints spatial;
} conv_dims;

/* One operand's dimension numbers: its two named dims and its spatial dims, together a
 * permutation of [0, rank). */
static int read_conv_dims(const sp_module *m, const sp_op *op, const char *which, const char *a,
                          const char *b, const char *spatial, int rank, conv_dims *c,
                          sp_err *err) {
  if (!sp_op_get_int(op, a, &c->batch) || !sp_op_get_int(op, b, &c->feature))
    return sp__verify_op_fail(m, op, err, "requires attributes '%s' and '%s'", a, b);
  sp__vs_ints(op, spatial, &c->spatial);
  if (c->spatial.n != rank - 2)
    return sp__verify_op_fail(m, op, err, "expects %s spatial dimensions (%d) to be the rank (%d) "
                              "minus 2", which, c->spatial.n, rank);
  bool seen[SP_MAX_RANK] = {false};
  int64_t two[2] = {c->batch, c->feature};
  sp_ints named = {2, two};
  int rc = sp__vs_dims_in_range(m, op, which, &named, rank, seen, err);
  if (!rc) rc = sp__vs_dims_in_range(m, op, which, &c->spatial, rank, seen, err);
  if (rc)
    return sp__verify_op_fail(m, op, err, "expects %s dimension-numbers to be unique and within "
                              "its rank (%d)", which, rank);
  return SP_OK;
}

int sp__verify_convolution(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 2, 1, err);
  if (rc) return rc;
  const sp_type *l = sp__vs_operand(op, 0), *k = sp__vs_operand(op, 1);
  if (!sp__vs_static(l) || !sp__vs_static(k)) return SP_OK;
  if (l->rank != k->rank)
    return sp__verify_op_fail(m, op, err, "expects convolution arguments to have same number of "
                              "dimensions. Got: %d and %d.", l->rank, k->rank);
  if (l->rank < 2)
    return sp__verify_op_fail(m, op, err, "expects convolution arguments to have >= 2 dimensions. "
                              "Got: %d and %d.", l->rank, k->rank);
  int rank = l->rank, ns = rank - 2;
  conv_dims in, ker, out;
  if ((rc = read_conv_dims(m, op, "input", "input_batch_dimension", "input_feature_dimension",
                           "input_spatial_dimensions", rank, &in, err)) ||
      (rc = read_conv_dims(m, op, "kernel", "kernel_input_feature_dimension",
                           "kernel_output_feature_dimension", "kernel_spatial_dimensions", rank,
                           &ker, err)) ||
      (rc = read_conv_dims(m, op, "output", "output_batch_dimension", "output_feature_dimension",
                           "output_spatial_dimensions", rank, &out, err)))
    return rc;
  int64_t strides[SP_MAX_RANK], ldil[SP_MAX_RANK], rdil[SP_MAX_RANK], lo[SP_MAX_RANK],
      hi[SP_MAX_RANK];
  if ((rc = window_list(m, op, "window_strides", ns, 1, 1, strides, err)) ||
      (rc = window_list(m, op, "lhs_dilation", ns, 1, 1, ldil, err)) ||
      (rc = window_list(m, op, "rhs_dilation", ns, 1, 1, rdil, err)) ||
      (rc = window_padding(m, op, ns, lo, hi, err)))
    return rc;
  int64_t fgc = 1, bgc = 1;
  sp_op_get_int(op, "feature_group_count", &fgc);
  sp_op_get_int(op, "batch_group_count", &bgc);
  if (fgc < 1)
    return sp__verify_op_fail(m, op, err, "expects feature_group_count to be a positive number, "
                              "got %lld.", (long long)fgc);
  if (bgc < 1)
    return sp__verify_op_fail(m, op, err, "expects batch_group_count to be a positive number, got "
                              "%lld.", (long long)bgc);
  if (fgc > 1 && bgc > 1)
    return sp__verify_op_fail(m, op, err, "expects batch_group_count and feature_group_count not "
                              "to be both greater than 1. Got %lld and %lld resp.", (long long)bgc,
                              (long long)fgc);
  int64_t in_feat = l->dims[in.feature], in_batch = l->dims[in.batch];
  int64_t k_in = k->dims[ker.batch], k_out = k->dims[ker.feature];
  if (in_feat % fgc != 0)
    return sp__verify_op_fail(m, op, err, "expects input feature dimension (%lld) to be a multiple "
                              "of feature_group_count. Got feature_group_count = %lld.",
                              (long long)in_feat, (long long)fgc);
  if (in_feat / fgc != k_in)
    return sp__verify_op_fail(m, op, err, "expects input feature dimension (%lld) / "
                              "feature_group_count = kernel input feature dimension (%lld). Got "
                              "feature_group_count = %lld.", (long long)in_feat, (long long)k_in,
                              (long long)fgc);
  if (k_out % fgc != 0)
    return sp__verify_op_fail(m, op, err, "expects kernel output feature dimension (%lld) to be "
                              "divisible by feature_group_count. For feature_group_count = %lld.",
                              (long long)k_out, (long long)fgc);
  if (in_batch % bgc != 0)
    return sp__verify_op_fail(m, op, err, "expects input batch dimension (%lld) to be divisible by "
                              "batch_group_count. Got batch_group_count = %lld.",
                              (long long)in_batch, (long long)bgc);
  if (k_out % bgc != 0)
    return sp__verify_op_fail(m, op, err, "expects output feature dimension size (%lld) to be a "
                              "multiple of batch_group_count. Got batch_group_count = %lld.",
                              (long long)k_out, (long long)bgc);
  int64_t want[SP_MAX_RANK];
  want[out.batch] = in_batch / bgc;
  want[out.feature] = k_out;
  for (int s = 0; s < ns; s++)
    if (!sp__vs_window_out(l->dims[in.spatial.v[s]], ldil[s], lo[s], hi[s],
                           k->dims[ker.spatial.v[s]], rdil[s], strides[s],
                           &want[out.spatial.v[s]]))
      return sp__verify_op_fail(m, op, err, "the padded or dilated size of spatial dimension %d is "
                                "negative or does not fit in 64 bits", s);
  return sp__vs_result_shape(m, op, 0, want, rank, NULL, err);
}
