/*
 * lexer_int.h - the MLIR tokenizer used by the reader (internal to server/mlir).
 *
 * A single forward pass over the text: sp__mlir_lex_next() produces one token at a time from
 * the cursor, skipping whitespace and `//` comments. Tokens point into the text (no copies);
 * the text must outlive the lexer. Line numbers are counted while skipping whitespace (the only
 * place a newline can appear outside a string, and strings may not span lines).
 *
 * Some constructs (tensor shapes such as `8x?xf32`, dialect attribute bodies) are not regular
 * at the token level; the reader scans them character by character with the sp__mlir_lex_peek*
 * helpers and then re-synchronises with sp__mlir_lex_seek().
 *
 * The lexer never fails hard: a malformed token becomes SP_TOK_ERROR with `err_msg` set, and
 * the reader turns it into a positioned error.
 */
#ifndef SP_MLIR_LEXER_H
#define SP_MLIR_LEXER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sp__mlir_tok_kind {
  SP_TOK_EOF = 0,
  SP_TOK_ERROR,
  SP_TOK_BARE,      /* bare identifier: func.func, tensor, i, p1, true */
  SP_TOK_PERCENT,   /* %name (text includes the '%') */
  SP_TOK_AT,        /* @name or @"name" (text includes the '@') */
  SP_TOK_CARET,     /* ^bb0 */
  SP_TOK_HASH,      /* #alias, #sdy.sharding */
  SP_TOK_BANG,      /* !stablehlo.token */
  SP_TOK_INT,       /* 42, 0x2A (no sign) */
  SP_TOK_FLOAT,     /* 1.5, 1.0e-3 (no sign) */
  SP_TOK_STRING,    /* "..." (text includes the quotes, escapes not decoded) */
  SP_TOK_LPAREN, SP_TOK_RPAREN, SP_TOK_LSQUARE, SP_TOK_RSQUARE, SP_TOK_LBRACE, SP_TOK_RBRACE,
  SP_TOK_LESS, SP_TOK_GREATER, SP_TOK_COMMA, SP_TOK_COLON, SP_TOK_EQUAL, SP_TOK_QUESTION,
  SP_TOK_STAR, SP_TOK_PLUS, SP_TOK_MINUS, SP_TOK_ARROW, SP_TOK_VBAR, SP_TOK_ELLIPSIS
} sp__mlir_tok_kind;

typedef struct sp__mlir_token {
  sp__mlir_tok_kind kind;
  const char *p;    /* first byte */
  size_t n;         /* length in bytes */
  int line;         /* 1-based, relative to the lexed text */
  int col;          /* 1-based byte column */
} sp__mlir_token;

typedef struct sp__mlir_lexer {
  const char *begin, *end;
  const char *cur;         /* next unread byte */
  int line;                /* line of `cur` */
  const char *line_start;  /* first byte of that line */
  sp__mlir_token tok;      /* the current token */
  const char *err_msg;     /* set with SP_TOK_ERROR */
} sp__mlir_lexer;

/* Starts lexing text[0, len) and reads the first token. */
void sp__mlir_lex_init(sp__mlir_lexer *lx, const char *text, size_t len);
/* Replaces the current token with the next one. */
void sp__mlir_lex_next(sp__mlir_lexer *lx);

/* Character-level access for the irregular parts of the grammar. sp__mlir_lex_skip_space()
 * moves the cursor over whitespace and comments; sp__mlir_lex_seek() moves the cursor to `p`
 * (which must lie on the current line or after a call to skip_space) and reads the token
 * there. */
void sp__mlir_lex_skip_space(sp__mlir_lexer *lx);
void sp__mlir_lex_seek(sp__mlir_lexer *lx, const char *p);
static inline int sp__mlir_lex_peek(const sp__mlir_lexer *lx) {
  return lx->cur < lx->end ? (unsigned char)*lx->cur : -1;
}
static inline int sp__mlir_lex_peek_at(const sp__mlir_lexer *lx, size_t k) {
  return lx->cur + k < lx->end ? (unsigned char)lx->cur[k] : -1;
}
/* Column of the cursor (1-based). */
static inline int sp__mlir_lex_col(const sp__mlir_lexer *lx) {
  return (int)(lx->cur - lx->line_start) + 1;
}

/* Is `c` allowed inside an identifier after its first character? ([a-zA-Z0-9_$.-]) */
bool sp__mlir_is_id_char(int c);
/* Does the token spell `word` exactly? */
bool sp__mlir_tok_is(const sp__mlir_token *t, const char *word);
/* A short description of a token for messages ("'func.func'", "end of input", "string"). */
const char *sp__mlir_tok_describe(const sp__mlir_token *t, char *buf, size_t cap);

#endif /* SP_MLIR_LEXER_H */
