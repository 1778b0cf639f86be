/*
 * reader.c - the core of the MLIR reader: errors, SSA names, regions, generic ops, the module
 * (see reader.h and mlir.h).
 *
 * SSA names follow MLIR's scoping: an isolated-from-above op (module, func.func) starts a new
 * name table; a region of any other op shares its parent's table, and the names it defines are
 * removed again when the region ends (sibling regions may reuse them, nested ones may not
 * shadow). Each table is a chained hash map, so a lookup costs O(1) whatever the module size.
 *
 * Forward references are not supported: StableHLO and sdy bodies are single-block regions in
 * which every use follows its definition.
 */
#include "mlir/reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/op_attrs.h"
#include "ir/sp_limits.h"
#include "mlir/format.h"
#include "mlir/mlir.h"

/* ------------------------------------------------------------------ errors */

static int verror(sp__mlir_parser *p, int code, int line, int col, const char *fmt, va_list ap) {
  if (p->failed || p->trial) return code;
  p->failed = true;
  char msg[SP_ERR_MSG_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  sp_err_set(p->err, code, "%s:%d:%d: %s", p->filename, p->first_line + line - 1, col, msg);
  return code;
}

int sp__mlir_error_context(sp__mlir_parser *p, int rc, const char *fmt, ...) {
  if (rc == SP_OK || rc == SP_ENOMEM || p->trial || !p->err || !p->failed) return rc;
  char line[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t n = strlen(p->err->msg);
  snprintf(p->err->msg + n, sizeof p->err->msg - n, "\n%s", line);
  return rc;
}

int sp__mlir_error(sp__mlir_parser *p, const sp__mlir_token *at, const char *fmt, ...) {
  if (!at) at = &p->lx.tok;
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, SP_EINVAL, at->line, at->col, fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_error_code(sp__mlir_parser *p, int code, const sp__mlir_token *at, const char *fmt,
                        ...) {
  if (!at) at = &p->lx.tok;
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, code, at->line, at->col, fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_error_here(sp__mlir_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = verror(p, SP_EINVAL, p->lx.line, sp__mlir_lex_col(&p->lx), fmt, ap);
  va_end(ap);
  return rc;
}

int sp__mlir_oom(sp__mlir_parser *p) {
  return sp__mlir_error_code(p, SP_ENOMEM, NULL, "out of memory while parsing");
}

/* ------------------------------------------------------------------ tokens */

/* A lexer error becomes a parse error at the first use of the bad token. */
static int check_token(sp__mlir_parser *p) {
  if (p->lx.tok.kind != SP_TOK_ERROR) return SP_OK;
  return sp__mlir_error(p, NULL, "%s", p->lx.err_msg ? p->lx.err_msg : "invalid token");
}

void sp__mlir_next(sp__mlir_parser *p) { sp__mlir_lex_next(&p->lx); }

bool sp__mlir_accept(sp__mlir_parser *p, sp__mlir_tok_kind kind) {
  if (p->lx.tok.kind != kind) return false;
  sp__mlir_lex_next(&p->lx);
  return true;
}

bool sp__mlir_accept_word(sp__mlir_parser *p, const char *word) {
  if (p->lx.tok.kind != SP_TOK_BARE || !sp__mlir_tok_is(&p->lx.tok, word)) return false;
  sp__mlir_lex_next(&p->lx);
  return true;
}

const char *sp__mlir_kind_spelling(sp__mlir_tok_kind kind) {
  switch (kind) {
    case SP_TOK_LPAREN: return "'('";
    case SP_TOK_RPAREN: return "')'";
    case SP_TOK_LSQUARE: return "'['";
    case SP_TOK_RSQUARE: return "']'";
    case SP_TOK_LBRACE: return "'{'";
    case SP_TOK_RBRACE: return "'}'";
    case SP_TOK_LESS: return "'<'";
    case SP_TOK_GREATER: return "'>'";
    case SP_TOK_COMMA: return "','";
    case SP_TOK_COLON: return "':'";
    case SP_TOK_EQUAL: return "'='";
    case SP_TOK_QUESTION: return "'?'";
    case SP_TOK_ARROW: return "'->'";
    case SP_TOK_STAR: return "'*'";
    case SP_TOK_MINUS: return "'-'";
    case SP_TOK_PERCENT: return "SSA value";
    case SP_TOK_AT: return "symbol name";
    case SP_TOK_STRING: return "string";
    case SP_TOK_INT: return "integer";
    case SP_TOK_BARE: return "identifier";
    case SP_TOK_HASH: return "attribute";
    case SP_TOK_CARET: return "block label";
    default: return "token";
  }
}

int sp__mlir_expect(sp__mlir_parser *p, sp__mlir_tok_kind kind, const char *context) {
  if (sp__mlir_accept(p, kind)) return SP_OK;
  if (check_token(p)) return SP_EINVAL;
  if (p->lx.tok.kind == SP_TOK_EOF)
    return sp__mlir_error(p, NULL, "expected %s in %s, got end of input",
                          sp__mlir_kind_spelling(kind), context);
  return sp__mlir_error(p, NULL, "expected %s in %s", sp__mlir_kind_spelling(kind), context);
}

int sp__mlir_expect_word(sp__mlir_parser *p, const char *word, const char *context) {
  if (sp__mlir_accept_word(p, word)) return SP_OK;
  if (check_token(p)) return SP_EINVAL;
  return sp__mlir_error(p, NULL, "expected '%s' in %s", word, context);
}

int sp__mlir_enter(sp__mlir_parser *p) {
  if (++p->depth > SP_MAX_NESTING)
    return sp__mlir_error_code(p, SP_ELIMIT, NULL,
                               "nesting deeper than SP_MAX_NESTING (%d)", SP_MAX_NESTING);
  return SP_OK;
}

/* ------------------------------------------------------------------ literals */

int sp__mlir_parse_int(sp__mlir_parser *p, int64_t *out, const char *context) {
  bool neg = sp__mlir_accept(p, SP_TOK_MINUS);
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_INT) {
    if (check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected integer in %s", context);
  }
  uint64_t v = 0;
  bool hex = t->n > 2 && t->p[1] == 'x';
  for (size_t i = hex ? 2 : 0; i < t->n; i++) {
    int c = (unsigned char)t->p[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else d = c - 'A' + 10;
    uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - (uint64_t)d) / base)
      return sp__mlir_error(p, NULL, "integer out of range in %s", context);
    v = v * base + (uint64_t)d;
  }
  if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
    return sp__mlir_error(p, NULL, "integer out of range in %s", context);
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  sp__mlir_next(p);
  return SP_OK;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes the body of a string literal token (quotes included in [s, s+n)). */
static int decode_string(sp__mlir_parser *p, const char *s, size_t n, const char **out,
                         size_t *len) {
  char *buf = sp_arena_alloc(p->a, n + 1);
  if (!buf) return sp__mlir_oom(p);
  size_t k = 0;
  for (size_t i = 1; i + 1 < n; i++) {
    char c = s[i];
    if (c != '\\') {
      buf[k++] = c;
      continue;
    }
    char e = s[++i];
    switch (e) {
      case '\\': buf[k++] = '\\'; break;
      case '"': buf[k++] = '"'; break;
      case 'n': buf[k++] = '\n'; break;
      case 't': buf[k++] = '\t'; break;
      default: {
        if (i + 1 >= n - 1) return sp__mlir_error(p, NULL, "unknown escape in string literal");
        int h1 = hexval((unsigned char)s[i]), h2 = hexval((unsigned char)s[i + 1]);
        if (h1 < 0 || h2 < 0) return sp__mlir_error(p, NULL, "unknown escape in string literal");
        buf[k++] = (char)(h1 * 16 + h2);
        i++;
      }
    }
  }
  buf[k] = '\0';
  *out = buf;
  if (len) *len = k;
  return SP_OK;
}

int sp__mlir_parse_string(sp__mlir_parser *p, const char **out, size_t *len, const char *context) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_STRING) {
    if (check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected string in %s", context);
  }
  int rc = decode_string(p, t->p, t->n, out, len);
  if (rc) return rc;
  sp__mlir_next(p);
  return SP_OK;
}

int sp__mlir_parse_symbol(sp__mlir_parser *p, const char **out) {
  const sp__mlir_token *t = &p->lx.tok;
  if (t->kind != SP_TOK_AT) {
    if (check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected symbol name '@...'");
  }
  if (t->n > 1 && t->p[1] == '"') {
    /* @"quoted": re-read the quoted part as a string literal. */
    size_t len;
    sp__mlir_lex_seek(&p->lx, t->p + 1);
    return sp__mlir_parse_string(p, out, &len, "symbol name");
  }
  *out = sp__mlir_intern(p, t->p + 1, t->n - 1);
  if (!*out) return sp__mlir_oom(p);
  sp__mlir_next(p);
  return SP_OK;
}

int sp__mlir_skip_loc(sp__mlir_parser *p) {
  if (p->lx.tok.kind != SP_TOK_BARE || !sp__mlir_tok_is(&p->lx.tok, "loc")) return SP_OK;
  sp__mlir_next(p);
  if (p->lx.tok.kind != SP_TOK_LPAREN) return sp__mlir_expect(p, SP_TOK_LPAREN, "location");
  int depth = 0;
  do {
    if (check_token(p)) return SP_EINVAL;
    if (p->lx.tok.kind == SP_TOK_EOF)
      return sp__mlir_error(p, NULL, "expected ')' in location, got end of input");
    if (p->lx.tok.kind == SP_TOK_LPAREN || p->lx.tok.kind == SP_TOK_LSQUARE) {
      if (++depth > SP_MAX_NESTING)
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "location nested too deeply");
    } else if (p->lx.tok.kind == SP_TOK_RPAREN || p->lx.tok.kind == SP_TOK_RSQUARE) {
      depth--;
    }
    sp__mlir_next(p);
  } while (depth > 0);
  return SP_OK;
}

/* ------------------------------------------------------------------ interning */

typedef struct intern_entry {
  const char *s;
  size_t n;
  uint32_t hash;
  struct intern_entry *next;
} intern_entry;

typedef struct intern_table {
  intern_entry **b;
  uint32_t mask, count;
} intern_table;

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* Per-parse lookup tables: `#alias` / `!alias` definitions (by text position), interned names,
 * and a cache of op kinds by interned name. */
struct sp__mlir_tables {
  int n, cap;
  struct { const char *name; size_t len; const char *value; bool is_type; } *v;
  intern_table strings; /* interned identifiers live here too */
  struct { const char *name; sp_op_kind kind; } kinds[64]; /* op kind by interned name */
};

const char *sp__mlir_intern(sp__mlir_parser *p, const char *s, size_t n) {
  intern_table *t = &p->tables->strings;
  uint32_t h = hash_bytes(s, n);
  if (t->b) {
    for (intern_entry *e = t->b[h & t->mask]; e; e = e->next)
      if (e->hash == h && e->n == n && memcmp(e->s, s, n) == 0) return e->s;
  }
  if (!t->b || t->count >= t->mask) {
    uint32_t cap = t->b ? (t->mask + 1) * 2 : 256;
    intern_entry **nb = sp_arena_calloc(p->tmp, cap, sizeof *nb);
    if (!nb) return NULL;
    if (t->b) {
      for (uint32_t i = 0; i <= t->mask; i++) {
        intern_entry *e = t->b[i];
        while (e) {
          intern_entry *next = e->next;
          e->next = nb[e->hash & (cap - 1)];
          nb[e->hash & (cap - 1)] = e;
          e = next;
        }
      }
    }
    t->b = nb;
    t->mask = cap - 1;
  }
  intern_entry *e = sp_arena_alloc(p->tmp, sizeof *e);
  char *copy = sp_arena_strndup(p->a, s, n);
  if (!e || !copy) return NULL;
  e->s = copy;
  e->n = n;
  e->hash = h;
  e->next = t->b[h & t->mask];
  t->b[h & t->mask] = e;
  t->count++;
  return copy;
}

/* The kind of an op name interned by sp__mlir_intern (a direct-mapped cache in front of the
 * linear table scan, since a module repeats a handful of op names). */
static sp_op_kind kind_of(sp__mlir_parser *p, const char *interned) {
  size_t slot = ((uintptr_t)interned >> 4) & 63;
  if (p->tables->kinds[slot].name == interned) return p->tables->kinds[slot].kind;
  sp_op_kind k = sp_op_kind_from_name(interned);
  p->tables->kinds[slot].name = interned;
  p->tables->kinds[slot].kind = k;
  return k;
}

/* ------------------------------------------------------------------ vectors */

static void *grow(sp__mlir_parser *p, void *v, int *cap, size_t elem) {
  int ncap = *cap ? *cap * 2 : 8;
  void *nv = sp_arena_realloc(p->tmp, v, (size_t)*cap * elem, (size_t)ncap * elem);
  if (nv) *cap = ncap;
  return nv;
}

int sp__mlir_values_push(sp__mlir_parser *p, sp__mlir_values *vec, sp_value *v) {
  if (vec->n == vec->cap) {
    if (vec->n >= SP_MAX_OPERANDS)
      return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS values");
    sp_value **nv = grow(p, vec->v, &vec->cap, sizeof *nv);
    if (!nv) return sp__mlir_oom(p);
    vec->v = nv;
  }
  vec->v[vec->n++] = v;
  return SP_OK;
}

int sp__mlir_types_push(sp__mlir_parser *p, sp__mlir_types *vec, sp_type *t) {
  if (vec->n == vec->cap) {
    if (vec->n >= SP_MAX_OPERANDS)
      return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS types");
    sp_type **nv = grow(p, vec->v, &vec->cap, sizeof *nv);
    if (!nv) return sp__mlir_oom(p);
    vec->v = nv;
  }
  vec->v[vec->n++] = t;
  return SP_OK;
}

int sp__mlir_args_push(sp__mlir_parser *p, sp__mlir_args *vec, const sp__mlir_arg *arg) {
  if (vec->n == vec->cap) {
    if (vec->n >= SP_MAX_OPERANDS)
      return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS arguments");
    sp__mlir_arg *nv = grow(p, vec->v, &vec->cap, sizeof *nv);
    if (!nv) return sp__mlir_oom(p);
    vec->v = nv;
  }
  vec->v[vec->n++] = *arg;
  return SP_OK;
}

/* ------------------------------------------------------------------ SSA names */

typedef struct name_entry {
  const char *s;      /* name without '%', points into the text */
  uint32_t n, hash;
  sp_value *first;    /* results are contiguous: first + k is result k */
  int count;
  struct name_entry *next;
} name_entry;

typedef struct name_map {
  name_entry **b;
  uint32_t mask, count;
  struct name_map *parent; /* enclosing isolated scope */
  int undo_base;           /* undo stack height when this map was pushed */
} name_map;

struct sp__mlir_names {
  name_map *top;
  name_entry **undo;       /* definitions, newest last */
  int nundo, capundo;
};

static int names_push_isolated(sp__mlir_parser *p) {
  name_map *m = sp_arena_calloc(p->tmp, 1, sizeof *m);
  if (!m) return sp__mlir_oom(p);
  m->parent = p->names->top;
  m->undo_base = p->names->nundo;
  p->names->top = m;
  return SP_OK;
}

static void names_pop_isolated(sp__mlir_parser *p) {
  name_map *m = p->names->top;
  p->names->nundo = m->undo_base;
  p->names->top = m->parent;
}

static void names_unlink(name_map *m, name_entry *e) {
  name_entry **pp = &m->b[e->hash & m->mask];
  while (*pp && *pp != e) pp = &(*pp)->next;
  if (*pp) *pp = e->next;
  m->count--;
}

/* Removes the names defined since `mark` (the end of a non-isolated region). */
static void names_truncate(sp__mlir_parser *p, int mark) {
  sp__mlir_names *ns = p->names;
  while (ns->nundo > mark) names_unlink(ns->top, ns->undo[--ns->nundo]);
}

static name_entry *names_find(name_map *m, const char *s, uint32_t n, uint32_t h) {
  if (!m->b) return NULL;
  for (name_entry *e = m->b[h & m->mask]; e; e = e->next)
    if (e->hash == h && e->n == n && memcmp(e->s, s, n) == 0) return e;
  return NULL;
}

/* Binds `%name` (token `t`) to `count` values starting at `first`. */
static int names_define(sp__mlir_parser *p, const sp__mlir_token *t, sp_value *first, int count) {
  name_map *m = p->names->top;
  const char *s = t->p + 1;
  uint32_t n = (uint32_t)(t->n - 1), h = hash_bytes(s, n);
  if (names_find(m, s, n, h))
    return sp__mlir_error(p, t, "redefinition of SSA value '%.*s'", (int)t->n, t->p);
  if (!m->b || m->count >= m->mask) {
    uint32_t cap = m->b ? (m->mask + 1) * 2 : 64;
    name_entry **nb = sp_arena_calloc(p->tmp, cap, sizeof *nb);
    if (!nb) return sp__mlir_oom(p);
    if (m->b)
      for (uint32_t i = 0; i <= m->mask; i++) {
        name_entry *e = m->b[i];
        while (e) {
          name_entry *next = e->next;
          e->next = nb[e->hash & (cap - 1)];
          nb[e->hash & (cap - 1)] = e;
          e = next;
        }
      }
    m->b = nb;
    m->mask = cap - 1;
  }
  name_entry *e = sp_arena_alloc(p->tmp, sizeof *e);
  if (!e) return sp__mlir_oom(p);
  e->s = s;
  e->n = n;
  e->hash = h;
  e->first = first;
  e->count = count;
  e->next = m->b[h & m->mask];
  m->b[h & m->mask] = e;
  m->count++;
  sp__mlir_names *ns = p->names;
  if (ns->nundo == ns->capundo) {
    name_entry **nu = grow(p, ns->undo, &ns->capundo, sizeof *nu);
    if (!nu) return sp__mlir_oom(p);
    ns->undo = nu;
  }
  ns->undo[ns->nundo++] = e;
  const char *hint = sp_arena_strndup(p->a, s, n);
  if (!hint) return sp__mlir_oom(p);
  for (int i = 0; i < count; i++) first[i].name_hint = hint;
  return SP_OK;
}

int sp__mlir_parse_operand(sp__mlir_parser *p, sp_value **out) {
  sp__mlir_token t = p->lx.tok;
  if (t.kind != SP_TOK_PERCENT) {
    if (check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, NULL, "expected SSA value");
  }
  /* `%x#3`: the lexer stops at '#', which directly follows the name. */
  int64_t index = -1;
  const char *after = t.p + t.n;
  if (after < p->lx.end && *after == '#') {
    const char *q = after + 1;
    int64_t v = 0;
    if (q >= p->lx.end || *q < '0' || *q > '9')
      return sp__mlir_error(p, &t, "expected result number after '#'");
    while (q < p->lx.end && *q >= '0' && *q <= '9') {
      if (v > (INT64_MAX - 9) / 10) return sp__mlir_error(p, &t, "result number out of range");
      v = v * 10 + (*q++ - '0');
    }
    index = v;
    sp__mlir_lex_seek(&p->lx, q);
  } else {
    sp__mlir_next(p);
  }
  const char *s = t.p + 1;
  uint32_t n = (uint32_t)(t.n - 1);
  name_entry *e = names_find(p->names->top, s, n, hash_bytes(s, n));
  if (!e) return sp__mlir_error(p, &t, "use of undefined value '%.*s'", (int)t.n, t.p);
  /* `%x` alone means `%x#0`. */
  if (index >= e->count)
    return sp__mlir_error(p, &t, "result number %lld out of range: '%.*s' has %d result%s",
                          (long long)index, (int)t.n, t.p, e->count, e->count == 1 ? "" : "s");
  *out = e->first + (index < 0 ? 0 : index);
  return SP_OK;
}

int sp__mlir_parse_operand_list(sp__mlir_parser *p, sp__mlir_values *out) {
  if (p->lx.tok.kind != SP_TOK_PERCENT) return SP_OK;
  for (;;) {
    sp_value *v;
    int rc = sp__mlir_parse_operand(p, &v);
    if (rc) return rc;
    if ((rc = sp__mlir_values_push(p, out, v))) return rc;
    if (p->lx.tok.kind != SP_TOK_COMMA) return SP_OK;
    /* Only continue if another operand follows: `%a, dims = [...]` ends the list. */
    sp__mlir_lexer saved = p->lx;
    sp__mlir_next(p);
    if (p->lx.tok.kind != SP_TOK_PERCENT) {
      p->lx = saved;
      return SP_OK;
    }
  }
}

/* ------------------------------------------------------------------ argument lists */

int sp__mlir_parse_arg_list(sp__mlir_parser *p, sp__mlir_args *out) {
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "argument list");
  if (rc) return rc;
  if (sp__mlir_accept(p, SP_TOK_RPAREN)) return SP_OK;
  for (;;) {
    sp__mlir_arg arg;
    memset(&arg, 0, sizeof arg);
    arg.name = p->lx.tok;
    if (arg.name.kind != SP_TOK_PERCENT) {
      if (check_token(p)) return SP_EINVAL;
      return sp__mlir_error(p, NULL, "expected argument name in argument list");
    }
    sp__mlir_next(p);
    if ((rc = sp__mlir_expect(p, SP_TOK_COLON, "argument list"))) return rc;
    if ((rc = sp__mlir_parse_type(p, &arg.type))) return rc;
    if (p->lx.tok.kind == SP_TOK_LBRACE) {
      if ((rc = sp__mlir_parse_attr_dict_body(p, SP_OP_UNKNOWN, &arg.attrs))) return rc;
      sp_attr *sh = sp_attrs_get(&arg.attrs, "sdy.sharding");
      if (sh && sh->kind == SP_ATTR_SHARDING) {
        arg.sharding = sh->u.sharding;
        sp_attrs_remove(&arg.attrs, "sdy.sharding");
      }
    }
    if ((rc = sp__mlir_skip_loc(p))) return rc;
    if ((rc = sp__mlir_args_push(p, out, &arg))) return rc;
    if (sp__mlir_accept(p, SP_TOK_COMMA)) continue;
    return sp__mlir_expect(p, SP_TOK_RPAREN, "argument list");
  }
}

/* ------------------------------------------------------------------ regions */

static int parse_operation(sp__mlir_parser *p, sp_block *b);

static int add_block_args(sp__mlir_parser *p, sp_block *b, const sp__mlir_args *args) {
  for (int i = 0; i < args->n; i++) {
    sp_value *v = sp_block_add_arg(p->a, b, args->v[i].type);
    if (!v) return sp__mlir_oom(p);
    v->attrs = args->v[i].attrs;
    v->sharding = args->v[i].sharding;
    v->loc.line = p->first_line + args->v[i].name.line - 1;
    v->loc.col = args->v[i].name.col;
    int rc = names_define(p, &args->v[i].name, v, 1);
    if (rc) return rc;
  }
  return SP_OK;
}

/* `^bb3(%a: T, ...):` (the caret token is current). */
static int parse_block_header(sp__mlir_parser *p, sp_block *b) {
  sp__mlir_next(p);
  if (p->lx.tok.kind == SP_TOK_LPAREN) {
    sp__mlir_args args = {0};
    int rc = sp__mlir_parse_arg_list(p, &args);
    if (rc) return rc;
    if ((rc = add_block_args(p, b, &args))) return rc;
  }
  return sp__mlir_expect(p, SP_TOK_COLON, "block label");
}

static int parse_block_ops(sp__mlir_parser *p, sp_block *b) {
  for (;;) {
    sp__mlir_tok_kind k = p->lx.tok.kind;
    if (k == SP_TOK_RBRACE || k == SP_TOK_CARET) return SP_OK;
    if (k == SP_TOK_EOF) return sp__mlir_error(p, NULL, "expected '}' to end region, got end of input");
    int rc = parse_operation(p, b);
    if (rc) return rc;
  }
}

static int parse_region_common(sp__mlir_parser *p, const sp__mlir_args *args, bool isolated,
                               sp_region **out) {
  int rc = sp__mlir_expect(p, SP_TOK_LBRACE, "region");
  if (rc) return rc;
  if ((rc = sp__mlir_enter(p))) return rc;
  sp_region *r = sp_arena_calloc(p->a, 1, sizeof *r);
  if (!r) return sp__mlir_oom(p);
  int mark = p->names->nundo;
  if (isolated && (rc = names_push_isolated(p))) return rc;
  bool empty = p->lx.tok.kind == SP_TOK_RBRACE;
  if (!empty || args) {
    sp_block *b = sp_region_add_block(p->a, r);
    if (!b) return sp__mlir_oom(p);
    if (args) {
      if ((rc = add_block_args(p, b, args))) return rc;
    } else if (p->lx.tok.kind == SP_TOK_CARET) {
      if ((rc = parse_block_header(p, b))) return rc;
    }
    if ((rc = parse_block_ops(p, b))) return rc;
    while (p->lx.tok.kind == SP_TOK_CARET) {
      if (!(b = sp_region_add_block(p->a, r))) return sp__mlir_oom(p);
      if ((rc = parse_block_header(p, b)) || (rc = parse_block_ops(p, b))) return rc;
    }
  }
  if ((rc = sp__mlir_expect(p, SP_TOK_RBRACE, "region"))) return rc;
  if (isolated) names_pop_isolated(p);
  else names_truncate(p, mark);
  sp__mlir_leave(p);
  *out = r;
  return SP_OK;
}

int sp__mlir_parse_region(sp__mlir_parser *p, const sp__mlir_args *args, sp_region **out) {
  return parse_region_common(p, args, false, out);
}

int sp__mlir_parse_isolated_region(sp__mlir_parser *p, const sp__mlir_args *args,
                                   sp_region **out) {
  return parse_region_common(p, args, true, out);
}

/* ------------------------------------------------------------------ building ops */

/* Moves shardings written as attributes onto the values they describe (see ir.h). */
static int absorb_shardings(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op *op) {
  int n = 0;
  if (sp_op_absorb_result_shardings(op, &n))
    return sp__mlir_error(p, &h->name_tok, "'%s' op result shardings don't match number of "
                          "values: %d shardings vs %d values", h->name, n, op->nresults);
  return SP_OK;
}

int sp__mlir_build_op(sp__mlir_parser *p, const sp__mlir_op_header *h, int noperands,
                      sp_value *const *operands, int nresults, sp_type *const *result_types,
                      int nregions, sp_region *const *regions, const sp_attrs *attrs,
                      sp_op **out) {
  if (++p->nops > SP_MAX_OPS)
    return sp__mlir_error_code(p, SP_ELIMIT, &h->name_tok, "more than SP_MAX_OPS (%d) ops",
                               SP_MAX_OPS);
  sp_op *op = sp_op_create(p->a, h->name, noperands, operands, nresults, result_types, nregions);
  if (!op) return sp__mlir_oom(p);
  op->kind = h->kind;
  op->loc.line = p->first_line + h->name_tok.line - 1;
  op->loc.col = h->name_tok.col;
  for (int i = 0; i < nresults; i++) op->results[i].loc = op->loc;
  for (int i = 0; i < nregions; i++) {
    sp_region *dst = &op->regions[i];
    *dst = *regions[i];
    dst->parent = op;
    for (int b = 0; b < dst->nblocks; b++) dst->blocks[b]->parent = dst;
  }
  if (attrs) op->attrs = *attrs;
  int rc = absorb_shardings(p, h, op);
  if (rc) return rc;
  *out = op;
  return SP_OK;
}

int sp__mlir_finish_op(sp__mlir_parser *p, const sp__mlir_op_header *h,
                       const sp__mlir_values *vals, int nregions, sp_region *const *regions,
                       sp_attrs *attrs, sp_op **out) {
  sp__mlir_types ins = {0}, outs = {0};
  int rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, attrs)) ||
      (rc = sp__mlir_expect(p, SP_TOK_COLON, h->name)) ||
      (rc = sp__mlir_parse_function_type(p, &ins, &outs)))
    return rc;
  if (ins.n != vals->n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d", h->name,
                          vals->n, ins.n);
  return sp__mlir_build_op(p, h, vals->n, vals->v, outs.n, outs.v, nregions, regions, attrs, out);
}

