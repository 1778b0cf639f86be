/*
 * einsum.c - JAX custom_partitioning rule strings -> sp_rule (see einsum.h).
 *
 * Two passes. The parser turns the text into tensors -> dims -> factor references, interning
 * names in a hash table (symbols in order of appearance). The resolver then walks the tensors
 * against their types: it expands "..." into batch factors, numbers factors in order of
 * first appearance, takes sizes from whole dims, given sizes and compound inference, checks
 * every compound dim multiplies to its size, applies kinds, and builds the rule with the
 * rule builder.
 *
 * All arrays are sized from the text length up front (every dim or reference needs at least
 * one character), so parsing never reallocates; everything lives in the caller's arena.
 */
#include "rules/einsum.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "rules/rule_builder.h"

/* ------------------------------------------------------------------ parsed form */

typedef struct sym {          /* a factor name */
  const char *name;
  int len;
  int col;                    /* first appearance, 1-based */
  int id;                     /* factor index, -1 until numbered */
  int stamp;                  /* last tensor (1-based) it appeared in, for duplicates */
} sym;

typedef struct dimref {       /* one written dim: refs[first .. first+n) */
  int col;
  int first, n;
  bool compound;              /* written in parentheses */
} dimref;

typedef struct tensor {
  int col;
  bool ellipsis;
  int first_dim, ndims;
} tensor;

typedef struct given {        /* "name=size" or a kind-list entry */
  const char *name;
  int len;
  int col;
  int64_t size;
} given;

typedef struct parsed {
  int ntensors, noperand_tensors;
  tensor *tensors;
  int ndims;
  dimref *dims;
  int nrefs;
  int *refs;                  /* symbol indices */
  int nsyms;
  sym *syms;
  int *table;                 /* hash slots: symbol index + 1, 0 = empty */
  int table_mask;
  int nsizes;
  given *sizes;               /* inline {name=size} */
  int nkinds[4];
  given *kinds[4];            /* inline reduction / need_replication / permutation / blocked */
} parsed;

static const char *const kind_keywords[4] = {"reduction", "need_replication", "permutation",
                                             "blocked_propagation"};

typedef struct parser {
  const char *s;
  int pos, len;
  parsed *p;
  sp_err *err;
} parser;

static int col_of(const parser *ps) { return ps->pos + 1; }

static int syntax(parser *ps, const char *what) {
  if (ps->pos >= ps->len)
    return sp_err_set(ps->err, SP_EINVAL, "sharding rule column %d: %s but the rule ends",
                      col_of(ps), what);
  return sp_err_set(ps->err, SP_EINVAL, "sharding rule column %d: %s but found '%c'",
                    col_of(ps), what, ps->s[ps->pos]);
}

static void skip_ws(parser *ps) {
  while (ps->pos < ps->len && isspace((unsigned char)ps->s[ps->pos])) ps->pos++;
}

static bool name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* "..." or U+2026 (E2 80 A6) at the current position: its byte length, else 0. */
static int ellipsis_len(const parser *ps) {
  const char *c = ps->s + ps->pos;
  int left = ps->len - ps->pos;
  if (left >= 3 && memcmp(c, "...", 3) == 0) return 3;
  if (left >= 3 && memcmp(c, "\xe2\x80\xa6", 3) == 0) return 3;
  return 0;
}

static int name_len(const parser *ps) {
  int n = 0;
  if (ps->pos < ps->len && name_start(ps->s[ps->pos]))
    while (ps->pos + n < ps->len && name_char(ps->s[ps->pos + n])) n++;
  return n;
}

