/*
 * attr_reader.c - attribute values: sdy meshes, shardings and sharding rules; the structured
 * StableHLO attributes of attr_schema.h; and every other attribute, normalised to the text
 * MLIR prints for it (see reader.h).
 *
 * Normalising means re-spelling, not re-interpreting: dictionaries are sorted by key, integers
 * and floats get MLIR's spelling and default types (`1` in a dictionary is `1 : i64`, inside an
 * array `1`), strings are re-escaped, dense splats collapse to one value, whitespace and
 * comments inside dialect attributes (`#stablehlo.channel_handle<...>`) collapse to single
 * spaces. That is what makes print -> parse -> print a fixed point.
 *
 * Structured attributes are tried first when the schema lists the (op, name) pair; if the text
 * does not have the expected shape the parser rewinds and keeps it as text (the verifier and the
 * rules then see that the structured attribute is missing).
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/attr_schema.h"
#include "mlir/reader.h"
#include "mlir/spelling.h"

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

/* A copy of the current token text, NUL-terminated, for strtod and friends. */
static void tok_text(const sp__mlir_token *t, char *buf, size_t cap) {
  size_t n = t->n < cap - 1 ? t->n : cap - 1;
  memcpy(buf, t->p, n);
  buf[n] = '\0';
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
      if (n == cap) {
        if (n >= SP_MAX_OPERANDS)
          return sp__mlir_error_code(p, SP_ELIMIT, NULL, "integer list too long in %s", context);
        int64_t *nv = sp_arena_alloc(p->tmp, (size_t)cap * 2 * sizeof *nv);
        if (!nv) return sp__mlir_oom(p);
        memcpy(nv, v, (size_t)n * sizeof *nv);
        v = nv;
        cap *= 2;
      }
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

/* ------------------------------------------------------------------ sdy: meshes */

int sp__mlir_parse_mesh_body(sp__mlir_parser *p, sp_mesh **out) {
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_LESS, "mesh")) || (rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "mesh")))
    return rc;
  sp_mesh *m = sp_arena_calloc(p->a, 1, sizeof *m);
  sp_mesh_axis axes[SP_MAX_MESH_AXES];
  if (!m) return sp__mlir_oom(p);
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (m->naxes == SP_MAX_MESH_AXES)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "mesh has more than SP_MAX_MESH_AXES (%d) axes",
                                   SP_MAX_MESH_AXES);
      const char *name;
      size_t len;
      if ((rc = sp__mlir_parse_string(p, &name, &len, "mesh axis"))) return rc;
      if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "mesh axis"))) return rc;
      int64_t size;
      if ((rc = sp__mlir_parse_int(p, &size, "mesh axis size"))) return rc;
      axes[m->naxes].name = sp__mlir_intern(p, name, len);
      if (!axes[m->naxes].name) return sp__mlir_oom(p);
      axes[m->naxes++].size = size;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "mesh"))) return rc;
  if (m->naxes) {
    m->axes = sp_arena_alloc(p->a, (size_t)m->naxes * sizeof *m->axes);
    if (!m->axes) return sp__mlir_oom(p);
    memcpy(m->axes, axes, (size_t)m->naxes * sizeof *m->axes);
  }
  if (sp__mlir_accept(p, SP_TOK_COMMA)) {
    if ((rc = sp__mlir_expect_word(p, "device_ids", "mesh")) ||
        (rc = sp__mlir_expect(p, SP_TOK_EQUAL, "mesh")))
      return rc;
    sp_ints ids;
    if ((rc = sp__mlir_parse_int_list(p, &ids, "mesh device ids"))) return rc;
    if (ids.n > SP_MAX_DEVICES)
      return sp__mlir_error_code(p, SP_ELIMIT, NULL, "mesh has more than SP_MAX_DEVICES device ids");
    /* Ids 0..N-1 in order mean the default order and are dropped, as Shardy does. */
    bool iota = m->naxes > 0;
    for (int i = 0; i < ids.n && iota; i++) iota = ids.v[i] == i;
    if (iota && ids.n == sp_mesh_num_devices(m)) ids.n = 0;
    m->ndevice_ids = ids.n;
    m->device_ids = ids.n ? ids.v : NULL;
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "mesh"))) return rc;
  *out = m;
  return SP_OK;
}

/* ------------------------------------------------------------------ sdy: shardings */

