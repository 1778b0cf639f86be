/*
 * lexer.c - the MLIR tokenizer (see lexer_int.h).
 *
 * Grammar of the tokens (MLIR's, restricted to what StableHLO + sdy text uses):
 *   bare-id    (letter|_) (letter|digit|_|$|.)*
 *   suffix-id  digit+ | (letter|id-punct) (letter|digit|id-punct)*   id-punct = $ . _ -
 *   %suffix-id  @bare-id|@string  ^suffix-id  #suffix-id  !suffix-id
 *   integer    digit+ | 0x hex+          float  digit+ . digit* ([eE] [+-]? digit+)?
 *   string     " ( [^"\\\n] | \\ . )* "
 */
#include "mlir/lexer_int.h"

#include <stdio.h>
#include <string.h>

#include "ir/sp_limits.h"

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool sp__mlir_is_id_char(int c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

static bool is_bare_char(int c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.';
}

void sp__mlir_lex_skip_space(sp__mlir_lexer *lx) {
  const char *p = lx->cur, *end = lx->end;
  while (p < end) {
    char c = *p;
    if (c == '\n') {
      p++;
      lx->line++;
      lx->line_start = p;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      p++;
    } else if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n') p++;
    } else {
      break;
    }
  }
  lx->cur = p;
}

void sp__mlir_lex_init(sp__mlir_lexer *lx, const char *text, size_t len) {
  memset(lx, 0, sizeof *lx);
  lx->begin = lx->cur = lx->line_start = text;
  lx->end = text + len;
  lx->line = 1;
  sp__mlir_lex_next(lx);
}

static void set_tok(sp__mlir_lexer *lx, sp__mlir_tok_kind kind, const char *start) {
  lx->tok.kind = kind;
  lx->tok.p = start;
  lx->tok.n = (size_t)(lx->cur - start);
}

static void set_error(sp__mlir_lexer *lx, const char *start, const char *msg) {
  set_tok(lx, SP_TOK_ERROR, start);
  lx->err_msg = msg;
}

/* Scans the characters of a string literal whose opening quote is at lx->cur. */
static bool scan_string(sp__mlir_lexer *lx) {
  const char *p = lx->cur + 1, *end = lx->end;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      lx->cur = p + 1;
      return true;
    }
    if (c == '\n') break;
    if (c == '\\') {
      if (p + 1 >= end || p[1] == '\n') break;
      p += 2;
      continue;
    }
    p++;
  }
  lx->cur = p;
  return false;
}

static void lex_number(sp__mlir_lexer *lx, const char *start) {
  const char *p = lx->cur;
  if (p[0] == '0' && p + 2 < lx->end && p[1] == 'x' && is_hex((unsigned char)p[2])) {
    p += 2;
    while (p < lx->end && is_hex((unsigned char)*p)) p++;
    lx->cur = p;
    set_tok(lx, SP_TOK_INT, start);
    return;
  }
  while (p < lx->end && is_digit((unsigned char)*p)) p++;
  if (p < lx->end && *p == '.') {
    p++;
    while (p < lx->end && is_digit((unsigned char)*p)) p++;
    if (p < lx->end && (*p == 'e' || *p == 'E')) {
      const char *q = p + 1;
      if (q < lx->end && (*q == '+' || *q == '-')) q++;
      if (q < lx->end && is_digit((unsigned char)*q)) {
        while (q < lx->end && is_digit((unsigned char)*q)) q++;
        p = q;
      }
    }
    lx->cur = p;
    set_tok(lx, SP_TOK_FLOAT, start);
    return;
  }
  lx->cur = p;
  set_tok(lx, SP_TOK_INT, start);
}

/* %x, ^x, #x, !x: a suffix id after the sigil. */
static void lex_prefixed(sp__mlir_lexer *lx, sp__mlir_tok_kind kind, const char *start) {
  const char *p = lx->cur + 1;
  while (p < lx->end && sp__mlir_is_id_char((unsigned char)*p)) p++;
  lx->cur = p;
  if (p == start + 1) {
    set_error(lx, start, "expected an identifier after the sigil");
    return;
  }
  if ((size_t)(p - start) > SP_MAX_IDENT) {
    set_error(lx, start, "identifier longer than SP_MAX_IDENT");
    return;
  }
  set_tok(lx, kind, start);
}

