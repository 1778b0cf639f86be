/*
 * format_sdy.c - custom syntax of the sdy dialect ops (see format_int.h).
 *
 *   sdy.mesh @m = <["a"=2, "b"=4], device_ids=[...]>
 *   %1 = sdy.sharding_constraint %0 <@m, [{"a"}, {?}]> : T        (also sdy.reshard)
 *   %1 = sdy.data_flow_edge %0 sharding=<@m, [...]> : T
 *   %1 = sdy.func_data_flow_edge %0 {sdy.sharding = ...} : T
 *   %1 = sdy.propagation_barrier %0 allowed_direction=BACKWARD : T
 *   sdy.sharding_group %0 group_id=3 : T
 *   %1 = sdy.constant {attrs} dense<1.0> : T
 *   %r = sdy.manual_computation(%a) in_shardings=[..] out_shardings=[..] manual_axes={"a"}
 *          (%arg1: T) { ... } : (T) -> T
 *   %r = sdy.named_computation<"name">(%a) in_shardings=[..] out_shardings=[..] (%arg1: T) {..}
 *          : (T) -> T
 * The inline shardings are moved onto the results by the reader (ir.h) and printed from there.
 */
#include <string.h>

#include "mlir/format_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ sdy.mesh */

static int parse_mesh(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp_attrs attrs = {0};
  int rc;
  sp_attr name = {.name = "sym_name", .kind = SP_ATTR_STR};
  if ((rc = sp__mlir_parse_symbol(p, &name.u.s))) return rc;
  sp_attr mesh = {.name = "mesh", .kind = SP_ATTR_MESH};
  if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sdy.mesh"))) return rc;
  if (p->lx.tok.kind == SP_TOK_HASH && sp__mlir_tok_is(&p->lx.tok, "#sdy.mesh")) sp__mlir_next(p);
  if ((rc = sp__mlir_parse_mesh_body(p, &mesh.u.mesh)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &name)) || (rc = sp__mlir_set_attr(p, &attrs, &mesh)) ||
      (rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)))
    return rc;
  return sp__mlir_build_op(p, h, 0, NULL, 0, NULL, 0, NULL, &attrs, out);
}

static bool print_mesh(sp__mlir_writer *w, const sp_op *op) {
  const char *name = sp_op_get_str(op, "sym_name");
  sp_attr *mesh = sp_op_attr(op, "mesh");
  if (!name || !mesh || mesh->kind != SP_ATTR_MESH || op->nresults || op->noperands) return false;
  static const char *const elided[] = {"sym_name", "mesh", NULL};
  sp__mlir_w_puts(w, "sdy.mesh ");
  sp__mlir_put_symbol(w->out, name);
  sp__mlir_w_puts(w, " = ");
  sp_mesh_print(w->out, mesh->u.mesh);
  sp__mlir_w_attr_dict(w, op, elided, false);
  return true;
}

/* ------------------------------------------------------------------ single-value ops */

/* `%in` ... `attrs : T` with one operand and one result of the same type; `mid` parses the
 * op-specific part between them into `attrs`. */
typedef int (*mid_fn)(sp__mlir_parser *p, sp_attrs *attrs);

static int parse_unary_sdy(sp__mlir_parser *p, const sp__mlir_op_header *h, mid_fn mid,
                           bool has_result, sp_op **out) {
  sp_attrs attrs = {0};
  sp_value *in;
  sp_type *t;
  int rc;
  if ((rc = sp__mlir_parse_operand(p, &in))) return rc;
  if (mid && (rc = mid(p, &attrs))) return rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) || (rc = sp__mlir_parse_type(p, &t)))
    return rc;
  if (!sp_type_equal(in->type, t))
    return sp__mlir_error(p, &h->name_tok, "type of the operand of '%s' does not match its definition",
                          h->name);
  return sp__mlir_build_op(p, h, 1, &in, has_result ? 1 : 0, &t, 0, NULL, &attrs, out);
}

static int mid_sharding(sp__mlir_parser *p, sp_attrs *attrs) {
  sp_attr at = {.name = "sharding", .kind = SP_ATTR_SHARDING};
  int rc = sp__mlir_parse_sharding_stripped(p, &at.u.sharding);
  return rc ? rc : sp__mlir_set_attr(p, attrs, &at);
}

static int mid_optional_sharding(sp__mlir_parser *p, sp_attrs *attrs) {
  if (!sp__mlir_accept_word(p, "sharding")) return SP_OK;
  int rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sdy.data_flow_edge");
  return rc ? rc : mid_sharding(p, attrs);
}

