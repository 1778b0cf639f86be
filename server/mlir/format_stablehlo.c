/*
 * format_stablehlo.c - custom syntax of StableHLO ops (see format_int.h): the table of pieces, its
 * interpreter, and the StableHLO format table.
 *
 * Most StableHLO custom forms are a fixed sequence of pieces (operands, keyword clauses such as
 * `, dims = [...]`, the attribute dictionary, a type signature). Those are described by a small
 * table of pieces that one interpreter both parses and prints, so the two directions cannot
 * drift apart. The irregular ones have their own files: dot_general and convolution in
 * format_stablehlo_dot_conv.c, custom_call, reduce and while in format_stablehlo_region.c;
 * constant and return share format_builtin.c's helpers. The piece helpers they reuse are
 * declared in format_stablehlo_int.h.
 *
 * Ops printed in generic form by MLIR itself (case, if, gather, scatter, sort, reduce_window,
 * collectives, ...) have no entry here. Memory: parsed pieces go into the module's arena
 * through the reader helpers; printing only appends to the writer's buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/format_int.h"
#include "mlir/format_stablehlo_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ pieces */

typedef enum piece_kind {
  F_END,
  F_OPERANDS,      /* " %a, %b" (nothing without operands) */
  F_OPERANDS_RAW,  /* "%a, %b" */
  F_LIT,           /* literal text; parsed as its tokens (spaces ignored) */
  F_INTS,          /* [1, 2] -> INTS attr s */
  F_INT,           /* 3 -> INT attr s */
  F_ENUM,          /* LT -> ENUM attr s */
  F_KEYWORD,       /* DEFAULT -> TEXT attr s = "<s2> DEFAULT>" */
  F_BOOL,          /* true -> BOOL attr s */
  F_ATTRS,         /* {attr-dict} */
  F_SAME_TYPE,     /* T | (T, T) -> T */
  F_FUNC_TYPE,     /* (T, T) -> T */
  F_RESULT_TYPE,   /* T of the single result */
  F_PAIRWISE,      /* [: T1, T2] operand types = result types; "()" without operands */
  F_SELECT_TYPE,   /* pred_type, result_type | function type */
  F_COMPLEX_TYPE,  /* complex result type | function type */
  F_TUPLE_TYPE,    /* tuple<...> of the result; operands are its elements */
  F_PRECISION,     /* [, precision = [A, B]] -> TEXT precision_config */
  F_EXPMANT,       /* e5m10 -> INT exponent_bits, mantissa_bits */
  F_SLICE_RANGES,  /* [0:4, 1:8:2] -> start_indices, limit_indices, strides */
  F_OPT,           /* the pieces up to F_OPT_END appear iff attribute s is present */
  F_OPT_END
} piece_kind;

typedef struct piece {
  piece_kind k;
  const char *s;
  const char *s2;
} piece;

#define P_END {F_END, NULL, NULL}
#define P_OPS {F_OPERANDS, NULL, NULL}
#define P_LIT(t) {F_LIT, t, NULL}
#define P_ATTRS {F_ATTRS, NULL, NULL}
#define P_COLON {F_LIT, " : ", NULL}

