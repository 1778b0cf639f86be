/*
 * attr_stablehlo.c - the structured StableHLO attributes listed in attr_schema_int.h: integers,
 * integer arrays and pairs, booleans, strings, symbols, enums (`#stablehlo<comparison_direction
 * LT>`), gather / scatter / dot dimension numbers and convolution dims, decoded into sp_attr
 * values instead of text.
 *
 * Invariant: a decoder either fills `dst` completely or fails; the caller (attr_reader.c) runs
 * it as a trial and rewinds to plain text on failure, so a wrong shape is never an error here.
 *
 * Memory: decoded arrays go into (and are grown in) the module's arena (p->a); other scratch is
 * fixed stack buffers.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/attr_reader_int.h"
#include "mlir/attr_schema_int.h"
#include "mlir/reader_int.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ structured StableHLO */

/* Integers of a dense<...> : tensor<...> or array<i64: ...> or [..] value, flattened; a splat
 * is expanded to the element count of the type. */
static int decode_ints(sp__mlir_parser *p, sp_ints *out) {
  const sp__mlir_token *t = &p->lx.tok;
  int rc;
  if (t->kind == SP_TOK_LSQUARE) {
    /* [1, 2] or [1 : i64, 2 : i64] */
    sp__mlir_next(p);
    int64_t buf[SP_MAX_RANK * 4];
    int n = 0;
    if (p->lx.tok.kind != SP_TOK_RSQUARE) {
      for (;;) {
        if (n == (int)(sizeof buf / sizeof buf[0])) return SP_EINVAL;
        if ((rc = sp__mlir_parse_int(p, &buf[n++], "integer list"))) return rc;
        if (sp__mlir_accept(p, SP_TOK_COLON)) {
          sp_type *ty;
          if ((rc = sp__mlir_parse_type(p, &ty))) return rc;
        }
        if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
      }
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "integer list"))) return rc;
    out->n = n;
    out->v = n ? sp_arena_alloc(p->a, (size_t)n * sizeof *out->v) : NULL;
    if (n && !out->v) return sp__mlir_oom(p);
    if (n) memcpy(out->v, buf, (size_t)n * sizeof *buf);
    return SP_OK;
  }
  if (t->kind != SP_TOK_BARE) return sp__mlir_error(p, NULL, "expected integer array");
  bool dense = sp__mlir_tok_is(t, "dense");
  if (!dense && !sp__mlir_tok_is(t, "array")) return sp__mlir_error(p, NULL, "expected integer array");
  {
    /* A dense or array literal is checked against its type by the text reader (dense_check.c):
     * read it there first; if it fails, the caller keeps the value as text, which reports the
     * error (an element out of its type's range, say, rather than the attribute missing). */
    sp__mlir_lexer saved = p->lx;
    sp_strbuf scratch = SP_STRBUF_INIT;
    rc = sp__mlir_parse_attr_text(p, &scratch, false, NULL);
    sp_strbuf_free(&scratch);
    if (rc) return rc;
    p->lx = saved;
  }
  sp__mlir_next(p);
  if ((rc = sp__mlir_expect(p, SP_TOK_LESS, "integer array"))) return rc;
  if (!dense) {
    sp_type *ty;
    if ((rc = sp__mlir_parse_type(p, &ty))) return rc;
    const char *e = sp__mlir_elem_of(ty);
    if (!sp__mlir_is_int_elem(e)) return sp__mlir_error(p, NULL, "expected integer array");
    sp__mlir_accept(p, SP_TOK_COLON);
  }
  /* Collect integers, ignoring brackets. */
  int64_t *v = NULL;
  int n = 0, cap = 0;
  int depth = 0;
  while (p->lx.tok.kind != SP_TOK_GREATER || depth > 0) {
    sp__mlir_tok_kind k = p->lx.tok.kind;
    if (k == SP_TOK_LSQUARE) {
      if (++depth > SP_MAX_NESTING) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too deep");
      sp__mlir_next(p);
    } else if (k == SP_TOK_RSQUARE) {
      depth--;
      sp__mlir_next(p);
    } else if (k == SP_TOK_COMMA) {
      sp__mlir_next(p);
    } else if (k == SP_TOK_INT || k == SP_TOK_MINUS) {
      if (n >= SP_MAX_OPERANDS) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "array too long");
      if (sp_arena_grow_from(p->a, (void **)&v, &cap, n, sizeof *v, 16)) return sp__mlir_oom(p);
      if ((rc = sp__mlir_parse_int(p, &v[n++], "integer array"))) return rc;
    } else {
      return sp__mlir_error(p, NULL, "expected integer array");
    }
  }
  sp__mlir_next(p);
  if (dense) {
    sp_type *ty;
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, "dense attribute")) ||
        (rc = sp__mlir_parse_type(p, &ty)))
      return rc;
    if (!sp__mlir_is_int_elem(sp__mlir_elem_of(ty))) return sp__mlir_error(p, NULL, "expected integer array");
    int64_t count = sp_type_num_elements(ty);
    if (n == 1 && count > 1) {
      if (count > SP_MAX_OPERANDS) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "array too long");
      int64_t *nv = sp_arena_alloc(p->a, (size_t)count * sizeof *nv);
      if (!nv) return sp__mlir_oom(p);
      for (int64_t i = 0; i < count; i++) nv[i] = v[0];
      v = nv;
      n = (int)count;
    } else if (count >= 0 && count != n) {
      return sp__mlir_error(p, NULL, "dense attribute has %d elements but its type holds %lld", n,
                            (long long)count);
    }
  }
  out->n = n;
  out->v = v;
  return SP_OK;
}