static int mid_direction(sp__mlir_parser *p, sp_attrs *attrs) {
  int rc;
  if ((rc = sp__mlir_expect_word(p, "allowed_direction", "sdy.propagation_barrier")) ||
      (rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sdy.propagation_barrier")))
    return rc;
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_BARE || !(sp__mlir_tok_is(t, "FORWARD") || sp__mlir_tok_is(t, "BACKWARD") ||
                                  sp__mlir_tok_is(t, "NONE") || sp__mlir_tok_is(t, "BOTH")))
    return sp__mlir_error(p, NULL, "expected FORWARD, BACKWARD, BOTH or NONE in sdy.propagation_barrier");
  sp_attr at = {.name = "allowed_direction", .kind = SP_ATTR_ENUM};
  at.u.s = sp__mlir_intern(p, t->p, t->n);
  if (!at.u.s) return sp__mlir_oom(p);
  sp__mlir_next(p);
  return sp__mlir_set_attr(p, attrs, &at);
}

static int mid_group(sp__mlir_parser *p, sp_attrs *attrs) {
  int64_t id;
  int rc;
  if ((rc = sp__mlir_expect_word(p, "group_id", "sdy.sharding_group")) ||
      (rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sdy.sharding_group")) ||
      (rc = sp__mlir_parse_int(p, &id, "sdy.sharding_group")))
    return rc;
  return sp__mlir_set_int(p, attrs, "group_id", id);
}

static int parse_constraint(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  return parse_unary_sdy(p, h, mid_sharding, true, out);
}
static int parse_edge(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  return parse_unary_sdy(p, h, mid_optional_sharding, true, out);
}
static int parse_func_edge(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  return parse_unary_sdy(p, h, NULL, true, out);
}
static int parse_barrier(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  return parse_unary_sdy(p, h, mid_direction, true, out);
}
static int parse_group(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  return parse_unary_sdy(p, h, mid_group, false, out);
}

static bool unary_shape(const sp_op *op, int nresults) {
  return op->noperands == 1 && op->nresults == nresults && op->nregions == 0;
}

static const char *const elide_sharding[] = {"sdy.sharding", NULL};

static bool print_constraint(sp__mlir_writer *w, const sp_op *op) {
  if (!unary_shape(op, 1) || !op->results[0].sharding) return false;
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_putc(w, ' ');
  sp__mlir_w_sharding(w, op->results[0].sharding);
  sp__mlir_w_attr_dict(w, op, elide_sharding, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->results[0].type);
  return true;
}

static bool print_edge(sp__mlir_writer *w, const sp_op *op) {
  if (!unary_shape(op, 1)) return false;
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  if (op->results[0].sharding) {
    sp__mlir_w_puts(w, " sharding=");
    sp__mlir_w_sharding(w, op->results[0].sharding);
  }
  sp__mlir_w_attr_dict(w, op, elide_sharding, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->results[0].type);
  return true;
}

static bool print_func_edge(sp__mlir_writer *w, const sp_op *op) {
  if (!unary_shape(op, 1)) return false;
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_attr_dict(w, op, NULL, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->results[0].type);
  return true;
}

static bool print_barrier(sp__mlir_writer *w, const sp_op *op) {
  const char *dir = sp_op_get_str(op, "allowed_direction");
  if (!unary_shape(op, 1) || !dir) return false;
  static const char *const elided[] = {"allowed_direction", NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_puts(w, " allowed_direction=");
  sp__mlir_w_puts(w, dir);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->results[0].type);
  return true;
}

static bool print_group(sp__mlir_writer *w, const sp_op *op) {
  int64_t id;
  if (!unary_shape(op, 0) || !sp_op_get_int(op, "group_id", &id) || !op->operands[0].value)
    return false;
  static const char *const elided[] = {"group_id", NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp_strbuf_printf(w->out, " group_id=%lld", (long long)id);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_type(w, op->operands[0].value->type);
  return true;
}

/* ------------------------------------------------------------------ sdy.constant */

/* `() {value = ...} : () -> T`: the form StableHLO's parser also takes (and its printer uses
 * when the value's type is not the result's). */
static int parse_constant_call_form(sp__mlir_parser *p, const sp__mlir_op_header *h,
                                    sp_op **out) {
  sp_attrs attrs = {0};
  sp__mlir_types ins = {0}, outs = {0};
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name))) return rc;
  if (p->lx.tok.kind == SP_TOK_LESS) { /* properties: <{value = ...}> */
    sp__mlir_next(p);
    if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
        (rc = sp__mlir_expect(p, SP_TOK_GREATER, h->name)))
      return rc;
  }
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  if (ins.n != 0 || outs.n != 1 || !sp_attrs_get(&attrs, "value"))
    return sp__mlir_error(p, &h->name_tok, "'%s' takes a value and has one result", h->name);
  return sp__mlir_build_op(p, h, 0, NULL, 1, outs.v, 0, NULL, &attrs, out);
}