static int parse_axis_ref(sp__mlir_parser *p, sp_axis_ref *r, const char *context) {
  const char *name;
  size_t len;
  int rc = sp__mlir_parse_string(p, &name, &len, context);
  if (rc)
    return sp__mlir_error_context(p, rc, "failed to parse Sdy_AxisRef parameter 'name' which is "
                                  "to be a `::llvm::StringRef`");
  r->name = sp__mlir_intern(p, name, len);
  if (!r->name) return sp__mlir_oom(p);
  r->pre = r->size = 0;
  if (sp__mlir_accept(p, SP_TOK_COLON)) {
    if ((rc = sp__mlir_expect(p, SP_TOK_LPAREN, "sub-axis")) ||
        (rc = sp__mlir_parse_int(p, &r->pre, "sub-axis pre-size")) ||
        (rc = sp__mlir_expect(p, SP_TOK_RPAREN, "sub-axis")) ||
        (rc = sp__mlir_parse_int(p, &r->size, "sub-axis size")))
      return rc;
    /* A pre-size below 1 is the verifier's to report (Shardy's wording, no parse chain). */
    if (r->size < 1)
      return sp__mlir_error(p, NULL, "sub-axis sizes must be greater than 1: \"%s\":(%lld)%lld",
                            r->name, (long long)r->pre, (long long)r->size);
  }
  return SP_OK;
}

/* Copies `n` refs from `buf` into the module arena. */
static int keep_axes(sp__mlir_parser *p, const sp_axis_ref *buf, int n, sp_axis_ref **out) {
  *out = NULL;
  if (!n) return SP_OK;
  *out = sp_arena_alloc(p->a, (size_t)n * sizeof **out);
  if (!*out) return sp__mlir_oom(p);
  memcpy(*out, buf, (size_t)n * sizeof **out);
  return SP_OK;
}

#define MAX_AXIS_REFS (SP_MAX_MESH_AXES * 4)

int sp__mlir_parse_axis_list(sp__mlir_parser *p, int *n, sp_axis_ref **out) {
  sp_axis_ref buf[MAX_AXIS_REFS];
  int k = 0, rc = sp__mlir_expect(p, SP_TOK_LBRACE, "axis list");
  if (rc) return rc;
  if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      if (k == MAX_AXIS_REFS)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many axes in axis list");
      if ((rc = parse_axis_ref(p, &buf[k++], "axis list")))
        return sp__mlir_error_context(p, rc, "failed to parse axis list which is expected to be "
                                      "an `ArrayRef<AxisRefAttr>`");
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "axis list"))) return rc;
  *n = k;
  return keep_axes(p, buf, k, out);
}

/* {"a", "b":(2)2, ?}p1 */
static int parse_dim_sharding(sp__mlir_parser *p, sp_dim_sharding *d) {
  sp_axis_ref buf[MAX_AXIS_REFS];
  int k = 0, rc = sp__mlir_expect(p, SP_TOK_LBRACE, "dimension sharding");
  if (rc) return rc;
  d->closed = true;
  d->priority = SP_NO_PRIORITY;
  if (sp__mlir_accept(p, SP_TOK_QUESTION)) {
    d->closed = false;
  } else if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      if (p->lx.tok.kind != SP_TOK_STRING) {
        if (p->lx.tok.kind == SP_TOK_ERROR) return sp__mlir_error(p, NULL, "%s", p->lx.err_msg);
        return sp__mlir_error(p, NULL, "expected axis name or '?' in dimension sharding");
      }
      if (k == MAX_AXIS_REFS)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many axes in dimension sharding");
      if ((rc = parse_axis_ref(p, &buf[k++], "dimension sharding"))) return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
      if (sp__mlir_accept(p, SP_TOK_QUESTION)) {
        d->closed = false;
        break;
      }
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "dimension sharding"))) return rc;
  d->naxes = k;
  if ((rc = keep_axes(p, buf, k, &d->axes))) return rc;
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind == SP_TOK_BARE && t->p[0] == 'p' && t->n > 1) {
    int64_t v = 0;
    for (size_t i = 1; i < t->n; i++) {
      if (t->p[i] < '0' || t->p[i] > '9')
        return sp__mlir_error(p, NULL, "expecting priority in format 'p<number>', got: %.*s",
                              (int)t->n, t->p);
      if (v > 1000000000)
        return sp__mlir_error(p, NULL, "expecting integer priority, got: %.*s", (int)t->n, t->p);
      v = v * 10 + (t->p[i] - '0');
    }
    if (t->n > 2 && t->p[1] == '0')
      return sp__mlir_error(p, NULL, "priorities with leading zeros are not allowed, got: %.*s",
                            (int)t->n, t->p);
    d->priority = (int)v;
    sp__mlir_next(p);
  }
  return SP_OK;
}

