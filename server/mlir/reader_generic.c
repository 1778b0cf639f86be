/*
 * reader_generic.c - building ops in the MLIR reader, and the two forms every op can be read
 * in without a custom format: MLIR's generic form `"dialect.op"(operands) <{props}>
 * (regions) {attrs} : (types) -> types` and the permissive fallback `op operands {attrs} :
 * type` for ops without a registered format.
 *
 * Every op checks the SP_MAX_OPS budget, records its location, and moves shardings written as
 * attributes onto the values they describe. Memory: ops go into the module arena; operand and
 * type vectors into p->tmp.
 */
#include "mlir/reader_int.h"

#include "ir/diag.h"
#include "ir/op_attrs.h"
#include "ir/sp_limits.h"

/* ------------------------------------------------------------------ building ops */

/* Moves shardings written as attributes onto the values they describe (see ir.h). */
static int absorb_shardings(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op *op) {
  int n = 0;
  if (sp_op_absorb_result_shardings(op, &n)) {
    char msg[SP_ERR_MSG_MAX];
    return sp__mlir_error(p, &h->name_tok, "%s", sp_op_message(msg, sizeof msg, h->name,
                          "result shardings don't match number of values: %d shardings vs %d "
                          "values", n, op->nresults));
  }
  return SP_OK;
}

int sp__mlir_build_op(sp__mlir_parser *p, const sp__mlir_op_header *h, int noperands,
                      sp_value *const *operands, int nresults, sp_type *const *result_types,
                      int nregions, sp_region *const *regions, const sp_attrs *attrs,
                      sp_op **out) {
  if (++p->nops > SP_MAX_OPS)
    return sp__mlir_error_code(p, SP_ELIMIT, &h->name_tok, "more than SP_MAX_OPS (%d) ops",
                               SP_MAX_OPS);
  sp_op *op = sp_op_create_of_kind(p->a, h->name, h->kind, noperands, operands, nresults,
                                   result_types, nregions);
  if (!op) return sp__mlir_oom(p);
  op->loc.line = p->first_line + h->name_tok.line - 1;
  op->loc.col = h->name_tok.col;
  for (int i = 0; i < nresults; i++) op->results[i].loc = op->loc;
  for (int i = 0; i < nregions; i++) {
    sp_region *dst = &op->regions[i];
    *dst = *regions[i];
    dst->parent = op;
    for (int b = 0; b < dst->nblocks; b++) dst->blocks[b]->parent = dst;
  }
  if (attrs) op->attrs = *attrs;
  int rc = absorb_shardings(p, h, op);
  if (rc) return rc;
  *out = op;
  return SP_OK;
}

int sp__mlir_finish_op(sp__mlir_parser *p, const sp__mlir_op_header *h,
                       const sp__mlir_values *vals, int nregions, sp_region *const *regions,
                       sp_attrs *attrs, sp_op **out) {
  sp__mlir_types ins = {0}, outs = {0};
  int rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  if (ins.n != vals->n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d", h->name,
                          vals->n, ins.n);
  return sp__mlir_build_op(p, h, vals->n, vals->v, outs.n, outs.v, nregions, regions, attrs, out);
}

static int check_operand_types(sp__mlir_parser *p, const sp__mlir_op_header *h,
                               const sp__mlir_values *vals, const sp__mlir_types *types) {
  if (vals->n != types->n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d",
                          h->name, vals->n, types->n);
  for (int i = 0; i < vals->n; i++) {
    if (!sp_type_equal(vals->v[i]->type, types->v[i])) {
      sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
      sp_type_print(&a, vals->v[i]->type);
      sp_type_print(&b, types->v[i]);
      sp__mlir_error(p, &h->name_tok,
                     "type of operand #%d of '%s' is %s but the op's type says %s", i, h->name,
                     sp_strbuf_str(&a), sp_strbuf_str(&b));
      sp_strbuf_free(&a);
      sp_strbuf_free(&b);
      return SP_EINVAL;
    }
  }
  return SP_OK;
}

int sp__mlir_parse_generic_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_region *regions[64];
  int nregions = 0;
  sp_attrs attrs = {0};
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "generic operation");
  if (rc) return rc;
  if ((rc = sp__mlir_parse_operand_list(p, &vals))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "operand list"))) return rc;
  if (p->lx.tok.kind == SP_TOK_LSQUARE)
    return sp__mlir_error(p, NULL, "successor blocks are not supported");
  if (p->lx.tok.kind == SP_TOK_LESS) {
    sp__mlir_next(p);
    if (p->lx.tok.kind != SP_TOK_LBRACE)
      return sp__mlir_expect(p, SP_TOK_LBRACE, "properties");
    if ((rc = sp__mlir_parse_attr_dict_body(p, h->kind, &attrs))) return rc;
    if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "properties"))) return rc;
  }
  if (sp__mlir_accept(p, SP_TOK_LPAREN)) {
    for (;;) {
      if (nregions == (int)(sizeof regions / sizeof regions[0]))
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many regions");
      if ((rc = sp__mlir_parse_region(p, NULL, &regions[nregions]))) return rc;
      nregions++;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "region list"))) return rc;
  }
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_COLON, "generic operation"))) return rc;
  if ((rc = sp__mlir_parse_function_type(p, &ins, &outs))) return rc;
  if ((rc = check_operand_types(p, h, &vals, &ins))) return rc;
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, nregions, regions, &attrs, out);
}

int sp__mlir_parse_fallback_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  int rc = sp__mlir_parse_operand_list(p, &vals);
  if (rc) return rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if (p->lx.tok.kind != SP_TOK_COLON) {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, &h->name_tok,
                          "custom syntax of '%s' is not supported; write it in the generic form",
                          h->name);
  }
  sp__mlir_next(p);
  if ((rc = sp__mlir_parse_same_or_function_type(p, vals.n, &ins, &outs))) return rc;
  if ((rc = check_operand_types(p, h, &vals, &ins))) return rc;
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, 0, NULL, &attrs, out);
}
