/*
 * rules_collective.c - rules of the StableHLO collectives that change a dimension:
 * all_gather, all_to_all, reduce_scatter. (all_reduce, collective_permute and
 * collective_broadcast are pointwise, see registry.c.)
 *
 * All operands share one mapping and all results another. Dims the collective leaves alone
 * come first, as pass-through factors on every tensor; then each dim it changes gets an
 * operand-only and a result-only need_replication factor.
 *
 * Operands and results pair up with equal ranks and the dimension attributes are in range:
 * the verifier checked them (ir/verify_stablehlo_collective.c); the builders assert them.
 */
#include <assert.h>

#include "rules/op_rules.h"

/* Operands [0, n) and results [0, n) pair up with `rank`, and `dim` is one of its dims. */
static bool pairs_hold(const sp_op *op, int64_t dim) {
  int rank = sp_rules_operand_rank(op, 0);
  if (op->noperands != op->nresults || dim < 0 || dim >= rank) return false;
  for (int i = 0; i < op->noperands; i++)
    if (sp_rules_operand_rank(op, i) != rank || sp_rules_result_rank(op, i) != rank) return false;
  return true;
}

static void map_operands(sp_rule_builder *b, const sp_op *op, int dim, int f) {
  for (int i = 0; i < op->noperands; i++) sp_rule_builder_map(b, i, dim, f);
}

static void map_results(sp_rule_builder *b, const sp_op *op, int dim, int f) {
  for (int i = 0; i < op->nresults; i++) sp_rule_builder_map(b, sp_rules_res(b, i), dim, f);
}

/* Pass-through factors for every dim but `skip1` and `skip2`. */
static void untouched_dims(sp_rule_builder *b, const sp_op *op, int64_t skip1, int64_t skip2) {
  const int64_t *in = sp_rules_operand_shape(op, 0);
  for (int d = 0; d < sp_rules_operand_rank(op, 0); d++) {
    if (d == skip1 || d == skip2) continue;
    int f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
    map_operands(b, op, d, f);
    map_results(b, op, d, f);
  }
}

/* The operand-only then result-only need_replication factors of a changed dim. */
static void changed_dim(sp_rule_builder *b, const sp_op *op, int dim) {
  int f = sp_rule_builder_factor(b, sp_rules_operand_shape(op, 0)[dim],
                                 SP_FACTOR_NEED_REPLICATION, false);
  map_operands(b, op, dim, f);
  f = sp_rule_builder_factor(b, sp_rules_result_shape(op, 0)[dim], SP_FACTOR_NEED_REPLICATION,
                             false);
  map_results(b, op, dim, f);
}

static int one_changed_dim(sp_rule_builder *b, const sp_op *op, const char *attr, sp_err *err) {
  int64_t dim = -1;
  sp_op_get_int(op, attr, &dim);
  bool verified = pairs_hold(op, dim);
  assert(verified);
  (void)verified;
  untouched_dims(b, op, dim, dim);
  changed_dim(b, op, (int)dim);
  return SP_OK;
}

int sp_rules_build_all_gather(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                              sp_err *err) {
  return one_changed_dim(b, op, "all_gather_dim", err);
}

int sp_rules_build_reduce_scatter(sp_rule_builder *b, const sp_op *op,
                                  const sp_rules_options *opts, sp_err *err) {
  return one_changed_dim(b, op, "scatter_dimension", err);
}

/* The split dim, then (if different) the concat dim. */
int sp_rules_build_all_to_all(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                              sp_err *err) {
  int64_t split = -1, concat = -1;
  sp_op_get_int(op, "split_dimension", &split);
  sp_op_get_int(op, "concat_dimension", &concat);
  bool verified = pairs_hold(op, split) && pairs_hold(op, concat);
  assert(verified);
  (void)verified;
  untouched_dims(b, op, split, concat);
  changed_dim(b, op, (int)split);
  if (concat != split) changed_dim(b, op, (int)concat);
  return SP_OK;
}