/* `{"a", "b"}` of a sharding's replicated or unreduced axes, with Shardy's error chain. */
static int parse_named_axes(sp__mlir_parser *p, const char *param, int *n, sp_axis_ref **out) {
  int rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sharding");
  if (!rc && p->lx.tok.kind == SP_TOK_LBRACE) {
    rc = sp__mlir_parse_axis_list(p, n, out);
  } else if (!rc) {
    rc = sp__mlir_error(p, NULL, "expected '{'");
  }
  return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorSharding parameter '%s'", param);
}

int sp__mlir_parse_sharding_stripped(sp__mlir_parser *p, sp_sharding **out) {
  /* Lists of shardings (sharding_per_value, in/out_shardings) may spell each one in full. */
  if (p->lx.tok.kind == SP_TOK_HASH && sp__mlir_tok_is(&p->lx.tok, "#sdy.sharding")) sp__mlir_next(p);
  int rc = sp__mlir_expect(p, SP_TOK_LESS, "sharding");
  if (rc) return rc;
  sp_sharding *s = sp_arena_calloc(p->a, 1, sizeof *s);
  if (!s) return sp__mlir_oom(p);
  if (p->lx.tok.kind == SP_TOK_AT) {
    if ((rc = sp__mlir_parse_symbol(p, &s->mesh_name))) return rc;
  } else if (sp__mlir_accept_word(p, "mesh")) {
    if ((rc = sp__mlir_parse_mesh_body(p, &s->inline_mesh))) return rc;
  } else if (p->lx.tok.kind == SP_TOK_HASH && sp__mlir_tok_is(&p->lx.tok, "#sdy.mesh")) {
    sp__mlir_next(p);
    if ((rc = sp__mlir_parse_mesh_body(p, &s->inline_mesh))) return rc;
  } else {
    if (p->lx.tok.kind == SP_TOK_ERROR) return sp__mlir_error(p, NULL, "%s", p->lx.err_msg);
    return sp__mlir_error(p, NULL, "expected mesh name or inline mesh in sharding");
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_COMMA, "sharding")) ||
      (rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "sharding")))
    return rc;
  sp_dim_sharding dims[SP_MAX_RANK];
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (s->rank == SP_MAX_RANK)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "sharding rank exceeds SP_MAX_RANK (%d)",
                                   SP_MAX_RANK);
      if ((rc = parse_dim_sharding(p, &dims[s->rank++])))
        return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorSharding parameter "
                                      "'dim_shardings' which is to be a "
                                      "`::llvm::ArrayRef<DimensionShardingAttr>`");
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "sharding"))) return rc;
  if (s->rank) {
    s->dims = sp_arena_alloc(p->a, (size_t)s->rank * sizeof *s->dims);
    if (!s->dims) return sp__mlir_oom(p);
    memcpy(s->dims, dims, (size_t)s->rank * sizeof *s->dims);
  }
  /* Then `, replicated={...}` and `, unreduced=[kind]{...}`, each at most once, either order. */
  bool seen_replicated = false, seen_unreduced = false;
  while (sp__mlir_accept(p, SP_TOK_COMMA)) {
    if (!seen_replicated && sp__mlir_accept_word(p, "replicated")) {
      seen_replicated = true;
      if ((rc = parse_named_axes(p, "replicated_axes", &s->nreplicated, &s->replicated)))
        return rc;
    } else if (!seen_unreduced && sp__mlir_accept_word(p, "unreduced")) {
      seen_unreduced = true;
      if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sharding")))
        return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorSharding parameter "
                                      "'unreduced_axes'");
      if (p->lx.tok.kind == SP_TOK_BARE) {
        if (!sp__mlir_tok_is(&p->lx.tok, "sum")) {
          s->unreduced_kind = sp__mlir_intern(p, p->lx.tok.p, p->lx.tok.n);
          if (!s->unreduced_kind) return sp__mlir_oom(p);
        }
        sp__mlir_next(p);
      }
      if (p->lx.tok.kind != SP_TOK_LBRACE)
        rc = sp__mlir_error(p, NULL, "expected '{'");
      else
        rc = sp__mlir_parse_axis_list(p, &s->nunreduced, &s->unreduced);
      if (rc)
        return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorSharding parameter "
                                      "'unreduced_axes'");
    } else {
      return sp__mlir_error(p, NULL, "failed to parse Sdy_TensorSharding, expected valid named "
                            "axis list after comma");
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "sharding"))) return rc;
  *out = s;
  return SP_OK;
}

