/*
 * reader.c - the structure of an MLIR module as the reader sees it: operations (bound result
 * names, generic or custom form), blocks and regions, argument lists, the top level (aliases
 * and ops) and sp_mlir_parse itself (see reader_int.h and mlir.h).
 *
 * The other reader files: reader_tokens.c (errors, tokens, literals), reader_names.c (interned
 * names, aliases, SSA scopes), reader_generic.c (building ops, generic and fallback forms),
 * type_reader.c, attr_*.c and format_*.c (see reader_int.h).
 *
 * Memory: the module and its IR are returned to the caller, who frees them with
 * sp_module_free(); everything temporary lives in an arena freed before sp_mlir_parse returns.
 */
#include "mlir/reader_int.h"

#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/format_int.h"
#include "mlir/mlir.h"

/* ------------------------------------------------------------------ argument lists */

int sp__mlir_parse_arg_list(sp__mlir_parser *p, sp__mlir_args *out) {
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "argument list");
  if (rc) return rc;
  if (sp__mlir_accept(p, SP_TOK_RPAREN)) return SP_OK;
  for (;;) {
    sp__mlir_arg arg;
    memset(&arg, 0, sizeof arg);
    arg.name = p->lx.tok;
    if (arg.name.kind != SP_TOK_PERCENT) {
      if (sp__mlir_check_token(p)) return SP_EINVAL;
      return sp__mlir_error(p, NULL, "expected argument name in argument list");
    }
    sp__mlir_next(p);
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, "argument list"))) return rc;
    if ((rc = sp__mlir_parse_type(p, &arg.type))) return rc;
    if (p->lx.tok.kind == SP_TOK_LBRACE) {
      if ((rc = sp__mlir_parse_attr_dict_body(p, SP_OP_UNKNOWN, &arg.attrs))) return rc;
      sp_attr *sh = sp_attrs_get(&arg.attrs, "sdy.sharding");
      if (sh && sh->kind == SP_ATTR_SHARDING) {
        arg.sharding = sh->u.sharding;
        sp_attrs_remove(&arg.attrs, "sdy.sharding");
      }
    }
    if ((rc = sp__mlir_skip_loc(p))) return rc;
    if ((rc = sp__mlir_args_push(p, out, &arg))) return rc;
    if (sp__mlir_accept(p, SP_TOK_COMMA)) continue;
    return sp__mlir_expect(p, SP_TOK_RPAREN, "argument list");
  }
}

/* ------------------------------------------------------------------ regions */

static int parse_operation(sp__mlir_parser *p, sp_block *b);

static int add_block_args(sp__mlir_parser *p, sp_block *b, const sp__mlir_args *args) {
  for (int i = 0; i < args->n; i++) {
    sp_value *v = sp_block_add_arg(p->a, b, args->v[i].type);
    if (!v) return sp__mlir_oom(p);
    v->attrs = args->v[i].attrs;
    v->sharding = args->v[i].sharding;
    v->loc.line = p->first_line + args->v[i].name.line - 1;
    v->loc.col = args->v[i].name.col;
    int rc = sp__mlir_names_define(p, &args->v[i].name, v, 1);
    if (rc) return rc;
  }
  return SP_OK;
}

/* `^bb3(%a: T, ...):` (the caret token is current). */
static int parse_block_header(sp__mlir_parser *p, sp_block *b) {
  sp__mlir_next(p);
  if (p->lx.tok.kind == SP_TOK_LPAREN) {
    sp__mlir_args args = {0};
    int rc = sp__mlir_parse_arg_list(p, &args);
    if (rc) return rc;
    if ((rc = add_block_args(p, b, &args))) return rc;
  }
  return sp__mlir_expect(p, SP_TOK_COLON, "block label");
}

static int parse_block_ops(sp__mlir_parser *p, sp_block *b) {
  for (;;) {
    sp__mlir_tok_kind k = p->lx.tok.kind;
    if (k == SP_TOK_RBRACE || k == SP_TOK_CARET) return SP_OK;
    if (k == SP_TOK_EOF) return sp__mlir_error(p, NULL, "expected '}' to end region, got end of input");
    int rc = parse_operation(p, b);
    if (rc) return rc;
  }
}

