/*
 * rules_contraction.c - rules of the contracting ops: dot, dot_general, convolution.
 *
 * dot_general factor order: batching pairs (lhs, rhs and result dim), lhs free dims, rhs free
 * dims, then the contracting pairs as reduction factors; result dims follow the same order.
 *
 * convolution factor order (Shardy's):
 *   1. batch_group_count > 1: the group factor on lhs batch, kernel output feature, output
 *      feature;
 *   2. the per-group batch on lhs batch and output batch;
 *   3. per spatial dim, unless conservative: "num windows" (output spatial size, shared with
 *      the output spatial dim, permutation) and "window size" (kernel spatial size, shared
 *      with the kernel spatial dim, reduction), the larger first (ties: num windows), each
 *      clipped to what is left of the lhs spatial size and dropped if <= 1;
 *   4. feature_group_count > 1: the group factor on lhs feature, kernel output feature,
 *      output feature;
 *   5. lhs feature with kernel input feature (reduction, the kernel's size);
 *   6. kernel output feature with output feature, the output feature size divided by the
 *      group counts, if > 1.
 */
#include <assert.h>

#include "ir/sp_limits.h"
#include "rules/op_rules.h"

/* ------------------------------------------------------------------ dot */

int sp_rules_build_dot(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                       sp_err *err) {
  /* The verifier checked the counts, the ranks (1 or 2), the contracting sizes and the
   * result shape. */
  assert(op->noperands == 2 && op->nresults == 1);
  int lr = sp_rules_operand_rank(op, 0), rr = sp_rules_operand_rank(op, 1);
  const int64_t *lhs = sp_rules_operand_shape(op, 0), *rhs = sp_rules_operand_shape(op, 1);
  assert(lr >= 1 && lr <= 2 && rr >= 1 && rr <= 2 && lhs[lr - 1] == rhs[0] &&
         sp_rules_result_rank(op, 0) == (lr - 1) + (rr - 1));
  int res = sp_rules_res(b, 0), r = 0;
  if (lr == 2) {
    int f = sp_rule_builder_factor(b, lhs[0], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, 0, f);
    sp_rule_builder_map(b, res, r++, f);
  }
  if (rr == 2) {
    int f = sp_rule_builder_factor(b, rhs[1], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 1, 1, f);
    sp_rule_builder_map(b, res, r++, f);
  }
  int f = sp_rule_builder_factor(b, rhs[0], SP_FACTOR_REDUCTION, false);
  sp_rule_builder_map(b, 0, lr - 1, f);
  sp_rule_builder_map(b, 1, 0, f);
  return SP_OK;
}

/* ------------------------------------------------------------------ dot_general */

static int check_pairs(const sp_op *op, const char *what, const sp_ints *l, const sp_ints *r,
                       const int64_t *lhs, const int64_t *rhs, sp_err *err) {
  if (l->n != r->n)
    return sp_rules_op_err(err, op, SP_EINVAL, "%s dims: %d on lhs but %d on rhs", what, l->n,
                           r->n);
  for (int i = 0; i < l->n; i++)
    if (lhs[l->v[i]] != rhs[r->v[i]])
      return sp_rules_op_err(err, op, SP_EINVAL, "%s dims %lld x %lld differ in size", what,
                             (long long)l->v[i], (long long)r->v[i]);
  return SP_OK;
}

