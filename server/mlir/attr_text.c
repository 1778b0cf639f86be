/*
 * attr_text.c - every attribute value without a structured form, normalised to the text MLIR
 * prints for it (sp__mlir_parse_attr_text, see reader_int.h).
 *
 * Normalising means re-spelling, not re-interpreting: dictionaries are sorted by key, integers
 * and floats get MLIR's spelling and default types (`1` in a dictionary is `1 : i64`, inside an
 * array `1`), strings are re-escaped, dense splats collapse to one value, whitespace and
 * comments inside dialect attributes (`#stablehlo.channel_handle<...>`) collapse to single
 * spaces. That is what makes print -> parse -> print a fixed point. Nesting is bounded by
 * SP_MAX_NESTING.
 *
 * Memory: the text is appended to the caller's strbuf; dense leaves and dictionary entries are
 * collected in p->tmp or a local strbuf freed before returning.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/attr_reader_int.h"
#include "mlir/reader_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ generic text */

/* A copy of the current token text, NUL-terminated, for strtod and friends. */
static void tok_text(const sp__mlir_token *t, char *buf, size_t cap) {
  size_t n = t->n < cap - 1 ? t->n : cap - 1;
  memcpy(buf, t->p, n);
  buf[n] = '\0';
}

static int attr_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide, sp_type **type_out);

/* Copies a balanced <...> (or (...)) at the cursor, collapsing whitespace and comments. */
static int copy_balanced(sp__mlir_parser *p, sp_strbuf *sb, const char *what) {
  sp__mlir_lexer *lx = &p->lx;
  int depth = 0;
  bool space = false;
  while (lx->cur < lx->end) {
    char c = *lx->cur;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || (c == '/' && lx->cur + 1 < lx->end && lx->cur[1] == '/')) {
      sp__mlir_lex_skip_space(lx);
      space = true;
      continue;
    }
    char last = sb->len ? sb->buf[sb->len - 1] : '\0';
    /* A space before a closer goes, except between '-' and '>': "- >" closes an angle, "->"
     * is an arrow, and the text must read back the way it was read. */
    bool closer = (c == '>' && last != '-') || c == ')' || c == ']' || c == '}' || c == ',';
    if (space && last && !strchr("<([{", last) && !closer) sp_strbuf_putc(sb, ' ');
    space = false;
    const char *piece;
    size_t len;
    bool closed;
    int rc = sp__mlir_scan_bracketed(p, what, &depth, &piece, &len, &closed);
    if (rc) return rc;
    sp_strbuf_putn(sb, piece, len);
    if (closed) {
      sp__mlir_lex_seek(lx, lx->cur);
      return SP_OK;
    }
  }
  return sp__mlir_error_here(p, "expected closing bracket in %s, got end of input", what);
}

/* The element type of a typed value: "f32" for tensor<2xf32> or f32. */
const char *sp__mlir_elem_of(const sp_type *t) {
  if (!t) return NULL;
  if (t->kind == SP_TYPE_TENSOR) return t->elem;
  if (t->kind == SP_TYPE_OTHER) return t->text;
  return NULL;
}

static bool is_complex_elem(const char *e) { return e && strncmp(e, "complex<", 8) == 0; }

