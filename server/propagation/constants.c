/*
 * constants.c - constant-or-scalar splitter and merger (see constants.h).
 *
 * The sets of constant expressions and scalar expansions are keyed by the op's (only) result
 * in a value map: every op that can be in them has exactly one result.
 */
#include "propagation/constants.h"

#include <stdlib.h>
#include <string.h>

#include "ir/clone.h"
#include "ir/grow.h"
#include "ir/ptr_map.h"
#include "rules/registry.h"

enum { KIND_CONSTANT = 1, KIND_SCALAR_EXPANSION = 2 };

typedef struct splitter {
  sp_module *m;
  sp_ptr_map kinds;     /* first result -> KIND_* */
  sp_op **ops;          /* constant expressions and scalar expansions, pre-order */
  int nops, cap;
  int rc;
} splitter;

static int kind_of(const splitter *s, const sp_op *op) {
  if (!op || op->nresults != 1) return 0;
  return (int)sp_ptr_map_get(&s->kinds, &op->results[0], 0);
}

static bool is_rank0(const sp_value *v) {
  return v && v->type && v->type->kind == SP_TYPE_TENSOR && v->type->rank == 0;
}

static bool is_constant_expression(const splitter *s, const sp_op *op) {
  if (op->nresults != 1 || op->nregions) return false;
  if (op->kind == SP_OP_SDY_CONSTANT || op->kind == SP_OP_IOTA) return true;
  bool shape_op = op->kind == SP_OP_BROADCAST_IN_DIM || op->kind == SP_OP_RESHAPE ||
                  op->kind == SP_OP_SLICE || sp_rules_is_elementwise(op);
  if (!shape_op || op->noperands == 0) return false;
  for (int i = 0; i < op->noperands; i++) {
    const sp_value *v = op->operands[i].value;
    if (!v || kind_of(s, v->def) != KIND_CONSTANT) return false;
  }
  return true;
}

static bool is_scalar_expansion(const sp_op *op) {
  return op->kind == SP_OP_BROADCAST_IN_DIM && op->nresults == 1 && op->noperands == 1 &&
         is_rank0(op->operands[0].value);
}

static bool classify(sp_op *op, void *ctx) {
  splitter *s = ctx;
  if (op->kind == SP_OP_CONSTANT) { /* stablehlo.constant -> sdy.constant */
    op->kind = SP_OP_SDY_CONSTANT;
    op->name = sp_op_kind_name(SP_OP_SDY_CONSTANT);
  }
  int kind = is_constant_expression(s, op) ? KIND_CONSTANT
             : is_scalar_expansion(op)     ? KIND_SCALAR_EXPANSION
                                           : 0;
  if (!kind) return true;
  if (sp_grow((void **)&s->ops, &s->cap, s->nops, sizeof *s->ops)) goto oom;
  s->ops[s->nops++] = op;
  if (sp_ptr_map_put(&s->kinds, &op->results[0], kind)) goto oom;
  return true;
oom:
  s->rc = SP_ENOMEM;
  return false;
}

/* Clones the expression rooted at `op` right before `root`; operands that are constant
 * expressions are cloned first (once per root copy, through `map`), except scalars: a copy
 * uses the one scalar sub-expression there is (sp_op_clone keeps unmapped operands). */
static sp_op *clone_expression(splitter *s, sp_op *op, sp_op *root, sp_value_map *map) {
  if (kind_of(s, op) == KIND_CONSTANT) {
    for (int i = 0; i < op->noperands; i++) {
      sp_value *v = op->operands[i].value;
      if (sp_value_map_get(map, v) || is_rank0(v)) continue;
      if (!clone_expression(s, v->def, root, map)) return NULL;
    }
  }
  sp_op *c = sp_op_clone(s->m->arena, op, map);
  if (c) sp_op_insert_before(root, c);
  return c;
}

static bool split_uses(sp_op *user, void *ctx) {
  splitter *s = ctx;
  if (kind_of(s, user) == KIND_CONSTANT) return true;
  for (int i = 0; i < user->noperands; i++) {
    sp_value *v = user->operands[i].value;
    sp_op *root = v ? v->def : NULL;
    /* Scalars are never cloned: nothing to shard, and Shardy shares them (JAX's splitter
     * keeps one `convert` of a scalar constant for all its uses). */
    if (!kind_of(s, root) || is_rank0(v)) continue;
    sp_value_map map;
    sp_value_map_init(&map);
    sp_op *c = clone_expression(s, root, root, &map);
    sp_value_map_free(&map);
    if (!c) {
      s->rc = SP_ENOMEM;
      return false;
    }
    sp_op_set_operand(user, i, &c->results[0]);
  }
  return true;
}

int sp_constants_split(sp_module *m, sp_err *err) {
  splitter s;
  memset(&s, 0, sizeof s);
  s.m = m;
  sp_ptr_map_init(&s.kinds);
  sp_op_walk(m->op, classify, &s);
  if (!s.rc) sp_op_walk(m->op, split_uses, &s);
  /* Users come after their operands in pre-order: erase backwards. */
  for (int i = s.nops - 1; !s.rc && i >= 0; i--)
    if (!sp_value_has_uses(&s.ops[i]->results[0])) sp_op_erase(s.ops[i]);
  free(s.ops);
  sp_ptr_map_free(&s.kinds);
  return s.rc ? sp_err_set(err, s.rc, "out of memory splitting constants") : SP_OK;
}