static int check_operand_types(sp__mlir_parser *p, const sp__mlir_op_header *h,
                               const sp__mlir_values *vals, const sp__mlir_types *types) {
  if (vals->n != types->n)
    return sp__mlir_error(p, &h->name_tok, "'%s' has %d operands but its type lists %d",
                          h->name, vals->n, types->n);
  for (int i = 0; i < vals->n; i++) {
    if (!sp_type_equal(vals->v[i]->type, types->v[i])) {
      sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
      sp_type_print(&a, vals->v[i]->type);
      sp_type_print(&b, types->v[i]);
      sp__mlir_error(p, &h->name_tok,
                     "type of operand #%d of '%s' is %s but the op's type says %s", i, h->name,
                     sp_strbuf_str(&a), sp_strbuf_str(&b));
      sp_strbuf_free(&a);
      sp_strbuf_free(&b);
      return SP_EINVAL;
    }
  }
  return SP_OK;
}

int sp__mlir_parse_generic_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_region *regions[64];
  int nregions = 0;
  sp_attrs attrs = {0};
  int rc = sp__mlir_expect(p, SP_TOK_LPAREN, "generic operation");
  if (rc) return rc;
  if ((rc = sp__mlir_parse_operand_list(p, &vals))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "operand list"))) return rc;
  if (p->lx.tok.kind == SP_TOK_LSQUARE)
    return sp__mlir_error(p, NULL, "successor blocks are not supported");
  if (p->lx.tok.kind == SP_TOK_LESS) {
    sp__mlir_next(p);
    if (p->lx.tok.kind != SP_TOK_LBRACE)
      return sp__mlir_expect(p, SP_TOK_LBRACE, "properties");
    if ((rc = sp__mlir_parse_attr_dict_body(p, h->kind, &attrs))) return rc;
    if ((rc = sp__mlir_expect(p, SP_TOK_GREATER, "properties"))) return rc;
  }
  if (sp__mlir_accept(p, SP_TOK_LPAREN)) {
    for (;;) {
      if (nregions == (int)(sizeof regions / sizeof regions[0]))
        return sp__mlir_error_code(p, SP_ELIMIT, NULL, "too many regions");
      if ((rc = sp__mlir_parse_region(p, NULL, &regions[nregions]))) return rc;
      nregions++;
      if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    }
    if ((rc = sp__mlir_expect(p, SP_TOK_RPAREN, "region list"))) return rc;
  }
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if ((rc = sp__mlir_expect(p, SP_TOK_COLON, "generic operation"))) return rc;
  if ((rc = sp__mlir_parse_function_type(p, &ins, &outs))) return rc;
  if ((rc = check_operand_types(p, h, &vals, &ins))) return rc;
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, nregions, regions, &attrs, out);
}

