/*
 * reader_tokens.c - the token level of the MLIR reader: error reporting ("file:line:col:
 * message", first error wins, trial parses record nothing), accepting and expecting tokens,
 * the nesting guard, character-level scans of bracketed text, and literals (integers, strings with escapes, symbols, `loc(...)`).
 *
 * Memory: decoded strings and symbols go into the module arena (p->a); nothing else is
 * allocated here. See reader_int.h for the conventions every reader file shares.
 */
#include "mlir/reader_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/sp_limits.h"

/* ------------------------------------------------------------------ errors */

static int verror(sp__mlir_parser *p, int code, int line, int col, const char *fmt, va_list ap) {
  if (p->failed || p->trial) return code;
  p->failed = true;
  char msg[SP_ERR_MSG_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  sp_err_set(p->err, code, "%s:%d:%d: %s", p->filename, p->first_line + line - 1, col, msg);
  return code;
}

int sp__mlir_error_context(sp__mlir_parser *p, int rc, const char *fmt, ...) {
  if (rc == SP_OK || rc == SP_ENOMEM || p->trial || !p->err || !p->failed) return rc;
  char line[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t n = strlen(p->err->msg);
  snprintf(p->err->msg + n, sizeof p->err->msg - n, "\n%s", line);
  return rc;
}

int sp__mlir_error(sp__mlir_parser *p, const sp__mlir_token *at, const char *fmt, ...) {
  if (!at) at = &p->lx.tok;
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, SP_EINVAL, at->line, at->col, fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_error_code(sp__mlir_parser *p, int code, const sp__mlir_token *at, const char *fmt,
                        ...) {
  if (!at) at = &p->lx.tok;
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, code, at->line, at->col, fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_error_here(sp__mlir_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, SP_EINVAL, p->lx.line, sp__mlir_lex_col(&p->lx), fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_oom(sp__mlir_parser *p) {
  return sp__mlir_error_code(p, SP_ENOMEM, NULL, "out of memory while parsing");
}

/* ------------------------------------------------------------------ tokens */

int sp__mlir_check_token(sp__mlir_parser *p) {
  if (p->lx.tok.kind != SP_TOK_ERROR) return SP_OK;
  return sp__mlir_error(p, NULL, "%s", p->lx.err_msg ? p->lx.err_msg : "invalid token");
}

void sp__mlir_next(sp__mlir_parser *p) { sp__mlir_lex_next(&p->lx); }

bool sp__mlir_accept(sp__mlir_parser *p, sp__mlir_tok_kind kind) {
  if (p->lx.tok.kind != kind) return false;
  sp__mlir_lex_next(&p->lx);
  return true;
}

bool sp__mlir_accept_word(sp__mlir_parser *p, const char *word) {
  if (p->lx.tok.kind != SP_TOK_BARE || !sp__mlir_tok_is(&p->lx.tok, word)) return false;
  sp__mlir_lex_next(&p->lx);
  return true;
}

const char *sp__mlir_kind_spelling(sp__mlir_tok_kind kind) {
  switch (kind) {
    case SP_TOK_LPAREN: return "'('";
    case SP_TOK_RPAREN: return "')'";
    case SP_TOK_LSQUARE: return "'['";
    case SP_TOK_RSQUARE: return "']'";
    case SP_TOK_LBRACE: return "'{'";
    case SP_TOK_RBRACE: return "'}'";
    case SP_TOK_LESS: return "'<'";
    case SP_TOK_GREATER: return "'>'";
    case SP_TOK_COMMA: return "','";
    case SP_TOK_COLON: return "':'";
    case SP_TOK_EQUAL: return "'='";
    case SP_TOK_QUESTION: return "'?'";
    case SP_TOK_ARROW: return "'->'";
    case SP_TOK_STAR: return "'*'";
    case SP_TOK_MINUS: return "'-'";
    case SP_TOK_PERCENT: return "SSA value";
    case SP_TOK_AT: return "symbol name";
    case SP_TOK_STRING: return "string";
    case SP_TOK_INT: return "integer";
    case SP_TOK_BARE: return "identifier";
    case SP_TOK_HASH: return "attribute";
    case SP_TOK_CARET: return "block label";
    default: return "token";
  }
}

int sp__mlir_expect(sp__mlir_parser *p, sp__mlir_tok_kind kind, const char *context) {
  if (sp__mlir_accept(p, kind)) return SP_OK;
  if (sp__mlir_check_token(p)) return SP_EINVAL;
  if (p->lx.tok.kind == SP_TOK_EOF)
    return sp__mlir_error(p, NULL, "expected %s in %s, got end of input",
                          sp__mlir_kind_spelling(kind), context);
  return sp__mlir_error(p, NULL, "expected %s in %s", sp__mlir_kind_spelling(kind), context);
}

int sp__mlir_expect_word(sp__mlir_parser *p, const char *word, const char *context) {
  if (sp__mlir_accept_word(p, word)) return SP_OK;
  if (sp__mlir_check_token(p)) return SP_EINVAL;
  return sp__mlir_error(p, NULL, "expected '%s' in %s", word, context);
}

int sp__mlir_enter(sp__mlir_parser *p) {
  if (++p->depth > SP_MAX_NESTING)
    return sp__mlir_error_code(p, SP_ELIMIT, NULL,
                               "nesting deeper than SP_MAX_NESTING (%d)", SP_MAX_NESTING);
  return SP_OK;
}

/* ------------------------------------------------------------------ bracketed text */

int sp__mlir_scan_bracketed(sp__mlir_parser *p, const char *what, int *depth, const char **piece,
                            size_t *len, bool *closed) {
  sp__mlir_lexer *lx = &p->lx;
  const char *at = lx->cur;
  char c = *at;
  *closed = false;
  if (c == '"') {
    const char *q = at + 1;
    while (q < lx->end && *q != '"' && *q != '\n') q += (*q == '\\' && q + 1 < lx->end) ? 2 : 1;
    if (q >= lx->end || *q != '"') return sp__mlir_error_here(p, "unterminated string in %s", what);
    lx->cur = q + 1;
  } else if (c == '-' && at + 1 < lx->end && at[1] == '>') {
    lx->cur = at + 2;
  } else {
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (++*depth > SP_MAX_NESTING)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "%s nested too deeply", what);
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (--*depth < 0) return sp__mlir_error_here(p, "unbalanced '%c' in %s", c, what);
      *closed = *depth == 0;
    }
    lx->cur = at + 1;
  }
  *piece = at;
  *len = (size_t)(lx->cur - at);
  return SP_OK;
}

/* ------------------------------------------------------------------ literals */

int sp__mlir_parse_int(sp__mlir_parser *p, int64_t *out, const char *context) {
  bool neg = sp__mlir_accept(p, SP_TOK_MINUS);
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_INT) {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected integer in %s", context);
  }
  uint64_t v = 0;
  bool hex = t->n > 2 && t->p[1] == 'x';
  for (size_t i = hex ? 2 : 0; i < t->n; i++) {
    int c = (unsigned char)t->p[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else d = c - 'A' + 10;
    uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - (uint64_t)d) / base)
      return sp__mlir_error(p, NULL, "integer out of range in %s", context);
    v = v * base + (uint64_t)d;
  }
  if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
    return sp__mlir_error(p, NULL, "integer out of range in %s", context);
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  sp__mlir_next(p);
  return SP_OK;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes the body of a string literal token (quotes included in [s, s+n)). */
static int decode_string(sp__mlir_parser *p, const char *s, size_t n, const char **out,
                         size_t *len) {
  char *buf = sp_arena_alloc(p->a, n + 1);
  if (!buf) return sp__mlir_oom(p);
  size_t k = 0;
  for (size_t i = 1; i + 1 < n; i++) {
    char c = s[i];
    if (c != '\\') {
      buf[k++] = c;
      continue;
    }
    char e = s[++i];
    switch (e) {
      case '\\': buf[k++] = '\\'; break;
      case '"': buf[k++] = '"'; break;
      case 'n': buf[k++] = '\n'; break;
      case 't': buf[k++] = '\t'; break;
      default: {
        if (i + 1 >= n - 1) return sp__mlir_error(p, NULL, "unknown escape in string literal");
        int h1 = hexval((unsigned char)s[i]), h2 = hexval((unsigned char)s[i + 1]);
        if (h1 < 0 || h2 < 0) return sp__mlir_error(p, NULL, "unknown escape in string literal");
        buf[k++] = (char)(h1 * 16 + h2);
        i++;
      }
    }
  }
  buf[k] = '\0';
  *out = buf;
  if (len) *len = k;
  return SP_OK;
}

int sp__mlir_parse_string(sp__mlir_parser *p, const char **out, size_t *len, const char *context) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_STRING) {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected string in %s", context);
  }
  int rc = decode_string(p, t->p, t->n, out, len);
  if (rc) return rc;
  sp__mlir_next(p);
  return SP_OK;
}