int sp__mlir_parse_constant_like(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  if (sp__mlir_accept(p, SP_TOK_LPAREN)) return parse_constant_call_form(p, h, out);
  sp_attrs attrs = {0};
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_type *t = NULL;
  int rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs);
  if (rc) return rc;
  sp__mlir_token at = p->lx.tok;
  rc = sp__mlir_parse_attr_text(p, &sb, false, &t);
  if (!rc && !t) rc = sp__mlir_error(p, &at, "expected a typed value (such as dense<0> : tensor<i32>) in '%s'", h->name);
  sp_attr value = {.name = "value", .kind = SP_ATTR_TEXT};
  if (!rc) {
    value.u.s = sp_arena_strndup(p->a, sp_strbuf_str(&sb), sb.len);
    if (!value.u.s) rc = sp__mlir_oom(p);
  }
  sp_strbuf_free(&sb);
  if (rc || (rc = sp__mlir_set_attr(p, &attrs, &value))) return rc;
  return sp__mlir_build_op(p, h, 0, NULL, 1, &t, 0, NULL, &attrs, out);
}

bool sp__mlir_print_constant_like(sp__mlir_writer *w, const sp_op *op) {
  sp_attr *value = sp_op_attr(op, "value");
  if (op->noperands || op->nresults != 1 || op->nregions || !value || value->kind != SP_ATTR_TEXT)
    return false;
  /* The pretty form says the type once: the value's must be the result's. */
  sp_strbuf ts = SP_STRBUF_INIT;
  sp_type_print(&ts, op->results[0].type);
  const char *v = value->u.s, *colon = strrchr(v, ':');
  bool same = sp_strbuf_ok(&ts) && colon && colon > v && colon[-1] == ' ' && colon[1] == ' ' &&
              strcmp(colon + 2, sp_strbuf_str(&ts)) == 0;
  sp_strbuf_free(&ts);
  static const char *const elided[] = {"value", NULL};
  sp__mlir_w_op_name(w, op);
  if (!same) { /* StableHLO's printer: `() <{value = ...}> : () -> T` */
    sp__mlir_w_puts(w, "() <{value = ");
    sp__mlir_w_puts(w, v);
    sp__mlir_w_puts(w, "}>");
    sp__mlir_w_attr_dict(w, op, elided, false);
    sp__mlir_w_puts(w, " : () -> ");
    sp__mlir_w_type(w, op->results[0].type);
    return true;
  }
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_putc(w, ' ');
  sp__mlir_w_puts(w, value->u.s);
  return true;
}

/* ------------------------------------------------------------------ manual / named computation */

static int parse_shardings_attr(sp__mlir_parser *p, const char *name, sp_attrs *attrs) {
  sp_attr at = {.name = name, .kind = SP_ATTR_SHARDINGS};
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, name)) ||
      (rc = sp__mlir_parse_shardings_stripped(p, &at.u.shardings.n, &at.u.shardings.v)))
    return rc;
  return sp__mlir_set_attr(p, attrs, &at);
}

/* `(%arg: T, ...) { body } {attrs} : (T) -> R`, the common tail of both computations. */
static int parse_computation_tail(sp__mlir_parser *p, const sp__mlir_op_header *h,
                                  const sp__mlir_values *vals, sp_attrs *attrs, sp_op **out) {
  sp__mlir_args args = {0};
  sp_region *body;
  int rc;
  if ((rc = sp__mlir_parse_arg_list(p, &args)) ||
      (rc = sp__mlir_parse_region(p, &args, &body)))
    return rc;
  return sp__mlir_finish_op(p, h, vals, 1, &body, attrs, out);
}

static int parse_manual(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  sp_attr axes = {.name = "manual_axes", .kind = SP_ATTR_AXES};
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)) ||
      (rc = sp__mlir_expect_word(p, "in_shardings", h->name)) ||
      (rc = parse_shardings_attr(p, "in_shardings", &attrs)) ||
      (rc = sp__mlir_expect_word(p, "out_shardings", h->name)) ||
      (rc = parse_shardings_attr(p, "out_shardings", &attrs)) ||
      (rc = sp__mlir_expect_word(p, "manual_axes", h->name)) ||
      (rc = sp__mlir_expect(p, SP_TOK_EQUAL, h->name)) ||
      (rc = sp__mlir_parse_axis_list(p, &axes.u.axes.n, &axes.u.axes.v)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &axes)))
    return rc;
  return parse_computation_tail(p, h, &vals, &attrs, out);
}

