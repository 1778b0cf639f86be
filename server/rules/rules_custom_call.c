/*
 * rules_custom_call.c - rules of stablehlo.custom_call, looked up by call target name.
 *
 * Registered targets (Shardy's list): pointwise ones (annotate_device_placement, Cholesky,
 * CompactWyHelper, InspectSharding, InvertDiagBlocks*, LayoutConstraint, mhlo.erf,
 * MoveToDevice, MoveToHost, X64SplitHigh, X64SplitLow, xla.megascale.provide_metadata, the
 * _SPMDInternalOp_* permutes, X64Combine) and dedicated rules (Eigh, Qr,
 * QrDecompositionBlock, ProductOfElementaryHouseholderReflectors, mhlo.topk, ApproxTopK,
 * PartialReduce). Some targets are opaque on purpose and get no rule without a warning
 * (sdy_testonly, tpu_custom_call, xla.debug.Log, the python / FFI callbacks); any other
 * target gets no rule and the registry warns.
 *
 * The counts and ranks the dedicated rules read (Eigh, Qr, Householder, top-k, ApproxTopK)
 * were checked by the verifier (ir/verify_stablehlo_ops.c); the builders assert them.
 */
#include <assert.h>
#include <string.h>

#include "rules/op_rules.h"

/* ------------------------------------------------------------------ linear algebra */

/* The batch dims (all but the last two of operand 0) shared by every tensor. */
static void batch_dims(sp_rule_builder *b, const sp_op *op, int nbatch) {
  const int64_t *in = sp_rules_operand_shape(op, 0);
  for (int d = 0; d < nbatch; d++) {
    int f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
    for (int t = 0; t < op->noperands + op->nresults; t++) sp_rule_builder_map(b, t, d, f);
  }
}

/* Eigh: A (.., n, n) -> eigenvectors (.., n, n), eigenvalues (.., n); all pass-through. */
static int build_eigh(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                      sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 2);
  int r = sp_rules_operand_rank(op, 0);
  assert(r >= 2 && sp_rules_result_rank(op, 0) == r && sp_rules_result_rank(op, 1) == r - 1);
  const int64_t *in = sp_rules_operand_shape(op, 0);
  int v = sp_rules_res(b, 0), w = sp_rules_res(b, 1);
  batch_dims(b, op, r - 2);
  int j = sp_rule_builder_factor(b, in[r - 2], SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(b, 0, r - 2, j);
  sp_rule_builder_map(b, v, r - 2, j);
  int k = sp_rule_builder_factor(b, in[r - 1], SP_FACTOR_PASS_THROUGH, false);
  sp_rule_builder_map(b, 0, r - 1, k);
  sp_rule_builder_map(b, v, r - 1, k);
  sp_rule_builder_map(b, w, r - 2, k);
  return SP_OK;
}

/* Qr / QrDecompositionBlock: A (.., m, n) -> (.., m, n), taus (.., k); the matrix dims and
 * the taus need replication. */
static int build_qr(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                    sp_err *err) {
  assert(op->noperands == 1 && op->nresults == 2);
  int r = sp_rules_operand_rank(op, 0);
  assert(r >= 2 && sp_rules_result_rank(op, 0) == r && sp_rules_result_rank(op, 1) == r - 1);
  const int64_t *in = sp_rules_operand_shape(op, 0), *taus = sp_rules_result_shape(op, 1);
  const sp_factor_kind nr = SP_FACTOR_NEED_REPLICATION;
  int q = sp_rules_res(b, 0), t = sp_rules_res(b, 1);
  batch_dims(b, op, r - 2);
  int j = sp_rule_builder_factor(b, in[r - 2], nr, false);
  sp_rule_builder_map(b, 0, r - 2, j);
  sp_rule_builder_map(b, q, r - 2, j);
  int k = sp_rule_builder_factor(b, in[r - 1], nr, false);
  sp_rule_builder_map(b, 0, r - 1, k);
  sp_rule_builder_map(b, q, r - 1, k);
  sp_rule_builder_map(b, t, r - 2, sp_rule_builder_factor(b, taus[r - 2], nr, false));
  return SP_OK;
}

/* ProductOfElementaryHouseholderReflectors: A (.., m, n), taus (.., k) -> (.., m, n). */
static int build_householder(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                             sp_err *err) {
  assert(op->noperands == 2 && op->nresults == 1);
  int r = sp_rules_operand_rank(op, 0);
  assert(r >= 2 && sp_rules_operand_rank(op, 1) == r - 1 && sp_rules_result_rank(op, 0) == r);
  const int64_t *in = sp_rules_operand_shape(op, 0), *taus = sp_rules_operand_shape(op, 1);
  const sp_factor_kind nr = SP_FACTOR_NEED_REPLICATION;
  int res = sp_rules_res(b, 0);
  batch_dims(b, op, r - 2);
  int j = sp_rule_builder_factor(b, in[r - 2], nr, false);
  sp_rule_builder_map(b, 0, r - 2, j);
  sp_rule_builder_map(b, res, r - 2, j);
  int k = sp_rule_builder_factor(b, in[r - 1], nr, false);
  sp_rule_builder_map(b, 0, r - 1, k);
  sp_rule_builder_map(b, res, r - 1, k);
  sp_rule_builder_map(b, 1, r - 2, sp_rule_builder_factor(b, taus[r - 2], nr, false));
  return SP_OK;
}

/* ------------------------------------------------------------------ top-k */