/* #stablehlo.gather<offset_dims = [..], index_vector_dim = 2> and friends. */
static int decode_struct(sp__mlir_parser *p, const char *hash, sp__mlir_attr_form form,
                         sp_attrs *dst) {
  const char *parts[8];
  bool is_int[8];
  int nparts = sp__mlir_schema_parts(form, parts, is_int);
  if (p->lx.tok.kind != SP_TOK_HASH || !sp__mlir_tok_is(&p->lx.tok, hash))
    return sp__mlir_error(p, NULL, "expected %s", hash);
  sp__mlir_next(p);
  int rc = sp__mlir_expect(p, SP_TOK_LESS, hash);
  if (rc) return rc;
  /* Absent lists are empty. */
  for (int i = 0; i < nparts; i++) {
    if (is_int[i]) continue;
    sp_ints none = {0, NULL};
    if ((rc = sp__mlir_set_ints(p, dst, parts[i], none))) return rc;
  }
  if (p->lx.tok.kind != SP_TOK_GREATER) {
    for (;;) {
      int which = -1;
      for (int i = 0; i < nparts; i++)
        if (p->lx.tok.kind == SP_TOK_BARE && sp__mlir_tok_is(&p->lx.tok, parts[i])) which = i;
      if (which < 0) return sp__mlir_error(p, NULL, "unknown field in %s", hash);
      sp__mlir_next(p);
      if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, hash))) return rc;
      if (is_int[which]) {
        int64_t v;
        if ((rc = sp__mlir_parse_int(p, &v, hash)) || (rc = sp__mlir_set_int(p, dst, parts[which], v)))
          return rc;
      } else {
        sp_ints v;
        if ((rc = sp__mlir_parse_int_list(p, &v, hash)) ||
            (rc = sp__mlir_set_ints(p, dst, parts[which], v)))
          return rc;
      }
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  return sp__mlir_expect(p, SP_TOK_GREATER, hash);
}

/* One `[b, 0, 1, f]` of the compact convolution dims. `letters` are the two non-spatial
 * letters (b f, i o); fills their positions and the spatial positions by spatial index. */
