/*
 * format_sdy_collectives.c - custom syntax of the sdy collective ops (see format_int.h):
 *
 *   %1 = sdy.all_gather [{}, {"x"}] %0 out_sharding=<@m, [{"y"}, {}]> : T
 *   %1 = sdy.all_slice [{}, {"x"}] %0 out_sharding=<@m, [...]> : T
 *   %1 = sdy.all_to_all [{"x"}: 0->1, {"y"}: 1->3] %0 out_sharding=<@m, [...]> : T
 *   %1 = sdy.collective_permute %0 out_sharding=<@m, [...]> : T
 *   %1 = sdy.all_reduce [max] {"y"} %0 out_sharding=<@m, [...]> : T
 *   %1 = sdy.reduce_scatter [max] [{}, {"y"}] %0 out_sharding=<@m, [...]> : T
 *   %1 = sdy.sharded_to_unreduced [{"x"}, {}] %0 out_sharding=<@m, [...], unreduced={"x"}> : T
 *   %1 = sdy.replicated_to_unreduced {"x"} %0 out_sharding=<@m, [...], unreduced={"x"}> : T
 *
 * Operand and result have the same type. The op-specific operand (axes, params) is an
 * attribute under the name op_attrs.h gives; the optional reduction kind (`max`, `min`; `sum`
 * is the default and never printed) is the ENUM attribute "reduction_kind"; out_sharding is
 * moved onto the result by the reader (ir.h). An optional attribute dictionary follows the
 * sharding. Everything parsed lives in the parser's arena.
 */
#include <string.h>

#include "mlir/format_int.h"

/* What sits between the op name and the operand. */
typedef enum lead_kind {
  LEAD_NONE,          /* collective_permute */
  LEAD_AXES,          /* {"x", "y"} */
  LEAD_DIM_AXES,      /* [{"x"}, {}] */
  LEAD_ALL_TO_ALL     /* [{"x"}: 0->1, ...] */
} lead_kind;

typedef struct collective_syntax {
  sp_op_kind kind;
  lead_kind lead;
  const char *attr;        /* the lead's attribute name */
  bool reduction_kind;     /* takes an optional `max` / `min` / `sum` first */
} collective_syntax;

static const collective_syntax syntaxes[] = {
    {SP_OP_SDY_ALL_GATHER, LEAD_DIM_AXES, "gathering_axes", false},
    {SP_OP_SDY_ALL_SLICE, LEAD_DIM_AXES, "slicing_axes", false},
    {SP_OP_SDY_ALL_TO_ALL, LEAD_ALL_TO_ALL, "params", false},
    {SP_OP_SDY_COLLECTIVE_PERMUTE, LEAD_NONE, NULL, false},
    {SP_OP_SDY_ALL_REDUCE, LEAD_AXES, "reduction_axes", true},
    {SP_OP_SDY_REDUCE_SCATTER, LEAD_DIM_AXES, "reduce_scatter_axes", true},
    {SP_OP_SDY_SHARDED_TO_UNREDUCED, LEAD_DIM_AXES, "axes", false},
    {SP_OP_SDY_REPLICATED_TO_UNREDUCED, LEAD_AXES, "axes", false},
};

static const collective_syntax *syntax_of(sp_op_kind kind) {
  for (size_t i = 0; i < sizeof syntaxes / sizeof syntaxes[0]; i++)
    if (syntaxes[i].kind == kind) return &syntaxes[i];
  return NULL;
}

/* [{"x"}, {}] */
static int parse_dim_axes(sp__mlir_parser *p, const char *context, sp_attr *at) {
  sp_dim_sharding buf[64];
  int n = 0, rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LSQUARE, context))) return rc;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (n == (int)(sizeof buf / sizeof buf[0]))
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many dimensions in '%s'", context);
      sp_dim_sharding *d = &buf[n++];
      memset(d, 0, sizeof *d);
      d->closed = true;
      d->priority = SP_NO_PRIORITY;
      if ((rc = sp__mlir_parse_axis_list(p, &d->naxes, &d->axes))) return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, context))) return rc;
  at->kind = SP_ATTR_DIM_AXES;
  at->u.dim_axes.n = n;
  at->u.dim_axes.v = n ? sp_arena_alloc(p->a, (size_t)n * sizeof *buf) : NULL;
  if (n && !at->u.dim_axes.v) return sp__mlir_oom(p);
  if (n) memcpy(at->u.dim_axes.v, buf, (size_t)n * sizeof *buf);
  return SP_OK;
}

/* [{"x"}: 0->1, {"y"}: 1->3] */
static int parse_all_to_all_params(sp__mlir_parser *p, const char *context, sp_attr *at) {
  sp_all_to_all_param buf[64];
  int n = 0, rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LSQUARE, context))) return rc;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (n == (int)(sizeof buf / sizeof buf[0]))
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many params in '%s'", context);
      sp_all_to_all_param *q = &buf[n++];
      if ((rc = sp__mlir_parse_axis_list(p, &q->naxes, &q->axes)) ||
          (rc = sp__mlir_expect(p, SP_TOK_COLON, context)) ||
          (rc = sp__mlir_parse_int(p, &q->src_dim, context)) ||
          (rc = sp__mlir_expect(p, SP_TOK_ARROW, context)) ||
          (rc = sp__mlir_parse_int(p, &q->tgt_dim, context)))
        return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, context))) return rc;
  at->kind = SP_ATTR_ALL_TO_ALL;
  at->u.all_to_all.n = n;
  at->u.all_to_all.v = n ? sp_arena_alloc(p->a, (size_t)n * sizeof *buf) : NULL;
  if (n && !at->u.all_to_all.v) return sp__mlir_oom(p);
  if (n) memcpy(at->u.all_to_all.v, buf, (size_t)n * sizeof *buf);
  return SP_OK;
}