static uint32_t hash(const char *s, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* The symbol for name s[0..n), or -1 if absent (when !create). */
static int intern(parsed *p, const char *s, int n, int col, bool create) {
  uint32_t h = hash(s, n) & (uint32_t)p->table_mask;
  while (p->table[h]) {
    sym *y = &p->syms[p->table[h] - 1];
    if (y->len == n && memcmp(y->name, s, (size_t)n) == 0) return p->table[h] - 1;
    h = (h + 1) & (uint32_t)p->table_mask;
  }
  if (!create) return -1;
  sym *y = &p->syms[p->nsyms];
  y->name = s;
  y->len = n;
  y->col = col;
  y->id = -1;
  y->stamp = 0;
  p->table[h] = ++p->nsyms;
  return p->nsyms - 1;
}

static int parse_ref(parser *ps) {
  int n = name_len(ps);
  if (n == 0) return syntax(ps, "expected a factor name");
  parsed *p = ps->p;
  p->refs[p->nrefs++] = intern(p, ps->s + ps->pos, n, col_of(ps), true);
  ps->pos += n;
  return SP_OK;
}

/* True if a "keyword =" (an inline kind list) starts here. */
static bool at_kind_list(parser *ps) {
  int n = name_len(ps), save = ps->pos;
  if (n == 0) return false;
  ps->pos += n;
  skip_ws(ps);
  bool yes = ps->pos < ps->len && ps->s[ps->pos] == '=';
  ps->pos = save;
  return yes;
}

static int parse_tensor(parser *ps) {
  parsed *p = ps->p;
  skip_ws(ps);
  tensor *t = &p->tensors[p->ntensors++];
  t->col = col_of(ps);
  t->first_dim = p->ndims;
  t->ndims = 0;
  t->ellipsis = false;
  int el = ellipsis_len(ps);
  if (el) {
    t->ellipsis = true;
    ps->pos += el;
  }
  for (;;) {
    skip_ws(ps);
    if (ps->pos >= ps->len) break;
    char c = ps->s[ps->pos];
    if (ellipsis_len(ps))
      return sp_err_set(ps->err, SP_EINVAL,
                        "sharding rule column %d: '...' may only start a tensor's mapping",
                        col_of(ps));
    if (!(name_start(c) || c == '(') || at_kind_list(ps)) break;
    dimref *d = &p->dims[p->ndims++];
    t->ndims++;
    d->col = col_of(ps);
    d->first = p->nrefs;
    d->compound = c == '(';
    int rc;
    if (!d->compound) {
      rc = parse_ref(ps);
      if (rc != SP_OK) return rc;
    } else {
      ps->pos++;
      for (;;) {
        skip_ws(ps);
        if (ps->pos < ps->len && ps->s[ps->pos] == ')') break;
        rc = parse_ref(ps);
        if (rc != SP_OK) return syntax(ps, "expected a factor name or ')'");
      }
      if (p->nrefs == d->first) return syntax(ps, "expected a factor name in '( )'");
      ps->pos++;
    }
    d->n = p->nrefs - d->first;
  }
  return SP_OK;
}

static int parse_side(parser *ps) {
  for (;;) {
    int rc = parse_tensor(ps);
    if (rc != SP_OK) return rc;
    skip_ws(ps);
    if (ps->pos < ps->len && ps->s[ps->pos] == ',') {
      ps->pos++;
      continue;
    }
    return SP_OK;
  }
}

static int parse_int(parser *ps, int64_t *out) {
  skip_ws(ps);
  int start = ps->pos;
  int64_t v = 0;
  while (ps->pos < ps->len && isdigit((unsigned char)ps->s[ps->pos])) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, ps->s[ps->pos] - '0', &v)) {
      return sp_err_set(ps->err, SP_EINVAL, "sharding rule column %d: size overflows 64 bits",
                        start + 1);
    }
    ps->pos++;
  }
  if (ps->pos == start) return syntax(ps, "expected a size");
  *out = v;
  return SP_OK;
}

static int expect(parser *ps, char c, const char *what) {
  skip_ws(ps);
  if (ps->pos < ps->len && ps->s[ps->pos] == c) {
    ps->pos++;
    return SP_OK;
  }
  return syntax(ps, what);
}

/* "{name=size, ...}" */
static int parse_sizes(parser *ps) {
  parsed *p = ps->p;
  int rc = expect(ps, '{', "expected '{'");
  skip_ws(ps);
  if (rc == SP_OK && ps->pos < ps->len && ps->s[ps->pos] == '}') return expect(ps, '}', "");
  while (rc == SP_OK) {
    skip_ws(ps);
    given *g = &p->sizes[p->nsizes];
    g->len = name_len(ps);
    if (g->len == 0) return syntax(ps, "expected a factor name");
    g->name = ps->s + ps->pos;
    g->col = col_of(ps);
    ps->pos += g->len;
    rc = expect(ps, '=', "expected '='");
    if (rc == SP_OK) rc = parse_int(ps, &g->size);
    if (rc != SP_OK) return rc;
    p->nsizes++;
    skip_ws(ps);
    if (ps->pos < ps->len && ps->s[ps->pos] == ',') {
      ps->pos++;
      continue;
    }
    return expect(ps, '}', "expected ',' or '}'");
  }
  return rc;
}

