/*
 * format_stablehlo_region.c - custom syntax of the StableHLO ops that call or carry other code
 * (see format_int.h): stablehlo.custom_call `@target(%a, %b)`, stablehlo.reduce (the compact
 * `applies stablehlo.add across dimensions = [...]` form and the region form) and
 * stablehlo.while (`(%iter = %init)` with cond / do regions).
 *
 * Invariant: each printer returns false, having written nothing, when the op does not have the
 * shape its custom form needs (a custom_call with regions, a reduce whose body is not a single
 * binary op for the compact form, ...), so the generic form is used instead.
 * Memory: regions, blocks and attributes go into the module's arena; printing only appends to
 * the writer.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/format_int.h"
#include "mlir/format_stablehlo_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ custom_call */

int sp__mlir_parse_custom_call(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  int rc;
  sp_attr target = {.name = "call_target_name", .kind = SP_ATTR_STR};
  if (p->lx.tok.kind != SP_TOK_AT)
    return sp__mlir_error(p, NULL, "expected call target '@name' in %s", h->name);
  if ((rc = sp__mlir_parse_symbol(p, &target.u.s)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &target)) ||
      (rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)))
    return rc;
  return sp__mlir_finish_op(p, h, &vals, 0, NULL, &attrs, out);
}

bool sp__mlir_print_custom_call(sp__mlir_writer *w, const sp_op *op) {
  sp_attr *target = sp_op_attr(op, "call_target_name");
  if (!target || target->kind != SP_ATTR_STR || op->nregions) return false;
  sp__mlir_w_symbol_call(w, op, "call_target_name", target->u.s);
  return true;
}

/* ------------------------------------------------------------------ reduce */

/* The scalar type tensor<elem> of a tensor type. */
static sp_type *scalar_of(sp__mlir_parser *p, const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR) return NULL;
  return sp_type_tensor(p->a, 0, NULL, t->elem);
}

/* Builds the body of `applies <op>`: ^bb0(%a: tensor<e>, %b: tensor<e>): %r = op %a, %b; return */
static int build_applies_body(sp__mlir_parser *p, const sp__mlir_token *name_tok, const char *opname,
                              sp_op_kind kind, const sp_type *input, sp_region **out) {
  sp_region *r = sp_arena_calloc(p->a, 1, sizeof *r);
  sp_block *b = r ? sp_region_add_block(p->a, r) : NULL;
  sp_type *s0 = scalar_of(p, input), *s1 = scalar_of(p, input), *s2 = scalar_of(p, input);
  if (!r || !b || !s0 || !s1 || !s2) return sp__mlir_oom(p);
  sp_value *a0 = sp_block_add_arg(p->a, b, s0), *a1 = sp_block_add_arg(p->a, b, s1);
  if (!a0 || !a1) return sp__mlir_oom(p);
  sp_value *ops[2] = {a0, a1};
  if ((p->nops += 2) > SP_MAX_OPS) return sp__mlir_error_code(p, SP_ELIMIT, name_tok, "more than SP_MAX_OPS ops");
  sp_op *inner = sp_op_create_of_kind(p->a, opname, kind, 2, ops, 1, &s2, 0);
  if (!inner) return sp__mlir_oom(p);
  sp_value *res = &inner->results[0];
  sp_op *ret = sp_op_create_of_kind(p->a, "stablehlo.return", SP_OP_RETURN, 1, &res, 0, NULL, 0);
  if (!ret) return sp__mlir_oom(p);
  inner->loc = ret->loc = (sp_loc){p->first_line + name_tok->line - 1, name_tok->col};
  sp_block_append(b, inner);
  sp_block_append(b, ret);
  *out = r;
  return SP_OK;
}