int sp__mlir_parse_shardings_stripped(sp__mlir_parser *p, int *n, sp_sharding ***out) {
  int rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "sharding list");
  if (rc) return rc;
  sp_sharding **v = NULL;
  int k = 0, cap = 0;
  if (p->lx.tok.kind != SP_TOK_RSQUARE) {
    for (;;) {
      if (k == cap) {
        if (k >= SP_MAX_OPERANDS)
          return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many shardings in list");
        int ncap = cap ? cap * 2 : 4;
        sp_sharding **nv = sp_arena_realloc(p->a, v, (size_t)cap * sizeof *v, (size_t)ncap * sizeof *v);
        if (!nv) return sp__mlir_oom(p);
        v = nv;
        cap = ncap;
      }
      if ((rc = sp__mlir_parse_sharding_stripped(p, &v[k++]))) return rc;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "sharding list"))) return rc;
  *n = k;
  *out = v;
  return SP_OK;
}

/* ------------------------------------------------------------------ sdy: sharding rules */

/* One factor symbol at t[*i] (i..z, or z_<N> for index 17 + N), as Shardy reads it: its index
 * into *idx (INT64_MAX when beyond that), errors worded as Shardy's. `strict` also rejects an
 * index beyond 2^63-1 (in factor sizes; mappings clamp it). */
static int parse_factor_symbol(sp__mlir_parser *p, const sp__mlir_token *t, size_t *i,
                               int64_t *idx, bool strict) {
  char c = t->p[*i];
  if (c < 'i' || c > 'z')
    return sp__mlir_error(p, t, "expecting symbol from 'i' to 'z'. Received: '%c'", c);
  (*i)++;
  *idx = c - 'i';
  if (c != 'z' || *i >= t->n || t->p[*i] != '_') return SP_OK;
  (*i)++;
  size_t start = *i;
  while (*i < t->n && t->p[*i] >= '0' && t->p[*i] <= '9') (*i)++;
  if (*i == start)
    return sp__mlir_error(p, t, "expecting integer after 'z_'. Received: '%.*s'", (int)t->n, t->p);
  if (t->p[start] == '0')
    return sp__mlir_error(p, t, "expecting positive integer without leading zeros. Received: '%.*s'",
                          (int)(*i - start), t->p + start);
  uint64_t num = 0;
  bool overflow = false;
  for (size_t k = start; k < *i; k++) {
    unsigned d = (unsigned)(t->p[k] - '0');
    if (num > (UINT64_MAX - d) / 10) overflow = true;
    else num = num * 10 + d;
  }
  if (overflow || num > (uint64_t)INT64_MAX - 17) {
    if (strict && (overflow || num > (uint64_t)INT64_MAX))
      return sp__mlir_error(p, t, "expecting symbol index <=2^63-1. Received: '%.*s'",
                            (int)(*i - start), t->p + start);
    *idx = INT64_MAX;
    return SP_OK;
  }
  *idx = 17 + (int64_t)num;
  return SP_OK;
}

/* "ij" -> {0, 1}; "z_8z_9" -> {25, 26}. */
static int parse_factor_names(sp__mlir_parser *p, const sp__mlir_token *t, int *out, int *n) {
  int k = 0;
  size_t i = 0;
  while (i < t->n) {
    int64_t idx;
    int rc = parse_factor_symbol(p, t, &i, &idx, false);
    if (rc) return rc;
    if (k == SP_MAX_FACTORS)
      return sp__mlir_error_code(p, SP_ELIMIT, t, "too many factors in one dimension");
    out[k++] = idx > SP_MAX_FACTORS ? SP_MAX_FACTORS : (int)idx;
  }
  *n = k;
  return SP_OK;
}