/* "keyword={name, ...}" */
static int parse_kind_list(parser *ps) {
  parsed *p = ps->p;
  int n = name_len(ps), k;
  for (k = 0; k < 4; k++)
    if ((int)strlen(kind_keywords[k]) == n && memcmp(ps->s + ps->pos, kind_keywords[k], (size_t)n) == 0)
      break;
  if (k == 4)
    return syntax(ps, "expected reduction=, need_replication=, permutation= or "
                      "blocked_propagation=");
  ps->pos += n;
  int rc = expect(ps, '=', "expected '='");
  if (rc == SP_OK) rc = expect(ps, '{', "expected '{'");
  skip_ws(ps);
  if (rc == SP_OK && ps->pos < ps->len && ps->s[ps->pos] == '}') return expect(ps, '}', "");
  while (rc == SP_OK) {
    skip_ws(ps);
    given *g = &p->kinds[k][p->nkinds[k]];
    g->len = name_len(ps);
    if (g->len == 0) return syntax(ps, "expected a factor name");
    g->name = ps->s + ps->pos;
    g->col = col_of(ps);
    ps->pos += g->len;
    p->nkinds[k]++;
    skip_ws(ps);
    if (ps->pos < ps->len && ps->s[ps->pos] == ',') {
      ps->pos++;
      continue;
    }
    return expect(ps, '}', "expected ',' or '}'");
  }
  return rc;
}

static int parse(sp_arena *a, const char *text, parsed *p, sp_err *err) {
  size_t n = strlen(text);
  if (n > (size_t)SP_MAX_INPUT_BYTES / 16)
    return sp_err_set(err, SP_ELIMIT, "sharding rule text is %zu bytes, over the limit", n);
  memset(p, 0, sizeof *p);
  size_t cap = n + 2;
  size_t slots = 16;
  while (slots < 2 * cap) slots *= 2;
  p->tensors = sp_arena_alloc(a, cap * sizeof *p->tensors);
  p->dims = sp_arena_alloc(a, cap * sizeof *p->dims);
  p->refs = sp_arena_alloc(a, cap * sizeof *p->refs);
  p->syms = sp_arena_alloc(a, cap * sizeof *p->syms);
  p->table = sp_arena_calloc(a, slots, sizeof *p->table);
  p->sizes = sp_arena_alloc(a, cap * sizeof *p->sizes);
  bool ok = p->tensors && p->dims && p->refs && p->syms && p->table && p->sizes;
  for (int k = 0; k < 4; k++) ok = ok && (p->kinds[k] = sp_arena_alloc(a, cap * sizeof(given)));
  if (!ok) return sp_err_set(err, SP_ENOMEM, "out of memory parsing a sharding rule");
  p->table_mask = (int)slots - 1;
  parser ps = {text, 0, (int)n, p, err};
  int rc = parse_side(&ps);
  if (rc != SP_OK) return rc;
  p->noperand_tensors = p->ntensors;
  skip_ws(&ps);
  if (ps.pos + 1 >= ps.len || ps.s[ps.pos] != '-' || ps.s[ps.pos + 1] != '>')
    return syntax(&ps, "expected a factor name, '(', ',' or '->'");
  ps.pos += 2;
  rc = parse_side(&ps);
  if (rc != SP_OK) return rc;
  skip_ws(&ps);
  if (ps.pos < ps.len && ps.s[ps.pos] == '{') {
    rc = parse_sizes(&ps);
    if (rc != SP_OK) return rc;
  }
  for (;;) {
    skip_ws(&ps);
    if (ps.pos >= ps.len) return SP_OK;
    if (!name_start(ps.s[ps.pos]))
      return syntax(&ps, "expected a factor name, '(', ',', '{' or a kind list");
    rc = parse_kind_list(&ps);
    if (rc != SP_OK) return rc;
  }
}

/* ------------------------------------------------------------------ resolution */

