/*
 * rules_window.c - rules of the windowed ops: reduce_window and select_and_scatter.
 *
 * A dim is pass-through only when its window leaves the data in place: window size 1,
 * stride 1, no padding, no dilation. Otherwise its factor is a permutation (blocked in
 * conservative mode). select_and_scatter also gives such a dim a need_replication factor on
 * the source, created before the permutation factor.
 */
#include "rules/op_rules.h"

typedef struct window {
  sp_ints dims, strides, base_dilations, window_dilations, padding;
} window;

static int read_window(const sp_op *op, int rank, window *w, sp_err *err) {
  int rc = sp_rules_need_ints(op, "window_dimensions", &w->dims, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "window_strides", &w->strides, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "base_dilations", &w->base_dilations, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "window_dilations", &w->window_dilations, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, "padding", &w->padding, err);
  if (rc != SP_OK) return rc;
  const struct { const sp_ints *v; int n; const char *name; } check[5] = {
      {&w->dims, rank, "window_dimensions"},
      {&w->strides, rank, "window_strides"},
      {&w->base_dilations, rank, "base_dilations"},
      {&w->window_dilations, rank, "window_dilations"},
      {&w->padding, 2 * rank, "padding"}};
  for (int i = 0; i < 5; i++)
    if (check[i].v->n != 0 && check[i].v->n != check[i].n)
      return sp_rules_op_err(err, op, SP_EINVAL, "%s has %d entries, expected %d", check[i].name,
                             check[i].v->n, check[i].n);
  if (w->dims.n != rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "window_dimensions has %d entries, expected %d",
                           w->dims.n, rank);
  return SP_OK;
}

/* Absent lists mean "all 1" (sizes, strides, dilations) or "all 0" (padding). */
static bool keeps_dim(const window *w, int d) {
  if (w->dims.v[d] != 1) return false;
  if (w->strides.n && w->strides.v[d] != 1) return false;
  if (w->base_dilations.n && w->base_dilations.v[d] != 1) return false;
  if (w->window_dilations.n && w->window_dilations.v[d] != 1) return false;
  if (w->padding.n && (w->padding.v[2 * d] != 0 || w->padding.v[2 * d + 1] != 0)) return false;
  return true;
}

/* Operands: N inputs then N init values; N results. One factor per dim, the result's size,
 * shared by the inputs and the results. */
int sp_rules_build_reduce_window(sp_rule_builder *b, const sp_op *op,
                                 const sp_rules_options *opts, sp_err *err) {
  int n = op->nresults;
  if (op->noperands != 2 * n)
    return sp_rules_op_err(err, op, SP_EINVAL, "%d operands for %d results", op->noperands, n);
  int rank = sp_rules_result_rank(op, 0);
  const int64_t *out = sp_rules_result_shape(op, 0);
  for (int i = 0; i < n; i++)
    if (sp_rules_operand_rank(op, i) != rank || sp_rules_result_rank(op, i) != rank)
      return sp_rules_op_err(err, op, SP_EINVAL, "inputs and results differ in rank");
  window w;
  int rc = read_window(op, rank, &w, err);
  if (rc != SP_OK) return rc;
  for (int d = 0; d < rank; d++) {
    bool keep = keeps_dim(&w, d);
    int f = sp_rule_builder_factor(b, out[d], keep ? SP_FACTOR_PASS_THROUGH : SP_FACTOR_PERMUTATION,
                                   !keep && opts->conservative);
    for (int i = 0; i < n; i++) {
      sp_rule_builder_map(b, i, d, f);
      sp_rule_builder_map(b, sp_rules_res(b, i), d, f);
    }
  }
  return SP_OK;
}

/* Operands: operand, source, init value; the result is shaped like the operand. */
int sp_rules_build_select_and_scatter(sp_rule_builder *b, const sp_op *op,
                                      const sp_rules_options *opts, sp_err *err) {
  int rc = sp_rules_check_arity(op, 3, 3, 1, 1, err);
  if (rc != SP_OK) return rc;
  int rank = sp_rules_operand_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *src = sp_rules_operand_shape(op, 1);
  if (sp_rules_operand_rank(op, 1) != rank || sp_rules_result_rank(op, 0) != rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "operand, source and result differ in rank");
  window w;
  rc = read_window(op, rank, &w, err);
  if (rc != SP_OK) return rc;
  const int OPND = 0, SRC = 1, RES = sp_rules_res(b, 0);
  for (int d = 0; d < rank; d++) {
    int f;
    if (keeps_dim(&w, d)) {
      f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
      sp_rule_builder_map(b, SRC, d, f);
    } else {
      sp_rule_builder_map(b, SRC, d,
                          sp_rule_builder_factor(b, src[d], SP_FACTOR_NEED_REPLICATION, false));
      f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PERMUTATION, opts->conservative);
    }
    sp_rule_builder_map(b, OPND, d, f);
    sp_rule_builder_map(b, RES, d, f);
  }
  return SP_OK;
}