static int parse_rule_tensor_list(sp__mlir_parser *p, int *ntensors, sp_rule_tensor **out,
                                  int *max_factor);

/* `([i, j], [k])`: Shardy requires at least one tensor; its errors name the parameter. */
static int parse_rule_tensors(sp__mlir_parser *p, const char *param, int *ntensors,
                              sp_rule_tensor **out, int *max_factor) {
  int rc = parse_rule_tensor_list(p, ntensors, out, max_factor);
  return sp__mlir_error_context(p, rc, "failed to parse Sdy_OpShardingRule parameter '%s'", param);
}

static int parse_rule_tensor_list(sp__mlir_parser *p, int *ntensors, sp_rule_tensor **out,
                                  int *max_factor) {
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "sharding rule");
  if (rc) return rc;
  sp_rule_tensor *v = NULL;
  int k = 0, cap = 0;
  {
    for (;;) {
      if (k == cap) {
        if (k >= SP_MAX_OPERANDS) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many tensors in sharding rule");
        int ncap = cap ? cap * 2 : 4;
        sp_rule_tensor *nv = sp_arena_realloc(p->a, v, (size_t)cap * sizeof *v, (size_t)ncap * sizeof *v);
        if (!nv) return sp__mlir_oom(p);
        v = nv;
        cap = ncap;
      }
      sp_rule_tensor *t = &v[k++];
      memset(t, 0, sizeof *t);
      if ((rc = sp__mlir_expect(p, SP_TOK_LSQUARE, "sharding rule"))) return rc;
      sp_rule_dim dims[SP_MAX_RANK];
      if (p->lx.tok.kind != SP_TOK_RSQUARE) {
        for (;;) {
          if (p->lx.tok.kind != SP_TOK_BARE)
            return sp__mlir_error(p, NULL, "expected factor name in sharding rule");
          if (t->rank == SP_MAX_RANK)
            return sp__mlir_error_code(p, SP_ELIMIT, NULL, "rank exceeds SP_MAX_RANK in sharding rule");
          int idx[SP_MAX_FACTORS], n;
          if ((rc = parse_factor_names(p, &p->lx.tok, idx, &n)))
            return sp__mlir_error_context(p, rc, "failed to parse Sdy_TensorMapping parameter "
                                          "'dim_mappings'");
          sp_rule_dim *d = &dims[t->rank++];
          d->nfactors = n;
          d->factors = sp_arena_alloc(p->a, (size_t)n * sizeof *d->factors);
          if (!d->factors) return sp__mlir_oom(p);
          memcpy(d->factors, idx, (size_t)n * sizeof *idx);
          for (int j = 0; j < n; j++)
            if (idx[j] > *max_factor) *max_factor = idx[j];
          sp__mlir_next(p);
          if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
        }
      }
      if ((rc = sp__mlir_expect(p, SP_TOK_RSQUARE, "sharding rule"))) return rc;
      if (t->rank) {
        t->dims = sp_arena_alloc(p->a, (size_t)t->rank * sizeof *t->dims);
        if (!t->dims) return sp__mlir_oom(p);
        memcpy(t->dims, dims, (size_t)t->rank * sizeof *dims);
      }
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "sharding rule"))) return rc;
  *ntensors = k;
  *out = v;
  return SP_OK;
}

/* reduction={k, l}: marks each named factor. */
static int parse_factor_set(sp__mlir_parser *p, sp_rule *r, int kind, const char *label) {
  int rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "sharding rule")) ||
      (rc = sp__mlir_expect(p, SP_TOK_LBRACE, "sharding rule")))
    return rc;
  if (p->lx.tok.kind != SP_TOK_RBRACE) {
    for (;;) {
      int idx[SP_MAX_FACTORS], n;
      if (p->lx.tok.kind != SP_TOK_BARE)
        return sp__mlir_error(p, NULL, "expected factor name in %s", label);
      if ((rc = parse_factor_names(p, &p->lx.tok, idx, &n))) return rc;
      if (n != 1 || idx[0] >= r->nfactors)
        return sp__mlir_error(p, NULL, "unknown factor '%.*s' in %s", (int)p->lx.tok.n,
                              p->lx.tok.p, label);
      sp_rule_factor *f = &r->factors[idx[0]];
      if (kind < 0) {
        f->blocked = true;
      } else {
        if (f->kind != SP_FACTOR_PASS_THROUGH && (int)f->kind != kind)
          return sp__mlir_error(p, NULL, "factor '%.*s' has two kinds in sharding rule",
                                (int)p->lx.tok.n, p->lx.tok.p);
        f->kind = (sp_factor_kind)kind;
      }
      sp__mlir_next(p);
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
  }
  return sp__mlir_expect(p, SP_TOK_RBRACE, "sharding rule");
}

