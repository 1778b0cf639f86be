/*
 * attr_reader.c - attribute entries: `{name = value, ...}` dictionaries and one value per entry,
 * dispatched to the structured StableHLO decoders (attr_stablehlo.c), the sdy attributes
 * (attr_sdy.c) or normalised text (attr_text.c, see reader_int.h); plus the small setters and the
 * integer-list reader the other attribute files and the op formats share.
 *
 * Structured attributes are tried first when the schema lists the (op, name) pair; if the text
 * does not have the expected shape the parser rewinds and keeps it as text (the verifier and the
 * rules then see that the structured attribute is missing). Duplicate keys are an error.
 *
 * Memory: attributes and their strings go into the module's arena (p->a); scratch text is freed
 * before returning.
 */
#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/attr_reader_int.h"
#include "mlir/attr_schema_int.h"
#include "mlir/reader_int.h"

/* ------------------------------------------------------------------ small helpers */

int sp__mlir_set_attr(sp__mlir_parser *p, sp_attrs *dst, const sp_attr *at) {
  return sp_attrs_set(p->a, dst, at) == SP_OK ? SP_OK : sp__mlir_oom(p);
}

int sp__mlir_set_ints(sp__mlir_parser *p, sp_attrs *dst, const char *name, sp_ints v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS, .u.ints = v};
  return sp__mlir_set_attr(p, dst, &at);
}

int sp__mlir_set_int(sp__mlir_parser *p, sp_attrs *dst, const char *name, int64_t v) {
  sp_attr at = {.name = name, .kind = SP_ATTR_INT, .u.i = v};
  return sp__mlir_set_attr(p, dst, &at);
}

static int set_text(sp__mlir_parser *p, sp_attrs *dst, const char *name, const sp_strbuf *sb) {
  if (!sp_strbuf_ok(sb)) return sp__mlir_oom(p);
  const char *s = sp_arena_strndup(p->a, sp_strbuf_str(sb), sb->len);
  if (!s) return sp__mlir_oom(p);
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT, .u.s = s};
  return sp__mlir_set_attr(p, dst, &at);
}