int sp__mlir_parse_fallback_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out) {
  sp__mlir_values vals = {0};
  sp__mlir_types ins = {0}, outs = {0};
  sp_attrs attrs = {0};
  int rc = sp__mlir_parse_operand_list(p, &vals);
  if (rc) return rc;
  if ((rc = sp__mlir_parse_attr_dict(p, h->kind, &attrs))) return rc;
  if (p->lx.tok.kind != SP_TOK_COLON) {
    if (check_token(p)) return SP_EINVAL;
    return sp__mlir_error(p, &h->name_tok,
                          "custom syntax of '%s' is not supported; write it in the generic form",
                          h->name);
  }
  sp__mlir_next(p);
  if ((rc = sp__mlir_parse_same_or_function_type(p, vals.n, &ins, &outs))) return rc;
  if ((rc = check_operand_types(p, h, &vals, &ins))) return rc;
  return sp__mlir_build_op(p, h, vals.n, vals.v, outs.n, outs.v, 0, NULL, &attrs, out);
}

/* ------------------------------------------------------------------ operations */

typedef struct bound_name {
  sp__mlir_token tok;
  int count;
} bound_name;

/* A generic op name is `dialect.op` made of identifier characters. */
bool sp__mlir_valid_op_name(const char *s, size_t n) {
  if (n == 0 || n > SP_MAX_IDENT || !memchr(s, '.', n) || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++)
    if (!sp__mlir_is_id_char((unsigned char)s[i])) return false;
  return true;
}