int sp__mlir_parse_rule_body(sp__mlir_parser *p, sp_rule **out) {
  int rc = sp__mlir_expect(p, SP_TOK_LESS, "sharding rule");
  if (rc) return rc;
  sp_rule *r = sp_arena_calloc(p->a, 1, sizeof *r);
  if (!r) return sp__mlir_oom(p);
  int max_factor = -1;
  sp__mlir_token start = p->lx.tok;
  if ((rc = parse_rule_tensors(p, "operand_mappings", &r->noperands, &r->operands, &max_factor)) ||
      (rc = sp__mlir_expect(p, SP_TOK_ARROW, "sharding rule")) ||
      (rc = parse_rule_tensors(p, "result_mappings", &r->nresults, &r->results, &max_factor)))
    return rc;
  if (sp__mlir_accept(p, SP_TOK_LBRACE)) {
    int64_t sizes[SP_MAX_FACTORS];
    int n = 0;
    if (p->lx.tok.kind != SP_TOK_RBRACE) {
      for (;;) {
        char expected[16];
        if (n == SP_MAX_FACTORS)
          return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_FACTORS factors");
        sp_rule_factor_name(n, expected);
        /* Factor i, j, k, ... in order, each a single symbol. */
        const sp__mlir_token *t = &p->lx.tok;
        size_t at = 0;
        int64_t idx = -1;
        if (t->kind != SP_TOK_BARE)
          return sp__mlir_error(p, NULL, "expected factor '%s' in factor sizes", expected);
        rc = parse_factor_symbol(p, t, &at, &idx, true);
        if (rc || at != t->n || idx != n) {
          if (rc) p->failed = true; /* the symbol's own error comes first */
          const char *msg = "expecting factor indices to be ordered like an iota ([0,1,2,...], "
                            "e.g. {i=#, j=#, ...})";
          if (rc) return sp__mlir_error_context(p, rc, "%s", msg);
          return sp__mlir_error(p, NULL, "%s. Expecting factor index symbol '%s', received: '%.*s'",
                                msg, expected, (int)t->n, t->p);
        }
        sp__mlir_next(p);
        if ((rc = sp__mlir_expect(p, SP_TOK_EQUAL, "factor sizes")) ||
            (rc = sp__mlir_parse_int(p, &sizes[n], "factor sizes")))
          return rc;
        n++;
        if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
      }
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "factor sizes"))) return rc;
    r->nfactors = n;
    if (n) {
      r->factors = sp_arena_calloc(p->a, (size_t)n, sizeof *r->factors);
      if (!r->factors) return sp__mlir_oom(p);
      for (int i = 0; i < n; i++) r->factors[i].size = sizes[i];
    }
  }
  if (max_factor >= r->nfactors) {
    char name[16];
    sp_rule_factor_name(max_factor, name);
    return sp__mlir_error(p, &start, "factor '%s' is used but has no size in sharding rule", name);
  }
  static const struct { const char *label; int kind; } sets[] = {
      {"reduction", SP_FACTOR_REDUCTION},
      {"need_replication", SP_FACTOR_NEED_REPLICATION},
      {"permutation", SP_FACTOR_PERMUTATION},
      {"blocked_propagation", -1}};
  /* Each set at most once, in this order (Shardy's assembly format). */
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
    if (sp__mlir_accept_word(p, sets[i].label) &&
        (rc = parse_factor_set(p, r, sets[i].kind, sets[i].label)))
      return rc;
  if (sp__mlir_accept(p, SP_TOK_COMMA)) {
    if ((rc = sp__mlir_expect_word(p, "custom", "sharding rule"))) return rc;
    r->custom = true;
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "sharding rule"))) return rc;
  *out = r;
  return SP_OK;
}

