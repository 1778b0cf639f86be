/*
 * format_stablehlo.c - custom syntax of StableHLO ops (see format.h).
 *
 * Most StableHLO custom forms are a fixed sequence of pieces (operands, keyword clauses such as
 * `, dims = [...]`, the attribute dictionary, a type signature). Those are described by a small
 * table of pieces that one interpreter both parses and prints, so the two directions cannot
 * drift apart. The irregular ones (dot_general, convolution, reduce, while, custom_call,
 * constant) have their own functions below.
 *
 * Ops printed in generic form by MLIR itself (case, if, gather, scatter, sort, reduce_window,
 * collectives, ...) have no entry here.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/format.h"
#include "mlir/spelling.h"

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
  F_PAIRWISE,      /* [: T1, T2] operand types = result types */
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

/* Consumes the tokens of literal text `s` (",", "=", "[", "]", ":", words). */
static int parse_literal(sp__mlir_parser *p, const char *s, const char *op) {
  while (*s) {
    if (*s == ' ') {
      s++;
      continue;
    }
    sp__mlir_tok_kind k;
    switch (*s) {
      case ',': k = SP_TOK_COMMA; break;
      case '=': k = SP_TOK_EQUAL; break;
      case '[': k = SP_TOK_LSQUARE; break;
      case ']': k = SP_TOK_RSQUARE; break;
      case ':': k = SP_TOK_COLON; break;
      case '{': k = SP_TOK_LBRACE; break;
      case '}': k = SP_TOK_RBRACE; break;
      case '(': k = SP_TOK_LPAREN; break;
      case ')': k = SP_TOK_RPAREN; break;
      default: {
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
    }
    int rc = sp__mlir_expect(p, k, op);
    if (rc) return rc;
    s++;
  }
  return SP_OK;
}

/* Does literal `s` start at the current token? (`, lower` : a comma then the word) */
static bool literal_ahead(sp__mlir_parser *p, const char *s) {
  sp__mlir_lexer saved = p->lx;
  p->trial++;
  int rc = parse_literal(p, s, "optional clause");
  p->trial--;
  p->lx = saved;
  return rc == SP_OK;
}

static int set_bool(sp__mlir_parser *p, sp_attrs *dst, const char *name, bool v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_BOOL, .u.b = v};
  return sp__mlir_set_attr(p, dst, &at);
}

static int set_text(sp__mlir_parser *p, sp_attrs *dst, const char *name, const char *s) {
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT, .u.s = s};
  return sp__mlir_set_attr(p, dst, &at);
}