typedef struct factor {
  int symbol;                 /* -1 for a batch factor */
  int batch_pos;              /* batch factors: position from the right, 1-based */
  int64_t size;
  bool known;
  int whole_tensor, whole_dim;/* where a whole-dim size came from, -1 if none */
  int kind;                   /* -1 unset, else sp_factor_kind */
  bool blocked;
} factor;

typedef struct resolver {
  parsed *p;
  int noperands;
  sp_type *const *types;      /* per tensor */
  factor *factors;
  int nfactors;
  int *sym_factor;            /* symbol -> factor id */
  int batch_factor[SP_MAX_RANK + 1];
  sp_err *err;
} resolver;

static void tensor_name(const resolver *r, int t, char *buf, size_t n) {
  if (t < r->noperands)
    snprintf(buf, n, "operand %d", t);
  else
    snprintf(buf, n, "result %d", t - r->noperands);
}

static const char *factor_name(const resolver *r, int f, char *buf, size_t n) {
  const factor *fa = &r->factors[f];
  if (fa->symbol < 0) {
    snprintf(buf, n, "batch dim %d from the right of '...'", fa->batch_pos);
  } else {
    const sym *y = &r->p->syms[fa->symbol];
    snprintf(buf, n, "factor '%.*s'", y->len > 64 ? 64 : y->len, y->name);
  }
  return buf;
}

static int new_factor(resolver *r, int symbol, int batch_pos) {
  if (r->nfactors >= SP_MAX_FACTORS) return -1;
  factor *f = &r->factors[r->nfactors];
  f->symbol = symbol;
  f->batch_pos = batch_pos;
  f->size = 0;
  f->known = false;
  f->whole_tensor = f->whole_dim = -1;
  f->kind = -1;
  f->blocked = false;
  return r->nfactors++;
}

/* Records that factor f is the whole of dim `d` (of size `size`) of tensor t. */
static int whole_dim(resolver *r, int f, int t, int d, int64_t size) {
  factor *fa = &r->factors[f];
  if (!fa->known) {
    fa->known = true;
    fa->size = size;
    fa->whole_tensor = t;
    fa->whole_dim = d;
    return SP_OK;
  }
  if (fa->size == size) return SP_OK;
  char a[96], b[32], c[32];
  tensor_name(r, fa->whole_tensor, b, sizeof b);
  tensor_name(r, t, c, sizeof c);
  return sp_err_set(r->err, SP_EINVAL, "%s is %lld in %s dim %d but %lld in %s dim %d",
                    factor_name(r, f, a, sizeof a), (long long)fa->size, b, fa->whole_dim,
                    (long long)size, c, d);
}

/* Numbers factors in order of appearance and takes the sizes of whole dims. */
static int number_factors(resolver *r) {
  parsed *p = r->p;
  for (int t = 0; t < p->ntensors; t++) {
    const tensor *tn = &p->tensors[t];
    const sp_type *ty = r->types[t];
    char tname[32];
    tensor_name(r, t, tname, sizeof tname);
    if (!ty || !sp_type_is_static_tensor(ty))
      return sp_err_set(r->err, SP_EUNSUPPORTED, "%s is not a tensor with a static shape", tname);
    if (ty->rank > SP_MAX_RANK)
      return sp_err_set(r->err, SP_ELIMIT, "%s has rank %d, over SP_MAX_RANK", tname, ty->rank);
    int nbatch = ty->rank - tn->ndims;
    if (nbatch < 0 || (!tn->ellipsis && nbatch != 0))
      return sp_err_set(r->err, SP_EINVAL,
                        "%s has rank %d but its mapping (column %d) has %d dims%s", tname,
                        ty->rank, tn->col, tn->ndims, tn->ellipsis ? " after '...'" : "");
    for (int q = 0; q < nbatch; q++) {
      int pos = nbatch - q;
      if (r->batch_factor[pos] < 0) r->batch_factor[pos] = new_factor(r, -1, pos);
      int f = r->batch_factor[pos];
      if (f < 0) goto too_many;
      int rc = whole_dim(r, f, t, q, ty->dims[q]);
      if (rc != SP_OK) return rc;
    }
    for (int k = 0; k < tn->ndims; k++) {
      const dimref *d = &p->dims[tn->first_dim + k];
      for (int i = 0; i < d->n; i++) {
        int s = p->refs[d->first + i];
        sym *y = &p->syms[s];
        if (y->stamp == t + 1)
          return sp_err_set(r->err, SP_EINVAL, "sharding rule column %d: factor '%.*s' appears "
                            "twice in %s", d->col, y->len > 64 ? 64 : y->len, y->name, tname);
        y->stamp = t + 1;
        if (r->sym_factor[s] < 0) r->sym_factor[s] = new_factor(r, s, 0);
        if (r->sym_factor[s] < 0) goto too_many;
      }
      if (d->n == 1) {
        int rc = whole_dim(r, r->sym_factor[p->refs[d->first]], t, nbatch + k,
                           ty->dims[nbatch + k]);
        if (rc != SP_OK) return rc;
      }
    }
  }
  return SP_OK;
too_many:
  return sp_err_set(r->err, SP_ELIMIT, "sharding rule has more than %d factors (SP_MAX_FACTORS)",
                    SP_MAX_FACTORS);
}

