/*
 * reader_names.c - the name tables of the MLIR reader: interned identifiers, the op kind of an
 * interned op name, `#alias` / `!alias` definitions, SSA value names and their scopes, and the
 * scratch vectors the reader grows.
 *
 * SSA names follow MLIR's scoping: an isolated-from-above op (module, func.func) starts a new
 * name table; a region of any other op shares its parent's table, and the names it defines are
 * removed again when the region ends (sibling regions may reuse them, nested ones may not
 * shadow). Each table is a chained hash map, so a lookup costs O(1) whatever the module size.
 * Forward references are not supported: StableHLO and sdy bodies are single-block regions in
 * which every use follows its definition.
 *
 * Memory: the tables, vectors and name entries live in p->tmp (freed when parsing ends);
 * interned strings and value name hints in the module arena. Alias values point into the text.
 */
#include "mlir/reader_int.h"

#include <string.h>

#include "ir/sp_limits.h"

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
sp_op_kind sp__mlir_op_kind_of(sp__mlir_parser *p, const char *interned) {
  size_t slot = ((uintptr_t)interned >> 4) & 63;
  if (p->tables->kinds[slot].name == interned) return p->tables->kinds[slot].kind;
  sp_op_kind k = sp_op_kind_from_name(interned);
  p->tables->kinds[slot].name = interned;
  p->tables->kinds[slot].kind = k;
  return k;
}

/* ------------------------------------------------------------------ vectors */

int sp__mlir_values_push(sp__mlir_parser *p, sp__mlir_values *vec, sp_value *v) {
  if (vec->n >= SP_MAX_OPERANDS)
    return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS values");
  if (sp_arena_grow(p->tmp, (void **)&vec->v, &vec->cap, vec->n, sizeof *vec->v))
    return sp__mlir_oom(p);
  vec->v[vec->n++] = v;
  return SP_OK;
}

int sp__mlir_types_push(sp__mlir_parser *p, sp__mlir_types *vec, sp_type *t) {
  if (vec->n >= SP_MAX_OPERANDS)
    return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS types");
  if (sp_arena_grow(p->tmp, (void **)&vec->v, &vec->cap, vec->n, sizeof *vec->v))
    return sp__mlir_oom(p);
  vec->v[vec->n++] = t;
  return SP_OK;
}

int sp__mlir_args_push(sp__mlir_parser *p, sp__mlir_args *vec, const sp__mlir_arg *arg) {
  if (vec->n >= SP_MAX_OPERANDS)
    return sp__mlir_error_code(p, SP_ELIMIT, NULL, "more than SP_MAX_OPERANDS arguments");
  if (sp_arena_grow(p->tmp, (void **)&vec->v, &vec->cap, vec->n, sizeof *vec->v))
    return sp__mlir_oom(p);
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

int sp__mlir_names_push_isolated(sp__mlir_parser *p) {
  name_map *m = sp_arena_calloc(p->tmp, 1, sizeof *m);
  if (!m) return sp__mlir_oom(p);
  m->parent = p->names->top;
  m->undo_base = p->names->nundo;
  p->names->top = m;
  return SP_OK;
}

void sp__mlir_names_pop_isolated(sp__mlir_parser *p) {
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
void sp__mlir_names_truncate(sp__mlir_parser *p, int mark) {
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
int sp__mlir_names_define(sp__mlir_parser *p, const sp__mlir_token *t, sp_value *first, int count) {
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
  if (sp_arena_grow(p->tmp, (void **)&ns->undo, &ns->capundo, ns->nundo, sizeof *ns->undo))
    return sp__mlir_oom(p);
  ns->undo[ns->nundo++] = e;
  const char *hint = sp_arena_strndup(p->a, s, n);
  if (!hint) return sp__mlir_oom(p);
  for (int i = 0; i < count; i++) first[i].name_hint = hint;
  return SP_OK;
}

int sp__mlir_parse_operand(sp__mlir_parser *p, sp_value **out) {
  sp__mlir_token t = p->lx.tok;
  if (t.kind != SP_TOK_PERCENT) {
    if (sp__mlir_check_token(p)) return SP_EINVAL;
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

/* ------------------------------------------------------------------ aliases */
/* `#name = attr` or `!name = type` at the top level. Locations aliases are skipped; others are
 * remembered by position and re-read where they are used. */
int sp__mlir_parse_alias_def(sp__mlir_parser *p) {
  sp__mlir_token name = p->lx.tok;
  sp__mlir_next(p);
  int rc = sp__mlir_expect(p, SP_TOK_EQUAL, "alias definition");
  if (rc) return rc;
  sp__mlir_tables *al = p->tables;
  if (name.kind == SP_TOK_HASH && p->lx.tok.kind == SP_TOK_BARE &&
      sp__mlir_tok_is(&p->lx.tok, "loc"))
    return sp__mlir_skip_loc(p);
  if (sp_arena_grow(p->tmp, (void **)&al->v, &al->cap, al->n, sizeof *al->v))
    return sp__mlir_oom(p);
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

int sp__mlir_names_mark(const sp__mlir_parser *p) { return p->names->nundo; }

int sp__mlir_tables_new(sp__mlir_parser *p) {
  p->names = sp_arena_calloc(p->tmp, 1, sizeof *p->names);
  p->tables = sp_arena_calloc(p->tmp, 1, sizeof *p->tables);
  return p->names && p->tables ? SP_OK : SP_ENOMEM;
}