static int parse_named(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  sp_attr name = {.name = "name", .kind = SP_ATTR_STR};
  size_t len;
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LESS, h->name)) ||
      (rc = sp__mlir_parse_string(p, &name.u.s, &len, h->name)) ||
      (rc = sp__mlir_expect(p, SP_TOK_GREATER, h->name)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &name)) ||
      (rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)))
    return rc;
  if (sp__mlir_accept_word(p, "in_shardings") && (rc = parse_shardings_attr(p, "in_shardings", &attrs)))
    return rc;
  if (sp__mlir_accept_word(p, "out_shardings") && (rc = parse_shardings_attr(p, "out_shardings", &attrs)))
    return rc;
  return parse_computation_tail(p, h, &vals, &attrs, out);
}

static void print_body_args(sp__mlir_writer *w, const sp_block *b) {
  sp__mlir_w_puts(w, " (");
  for (int i = 0; i < b->nargs; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_arg_decl(w, b->args[i]);
  }
  sp__mlir_w_puts(w, ") ");
}

static bool computation_shape(const sp_op *op) {
  return op->nregions == 1 && op->regions[0].nblocks == 1;
}

static void print_computation_tail(sp__mlir_writer *w, const sp_op *op, const char *const *elided) {
  print_body_args(w, op->regions[0].blocks[0]);
  sp__mlir_w_region(w, &op->regions[0], false);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
}

static bool print_manual(sp__mlir_writer *w, const sp_op *op) {
  sp_attr *in = sp_op_attr(op, "in_shardings"), *axes = sp_op_attr(op, "manual_axes");
  bool any_out = false;
  for (int i = 0; i < op->nresults; i++) any_out |= op->results[i].sharding != NULL;
  if (!computation_shape(op) || !in || in->kind != SP_ATTR_SHARDINGS || !axes ||
      axes->kind != SP_ATTR_AXES || (op->nresults && !any_out))
    return false;
  static const char *const elided[] = {"in_shardings", "out_shardings", "manual_axes",
                                       "sdy.sharding", NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_puts(w, ") in_shardings=");
  sp__mlir_w_shardings(w, in->u.shardings.v, in->u.shardings.n);
  sp__mlir_w_puts(w, " out_shardings=");
  if (!sp__mlir_w_result_shardings(w, op)) sp__mlir_w_puts(w, "[]");
  sp__mlir_w_puts(w, " manual_axes=");
  sp__mlir_w_attr_value(w, op->kind, axes);
  print_computation_tail(w, op, elided);
  return true;
}

static bool print_named(sp__mlir_writer *w, const sp_op *op) {
  const char *name = sp_op_get_str(op, "name");
  sp_attr *in = sp_op_attr(op, "in_shardings");
  if (!computation_shape(op) || !name || (in && in->kind != SP_ATTR_SHARDINGS)) return false;
  static const char *const elided[] = {"name", "in_shardings", "out_shardings", "sdy.sharding",
                                       NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, '<');
  sp__mlir_put_string(w->out, name, strlen(name));
  sp__mlir_w_puts(w, ">(");
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_putc(w, ')');
  if (in) {
    sp__mlir_w_puts(w, " in_shardings=");
    sp__mlir_w_shardings(w, in->u.shardings.v, in->u.shardings.n);
  }
  for (int i = 0; i < op->nresults; i++) {
    if (!op->results[i].sharding) continue;
    sp__mlir_w_puts(w, " out_shardings=");
    sp__mlir_w_result_shardings(w, op);
    break;
  }
  print_computation_tail(w, op, elided);
  return true;
}

const sp__mlir_format sp__mlir_sdy_formats[] = {
    {SP_OP_SDY_MESH, parse_mesh, print_mesh},
    {SP_OP_SDY_SHARDING_CONSTRAINT, parse_constraint, print_constraint},
    {SP_OP_SDY_RESHARD, parse_constraint, print_constraint},
    {SP_OP_SDY_DATA_FLOW_EDGE, parse_edge, print_edge},
    {SP_OP_SDY_FUNC_DATA_FLOW_EDGE, parse_func_edge, print_func_edge},
    {SP_OP_SDY_PROPAGATION_BARRIER, parse_barrier, print_barrier},
    {SP_OP_SDY_SHARDING_GROUP, parse_group, print_group},
    {SP_OP_SDY_CONSTANT, sp__mlir_parse_constant_like, sp__mlir_print_constant_like},
    /* arith.constant shares the form (Shardy's tests use it as a plain producer). */
    {SP_OP_ARITH_CONSTANT, sp__mlir_parse_constant_like, sp__mlir_print_constant_like},
    {SP_OP_SDY_MANUAL_COMPUTATION, parse_manual, print_manual},
    {SP_OP_SDY_NAMED_COMPUTATION, parse_named, print_named},
    {SP_OP_SDY_RETURN, sp__mlir_parse_return_like, sp__mlir_print_return_like},
    {SP_OP_UNKNOWN, NULL, NULL}};