static int find_factor(resolver *r, const char *name, int len, const char *where, int col) {
  int s = intern(r->p, name, len, 0, false);
  if (s < 0 || r->sym_factor[s] < 0) {
    if (col > 0)
      return sp_err_set(r->err, SP_EINVAL, "sharding rule column %d: %s names factor '%.*s', "
                        "which no tensor uses", col, where, len > 64 ? 64 : len, name);
    return sp_err_set(r->err, SP_EINVAL, "%s names factor '%.*s', which no tensor uses", where,
                      len > 64 ? 64 : len, name);
  }
  return r->sym_factor[s];
}

static int give_size(resolver *r, const char *name, int len, int64_t size, int col) {
  int f = find_factor(r, name, len, "a size", col);
  if (f < 0) return f;
  factor *fa = &r->factors[f];
  char a[96];
  if (size < 1)
    return sp_err_set(r->err, SP_EINVAL, "%s is given size %lld; sizes must be >= 1",
                      factor_name(r, f, a, sizeof a), (long long)size);
  if (fa->known && fa->size != size)
    return sp_err_set(r->err, SP_EINVAL, "%s is given size %lld but is %lld elsewhere",
                      factor_name(r, f, a, sizeof a), (long long)size, (long long)fa->size);
  fa->known = true;
  fa->size = size;
  return SP_OK;
}

/* Fills in the one unknown factor of compound dims until nothing changes. */
static void infer_compound_sizes(resolver *r) {
  parsed *p = r->p;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int t = 0; t < p->ntensors; t++) {
      const tensor *tn = &p->tensors[t];
      int nbatch = r->types[t]->rank - tn->ndims;
      for (int k = 0; k < tn->ndims; k++) {
        const dimref *d = &p->dims[tn->first_dim + k];
        if (d->n < 2) continue;
        int unknown = -1, nunknown = 0;
        int64_t known = 1;
        for (int i = 0; i < d->n; i++) {
          factor *fa = &r->factors[r->sym_factor[p->refs[d->first + i]]];
          if (!fa->known) {
            unknown = r->sym_factor[p->refs[d->first + i]];
            nunknown++;
          } else if (__builtin_mul_overflow(known, fa->size, &known)) {
            nunknown = 2; /* let the product check report it */
          }
        }
        int64_t dim = r->types[t]->dims[nbatch + k];
        if (nunknown == 1 && known > 0 && dim % known == 0 && dim / known >= 1) {
          r->factors[unknown].known = true;
          r->factors[unknown].size = dim / known;
          changed = true;
        }
      }
    }
  }
}