/* ------------------------------------------------------------------ merger */

static bool same_attrs(const sp_op *a, const sp_op *b) {
  if (a->attrs.n != b->attrs.n) return false;
  for (int i = 0; i < a->attrs.n; i++) {
    const sp_attr *x = &a->attrs.v[i];
    const sp_attr *y = sp_attrs_get(&b->attrs, x->name);
    if (!y || x->kind != y->kind) return false;
    switch (x->kind) {
      case SP_ATTR_STR:
      case SP_ATTR_SYMBOL:
      case SP_ATTR_ENUM:
      case SP_ATTR_TEXT:
        if (strcmp(x->u.s, y->u.s) != 0) return false;
        break;
      case SP_ATTR_INT:
        if (x->u.i != y->u.i) return false;
        break;
      case SP_ATTR_BOOL:
        if (x->u.b != y->u.b) return false;
        break;
      case SP_ATTR_UNIT:
        break;
      case SP_ATTR_INTS:
        if (x->u.ints.n != y->u.ints.n ||
            (x->u.ints.n && memcmp(x->u.ints.v, y->u.ints.v, (size_t)x->u.ints.n * sizeof *x->u.ints.v)))
          return false;
        break;
      default:
        if (memcmp(&x->u, &y->u, sizeof x->u) != 0) return false;
        break;
    }
  }
  return true;
}

static bool mergeable(const sp_op *op) {
  if (op->nresults != 1 || op->nregions) return false;
  return op->kind == SP_OP_SDY_CONSTANT || op->kind == SP_OP_CONSTANT || is_scalar_expansion(op);
}

static bool same_value(const sp_op *a, const sp_op *b) {
  if (a->kind != b->kind || !sp_type_equal(a->results[0].type, b->results[0].type) ||
      !sp_sharding_equal(a->results[0].sharding, b->results[0].sharding) || !same_attrs(a, b))
    return false;
  if (a->kind == SP_OP_BROADCAST_IN_DIM) return a->operands[0].value == b->operands[0].value;
  return true;
}

/* A hash of what same_value compares cheaply: kind, value text or operand, shape, mesh. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ULL;
  return h;
}

static uint64_t value_hash(const sp_op *op) {
  uint64_t h = fnv(0xcbf29ce484222325ULL, &op->kind, sizeof op->kind);
  const char *text = sp_op_get_str(op, "value");
  if (text) h = fnv(h, text, strlen(text));
  if (op->noperands) h = fnv(h, &op->operands[0].value, sizeof op->operands[0].value);
  const sp_type *t = op->results[0].type;
  if (t && t->kind == SP_TYPE_TENSOR) {
    h = fnv(h, &t->rank, sizeof t->rank);
    if (t->rank > 0) h = fnv(h, t->dims, (size_t)t->rank * sizeof *t->dims);
  }
  const sp_sharding *sh = op->results[0].sharding;
  if (sh && sh->mesh_name) h = fnv(h, sh->mesh_name, strlen(sh->mesh_name));
  return h;
}

typedef struct merge_table {
  size_t cap;            /* power of two */
  sp_op **ops;
  uint64_t *hashes;
} merge_table;

/* Merges `op` into an earlier equal op of the table, or adds it. False on out-of-memory. */
static bool merge_or_add(merge_table *t, sp_op *op, size_t *n) {
  if (2 * (*n + 1) > t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    sp_op **ops = calloc(cap, sizeof *ops);
    uint64_t *hashes = calloc(cap, sizeof *hashes);
    if (!ops || !hashes) {
      free(ops);
      free(hashes);
      return false;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->ops[i]) continue;
      size_t k = t->hashes[i] & (cap - 1);
      while (ops[k]) k = (k + 1) & (cap - 1);
      ops[k] = t->ops[i];
      hashes[k] = t->hashes[i];
    }
    free(t->ops);
    free(t->hashes);
    t->ops = ops;
    t->hashes = hashes;
    t->cap = cap;
  }
  uint64_t h = value_hash(op);
  size_t k = h & (t->cap - 1);
  for (; t->ops[k]; k = (k + 1) & (t->cap - 1)) {
    if (t->hashes[k] != h || !same_value(t->ops[k], op)) continue;
    sp_value_replace_all_uses(&op->results[0], &t->ops[k]->results[0]);
    sp_op_erase(op);
    return true;
  }
  t->ops[k] = op;
  t->hashes[k] = h;
  (*n)++;
  return true;
}

static bool merge_block(sp_block *b) {
  merge_table t = {0, NULL, NULL};
  size_t n = 0;
  bool ok = true;
  for (sp_op *op = b->first, *next; op && ok; op = next) {
    next = op->next;
    if (mergeable(op)) ok = merge_or_add(&t, op, &n);
  }
  free(t.ops);
  free(t.hashes);
  return ok;
}

static bool merge_blocks_of(sp_op *op, void *ctx) {
  bool *oom = ctx;
  for (int r = 0; r < op->nregions; r++)
    for (int i = 0; i < op->regions[r].nblocks; i++)
      if (!merge_block(op->regions[r].blocks[i])) {
        *oom = true;
        return false;
      }
  return true;
}

int sp_constants_merge(sp_module *m, sp_err *err) {
  bool oom = false;
  sp_op_walk(m->op, merge_blocks_of, &oom);
  return oom ? sp_err_set(err, SP_ENOMEM, "out of memory merging constants") : SP_OK;
}
