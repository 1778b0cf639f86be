/*
 * rule_cache.c - interned session rules and the signature index (see rule_cache.h).
 *
 * Both tables are open-addressing hash tables of pointers, at most half full, doubled when
 * they would not be. A signature entry keeps the first op seen with that signature as its
 * representative: another op matches when kind, operand and result types, attributes and the
 * conservative flag are all equal to the representative's.
 */
#include "propagation/rule_cache.h"

#include <stdlib.h>
#include <string.h>

#include "ir/hash_mix.h"

typedef struct sig_entry {
  uint64_t hash;
  const sp_op *rep;      /* NULL = empty slot */
  bool conservative;
  sp_rule *rule;
} sig_entry;

struct sp_rule_cache {
  sp_rule **rules;       /* interned rules */
  size_t rule_cap, nrules;
  sig_entry *sigs;
  size_t sig_cap, nsigs;
};

sp_rule_cache *sp_rule_cache_new(void) { return calloc(1, sizeof(sp_rule_cache)); }

void sp_rule_cache_free(sp_rule_cache *c) {
  if (!c) return;
  free(c->rules);
  free(c->sigs);
  free(c);
}

#define MIX(h, x) ((h) = sp_hash_mix((h), (uint64_t)(x)))

/* ------------------------------------------------------------------ interning */

static const sp_rule_tensor *tensor_of(const sp_rule *r, int t) {
  return t < r->noperands ? &r->operands[t] : &r->results[t - r->noperands];
}

/* A copy of `r` in one allocation from `a`. */
static sp_rule *compact_rule(sp_arena *a, const sp_rule *r) {
  int ntensors = r->noperands + r->nresults, ndims = 0, nidx = 0;
  for (int t = 0; t < ntensors; t++) {
    const sp_rule_tensor *rt = tensor_of(r, t);
    ndims += rt->rank;
    for (int k = 0; k < rt->rank; k++) nidx += rt->dims[k].nfactors;
  }
  size_t bytes = sizeof(sp_rule) + (size_t)r->nfactors * sizeof(sp_rule_factor) +
                 (size_t)ntensors * sizeof(sp_rule_tensor) + (size_t)ndims * sizeof(sp_rule_dim) +
                 (size_t)nidx * sizeof(int);
  unsigned char *p = sp_arena_alloc(a, bytes);
  if (!p) return NULL;
  sp_rule *c = (sp_rule *)p;
  p += sizeof *c;
  *c = *r;
  c->factors = (sp_rule_factor *)p;
  p += (size_t)r->nfactors * sizeof(sp_rule_factor);
  if (r->nfactors) memcpy(c->factors, r->factors, (size_t)r->nfactors * sizeof(sp_rule_factor));
  sp_rule_tensor *tensors = (sp_rule_tensor *)p;
  p += (size_t)ntensors * sizeof(sp_rule_tensor);
  sp_rule_dim *dims = (sp_rule_dim *)p;
  p += (size_t)ndims * sizeof(sp_rule_dim);
  int *idx = (int *)p;
  for (int t = 0; t < ntensors; t++) {
    const sp_rule_tensor *rt = tensor_of(r, t);
    tensors[t] = (sp_rule_tensor){rt->rank, dims};
    for (int k = 0; k < rt->rank; k++) {
      int nf = rt->dims[k].nfactors;
      dims[k] = (sp_rule_dim){nf, idx};
      if (nf) memcpy(idx, rt->dims[k].factors, (size_t)nf * sizeof(int));
      idx += nf;
    }
    dims += rt->rank;
  }
  c->operands = tensors;
  c->results = tensors + r->noperands;
  return c;
}