/* Full op name for a bare custom-syntax name: `return` inside a func is func.return. */
static const char *resolve_op_name(sp__mlir_parser *p, const sp__mlir_token *t) {
  static const struct { const char *bare, *full; } defaults[] = {
      {"module", "builtin.module"}, {"return", "func.return"}, {"call", "func.call"},
      {"func", "func.func"}};
  if (!memchr(t->p, '.', t->n)) {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
      if (sp__mlir_tok_is(t, defaults[i].bare)) return defaults[i].full;
    return NULL;
  }
  return sp__mlir_valid_op_name(t->p, t->n) ? sp__mlir_intern(p, t->p, t->n) : NULL;
}

static int parse_bound_names(sp__mlir_parser *p, bound_name **names, int *n, int *total) {
  int cap = 0;
  *n = *total = 0;
  *names = NULL;
  for (;;) {
    bound_name bn;
    bn.tok = p->lx.tok;
    bn.count = 1;
    sp__mlir_next(p);
    if (sp__mlir_accept(p, SP_TOK_COLON)) {
      int64_t c;
      int rc = sp__mlir_parse_int(p, &c, "result group");
      if (rc) return rc;
      if (c < 1 || c > SP_MAX_OPERANDS)
        return sp__mlir_error(p, &bn.tok, "invalid result count %lld", (long long)c);
      bn.count = (int)c;
    }
    if (*n == cap) {
      bound_name *nv = grow(p, *names, &cap, sizeof *nv);
      if (!nv) return sp__mlir_oom(p);
      *names = nv;
    }
    (*names)[(*n)++] = bn;
    *total += bn.count;
    if (*total > SP_MAX_OPERANDS)
      return sp__mlir_error_code(p, SP_ELIMIT, &bn.tok, "more than SP_MAX_OPERANDS results");
    if (!sp__mlir_accept(p, SP_TOK_COMMA)) break;
    if (p->lx.tok.kind != SP_TOK_PERCENT) {
      if (check_token(p)) return SP_EINVAL;
      return sp__mlir_error(p, NULL, "expected SSA value name in result list");
    }
  }
  return sp__mlir_expect(p, SP_TOK_EQUAL, "operation result list");
}

