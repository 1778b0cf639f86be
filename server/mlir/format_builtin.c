/*
 * format_builtin.c - custom syntax of module, func.func, func.return and func.call (see
 * format_int.h).
 *
 *   module @name attributes {...} { ... }
 *   func.func private @f(%arg0: T {sdy.sharding = ...}) -> (T {attrs}, T) attributes {...} {..}
 *   func.func private @decl(T, T) -> T
 *   return %a, %b : T, T            call @f(%a) {attrs} : (T) -> T
 */
#include <pthread.h>
#include <string.h>

#include "mlir/format_int.h"
#include "mlir/spelling_int.h"

static int set_str(sp__mlir_parser *p, sp_attrs *dst, const char *name, const char *v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_STR, .u.s = v};
  return sp__mlir_set_attr(p, dst, &at);
}

/* ------------------------------------------------------------------ module */

static int parse_module(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp_attrs attrs = {0};
  int rc;
  if (p->lx.tok.kind == SP_TOK_AT) {
    const char *name;
    if ((rc = sp__mlir_parse_symbol(p, &name)) || (rc = set_str(p, &attrs, "sym_name", name)))
      return rc;
  }
  if (sp__mlir_accept_word(p, "attributes") &&
      (rc = sp__mlir_parse_attr_dict_body(p, SP_OP_MODULE, &attrs)))
    return rc;
  sp_region *body;
  if ((rc = sp__mlir_parse_isolated_region(p, NULL, &body))) return rc;
  if (body->nblocks == 0 && !sp_region_add_block(p->a, body)) return sp__mlir_oom(p);
  return sp__mlir_build_op(p, h, 0, NULL, 0, NULL, 1, &body, &attrs, out);
}

static bool print_module(sp__mlir_writer *w, const sp_op *op) {
  if (op->nregions != 1) return false;
  static const char *const elided[] = {"sym_name", NULL};
  sp__mlir_w_puts(w, "module");
  const char *name = sp_op_get_str(op, "sym_name");
  if (name) {
    sp__mlir_w_putc(w, ' ');
    sp__mlir_put_symbol(w->out, name);
  }
  sp__mlir_w_attr_dict(w, op, elided, true);
  sp__mlir_w_putc(w, ' ');
  sp__mlir_w_region(w, &op->regions[0], false);
  return true;
}

/* ------------------------------------------------------------------ func.func */

/* One result of a signature: type and optional attributes. */
static int parse_result(sp__mlir_parser *p, sp__mlir_args *results, bool attrs_allowed) {
  sp__mlir_arg r;
  memset(&r, 0, sizeof r);
  int rc = sp__mlir_parse_type(p, &r.type);
  if (rc) return rc;
  if (attrs_allowed && p->lx.tok.kind == SP_TOK_LBRACE) {
    if ((rc = sp__mlir_parse_attr_dict_body(p, SP_OP_UNKNOWN, &r.attrs))) return rc;
    sp_attr *sh = sp_attrs_get(&r.attrs, "sdy.sharding");
    if (sh && sh->kind == SP_ATTR_SHARDING) {
      r.sharding = sh->u.sharding;
      sp_attrs_remove(&r.attrs, "sdy.sharding");
    }
  }
  return sp__mlir_args_push(p, results, &r);
}

/* Declaration arguments: (T {attrs}, T) */
static int parse_decl_args(sp__mlir_parser *p, sp__mlir_args *args) {
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "function signature");
  if (rc) return rc;
  if (sp__mlir_accept(p, SP_TOK_RPAREN)) return SP_OK;
  for (;;) {
    if ((rc = parse_result(p, args, true))) return rc;
    if ((rc = sp__mlir_skip_loc(p))) return rc;
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
  }
  return sp__mlir_expect(p, SP_TOK_RPAREN, "function signature");
}

static int fill_func_info(sp__mlir_parser *p, const sp__mlir_args *args,
                          const sp__mlir_args *results, bool has_body, sp_func_info *fi) {
  fi->nargs = args->n;
  fi->nresults = results->n;
  if (args->n) {
    fi->arg_types = sp_arena_alloc(p->a, (size_t)args->n * sizeof *fi->arg_types);
    if (!fi->arg_types) return sp__mlir_oom(p);
    for (int i = 0; i < args->n; i++) fi->arg_types[i] = args->v[i].type;
    if (!has_body) {
      fi->decl_arg_attrs = sp_arena_calloc(p->a, (size_t)args->n, sizeof *fi->decl_arg_attrs);
      if (!fi->decl_arg_attrs) return sp__mlir_oom(p);
      for (int i = 0; i < args->n; i++) {
        fi->decl_arg_attrs[i] = args->v[i].attrs;
        if (args->v[i].sharding) {
          sp_attr at = {.name = "sdy.sharding", .kind = SP_ATTR_SHARDING,
                        .u.sharding = args->v[i].sharding};
          int rc = sp__mlir_set_attr(p, &fi->decl_arg_attrs[i], &at);
          if (rc) return rc;
        }
      }
    }
  }
  if (results->n) {
    fi->result_types = sp_arena_alloc(p->a, (size_t)results->n * sizeof *fi->result_types);
    fi->result_shardings = sp_arena_calloc(p->a, (size_t)results->n, sizeof *fi->result_shardings);
    fi->result_attrs = sp_arena_calloc(p->a, (size_t)results->n, sizeof *fi->result_attrs);
    if (!fi->result_types || !fi->result_shardings || !fi->result_attrs) return sp__mlir_oom(p);
    for (int i = 0; i < results->n; i++) {
      fi->result_types[i] = results->v[i].type;
      fi->result_shardings[i] = results->v[i].sharding;
      fi->result_attrs[i] = results->v[i].attrs;
    }
  }
  return SP_OK;
}