static const piece fmt_same[] = {P_OPS, P_ATTRS, P_COLON, {F_SAME_TYPE, NULL, NULL}, P_END};
static const piece fmt_func[] = {P_OPS, P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_result[] = {P_OPS, P_ATTRS, P_COLON, {F_RESULT_TYPE, NULL, NULL}, P_END};
static const piece fmt_broadcast_in_dim[] = {
    P_OPS, P_LIT(", dims = "), {F_INTS, "broadcast_dimensions", NULL}, P_ATTRS, P_COLON,
    {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_transpose[] = {
    P_OPS, P_LIT(", dims = "), {F_INTS, "permutation", NULL}, P_ATTRS, P_COLON,
    {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_reverse[] = {
    P_OPS, P_LIT(", dims = "), {F_INTS, "dimensions", NULL}, P_ATTRS, P_COLON,
    {F_SAME_TYPE, NULL, NULL}, P_END};
static const piece fmt_concatenate[] = {
    P_OPS, P_LIT(", dim = "), {F_INT, "dimension", NULL}, P_ATTRS, P_COLON,
    {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_dynamic_slice[] = {
    P_OPS, P_LIT(", sizes = "), {F_INTS, "slice_sizes", NULL}, P_ATTRS, P_COLON,
    {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_pad[] = {
    P_OPS, P_LIT(", low = "), {F_INTS, "edge_padding_low", NULL}, P_LIT(", high = "),
    {F_INTS, "edge_padding_high", NULL}, P_LIT(", interior = "), {F_INTS, "interior_padding", NULL},
    P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_fft[] = {
    P_OPS, P_LIT(", type = "), {F_ENUM, "fft_type", NULL}, P_LIT(", length = "),
    {F_INTS, "fft_length", NULL}, P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_rng_bit_generator[] = {
    P_OPS, P_LIT(", algorithm =  "), {F_KEYWORD, "rng_algorithm", "#stablehlo<rng_algorithm"},
    P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_iota[] = {
    P_LIT(" dim = "), {F_INT, "iota_dimension", NULL}, P_ATTRS, P_COLON,
    {F_RESULT_TYPE, NULL, NULL}, P_END};
static const piece fmt_cholesky[] = {
    P_OPS, {F_OPT, "lower", NULL}, P_LIT(", lower = "), {F_BOOL, "lower", NULL},
    {F_OPT_END, NULL, NULL}, P_ATTRS, P_COLON, {F_SAME_TYPE, NULL, NULL}, P_END};
static const piece fmt_dot[] = {
    P_OPS, {F_PRECISION, NULL, NULL}, P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_compare[] = {
    P_LIT("  "), {F_ENUM, "comparison_direction", NULL}, P_LIT(", "), {F_OPERANDS_RAW, NULL, NULL},
    {F_OPT, "compare_type", NULL}, P_LIT(",  "),
    {F_KEYWORD, "compare_type", "#stablehlo<comparison_type"}, {F_OPT_END, NULL, NULL},
    P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_select[] = {P_OPS, P_ATTRS, P_COLON, {F_SELECT_TYPE, NULL, NULL}, P_END};
static const piece fmt_complex[] = {P_OPS, P_ATTRS, P_COLON, {F_COMPLEX_TYPE, NULL, NULL}, P_END};
static const piece fmt_tuple[] = {P_OPS, P_ATTRS, P_COLON, {F_TUPLE_TYPE, NULL, NULL}, P_END};
static const piece fmt_get_tuple_element[] = {
    P_OPS, P_LIT("["), {F_INT, "index", NULL}, P_LIT("]"), P_ATTRS, P_COLON,
    {F_FUNC_TYPE, NULL, NULL}, P_END};
static const piece fmt_optimization_barrier[] = {P_ATTRS, P_OPS, {F_PAIRWISE, NULL, NULL}, P_END};
static const piece fmt_nullary[] = {P_ATTRS, P_COLON, {F_RESULT_TYPE, NULL, NULL}, P_END};
static const piece fmt_reduce_precision[] = {
    P_OPS, P_LIT(", format = "), {F_EXPMANT, NULL, NULL}, P_ATTRS, P_COLON,
    {F_SAME_TYPE, NULL, NULL}, P_END};
static const piece fmt_slice[] = {
    P_OPS, P_LIT(" "), {F_SLICE_RANGES, NULL, NULL}, P_ATTRS, P_COLON, {F_FUNC_TYPE, NULL, NULL},
    P_END};

/* chlo.top_k(%x, k = 4) : tensor<32x64xf32> -> (tensor<32x4xf32>, tensor<32x4xi32>); mhlo.topk
 * the same. */
static const piece fmt_top_k[] = {
    P_LIT("("), {F_OPERANDS_RAW, NULL, NULL}, P_LIT(", k = "), {F_INT, "k", NULL}, P_LIT(")"),
    P_ATTRS, P_COLON, {F_SAME_TYPE, NULL, NULL}, P_END};

typedef struct desc_entry {
  sp_op_kind kind;
  const piece *pieces;
} desc_entry;

static const desc_entry descs[] = {
    {SP_OP_ABS, fmt_same}, {SP_OP_CBRT, fmt_same}, {SP_OP_CEIL, fmt_same},
    {SP_OP_CLZ, fmt_same}, {SP_OP_CONVERT, fmt_same}, {SP_OP_COSINE, fmt_same},
    {SP_OP_EXP, fmt_same}, {SP_OP_EXPM1, fmt_same}, {SP_OP_FLOOR, fmt_same},
    {SP_OP_IMAG, fmt_same}, {SP_OP_IS_FINITE, fmt_same}, {SP_OP_LOG, fmt_same},
    {SP_OP_LOG1P, fmt_same}, {SP_OP_LOGISTIC, fmt_same}, {SP_OP_NEGATE, fmt_same},
    {SP_OP_NOT, fmt_same}, {SP_OP_POPCNT, fmt_same}, {SP_OP_REAL, fmt_same},
    {SP_OP_ROUND_AFZ, fmt_same}, {SP_OP_ROUND_EVEN, fmt_same}, {SP_OP_RSQRT, fmt_same},
    {SP_OP_SIGN, fmt_same}, {SP_OP_SINE, fmt_same}, {SP_OP_SQRT, fmt_same},
    {SP_OP_TAN, fmt_same}, {SP_OP_TANH, fmt_same},
    {SP_OP_ADD, fmt_same}, {SP_OP_AND, fmt_same}, {SP_OP_ATAN2, fmt_same},
    {SP_OP_DIVIDE, fmt_same}, {SP_OP_MAXIMUM, fmt_same}, {SP_OP_MINIMUM, fmt_same},
    {SP_OP_MULTIPLY, fmt_same}, {SP_OP_OR, fmt_same}, {SP_OP_POWER, fmt_same},
    {SP_OP_REMAINDER, fmt_same}, {SP_OP_SHIFT_LEFT, fmt_same},
    {SP_OP_SHIFT_RIGHT_ARITHMETIC, fmt_same}, {SP_OP_SHIFT_RIGHT_LOGICAL, fmt_same},
    {SP_OP_SUBTRACT, fmt_same}, {SP_OP_XOR, fmt_same}, {SP_OP_CLAMP, fmt_same},
    {SP_OP_RESHAPE, fmt_func}, {SP_OP_BITCAST_CONVERT, fmt_func},
    {SP_OP_DYNAMIC_UPDATE_SLICE, fmt_func},
    {SP_OP_AFTER_ALL, fmt_result},
    {SP_OP_BROADCAST_IN_DIM, fmt_broadcast_in_dim}, {SP_OP_TRANSPOSE, fmt_transpose},
    {SP_OP_REVERSE, fmt_reverse}, {SP_OP_CONCATENATE, fmt_concatenate},
    {SP_OP_DYNAMIC_SLICE, fmt_dynamic_slice}, {SP_OP_PAD, fmt_pad}, {SP_OP_FFT, fmt_fft},
    {SP_OP_RNG_BIT_GENERATOR, fmt_rng_bit_generator}, {SP_OP_IOTA, fmt_iota},
    {SP_OP_CHOLESKY, fmt_cholesky}, {SP_OP_DOT, fmt_dot}, {SP_OP_COMPARE, fmt_compare},
    {SP_OP_SELECT, fmt_select}, {SP_OP_COMPLEX, fmt_complex}, {SP_OP_TUPLE, fmt_tuple},
    {SP_OP_GET_TUPLE_ELEMENT, fmt_get_tuple_element},
    {SP_OP_OPTIMIZATION_BARRIER, fmt_optimization_barrier},
    {SP_OP_PARTITION_ID, fmt_nullary}, {SP_OP_REPLICA_ID, fmt_nullary},
    {SP_OP_CREATE_TOKEN, fmt_nullary}, {SP_OP_REDUCE_PRECISION, fmt_reduce_precision},
    {SP_OP_SLICE, fmt_slice}, {SP_OP_CHLO_TOP_K, fmt_top_k}, {SP_OP_MHLO_TOPK, fmt_top_k},
};

static const piece *desc_for(sp_op_kind kind) {
  for (size_t i = 0; i < sizeof descs / sizeof descs[0]; i++)
    if (descs[i].kind == kind) return descs[i].pieces;
  return NULL;
}

/* ------------------------------------------------------------------ parsing pieces */

/* The token a punctuation character of a literal stands for; SP_TOK_EOF for a word. */
static sp__mlir_tok_kind literal_punct(char c) {
  switch (c) {
    case ',': return SP_TOK_COMMA;
    case '=': return SP_TOK_EQUAL;
    case '[': return SP_TOK_LSQUARE;
    case ']': return SP_TOK_RSQUARE;
    case ':': return SP_TOK_COLON;
    case '{': return SP_TOK_LBRACE;
    case '}': return SP_TOK_RBRACE;
    case '(': return SP_TOK_LPAREN;
    case ')': return SP_TOK_RPAREN;
    default: return SP_TOK_EOF;
  }
}

/* Consumes the tokens of literal text `s` (",", "=", "[", "]", ":", words). */
int sp__mlir_parse_literal(sp__mlir_parser *p, const char *s, const char *op) {
  while (*s) {
    if (*s == ' ') {
      s++;
      continue;
    }
    sp__mlir_tok_kind k = literal_punct(*s);
    if (k == SP_TOK_EOF) {
      char word[32];
      size_t n = 0;
      while (s[n] && s[n] != ' ' && n < sizeof word - 1) {
        word[n] = s[n];
        n++;
      }
      word[n] = '\0';
      s += n;
      int rc = sp__mlir_expect_word(p, word, op);
      if (rc) return rc;
      continue;
    }
    int rc = sp__mlir_expect(p, k, op);
    if (rc) return rc;
    s++;
  }
  return SP_OK;
}

/* Does literal `s` start at the current token? (`, lower` : a comma then the word) */
bool sp__mlir_literal_ahead(sp__mlir_parser *p, const char *s) {
  /* Optional clauses are mostly absent, and most start with punctuation: then the current
   * token answers without the trial parse (which saves and restores the whole lexer). */
  sp__mlir_tok_kind first = literal_punct(*s);
  if (first != SP_TOK_EOF && p->lx.tok.kind != first) return false;
  sp__mlir_lexer saved = p->lx;
  p->trial++;
  int rc = sp__mlir_parse_literal(p, s, "optional clause");
  p->trial--;
  p->lx = saved;
  return rc == SP_OK;
}

static int set_bool(sp__mlir_parser *p, sp_attrs *dst, const char *name, bool v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_BOOL, .u.b = v};
  return sp__mlir_set_attr(p, dst, &at);
}

int sp__mlir_set_text(sp__mlir_parser *p, sp_attrs *dst, const char *name, const char *s) {
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT, .u.s = s};
  return sp__mlir_set_attr(p, dst, &at);
}

/* `, precision = [DEFAULT, HIGH]` -> precision_config = [#stablehlo<precision DEFAULT>, ...] */
int sp__mlir_parse_precision(sp__mlir_parser *p, sp_attrs *attrs) {
  if (!sp__mlir_literal_ahead(p, ", precision")) return SP_OK;
  int rc = sp__mlir_parse_literal(p, ", precision = [", "precision");
  if (rc) return rc;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_putc(&sb, '[');
  for (int i = 0; p->lx.tok.kind != SP_TOK_RSQUARE; i++) {
    if (i && (rc = sp__mlir_expect(p, SP_TOK_COMMA, "precision"))) break;
    if (p->lx.tok.kind != SP_TOK_BARE) {
      rc = sp__mlir_error(p, NULL, "expected precision name in precision list");
      break;
    }
    sp_strbuf_printf(&sb, "%s#stablehlo<precision %.*s>", i ? ", " : "", (int)p->lx.tok.n, p->lx.tok.p);
    sp__mlir_next(p);
  }
  sp_strbuf_putc(&sb, ']');
  if (!rc) rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "precision");
  const char *s = rc ? NULL : sp_arena_strdup(p->a, sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  if (rc) return rc;
  if (!s) return sp__mlir_oom(p);
  return sp__mlir_set_text(p, attrs, "precision_config", s);
}

/* [0:4, 1:8:2] */
static int parse_slice_ranges(sp__mlir_parser *p, sp_attrs *attrs) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "slice");
  if (rc) return rc;
  int64_t v[3][SP_MAX_RANK];
  int n = 0;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (n == SP_MAX_RANK) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "slice rank exceeds SP_MAX_RANK");
      v[2][n] = 1;
      if ((rc = sp__mlir_parse_int(p, &v[0][n], "slice")) ||
          (rc = sp__mlir_expect(p, SP_TOK_COLON, "slice")) ||
          (rc = sp__mlir_parse_int(p, &v[1][n], "slice")))
        return rc;
      if (sp__mlir_accept(p, SP_TOK_COLON) && (rc = sp__mlir_parse_int(p, &v[2][n], "slice"))) return rc;
      n++;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "slice"))) return rc;
  static const char *const names[3] = {"start_indices", "limit_indices", "strides"};
  for (int k = 0; k < 3; k++) {
    sp_ints ints = {n, NULL};
    if (n) {
      ints.v = sp_arena_alloc(p->a, (size_t)n * sizeof *ints.v);
      if (!ints.v) return sp__mlir_oom(p);
      memcpy(ints.v, v[k], (size_t)n * sizeof *ints.v);
    }
    if ((rc = sp__mlir_set_ints(p, attrs, names[k], ints))) return rc;
  }
  return SP_OK;
}

/* e5m10 */
static int parse_expmant(sp__mlir_parser *p, sp_attrs *attrs) {
  const sp__mlir_token *t = &p->lx.tok;
  int64_t e = 0, m = 0;
  size_t i = 1;
  if (t->kind != SP_TOK_BARE || t->p[0] != 'e') goto bad;
  for (; i < t->n && t->p[i] >= '0' && t->p[i] <= '9'; i++) e = e * 10 + (t->p[i] - '0');
  if (i == 1 || i >= t->n || t->p[i] != 'm' || i + 1 >= t->n) goto bad;
  for (i++; i < t->n; i++) {
    if (t->p[i] < '0' || t->p[i] > '9' || m > 1000000) goto bad;
    m = m * 10 + (t->p[i] - '0');
  }
  if (e > 1000000) goto bad;
  sp__mlir_next(p);
  int rc = sp__mlir_set_int(p, attrs, "exponent_bits", e);
  return rc ? rc : sp__mlir_set_int(p, attrs, "mantissa_bits", m);
bad:
  return sp__mlir_error(p, NULL, "expected format like e5m10 in reduce_precision");
}

static sp_type *real_of_complex(sp__mlir_parser *p, const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR || !t->elem || strncmp(t->elem, "complex<", 8) != 0) return NULL;
  size_t n = strlen(t->elem);
  const char *elem = sp__mlir_intern(p, t->elem + 8, n - 9);
  return elem ? sp_type_tensor(p->a, t->rank, t->dims, elem) : NULL;
}

static int parse_pieces(sp__mlir_parser *p, const sp__mlir_op_header *h, const piece *pc,
                        sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  bool typed_operands = false;
  int rc = SP_OK;
  for (; pc->k != F_END && !rc; pc++) {
    switch (pc->k) {
      case F_OPERANDS:
      case F_OPERANDS_RAW: rc = sp__mlir_parse_operand_list(p, &vals); break;
      case F_LIT: rc = sp__mlir_parse_literal(p, pc->s, h->name); break;
      case F_INTS: {
        sp_ints v;
        if (!(rc = sp__mlir_parse_int_list(p, &v, h->name))) rc = sp__mlir_set_ints(p, &attrs, pc->s, v);
        break;
      }
      case F_INT: {
        int64_t v;
        if (!(rc = sp__mlir_parse_int(p, &v, h->name))) rc = sp__mlir_set_int(p, &attrs, pc->s, v);
        break;
      }
      case F_ENUM:
      case F_KEYWORD: {
        const sp__mlir_token *t = &p->lx.tok;
        if (t->kind != SP_TOK_BARE) {
          rc = sp__mlir_error(p, NULL, "expected keyword in %s", h->name);
          break;
        }
        sp_attr at = {.name = pc->s, .kind = pc->k == F_ENUM ? SP_ATTR_ENUM : SP_ATTR_TEXT};
        at.u.s = pc->k == F_ENUM ? sp__mlir_intern(p, t->p, t->n)
                                 : sp_arena_printf(p->a, "%s %.*s>", pc->s2, (int)t->n, t->p);
        if (!at.u.s) {
          rc = sp__mlir_oom(p);
          break;
        }
        sp__mlir_next(p);
        rc = sp__mlir_set_attr(p, &attrs, &at);
        break;
      }
      case F_BOOL:
        if (sp__mlir_accept_word(p, "true")) rc = set_bool(p, &attrs, pc->s, true);
        else if (sp__mlir_accept_word(p, "false")) rc = set_bool(p, &attrs, pc->s, false);
        else rc = sp__mlir_error(p, NULL, "expected true or false in %s", h->name);
        break;
      case F_ATTRS: rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs); break;
      case F_SAME_TYPE:
        rc = sp__mlir_parse_same_or_function_type(p, vals.n, &ins, &outs);
        typed_operands = true;
        break;
      case F_FUNC_TYPE:
        rc = sp__mlir_parse_function_type(p, &ins, &outs);
        typed_operands = true;
        break;
      case F_RESULT_TYPE: {
        sp_type *t;
        if (!(rc = sp__mlir_parse_type(p, &t))) rc = sp__mlir_types_push(p, &outs, t);
        break;
      }
      case F_PAIRWISE:
        /* No operands: StableHLO's "()" (optional here), so that a value defined on the next
         * line is not read as an operand. */
        if (!vals.n && sp__mlir_accept(p, SP_TOK_LPAREN))
          rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name);
        if (vals.n) {
          if ((rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) || (rc = sp__mlir_parse_type_list(p, &ins)))
            break;
          for (int i = 0; i < ins.n && !rc; i++) {
            sp_type *copy = sp_arena_alloc(p->a, sizeof *copy);
            if (!copy) rc = sp__mlir_oom(p);
            else {
              *copy = *ins.v[i];
              rc = sp__mlir_types_push(p, &outs, copy);
            }
          }
          typed_operands = true;
        }
        break;
      case F_SELECT_TYPE:
        if (p->lx.tok.kind == SP_TOK_LPAREN) {
          rc = sp__mlir_parse_function_type(p, &ins, &outs);
        } else {
          sp_type *pred, *res;
          if ((rc = sp__mlir_parse_type(p, &pred)) || (rc = sp__mlir_expect(p, SP_TOK_COMMA, h->name)) ||
              (rc = sp__mlir_parse_type(p, &res)))
            break;
          if ((rc = sp__mlir_types_push(p, &ins, pred)) || (rc = sp__mlir_types_push(p, &ins, res)) ||
              (rc = sp__mlir_types_push(p, &ins, res)) || (rc = sp__mlir_types_push(p, &outs, res)))
            break;
        }
        typed_operands = true;
        break;
      case F_COMPLEX_TYPE:
        if (p->lx.tok.kind == SP_TOK_LPAREN) {
          rc = sp__mlir_parse_function_type(p, &ins, &outs);
        } else {
          sp_type *res, *re;
          if ((rc = sp__mlir_parse_type(p, &res))) break;
          if (!(re = real_of_complex(p, res))) {
            rc = sp__mlir_error(p, &h->name_tok, "expected a complex tensor type for %s", h->name);
            break;
          }
          for (int i = 0; i < vals.n && !rc; i++) rc = sp__mlir_types_push(p, &ins, re);
          if (!rc) rc = sp__mlir_types_push(p, &outs, res);
        }
        typed_operands = true;
        break;
      case F_TUPLE_TYPE: {
        sp_type *t;
        if ((rc = sp__mlir_parse_type(p, &t))) break;
        if (t->kind != SP_TYPE_TUPLE) {
          rc = sp__mlir_error(p, &h->name_tok, "expected a tuple type for %s", h->name);
          break;
        }
        for (int i = 0; i < t->nelems && !rc; i++) rc = sp__mlir_types_push(p, &ins, t->elems[i]);
        if (!rc) rc = sp__mlir_types_push(p, &outs, t);
        typed_operands = true;
        break;
      }
      case F_PRECISION: rc = sp__mlir_parse_precision(p, &attrs); break;
      case F_EXPMANT: rc = parse_expmant(p, &attrs); break;
      case F_SLICE_RANGES: rc = parse_slice_ranges(p, &attrs); break;
      case F_OPT: {
        /* The group is present iff its first literal is ahead. */
        const piece *first = pc + 1;
        if (first->k == F_LIT && sp__mlir_literal_ahead(p, first->s)) break;
        while (pc->k != F_OPT_END) pc++;
        break;
      }
      case F_OPT_END:
      case F_END: break;
    }
  }
  if (rc) return rc;
  if (typed_operands) {
    if (ins.n != vals.n)
      return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d", h->name,
                            vals.n, ins.n);
    for (int i = 0; i < vals.n; i++)
      if (!sp_type_equal(vals.v[i]->type, ins.v[i]))
        return sp__mlir_error(p, &h->name_tok,
                              "type of operand #%d of '%s' does not match its definition", i, h->name);
  }
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, 0, NULL, &attrs, out);
}

static int parse_desc(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  const piece *pc = desc_for(h->kind);
  return pc ? parse_pieces(p, h, pc, out) : sp__mlir_parse_fallback_op(p, h, out);
}

/* ------------------------------------------------------------------ printing pieces */

/* The keyword inside "<prefix> KW>" text, or NULL. */
static const char *keyword_of(const sp_op *op, const char *name, const char *prefix, size_t *len) {
  const char *s = sp_op_get_str(op, name);
  size_t pn = strlen(prefix);
  if (!s || strncmp(s, prefix, pn) != 0 || s[pn] != ' ') return NULL;
  const char *kw = s + pn + 1;
  size_t n = strlen(kw);
  if (n < 2 || kw[n - 1] != '>') return NULL;
  *len = n - 1;
  return kw;
}

/* StableHLO's precision names: only these read back from the pretty form. */
static bool is_precision_name(const char *s, size_t n) {
  static const char *const names[] = {"DEFAULT", "HIGH", "HIGHEST"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++)
    if (strlen(names[k]) == n && memcmp(s, names[k], n) == 0) return true;
  return false;
}

/* Precision names of a precision_config text, as "DEFAULT, HIGH"; false if not that shape
 * (the op is then printed in the generic form, which keeps the text as it came). */
bool sp__mlir_precision_names(const char *s, sp_strbuf *out) {
  static const char pre[] = "#stablehlo<precision ";
  if (!s || *s++ != '[') return false;
  for (bool first = true; *s != ']'; first = false) {
    if (!first) {
      if (strncmp(s, ", ", 2) != 0) return false;
      s += 2;
    }
    if (strncmp(s, pre, sizeof pre - 1) != 0) return false;
    s += sizeof pre - 1;
    const char *e = strchr(s, '>');
    if (!e || !is_precision_name(s, (size_t)(e - s))) return false;
    if (!first) sp_strbuf_puts(out, ", ");
    sp_strbuf_putn(out, s, (size_t)(e - s));
    s = e + 1;
  }
  return s[1] == '\0';
}

static bool has_attr_kind(const sp_op *op, const char *name, sp_attr_kind kind) {
  sp_attr *a = sp_op_attr(op, name);
  return a && a->kind == kind;
}

/* Checks that `op` has everything its pieces print, and collects the elided names. */
static bool pieces_apply(const sp_op *op, const piece *pc, const char **elided, int cap) {
  int n = 0;
  bool optional = false;
  if (op->nregions) return false;
  for (; pc->k != F_END; pc++) {
    const char *name = NULL;
    switch (pc->k) {
      case F_INTS: name = pc->s; if (!optional && !has_attr_kind(op, name, SP_ATTR_INTS)) return false; break;
      case F_INT: name = pc->s; if (!optional && !has_attr_kind(op, name, SP_ATTR_INT)) return false; break;
      case F_ENUM: name = pc->s; if (!optional && !has_attr_kind(op, name, SP_ATTR_ENUM)) return false; break;
      case F_BOOL: name = pc->s; if (!optional && !has_attr_kind(op, name, SP_ATTR_BOOL)) return false; break;
      case F_KEYWORD: {
        size_t len;
        name = pc->s;
        bool ok = keyword_of(op, name, pc->s2, &len) != NULL;
        if (!ok && (!optional || sp_op_attr(op, name))) return false;
        break;
      }
      case F_OPT: {
        sp_attr *a = sp_op_attr(op, pc->s);
        optional = true;
        if (!a) break;
        const piece *q = pc + 1;
        for (; q->k != F_OPT_END; q++) {
          if (q->k == F_BOOL && a->kind != SP_ATTR_BOOL) return false;
          if (q->k == F_KEYWORD) {
            size_t len;
            if (!keyword_of(op, q->s, q->s2, &len)) return false;
          }
        }
        break;
      }
      case F_OPT_END: optional = false; break;
      case F_SAME_TYPE:
      case F_RESULT_TYPE:
        if (op->nresults != 1) return false;
        break;
      case F_SELECT_TYPE:
        if (op->nresults != 1 || op->noperands != 3) return false;
        break;
      case F_COMPLEX_TYPE:
      case F_TUPLE_TYPE:
        if (op->nresults != 1) return false;
        if (pc->k == F_TUPLE_TYPE && (!op->results[0].type || op->results[0].type->kind != SP_TYPE_TUPLE))
          return false;
        break;
      case F_PAIRWISE:
        if (op->nresults != op->noperands) return false;
        break;
      case F_PRECISION: {
        sp_strbuf sb = SP_STRBUF_INIT;
        const char *s = sp_op_get_str(op, "precision_config");
        if (s && sp__mlir_precision_names(s, &sb)) name = "precision_config";
        sp_strbuf_free(&sb);
        break;
      }
      case F_EXPMANT:
        if (!has_attr_kind(op, "exponent_bits", SP_ATTR_INT) || !has_attr_kind(op, "mantissa_bits", SP_ATTR_INT))
          return false;
        if (n + 2 >= cap) return false;
        elided[n++] = "exponent_bits";
        name = "mantissa_bits";
        break;
      case F_SLICE_RANGES: {
        sp_ints a, b, c;
        if (!sp_op_get_ints(op, "start_indices", &a) || !sp_op_get_ints(op, "limit_indices", &b) ||
            !sp_op_get_ints(op, "strides", &c) || a.n != b.n || a.n != c.n)
          return false;
        if (n + 3 >= cap) return false;
        elided[n++] = "start_indices";
        elided[n++] = "limit_indices";
        name = "strides";
        break;
      }
      default: break;
    }
    if (name) {
      if (n + 1 >= cap) return false;
      elided[n++] = name;
    }
  }
  elided[n] = NULL;
  return true;
}

void sp__mlir_print_int_list(sp__mlir_writer *w, const sp_ints *v) {
  sp__mlir_w_putc(w, '[');
  sp__mlir_put_ints(w->out, v->v, v->n);
  sp__mlir_w_putc(w, ']');
}

/* select's `pred_type, result_type` when both branches have the result's type, else the
 * function type. */
static void print_select_type(sp__mlir_writer *w, const sp_op *op) {
  const sp_type *r = op->results[0].type;
  const sp_value *t = op->operands[1].value, *f = op->operands[2].value;
  if (t && f && sp_type_equal(t->type, r) && sp_type_equal(f->type, r) && op->operands[0].value) {
    sp__mlir_w_type(w, op->operands[0].value->type);
    sp__mlir_w_puts(w, ", ");
    sp__mlir_w_type(w, r);
  } else {
    sp__mlir_w_function_type(w, op);
  }
}

/* complex's result type alone when it is complex<E> over operands of type E and the same
 * shape, else the function type. */
static void print_complex_type(sp__mlir_writer *w, const sp_op *op) {
  const sp_type *r = op->results[0].type;
  bool ok = r && r->kind == SP_TYPE_TENSOR && r->elem && strncmp(r->elem, "complex<", 8) == 0;
  for (int i = 0; i < op->noperands && ok; i++) {
    const sp_value *v = op->operands[i].value;
    const sp_type *t = v ? v->type : NULL;
    size_t n = r->elem ? strlen(r->elem) : 0;
    ok = t && t->kind == SP_TYPE_TENSOR && t->rank == r->rank && t->elem &&
         strlen(t->elem) == n - 9 && strncmp(t->elem, r->elem + 8, n - 9) == 0 &&
         (t->rank <= 0 || memcmp(t->dims, r->dims, (size_t)t->rank * sizeof *t->dims) == 0);
  }
  if (ok) sp__mlir_w_type(w, r);
  else sp__mlir_w_function_type(w, op);
}

/* `, precision = [DEFAULT, HIGH]` when the precision_config has StableHLO's names. */
static void print_precision(sp__mlir_writer *w, const sp_op *op) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (sp__mlir_precision_names(sp_op_get_str(op, "precision_config"), &sb)) {
    sp__mlir_w_puts(w, ", precision = [");
    sp__mlir_w_puts(w, sp_strbuf_str(&sb));
    sp__mlir_w_putc(w, ']');
  }
  sp_strbuf_free(&sb);
}