int sp__mlir_parse_reduce(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values inputs = {0}, inits = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  sp_region *body = NULL;
  int rc;
  /* (%in init: %init), (%in init: %init) */
  for (;;) {
    sp_value *a, *b;
    if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) || (rc = sp__mlir_parse_operand(p, &a)) ||
        (rc = sp__mlir_expect_word(p, "init", h->name)) || (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
        (rc = sp__mlir_parse_operand(p, &b)) || (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)) ||
        (rc = sp__mlir_values_push(p, &inputs, a)) || (rc = sp__mlir_values_push(p, &inits, b)))
      return rc;
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
  }
  const char *applies = NULL;
  sp_op_kind applies_kind = SP_OP_UNKNOWN;
  sp__mlir_token applies_tok;
  if (sp__mlir_accept_word(p, "applies")) {
    applies_tok = p->lx.tok;
    if (applies_tok.kind != SP_TOK_BARE || !sp__mlir_valid_op_name(applies_tok.p, applies_tok.n))
      return sp__mlir_error(p, NULL, "expected op name after 'applies'");
    applies = sp__mlir_intern(p, applies_tok.p, applies_tok.n);
    if (!applies) return sp__mlir_oom(p);
    applies_kind = sp__mlir_op_kind_of(p, applies);
    if (applies_kind) applies = sp_op_kind_name(applies_kind);
    sp__mlir_next(p);
    if (inputs.n != 1)
      return sp__mlir_error(p, &applies_tok, "'applies' needs exactly one input in %s", h->name);
  }
  sp_ints dims;
  if ((rc = sp__mlir_parse_literal(p, "across dimensions =", h->name)) ||
      (rc = sp__mlir_parse_int_list(p, &dims, h->name)) ||
      (rc = sp__mlir_set_ints(p, &attrs, "dimensions", dims)) ||
      (rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  sp__mlir_values all = {0};
  for (int i = 0; i < inputs.n; i++)
    if ((rc = sp__mlir_values_push(p, &all, inputs.v[i]))) return rc;
  for (int i = 0; i < inits.n; i++)
    if ((rc = sp__mlir_values_push(p, &all, inits.v[i]))) return rc;
  if (ins.n != all.n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d", h->name,
                          all.n, ins.n);
  if (applies) {
    if ((rc = build_applies_body(p, &applies_tok, applies, applies_kind, ins.v[0], &body))) return rc;
  } else {
    /* reducer(%a: T, %b: T) (%c: T, %d: T) { ... }: pair i is (arg i, arg N+i). */
    sp__mlir_args pairs = {0};
    if ((rc = sp__mlir_expect_word(p, "reducer", h->name))) return rc;
    while (p->lx.tok.kind == SP_TOK_LPAREN) {
      sp__mlir_args two = {0};
      if ((rc = sp__mlir_parse_arg_list(p, &two))) return rc;
      if (two.n != 2) return sp__mlir_error(p, NULL, "expected two arguments per reducer pair");
      if ((rc = sp__mlir_args_push(p, &pairs, &two.v[0])) || (rc = sp__mlir_args_push(p, &pairs, &two.v[1])))
        return rc;
    }
    if (pairs.n != 2 * inputs.n)
      return sp__mlir_error(p, NULL, "expected %d reducer argument pairs, got %d", inputs.n, pairs.n / 2);
    sp__mlir_args args = {0};
    for (int i = 0; i < inputs.n; i++)
      if ((rc = sp__mlir_args_push(p, &args, &pairs.v[2 * i]))) return rc;
    for (int i = 0; i < inputs.n; i++)
      if ((rc = sp__mlir_args_push(p, &args, &pairs.v[2 * i + 1]))) return rc;
    if ((rc = sp__mlir_parse_region(p, &args, &body))) return rc;
  }
  return sp__mlir_build_op(p, h, all.n, all.v, outs.n, outs.v, 1, &body, &attrs, out);
}

/* MLIR prints `applies stablehlo.add` when the body is exactly one commutative binary op of
 * the two block arguments whose result is returned. */
static const sp_op *compact_reducer(const sp_op *op) {
  if (op->noperands != 2 || op->nregions != 1 || op->regions[0].nblocks != 1) return NULL;
  const sp_block *b = op->regions[0].blocks[0];
  const sp_op *inner = b->first;
  if (b->nargs != 2 || !inner || !inner->next || inner->next->next) return NULL;
  const sp_op *ret = inner->next;
  switch (inner->kind) {
    case SP_OP_ADD: case SP_OP_MULTIPLY: case SP_OP_MAXIMUM: case SP_OP_MINIMUM:
    case SP_OP_AND: case SP_OP_OR: case SP_OP_XOR: break;
    default: return NULL;
  }
  if (inner->noperands != 2 || inner->nresults != 1 || inner->attrs.n || inner->nregions ||
      inner->results[0].sharding || inner->operands[0].value != b->args[0] ||
      inner->operands[1].value != b->args[1])
    return NULL;
  const sp_type *in = op->operands[0].value ? op->operands[0].value->type : NULL;
  const sp_type *t = b->args[0]->type;
  if (!in || !t || in->kind != SP_TYPE_TENSOR || t->kind != SP_TYPE_TENSOR || t->rank != 0 ||
      !in->elem || !t->elem || strcmp(in->elem, t->elem) != 0 ||
      !sp_type_equal(b->args[1]->type, t) || !sp_type_equal(inner->results[0].type, t))
    return NULL;
  if (ret->kind != SP_OP_RETURN || ret->noperands != 1 || ret->operands[0].value != &inner->results[0] ||
      ret->attrs.n)
    return NULL;
  return inner;
}

bool sp__mlir_print_reduce(sp__mlir_writer *w, const sp_op *op) {
  sp_ints dims;
  int n = op->noperands / 2;
  if (op->noperands % 2 || n == 0 || op->nregions != 1 || op->regions[0].nblocks != 1 ||
      op->regions[0].blocks[0]->nargs != 2 * n || !sp_op_get_ints(op, "dimensions", &dims))
    return false;
  static const char *const elided[] = {"dimensions", NULL};
  sp__mlir_w_op_name(w, op);
  for (int i = 0; i < n; i++) {
    sp__mlir_w_puts(w, i ? ", (" : "(");
    sp__mlir_w_value(w, op->operands[i].value);
    sp__mlir_w_puts(w, " init: ");
    sp__mlir_w_value(w, op->operands[n + i].value);
    sp__mlir_w_putc(w, ')');
  }
  const sp_op *inner = compact_reducer(op);
  if (inner) {
    sp__mlir_w_puts(w, " applies ");
    sp__mlir_w_puts(w, inner->name);
  }
  sp__mlir_w_puts(w, " across dimensions = ");
  sp__mlir_print_int_list(w, &dims);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
  if (inner) return true;
  const sp_block *b = op->regions[0].blocks[0];
  sp__mlir_w_newline(w);
  sp__mlir_w_puts(w, " reducer");
  for (int i = 0; i < n; i++) {
    sp__mlir_w_puts(w, i ? " (" : "(");
    sp__mlir_w_arg_decl(w, b->args[i]);
    sp__mlir_w_puts(w, ", ");
    sp__mlir_w_arg_decl(w, b->args[n + i]);
    sp__mlir_w_putc(w, ')');
  }
  sp__mlir_w_puts(w, "  ");
  sp__mlir_w_region(w, &op->regions[0], false);
  return true;
}

/* ------------------------------------------------------------------ while */

int sp__mlir_parse_while(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types types = {0};
  sp__mlir_args args = {0};
  sp_attrs attrs = {0};
  sp_region *regions[2];
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name);
  if (rc) return rc;
  if (p->lx.tok.kind != SP_TOK_RPAREN) {
    for (;;) {
      sp__mlir_arg a;
      sp_value *v;
      memset(&a, 0, sizeof a);
      a.name = p->lx.tok;
      if (a.name.kind != SP_TOK_PERCENT) return sp__mlir_error(p, NULL, "expected iteration argument name in %s", h->name);
      sp__mlir_next(p);
      if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, h->name)) || (rc = sp__mlir_parse_operand(p, &v)) ||
          (rc = sp__mlir_values_push(p, &vals, v)) || (rc = sp__mlir_args_push(p, &args, &a)))
        return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name))) return rc;
  if (vals.n) {
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) || (rc = sp__mlir_parse_type_list(p, &types)))
      return rc;
    if (types.n != vals.n)
      return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but %d types", h->name, vals.n, types.n);
    for (int i = 0; i < vals.n; i++)
      if (!sp_type_equal(vals.v[i]->type, types.v[i]))
        return sp__mlir_error(p, &h->name_tok, "type of operand #%d of '%s' does not match its definition",
                              i, h->name);
  }
  if (sp__mlir_accept_word(p, "attributes") && (rc = sp__mlir_parse_attr_dict_body(p, h->kind, &attrs)))
    return rc;
  /* Each region gets its own argument types (and values). */
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < args.n; i++) {
      sp_type *copy = sp_arena_alloc(p->a, sizeof *copy);
      if (!copy) return sp__mlir_oom(p);
      *copy = *types.v[i];
      args.v[i].type = copy;
    }
    if ((rc = sp__mlir_expect_word(p, r == 0 ? "cond" : "do", h->name)) ||
        (rc = sp__mlir_parse_region(p, &args, &regions[r])))
      return rc;
  }
  return sp__mlir_build_op(p, h, vals.n, vals.v, types.n, types.v, 2, regions, &attrs, out);
}

bool sp__mlir_print_while(sp__mlir_writer *w, const sp_op *op) {
  if (op->nregions != 2 || op->nresults != op->noperands) return false;
  for (int r = 0; r < 2; r++)
    if (op->regions[r].nblocks != 1 || op->regions[r].blocks[0]->nargs != op->noperands) return false;
  const sp_block *body = op->regions[1].blocks[0];
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, '(');
  for (int i = 0; i < op->noperands; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_value(w, body->args[i]);
    sp__mlir_w_puts(w, " = ");
    sp__mlir_w_value(w, op->operands[i].value);
  }
  sp__mlir_w_putc(w, ')');
  if (op->noperands) {
    sp__mlir_w_puts(w, " : ");
    sp__mlir_w_operand_types(w, op, 0, op->noperands);
  }
  sp__mlir_w_attr_dict(w, op, NULL, true);
  sp__mlir_w_newline(w);
  sp__mlir_w_puts(w, " cond ");
  sp__mlir_w_region(w, &op->regions[0], false);
  sp__mlir_w_puts(w, " do ");
  sp__mlir_w_region(w, &op->regions[1], false);
  return true;
}
