/*
 * registry.c - op kind -> rule builder dispatch, classification, warnings, and the attribute
 * helpers the builders share (see registry.h and op_rules.h).
 *
 * Invariants: an op that already carries `sdy.sharding_rule` always gets that rule back;
 * an op with no operand or no result never gets a new rule (a rule needs both); each warning
 * kind is produced at most once per sp_rules_diag.
 */
#include "rules/registry.h"

#include <stdio.h>
#include <string.h>

#include "ir/op_attrs.h"
#include "ir/sp_limits.h"
#include "rules/op_rules.h"

/* ------------------------------------------------------------------ attribute helpers */

int sp_rules_need_int(const sp_op *op, const char *name, int64_t *out, sp_err *err) {
  if (sp_op_get_int(op, name, out)) return SP_OK;
  return sp_rules_op_err(err, op, SP_EINVAL,
                         sp_op_attr(op, name) ? "attribute '%s' is not an integer"
                                              : "missing attribute '%s'",
                         name);
}

int sp_rules_need_ints(const sp_op *op, const char *name, sp_ints *out, sp_err *err) {
  if (sp_op_get_ints(op, name, out)) return SP_OK;
  return sp_rules_op_err(err, op, SP_EINVAL,
                         sp_op_attr(op, name) ? "attribute '%s' is not an integer list"
                                              : "missing attribute '%s'",
                         name);
}

int sp_rules_opt_ints(const sp_op *op, const char *name, sp_ints *out, sp_err *err) {
  if (!sp_op_attr(op, name)) {
    out->n = 0;
    out->v = NULL;
    return SP_OK;
  }
  return sp_rules_need_ints(op, name, out, err);
}

bool sp_rules_flag(const sp_op *op, const char *name, bool dflt) {
  const sp_attr *at = sp_op_attr(op, name);
  if (!at) return dflt;
  switch (at->kind) {
    case SP_ATTR_BOOL:
      return at->u.b;
    case SP_ATTR_UNIT:
      return true;
    case SP_ATTR_INT:
      return at->u.i != 0;
    case SP_ATTR_STR:
    case SP_ATTR_ENUM:
    case SP_ATTR_TEXT:
      if (strcmp(at->u.s, "true") == 0) return true;
      if (strcmp(at->u.s, "false") == 0) return false;
      return dflt;
    default:
      return dflt;
  }
}

int sp_rules_check_dim(const sp_op *op, const char *what, int64_t dim, int rank, sp_err *err) {
  if (dim < 0 || dim >= rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "%s %lld is out of range for rank %d", what,
                           (long long)dim, rank);
  return SP_OK;
}

int sp_rules_check_dims(const sp_op *op, const char *what, const sp_ints *v, int rank,
                        sp_err *err) {
  /* Ranks are bounded by SP_MAX_RANK, so a bitmap catches repeats in one pass. */
  uint64_t seen[(SP_MAX_RANK + 63) / 64] = {0};
  for (int i = 0; i < v->n; i++) {
    int rc = sp_rules_check_dim(op, what, v->v[i], rank, err);
    if (rc != SP_OK) return rc;
    int64_t d = v->v[i];
    if (seen[d / 64] & (1ull << (d % 64)))
      return sp_rules_op_err(err, op, SP_EINVAL, "%s %lld appears twice", what, (long long)d);
    seen[d / 64] |= 1ull << (d % 64);
  }
  return SP_OK;
}

int sp_rules_check_arity(const sp_op *op, int min_operands, int max_operands, int min_results,
                         int max_results, sp_err *err) {
  if (op->noperands < min_operands || (max_operands >= 0 && op->noperands > max_operands))
    return sp_rules_op_err(err, op, SP_EINVAL, "unexpected number of operands (%d)",
                           op->noperands);
  if (op->nresults < min_results || (max_results >= 0 && op->nresults > max_results))
    return sp_rules_op_err(err, op, SP_EINVAL, "unexpected number of results (%d)",
                           op->nresults);
  return SP_OK;
}

bool sp_rules_ints_has(const sp_ints *ints, int64_t x) { return sp_rules_ints_find(ints, x) >= 0; }