static uint64_t hash_rule(const sp_rule *r) {
  uint64_t h = SP_HASH_SEED;
  MIX(h, r->nfactors);
  MIX(h, r->noperands);
  MIX(h, r->nresults);
  MIX(h, r->custom);
  for (int f = 0; f < r->nfactors; f++) {
    MIX(h, r->factors[f].size);
    MIX(h, r->factors[f].kind * 2 + r->factors[f].blocked);
  }
  for (int t = 0; t < r->noperands + r->nresults; t++) {
    const sp_rule_tensor *rt = tensor_of(r, t);
    MIX(h, rt->rank);
    for (int k = 0; k < rt->rank; k++) {
      MIX(h, rt->dims[k].nfactors);
      for (int i = 0; i < rt->dims[k].nfactors; i++) MIX(h, rt->dims[k].factors[i]);
    }
  }
  return h;
}

static bool grow_rules(sp_rule_cache *c) {
  size_t cap = c->rule_cap ? 2 * c->rule_cap : 256;
  sp_rule **v = calloc(cap, sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < c->rule_cap; i++) {
    if (!c->rules[i]) continue;
    size_t h = (size_t)hash_rule(c->rules[i]) & (cap - 1);
    while (v[h]) h = (h + 1) & (cap - 1);
    v[h] = c->rules[i];
  }
  free(c->rules);
  c->rules = v;
  c->rule_cap = cap;
  return true;
}

sp_rule *sp_rule_cache_intern(sp_rule_cache *c, sp_arena *a, const sp_rule *r) {
  if (2 * (c->nrules + 1) > c->rule_cap && !grow_rules(c)) return NULL;
  size_t mask = c->rule_cap - 1, h = (size_t)hash_rule(r) & mask;
  for (; c->rules[h]; h = (h + 1) & mask)
    if (sp_rule_equal(c->rules[h], r)) return c->rules[h];
  sp_rule *copy = compact_rule(a, r);
  if (!copy) return NULL;
  c->rules[h] = copy;
  c->nrules++;
  return copy;
}

/* ------------------------------------------------------------------ signatures */

bool sp_rule_cache_keyable(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_UNKNOWN:
    case SP_OP_CUSTOM_CALL:
    case SP_OP_CONCATENATE:
    case SP_OP_DYNAMIC_UPDATE_SLICE:
      return false;
    default:
      break;
  }
  for (int i = 0; i < op->attrs.n; i++) {
    switch (op->attrs.v[i].kind) {
      case SP_ATTR_UNIT: case SP_ATTR_BOOL: case SP_ATTR_INT: case SP_ATTR_INTS:
      case SP_ATTR_STR: case SP_ATTR_SYMBOL: case SP_ATTR_ENUM: case SP_ATTR_TEXT:
        break;
      default:
        return false;
    }
  }
  for (int i = 0; i < op->noperands; i++)
    if (!op->operands[i].value) return false;
  return true;
}

/* NULL for an operand that is unset: a representative op that propagation erased as dead
 * (its memory stays valid, its operand uses are dropped) then matches no live op. Operands
 * and results are walked in two loops (not one over both with a test of which it is): this
 * runs for every visit of an op with a rule. */
static inline const sp_type *operand_type(const sp_op *op, int i) {
  const sp_value *v = op->operands[i].value;
  return v ? v->type : NULL;
}

static inline uint64_t mix_type(uint64_t h, const sp_type *t) {
  if (!t) return MIX(h, -2);
  MIX(h, t->kind);
  MIX(h, t->rank);
  for (int d = 0; t->kind == SP_TYPE_TENSOR && d < t->rank; d++) MIX(h, t->dims[d]);
  return h;
}

static uint64_t hash_signature(const sp_op *op, bool conservative) {
  uint64_t h = SP_HASH_SEED;
  MIX(h, op->kind);
  MIX(h, conservative);
  MIX(h, op->noperands);
  MIX(h, op->nresults);
  for (int i = 0; i < op->noperands; i++) h = mix_type(h, operand_type(op, i));
  for (int i = 0; i < op->nresults; i++) h = mix_type(h, op->results[i].type);
  for (int i = 0; i < op->attrs.n; i++) {
    const sp_attr *at = &op->attrs.v[i];
    if (at->kind == SP_ATTR_RULE) continue;
    MIX(h, at->kind);
    if (at->kind == SP_ATTR_INT) MIX(h, at->u.i);
    if (at->kind == SP_ATTR_BOOL) MIX(h, at->u.b);
    if (at->kind == SP_ATTR_INTS)
      for (int k = 0; k < at->u.ints.n; k++) MIX(h, at->u.ints.v[k]);
  }
  return h;
}