/* `, precision = [DEFAULT, HIGH]` -> precision_config = [#stablehlo<precision DEFAULT>, ...] */
static int parse_precision(sp__mlir_parser *p, sp_attrs *attrs) {
  if (!literal_ahead(p, ", precision")) return SP_OK;
  int rc = parse_literal(p, ", precision = [", "precision");
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
  return set_text(p, attrs, "precision_config", s);
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
      case F_LIT: rc = parse_literal(p, pc->s, h->name); break;
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
      case F_PRECISION: rc = parse_precision(p, &attrs); break;
      case F_EXPMANT: rc = parse_expmant(p, &attrs); break;
      case F_SLICE_RANGES: rc = parse_slice_ranges(p, &attrs); break;
      case F_OPT: {
        /* The group is present iff its first literal is ahead. */
        const piece *first = pc + 1;
        if (first->k == F_LIT && literal_ahead(p, first->s)) break;
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

/* Precision names of a precision_config text, as "DEFAULT, HIGH"; false if not that shape. */
static bool precision_names(const char *s, sp_strbuf *out) {
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
    if (!e) return false;
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
        if (s && precision_names(s, &sb)) name = "precision_config";
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

static void print_int_list(sp__mlir_writer *w, const sp_ints *v) {
  sp__mlir_w_putc(w, '[');
  sp__mlir_put_ints(w->out, v->v, v->n);
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
        print_int_list(w, &v);
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
        }
        break;
      case F_SELECT_TYPE: {
        const sp_type *r = op->results[0].type;
        const sp_value *t = op->operands[1].value, *f = op->operands[2].value;
        if (t && f && sp_type_equal(t->type, r) && sp_type_equal(f->type, r) && op->operands[0].value) {
          sp__mlir_w_type(w, op->operands[0].value->type);
          sp__mlir_w_puts(w, ", ");
          sp__mlir_w_type(w, r);
        } else {
          sp__mlir_w_function_type(w, op);
        }
        break;
      }
      case F_COMPLEX_TYPE: {
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
        break;
      }
      case F_PRECISION: {
        sp_strbuf sb = SP_STRBUF_INIT;
        if (precision_names(sp_op_get_str(op, "precision_config"), &sb)) {
          sp__mlir_w_puts(w, ", precision = [");
          sp__mlir_w_puts(w, sp_strbuf_str(&sb));
          sp__mlir_w_putc(w, ']');
        }
        sp_strbuf_free(&sb);
        break;
      }
      case F_EXPMANT: {
        int64_t e = 0, m = 0;
        sp_op_get_int(op, "exponent_bits", &e);
        sp_op_get_int(op, "mantissa_bits", &m);
        sp_strbuf_printf(w->out, "e%lldm%lld", (long long)e, (long long)m);
        break;
      }
      case F_SLICE_RANGES: {
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
        break;
      }
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

static int parse_dot_general(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
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
      (rc = parse_precision(p, &attrs)))
    return rc;
  if (literal_ahead(p, ", algorithm")) {
    sp_strbuf sb = SP_STRBUF_INIT;
    if ((rc = parse_literal(p, ", algorithm =", h->name))) return rc;
    rc = sp__mlir_parse_attr_text(p, &sb, false, NULL);
    const char *s = rc ? NULL : sp_arena_printf(p->a, "#stablehlo.dot_algorithm%s", sp_strbuf_str(&sb));
    sp_strbuf_free(&sb);
    if (rc) return rc;
    if (!s) return sp__mlir_oom(p);
    if ((rc = set_text(p, &attrs, "algorithm", s))) return rc;
  }
  return sp__mlir_finish_op(p, h, &vals, 0, NULL, &attrs, out);
}

static bool print_dot_general(sp__mlir_writer *w, const sp_op *op) {
  sp_ints lb, rb, lc, rc;
  if (op->noperands != 2 || op->nresults != 1 || op->nregions ||
      !sp_op_get_ints(op, "lhs_batching_dimensions", &lb) ||
      !sp_op_get_ints(op, "rhs_batching_dimensions", &rb) ||
      !sp_op_get_ints(op, "lhs_contracting_dimensions", &lc) ||
      !sp_op_get_ints(op, "rhs_contracting_dimensions", &rc))
    return false;
  sp_strbuf prec = SP_STRBUF_INIT;
  bool has_prec = precision_names(sp_op_get_str(op, "precision_config"), &prec);
  const char *elided[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                          "lhs_contracting_dimensions", "rhs_contracting_dimensions",
                          "dot_dimension_numbers", has_prec ? "precision_config" : NULL, NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_operands_lead(w, op);
  sp__mlir_w_puts(w, ", ");
  if (lb.n || rb.n) {
    sp__mlir_w_puts(w, "batching_dims = ");
    print_int_list(w, &lb);
    sp__mlir_w_puts(w, " x ");
    print_int_list(w, &rb);
    sp__mlir_w_puts(w, ", ");
  }
  sp__mlir_w_puts(w, "contracting_dims = ");
  print_int_list(w, &lc);
  sp__mlir_w_puts(w, " x ");
  print_int_list(w, &rc);
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
  return s ? set_text(p, attrs, "window_reversal", s) : sp__mlir_oom(p);
}

static int parse_convolution(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)) ||
      (rc = parse_literal(p, "dim_numbers =", h->name)) ||
      (rc = sp__mlir_parse_conv_dims(p, &attrs)) ||
      (rc = parse_literal(p, ", window = {", h->name)))
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

static bool print_convolution(sp__mlir_writer *w, const sp_op *op) {
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
      print_int_list(w, &v);
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

/* ------------------------------------------------------------------ custom_call */

static int parse_custom_call(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp_attrs attrs = {0};
  int rc;
  sp_attr target = {.name = "call_target_name", .kind = SP_ATTR_STR};
  if (p->lx.tok.kind != SP_TOK_AT)
    return sp__mlir_error(p, NULL, "expected call target '@name' in %s", h->name);
  if ((rc = sp__mlir_parse_symbol(p, &target.u.s)) ||
      (rc = sp__mlir_set_attr(p, &attrs, &target)) ||
      (rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) ||
      (rc = sp__mlir_parse_operand_list(p, &vals)) ||
      (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)))
    return rc;
  return sp__mlir_finish_op(p, h, &vals, 0, NULL, &attrs, out);
}

static bool print_custom_call(sp__mlir_writer *w, const sp_op *op) {
  sp_attr *target = sp_op_attr(op, "call_target_name");
  if (!target || target->kind != SP_ATTR_STR || op->nregions) return false;
  static const char *const elided[] = {"call_target_name", NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, ' ');
  sp__mlir_put_symbol(w->out, target->u.s);
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_putc(w, ')');
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
  return true;
}

/* ------------------------------------------------------------------ reduce */

/* The scalar type tensor<elem> of a tensor type. */
static sp_type *scalar_of(sp__mlir_parser *p, const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR) return NULL;
  return sp_type_tensor(p->a, 0, NULL, t->elem);
}