static int parse_region_common(sp__mlir_parser *p, const sp__mlir_args *args, bool isolated,
                               sp_region **out) {
  int rc = sp__mlir_expect(p, SP_TOK_LBRACE, "region");
  if (rc) return rc;
  if ((rc = sp__mlir_enter(p))) return rc;
  sp_region *r = sp_arena_calloc(p->a, 1, sizeof *r);
  if (!r) return sp__mlir_oom(p);
  int mark = sp__mlir_names_mark(p);
  if (isolated && (rc = sp__mlir_names_push_isolated(p))) return rc;
  bool empty = p->lx.tok.kind == SP_TOK_RBRACE;
  if (!empty || args) {
    sp_block *b = sp_region_add_block(p->a, r);
    if (!b) return sp__mlir_oom(p);
    if (args) {
      if ((rc = add_block_args(p, b, args))) return rc;
    } else if (p->lx.tok.kind == SP_TOK_CARET) {
      if ((rc = parse_block_header(p, b))) return rc;
    }
    if ((rc = parse_block_ops(p, b))) return rc;
    while (p->lx.tok.kind == SP_TOK_CARET) {
      if (!(b = sp_region_add_block(p->a, r))) return sp__mlir_oom(p);
      if ((rc = parse_block_header(p, b)) || (rc = parse_block_ops(p, b))) return rc;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "region"))) return rc;
  if (isolated) sp__mlir_names_pop_isolated(p);
  else sp__mlir_names_truncate(p, mark);
  sp__mlir_leave(p);
  *out = r;
  return SP_OK;
}

int sp__mlir_parse_region(sp__mlir_parser *p, const sp__mlir_args *args, sp_region **out) {
  return parse_region_common(p, args, false, out);
}

int sp__mlir_parse_isolated_region(sp__mlir_parser *p, const sp__mlir_args *args,
                                   sp_region **out) {
  return parse_region_common(p, args, true, out);
}


/* ------------------------------------------------------------------ operations */

typedef struct bound_name {
  sp__mlir_token tok;
  int count;
} bound_name;

/* A generic op name is `dialect.op` made of identifier characters. */
bool sp__mlir_valid_op_name(const char *s, size_t n) {
  if (n == 0 || n > SP_MAX_IDENT || !memchr(s, '.', n) || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++)
    if (!sp__mlir_is_id_char((unsigned char)s[i])) return false;
  return true;
}

/* Full op name for a bare custom-syntax name: `return` inside a func is func.return. */
static const char *resolve_op_name(sp__mlir_parser *p, const sp__mlir_token *t) {
  static const struct { const char *bare, *full; } defaults[] = {
      {"module", "builtin.module"}, {"return", "func.return"}, {"call", "func.call"},
      {"func", "func.func"}};
  if (!memchr(t->p, '.', t->n)) {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
      if (sp__mlir_tok_is(t, defaults[i].bare)) return defaults[i].full;
    return NULL;
  }
  return sp__mlir_valid_op_name(t->p, t->n) ? sp__mlir_intern(p, t->p, t->n) : NULL;
}

/* ------------------------------------------------------------------ dialects */

bool sp__mlir_dialect_registered(const char *name, size_t n) {
  static const char *const registered[] = {"builtin", "func", "sdy", "stablehlo",
                                           "chlo", "mhlo", "arith"};
  const char *dot = memchr(name, '.', n);
  size_t k = dot ? (size_t)(dot - name) : n;
  for (size_t i = 0; i < sizeof registered / sizeof registered[0]; i++)
    if (strlen(registered[i]) == k && memcmp(registered[i], name, k) == 0) return true;
  return false;
}

int sp__mlir_check_dialect_symbol(sp__mlir_parser *p, const sp__mlir_token *at, const char *s,
                                  size_t n) {
  if (p->dialects != SP_MLIR_REGISTERED_DIALECTS || n < 2) return SP_OK;
  const char *dot = memchr(s, '.', n);
  if (!dot || sp__mlir_dialect_registered(s + 1, n - 1)) return SP_OK;
  /* MLIR keeps it as an opaque attribute or type, #foo<"data"> / !foo<"data">, whose verifier
   * refuses a dialect that is not loaded. */
  int k = (int)(dot - s - 1), m = (int)(s + n - dot - 1);
  static const char tail[] = "created with unregistered dialect. If this is intended, please call "
                             "allowUnregisteredDialects() on the MLIRContext, or use "
                             "-allow-unregistered-dialect with the MLIR opt tool used";
  if (s[0] == '!')
    return sp__mlir_error(p, at, "`!%.*s<\"%.*s\">` type %s", k, s + 1, m, dot + 1, tail);
  return sp__mlir_error(p, at, "#%.*s<\"%.*s\"> : none attribute %s", k, s + 1, m, dot + 1, tail);
}