static int parse_reduction_kind(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_attrs *attrs) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_BARE) return SP_OK;
  if (!sp__mlir_tok_is(t, "sum") && !sp__mlir_tok_is(t, "max") && !sp__mlir_tok_is(t, "min"))
    return sp__mlir_error(p, NULL, "expected a reduction kind (sum, max or min) in '%s'", h->name);
  bool sum = sp__mlir_tok_is(t, "sum");
  sp_attr at = {.name = "reduction_kind", .kind = SP_ATTR_ENUM};
  at.u.s = sp__mlir_intern(p, t->p, t->n);
  if (!at.u.s) return sp__mlir_oom(p);
  sp__mlir_next(p);
  return sum ? SP_OK : sp__mlir_set_attr(p, attrs, &at);
}

static int parse_collective(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  const collective_syntax *cs = syntax_of(h->kind);
  sp_attrs attrs = {0};
  sp_attr sh = {.name = "out_sharding", .kind = SP_ATTR_SHARDING};
  sp_value *in;
  sp_type *t;
  int rc;
  if (!cs) return sp__mlir_error(p, &h->name_tok, "'%s' is not an sdy collective", h->name);
  if (cs->reduction_kind && (rc = parse_reduction_kind(p, h, &attrs))) return rc;
  if (cs->lead != LEAD_NONE) {
    sp_attr lead = {.name = cs->attr, .kind = SP_ATTR_AXES};
    switch (cs->lead) {
      case LEAD_AXES: rc = sp__mlir_parse_axis_list(p, &lead.u.axes.n, &lead.u.axes.v); break;
      case LEAD_DIM_AXES: rc = parse_dim_axes(p, h->name, &lead); break;
      default: rc = parse_all_to_all_params(p, h->name, &lead); break;
    }
    if (rc || (rc = sp__mlir_set_attr(p, &attrs, &lead))) return rc;
  }
  if ((rc = sp__mlir_parse_operand(p, &in)) ||
      (rc = sp__mlir_expect_word(p, "out_sharding", h->name)) ||
      (rc = sp__mlir_expect(p, SP_TOK_EQUAL, h->name)) ||
      (rc = sp__mlir_parse_sharding_stripped(p, &sh.u.sharding)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &sh)) ||
      (rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) || (rc = sp__mlir_parse_type(p, &t)))
    return rc;
  return sp__mlir_build_op(p, h, 1, &in, 1, &t, 0, NULL, &attrs, out);
}

static bool print_collective(sp__mlir_writer *w, const sp_op *op) {
  const collective_syntax *cs = syntax_of(op->kind);
  if (!cs || op->noperands != 1 || op->nresults != 1 || op->nregions ||
      !op->operands[0].value || !op->results[0].sharding)
    return false;
  static const sp_attr_kind lead_kinds[] = {SP_ATTR_UNIT, SP_ATTR_AXES, SP_ATTR_DIM_AXES,
                                            SP_ATTR_ALL_TO_ALL};
  sp_attr *lead = cs->attr ? sp_op_attr(op, cs->attr) : NULL;
  if (cs->lead != LEAD_NONE && (!lead || lead->kind != lead_kinds[cs->lead])) return false;
  const char *rk = cs->reduction_kind ? sp_op_get_str(op, "reduction_kind") : NULL;
  const char *elided[] = {"sdy.sharding", "reduction_kind", cs->attr, NULL};
  sp__mlir_w_op_name(w, op);
  if (rk && strcmp(rk, "sum") != 0) {
    sp__mlir_w_putc(w, ' ');
    sp__mlir_w_puts(w, rk);
  }
  if (lead) {
    sp__mlir_w_putc(w, ' ');
    switch (cs->lead) {
      case LEAD_AXES: sp__mlir_w_attr_value(w, op->kind, lead); break;
      case LEAD_DIM_AXES: sp__mlir_w_dim_axes(w, lead->u.dim_axes.v, lead->u.dim_axes.n); break;
      default: sp__mlir_w_all_to_all_params(w, lead->u.all_to_all.v, lead->u.all_to_all.n); break;
    }
  }
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_puts(w, " out_sharding=");
  sp__mlir_w_sharding(w, op->results[0].sharding);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->results[0].type);
  return true;
}

const sp__mlir_format sp__mlir_sdy_collective_formats[] = {
    {SP_OP_SDY_ALL_GATHER, parse_collective, print_collective},
    {SP_OP_SDY_ALL_SLICE, parse_collective, print_collective},
    {SP_OP_SDY_ALL_TO_ALL, parse_collective, print_collective},
    {SP_OP_SDY_COLLECTIVE_PERMUTE, parse_collective, print_collective},
    {SP_OP_SDY_ALL_REDUCE, parse_collective, print_collective},
    {SP_OP_SDY_REDUCE_SCATTER, parse_collective, print_collective},
    {SP_OP_SDY_SHARDED_TO_UNREDUCED, parse_collective, print_collective},
    {SP_OP_SDY_REPLICATED_TO_UNREDUCED, parse_collective, print_collective},
    {SP_OP_UNKNOWN, NULL, NULL}};
