/*
 * format_stablehlo_dot_conv.c - custom syntax of stablehlo.dot_general and
 * stablehlo.convolution (see format_int.h): contracting / batching dims, `precision = [...]`,
 * window strides, padding pairs, dilations, reversal and the compact `[b, 0, f]x[...]->[...]`
 * dimension numbers.
 *
 * Invariant: each printer returns false, having written nothing, unless the op has every
 * structured attribute its custom form shows, so the generic form is used instead.
 * Memory: parsed attributes go into the module's arena; printing only appends to the writer.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/format_int.h"
#include "mlir/format_stablehlo_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ dot_general */

static int parse_dims_pair(sp__mlir_parser *p, const char *a, const char *b, sp_attrs *attrs,
                           const char *ctx) {
  sp_ints l, r;
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, ctx)) || (rc = sp__mlir_parse_int_list(p, &l, ctx)) ||
      (rc = sp__mlir_expect_word(p, "x", ctx)) || (rc = sp__mlir_parse_int_list(p, &r, ctx)) ||
      (rc = sp__mlir_set_ints(p, attrs, a, l)) || (rc = sp__mlir_set_ints(p, attrs, b, r)))
    return rc;
  return SP_OK;
}

int sp__mlir_parse_dot_general(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  sp_ints none = {0, NULL};
  int rc;
  if ((rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_set_ints(p, &attrs, "lhs_batching_dimensions", none)) ||
      (rc = sp__mlir_set_ints(p, &attrs, "rhs_batching_dimensions", none)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COMMA, h->name)))
    return rc;
  if (sp__mlir_accept_word(p, "batching_dims")) {
    if ((rc = parse_dims_pair(p, "lhs_batching_dimensions", "rhs_batching_dimensions", &attrs,
                              "batching_dims")) ||
        (rc = sp__mlir_expect(p, SP_TOK_COMMA, h->name)))
      return rc;
  }
  if ((rc = sp__mlir_expect_word(p, "contracting_dims", h->name)) ||
      (rc = parse_dims_pair(p, "lhs_contracting_dimensions", "rhs_contracting_dimensions", &attrs,
                            "contracting_dims")) ||
      (rc = sp__mlir_parse_precision(p, &attrs)))
    return rc;
  if (sp__mlir_literal_ahead(p, ", algorithm")) {
    sp_strbuf sb = SP_STRBUF_INIT;
    if ((rc = sp__mlir_parse_literal(p, ", algorithm =", h->name))) return rc;
    rc = sp__mlir_parse_attr_text(p, &sb, false, NULL);
    const char *s = rc ? NULL : sp_arena_printf(p->a, "#stablehlo.dot_algorithm%s", sp_strbuf_str(&sb));
    sp_strbuf_free(&sb);
    if (rc) return rc;
    if (!s) return sp__mlir_oom(p);
    if ((rc = sp__mlir_set_text(p, &attrs, "algorithm", s))) return rc;
  }
  return sp__mlir_finish_op(p, h, &vals, 0, NULL, &attrs, out);
}

bool sp__mlir_print_dot_general(sp__mlir_writer *w, const sp_op *op) {
  sp_ints lb, rb, lc, rc;
  if (op->noperands != 2 || op->nresults != 1 || op->nregions ||
      !sp_op_get_ints(op, "lhs_batching_dimensions", &lb) ||
      !sp_op_get_ints(op, "rhs_batching_dimensions", &rb) ||
      !sp_op_get_ints(op, "lhs_contracting_dimensions", &lc) ||
      !sp_op_get_ints(op, "rhs_contracting_dimensions", &rc))
    return false;
  sp_strbuf prec = SP_STRBUF_INIT;
  bool has_prec = sp__mlir_precision_names(sp_op_get_str(op, "precision_config"), &prec);
  const char *elided[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                          "lhs_contracting_dimensions", "rhs_contracting_dimensions",
                          "dot_dimension_numbers", has_prec ? "precision_config" : NULL, NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_puts(w, ", ");
  if (lb.n || rb.n) {
    sp__mlir_w_puts(w, "batching_dims = ");
    sp__mlir_print_int_list(w, &lb);
    sp__mlir_w_puts(w, " x ");
    sp__mlir_print_int_list(w, &rb);
    sp__mlir_w_puts(w, ", ");
  }
  sp__mlir_w_puts(w, "contracting_dims = ");
  sp__mlir_print_int_list(w, &lc);
  sp__mlir_w_puts(w, " x ");
  sp__mlir_print_int_list(w, &rc);
  if (has_prec) {
    sp__mlir_w_puts(w, ", precision = [");
    sp__mlir_w_puts(w, sp_strbuf_str(&prec));
    sp__mlir_w_putc(w, ']');
  }
  sp_strbuf_free(&prec);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
  return true;
}

/* ------------------------------------------------------------------ convolution */

/* pad = [[0, 1], [0, 1]] */
static int parse_pad_pairs(sp__mlir_parser *p, sp_attrs *attrs) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "window padding");
  if (rc) return rc;
  int64_t v[2 * SP_MAX_RANK];
  int n = 0;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (n == 2 * SP_MAX_RANK) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many padding pairs");
      if ((rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "window padding")) ||
          (rc = sp__mlir_parse_int(p, &v[n], "window padding")) ||
          (rc = sp__mlir_expect(p, SP_TOK_COMMA, "window padding")) ||
          (rc = sp__mlir_parse_int(p, &v[n + 1], "window padding")) ||
          (rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "window padding")))
        return rc;
      n += 2;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "window padding"))) return rc;
  sp_ints ints = {n, n ? sp_arena_alloc(p->a, (size_t)n * sizeof(int64_t)) : NULL};
  if (n && !ints.v) return sp__mlir_oom(p);
  if (n) memcpy(ints.v, v, (size_t)n * sizeof *v);
  return sp__mlir_set_ints(p, attrs, "padding", ints);
}