/* One scalar literal (sign and token) spelled for element type `elem`. */
static void put_scalar(sp_strbuf *sb, bool neg, const sp__mlir_token *t, const char *elem) {
  char buf[128];
  tok_text(t, buf, sizeof buf);
  int bits = sp__mlir_float_bits(elem);
  if (is_complex_elem(elem)) bits = sp__mlir_float_bits(elem + 8) ? sp__mlir_float_bits(elem + 8) : 32;
  if (t->kind == SP_TOK_BARE) { /* true / false */
    sp_strbuf_puts(sb, buf);
    return;
  }
  bool hex = t->kind == SP_TOK_INT && t->n > 2 && t->p[1] == 'x';
  if (bits && !hex) {
    double v = strtod(buf, NULL);
    sp__mlir_put_float(sb, neg ? -v : v, bits);
    return;
  }
  if (elem && strcmp(elem, "i1") == 0 && t->kind == SP_TOK_INT) {
    sp_strbuf_puts(sb, strtoull(buf, NULL, 0) ? "true" : "false");
    return;
  }
  if (hex && !bits) {
    unsigned long long u = strtoull(buf, NULL, 16);
    if (neg) sp_strbuf_putc(sb, '-');
    sp_strbuf_printf(sb, "%llu", u);
    return;
  }
  if (hex) { /* a float bit pattern */
    sp_strbuf_puts(sb, "0x");
    for (size_t i = 2; i < t->n; i++) {
      char c = t->p[i];
      sp_strbuf_putc(sb, (char)(c >= 'a' && c <= 'f' ? c - 32 : c));
    }
    return;
  }
  if (neg) sp_strbuf_putc(sb, '-');
  sp_strbuf_puts(sb, buf);
}

/* A number attribute: [-] INT|FLOAT [: type]. */
static int number_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide, sp_type **type_out) {
  bool neg = sp__mlir_accept(p, SP_TOK_MINUS);
  sp__mlir_token t = p->lx.tok;
  if (t.kind != SP_TOK_INT && t.kind != SP_TOK_FLOAT)
    return sp__mlir_error(p, NULL, "expected number after '-'");
  sp__mlir_next(p);
  sp_type *type = NULL;
  int rc;
  if (sp__mlir_accept(p, SP_TOK_COLON) && (rc = sp__mlir_parse_type(p, &type))) return rc;
  const char *elem = sp__mlir_elem_of(type);
  if (!elem) elem = t.kind == SP_TOK_FLOAT ? "f64" : "i64";
  if (elem && strcmp(elem, "i1") == 0 && type) {
    put_scalar(sb, false, &t, "i1");
    if (type_out) *type_out = type;
    return SP_OK;
  }
  put_scalar(sb, neg, &t, elem);
  bool default_type = strcmp(elem, "i64") == 0 || strcmp(elem, "f64") == 0;
  if (!(elide && default_type)) {
    sp_strbuf_puts(sb, " : ");
    sp_strbuf_puts(sb, elem);
  }
  if (type_out) *type_out = type;
  return SP_OK;
}

/* dense<...> : type. Leaves are collected first: their spelling depends on the element type,
 * which follows the body, and dense_check.c checks them against it. */
typedef sp__mlir_dense_item dense_item;

typedef struct dense_items { dense_item *v; int n, cap; } dense_items;

static int dense_push(sp__mlir_parser *p, dense_items *d, const dense_item *it) {
  if (sp_arena_grow_from(p->tmp, (void **)&d->v, &d->cap, d->n, sizeof *d->v, 32))
    return sp__mlir_oom(p);
  d->v[d->n++] = *it;
  return SP_OK;
}

static int dense_leaf_token(sp__mlir_parser *p, bool *neg, sp__mlir_token *t) {
  *neg = sp__mlir_accept(p, SP_TOK_MINUS);
  *t = p->lx.tok;
  bool ok = t->kind == SP_TOK_INT || t->kind == SP_TOK_FLOAT ||
            (!*neg && (t->kind == SP_TOK_STRING ||
                       (t->kind == SP_TOK_BARE && (sp__mlir_tok_is(t, "true") || sp__mlir_tok_is(t, "false")))));
  if (!ok) return sp__mlir_error(p, NULL, "expected element literal in dense attribute");
  sp__mlir_next(p);
  return SP_OK;
}