/* slice's [start:limit(:stride), ...], the stride only when it is not 1. */
static void print_slice_ranges(sp__mlir_writer *w, const sp_op *op) {
  sp_ints a, b, c;
  sp_op_get_ints(op, "start_indices", &a);
  sp_op_get_ints(op, "limit_indices", &b);
  sp_op_get_ints(op, "strides", &c);
  sp__mlir_w_putc(w, '[');
  for (int i = 0; i < a.n; i++) {
    sp_strbuf_printf(w->out, "%s%lld:%lld", i ? ", " : "", (long long)a.v[i], (long long)b.v[i]);
    if (c.v[i] != 1) sp_strbuf_printf(w->out, ":%lld", (long long)c.v[i]);
  }
  sp__mlir_w_putc(w, ']');
}

static bool print_pieces(sp__mlir_writer *w, const sp_op *op, const piece *pc) {
  const char *elided[24];
  if (!pieces_apply(op, pc, elided, 24)) return false;
  sp__mlir_w_op_name(w, op);
  for (; pc->k != F_END; pc++) {
    switch (pc->k) {
      case F_OPERANDS: sp__mlir_w_operands_lead(w, op); break;
      case F_OPERANDS_RAW: sp__mlir_w_operands(w, op, 0, op->noperands); break;
      case F_LIT: sp__mlir_w_puts(w, pc->s); break;
      case F_INTS: {
        sp_ints v;
        sp_op_get_ints(op, pc->s, &v);
        sp__mlir_print_int_list(w, &v);
        break;
      }
      case F_INT: {
        int64_t v = 0;
        sp_op_get_int(op, pc->s, &v);
        sp_strbuf_put_i64(w->out, v);
        break;
      }
      case F_ENUM: sp__mlir_w_puts(w, sp_op_get_str(op, pc->s)); break;
      case F_KEYWORD: {
        size_t len;
        const char *kw = keyword_of(op, pc->s, pc->s2, &len);
        if (kw) sp_strbuf_putn(w->out, kw, len);
        break;
      }
      case F_BOOL: {
        sp_attr *a = sp_op_attr(op, pc->s);
        sp__mlir_w_puts(w, a && a->u.b ? "true" : "false");
        break;
      }
      case F_ATTRS: sp__mlir_w_attr_dict(w, op, elided, false); break;
      case F_SAME_TYPE: sp__mlir_w_same_or_function_type(w, op); break;
      case F_FUNC_TYPE: sp__mlir_w_function_type(w, op); break;
      case F_RESULT_TYPE:
      case F_TUPLE_TYPE: sp__mlir_w_type(w, op->results[0].type); break;
      case F_PAIRWISE:
        if (op->noperands) {
          sp__mlir_w_puts(w, " : ");
          sp__mlir_w_operand_types(w, op, 0, op->noperands);
        } else {
          sp__mlir_w_puts(w, " ()");
        }
        break;
      case F_SELECT_TYPE: print_select_type(w, op); break;
      case F_COMPLEX_TYPE: print_complex_type(w, op); break;
      case F_PRECISION: print_precision(w, op); break;
      case F_EXPMANT: {
        int64_t e = 0, m = 0;
        sp_op_get_int(op, "exponent_bits", &e);
        sp_op_get_int(op, "mantissa_bits", &m);
        sp_strbuf_printf(w->out, "e%lldm%lld", (long long)e, (long long)m);
        break;
      }
      case F_SLICE_RANGES: print_slice_ranges(w, op); break;
      case F_OPT:
        if (!sp_op_attr(op, pc->s))
          while (pc->k != F_OPT_END) pc++;
        break;
      case F_OPT_END:
      case F_END: break;
    }
  }
  return true;
}