int sp_rules_ints_find(const sp_ints *ints, int64_t x) {
  for (int i = 0; i < ints->n; i++)
    if (ints->v[i] == x) return i;
  return -1;
}

void sp_rules_shape_str(const int64_t *shape, int rank, char *buf, size_t n) {
  size_t len = 0;
  if (rank == 0) {
    snprintf(buf, n, "scalar");
    return;
  }
  buf[0] = '\0';
  for (int d = 0; d < rank && len + 1 < n; d++) {
    int w = snprintf(buf + len, n - len, d ? "x%lld" : "%lld", (long long)shape[d]);
    if (w < 0) break;
    len += (size_t)w;
  }
}

const char *sp_rules_custom_call_target(const sp_op *op) {
  const char *s = sp_op_get_str(op, "call_target_name");
  return s ? s : "";
}

/* ------------------------------------------------------------------ classification */

static bool is_pointwise_math(sp_op_kind k) {
  switch (k) {
    case SP_OP_ABS: case SP_OP_ADD: case SP_OP_AND: case SP_OP_ATAN2: case SP_OP_CBRT:
    case SP_OP_CEIL: case SP_OP_CLZ: case SP_OP_COMPARE: case SP_OP_COMPLEX:
    case SP_OP_CONVERT: case SP_OP_COSINE: case SP_OP_DIVIDE: case SP_OP_EXP:
    case SP_OP_EXPM1: case SP_OP_FLOOR: case SP_OP_IMAG: case SP_OP_IS_FINITE: case SP_OP_LOG:
    case SP_OP_LOG1P: case SP_OP_LOGISTIC: case SP_OP_MAXIMUM: case SP_OP_MINIMUM:
    case SP_OP_MULTIPLY: case SP_OP_NEGATE: case SP_OP_NOT: case SP_OP_OR: case SP_OP_POPCNT:
    case SP_OP_POWER: case SP_OP_REAL: case SP_OP_REDUCE_PRECISION: case SP_OP_REMAINDER:
    case SP_OP_ROUND_AFZ: case SP_OP_ROUND_EVEN: case SP_OP_RSQRT: case SP_OP_SHIFT_LEFT:
    case SP_OP_SHIFT_RIGHT_ARITHMETIC: case SP_OP_SHIFT_RIGHT_LOGICAL: case SP_OP_SIGN:
    case SP_OP_SINE: case SP_OP_SQRT: case SP_OP_SUBTRACT: case SP_OP_TAN: case SP_OP_TANH:
    case SP_OP_XOR:
    case SP_OP_CHLO_ACOS: case SP_OP_CHLO_ACOSH: case SP_OP_CHLO_ASIN: case SP_OP_CHLO_ASINH:
    case SP_OP_CHLO_ATAN: case SP_OP_CHLO_ATANH: case SP_OP_CHLO_BESSEL_I1E:
    case SP_OP_CHLO_CONJ: case SP_OP_CHLO_COSH: case SP_OP_CHLO_SINH: case SP_OP_CHLO_TAN:
    case SP_OP_CHLO_DIGAMMA: case SP_OP_CHLO_ERF: case SP_OP_CHLO_ERF_INV:
    case SP_OP_CHLO_ERFC: case SP_OP_CHLO_IS_INF: case SP_OP_CHLO_IS_NEG_INF:
    case SP_OP_CHLO_IS_POS_INF: case SP_OP_CHLO_LGAMMA: case SP_OP_CHLO_SQUARE:
    case SP_OP_CHLO_NEXT_AFTER: case SP_OP_CHLO_POLYGAMMA: case SP_OP_CHLO_ZETA:
      return true;
    default:
      return false;
  }
}