static int dense_elems(sp__mlir_parser *p, dense_items *d) {
  dense_item it;
  memset(&it, 0, sizeof it);
  int rc = sp__mlir_enter(p);
  if (rc) return rc;
  if (p->lx.tok.kind == SP_TOK_LSQUARE) {
    it.kind = 1;
    it.tok = p->lx.tok; /* where a ragged list is reported */
    sp__mlir_next(p);
    if ((rc = dense_push(p, d, &it))) return rc;
    if (p->lx.tok.kind != SP_TOK_RSQUARE) {
      for (;;) {
        if ((rc = dense_elems(p, d))) return rc;
        if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
      }
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "dense attribute"))) return rc;
    it.kind = 2;
    rc = dense_push(p, d, &it);
  } else if (sp__mlir_accept(p, SP_TOK_LPAREN)) {
    it.complex = true;
    if ((rc = dense_leaf_token(p, &it.neg, &it.tok)) ||
        (rc = sp__mlir_expect(p, SP_TOK_COMMA, "complex element")) ||
        (rc = dense_leaf_token(p, &it.neg2, &it.tok2)) ||
        (rc = sp__mlir_expect(p, SP_TOK_RPAREN, "complex element")))
      return rc;
    rc = dense_push(p, d, &it);
  } else {
    if ((rc = dense_leaf_token(p, &it.neg, &it.tok))) return rc;
    rc = dense_push(p, d, &it);
  }
  sp__mlir_leave(p);
  return rc;
}

static void put_dense_leaf(sp_strbuf *sb, const dense_item *it, const char *elem) {
  if (it->tok.kind == SP_TOK_STRING) {
    sp_strbuf_putn(sb, it->tok.p, it->tok.n);
    return;
  }
  if (it->complex) {
    sp_strbuf_putc(sb, '(');
    put_scalar(sb, it->neg, &it->tok, elem);
    sp_strbuf_putc(sb, ',');
    put_scalar(sb, it->neg2, &it->tok2, elem);
    sp_strbuf_putc(sb, ')');
    return;
  }
  put_scalar(sb, it->neg, &it->tok, elem);
}

static int dense_text(sp__mlir_parser *p, sp_strbuf *sb, const sp__mlir_token *at,
                      sp_type **type_out) {
  const char *word = "dense";
  dense_items d = {0};
  int rc = sp__mlir_expect(p, SP_TOK_LESS, word);
  if (rc) return rc;
  if (p->lx.tok.kind != SP_TOK_GREATER && (rc = dense_elems(p, &d))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, word))) return rc;
  sp_type *type = NULL;
  if (sp__mlir_accept(p, SP_TOK_COLON) && (rc = sp__mlir_parse_type(p, &type))) return rc;
  if ((rc = sp__mlir_dense_check(p, at, d.v, d.n, type))) return rc;
  const char *elem = sp__mlir_elem_of(type);
  /* Splat: every leaf spells the same. */
  int nleaves = 0, first = -1;
  bool splat = true;
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  for (int i = 0; i < d.n; i++) {
    if (d.v[i].kind) continue;
    nleaves++;
    if (first < 0) {
      first = i;
      put_dense_leaf(&a, &d.v[i], elem);
    } else if (splat) {
      sp_strbuf_reset(&b);
      put_dense_leaf(&b, &d.v[i], elem);
      splat = a.len == b.len && memcmp(sp_strbuf_str(&a), sp_strbuf_str(&b), a.len) == 0;
    }
  }
  sp_strbuf_puts(sb, word);
  sp_strbuf_putc(sb, '<');
  if (nleaves > 0 && splat && d.v[first].tok.kind != SP_TOK_STRING) {
    sp_strbuf_puts(sb, sp_strbuf_str(&a));
  } else {
    bool need_comma = false;
    for (int i = 0; i < d.n; i++) {
      if (d.v[i].kind == 2) {
        sp_strbuf_putc(sb, ']');
        need_comma = true;
        continue;
      }
      if (need_comma) sp_strbuf_puts(sb, ", ");
      if (d.v[i].kind == 1) {
        sp_strbuf_putc(sb, '[');
        need_comma = false;
        continue;
      }
      put_dense_leaf(sb, &d.v[i], elem);
      need_comma = true;
    }
  }
  sp_strbuf_putc(sb, '>');
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
  if (type) {
    sp_strbuf_puts(sb, " : ");
    sp_type_print(sb, type);
  }
  if (type_out) *type_out = type;
  return SP_OK;
}