static bool print_desc(sp__mlir_writer *w, const sp_op *op) {
  const piece *pc = desc_for(op->kind);
  return pc && print_pieces(w, op, pc);
}

/* ------------------------------------------------------------------ the table */

const sp__mlir_format sp__mlir_stablehlo_formats[] = {
    {SP_OP_ABS, parse_desc, print_desc}, {SP_OP_CBRT, parse_desc, print_desc},
    {SP_OP_CEIL, parse_desc, print_desc}, {SP_OP_CLZ, parse_desc, print_desc},
    {SP_OP_CONVERT, parse_desc, print_desc}, {SP_OP_COSINE, parse_desc, print_desc},
    {SP_OP_EXP, parse_desc, print_desc}, {SP_OP_EXPM1, parse_desc, print_desc},
    {SP_OP_FLOOR, parse_desc, print_desc}, {SP_OP_IMAG, parse_desc, print_desc},
    {SP_OP_IS_FINITE, parse_desc, print_desc}, {SP_OP_LOG, parse_desc, print_desc},
    {SP_OP_LOG1P, parse_desc, print_desc}, {SP_OP_LOGISTIC, parse_desc, print_desc},
    {SP_OP_NEGATE, parse_desc, print_desc}, {SP_OP_NOT, parse_desc, print_desc},
    {SP_OP_POPCNT, parse_desc, print_desc}, {SP_OP_REAL, parse_desc, print_desc},
    {SP_OP_ROUND_AFZ, parse_desc, print_desc}, {SP_OP_ROUND_EVEN, parse_desc, print_desc},
    {SP_OP_RSQRT, parse_desc, print_desc}, {SP_OP_SIGN, parse_desc, print_desc},
    {SP_OP_SINE, parse_desc, print_desc}, {SP_OP_SQRT, parse_desc, print_desc},
    {SP_OP_TAN, parse_desc, print_desc}, {SP_OP_TANH, parse_desc, print_desc},
    {SP_OP_ADD, parse_desc, print_desc}, {SP_OP_AND, parse_desc, print_desc},
    {SP_OP_ATAN2, parse_desc, print_desc}, {SP_OP_DIVIDE, parse_desc, print_desc},
    {SP_OP_MAXIMUM, parse_desc, print_desc}, {SP_OP_MINIMUM, parse_desc, print_desc},
    {SP_OP_MULTIPLY, parse_desc, print_desc}, {SP_OP_OR, parse_desc, print_desc},
    {SP_OP_POWER, parse_desc, print_desc}, {SP_OP_REMAINDER, parse_desc, print_desc},
    {SP_OP_SHIFT_LEFT, parse_desc, print_desc},
    {SP_OP_SHIFT_RIGHT_ARITHMETIC, parse_desc, print_desc},
    {SP_OP_SHIFT_RIGHT_LOGICAL, parse_desc, print_desc},
    {SP_OP_SUBTRACT, parse_desc, print_desc}, {SP_OP_XOR, parse_desc, print_desc},
    {SP_OP_CLAMP, parse_desc, print_desc}, {SP_OP_RESHAPE, parse_desc, print_desc},
    {SP_OP_BITCAST_CONVERT, parse_desc, print_desc},
    {SP_OP_DYNAMIC_UPDATE_SLICE, parse_desc, print_desc},
    {SP_OP_AFTER_ALL, parse_desc, print_desc},
    {SP_OP_BROADCAST_IN_DIM, parse_desc, print_desc}, {SP_OP_TRANSPOSE, parse_desc, print_desc},
    {SP_OP_REVERSE, parse_desc, print_desc}, {SP_OP_CONCATENATE, parse_desc, print_desc},
    {SP_OP_DYNAMIC_SLICE, parse_desc, print_desc}, {SP_OP_PAD, parse_desc, print_desc},
    {SP_OP_FFT, parse_desc, print_desc}, {SP_OP_RNG_BIT_GENERATOR, parse_desc, print_desc},
    {SP_OP_IOTA, parse_desc, print_desc}, {SP_OP_CHOLESKY, parse_desc, print_desc},
    {SP_OP_DOT, parse_desc, print_desc}, {SP_OP_COMPARE, parse_desc, print_desc},
    {SP_OP_SELECT, parse_desc, print_desc}, {SP_OP_COMPLEX, parse_desc, print_desc},
    {SP_OP_TUPLE, parse_desc, print_desc}, {SP_OP_GET_TUPLE_ELEMENT, parse_desc, print_desc},
    {SP_OP_OPTIMIZATION_BARRIER, parse_desc, print_desc},
    {SP_OP_PARTITION_ID, parse_desc, print_desc}, {SP_OP_REPLICA_ID, parse_desc, print_desc},
    {SP_OP_CREATE_TOKEN, parse_desc, print_desc},
    {SP_OP_REDUCE_PRECISION, parse_desc, print_desc}, {SP_OP_SLICE, parse_desc, print_desc},
    {SP_OP_CHLO_TOP_K, parse_desc, print_desc}, {SP_OP_MHLO_TOPK, parse_desc, print_desc},
    {SP_OP_DOT_GENERAL, sp__mlir_parse_dot_general, sp__mlir_print_dot_general},
    {SP_OP_CONVOLUTION, sp__mlir_parse_convolution, sp__mlir_print_convolution},
    {SP_OP_CUSTOM_CALL, sp__mlir_parse_custom_call, sp__mlir_print_custom_call},
    {SP_OP_REDUCE, sp__mlir_parse_reduce, sp__mlir_print_reduce},
    {SP_OP_WHILE, sp__mlir_parse_while, sp__mlir_print_while},
    {SP_OP_CONSTANT, sp__mlir_parse_constant_like, sp__mlir_print_constant_like},
    {SP_OP_RETURN, sp__mlir_parse_return_like, sp__mlir_print_return_like},
    {SP_OP_UNKNOWN, NULL, NULL}};