static int conv_dims_group(sp__mlir_parser *p, const char *letters, int64_t pos[2],
                           sp_ints *spatial) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "convolution dimensions");
  if (rc) return rc;
  int64_t sp_pos[SP_MAX_RANK];
  int nsp = 0, idx = 0;
  pos[0] = pos[1] = -1;
  for (int i = 0; i < SP_MAX_RANK; i++) sp_pos[i] = -1;
  for (;; idx++) {
    const sp__mlir_token *t = &p->lx.tok;
    if (idx >= SP_MAX_RANK) return sp__mlir_error(p, NULL, "too many convolution dimensions");
    if (t->kind == SP_TOK_BARE && t->n == 1 && (t->p[0] == letters[0] || t->p[0] == letters[1])) {
      int which = t->p[0] == letters[0] ? 0 : 1;
      if (pos[which] >= 0) return sp__mlir_error(p, NULL, "duplicate '%c' in convolution dimensions", t->p[0]);
      pos[which] = idx;
      sp__mlir_next(p);
    } else if (t->kind == SP_TOK_INT) {
      int64_t s;
      if ((rc = sp__mlir_parse_int(p, &s, "convolution dimensions"))) return rc;
      if (s < 0 || s >= SP_MAX_RANK || sp_pos[s] >= 0)
        return sp__mlir_error(p, NULL, "invalid spatial dimension %lld in convolution dimensions",
                              (long long)s);
      sp_pos[s] = idx;
      nsp++;
    } else {
      return sp__mlir_error(p, NULL, "expected '%c', '%c' or a spatial index in convolution dimensions",
                            letters[0], letters[1]);
    }
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "convolution dimensions"))) return rc;
  if (pos[0] < 0 || pos[1] < 0)
    return sp__mlir_error(p, NULL, "missing '%c' or '%c' in convolution dimensions", letters[0], letters[1]);
  for (int i = 0; i < nsp; i++)
    if (sp_pos[i] < 0) return sp__mlir_error(p, NULL, "missing spatial dimension %d in convolution dimensions", i);
  spatial->n = nsp;
  spatial->v = nsp ? sp_arena_alloc(p->a, (size_t)nsp * sizeof *spatial->v) : NULL;
  if (nsp && !spatial->v) return sp__mlir_oom(p);
  for (int i = 0; i < nsp; i++) spatial->v[i] = sp_pos[i];
  return SP_OK;
}

int sp__mlir_parse_conv_dims(sp__mlir_parser *p, sp_attrs *dst) {
  int64_t in[2], k[2], o[2];
  sp_ints ins, ks, os;
  int rc;
  if ((rc = conv_dims_group(p, "bf", in, &ins))) return rc;
  if ((rc = sp__mlir_expect_word(p, "x", "convolution dimensions"))) return rc;
  if ((rc = conv_dims_group(p, "io", k, &ks))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_ARROW, "convolution dimensions"))) return rc;
  if ((rc = conv_dims_group(p, "bf", o, &os))) return rc;
  if ((rc = sp__mlir_set_int(p, dst, "input_batch_dimension", in[0])) ||
      (rc = sp__mlir_set_int(p, dst, "input_feature_dimension", in[1])) ||
      (rc = sp__mlir_set_ints(p, dst, "input_spatial_dimensions", ins)) ||
      (rc = sp__mlir_set_int(p, dst, "kernel_input_feature_dimension", k[0])) ||
      (rc = sp__mlir_set_int(p, dst, "kernel_output_feature_dimension", k[1])) ||
      (rc = sp__mlir_set_ints(p, dst, "kernel_spatial_dimensions", ks)) ||
      (rc = sp__mlir_set_int(p, dst, "output_batch_dimension", o[0])) ||
      (rc = sp__mlir_set_int(p, dst, "output_feature_dimension", o[1])) ||
      (rc = sp__mlir_set_ints(p, dst, "output_spatial_dimensions", os)))
    return rc;
  return SP_OK;
}

/* #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> (the `raw` form is kept as text). */
static int decode_conv(sp__mlir_parser *p, sp_attrs *dst) {
  if (p->lx.tok.kind != SP_TOK_HASH || !sp__mlir_tok_is(&p->lx.tok, "#stablehlo.conv"))
    return sp__mlir_error(p, NULL, "expected #stablehlo.conv");
  sp__mlir_next(p);
  int rc = sp__mlir_expect(p, SP_TOK_LESS, "#stablehlo.conv");
  if (rc || (rc = sp__mlir_parse_conv_dims(p, dst))) return rc;
  return sp__mlir_expect(p, SP_TOK_GREATER, "#stablehlo.conv");
}