static int parse_bound_names(sp__mlir_parser *p, bound_name **names, int *n, int *total) {
  int cap = 0;
  *n = *total = 0;
  *names = NULL;
  for (;;) {
    bound_name bn;
    bn.tok = p->lx.tok;
    bn.count = 1;
    sp__mlir_next(p);
    if (sp__mlir_accept(p, SP_TOK_COLON)) {
      int64_t c;
      int rc = sp__mlir_parse_int(p, &c, "result group");
      if (rc) return rc;
      if (c < 1 || c > SP_MAX_OPERANDS)
        return sp__mlir_error(p, &bn.tok, "invalid result count %lld", (long long)c);
      bn.count = (int)c;
    }
    if (sp_arena_grow(p->tmp, (void **)names, &cap, *n, sizeof **names)) return sp__mlir_oom(p);
    (*names)[(*n)++] = bn;
    *total += bn.count;
    if (*total > SP_MAX_OPERANDS)
      return sp__mlir_error_code(p, SP_ELIMIT, &bn.tok, "more than SP_MAX_OPERANDS results");
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    if (p->lx.tok.kind != SP_TOK_PERCENT) {
      if (sp__mlir_check_token(p)) return SP_EINVAL;
      return sp__mlir_error(p, NULL, "expected SSA value name in result list");
    }
  }
  return sp__mlir_expect(p, SP_TOK_EQUAL, "operation result list");
}

static int parse_operation(sp__mlir_parser *p, sp_block *b) {
  bound_name *names = NULL;
  int nnames = 0, total = 0, rc;
  if (p->lx.tok.kind == SP_TOK_PERCENT &&
      (rc = parse_bound_names(p, &names, &nnames, &total)))
    return rc;
  sp__mlir_op_header h;
  memset(&h, 0, sizeof h);
  h.name_tok = p->lx.tok;
  h.nbound = total;
  sp_op *op = NULL;
  if (p->lx.tok.kind == SP_TOK_STRING) {
    size_t len;
    const char *name;
    if ((rc = sp__mlir_parse_string(p, &name, &len, "operation name"))) return rc;
    if (!sp__mlir_valid_op_name(name, len))
      return sp__mlir_error(p, &h.name_tok, "invalid operation name (expected dialect.op)");
    if (p->dialects == SP_MLIR_REGISTERED_DIALECTS && !sp__mlir_dialect_registered(name, len))
      return sp__mlir_error(p, &h.name_tok, "operation being parsed with an unregistered dialect. "
                            "If this is intended, please use -allow-unregistered-dialect with the "
                            "MLIR tool used");
    const char *interned = sp__mlir_intern(p, name, len);
    if (!interned) return sp__mlir_oom(p);
    h.kind = sp__mlir_op_kind_of(p, interned);
    h.name = h.kind ? sp_op_kind_name(h.kind) : interned;
    if (h.kind == SP_OP_FUNC || h.kind == SP_OP_MODULE || h.kind == SP_OP_SDY_MESH)
      return sp__mlir_error(p, &h.name_tok, "the generic form of '%s' is not supported", h.name);
    rc = sp__mlir_parse_generic_op(p, &h, &op);
  } else if (p->lx.tok.kind == SP_TOK_BARE) {
    const char *name = resolve_op_name(p, &p->lx.tok);
    if (!name)
      return sp__mlir_error(p, NULL, "unknown operation '%.*s'", (int)p->lx.tok.n, p->lx.tok.p);
    /* No dialect, no parser for its custom form: MLIR says so even when unregistered
     * dialects are allowed (their ops exist only in the generic form). */
    if (p->dialects != SP_MLIR_ANY_DIALECT && !sp__mlir_dialect_registered(name, strlen(name))) {
      const char *dot = strchr(name, '.');
      return sp__mlir_error(p, NULL, "Dialect `%.*s' not found for custom op '%s' ",
                            (int)(dot - name), name, name);
    }
    sp__mlir_next(p);
    h.kind = sp__mlir_op_kind_of(p, name);
    h.name = h.kind ? sp_op_kind_name(h.kind) : name;
    const sp__mlir_format *f = sp__mlir_format_for(h.kind);
    rc = f && f->parse ? f->parse(p, &h, &op) : sp__mlir_parse_fallback_op(p, &h, &op);
  } else {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    if (p->lx.tok.kind == SP_TOK_EOF) return sp__mlir_error(p, NULL, "expected operation, got end of input");
    char buf[64];
    return sp__mlir_error(p, NULL, "expected operation, got %s",
                          sp__mlir_tok_describe(&p->lx.tok, buf, sizeof buf));
  }
  if (rc) return rc;
  if ((rc = sp__mlir_skip_loc(p))) return rc;
  if (total && total != op->nresults)
    return sp__mlir_error(p, &h.name_tok,
                          "operation defines %d result%s but %d %s bound", op->nresults,
                          op->nresults == 1 ? "" : "s", total, total == 1 ? "is" : "are");
  int k = 0;
  for (int i = 0; i < nnames; i++) {
    if ((rc = sp__mlir_names_define(p, &names[i].tok, &op->results[k], names[i].count))) return rc;
    k += names[i].count;
  }
  sp_block_append(b, op);
  return SP_OK;
}

