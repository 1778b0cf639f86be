/*
 * type_reader.c - MLIR types: tensor<2x?x8xf32>, tensor<*xf32>, tensor<f32, #enc>, tuple<...>,
 * !stablehlo.token, and anything else (i32, !dialect.type<...>) kept as text (see reader_int.h).
 *
 * Shapes are scanned character by character: `8x8xf32` is not a sequence of MLIR tokens.
 * Each op result gets the sp_type parsed for it (results never share one), so replacing or
 * editing one result's type does not touch another; a func argument's type is shared with
 * the func's signature (ir.h). Element type names are interned.
 */
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/reader_int.h"

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_word(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* Moves the cursor past a balanced <...> starting at the cursor ('<' under it), honouring
 * strings and the '->' arrow. */
static int skip_balanced_angle(sp__mlir_parser *p, const char *what) {
  sp__mlir_lexer *lx = &p->lx;
  int depth = 0;
  while (lx->cur < lx->end) {
    char c = *lx->cur;
    if (c == '\n') {
      sp__mlir_lex_skip_space(lx);
      continue;
    }
    const char *piece;
    size_t len;
    bool closed;
    int rc = sp__mlir_scan_bracketed(p, what, &depth, &piece, &len, &closed);
    if (rc || closed) return rc;
  }
  return sp__mlir_error_here(p, "expected '>' to end %s, got end of input", what);
}

/* Element type at the cursor: f32, bf16, i1, ui32, complex<f32>, f8E4M3FN, !quant.uniform<..>. */
static int scan_elem_type(sp__mlir_parser *p, const char **out) {
  sp__mlir_lexer *lx = &p->lx;
  const char *start = lx->cur;
  if (sp__mlir_lex_peek(lx) == '!') lx->cur++;
  while (lx->cur < lx->end && (is_word((unsigned char)*lx->cur) || *lx->cur == '.')) lx->cur++;
  if (lx->cur == start || (lx->cur == start + 1 && *start == '!'))
    return sp__mlir_error_here(p, "expected element type in tensor type");
  if (sp__mlir_lex_peek(lx) == '<') {
    int rc = skip_balanced_angle(p, "element type");
    if (rc) return rc;
  }
  *out = sp__mlir_intern(p, start, (size_t)(lx->cur - start));
  return *out ? SP_OK : sp__mlir_oom(p);
}

/* After `tensor`: <dims x elem (, encoding)?>. */
static int parse_tensor_body(sp__mlir_parser *p, sp_type **out) {
  sp__mlir_lexer *lx = &p->lx;
  sp__mlir_lex_skip_space(lx);
  if (sp__mlir_lex_peek(lx) != '<') return sp__mlir_error_here(p, "expected '<' in tensor type");
  lx->cur++;
  sp__mlir_lex_skip_space(lx);
  int64_t dims[SP_MAX_RANK];
  int rank = 0;
  if (sp__mlir_lex_peek(lx) == '*') {
    lx->cur++;
    if (sp__mlir_lex_peek(lx) != 'x')
      return sp__mlir_error_here(p, "expected 'x' after '*' in tensor type");
    lx->cur++;
    rank = -1;
  } else {
    for (;;) {
      int c = sp__mlir_lex_peek(lx);
      int64_t d;
      if (c == '?') {
        lx->cur++;
        d = SP_DYN_DIM;
      } else if (is_digit(c)) {
        d = 0;
        while (is_digit(sp__mlir_lex_peek(lx))) {
          if (d > (INT64_MAX - 9) / 10)
            return sp__mlir_error_here(p, "dimension size out of range in tensor type");
          d = d * 10 + (*lx->cur++ - '0');
        }
      } else {
        break;
      }
      if (sp__mlir_lex_peek(lx) != 'x')
        return sp__mlir_error_here(p, "expected 'x' after dimension in tensor type");
      lx->cur++;
      if (rank == SP_MAX_RANK)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "tensor rank exceeds SP_MAX_RANK (%d)",
                                   SP_MAX_RANK);
      dims[rank++] = d;
    }
  }
  const char *elem;
  int rc = scan_elem_type(p, &elem);
  if (rc) return rc;
  sp_type *t = sp_type_tensor(p->a, rank, dims, elem);
  if (!t) return sp__mlir_oom(p);
  sp__mlir_lex_skip_space(lx);
  if (sp__mlir_lex_peek(lx) == ',') {
    lx->cur++;
    sp__mlir_lex_skip_space(lx);
    const char *start = lx->cur;
    /* The encoding runs to the tensor's closing '>', at bracket depth 0. */
    int depth = 0;
    while (lx->cur < lx->end) {
      char c = *lx->cur;
      if (c == '"') {
        const char *q = lx->cur + 1;
        while (q < lx->end && *q != '"' && *q != '\n') q += (*q == '\\' && q + 1 < lx->end) ? 2 : 1;
        lx->cur = q < lx->end ? q + 1 : q;
        continue;
      }
      if (c == '\n') break;
      if (c == '<' || c == '[' || c == '(' || c == '{') {
        if (++depth > SP_MAX_NESTING)
          return sp__mlir_error_code(p, SP_ELIMIT, NULL, "tensor encoding nested too deeply");
      } else if (c == '>' || c == ']' || c == ')' || c == '}') {
        if (depth == 0) break;
        depth--;
      }
      lx->cur++;
    }
    const char *end = lx->cur;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t')) end--;
    if (end == start) return sp__mlir_error_here(p, "expected encoding after ',' in tensor type");
    t->encoding = sp_arena_strndup(p->a, start, (size_t)(end - start));
    if (!t->encoding) return sp__mlir_oom(p);
  }
  if (sp__mlir_lex_peek(lx) != '>') return sp__mlir_error_here(p, "expected '>' to end tensor type");
  sp__mlir_lex_seek(lx, lx->cur + 1);
  *out = t;
  return SP_OK;
}