/* #stablehlo<comparison_direction LT> (or the bare keyword LT). */
static int decode_enum(sp__mlir_parser *p, const char *spelling, const char **out) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind == SP_TOK_HASH) {
    const char *lt = strchr(spelling, '<');
    size_t dn = lt ? (size_t)(lt - spelling) : strlen(spelling);
    if (t->n != dn || memcmp(t->p, spelling, dn) != 0) return sp__mlir_error(p, NULL, "expected %s", spelling);
    sp__mlir_next(p);
    int rc = sp__mlir_expect(p, SP_TOK_LESS, spelling);
    if (rc) return rc;
    if (lt && !sp__mlir_accept_word(p, lt + 1)) return sp__mlir_error(p, NULL, "expected %s", spelling);
    if (p->lx.tok.kind != SP_TOK_BARE) return sp__mlir_error(p, NULL, "expected enum value");
    *out = sp__mlir_intern(p, p->lx.tok.p, p->lx.tok.n);
    sp__mlir_next(p);
    if (!*out) return sp__mlir_oom(p);
    return sp__mlir_expect(p, SP_TOK_GREATER, spelling);
  }
  if (t->kind != SP_TOK_BARE) return sp__mlir_error(p, NULL, "expected enum value");
  *out = sp__mlir_intern(p, t->p, t->n);
  sp__mlir_next(p);
  return *out ? SP_OK : sp__mlir_oom(p);
}

/* Decodes `name` of an op of `kind` per its schema entry into `dst`. */
int sp__mlir_decode_structured(sp__mlir_parser *p, const sp__mlir_attr_schema *s, const char *name,
                               sp_attrs *dst) {
  sp_attr at = {.name = name};
  int rc;
  switch (s->form) {
    case SP__FORM_INT: {
      int64_t v;
      if ((rc = sp__mlir_parse_int(p, &v, name))) return rc;
      if (sp__mlir_accept(p, SP_TOK_COLON)) {
        sp_type *ty;
        if ((rc = sp__mlir_parse_type(p, &ty))) return rc;
        if (!sp__mlir_is_int_elem(sp__mlir_elem_of(ty))) return sp__mlir_error(p, NULL, "expected integer");
      }
      at.kind = SP_ATTR_INT;
      at.u.i = v;
      return sp__mlir_set_attr(p, dst, &at);
    }
    case SP__FORM_INTS_ARRAY:
    case SP__FORM_INTS_PAIRS:
      at.kind = SP_ATTR_INTS;
      if ((rc = decode_ints(p, &at.u.ints))) return rc;
      if (s->form == SP__FORM_INTS_PAIRS && at.u.ints.n % 2)
        return sp__mlir_error(p, NULL, "expected pairs of integers");
      return sp__mlir_set_attr(p, dst, &at);
    case SP__FORM_BOOL:
      if (sp__mlir_accept_word(p, "true")) at.u.b = true;
      else if (sp__mlir_accept_word(p, "false")) at.u.b = false;
      else return sp__mlir_error(p, NULL, "expected true or false");
      at.kind = SP_ATTR_BOOL;
      return sp__mlir_set_attr(p, dst, &at);
    case SP__FORM_STR: {
      size_t len;
      at.kind = SP_ATTR_STR;
      if ((rc = sp__mlir_parse_string(p, &at.u.s, &len, name))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    }
    case SP__FORM_SYMBOL:
      at.kind = SP_ATTR_SYMBOL;
      if ((rc = sp__mlir_parse_symbol(p, &at.u.s))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    case SP__FORM_ENUM:
      at.kind = SP_ATTR_ENUM;
      if ((rc = decode_enum(p, s->extra, &at.u.s))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    case SP__FORM_GATHER_DIMS: return decode_struct(p, "#stablehlo.gather", s->form, dst);
    case SP__FORM_SCATTER_DIMS: return decode_struct(p, "#stablehlo.scatter", s->form, dst);
    case SP__FORM_DOT_DIMS: return decode_struct(p, "#stablehlo.dot", s->form, dst);
    case SP__FORM_CONV_DIMS: return decode_conv(p, dst);
    case SP__FORM_TEXT:
    case SP__FORM_SUB: break;
  }
  return sp__mlir_error(p, NULL, "no structured form");
}