/* Builds the body of `applies <op>`: ^bb0(%a: tensor<e>, %b: tensor<e>): %r = op %a, %b; return */
static int build_applies_body(sp__mlir_parser *p, const sp__mlir_token *name_tok, const char *opname,
                              const sp_type *input, sp_region **out) {
  sp_region *r = sp_arena_calloc(p->a, 1, sizeof *r);
  sp_block *b = r ? sp_region_add_block(p->a, r) : NULL;
  sp_type *s0 = scalar_of(p, input), *s1 = scalar_of(p, input), *s2 = scalar_of(p, input);
  if (!r || !b || !s0 || !s1 || !s2) return sp__mlir_oom(p);
  sp_value *a0 = sp_block_add_arg(p->a, b, s0), *a1 = sp_block_add_arg(p->a, b, s1);
  if (!a0 || !a1) return sp__mlir_oom(p);
  sp_value *ops[2] = {a0, a1};
  if ((p->nops += 2) > SP_MAX_OPS) return sp__mlir_error_code(p, SP_ELIMIT, name_tok, "more than SP_MAX_OPS ops");
  sp_op *inner = sp_op_create(p->a, opname, 2, ops, 1, &s2, 0);
  if (!inner) return sp__mlir_oom(p);
  sp_value *res = &inner->results[0];
  sp_op *ret = sp_op_create(p->a, "stablehlo.return", 1, &res, 0, NULL, 0);
  if (!ret) return sp__mlir_oom(p);
  inner->loc = ret->loc = (sp_loc){p->first_line + name_tok->line - 1, name_tok->col};
  sp_block_append(b, inner);
  sp_block_append(b, ret);
  *out = r;
  return SP_OK;
}