int sp__mlir_parse_symbol(sp__mlir_parser *p, const char **out) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_AT) {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected symbol name '@...'");
  }
  if (t->n > 1 && t->p[1] == '"') {
    /* @"quoted": re-read the quoted part as a string literal. */
    size_t len;
    sp__mlir_lex_seek(&p->lx, t->p + 1);
    return sp__mlir_parse_string(p, out, &len, "symbol name");
  }
  *out = sp__mlir_intern(p, t->p + 1, t->n - 1);
  if (!*out) return sp__mlir_oom(p);
  sp__mlir_next(p);
  return SP_OK;
}

int sp__mlir_skip_loc(sp__mlir_parser *p) {
  if (p->lx.tok.kind != SP_TOK_BARE || !sp__mlir_tok_is(&p->lx.tok, "loc")) return SP_OK;
  sp__mlir_next(p);
  if (p->lx.tok.kind != SP_TOK_LPAREN) return sp__mlir_expect(p, SP_TOK_LPAREN, "location");
  int depth = 0;
  do {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
    if (p->lx.tok.kind == SP_TOK_EOF)
      return sp__mlir_error(p, NULL, "expected ')' in location, got end of input");
    if (p->lx.tok.kind == SP_TOK_LPAREN || p->lx.tok.kind == SP_TOK_LSQUARE) {
      if (++depth > SP_MAX_NESTING)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "location nested too deeply");
    } else if (p->lx.tok.kind == SP_TOK_RPAREN || p->lx.tok.kind == SP_TOK_RSQUARE) {
      depth--;
    }
    sp__mlir_next(p);
  } while (depth > 0);
  return SP_OK;
}