/* reverse = [0, 1] or [false, true] -> window_reversal = array<i1: false, true> */
static int parse_reversal(sp__mlir_parser *p, sp_attrs *attrs) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "window reversal");
  if (rc) return rc;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb, "array<i1");
  for (int i = 0; p->lx.tok.kind != SP_TOK_RSQUARE; i++) {
    if (i && (rc = sp__mlir_expect(p, SP_TOK_COMMA, "window reversal"))) break;
    bool v;
    const sp__mlir_token *t = &p->lx.tok;
    if (sp__mlir_tok_is(t, "true") || sp__mlir_tok_is(t, "1")) v = true;
    else if (sp__mlir_tok_is(t, "false") || sp__mlir_tok_is(t, "0")) v = false;
    else {
      rc = sp__mlir_error(p, NULL, "expected 0, 1, true or false in window reversal");
      break;
    }
    sp_strbuf_puts(&sb, i ? ", " : ": ");
    sp_strbuf_puts(&sb, v ? "true" : "false");
    sp__mlir_next(p);
  }
  sp_strbuf_putc(&sb, '>');
  if (!rc) rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "window reversal");
  const char *s = rc ? NULL : sp_arena_strdup(p->a, sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  if (rc) return rc;
  return s ? sp__mlir_set_text(p, attrs, "window_reversal", s) : sp__mlir_oom(p);
}

int sp__mlir_parse_convolution(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)) ||
      (rc = sp__mlir_parse_literal(p, "dim_numbers =", h->name)) ||
      (rc = sp__mlir_parse_conv_dims(p, &attrs)) ||
      (rc = sp__mlir_parse_literal(p, ", window = {", h->name)))
    return rc;
  if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      sp_ints v;
      if (sp__mlir_accept_word(p, "stride")) {
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "window")) ||
            (rc = sp__mlir_parse_int_list(p, &v, "window")) ||
            (rc = sp__mlir_set_ints(p, &attrs, "window_strides", v)))
          return rc;
      } else if (sp__mlir_accept_word(p, "pad")) {
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "window")) || (rc = parse_pad_pairs(p, &attrs)))
          return rc;
      } else if (sp__mlir_accept_word(p, "lhs_dilate")) {
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "window")) ||
            (rc = sp__mlir_parse_int_list(p, &v, "window")) ||
            (rc = sp__mlir_set_ints(p, &attrs, "lhs_dilation", v)))
          return rc;
      } else if (sp__mlir_accept_word(p, "rhs_dilate")) {
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "window")) ||
            (rc = sp__mlir_parse_int_list(p, &v, "window")) ||
            (rc = sp__mlir_set_ints(p, &attrs, "rhs_dilation", v)))
          return rc;
      } else if (sp__mlir_accept_word(p, "reverse")) {
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "window")) || (rc = parse_reversal(p, &attrs)))
          return rc;
      } else {
        return sp__mlir_error(p, NULL, "expected stride, pad, lhs_dilate, rhs_dilate or reverse in window");
      }
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "window")))
    return rc;
  return sp__mlir_finish_op(p, h, &vals, 0, NULL, &attrs, out);
}

bool sp__mlir_print_convolution(sp__mlir_writer *w, const sp_op *op) {
  int64_t x;
  if (op->noperands != 2 || op->nresults != 1 || op->nregions ||
      !sp_op_get_int(op, "input_batch_dimension", &x))
    return false;
  static const char *const elided[] = {
      "dimension_numbers", "input_batch_dimension", "input_feature_dimension",
      "input_spatial_dimensions", "kernel_input_feature_dimension",
      "kernel_output_feature_dimension", "kernel_spatial_dimensions", "output_batch_dimension",
      "output_feature_dimension", "output_spatial_dimensions", "window_strides", "padding",
      "lhs_dilation", "rhs_dilation", "window_reversal", NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_puts(w, ") dim_numbers = ");
  sp__mlir_w_conv_dims(w, op);
  sp__mlir_w_puts(w, ", window = {");
  bool first = true;
  static const struct { const char *attr, *label; } lists[] = {
      {"window_strides", "stride"}, {"padding", "pad"}, {"lhs_dilation", "lhs_dilate"},
      {"rhs_dilation", "rhs_dilate"}};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
    sp_ints v;
    if (!sp_op_get_ints(op, lists[i].attr, &v)) continue;
    sp_strbuf_printf(w->out, "%s%s = ", first ? "" : ", ", lists[i].label);
    first = false;
    if (strcmp(lists[i].attr, "padding") == 0) {
      sp__mlir_w_putc(w, '[');
      for (int k = 0; k + 1 < v.n; k += 2)
        sp_strbuf_printf(w->out, "%s[%lld, %lld]", k ? ", " : "", (long long)v.v[k], (long long)v.v[k + 1]);
      sp__mlir_w_putc(w, ']');
    } else {
      sp__mlir_print_int_list(w, &v);
    }
  }
  const char *rev = sp_op_get_str(op, "window_reversal");
  if (rev && strncmp(rev, "array<i1", 8) == 0) {
    sp_strbuf_printf(w->out, "%sreverse = [", first ? "" : ", ");
    const char *s = rev + 8;
    for (bool f = true; (s = strpbrk(s, "tf")); f = false) {
      sp__mlir_w_puts(w, f ? "" : ", ");
      sp__mlir_w_putc(w, *s == 't' ? '1' : '0');
      s += *s == 't' ? 4 : 5;
    }
    sp__mlir_w_putc(w, ']');
  }
  sp__mlir_w_putc(w, '}');
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
  return true;
}