/* mhlo.topk: operand (.., n) -> values, indices (.., k). Leading dims pass-through; the last
 * dim is one need_replication, blocked factor of the operand's size on every tensor. Also the
 * rule of the chlo.top_k op JAX emits and the mhlo.topk op XLA turns it into (JAX's Shardy
 * propagates the batch dims through it). */
int sp_rules_build_topk(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                        sp_err *err) {
  (void)opts;
  assert(op->noperands == 1 && op->nresults == 2);
  int r = sp_rules_operand_rank(op, 0);
  assert(r >= 1 && sp_rules_result_rank(op, 0) == r && sp_rules_result_rank(op, 1) == r);
  const int64_t *in = sp_rules_operand_shape(op, 0);
  for (int d = 0; d < r; d++)
    sp_rule_builder_pointwise_dim(b, r, d, in[d],
                                  d == r - 1 ? SP_FACTOR_NEED_REPLICATION : SP_FACTOR_PASS_THROUGH,
                                  d == r - 1);
  return SP_OK;
}

/* ApproxTopK / PartialReduce: N inputs, N init values -> N results. Dims other than the
 * reduction dim are shared; on the reduction dim the inputs get a pass-through factor and
 * the results a need_replication, blocked one. */
static int build_approx_topk(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                             sp_err *err) {
  int n = op->nresults;
  assert(op->noperands == 2 * n);
  int r = sp_rules_operand_rank(op, 0);
  for (int i = 0; i < n; i++)
    assert(sp_rules_operand_rank(op, i) == r && sp_rules_result_rank(op, i) == r);
  int64_t rd;
  if (!sp_op_backend_config_int(op, "reduction_dim", &rd)) rd = r - 1;
  assert(rd >= 0 && rd < r);
  const int64_t *in = sp_rules_operand_shape(op, 0), *out = sp_rules_result_shape(op, 0);
  for (int d = 0; d < r; d++) {
    int f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
    for (int i = 0; i < n; i++) sp_rule_builder_map(b, i, d, f);
    if (d == rd) f = sp_rule_builder_factor(b, out[d], SP_FACTOR_NEED_REPLICATION, true);
    for (int i = 0; i < n; i++) sp_rule_builder_map(b, sp_rules_res(b, i), d, f);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ X64Combine */

static bool used_by_rng_bit_generator(const sp_op *op) {
  for (int i = 0; i < op->nresults; i++)
    for (const sp_use *u = op->results[i].uses; u; u = u->next)
      if (u->owner && u->owner->kind == SP_OP_RNG_BIT_GENERATOR) return true;
  return false;
}

/* Pointwise, except that feeding an rng_bit_generator state makes every dim
 * need_replication and blocked, like the state itself. */
static int build_x64_combine(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                             sp_err *err) {
  if (!used_by_rng_bit_generator(op)) return sp_rules_build_pointwise_lenient(b, op, opts, err);
  int r = sp_rules_result_rank(op, 0);
  const int64_t *out = sp_rules_result_shape(op, 0);
  for (int d = 0; d < r; d++)
    sp_rule_builder_pointwise_dim(b, r, d, out[d], SP_FACTOR_NEED_REPLICATION, true);
  return SP_OK;
}

/* ------------------------------------------------------------------ the table */

typedef struct target_rule {
  const char *name;
  bool prefix;              /* match names starting with `name` */
  sp_rules_build_fn fn;
} target_rule;

static const target_rule targets[] = {
    {"annotate_device_placement", false, sp_rules_build_pointwise_lenient},
    {"Cholesky", false, sp_rules_build_pointwise_lenient},
    {"CompactWyHelper", false, sp_rules_build_pointwise_lenient},
    {"InspectSharding", false, sp_rules_build_pointwise_lenient},
    {"InvertDiagBlocks", true, sp_rules_build_pointwise_lenient},
    {"LayoutConstraint", false, sp_rules_build_pointwise_lenient},
    {"mhlo.erf", false, sp_rules_build_pointwise_lenient},
    {"MoveToDevice", false, sp_rules_build_pointwise_lenient},
    {"MoveToHost", false, sp_rules_build_pointwise_lenient},
    {"X64SplitHigh", false, sp_rules_build_pointwise_lenient},
    {"X64SplitLow", false, sp_rules_build_pointwise_lenient},
    {"xla.megascale.provide_metadata", false, sp_rules_build_pointwise_lenient},
    {"_SPMDInternalOp_", true, sp_rules_build_pointwise_lenient},
    {"X64Combine", false, build_x64_combine},
    {"Eigh", false, build_eigh},
    {"Qr", false, build_qr},
    {"QrDecompositionBlock", false, build_qr},
    {"ProductOfElementaryHouseholderReflectors", false, build_householder},
    {"mhlo.topk", false, sp_rules_build_topk},
    {"ApproxTopK", false, build_approx_topk},
    {"PartialReduce", false, build_approx_topk},
};

sp_rules_build_fn sp_rules_custom_call_builder(const char *target) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    const target_rule *t = &targets[i];
    if (t->prefix ? strncmp(target, t->name, strlen(t->name)) == 0
                  : strcmp(target, t->name) == 0)
      return t->fn;
  }
  return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool sp_rules_custom_call_is_silent(const char *target) {
  if (strcmp(target, "sdy_testonly") == 0 || strcmp(target, "tpu_custom_call") == 0 ||
      strcmp(target, "xla.debug.Log") == 0)
    return true;
  /* xla_python_cpu_callback, xla_ffi_python_gpu_callback,
   * xla_ffi_partitioned_python_cpu_callback, ... */
  return strncmp(target, "xla_", 4) == 0 && strstr(target, "python") &&
         ends_with(target, "callback");
}