/* Structural and opaque ops: no rule and no warning. */
static bool is_silent_kind(sp_op_kind k) {
  switch (k) {
    case SP_OP_MODULE: case SP_OP_FUNC: case SP_OP_FUNC_RETURN: case SP_OP_FUNC_CALL:
    case SP_OP_SDY_MESH: case SP_OP_SDY_CONSTANT: case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE: case SP_OP_SDY_PROPAGATION_BARRIER:
    case SP_OP_SDY_MANUAL_COMPUTATION: case SP_OP_SDY_NAMED_COMPUTATION:
    case SP_OP_SDY_SHARDING_GROUP: case SP_OP_SDY_RESHARD: case SP_OP_SDY_RETURN:
    case SP_OP_CONSTANT: case SP_OP_IOTA: case SP_OP_WHILE: case SP_OP_CASE: case SP_OP_IF:
    case SP_OP_OPTIMIZATION_BARRIER: case SP_OP_RETURN: case SP_OP_AFTER_ALL:
    case SP_OP_CREATE_TOKEN: case SP_OP_GET_TUPLE_ELEMENT: case SP_OP_TUPLE:
    case SP_OP_INFEED: case SP_OP_OUTFEED: case SP_OP_PARTITION_ID: case SP_OP_REPLICA_ID:
    case SP_OP_SEND: case SP_OP_RECV:
      return true;
    default:
      return false;
  }
}

static sp_rules_build_fn builder_for_kind(sp_op_kind k) {
  if (is_pointwise_math(k)) return sp_rules_build_pointwise;
  switch (k) {
    case SP_OP_SELECT:
    case SP_OP_CLAMP:
    case SP_OP_ALL_REDUCE:
    case SP_OP_COLLECTIVE_PERMUTE:
    case SP_OP_COLLECTIVE_BROADCAST:
    case SP_OP_SDY_SHARDING_CONSTRAINT:
      return sp_rules_build_pointwise;
    case SP_OP_BITCAST_CONVERT: return sp_rules_build_bitcast_convert;
    case SP_OP_BROADCAST_IN_DIM: return sp_rules_build_broadcast_in_dim;
    case SP_OP_CONCATENATE: return sp_rules_build_concatenate;
    case SP_OP_CONVOLUTION: return sp_rules_build_convolution;
    case SP_OP_DOT: return sp_rules_build_dot;
    case SP_OP_DOT_GENERAL: return sp_rules_build_dot_general;
    case SP_OP_DYNAMIC_SLICE: return sp_rules_build_dynamic_slice;
    case SP_OP_DYNAMIC_UPDATE_SLICE: return sp_rules_build_dynamic_update_slice;
    case SP_OP_FFT: return sp_rules_build_fft;
    case SP_OP_GATHER: return sp_rules_build_gather;
    case SP_OP_PAD: return sp_rules_build_pad;
    case SP_OP_REDUCE: return sp_rules_build_reduce;
    case SP_OP_REDUCE_WINDOW: return sp_rules_build_reduce_window;
    case SP_OP_RESHAPE: return sp_rules_build_reshape;
    case SP_OP_REVERSE: return sp_rules_build_reverse;
    case SP_OP_SCATTER: return sp_rules_build_scatter;
    case SP_OP_SELECT_AND_SCATTER: return sp_rules_build_select_and_scatter;
    case SP_OP_SLICE: return sp_rules_build_slice;
    case SP_OP_SORT: return sp_rules_build_sort;
    case SP_OP_TRANSPOSE: return sp_rules_build_transpose;
    case SP_OP_CHOLESKY: return sp_rules_build_cholesky;
    case SP_OP_TRIANGULAR_SOLVE: return sp_rules_build_triangular_solve;
    case SP_OP_BATCH_NORM_INFERENCE: return sp_rules_build_batch_norm_inference;
    case SP_OP_RNG_BIT_GENERATOR: return sp_rules_build_rng_bit_generator;
    case SP_OP_ALL_GATHER: return sp_rules_build_all_gather;
    case SP_OP_ALL_TO_ALL: return sp_rules_build_all_to_all;
    case SP_OP_REDUCE_SCATTER: return sp_rules_build_reduce_scatter;
    case SP_OP_CHLO_TOP_K:
    case SP_OP_MHLO_TOPK: return sp_rules_build_topk;
    default:
      return NULL;
  }
}