/* array<i64: 1, 2> */
static int array_text(sp__mlir_parser *p, sp_strbuf *sb) {
  int rc = sp__mlir_expect(p, SP_TOK_LESS, "array attribute");
  if (rc) return rc;
  sp_type *type;
  if ((rc = sp__mlir_parse_type(p, &type))) return rc;
  const char *elem = sp__mlir_elem_of(type);
  sp_strbuf_puts(sb, "array<");
  sp_type_print(sb, type);
  if (sp__mlir_accept(p, SP_TOK_COLON)) {
    sp_strbuf_puts(sb, ": ");
    for (int i = 0;; i++) {
      bool neg;
      sp__mlir_token t;
      if ((rc = dense_leaf_token(p, &neg, &t)) ||
          (rc = sp__mlir_dense_check_scalar(p, neg, &t, elem)))
        return rc;
      if (i) sp_strbuf_puts(sb, ", ");
      put_scalar(sb, neg, &t, elem);
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  sp_strbuf_putc(sb, '>');
  return sp__mlir_expect(p, SP_TOK_GREATER, "array attribute");
}

typedef struct dict_entry {
  const char *name;
  size_t off, len;  /* "name = value" text in the scratch buffer */
} dict_entry;

static int cmp_dict_entry(const void *a, const void *b) {
  return strcmp(((const dict_entry *)a)->name, ((const dict_entry *)b)->name);
}

/* An attribute-dictionary key: bare identifier or string. */
int sp__mlir_attr_key(sp__mlir_parser *p, const char **out) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind == SP_TOK_BARE) {
    *out = sp__mlir_intern(p, t->p, t->n);
    if (!*out) return sp__mlir_oom(p);
    sp__mlir_next(p);
    return SP_OK;
  }
  if (t->kind == SP_TOK_STRING) {
    size_t len;
    return sp__mlir_parse_string(p, out, &len, "attribute name");
  }
  if (t->kind == SP_TOK_ERROR) return sp__mlir_error(p, NULL, "%s", p->lx.err_msg);
  if (t->kind == SP_TOK_EOF) return sp__mlir_error(p, NULL, "expected attribute name, got end of input");
  return sp__mlir_error(p, NULL, "expected attribute name");
}

static int dict_text(sp__mlir_parser *p, sp_strbuf *sb) {
  int rc = sp__mlir_expect(p, SP_TOK_LBRACE, "dictionary");
  if (rc) return rc;
  sp_strbuf tmp = SP_STRBUF_INIT;
  dict_entry *v = NULL;
  int n = 0, cap = 0;
  if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      if (sp_arena_grow(p->tmp, (void **)&v, &cap, n, sizeof *v)) {
        rc = sp__mlir_oom(p);
        goto fail;
      }
      dict_entry *e = &v[n++];
      if ((rc = sp__mlir_attr_key(p, &e->name))) goto fail;
      e->off = tmp.len;
      sp__mlir_put_attr_name(&tmp, e->name);
      if (sp__mlir_accept(p, SP_TOK_EQUAL)) {
        sp_strbuf_puts(&tmp, " = ");
        if ((rc = attr_text(p, &tmp, false, NULL))) goto fail;
      }
      e->len = tmp.len - e->off;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "dictionary"))) goto fail;
  if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_dict_entry);
  sp_strbuf_putc(sb, '{');
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_strbuf_putn(sb, tmp.buf + v[i].off, v[i].len);
  }
  sp_strbuf_putc(sb, '}');
  rc = SP_OK;
fail:
  sp_strbuf_free(&tmp);
  return rc;
}

static bool is_word(const sp__mlir_token *t, const char *const *words, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (sp__mlir_tok_is(t, words[i])) return true;
  return false;
}