/* ------------------------------------------------------------------ generic text */

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
    bool closer = c == '>' || c == ')' || c == ']' || c == '}' || c == ',';
    if (space && sb->len && !strchr("<([{", sb->buf[sb->len - 1]) && !closer) sp_strbuf_putc(sb, ' ');
    space = false;
    if (c == '"') {
      const char *q = lx->cur + 1;
      while (q < lx->end && *q != '"' && *q != '\n') q += (*q == '\\' && q + 1 < lx->end) ? 2 : 1;
      if (q >= lx->end || *q != '"') return sp__mlir_error_here(p, "unterminated string in %s", what);
      sp_strbuf_putn(sb, lx->cur, (size_t)(q + 1 - lx->cur));
      lx->cur = q + 1;
      continue;
    }
    if (c == '-' && lx->cur + 1 < lx->end && lx->cur[1] == '>') {
      sp_strbuf_puts(sb, "->");
      lx->cur += 2;
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (++depth > SP_MAX_NESTING)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "%s nested too deeply", what);
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return sp__mlir_error_here(p, "unbalanced '%c' in %s", c, what);
    }
    sp_strbuf_putc(sb, c);
    lx->cur++;
    if (depth == 0) {
      sp__mlir_lex_seek(lx, lx->cur);
      return SP_OK;
    }
  }
  return sp__mlir_error_here(p, "expected closing bracket in %s, got end of input", what);
}