static int parse_operation(sp__mlir_parser *p, sp_block *b) {
  bound_name *names = NULL;
  int nnames = 0, total = 0, rc;
  if (p->lx.tok.kind == SP_TOK_PERCENT &&
      (rc = parse_bound_names(p, &names, &nnames, &total)))
    return rc;
  sp__mlir_op_header h;
  memset(&h, 0, sizeof h);
  h.name_tok = p->lx.tok;
  h.nbound = total;
  sp_op *op = NULL;
  if (p->lx.tok.kind == SP_TOK_STRING) {
    size_t len;
    const char *name;
    if ((rc = sp__mlir_parse_string(p, &name, &len, "operation name"))) return rc;
    if (!sp__mlir_valid_op_name(name, len))
      return sp__mlir_error(p, &h.name_tok, "invalid operation name (expected dialect.op)");
    const char *interned = sp__mlir_intern(p, name, len);
    if (!interned) return sp__mlir_oom(p);
    h.kind = kind_of(p, interned);
    h.name = h.kind ? sp_op_kind_name(h.kind) : interned;
    if (h.kind == SP_OP_FUNC || h.kind == SP_OP_MODULE || h.kind == SP_OP_SDY_MESH)
      return sp__mlir_error(p, &h.name_tok, "the generic form of '%s' is not supported", h.name);
    rc = sp__mlir_parse_generic_op(p, &h, &op);
  } else if (p->lx.tok.kind == SP_TOK_BARE) {
    const char *name = resolve_op_name(p, &p->lx.tok);
    if (!name)
      return sp__mlir_error(p, NULL, "unknown operation '%.*s'", (int)p->lx.tok.n, p->lx.tok.p);
    sp__mlir_next(p);
    h.kind = kind_of(p, name);
    h.name = h.kind ? sp_op_kind_name(h.kind) : name;
    const sp__mlir_format *f = sp__mlir_format_for(h.kind);
    rc = f && f->parse ? f->parse(p, &h, &op) : sp__mlir_parse_fallback_op(p, &h, &op);
  } else {
    if (check_token(p)) return SP_EINVAL;
    if (p->lx.tok.kind == SP_TOK_EOF) return sp__mlir_error(p, NULL, "expected operation, got end of input");
    char buf[64];
    return sp__mlir_error(p, NULL, "expected operation, got %s",
                          sp__mlir_tok_describe(&p->lx.tok, buf, sizeof buf));
  }
  if (rc) return rc;
  if ((rc = sp__mlir_skip_loc(p))) return rc;
  if (total && total != op->nresults)
    return sp__mlir_error(p, &h.name_tok,
                          "operation defines %d result%s but %d %s bound", op->nresults,
                          op->nresults == 1 ? "" : "s", total, total == 1 ? "is" : "are");
  int k = 0;
  for (int i = 0; i < nnames; i++) {
    if ((rc = names_define(p, &names[i].tok, &op->results[k], names[i].count))) return rc;
    k += names[i].count;
  }
  sp_block_append(b, op);
  return SP_OK;
}

