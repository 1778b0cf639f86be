/*
 * rules_collective.c - rules of the StableHLO collectives that change a dimension:
 * all_gather, all_to_all, reduce_scatter. (all_reduce, collective_permute and
 * collective_broadcast are pointwise, see registry.c.)
 *
 * All operands share one mapping and all results another. Dims the collective leaves alone
 * come first, as pass-through factors on every tensor; then each dim it changes gets an
 * operand-only and a result-only need_replication factor.
 */
#include "rules/op_rules.h"

/* Checks that operands [0, n) and results [0, n) pair up with equal ranks. */
static int check_pairs(const sp_op *op, sp_err *err) {
  if (op->noperands != op->nresults)
    return sp_rules_op_err(err, op, SP_EINVAL, "%d operands for %d results", op->noperands,
                           op->nresults);
  int rank = sp_rules_operand_rank(op, 0);
  for (int i = 0; i < op->noperands; i++)
    if (sp_rules_operand_rank(op, i) != rank || sp_rules_result_rank(op, i) != rank)
      return sp_rules_op_err(err, op, SP_EINVAL, "operands and results differ in rank");
  return SP_OK;
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
  int rc = check_pairs(op, err);
  int64_t dim;
  if (rc == SP_OK) rc = sp_rules_need_int(op, attr, &dim, err);
  if (rc == SP_OK) rc = sp_rules_check_dim(op, attr, dim, sp_rules_operand_rank(op, 0), err);
  if (rc != SP_OK) return rc;
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
  int rc = check_pairs(op, err);
  int64_t split, concat;
  int rank = sp_rules_operand_rank(op, 0);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "split_dimension", &split, err);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "concat_dimension", &concat, err);
  if (rc == SP_OK) rc = sp_rules_check_dim(op, "split_dimension", split, rank, err);
  if (rc == SP_OK) rc = sp_rules_check_dim(op, "concat_dimension", concat, rank, err);
  if (rc != SP_OK) return rc;
  untouched_dims(b, op, split, concat);
  changed_dim(b, op, (int)split);
  if (concat != split) changed_dim(b, op, (int)concat);
  return SP_OK;
}