void sp__mlir_lex_next(sp__mlir_lexer *lx) {
  sp__mlir_lex_skip_space(lx);
  const char *start = lx->cur;
  lx->tok.line = lx->line;
  lx->tok.col = (int)(start - lx->line_start) + 1;
  lx->err_msg = NULL;
  if (start >= lx->end) {
    set_tok(lx, SP_TOK_EOF, start);
    return;
  }
  int c = (unsigned char)*start;
  if (is_alpha(c) || c == '_') {
    const char *p = start + 1;
    while (p < lx->end && is_bare_char((unsigned char)*p)) p++;
    lx->cur = p;
    if ((size_t)(p - start) > SP_MAX_IDENT) {
      set_error(lx, start, "identifier longer than SP_MAX_IDENT");
      return;
    }
    set_tok(lx, SP_TOK_BARE, start);
    return;
  }
  if (is_digit(c)) {
    lex_number(lx, start);
    return;
  }
  switch (c) {
    case '%': lex_prefixed(lx, SP_TOK_PERCENT, start); return;
    case '^': lex_prefixed(lx, SP_TOK_CARET, start); return;
    case '#': lex_prefixed(lx, SP_TOK_HASH, start); return;
    case '!': lex_prefixed(lx, SP_TOK_BANG, start); return;
    case '@':
      if (start + 1 < lx->end && start[1] == '"') {
        lx->cur = start + 1;
        if (!scan_string(lx)) {
          set_error(lx, start, "unterminated string");
          return;
        }
        set_tok(lx, SP_TOK_AT, start);
        return;
      }
      lx->cur = start + 1;
      if (lx->cur >= lx->end || !(is_alpha((unsigned char)*lx->cur) || *lx->cur == '_')) {
        set_error(lx, start, "expected a symbol name after '@'");
        return;
      }
      while (lx->cur < lx->end && is_bare_char((unsigned char)*lx->cur)) lx->cur++;
      if ((size_t)(lx->cur - start) > SP_MAX_IDENT) {
        set_error(lx, start, "identifier longer than SP_MAX_IDENT");
        return;
      }
      set_tok(lx, SP_TOK_AT, start);
      return;
    case '"':
      if (!scan_string(lx)) {
        set_error(lx, start, "unterminated string");
        return;
      }
      set_tok(lx, SP_TOK_STRING, start);
      return;
    case '-':
      if (start + 1 < lx->end && start[1] == '>') {
        lx->cur = start + 2;
        set_tok(lx, SP_TOK_ARROW, start);
        return;
      }
      lx->cur = start + 1;
      set_tok(lx, SP_TOK_MINUS, start);
      return;
    case '.':
      if (start + 2 < lx->end && start[1] == '.' && start[2] == '.') {
        lx->cur = start + 3;
        set_tok(lx, SP_TOK_ELLIPSIS, start);
        return;
      }
      break;
    default: break;
  }
  static const struct { char c; sp__mlir_tok_kind k; } punct[] = {
      {'(', SP_TOK_LPAREN}, {')', SP_TOK_RPAREN}, {'[', SP_TOK_LSQUARE}, {']', SP_TOK_RSQUARE},
      {'{', SP_TOK_LBRACE}, {'}', SP_TOK_RBRACE}, {'<', SP_TOK_LESS},    {'>', SP_TOK_GREATER},
      {',', SP_TOK_COMMA},  {':', SP_TOK_COLON},  {'=', SP_TOK_EQUAL},   {'?', SP_TOK_QUESTION},
      {'*', SP_TOK_STAR},   {'+', SP_TOK_PLUS},   {'|', SP_TOK_VBAR}};
  for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++) {
    if (punct[i].c == c) {
      lx->cur = start + 1;
      set_tok(lx, punct[i].k, start);
      return;
    }
  }
  lx->cur = start + 1;
  set_error(lx, start, "unexpected character");
}

void sp__mlir_lex_seek(sp__mlir_lexer *lx, const char *p) {
  if (p < lx->line_start) {
    /* Moving back over a newline (only when re-reading an alias definition): recount. */
    lx->line = 1;
    lx->line_start = lx->begin;
    lx->cur = lx->begin;
  }
  for (const char *q = lx->cur; q < p; q++)
    if (*q == '\n') {
      lx->line++;
      lx->line_start = q + 1;
    }
  lx->cur = p;
  sp__mlir_lex_next(lx);
}

bool sp__mlir_tok_is(const sp__mlir_token *t, const char *word) {
  size_t n = strlen(word);
  return t->n == n && memcmp(t->p, word, n) == 0;
}

const char *sp__mlir_tok_describe(const sp__mlir_token *t, char *buf, size_t cap) {
  switch (t->kind) {
    case SP_TOK_EOF: return "end of input";
    case SP_TOK_ERROR: return "invalid token";
    case SP_TOK_STRING: return "string";
    default: break;
  }
  size_t n = t->n > 40 ? 40 : t->n;
  snprintf(buf, cap, "'%.*s%s'", (int)n, t->p, t->n > n ? "..." : "");
  return buf;
}