static int parse_reduce(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values inputs = {0}, inits = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  sp_region *body = NULL;
  int rc;
  /* (%in init: %init), (%in init: %init) */
  for (;;) {
    sp_value *a, *b;
    if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name)) || (rc = sp__mlir_parse_operand(p, &a)) ||
        (rc = sp__mlir_expect_word(p, "init", h->name)) || (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
        (rc = sp__mlir_parse_operand(p, &b)) || (rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name)) ||
        (rc = sp__mlir_values_push(p, &inputs, a)) || (rc = sp__mlir_values_push(p, &inits, b)))
      return rc;
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
  }
  const char *applies = NULL;
  sp__mlir_token applies_tok;
  if (sp__mlir_accept_word(p, "applies")) {
    applies_tok = p->lx.tok;
    if (applies_tok.kind != SP_TOK_BARE || !sp__mlir_valid_op_name(applies_tok.p, applies_tok.n))
      return sp__mlir_error(p, NULL, "expected op name after 'applies'");
    applies = sp__mlir_intern(p, applies_tok.p, applies_tok.n);
    if (!applies) return sp__mlir_oom(p);
    sp_op_kind k = sp_op_kind_from_name(applies);
    if (k) applies = sp_op_kind_name(k);
    sp__mlir_next(p);
    if (inputs.n != 1)
      return sp__mlir_error(p, &applies_tok, "'applies' needs exactly one input in %s", h->name);
  }
  sp_ints dims;
  if ((rc = parse_literal(p, "across dimensions =", h->name)) ||
      (rc = sp__mlir_parse_int_list(p, &dims, h->name)) ||
      (rc = sp__mlir_set_ints(p, &attrs, "dimensions", dims)) ||
      (rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  sp__mlir_values all = {0};
  for (int i = 0; i < inputs.n; i++)
    if ((rc = sp__mlir_values_push(p, &all, inputs.v[i]))) return rc;
  for (int i = 0; i < inits.n; i++)
    if ((rc = sp__mlir_values_push(p, &all, inits.v[i]))) return rc;
  if (ins.n != all.n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d", h->name,
                          all.n, ins.n);
  if (applies) {
    if ((rc = build_applies_body(p, &applies_tok, applies, ins.v[0], &body))) return rc;
  } else {
    /* reducer(%a: T, %b: T) (%c: T, %d: T) { ... }: pair i is (arg i, arg N+i). */
    sp__mlir_args pairs = {0};
    if ((rc = sp__mlir_expect_word(p, "reducer", h->name))) return rc;
    while (p->lx.tok.kind == SP_TOK_LPAREN) {
      sp__mlir_args two = {0};
      if ((rc = sp__mlir_parse_arg_list(p, &two))) return rc;
      if (two.n != 2) return sp__mlir_error(p, NULL, "expected two arguments per reducer pair");
      if ((rc = sp__mlir_args_push(p, &pairs, &two.v[0])) || (rc = sp__mlir_args_push(p, &pairs, &two.v[1])))
        return rc;
    }
    if (pairs.n != 2 * inputs.n)
      return sp__mlir_error(p, NULL, "expected %d reducer argument pairs, got %d", inputs.n, pairs.n / 2);
    sp__mlir_args args = {0};
    for (int i = 0; i < inputs.n; i++)
      if ((rc = sp__mlir_args_push(p, &args, &pairs.v[2 * i]))) return rc;
    for (int i = 0; i < inputs.n; i++)
      if ((rc = sp__mlir_args_push(p, &args, &pairs.v[2 * i + 1]))) return rc;
    if ((rc = sp__mlir_parse_region(p, &args, &body))) return rc;
  }
  return sp__mlir_build_op(p, h, all.n, all.v, outs.n, outs.v, 1, &body, &attrs, out);
}

/* MLIR prints `applies stablehlo.add` when the body is exactly one commutative binary op of
 * the two block arguments whose result is returned. */
static const sp_op *compact_reducer(const sp_op *op) {
  if (op->noperands != 2 || op->nregions != 1 || op->regions[0].nblocks != 1) return NULL;
  const sp_block *b = op->regions[0].blocks[0];
  const sp_op *inner = b->first;
  if (b->nargs != 2 || !inner || !inner->next || inner->next->next) return NULL;
  const sp_op *ret = inner->next;
  switch (inner->kind) {
    case SP_OP_ADD: case SP_OP_MULTIPLY: case SP_OP_MAXIMUM: case SP_OP_MINIMUM:
    case SP_OP_AND: case SP_OP_OR: case SP_OP_XOR: break;
    default: return NULL;
  }
  if (inner->noperands != 2 || inner->nresults != 1 || inner->attrs.n || inner->nregions ||
      inner->results[0].sharding || inner->operands[0].value != b->args[0] ||
      inner->operands[1].value != b->args[1])
    return NULL;
  const sp_type *in = op->operands[0].value ? op->operands[0].value->type : NULL;
  const sp_type *t = b->args[0]->type;
  if (!in || !t || in->kind != SP_TYPE_TENSOR || t->kind != SP_TYPE_TENSOR || t->rank != 0 ||
      !in->elem || !t->elem || strcmp(in->elem, t->elem) != 0 ||
      !sp_type_equal(b->args[1]->type, t) || !sp_type_equal(inner->results[0].type, t))
    return NULL;
  if (ret->kind != SP_OP_RETURN || ret->noperands != 1 || ret->operands[0].value != &inner->results[0] ||
      ret->attrs.n)
    return NULL;
  return inner;
}

static bool print_reduce(sp__mlir_writer *w, const sp_op *op) {
  sp_ints dims;
  int n = op->noperands / 2;
  if (op->noperands % 2 || n == 0 || op->nregions != 1 || op->regions[0].nblocks != 1 ||
      op->regions[0].blocks[0]->nargs != 2 * n || !sp_op_get_ints(op, "dimensions", &dims))
    return false;
  static const char *const elided[] = {"dimensions", NULL};
  sp__mlir_w_op_name(w, op);
  for (int i = 0; i < n; i++) {
    sp__mlir_w_puts(w, i ? ", (" : "(");
    sp__mlir_w_value(w, op->operands[i].value);
    sp__mlir_w_puts(w, " init: ");
    sp__mlir_w_value(w, op->operands[n + i].value);
    sp__mlir_w_putc(w, ')');
  }
  const sp_op *inner = compact_reducer(op);
  if (inner) {
    sp__mlir_w_puts(w, " applies ");
    sp__mlir_w_puts(w, inner->name);
  }
  sp__mlir_w_puts(w, " across dimensions = ");
  print_int_list(w, &dims);
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
  if (inner) return true;
  const sp_block *b = op->regions[0].blocks[0];
  sp__mlir_w_newline(w);
  sp__mlir_w_puts(w, " reducer");
  for (int i = 0; i < n; i++) {
    sp__mlir_w_puts(w, i ? " (" : "(");
    sp__mlir_w_arg_decl(w, b->args[i]);
    sp__mlir_w_puts(w, ", ");
    sp__mlir_w_arg_decl(w, b->args[n + i]);
    sp__mlir_w_putc(w, ')');
  }
  sp__mlir_w_puts(w, "  ");
  sp__mlir_w_region(w, &op->regions[0], false);
  return true;
}

/* ------------------------------------------------------------------ while */

static int parse_while(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types types = {0};
  sp__mlir_args args = {0};
  sp_attrs attrs = {0};
  sp_region *regions[2];
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, h->name);
  if (rc) return rc;
  if (p->lx.tok.kind != SP_TOK_RPAREN) {
    for (;;) {
      sp__mlir_arg a;
      sp_value *v;
      memset(&a, 0, sizeof a);
      a.name = p->lx.tok;
      if (a.name.kind != SP_TOK_PERCENT) return sp__mlir_error(p, NULL, "expected iteration argument name in %s", h->name);
      sp__mlir_next(p);
      if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, h->name)) || (rc = sp__mlir_parse_operand(p, &v)) ||
          (rc = sp__mlir_values_push(p, &vals, v)) || (rc = sp__mlir_args_push(p, &args, &a)))
        return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, h->name))) return rc;
  if (vals.n) {
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) || (rc = sp__mlir_parse_type_list(p, &types)))
      return rc;
    if (types.n != vals.n)
      return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but %d types", h->name, vals.n, types.n);
    for (int i = 0; i < vals.n; i++)
      if (!sp_type_equal(vals.v[i]->type, types.v[i]))
        return sp__mlir_error(p, &h->name_tok, "type of operand #%d of '%s' does not match its definition",
                              i, h->name);
  }
  if (sp__mlir_accept_word(p, "attributes") && (rc = sp__mlir_parse_attr_dict_body(p, h->kind, &attrs)))
    return rc;
  /* Each region gets its own argument types (and values). */
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < args.n; i++) {
      sp_type *copy = sp_arena_alloc(p->a, sizeof *copy);
      if (!copy) return sp__mlir_oom(p);
      *copy = *types.v[i];
      args.v[i].type = copy;
    }
    if ((rc = sp__mlir_expect_word(p, r == 0 ? "cond" : "do", h->name)) ||
        (rc = sp__mlir_parse_region(p, &args, &regions[r])))
      return rc;
  }
  return sp__mlir_build_op(p, h, vals.n, vals.v, types.n, types.v, 2, regions, &attrs, out);
}