static int check_compound_dims(resolver *r) {
  parsed *p = r->p;
  for (int f = 0; f < r->nfactors; f++)
    if (!r->factors[f].known) {
      char a[96];
      return sp_err_set(r->err, SP_EINVAL, "sharding rule column %d: the size of %s is needed "
                        "(it is only used inside compound dims)",
                        p->syms[r->factors[f].symbol].col, factor_name(r, f, a, sizeof a));
    }
  for (int t = 0; t < p->ntensors; t++) {
    const tensor *tn = &p->tensors[t];
    int nbatch = r->types[t]->rank - tn->ndims;
    for (int k = 0; k < tn->ndims; k++) {
      const dimref *d = &p->dims[tn->first_dim + k];
      if (d->n < 2) continue;
      int64_t prod = 1;
      bool overflow = false;
      char tname[32], a[96];
      tensor_name(r, t, tname, sizeof tname);
      for (int i = 0; i < d->n; i++) {
        int f = r->sym_factor[p->refs[d->first + i]];
        if (r->factors[f].size == 1)
          return sp_err_set(r->err, SP_EINVAL, "sharding rule column %d: %s has size 1 and may "
                            "not share %s dim %d with other factors", d->col,
                            factor_name(r, f, a, sizeof a), tname, nbatch + k);
        overflow = overflow || __builtin_mul_overflow(prod, r->factors[f].size, &prod);
      }
      int64_t dim = r->types[t]->dims[nbatch + k];
      if (overflow || prod != dim)
        return sp_err_set(r->err, SP_EINVAL, "sharding rule column %d: %s dim %d has size %lld "
                          "but its factors multiply to %s%lld", d->col, tname, nbatch + k,
                          (long long)dim, overflow ? "more than " : "",
                          (long long)(overflow ? INT64_MAX : prod));
    }
  }
  return SP_OK;
}

/* kind 0..2: reduction, need_replication, permutation; 3: blocked. */
static int set_kind(resolver *r, int k, const char *name, int len, int col) {
  int f = find_factor(r, name, len, kind_keywords[k], col);
  if (f < 0) return f;
  factor *fa = &r->factors[f];
  if (k == 3) {
    fa->blocked = true;
    return SP_OK;
  }
  static const sp_factor_kind kinds[3] = {SP_FACTOR_REDUCTION, SP_FACTOR_NEED_REPLICATION,
                                          SP_FACTOR_PERMUTATION};
  if (fa->kind >= 0 && fa->kind != (int)kinds[k]) {
    char a[96];
    return sp_err_set(r->err, SP_EINVAL, "%s is given two kinds (%s is one of them)",
                      factor_name(r, f, a, sizeof a), kind_keywords[k]);
  }
  fa->kind = (int)kinds[k];
  return SP_OK;
}

static int apply_kinds(resolver *r, const sp_einsum_options *o) {
  const char *const *lists[4] = {o->reduction, o->need_replication, o->permutation, o->blocked};
  const int counts[4] = {o->nreduction, o->nneed_replication, o->npermutation, o->nblocked};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < counts[k]; i++) {
      int rc = set_kind(r, k, lists[k][i], (int)strlen(lists[k][i]), 0);
      if (rc != SP_OK) return rc;
    }
    for (int i = 0; i < r->p->nkinds[k]; i++) {
      const given *g = &r->p->kinds[k][i];
      int rc = set_kind(r, k, g->name, g->len, g->col);
      if (rc != SP_OK) return rc;
    }
  }
  /* A reduction factor is summed away: it may not appear in a result. */
  parsed *p = r->p;
  for (int t = p->noperand_tensors; t < p->ntensors; t++) {
    const tensor *tn = &p->tensors[t];
    for (int k = 0; k < tn->ndims; k++) {
      const dimref *d = &p->dims[tn->first_dim + k];
      for (int i = 0; i < d->n; i++) {
        int f = r->sym_factor[p->refs[d->first + i]];
        if (r->factors[f].kind == SP_FACTOR_REDUCTION) {
          char a[96], tname[32];
          tensor_name(r, t, tname, sizeof tname);
          return sp_err_set(r->err, SP_EINVAL, "%s is a reduction factor but appears in %s",
                            factor_name(r, f, a, sizeof a), tname);
        }
      }
    }
  }
  return SP_OK;
}