int sp_rules_build_dot_general(sp_rule_builder *b, const sp_op *op,
                               const sp_rules_options *opts, sp_err *err) {
  int rc = sp_rules_check_arity(op, 2, 2, 1, 1, err);
  if (rc != SP_OK) return rc;
  int lr = sp_rules_operand_rank(op, 0), rr = sp_rules_operand_rank(op, 1);
  const int64_t *lhs = sp_rules_operand_shape(op, 0), *rhs = sp_rules_operand_shape(op, 1);
  sp_ints lb, rb, lc, rc2;
  rc = sp_rules_opt_ints(op, "lhs_batching_dimensions", &lb, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "rhs_batching_dimensions", &rb, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "lhs_contracting_dimensions", &lc, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "rhs_contracting_dimensions", &rc2, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "lhs batching dim", &lb, lr, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "rhs batching dim", &rb, rr, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "lhs contracting dim", &lc, lr, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, "rhs contracting dim", &rc2, rr, err);
  if (rc == SP_OK) rc = check_pairs(op, "batching", &lb, &rb, lhs, rhs, err);
  if (rc == SP_OK) rc = check_pairs(op, "contracting", &lc, &rc2, lhs, rhs, err);
  if (rc != SP_OK) return rc;
  for (int i = 0; i < lb.n; i++)
    if (sp_rules_ints_has(&lc, lb.v[i]) || sp_rules_ints_has(&rc2, rb.v[i]))
      return sp_rules_op_err(err, op, SP_EINVAL, "a dim is both batching and contracting");
  int nfree_l = lr - lb.n - lc.n, nfree_r = rr - rb.n - rc2.n;
  int out_rank = sp_rules_result_rank(op, 0);
  if (out_rank != lb.n + nfree_l + nfree_r)
    return sp_rules_op_err(err, op, SP_EINVAL, "result rank %d, expected %d", out_rank,
                           lb.n + nfree_l + nfree_r);
  int res = sp_rules_res(b, 0), r = 0;
  for (int i = 0; i < lb.n; i++) {
    int f = sp_rule_builder_factor(b, lhs[lb.v[i]], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, (int)lb.v[i], f);
    sp_rule_builder_map(b, 1, (int)rb.v[i], f);
    sp_rule_builder_map(b, res, r++, f);
  }
  for (int d = 0; d < lr; d++) {
    if (sp_rules_ints_has(&lb, d) || sp_rules_ints_has(&lc, d)) continue;
    int f = sp_rule_builder_factor(b, lhs[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 0, d, f);
    sp_rule_builder_map(b, res, r++, f);
  }
  for (int d = 0; d < rr; d++) {
    if (sp_rules_ints_has(&rb, d) || sp_rules_ints_has(&rc2, d)) continue;
    int f = sp_rule_builder_factor(b, rhs[d], SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, 1, d, f);
    sp_rule_builder_map(b, res, r++, f);
  }
  for (int i = 0; i < lc.n; i++) {
    int f = sp_rule_builder_factor(b, lhs[lc.v[i]], SP_FACTOR_REDUCTION, false);
    sp_rule_builder_map(b, 0, (int)lc.v[i], f);
    sp_rule_builder_map(b, 1, (int)rc2.v[i], f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ convolution */

typedef struct conv_dims {
  int64_t in_batch, in_feature, k_in_feature, k_out_feature, out_batch, out_feature;
  sp_ints in_spatial, k_spatial, out_spatial;
  int64_t feature_groups, batch_groups;
} conv_dims;

static int read_conv_dims(const sp_op *op, conv_dims *c, sp_err *err) {
  int lr = sp_rules_operand_rank(op, 0), kr = sp_rules_operand_rank(op, 1);
  int orank = sp_rules_result_rank(op, 0);
  int rc = sp_rules_need_int(op, "input_batch_dimension", &c->in_batch, err);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "input_feature_dimension", &c->in_feature, err);
  if (rc == SP_OK)
    rc = sp_rules_need_int(op, "kernel_input_feature_dimension", &c->k_in_feature, err);
  if (rc == SP_OK)
    rc = sp_rules_need_int(op, "kernel_output_feature_dimension", &c->k_out_feature, err);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "output_batch_dimension", &c->out_batch, err);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "output_feature_dimension", &c->out_feature, err);
  if (rc == SP_OK) rc = sp_rules_need_ints(op, "input_spatial_dimensions", &c->in_spatial, err);
  if (rc == SP_OK) rc = sp_rules_need_ints(op, "kernel_spatial_dimensions", &c->k_spatial, err);
  if (rc == SP_OK)
    rc = sp_rules_need_ints(op, "output_spatial_dimensions", &c->out_spatial, err);
  if (rc != SP_OK) return rc;
  if (!sp_op_get_int(op, "feature_group_count", &c->feature_groups)) c->feature_groups = 1;
  if (!sp_op_get_int(op, "batch_group_count", &c->batch_groups)) c->batch_groups = 1;
  if (c->feature_groups < 1 || c->batch_groups < 1)
    return sp_rules_op_err(err, op, SP_EINVAL, "group counts must be positive");
  int ns = c->in_spatial.n;
  if (c->k_spatial.n != ns || c->out_spatial.n != ns || lr != ns + 2 || kr != ns + 2 ||
      orank != ns + 2)
    return sp_rules_op_err(err, op, SP_EINVAL,
                           "dimension numbers do not match the ranks of lhs, kernel and result");
  /* Each tensor's dims must be a permutation of its batch/feature/spatial numbers. */
  sp_ints all;
  int64_t buf[SP_MAX_RANK];
  const struct { int64_t a, b; const sp_ints *s; int rank; const char *what; } t[3] = {
      {c->in_batch, c->in_feature, &c->in_spatial, lr, "lhs dimension number"},
      {c->k_in_feature, c->k_out_feature, &c->k_spatial, kr, "kernel dimension number"},
      {c->out_batch, c->out_feature, &c->out_spatial, orank, "output dimension number"}};
  for (int i = 0; i < 3; i++) {
    all.n = 0;
    all.v = buf;
    buf[all.n++] = t[i].a;
    buf[all.n++] = t[i].b;
    for (int k = 0; k < t[i].s->n; k++) buf[all.n++] = t[i].s->v[k];
    rc = sp_rules_check_dims(op, t[i].what, &all, t[i].rank, err);
    if (rc != SP_OK) return rc;
  }
  return SP_OK;
}

int sp_rules_build_convolution(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                               sp_err *err) {
  int rc = sp_rules_check_arity(op, 2, 2, 1, 1, err);
  if (rc != SP_OK) return rc;
  conv_dims c;
  rc = read_conv_dims(op, &c, err);
  if (rc != SP_OK) return rc;
  const int64_t *lhs = sp_rules_operand_shape(op, 0), *ker = sp_rules_operand_shape(op, 1);
  const int64_t *out = sp_rules_result_shape(op, 0);
  const int L = 0, K = 1, O = sp_rules_res(b, 0);
  int f;
  if (c.batch_groups > 1) {                                   /* 1 */
    f = sp_rule_builder_factor(b, c.batch_groups, SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, L, (int)c.in_batch, f);
    sp_rule_builder_map(b, K, (int)c.k_out_feature, f);
    sp_rule_builder_map(b, O, (int)c.out_feature, f);
  }
  f = sp_rule_builder_factor(b, out[c.out_batch], SP_FACTOR_PASS_THROUGH, false); /* 2 */
  sp_rule_builder_map(b, L, (int)c.in_batch, f);
  sp_rule_builder_map(b, O, (int)c.out_batch, f);
  for (int s = 0; !opts->conservative && s < c.in_spatial.n; s++) { /* 3 */
    int ls = (int)c.in_spatial.v[s], ks = (int)c.k_spatial.v[s], os = (int)c.out_spatial.v[s];
    int64_t windows = out[os], window = ker[ks], left = lhs[ls];
    bool window_first = window > windows;
    for (int k = 0; k < 2; k++) {
      bool is_window = window_first == (k == 0);
      int64_t size = is_window ? window : windows;
      if (size > left) size = left;
      if (size <= 1) continue;
      left /= size;
      f = sp_rule_builder_factor(b, size, is_window ? SP_FACTOR_REDUCTION : SP_FACTOR_PERMUTATION,
                                 false);
      sp_rule_builder_map(b, L, ls, f);
      sp_rule_builder_map(b, is_window ? K : O, is_window ? ks : os, f);
    }
  }
  if (c.feature_groups > 1) {                                 /* 4 */
    f = sp_rule_builder_factor(b, c.feature_groups, SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, L, (int)c.in_feature, f);
    sp_rule_builder_map(b, K, (int)c.k_out_feature, f);
    sp_rule_builder_map(b, O, (int)c.out_feature, f);
  }
  f = sp_rule_builder_factor(b, ker[c.k_in_feature], SP_FACTOR_REDUCTION, false); /* 5 */
  sp_rule_builder_map(b, L, (int)c.in_feature, f);
  sp_rule_builder_map(b, K, (int)c.k_in_feature, f);
  int64_t groups;                                             /* 6 */
  if (__builtin_mul_overflow(c.feature_groups, c.batch_groups, &groups))
    return sp_rules_op_err(err, op, SP_EINVAL, "group counts overflow");
  int64_t per_group = out[c.out_feature] / groups;
  if (per_group > 1) {
    f = sp_rule_builder_factor(b, per_group, SP_FACTOR_PASS_THROUGH, false);
    sp_rule_builder_map(b, K, (int)c.k_out_feature, f);
    sp_rule_builder_map(b, O, (int)c.out_feature, f);
  }
  return SP_OK;
}