static int parse_func(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp_attrs attrs = {0};
  sp__mlir_args args = {0}, results = {0};
  int rc;
  static const char *const vis[] = {"private", "public", "nested"};
  for (size_t i = 0; i < sizeof vis / sizeof vis[0]; i++)
    if (sp__mlir_accept_word(p, vis[i]) && (rc = set_str(p, &attrs, "sym_visibility", vis[i])))
      return rc;
  const char *name;
  if ((rc = sp__mlir_parse_symbol(p, &name)) || (rc = set_str(p, &attrs, "sym_name", name)))
    return rc;
  /* Definitions name their arguments; declarations list types only. */
  sp__mlir_lexer saved = p->lx;
  bool named = sp__mlir_accept(p, SP_TOK_LPAREN) && p->lx.tok.kind == SP_TOK_PERCENT;
  p->lx = saved;
  if ((rc = named ? sp__mlir_parse_arg_list(p, &args) : parse_decl_args(p, &args))) return rc;
  if (sp__mlir_accept(p, SP_TOK_ARROW)) {
    if (sp__mlir_accept(p, SP_TOK_LPAREN)) {
      if (p->lx.tok.kind != SP_TOK_RPAREN) {
        for (;;) {
          if ((rc = parse_result(p, &results, true))) return rc;
          if ((rc = sp__mlir_skip_loc(p))) return rc;
          if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
        }
      }
      if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "function results"))) return rc;
    } else if ((rc = parse_result(p, &results, false))) {
      return rc;
    }
  }
  if (sp__mlir_accept_word(p, "attributes") &&
      (rc = sp__mlir_parse_attr_dict_body(p, SP_OP_FUNC, &attrs)))
    return rc;
  sp_region *body = NULL;
  if (p->lx.tok.kind == SP_TOK_LBRACE) {
    if (!named && args.n)
      return sp__mlir_error(p, NULL, "a function with a body must name its arguments");
    if ((rc = sp__mlir_parse_isolated_region(p, &args, &body))) return rc;
  } else if (named) {
    return sp__mlir_expect(p, SP_TOK_LBRACE, "function body");
  }
  sp_func_info *fi = sp_arena_calloc(p->a, 1, sizeof *fi);
  if (!fi) return sp__mlir_oom(p);
  if ((rc = fill_func_info(p, &args, &results, body != NULL, fi))) return rc;
  if ((rc = sp__mlir_build_op(p, h, 0, NULL, 0, NULL, body ? 1 : 0, &body, &attrs, out))) return rc;
  (*out)->func = fi;
  if (body && body->nblocks)
    for (int i = 0; i < args.n; i++) fi->arg_types[i] = (*out)->regions[0].blocks[0]->args[i]->type;
  return SP_OK;
}

static bool print_func(sp__mlir_writer *w, const sp_op *op) {
  const sp_func_info *fi = op->func;
  const char *name = sp_op_get_str(op, "sym_name");
  if (!fi || !name || op->nregions > 1) return false;
  const sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
  if (entry && entry->nargs != fi->nargs) return false;
  static const char *const elided[] = {"sym_name", "sym_visibility", "function_type",
                                       "arg_attrs", "res_attrs", NULL};
  sp__mlir_w_puts(w, "func.func ");
  const char *vis = sp_op_get_str(op, "sym_visibility");
  if (vis) {
    sp__mlir_w_puts(w, vis);
    sp__mlir_w_putc(w, ' ');
  }
  sp__mlir_put_symbol(w->out, name);
  sp__mlir_w_putc(w, '(');
  for (int i = 0; i < fi->nargs; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    if (entry) {
      sp__mlir_w_arg_decl(w, entry->args[i]);
    } else {
      sp__mlir_w_type(w, fi->arg_types[i]);
      if (fi->decl_arg_attrs) sp__mlir_w_value_attrs(w, NULL, &fi->decl_arg_attrs[i]);
    }
  }
  sp__mlir_w_putc(w, ')');
  if (fi->nresults) {
    bool any_attrs = false;
    for (int i = 0; i < fi->nresults; i++)
      if ((fi->result_shardings && fi->result_shardings[i]) ||
          (fi->result_attrs && fi->result_attrs[i].n))
        any_attrs = true;
    bool parens = fi->nresults > 1 || any_attrs;
    sp__mlir_w_puts(w, parens ? " -> (" : " -> ");
    for (int i = 0; i < fi->nresults; i++) {
      if (i) sp__mlir_w_puts(w, ", ");
      sp__mlir_w_type(w, fi->result_types[i]);
      sp__mlir_w_value_attrs(w, fi->result_shardings ? fi->result_shardings[i] : NULL,
                             fi->result_attrs ? &fi->result_attrs[i] : NULL);
    }
    if (parens) sp__mlir_w_putc(w, ')');
  }
  sp__mlir_w_attr_dict(w, op, elided, true);
  if (op->nregions) {
    sp__mlir_w_putc(w, ' ');
    sp__mlir_w_region(w, &op->regions[0], false);
  }
  return true;
}