int sp__mlir_parse_int_list(sp__mlir_parser *p, sp_ints *out, const char *context) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, context);
  if (rc) return rc;
  int64_t buf[64], *v = buf;
  int n = 0, cap = 64;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      int64_t x;
      if ((rc = sp__mlir_parse_int(p, &x, context))) return rc;
      if (n >= SP_MAX_OPERANDS)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "integer list too long in %s", context);
      if (sp_arena_grow(p->tmp, (void **)&v, &cap, n, sizeof *v)) return sp__mlir_oom(p);
      v[n++] = x;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, context))) return rc;
  out->n = n;
  out->v = NULL;
  if (n) {
    out->v = sp_arena_alloc(p->a, (size_t)n * sizeof *out->v);
    if (!out->v) return sp__mlir_oom(p);
    memcpy(out->v, v, (size_t)n * sizeof *out->v);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ attribute entries */

int sp__mlir_parse_attr_value(sp__mlir_parser *p, sp_op_kind kind, const char *name,
                              sp_attrs *dst) {
  const sp__mlir_attr_schema *s = kind ? sp__mlir_schema_find(kind, name) : NULL;
  int rc;
  const sp__mlir_token *at_tok = &p->lx.tok;
  if (at_tok->kind == SP_TOK_HASH && !memchr(at_tok->p, '.', at_tok->n) &&
      sp__mlir_lex_peek(&p->lx) != '<') {
    /* `#alias`: parse the aliased value in place of the name. */
    const char *alias = sp__mlir_alias_lookup(p, at_tok, false);
    if (alias) {
      const char *after = at_tok->p + at_tok->n;
      if ((rc = sp__mlir_enter(p))) return rc;
      sp__mlir_lex_seek(&p->lx, alias);
      rc = sp__mlir_parse_attr_value(p, kind, name, dst);
      sp__mlir_leave(p);
      if (!rc) sp__mlir_lex_seek(&p->lx, after);
      return rc;
    }
  }
  if (s && s->form != SP__FORM_TEXT && s->form != SP__FORM_SUB) {
    sp__mlir_lexer saved = p->lx;
    int nattrs = dst->n;
    p->trial++;
    rc = sp__mlir_decode_structured(p, s, name, dst);
    p->trial--;
    if (rc == SP_OK) return SP_OK;
    if (rc == SP_ENOMEM) return sp__mlir_oom(p);
    p->lx = saved; /* not the structured shape: keep it as text */
    dst->n = nattrs;
  }
  const sp__mlir_token *t = &p->lx.tok;
  sp_attr at = {.name = name};
  if (t->kind == SP_TOK_HASH) {
    if (sp__mlir_tok_is(t, "#sdy.sharding")) {
      sp__mlir_next(p);
      at.kind = SP_ATTR_SHARDING;
      if ((rc = sp__mlir_parse_sharding_stripped(p, &at.u.sharding))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    }
    if (sp__mlir_tok_is(t, "#sdy.sharding_per_value")) {
      sp__mlir_next(p);
      at.kind = SP_ATTR_SHARDINGS;
      if ((rc = sp__mlir_expect(p, SP_TOK_LESS, "sharding_per_value"))) return rc;
      if ((rc = sp__mlir_parse_shardings_stripped(p, &at.u.shardings.n, &at.u.shardings.v)))
        return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorShardingPerValue "
                                      "parameter 'shardings' which is to be a "
                                      "`::llvm::ArrayRef<TensorShardingAttr>`");
      if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "sharding_per_value"))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    }
    if (sp__mlir_tok_is(t, "#sdy.op_sharding_rule")) {
      sp__mlir_next(p);
      at.kind = SP_ATTR_RULE;
      if ((rc = sp__mlir_parse_rule_body(p, &at.u.rule))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    }
    if (sp__mlir_tok_is(t, "#sdy.mesh")) {
      sp__mlir_next(p);
      at.kind = SP_ATTR_MESH;
      if ((rc = sp__mlir_parse_mesh_body(p, &at.u.mesh))) return rc;
      return sp__mlir_set_attr(p, dst, &at);
    }
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  rc = sp__mlir_parse_attr_text(p, &sb, false, NULL);
  if (!rc) rc = set_text(p, dst, name, &sb);
  sp_strbuf_free(&sb);
  return rc;
}

int sp__mlir_parse_attr_dict_body(sp__mlir_parser *p, sp_op_kind kind, sp_attrs *dst) {
  int rc = sp__mlir_expect(p, SP_TOK_LBRACE, "attribute dictionary");
  if (rc) return rc;
  if ((rc = sp__mlir_enter(p))) return rc;
  if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      sp__mlir_token key = p->lx.tok;
      const char *name;
      if ((rc = sp__mlir_attr_key(p, &name))) return rc;
      if (sp_attrs_get(dst, name))
        return sp__mlir_error(p, &key, "duplicate attribute '%s'", name);
      if (sp__mlir_accept(p, SP_TOK_EQUAL)) {
        if ((rc = sp__mlir_parse_attr_value(p, kind, name, dst))) return rc;
      } else {
        sp_attr at = {.name = name, .kind = SP_ATTR_UNIT};
        if ((rc = sp__mlir_set_attr(p, dst, &at))) return rc;
      }
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "attribute dictionary"))) return rc;
  sp__mlir_leave(p);
  return SP_OK;
}

int sp__mlir_parse_attr_dict(sp__mlir_parser *p, sp_op_kind kind, sp_attrs *dst) {
  if (p->lx.tok.kind != SP_TOK_LBRACE) return SP_OK;
  return sp__mlir_parse_attr_dict_body(p, kind, dst);
}