/* ------------------------------------------------------------------ the module */
static int parse_top_level(sp__mlir_parser *p) {
  sp_block *body = sp_module_body(p->m);
  int rc = sp__mlir_names_push_isolated(p);
  if (rc) return rc;
  while (p->lx.tok.kind != SP_TOK_EOF) {
    if ((rc = sp__mlir_check_token(p))) return rc;
    if (p->lx.tok.kind == SP_TOK_HASH || p->lx.tok.kind == SP_TOK_BANG) {
      if ((rc = sp__mlir_parse_alias_def(p))) return rc;
      continue;
    }
    if ((rc = parse_operation(p, body))) return rc;
  }
  sp__mlir_names_pop_isolated(p);
  /* A file holding exactly one `module` is that module; anything else is wrapped. */
  if (body->first && body->first == body->last && body->first->kind == SP_OP_MODULE) {
    sp_op *mod = body->first;
    sp_op_unlink(mod);
    p->m->op = mod;
  }
  return SP_OK;
}

static bool is_control(unsigned char c) { return c < 0x20 && c != '\t' && c != '\n' && c != '\r'; }

/* Sixteen bytes as one GCC vector: a comparison tests every lane at once (SSE2 on x86-64, NEON
 * on arm64, plain code elsewhere) and yields all-ones lanes where it holds. */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

static bool any_lane(bytes16 m) {
  uint64_t h[2];
  memcpy(h, &m, sizeof h);
  return (h[0] | h[1]) != 0;
}

/* The lanes of v below 0x20, and those of them that are control characters (is_control). */
static bytes16 low_lanes(bytes16 v) { return (bytes16)(v < 0x20); }
static bytes16 control_lanes(bytes16 v) {
  return (bytes16)((v < 0x20) & (v != '\t') & (v != '\n') & (v != '\r'));
}

/* The first control character of [s, s+n) (is_control), or NULL. Every byte of every module
 * goes through here, so 32 bytes at a time: a block with no byte below 0x20 (most blocks) costs
 * one compare per 16 bytes; a block with one (mostly a newline: lines run ~120 bytes) gets the
 * exact test, and only a block holding a control character is looked at byte by byte. */
static const char *control_char(const char *s, size_t n) {
  const char *q = s, *end = s + n;
  for (; end - q >= 32; q += 32) {
    bytes16 v, w;
    memcpy(&v, q, sizeof v);
    memcpy(&w, q + 16, sizeof w);
    if (!any_lane(low_lanes(v) | low_lanes(w))) continue;
    if (!any_lane(control_lanes(v) | control_lanes(w))) continue;
    break;
  }
  for (; q < end; q++)
    if (is_control((unsigned char)*q)) return q;
  return NULL;
}

int sp_mlir_parse(const char *text, size_t len, const char *filename, int first_line,
                  sp_module **out, sp_err *err) {
  return sp_mlir_parse_dialects(text, len, filename, first_line, SP_MLIR_ANY_DIALECT, out, err);
}

int sp_mlir_parse_dialects(const char *text, size_t len, const char *filename, int first_line,
                           sp_mlir_dialects d, sp_module **out, sp_err *err) {
  *out = NULL;
  sp_err_clear(err);
  if (!filename) filename = "<input>";
  if (first_line < 1) first_line = 1;
  if (len > (size_t)SP_MAX_INPUT_BYTES)
    return sp_err_set(err, SP_ELIMIT, "%s: input of %zu bytes exceeds SP_MAX_INPUT_BYTES",
                      filename, len);
  /* Control characters other than tab, newline and carriage return are not MLIR (its lexer
   * stops at them); a NUL would also end the C strings verbatim attributes are kept in. */
  const char *bad = control_char(text, len);
  if (bad) {
    int line = first_line;
    const char *bol = text;
    for (const char *q = text; q < bad; q++)
      if (*q == '\n') line++, bol = q + 1;
    return sp_err_set(err, SP_EINVAL, "%s:%d:%d: unexpected character", filename, line,
                      (int)(bad - bol) + 1);
  }
  sp__mlir_parser p;
  memset(&p, 0, sizeof p);
  p.err = err;
  p.dialects = d;
  p.filename = filename;
  p.first_line = first_line;
  p.m = sp_module_new(filename);
  p.tmp = sp_arena_new(0);
  if (!p.m || !p.tmp || sp__mlir_tables_new(&p)) {
    sp_module_free(p.m);
    sp_arena_free(p.tmp);
    return sp_err_set(err, SP_ENOMEM, "%s: out of memory", filename);
  }
  p.a = p.m->arena;
  sp__mlir_lex_init(&p.lx, text, len);
  int rc = parse_top_level(&p);
  sp_arena_free(p.tmp);
  if (rc) {
    sp_module_free(p.m);
    return rc;
  }
  *out = p.m;
  return SP_OK;
}