static int build(sp_arena *a, resolver *r, sp_rule **out) {
  parsed *p = r->p;
  int *ranks = sp_arena_alloc(a, ((size_t)p->ntensors + 1) * sizeof *ranks);
  if (!ranks) return sp_err_set(r->err, SP_ENOMEM, "out of memory building a sharding rule");
  for (int t = 0; t < p->ntensors; t++) ranks[t] = r->types[t]->rank;
  sp_rule_builder b;
  int rc = sp_rule_builder_init(&b, a, p->noperand_tensors, ranks,
                                p->ntensors - p->noperand_tensors, ranks + p->noperand_tensors);
  if (rc != SP_OK) return sp_err_set(r->err, rc, "cannot start a sharding rule");
  for (int f = 0; f < r->nfactors; f++) {
    const factor *fa = &r->factors[f];
    sp_rule_builder_factor(&b, fa->size, fa->kind < 0 ? SP_FACTOR_PASS_THROUGH : fa->kind,
                           fa->blocked);
  }
  for (int t = 0; t < p->ntensors; t++) {
    const tensor *tn = &p->tensors[t];
    int nbatch = ranks[t] - tn->ndims;
    for (int q = 0; q < nbatch; q++)
      sp_rule_builder_map_always(&b, t, q, r->batch_factor[nbatch - q]);
    for (int k = 0; k < tn->ndims; k++) {
      const dimref *d = &p->dims[tn->first_dim + k];
      for (int i = 0; i < d->n; i++)
        sp_rule_builder_map_always(&b, t, nbatch + k, r->sym_factor[p->refs[d->first + i]]);
    }
  }
  rc = sp_rule_builder_build(&b, out, r->err);
  if (rc != SP_OK) return rc;
  (*out)->custom = true;
  return SP_OK;
}

int sp_einsum_rule(sp_arena *a, const char *text, const sp_einsum_options *opts,
                   int noperands, sp_type *const *operand_types, int nresults,
                   sp_type *const *result_types, sp_rule **out, sp_err *err) {
  static const sp_einsum_options none = {0};
  if (!opts) opts = &none;
  *out = NULL;
  parsed p;
  int rc = parse(a, text, &p, err);
  if (rc != SP_OK) return rc;
  int nres = p.ntensors - p.noperand_tensors;
  if (p.noperand_tensors != noperands || nres != nresults)
    return sp_err_set(err, SP_EINVAL, "sharding rule maps %d operands and %d results but the op "
                      "has %d and %d", p.noperand_tensors, nres, noperands, nresults);
  resolver r;
  memset(&r, 0, sizeof r);
  r.p = &p;
  r.noperands = noperands;
  r.err = err;
  sp_type **types = sp_arena_alloc(a, ((size_t)p.ntensors + 1) * sizeof *types);
  r.factors = sp_arena_alloc(a, ((size_t)p.nsyms + SP_MAX_RANK + 1) * sizeof *r.factors);
  r.sym_factor = sp_arena_alloc(a, ((size_t)p.nsyms + 1) * sizeof *r.sym_factor);
  if (!types || !r.factors || !r.sym_factor)
    return sp_err_set(err, SP_ENOMEM, "out of memory resolving a sharding rule");
  for (int t = 0; t < p.ntensors; t++)
    types[t] = t < noperands ? operand_types[t] : result_types[t - noperands];
  r.types = types;
  for (int s = 0; s < p.nsyms; s++) r.sym_factor[s] = -1;
  for (int i = 0; i <= SP_MAX_RANK; i++) r.batch_factor[i] = -1;
  rc = number_factors(&r);
  for (int i = 0; rc == SP_OK && i < opts->nsizes; i++)
    rc = give_size(&r, opts->sizes[i].name, (int)strlen(opts->sizes[i].name),
                   opts->sizes[i].size, 0);
  for (int i = 0; rc == SP_OK && i < p.nsizes; i++)
    rc = give_size(&r, p.sizes[i].name, p.sizes[i].len, p.sizes[i].size, p.sizes[i].col);
  if (rc != SP_OK) return rc;
  infer_compound_sizes(&r);
  rc = check_compound_dims(&r);
  if (rc == SP_OK) rc = apply_kinds(&r, opts);
  if (rc == SP_OK) rc = build(a, &r, out);
  return rc;
}

int sp_einsum_rule_for_op(sp_arena *a, const char *text, const sp_einsum_options *opts,
                          const sp_op *op, sp_rule **out, sp_err *err) {
  sp_type **types = sp_arena_alloc(a, ((size_t)op->noperands + 1) * sizeof *types);
  if (!types) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < op->noperands; i++)
    types[i] = op->operands[i].value ? op->operands[i].value->type : NULL;
  sp_type **rtypes = sp_arena_alloc(a, ((size_t)op->nresults + 1) * sizeof *rtypes);
  if (!rtypes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < op->nresults; i++) rtypes[i] = op->results[i].type;
  return sp_einsum_rule(a, text, opts, op->noperands, types, op->nresults, rtypes, out, err);
}