/* ------------------------------------------------------------------ aliases and the module */

/* `#name = attr` or `!name = type` at the top level. Locations aliases are skipped; others are
 * remembered by position and re-read where they are used. */
static int parse_alias_def(sp__mlir_parser *p) {
  sp__mlir_token name = p->lx.tok;
  sp__mlir_next(p);
  int rc = sp__mlir_expect(p, SP_TOK_EQUAL, "alias definition");
  if (rc) return rc;
  sp__mlir_tables *al = p->tables;
  if (name.kind == SP_TOK_HASH && p->lx.tok.kind == SP_TOK_BARE &&
      sp__mlir_tok_is(&p->lx.tok, "loc"))
    return sp__mlir_skip_loc(p);
  if (al->n == al->cap) {
    void *nv = grow(p, al->v, &al->cap, sizeof *al->v);
    if (!nv) return sp__mlir_oom(p);
    al->v = nv;
  }
  al->v[al->n].name = name.p;
  al->v[al->n].len = name.n;
  al->v[al->n].value = p->lx.tok.p;
  al->v[al->n].is_type = name.kind == SP_TOK_BANG;
  al->n++;
  /* Parse once now to validate and to move past it. */
  if (name.kind == SP_TOK_BANG) {
    sp_type *t;
    return sp__mlir_parse_type(p, &t);
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  rc = sp__mlir_parse_attr_text(p, &sb, false, NULL);
  sp_strbuf_free(&sb);
  return rc;
}

const char *sp__mlir_alias_lookup(sp__mlir_parser *p, const sp__mlir_token *t, bool is_type) {
  sp__mlir_tables *al = p->tables;
  for (int i = al->n - 1; i >= 0; i--)
    if (al->v[i].is_type == is_type && al->v[i].len == t->n &&
        memcmp(al->v[i].name, t->p, t->n) == 0)
      return al->v[i].value;
  return NULL;
}

static int parse_top_level(sp__mlir_parser *p) {
  sp_block *body = sp_module_body(p->m);
  int rc = names_push_isolated(p);
  if (rc) return rc;
  while (p->lx.tok.kind != SP_TOK_EOF) {
    if ((rc = check_token(p))) return rc;
    if (p->lx.tok.kind == SP_TOK_HASH || p->lx.tok.kind == SP_TOK_BANG) {
      if ((rc = parse_alias_def(p))) return rc;
      continue;
    }
    if ((rc = parse_operation(p, body))) return rc;
  }
  names_pop_isolated(p);
  /* A file holding exactly one `module` is that module; anything else is wrapped. */
  if (body->first && body->first == body->last && body->first->kind == SP_OP_MODULE) {
    sp_op *mod = body->first;
    sp_op_unlink(mod);
    p->m->op = mod;
  }
  return SP_OK;
}

int sp_mlir_parse(const char *text, size_t len, const char *filename, int first_line,
                  sp_module **out, sp_err *err) {
  *out = NULL;
  sp_err_clear(err);
  if (!filename) filename = "<input>";
  if (first_line < 1) first_line = 1;
  if (len > (size_t)SP_MAX_INPUT_BYTES)
    return sp_err_set(err, SP_ELIMIT, "%s: input of %zu bytes exceeds SP_MAX_INPUT_BYTES",
                      filename, len);
  /* Control characters other than tab, newline and carriage return are not MLIR (its lexer
   * stops at them); a NUL would also end the C strings verbatim attributes are kept in. */
  const char *bad = NULL;
  for (const char *q = text; q < text + len && !bad; q++)
    if ((unsigned char)*q < 0x20 && *q != '\t' && *q != '\n' && *q != '\r') bad = q;
  if (bad) {
    int line = first_line;
    const char *bol = text;
    for (const char *q = text; q < bad; q++)
      if (*q == '\n') line++, bol = q + 1;
    return sp_err_set(err, SP_EINVAL, "%s:%d:%d: unexpected character", filename, line,
                      (int)(bad - bol) + 1);
  }
  sp__mlir_parser p;
  memset(&p, 0, sizeof p);
  sp__mlir_names names;
  sp__mlir_tables tables;
  memset(&names, 0, sizeof names);
  memset(&tables, 0, sizeof tables);
  p.names = &names;
  p.tables = &tables;
  p.err = err;
  p.filename = filename;
  p.first_line = first_line;
  p.m = sp_module_new(filename);
  p.tmp = sp_arena_new(0);
  if (!p.m || !p.tmp) {
    sp_module_free(p.m);
    sp_arena_free(p.tmp);
    return sp_err_set(err, SP_ENOMEM, "%s: out of memory", filename);
  }
  p.a = p.m->arena;
  sp__mlir_lex_init(&p.lx, text, len);
  int rc = parse_top_level(&p);
  sp_arena_free(p.tmp);
  if (rc) {
    sp_module_free(p.m);
    return rc;
  }
  *out = p.m;
  return SP_OK;
}