/* @sym, or a nested reference @a::@b. */
static int symbol_ref_text(sp__mlir_parser *p, sp_strbuf *sb) {
  const char *name;
  int rc = sp__mlir_parse_symbol(p, &name);
  if (rc) return rc;
  sp__mlir_put_symbol(sb, name);
  while (p->lx.tok.kind == SP_TOK_COLON && sp__mlir_lex_peek(&p->lx) == ':') {
    sp__mlir_lex_seek(&p->lx, p->lx.cur + 1);
    if ((rc = sp__mlir_parse_symbol(p, &name))) return rc;
    sp_strbuf_puts(sb, "::");
    sp__mlir_put_symbol(sb, name);
  }
  return SP_OK;
}

/* [a, b, ...]: elements printed with `: i64` / `: f64` elided, as MLIR does in arrays. */
static int array_list_text(sp__mlir_parser *p, sp_strbuf *sb) {
  int rc = SP_OK;
  sp__mlir_next(p);
  sp_strbuf_putc(sb, '[');
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (int i = 0;; i++) {
      if (i) sp_strbuf_puts(sb, ", ");
      if ((rc = attr_text(p, sb, true, NULL))) break;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if (!rc) rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "array");
  sp_strbuf_putc(sb, ']');
  return rc;
}

/* #alias (read where it was defined) or #dialect.attr<...> (kept as normalised text). */
static int hash_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide, sp_type **type_out) {
  const sp__mlir_token *t = &p->lx.tok;
  const char *alias = NULL;
  if (!memchr(t->p, '.', t->n) && sp__mlir_lex_peek(&p->lx) != '<')
    alias = sp__mlir_alias_lookup(p, t, false);
  if (alias) {
    const char *after = t->p + t->n;
    sp__mlir_lex_seek(&p->lx, alias);
    int rc = attr_text(p, sb, elide, type_out);
    if (!rc) sp__mlir_lex_seek(&p->lx, after);
    return rc;
  }
  sp__mlir_token at = *t;
  size_t from = sb->len;
  sp_strbuf_putn(sb, t->p, t->n);
  int rc = SP_OK;
  if (sp__mlir_lex_peek(&p->lx) == '<') {
    p->lx.cur = t->p + t->n;
    rc = copy_balanced(p, sb, "attribute");
  } else {
    sp__mlir_next(p);
  }
  if (!rc && sp_strbuf_ok(sb))
    rc = sp__mlir_check_dialect_symbol(p, &at, sp_strbuf_str(sb) + from, sb->len - from);
  return rc;
}

/* dense_resource<...>, affine_map<...>, ... kept verbatim, with an optional `: type`. */
static int opaque_text(sp__mlir_parser *p, sp_strbuf *sb, sp_type **type_out) {
  const sp__mlir_token *t = &p->lx.tok;
  int rc = SP_OK;
  sp_strbuf_putn(sb, t->p, t->n);
  int c = sp__mlir_lex_peek(&p->lx);
  if (c == '<' || c == '(' || c == '[') {
    p->lx.cur = t->p + t->n;
    rc = copy_balanced(p, sb, "attribute");
  } else {
    sp__mlir_next(p);
  }
  if (!rc && sp__mlir_accept(p, SP_TOK_COLON)) {
    sp_type *ty;
    if (!(rc = sp__mlir_parse_type(p, &ty))) {
      sp_strbuf_puts(sb, " : ");
      sp_type_print(sb, ty);
      if (type_out) *type_out = ty;
    }
  }
  return rc;
}

/* A bare word: true/false/unit, dense<...>, array<...>, an opaque attribute, a type, or a
 * dialect's enum keyword (kept as is). */
