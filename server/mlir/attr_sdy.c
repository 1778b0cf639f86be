/*
 * attr_sdy.c - the sdy attributes: meshes `<["a"=2, ...]>`, tensor shardings
 * `<@mesh, [{"a"}, {}], replicated={...}>` (one or per value) and sharding rules
 * `<([i, j])->([i]) {i=4, j=8} reduction={j}>`, read as Shardy reads them, with its error
 * chains word for word.
 *
 * Invariants: axis lists hold at most MAX_AXIS_REFS refs, factors are i..z then z_<N>; what is
 * built is exactly what was read (no validation against the mesh here: the verifier does that).
 *
 * Memory: meshes, shardings, rules and their arrays go into the module's arena (p->a), grown
 * there in place; the only scratch is fixed stack buffers.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/reader_int.h"

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
      if (k >= SP_MAX_OPERANDS)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many shardings in list");
      if (sp_arena_grow_from(p->a, (void **)&v, &cap, k, sizeof *v, 4)) return sp__mlir_oom(p);
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
      if (k >= SP_MAX_OPERANDS)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many tensors in sharding rule");
      if (sp_arena_grow_from(p->a, (void **)&v, &cap, k, sizeof *v, 4)) return sp__mlir_oom(p);
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