/* A type kept as verbatim text: the current token plus a directly following <...>. */
static int parse_opaque_type(sp__mlir_parser *p, sp_type_kind kind, sp_type **out) {
  sp__mlir_lexer *lx = &p->lx;
  const char *start = lx->tok.p;
  sp__mlir_token at = lx->tok;
  if (sp__mlir_lex_peek(lx) == '<') {
    int rc = skip_balanced_angle(p, "type");
    if (rc) return rc;
  }
  const char *end = lx->cur;
  if (start[0] == '!') {
    int rc = sp__mlir_check_dialect_symbol(p, &at, start, (size_t)(end - start));
    if (rc) return rc;
  }
  sp_type *t = sp_arena_calloc(p->a, 1, sizeof *t);
  if (!t) return sp__mlir_oom(p);
  t->kind = kind;
  t->text = sp__mlir_intern(p, start, (size_t)(end - start));
  if (!t->text) return sp__mlir_oom(p);
  sp__mlir_lex_seek(lx, end);
  *out = t;
  return SP_OK;
}

static int parse_tuple_body(sp__mlir_parser *p, sp_type **out) {
  int rc = sp__mlir_expect(p, SP_TOK_LESS, "tuple type");
  if (rc) return rc;
  sp__mlir_types elems = {0};
  if (p->lx.tok.kind != SP_TOK_GREATER && (rc = sp__mlir_parse_type_list(p, &elems))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "tuple type"))) return rc;
  sp_type *t = sp_arena_calloc(p->a, 1, sizeof *t);
  if (!t) return sp__mlir_oom(p);
  t->kind = SP_TYPE_TUPLE;
  t->nelems = elems.n;
  if (elems.n) {
    t->elems = sp_arena_alloc(p->a, (size_t)elems.n * sizeof *t->elems);
    if (!t->elems) return sp__mlir_oom(p);
    memcpy(t->elems, elems.v, (size_t)elems.n * sizeof *t->elems);
  }
  *out = t;
  return SP_OK;
}

bool sp__mlir_at_type(const sp__mlir_parser *p) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind == SP_TOK_BANG) return true;
  if (t->kind != SP_TOK_BARE) return false;
  static const char *const words[] = {"tensor", "tuple", "none", "index", "vector", "memref",
                                "complex", "bf16", "f16", "f32", "f64", "tf32"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (sp__mlir_tok_is(t, words[i])) return true;
  /* iN, uiN, siN, f8E4M3FN-style float names */
  const char *s = t->p;
  size_t n = t->n, k = 0;
  if (n > 1 && (s[0] == 'u' || s[0] == 's') && s[1] == 'i') k = 2;
  else if (s[0] == 'i') k = 1;
  if (k && k < n) {
    for (size_t i = k; i < n; i++)
      if (!is_digit((unsigned char)s[i])) return false;
    return true;
  }
  return n > 2 && s[0] == 'f' && is_digit((unsigned char)s[1]) && (s[2] == 'E' || is_digit((unsigned char)s[2]));
}