/* ------------------------------------------------------------------ return and call */

/* Is the `%name` under the cursor the result of the next op (`%3 = ...`, `%3:2 = ...`) rather
 * than an operand? Only matters for a terminator without operands that is followed by more
 * ops, which the verifier rejects but the printer can show. */
static bool starts_next_op(sp__mlir_parser *p) {
  sp__mlir_lexer saved = p->lx;
  bool next = false;
  while (p->lx.tok.kind == SP_TOK_PERCENT) {
    sp__mlir_next(p);
    if (p->lx.tok.kind == SP_TOK_HASH) sp__mlir_next(p); /* %x#1 */
    if (p->lx.tok.kind == SP_TOK_COLON) {                  /* %x:2 = (a result group) */
      sp__mlir_next(p);
      next = p->lx.tok.kind == SP_TOK_INT;
      break;
    }
    if (p->lx.tok.kind == SP_TOK_EQUAL) {
      next = true;
      break;
    }
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
  }
  p->lx = saved;
  return next;
}

/* `%a, %b {attrs} : T, T` (shared by func.return, stablehlo.return and sdy.return). */
int sp__mlir_parse_return_like(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types types = {0};
  sp_attrs attrs = {0};
  int rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if (!starts_next_op(p) && (rc = sp__mlir_parse_operand_list(p, &vals))) return rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if (vals.n) {
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, h->name))) return rc;
    if ((rc = sp__mlir_parse_type_list(p, &types))) return rc;
    if (types.n != vals.n)
      return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but %d types", h->name,
                            vals.n, types.n);
    for (int i = 0; i < vals.n; i++)
      if (!sp_type_equal(vals.v[i]->type, types.v[i]))
        return sp__mlir_error(p, &h->name_tok, "type of operand #%d of '%s' does not match its definition",
                              i, h->name);
  }
  return sp__mlir_build_op(p, h, vals.n, vals.v, 0, NULL, 0, NULL, &attrs, out);
}

bool sp__mlir_print_return_like(sp__mlir_writer *w, const sp_op *op) {
  if (op->nresults || op->nregions) return false;
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_attr_dict(w, op, NULL, false);
  if (op->noperands) {
    sp__mlir_w_operands_lead(w, op);
    sp__mlir_w_puts(w, " : ");
    sp__mlir_w_operand_types(w, op, 0, op->noperands);
  }
  return true;
}

static int parse_call(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  int rc;
  sp_attr callee = {.name = "callee", .kind = SP_ATTR_SYMBOL};
  if ((rc = sp__mlir_parse_symbol(p, &callee.u.s)) || (rc = sp__mlir_set_attr(p, &attrs, &callee)))
    return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, "call")) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, "call")) ||
      (rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, "call")) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  if (ins.n != vals.n)
    return sp__mlir_error(p, &h->name_tok, "call has %d operands but its type lists %d", vals.n, ins.n);
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, 0, NULL, &attrs, out);
}

static bool print_call(sp__mlir_writer *w, const sp_op *op) {
  const char *callee = sp_op_get_str(op, "callee");
  if (!callee || op->nregions) return false;
  sp__mlir_w_symbol_call(w, op, "callee", callee);
  return true;
}

const sp__mlir_format sp__mlir_builtin_formats[] = {
    {SP_OP_MODULE, parse_module, print_module},
    {SP_OP_FUNC, parse_func, print_func},
    {SP_OP_FUNC_RETURN, sp__mlir_parse_return_like, sp__mlir_print_return_like},
    {SP_OP_FUNC_CALL, parse_call, print_call},
    {SP_OP_UNKNOWN, NULL, NULL}};

/* ------------------------------------------------------------------ the table */

/* Filled once, under pthread_once, from the constant tables above; read-only afterwards, so
 * any number of threads may parse and print at once. */
static const sp__mlir_format *format_index[SP_OP_KIND_COUNT];
static pthread_once_t format_index_once = PTHREAD_ONCE_INIT;

static void build_format_index(void) {
  const sp__mlir_format *tables[] = {sp__mlir_builtin_formats, sp__mlir_sdy_formats,
                                     sp__mlir_sdy_collective_formats, sp__mlir_stablehlo_formats};
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const sp__mlir_format *f = tables[t]; f->kind != SP_OP_UNKNOWN; f++)
      format_index[f->kind] = f;
}

const sp__mlir_format *sp__mlir_format_for(sp_op_kind kind) {
  pthread_once(&format_index_once, build_format_index);
  return kind > 0 && kind < SP_OP_KIND_COUNT ? format_index[kind] : NULL;
}
