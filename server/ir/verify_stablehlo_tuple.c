/*
 * verify_stablehlo_tuple.c - StableHLO's checks of the ops that move tuples and tokens, and of
 * the other ops without a sharding rule: optimization_barrier, tuple, get_tuple_element,
 * constant, partition_id, replica_id, create_token, after_all, infeed, outfeed, send, recv
 * (see verify_stablehlo_int.h). The engine passes their values through or leaves them alone;
 * these checks keep what it reads of them (result i is operand i of a barrier, the element a
 * get_tuple_element names exists) true.
 *
 * Memory: nothing is allocated beyond a message's text.
 */
#include <stdio.h>

#include "ir/verify_stablehlo_int.h"


static bool is_token(const sp_type *t) { return t && t->kind == SP_TYPE_TOKEN; }

/* MLIR's message for results that differ from the types the op infers (`want`, n of them). */
static int inferred_mismatch(const sp_module *m, const sp_op *op, const sp_type *const *want,
                             int n, sp_err *err) {
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  for (int i = 0; i < n; i++) {
    sp_strbuf_puts(&a, i ? ", '" : "'");
    sp_type_print(&a, want[i]);
    sp_strbuf_puts(&a, "'");
  }
  for (int i = 0; i < op->nresults; i++) {
    sp_strbuf_puts(&b, i ? ", '" : "'");
    sp_type_print(&b, op->results[i].type);
    sp_strbuf_puts(&b, "'");
  }
  int rc = sp__verify_op_fail(m, op, err, "inferred type(s) %.300s are incompatible with return type(s) of "
                              "operation %.300s", sp_strbuf_ok(&a) ? sp_strbuf_str(&a) : "?",
                              sp_strbuf_ok(&b) ? sp_strbuf_str(&b) : "?");
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
  return rc;
}

/* optimization_barrier: its results are its operands' types. */
static int verify_optimization_barrier(const sp_module *m, const sp_op *op, sp_err *err) {
  bool same = op->nresults == op->noperands;
  for (int i = 0; same && i < op->noperands; i++)
    same = sp__vs_compatible(sp__vs_operand(op, i), op->results[i].type);
  if (same) return SP_OK;
  const sp_type *want[64];
  int n = op->noperands < 64 ? op->noperands : 64;
  for (int i = 0; i < n; i++) want[i] = sp__vs_operand(op, i);
  return inferred_mismatch(m, op, want, n, err);
}

static int verify_get_tuple_element(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, 1, 1, err);
  if (rc) return rc;
  const sp_type *t = sp__vs_operand(op, 0);
  if (!t || t->kind != SP_TYPE_TUPLE) {
    char text[128];
    sp__vs_text(t, text, sizeof text);
    return sp__verify_op_fail(m, op, err, "operand #0 must be tuple of ranked tensor or token values, but "
                              "got '%s'", text);
  }
  int64_t index;
  if (!sp_op_get_int(op, "index", &index))
    return sp__verify_op_fail(m, op, err, "requires attribute 'index'");
  if (index < 0 || index >= t->nelems)
    return sp__verify_op_fail(m, op, err, "index %lld is out of bounds of operand with size %d",
                              (long long)index, t->nelems);
  const sp_type *want = t->elems[index];
  if (sp_type_equal(want, op->results[0].type)) return SP_OK;
  return inferred_mismatch(m, op, &want, 1, err);
}

static int verify_tuple(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = sp__vs_counts(m, op, -1, 1, err);
  if (rc) return rc;
  const sp_type *r = op->results[0].type;
  bool same = r && r->kind == SP_TYPE_TUPLE && r->nelems == op->noperands;
  for (int i = 0; same && i < op->noperands; i++)
    same = sp_type_equal(r->elems[i], sp__vs_operand(op, i));
  if (same) return SP_OK;
  return sp__verify_op_fail(m, op, err, "the result type is not the tuple of the %d operands' types",
                            op->noperands);
}

/* The last of `n` types is a token; `what` names them ("result", "operand"). */
static int last_is_token(const sp_module *m, const sp_op *op, bool results, sp_err *err) {
  int n = results ? op->nresults : op->noperands;
  if (n < 1)
    return sp__verify_op_fail(m, op, err, "%s is expected to be at least of size 1, but got 0",
                              results ? "result" : "operand");
  const sp_type *last = results ? op->results[n - 1].type : sp__vs_operand(op, n - 1);
  if (is_token(last)) return SP_OK;
  char text[128];
  sp__vs_text(last, text, sizeof text);
  return sp__verify_op_fail(m, op, err, "last element of %s types is expected to be of token type, but got "
                            "'%s'", results ? "result" : "operand", text);
}

static int verify_token_op(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc;
  switch (op->kind) {
    case SP_OP_CREATE_TOKEN:
      if ((rc = sp__vs_counts(m, op, 0, 1, err))) return rc;
      return last_is_token(m, op, true, err);
    case SP_OP_AFTER_ALL:
      if ((rc = sp__vs_counts(m, op, -1, 1, err))) return rc;
      for (int i = 0; i < op->noperands; i++)
        if (!is_token(sp__vs_operand(op, i)))
          return sp__verify_op_fail(m, op, err, "operand #%d must be a token", i);
      return last_is_token(m, op, true, err);
    case SP_OP_INFEED: case SP_OP_RECV:
      if ((rc = sp__vs_counts(m, op, 1, op->nresults, err))) return rc;
      if (!is_token(sp__vs_operand(op, 0)))
        return sp__verify_op_fail(m, op, err, "operand #0 must be a token");
      return last_is_token(m, op, true, err);
    case SP_OP_OUTFEED: case SP_OP_SEND:
      if ((rc = sp__vs_counts(m, op, -1, 1, err))) return rc;
      if ((rc = last_is_token(m, op, false, err))) return rc;
      return last_is_token(m, op, true, err);
    default:
      return SP_OK;
  }
}

int sp__verify_tuple_token(const sp_module *m, const sp_op *op, sp_err *err) {
  switch (op->kind) {
    case SP_OP_OPTIMIZATION_BARRIER: return verify_optimization_barrier(m, op, err);
    case SP_OP_GET_TUPLE_ELEMENT: return verify_get_tuple_element(m, op, err);
    case SP_OP_TUPLE: return verify_tuple(m, op, err);
    case SP_OP_CONSTANT: case SP_OP_PARTITION_ID: case SP_OP_REPLICA_ID:
      return sp__vs_counts(m, op, 0, 1, err);
    default:
      return verify_token_op(m, op, err);
  }
}