int sp__mlir_parse_type(sp__mlir_parser *p, sp_type **out) {
  const sp__mlir_token *t = &p->lx.tok;
  int rc = sp__mlir_enter(p);
  if (rc) return rc;
  if (t->kind == SP_TOK_BARE && sp__mlir_tok_is(t, "tensor")) {
    rc = parse_tensor_body(p, out);
  } else if (t->kind == SP_TOK_BARE && sp__mlir_tok_is(t, "tuple")) {
    sp__mlir_next(p);
    rc = parse_tuple_body(p, out);
  } else if (t->kind == SP_TOK_BANG) {
    const char *alias = memchr(t->p, '.', t->n) ? NULL : sp__mlir_alias_lookup(p, t, true);
    if (alias) {
      const char *after = t->p + t->n;
      sp__mlir_lex_seek(&p->lx, alias);
      rc = sp__mlir_parse_type(p, out);
      if (!rc) sp__mlir_lex_seek(&p->lx, after);
    } else {
      rc = parse_opaque_type(p, sp__mlir_tok_is(t, "!stablehlo.token") ? SP_TYPE_TOKEN
                                                                       : SP_TYPE_OTHER, out);
    }
  } else if (sp__mlir_at_type(p)) {
    rc = parse_opaque_type(p, SP_TYPE_OTHER, out);
  } else if (t->kind == SP_TOK_ERROR) {
    rc = sp__mlir_error(p, NULL, "%s", p->lx.err_msg ? p->lx.err_msg : "invalid token");
  } else {
    char buf[64];
    rc = sp__mlir_error(p, NULL, "expected type, got %s",
                        sp__mlir_tok_describe(t, buf, sizeof buf));
  }
  sp__mlir_leave(p);
  return rc;
}

int sp__mlir_parse_type_list(sp__mlir_parser *p, sp__mlir_types *out) {
  for (;;) {
    sp_type *t;
    int rc = sp__mlir_parse_type(p, &t);
    if (rc) return rc;
    if ((rc = sp__mlir_types_push(p, out, t))) return rc;
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) return SP_OK;
  }
}

/* '(' types? ')' */
static int parse_paren_types(sp__mlir_parser *p, sp__mlir_types *out, const char *context) {
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, context);
  if (rc) return rc;
  if (sp__mlir_accept(p, SP_TOK_RPAREN)) return SP_OK;
  if ((rc = sp__mlir_parse_type_list(p, out))) return rc;
  return sp__mlir_expect(p, SP_TOK_RPAREN, context);
}

static int parse_result_types(sp__mlir_parser *p, sp__mlir_types *outs) {
  if (p->lx.tok.kind == SP_TOK_LPAREN) return parse_paren_types(p, outs, "result types");
  sp_type *t;
  int rc = sp__mlir_parse_type(p, &t);
  if (rc) return rc;
  return sp__mlir_types_push(p, outs, t);
}

int sp__mlir_parse_function_type(sp__mlir_parser *p, sp__mlir_types *ins, sp__mlir_types *outs) {
  int rc = parse_paren_types(p, ins, "function type");
  if (rc) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_ARROW, "function type"))) return rc;
  return parse_result_types(p, outs);
}

int sp__mlir_parse_same_or_function_type(sp__mlir_parser *p, int nin, sp__mlir_types *ins,
                                         sp__mlir_types *outs) {
  if (p->lx.tok.kind == SP_TOK_LPAREN) return sp__mlir_parse_function_type(p, ins, outs);
  sp_type *t;
  int rc = sp__mlir_parse_type(p, &t);
  if (rc) return rc;
  if (nin > 1 && p->lx.tok.kind == SP_TOK_COMMA) {
    /* `T1, T2 -> R`: operand types listed without parentheses (CHLO's binary ops,
     * `chlo.zeta %x, %q : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>`). */
    if ((rc = sp__mlir_types_push(p, ins, t))) return rc;
    while (sp__mlir_accept(p, SP_TOK_COMMA)) {
      if ((rc = sp__mlir_parse_type(p, &t))) return rc;
      if ((rc = sp__mlir_types_push(p, ins, t))) return rc;
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_ARROW, "function type"))) return rc;
    return parse_result_types(p, outs);
  }
  if (sp__mlir_accept(p, SP_TOK_ARROW)) {
    /* `T -> R`: a one-operand function type printed without parentheses (CHLO's unary ops,
     * `chlo.square %x : tensor<4xf32> -> tensor<4xf32>`). */
    if ((rc = sp__mlir_types_push(p, ins, t))) return rc;
    return parse_result_types(p, outs);
  }
  for (int i = 0; i < nin; i++)
    if ((rc = sp__mlir_types_push(p, ins, t))) return rc;
  return sp__mlir_types_push(p, outs, t);
}