static bool same_str(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* Types as the registry reads them: kind, shape and element type. */
static inline bool same_type(const sp_type *a, const sp_type *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (a->kind != SP_TYPE_TENSOR) return sp_type_equal(a, b);
  if (a->rank != b->rank || !same_str(a->elem, b->elem) || !same_str(a->encoding, b->encoding))
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

static bool same_attr(const sp_attr *a, const sp_attr *b) {
  if (a->kind != b->kind || !same_str(a->name, b->name)) return false;
  switch (a->kind) {
    case SP_ATTR_UNIT:
      return true;
    case SP_ATTR_BOOL:
      return a->u.b == b->u.b;
    case SP_ATTR_INT:
      return a->u.i == b->u.i;
    case SP_ATTR_INTS:
      return a->u.ints.n == b->u.ints.n &&
             (a->u.ints.n == 0 ||
              memcmp(a->u.ints.v, b->u.ints.v, (size_t)a->u.ints.n * sizeof *a->u.ints.v) == 0);
    default: /* the string kinds (keyable ops have no others) */
      return same_str(a->u.s, b->u.s);
  }
}

/* The next attribute of `d` from index *i on that is not the rule a session attached (the
 * representative op gets one after it was remembered), or NULL. */
static const sp_attr *next_attr(const sp_attrs *d, int *i) {
  while (*i < d->n && d->v[*i].kind == SP_ATTR_RULE) (*i)++;
  return *i < d->n ? &d->v[(*i)++] : NULL;
}

static bool same_signature(const sp_op *a, const sp_op *b) {
  if (a->kind != b->kind || a->noperands != b->noperands || a->nresults != b->nresults ||
      !same_str(a->name, b->name))
    return false;
  for (int i = 0; i < a->noperands; i++)
    if (!same_type(operand_type(a, i), operand_type(b, i))) return false;
  for (int i = 0; i < a->nresults; i++)
    if (!same_type(a->results[i].type, b->results[i].type)) return false;
  int i = 0, j = 0;
  for (;;) {
    const sp_attr *x = next_attr(&a->attrs, &i), *y = next_attr(&b->attrs, &j);
    if (!x || !y) return x == y;
    if (!same_attr(x, y)) return false;
  }
}

sp_rule *sp_rule_cache_find(const sp_rule_cache *c, const sp_op *op, bool conservative) {
  if (!c->sig_cap) return NULL;
  uint64_t hash = hash_signature(op, conservative);
  size_t mask = c->sig_cap - 1;
  for (size_t h = (size_t)hash & mask; c->sigs[h].rep; h = (h + 1) & mask) {
    const sig_entry *e = &c->sigs[h];
    if (e->hash == hash && e->conservative == conservative && same_signature(e->rep, op))
      return e->rule;
  }
  return NULL;
}

static bool grow_sigs(sp_rule_cache *c) {
  size_t cap = c->sig_cap ? 2 * c->sig_cap : 256;
  sig_entry *v = calloc(cap, sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < c->sig_cap; i++) {
    if (!c->sigs[i].rep) continue;
    size_t h = (size_t)c->sigs[i].hash & (cap - 1);
    while (v[h].rep) h = (h + 1) & (cap - 1);
    v[h] = c->sigs[i];
  }
  free(c->sigs);
  c->sigs = v;
  c->sig_cap = cap;
  return true;
}

void sp_rule_cache_remember(sp_rule_cache *c, const sp_op *op, bool conservative, sp_rule *r) {
  if (2 * (c->nsigs + 1) > c->sig_cap && !grow_sigs(c)) return;
  uint64_t hash = hash_signature(op, conservative);
  size_t mask = c->sig_cap - 1, h = (size_t)hash & mask;
  while (c->sigs[h].rep) h = (h + 1) & mask;
  c->sigs[h] = (sig_entry){hash, op, conservative, r};
  c->nsigs++;
}