static bool print_while(sp__mlir_writer *w, const sp_op *op) {
  if (op->nregions != 2 || op->nresults != op->noperands) return false;
  for (int r = 0; r < 2; r++)
    if (op->regions[r].nblocks != 1 || op->regions[r].blocks[0]->nargs != op->noperands) return false;
  const sp_block *body = op->regions[1].blocks[0];
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, '(');
  for (int i = 0; i < op->noperands; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_value(w, body->args[i]);
    sp__mlir_w_puts(w, " = ");
    sp__mlir_w_value(w, op->operands[i].value);
  }
  sp__mlir_w_putc(w, ')');
  if (op->noperands) {
    sp__mlir_w_puts(w, " : ");
    sp__mlir_w_operand_types(w, op, 0, op->noperands);
  }
  sp__mlir_w_attr_dict(w, op, NULL, true);
  sp__mlir_w_newline(w);
  sp__mlir_w_puts(w, " cond ");
  sp__mlir_w_region(w, &op->regions[0], false);
  sp__mlir_w_puts(w, " do ");
  sp__mlir_w_region(w, &op->regions[1], false);
  return true;
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
    {SP_OP_DOT_GENERAL, parse_dot_general, print_dot_general},
    {SP_OP_CONVOLUTION, parse_convolution, print_convolution},
    {SP_OP_CUSTOM_CALL, parse_custom_call, print_custom_call},
    {SP_OP_REDUCE, parse_reduce, print_reduce},
    {SP_OP_WHILE, parse_while, print_while},
    {SP_OP_CONSTANT, sp__mlir_parse_constant_like, sp__mlir_print_constant_like},
    {SP_OP_RETURN, sp__mlir_parse_return_like, sp__mlir_print_return_like},
    {SP_OP_UNKNOWN, NULL, NULL}};