sp_rules_class sp_rules_classify(const sp_op *op) {
  if (sp_op_rule(op)) return SP_RULES_HAS_RULE;
  if (op->kind == SP_OP_CUSTOM_CALL) {
    const char *target = sp_rules_custom_call_target(op);
    if (sp_rules_custom_call_builder(target)) return SP_RULES_HAS_RULE;
    return sp_rules_custom_call_is_silent(target) ? SP_RULES_NO_RULE : SP_RULES_UNKNOWN;
  }
  if (builder_for_kind(op->kind)) return SP_RULES_HAS_RULE;
  return is_silent_kind(op->kind) ? SP_RULES_NO_RULE : SP_RULES_UNKNOWN;
}

static bool same_shape(const sp_type *a, const sp_type *b) {
  return a && b && a->kind == SP_TYPE_TENSOR && b->kind == SP_TYPE_TENSOR &&
         sp_type_same_dims(a, b);
}

bool sp_rules_is_elementwise(const sp_op *op) {
  if (is_pointwise_math(op->kind) || op->kind == SP_OP_SELECT || op->kind == SP_OP_CLAMP)
    return true;
  if (op->kind == SP_OP_BITCAST_CONVERT && op->noperands == 1 && op->nresults == 1)
    return op->operands[0].value && same_shape(op->operands[0].value->type, op->results[0].type);
  return false;
}

bool sp_rules_is_pass_through_op(const sp_op *op) {
  if (sp_rules_is_elementwise(op)) return true;
  switch (op->kind) {
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_PROPAGATION_BARRIER:
    case SP_OP_RESHAPE:
    case SP_OP_TRANSPOSE:
    case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_SDY_FUNC_DATA_FLOW_EDGE:
      return true;
    case SP_OP_CUSTOM_CALL: {
      const char *t = sp_rules_custom_call_target(op);
      return strcmp(t, "MoveToHost") == 0 || strcmp(t, "MoveToDevice") == 0;
    }
    default:
      return false;
  }
}

/* ------------------------------------------------------------------ the registry */

static void warn(sp_rules_diag *diag, const sp_op *op) {
  if (!diag) return;
  if (op->kind == SP_OP_CUSTOM_CALL) {
    if (diag->unknown_custom_call_reported) return;
    diag->unknown_custom_call_reported = true;
    snprintf(diag->warning, sizeof diag->warning,
             "custom call @%s is unknown to SDY sharding rule registry",
             sp_rules_custom_call_target(op));
  } else {
    if (diag->unknown_op_reported) return;
    diag->unknown_op_reported = true;
    snprintf(diag->warning, sizeof diag->warning,
             "op '%s' is unknown to SDY sharding rule registry", op->name);
  }
  diag->has_warning = true;
  diag->warning_loc = op->loc;
}

int sp_rules_for_op(sp_arena *a, const sp_op *op, const sp_rules_options *opts, sp_rule **out,
                    sp_rules_diag *diag, sp_err *err) {
  static const sp_rules_options defaults = {0};
  *out = NULL;
  if (diag) diag->has_warning = false;
  if (!opts) opts = &defaults;

  sp_rule *existing = sp_op_rule(op);
  if (existing) {
    if (existing->noperands != op->noperands || existing->nresults != op->nresults)
      return sp_rules_op_err(err, op, SP_EINVAL,
                             "sdy.sharding_rule maps %d operands and %d results but the op has "
                             "%d and %d",
                             existing->noperands, existing->nresults, op->noperands,
                             op->nresults);
    *out = existing;
    return SP_OK;
  }

  sp_rules_build_fn fn = op->kind == SP_OP_CUSTOM_CALL
                             ? sp_rules_custom_call_builder(sp_rules_custom_call_target(op))
                             : builder_for_kind(op->kind);
  if (!fn) {
    if (sp_rules_classify(op) == SP_RULES_UNKNOWN) warn(diag, op);
    return SP_OK;
  }
  if (op->noperands == 0 || op->nresults == 0) return SP_OK;

  sp_rule_builder b;
  int rc = sp_rule_builder_init_op(&b, a, op, err);
  if (rc != SP_OK) return rc;
  rc = fn(&b, op, opts, err);
  if (rc == SP_RULES_NONE) return SP_OK;
  if (rc != SP_OK) return rc;
  rc = sp_rule_builder_build(&b, out, err);
  if (rc != SP_OK) return sp_err_prefix(err, "op '%s'", op->name);
  return SP_OK;
}