/* The element type of a typed value: "f32" for tensor<2xf32> or f32. */
static const char *elem_of(const sp_type *t) {
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
  const char *elem = elem_of(type);
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
 * which follows the body. */
typedef struct dense_item {
  int kind;               /* 0 leaf, 1 open '[', 2 close ']' */
  bool neg, neg2;
  sp__mlir_token tok, tok2; /* tok2: imaginary part of a complex leaf */
  bool complex;
} dense_item;

typedef struct dense_items { dense_item *v; int n, cap; } dense_items;

static int dense_push(sp__mlir_parser *p, dense_items *d, const dense_item *it) {
  if (d->n == d->cap) {
    int ncap = d->cap ? d->cap * 2 : 32;
    dense_item *nv = sp_arena_realloc(p->tmp, d->v, (size_t)d->cap * sizeof *nv, (size_t)ncap * sizeof *nv);
    if (!nv) return sp__mlir_oom(p);
    d->v = nv;
    d->cap = ncap;
  }
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
  if (sp__mlir_accept(p, SP_TOK_LSQUARE)) {
    it.kind = 1;
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

static int dense_text(sp__mlir_parser *p, sp_strbuf *sb, const char *word, sp_type **type_out) {
  dense_items d = {0};
  int rc = sp__mlir_expect(p, SP_TOK_LESS, word);
  if (rc) return rc;
  if (p->lx.tok.kind != SP_TOK_GREATER && (rc = dense_elems(p, &d))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, word))) return rc;
  sp_type *type = NULL;
  if (sp__mlir_accept(p, SP_TOK_COLON) && (rc = sp__mlir_parse_type(p, &type))) return rc;
  const char *elem = elem_of(type);
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
  const char *elem = elem_of(type);
  sp_strbuf_puts(sb, "array<");
  sp_type_print(sb, type);
  if (sp__mlir_accept(p, SP_TOK_COLON)) {
    sp_strbuf_puts(sb, ": ");
    for (int i = 0;; i++) {
      bool neg;
      sp__mlir_token t;
      if ((rc = dense_leaf_token(p, &neg, &t))) return rc;
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
static int attr_key(sp__mlir_parser *p, const char **out) {
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
      if (n == cap) {
        int ncap = cap ? cap * 2 : 8;
        dict_entry *nv = sp_arena_realloc(p->tmp, v, (size_t)cap * sizeof *v, (size_t)ncap * sizeof *v);
        if (!nv) { rc = sp__mlir_oom(p); goto fail; }
        v = nv;
        cap = ncap;
      }
      dict_entry *e = &v[n++];
      if ((rc = attr_key(p, &e->name))) goto fail;
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

static int attr_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide, sp_type **type_out) {
  static const char *const opaque_words[] = {"dense_resource", "sparse", "affine_map",
                                             "affine_set", "opaque", "strided", "distinct",
                                             "loc", "dense_array"};
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
    case SP_TOK_AT: {
      const char *name;
      if ((rc = sp__mlir_parse_symbol(p, &name))) break;
      sp__mlir_put_symbol(sb, name);
      /* Nested references @a::@b */
      while (p->lx.tok.kind == SP_TOK_COLON && sp__mlir_lex_peek(&p->lx) == ':') {
        sp__mlir_lex_seek(&p->lx, p->lx.cur + 1);
        if ((rc = sp__mlir_parse_symbol(p, &name))) break;
        sp_strbuf_puts(sb, "::");
        sp__mlir_put_symbol(sb, name);
      }
      break;
    }
    case SP_TOK_INT:
    case SP_TOK_FLOAT:
    case SP_TOK_MINUS: rc = number_text(p, sb, elide, type_out); break;
    case SP_TOK_LSQUARE:
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
      break;
    case SP_TOK_LBRACE: rc = dict_text(p, sb); break;
    case SP_TOK_HASH: {
      const char *alias = NULL;
      if (!memchr(t->p, '.', t->n) && sp__mlir_lex_peek(&p->lx) != '<')
        alias = sp__mlir_alias_lookup(p, t, false);
      if (alias) {
        const char *after = t->p + t->n;
        sp__mlir_lex_seek(&p->lx, alias);
        rc = attr_text(p, sb, elide, type_out);
        if (!rc) sp__mlir_lex_seek(&p->lx, after);
        break;
      }
      sp_strbuf_putn(sb, t->p, t->n);
      if (sp__mlir_lex_peek(&p->lx) == '<') {
        p->lx.cur = t->p + t->n;
        rc = copy_balanced(p, sb, "attribute");
      } else {
        sp__mlir_next(p);
      }
      break;
    }
    case SP_TOK_BARE:
      if (sp__mlir_tok_is(t, "true") || sp__mlir_tok_is(t, "false") || sp__mlir_tok_is(t, "unit")) {
        sp_strbuf_putn(sb, t->p, t->n);
        sp__mlir_next(p);
      } else if (sp__mlir_tok_is(t, "dense")) {
        sp__mlir_next(p);
        rc = dense_text(p, sb, "dense", type_out);
      } else if (sp__mlir_tok_is(t, "array")) {
        sp__mlir_next(p);
        rc = array_text(p, sb);
      } else if (is_word(t, opaque_words, sizeof opaque_words / sizeof opaque_words[0])) {
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
      } else if (sp__mlir_at_type(p)) {
        sp_type *ty;
        if (!(rc = sp__mlir_parse_type(p, &ty))) sp_type_print(sb, ty);
      } else {
        /* A bare keyword (enum spelling of a dialect's custom syntax): kept as is. */
        sp_strbuf_putn(sb, t->p, t->n);
        sp__mlir_next(p);
      }
      break;
    case SP_TOK_BANG: {
      sp_type *ty;
      if (!(rc = sp__mlir_parse_type(p, &ty))) sp_type_print(sb, ty);
      break;
    }
    case SP_TOK_LPAREN: {
      sp__mlir_types ins = {0}, outs = {0};
      if ((rc = sp__mlir_parse_function_type(p, &ins, &outs))) break;
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
      break;
    }
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
  sp__mlir_next(p);
  if ((rc = sp__mlir_expect(p, SP_TOK_LESS, "integer array"))) return rc;
  if (!dense) {
    sp_type *ty;
    if ((rc = sp__mlir_parse_type(p, &ty))) return rc;
    const char *e = elem_of(ty);
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
      if (n == cap) {
        int ncap = cap ? cap * 2 : 16;
        if (ncap > SP_MAX_OPERANDS) return sp__mlir_error_code(p, SP_ELIMIT, NULL, "array too long");
        int64_t *nv = sp_arena_realloc(p->a, v, (size_t)cap * sizeof *v, (size_t)ncap * sizeof *v);
        if (!nv) return sp__mlir_oom(p);
        v = nv;
        cap = ncap;
      }
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
    if (!sp__mlir_is_int_elem(elem_of(ty))) return sp__mlir_error(p, NULL, "expected integer array");
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
static int decode_structured(sp__mlir_parser *p, const sp__mlir_attr_schema *s, const char *name,
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
        if (!sp__mlir_is_int_elem(elem_of(ty))) return sp__mlir_error(p, NULL, "expected integer");
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
    rc = decode_structured(p, s, name, dst);
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
      if ((rc = attr_key(p, &name))) return rc;
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