static int bare_text(sp__mlir_parser *p, sp_strbuf *sb, sp_type **type_out) {
  static const char *const opaque_words[] = {"dense_resource", "sparse", "affine_map",
                                             "affine_set", "opaque", "strided", "distinct",
                                             "loc", "dense_array"};
  const sp__mlir_token *t = &p->lx.tok;
  if (sp__mlir_tok_is(t, "true") || sp__mlir_tok_is(t, "false") || sp__mlir_tok_is(t, "unit")) {
    sp_strbuf_putn(sb, t->p, t->n);
    sp__mlir_next(p);
    return SP_OK;
  }
  if (sp__mlir_tok_is(t, "dense")) {
    sp__mlir_token at = *t;
    sp__mlir_next(p);
    return dense_text(p, sb, &at, type_out);
  }
  if (sp__mlir_tok_is(t, "array")) {
    sp__mlir_next(p);
    return array_text(p, sb);
  }
  if (is_word(t, opaque_words, sizeof opaque_words / sizeof opaque_words[0]))
    return opaque_text(p, sb, type_out);
  if (sp__mlir_at_type(p)) {
    sp_type *ty;
    int rc = sp__mlir_parse_type(p, &ty);
    if (!rc) sp_type_print(sb, ty);
    return rc;
  }
  sp_strbuf_putn(sb, t->p, t->n);
  sp__mlir_next(p);
  return SP_OK;
}

/* (T, T) -> R  or  (T) -> (R1, R2) */
static int function_type_text(sp__mlir_parser *p, sp_strbuf *sb) {
  sp__mlir_types ins = {0}, outs = {0};
  int rc = sp__mlir_parse_function_type(p, &ins, &outs);
  if (rc) return rc;
  sp_strbuf_putc(sb, '(');
  for (int i = 0; i < ins.n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_type_print(sb, ins.v[i]);
  }
  sp_strbuf_puts(sb, ") -> ");
  if (outs.n != 1) sp_strbuf_putc(sb, '(');
  for (int i = 0; i < outs.n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_type_print(sb, outs.v[i]);
  }
  if (outs.n != 1) sp_strbuf_putc(sb, ')');
  return SP_OK;
}

static int attr_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide, sp_type **type_out) {
  const sp__mlir_token *t = &p->lx.tok;
  int rc = sp__mlir_enter(p);
  if (rc) return rc;
  if (type_out) *type_out = NULL;
  switch (t->kind) {
    case SP_TOK_STRING: {
      const char *s;
      size_t len;
      if (!(rc = sp__mlir_parse_string(p, &s, &len, "attribute"))) sp__mlir_put_string(sb, s, len);
      break;
    }
    case SP_TOK_AT: rc = symbol_ref_text(p, sb); break;
    case SP_TOK_INT:
    case SP_TOK_FLOAT:
    case SP_TOK_MINUS: rc = number_text(p, sb, elide, type_out); break;
    case SP_TOK_LSQUARE: rc = array_list_text(p, sb); break;
    case SP_TOK_LBRACE: rc = dict_text(p, sb); break;
    case SP_TOK_HASH: rc = hash_text(p, sb, elide, type_out); break;
    case SP_TOK_BARE: rc = bare_text(p, sb, type_out); break;
    case SP_TOK_BANG: {
      sp_type *ty;
      if (!(rc = sp__mlir_parse_type(p, &ty))) sp_type_print(sb, ty);
      break;
    }
    case SP_TOK_LPAREN: rc = function_type_text(p, sb); break;
    case SP_TOK_ERROR: rc = sp__mlir_error(p, NULL, "%s", p->lx.err_msg); break;
    case SP_TOK_EOF: rc = sp__mlir_error(p, NULL, "expected attribute value, got end of input"); break;
    default: {
      char buf[64];
      rc = sp__mlir_error(p, NULL, "expected attribute value, got %s",
                          sp__mlir_tok_describe(t, buf, sizeof buf));
    }
  }
  sp__mlir_leave(p);
  return rc;
}

int sp__mlir_parse_attr_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide_i64, sp_type **type_out) {
  int rc = attr_text(p, sb, elide_i64, type_out);
  if (!rc && !sp_strbuf_ok(sb)) return sp__mlir_oom(p);
  return rc;
}
