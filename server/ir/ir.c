/*
 * ir.c - ops, values, use lists, blocks, regions and modules (see ir.h).
 */
#include "ir/ir.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/op_attrs.h"

/* ------------------------------------------------------------------ op kinds */

static const char *const kind_names[SP_OP_KIND_COUNT] = {
    [SP_OP_UNKNOWN] = "",
#define SP_OP(e, n) [SP_OP_##e] = n,
#include "ir/op_kind.def"
#undef SP_OP
};

/* Name -> kind: an open-addressing table over kind_names, filled once under pthread_once and
 * read-only afterwards, so any number of threads may look up. sp_op_create looks up every op
 * it makes (the reader, the passes, clones): a linear scan of the ~160 names cost ~2,600
 * instructions per op, a quarter of parsing a module; a lookup here hashes the name once and
 * compares it with one name, rarely two. */
#define KIND_SLOTS 512 /* a power of two, over twice the kinds: probe runs stay short */
_Static_assert(2 * SP_OP_KIND_COUNT <= KIND_SLOTS, "KIND_SLOTS too small for op_kind.def");
static uint16_t kind_slots[KIND_SLOTS]; /* 0 (SP_OP_UNKNOWN) marks an empty slot */
static pthread_once_t kind_slots_once = PTHREAD_ONCE_INIT;

static uint32_t kind_hash(const char *s) { /* FNV-1a */
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* Kinds go in in enum order, so a name listed twice finds its first kind first, as the linear
 * scan this replaces did. */
static void build_kind_slots(void) {
  for (int k = 1; k < SP_OP_KIND_COUNT; k++) {
    uint32_t i = kind_hash(kind_names[k]) & (KIND_SLOTS - 1);
    while (kind_slots[i]) i = (i + 1) & (KIND_SLOTS - 1);
    kind_slots[i] = (uint16_t)k;
  }
}

sp_op_kind sp_op_kind_from_name(const char *name) {
  pthread_once(&kind_slots_once, build_kind_slots);
  const uint32_t mask = KIND_SLOTS - 1;
  for (uint32_t i = kind_hash(name) & mask; kind_slots[i]; i = (i + 1) & mask)
    if (strcmp(kind_names[kind_slots[i]], name) == 0) return (sp_op_kind)kind_slots[i];
  return SP_OP_UNKNOWN;
}

const char *sp_op_kind_name(sp_op_kind kind) {
  return (kind > 0 && kind < SP_OP_KIND_COUNT) ? kind_names[kind] : "";
}

/* ------------------------------------------------------------------ types */

sp_type *sp_type_tensor(sp_arena *a, int rank, const int64_t *dims, const char *elem) {
  sp_type *t = sp_arena_calloc(a, 1, sizeof *t);
  if (!t) return NULL;
  t->kind = SP_TYPE_TENSOR;
  t->rank = rank;
  t->elem = elem;
  if (rank > 0) {
    t->dims = sp_arena_alloc(a, (size_t)rank * sizeof *t->dims);
    if (!t->dims) return NULL;
    memcpy(t->dims, dims, (size_t)rank * sizeof *t->dims);
  }
  return t;
}

static bool str_eq(const char *x, const char *y) {
  if (x == y) return true; /* the reader interns element types: mostly the same pointer */
  if (!x || !y) return false;
  return strcmp(x, y) == 0;
}

bool sp_type_equal(const sp_type *x, const sp_type *y) {
  if (x == y) return true;
  if (!x || !y || x->kind != y->kind) return false;
  switch (x->kind) {
    case SP_TYPE_TENSOR:
      if (x->rank != y->rank || !str_eq(x->elem, y->elem) || !str_eq(x->encoding, y->encoding))
        return false;
      for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
      return true;
    case SP_TYPE_TUPLE:
      if (x->nelems != y->nelems) return false;
      for (int i = 0; i < x->nelems; i++)
        if (!sp_type_equal(x->elems[i], y->elems[i])) return false;
      return true;
    case SP_TYPE_TOKEN:
    case SP_TYPE_OTHER:
      return str_eq(x->text, y->text);
  }
  return false;
}

bool sp_type_is_static_tensor(const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR || t->rank < 0) return false;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] == SP_DYN_DIM) return false;
  return true;
}

int64_t sp_type_num_elements(const sp_type *t) {
  if (!sp_type_is_static_tensor(t)) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    if (__builtin_mul_overflow(n, t->dims[i], &n)) return -1;
  return n;
}

int sp_type_elem_bits(const sp_type *t) {
  if (!t || t->kind != SP_TYPE_TENSOR || !t->elem) return 0;
  const char *e = t->elem;
  if (strncmp(e, "complex<", 8) == 0) {
    sp_type inner = *t;
    inner.elem = e + 8;
    return 2 * sp_type_elem_bits(&inner);
  }
  if (strcmp(e, "bf16") == 0) return 16;
  /* the small floats (f8E4M3FN, f6E2M3FN, f4E2M1FN, ...): "f64" is not one of them */
  if (strncmp(e, "f8E", 3) == 0) return 8;
  if (strncmp(e, "f4E", 3) == 0) return 4;
  if (strncmp(e, "f6E", 3) == 0) return 6;
  if (strcmp(e, "index") == 0) return 64;
  const char *p = e;
  if (*p == 'u') p++;
  if (*p == 'i' || *p == 'f') p++;
  else return 0;
  /* MLIR caps a width at 2^24 - 1 bits; anything wider is no type we can size. */
  int bits = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    bits = bits * 10 + (*p - '0');
    if (bits > SP_TYPE_MAX_BITS) return 0;
  }
  return (*p == '\0' || *p == '>') ? bits : 0;
}

void sp_type_print(sp_strbuf *sb, const sp_type *t) {
  switch (t->kind) {
    case SP_TYPE_TENSOR:
      sp_strbuf_puts(sb, "tensor<");
      if (t->rank < 0) {
        sp_strbuf_puts(sb, "*x");
      } else {
        for (int i = 0; i < t->rank; i++) {
          if (t->dims[i] == SP_DYN_DIM)
            sp_strbuf_putc(sb, '?');
          else
            sp_strbuf_put_i64(sb, t->dims[i]);
          sp_strbuf_putc(sb, 'x');
        }
      }
      sp_strbuf_puts(sb, t->elem ? t->elem : "?");
      if (t->encoding) {
        sp_strbuf_puts(sb, ", ");
        sp_strbuf_puts(sb, t->encoding);
      }
      sp_strbuf_putc(sb, '>');
      return;
    case SP_TYPE_TUPLE:
      sp_strbuf_puts(sb, "tuple<");
      for (int i = 0; i < t->nelems; i++) {
        if (i) sp_strbuf_puts(sb, ", ");
        sp_type_print(sb, t->elems[i]);
      }
      sp_strbuf_putc(sb, '>');
      return;
    case SP_TYPE_TOKEN:
      sp_strbuf_puts(sb, t->text ? t->text : "!stablehlo.token");
      return;
    case SP_TYPE_OTHER:
      sp_strbuf_puts(sb, t->text ? t->text : "none");
      return;
  }
}

/* ------------------------------------------------------------------ attributes */

sp_attr *sp_attrs_get(const sp_attrs *d, const char *name) {
  /* Names mostly differ in their first byte: compare that before calling strcmp. */
  for (int i = 0; i < d->n; i++)
    if (d->v[i].name[0] == name[0] && strcmp(d->v[i].name, name) == 0) return &d->v[i];
  return NULL;
}

int sp_attrs_set(sp_arena *a, sp_attrs *d, const sp_attr *attr) {
  assert(attr->name && d->n <= d->cap);
  sp_attr *old = sp_attrs_get(d, attr->name);
  if (old) {
    *old = *attr;
    return SP_OK;
  }
  /* Most ops carry a few attributes: 4 first. */
  if (sp_arena_grow_from(a, (void **)&d->v, &d->cap, d->n, sizeof *d->v, 4)) return SP_ENOMEM;
  d->v[d->n++] = *attr;
  return SP_OK;
}

bool sp_attrs_remove(sp_attrs *d, const char *name) {
  sp_attr *at = sp_attrs_get(d, name);
  if (!at) return false;
  int i = (int)(at - d->v);
  memmove(&d->v[i], &d->v[i + 1], (size_t)(d->n - i - 1) * sizeof *d->v);
  d->n--;
  return true;
}

/* ------------------------------------------------------------------ values and uses */

/* Use lists (ir.h): each use of a value is on that value's list, newest first, and `pprev`
 * points at the pointer that points at it. */
static void use_link(sp_use *u, sp_value *v) {
  assert(!u->value && u->owner);
  u->value = v;
  if (!v) return;
  u->next = v->uses;
  if (v->uses) v->uses->pprev = &u->next;
  u->pprev = &v->uses;
  v->uses = u;
}

static void use_unlink(sp_use *u) {
  if (!u->value) return;
  assert(u->pprev && *u->pprev == u && (!u->next || u->next->value == u->value));
  *u->pprev = u->next;
  if (u->next) u->next->pprev = u->pprev;
  u->value = NULL;
  u->next = NULL;
  u->pprev = NULL;
}

bool sp_value_has_uses(const sp_value *v) { return v->uses != NULL; }

bool sp_op_results_unused(const sp_op *op) {
  for (int i = 0; i < op->nresults; i++)
    if (op->results[i].uses) return false;
  return true;
}

int sp_value_num_uses(const sp_value *v) {
  int n = 0;
  for (const sp_use *u = v->uses; u; u = u->next) n++;
  return n;
}

void sp_value_replace_all_uses(sp_value *from, sp_value *to) {
  if (from == to) return;
  while (from->uses) {
    sp_use *u = from->uses;
    assert(u->value == from && u->pprev == &from->uses);
    use_unlink(u);
    use_link(u, to);
  }
}

/* ------------------------------------------------------------------ ops */

sp_op *sp_op_create(sp_arena *a, const char *name, int noperands, sp_value *const *operands,
                    int nresults, sp_type *const *result_types, int nregions) {
  return sp_op_create_of_kind(a, name, sp_op_kind_from_name(name), noperands, operands, nresults,
                              result_types, nregions);
}

sp_op *sp_op_create_of_kind(sp_arena *a, const char *name, sp_op_kind kind, int noperands,
                            sp_value *const *operands, int nresults, sp_type *const *result_types,
                            int nregions) {
  assert(name && noperands >= 0 && nresults >= 0 && nregions >= 0);
  assert(kind == sp_op_kind_from_name(name));
  sp_op *op = sp_arena_calloc(a, 1, sizeof *op);
  if (!op) return NULL;
  op->name = name;
  op->kind = kind;
  op->noperands = noperands;
  op->nresults = nresults;
  op->nregions = nregions;
  if (noperands) {
    op->operands = sp_arena_calloc(a, (size_t)noperands, sizeof *op->operands);
    if (!op->operands) return NULL;
  }
  if (nresults) {
    op->results = sp_arena_calloc(a, (size_t)nresults, sizeof *op->results);
    if (!op->results) return NULL;
  }
  if (nregions) {
    op->regions = sp_arena_calloc(a, (size_t)nregions, sizeof *op->regions);
    if (!op->regions) return NULL;
  }
  for (int i = 0; i < noperands; i++) {
    op->operands[i].owner = op;
    op->operands[i].index = i;
    if (operands && operands[i]) use_link(&op->operands[i], operands[i]);
  }
  for (int i = 0; i < nresults; i++) {
    op->results[i].def = op;
    op->results[i].index = i;
    op->results[i].type = result_types ? result_types[i] : NULL;
  }
  for (int i = 0; i < nregions; i++) op->regions[i].parent = op;
  return op;
}

void sp_op_set_operand(sp_op *op, int i, sp_value *v) {
  assert(i >= 0 && i < op->noperands);
  use_unlink(&op->operands[i]);
  use_link(&op->operands[i], v);
}

void sp_block_append(sp_block *b, sp_op *op) {
  assert(!op->block && (!b->last || (!b->last->next && b->last->block == b)));
  op->block = b;
  op->prev = b->last;
  op->next = NULL;
  if (b->last) b->last->next = op; else b->first = op;
  b->last = op;
}

void sp_op_insert_before(sp_op *anchor, sp_op *op) {
  assert(!op->block && anchor->block);
  sp_block *b = anchor->block;
  op->block = b;
  op->next = anchor;
  op->prev = anchor->prev;
  if (anchor->prev) anchor->prev->next = op; else b->first = op;
  anchor->prev = op;
}

void sp_op_insert_after(sp_op *anchor, sp_op *op) {
  assert(!op->block && anchor->block);
  if (!anchor->next) {
    sp_block_append(anchor->block, op);
    return;
  }
  sp_op_insert_before(anchor->next, op);
}

void sp_op_insert_after_value(sp_value *v, sp_op *op) {
  if (v->def) sp_op_insert_after(v->def, op);
  else if (v->block->first) sp_op_insert_before(v->block->first, op);
  else sp_block_append(v->block, op);
}

void sp_op_unlink(sp_op *op) {
  sp_block *b = op->block;
  if (!b) return;
  /* Siblings are doubly linked, and the block knows its first and last op. */
  assert(op->prev ? op->prev->next == op : b->first == op);
  assert(op->next ? op->next->prev == op : b->last == op);
  if (op->prev) op->prev->next = op->next; else b->first = op->next;
  if (op->next) op->next->prev = op->prev; else b->last = op->prev;
  op->prev = op->next = NULL;
  op->block = NULL;
}

static bool drop_uses(sp_op *op, void *ctx) {
  (void)ctx;
  for (int i = 0; i < op->noperands; i++) use_unlink(&op->operands[i]);
  return true;
}

void sp_op_erase(sp_op *op) {
#ifndef NDEBUG
  for (int r = 0; r < op->nresults; r++) assert(!op->results[r].uses);
#endif
  sp_op_unlink(op);
  sp_op_walk(op, drop_uses, NULL);
}

void sp_op_replace(sp_op *old, sp_op *op) {
  assert(old->block && !op->block && old->nresults == op->nresults);
  for (int i = 0; i < old->nresults; i++) {
    op->results[i].sharding = old->results[i].sharding;
    op->results[i].loc = old->results[i].loc;
    op->results[i].name_hint = old->results[i].name_hint;
  }
  sp_op_insert_before(old, op);
  for (int i = 0; i < old->nresults; i++)
    sp_value_replace_all_uses(&old->results[i], &op->results[i]);
  sp_op_erase(old);
}

sp_block *sp_region_add_block(sp_arena *a, sp_region *r) {
  sp_block *b = sp_arena_calloc(a, 1, sizeof *b);
  if (!b) return NULL;
  /* Regions have one block, nearly always. */
  if (sp_arena_grow_from(a, (void **)&r->blocks, &r->capblocks, r->nblocks, sizeof *r->blocks, 1))
    return NULL;
  b->parent = r;
  r->blocks[r->nblocks++] = b;
  return b;
}

sp_value *sp_block_add_arg(sp_arena *a, sp_block *b, sp_type *type) {
  assert(b->parent && b->nargs <= b->capargs);
  sp_value *v = sp_arena_calloc(a, 1, sizeof *v);
  if (!v) return NULL;
  if (sp_arena_grow_from(a, (void **)&b->args, &b->capargs, b->nargs, sizeof *b->args, 4))
    return NULL;
  v->type = type;
  v->block = b;
  v->index = b->nargs;
  b->args[b->nargs++] = v;
  return v;
}

sp_op *sp_block_parent_op(const sp_block *b) { return b && b->parent ? b->parent->parent : NULL; }

sp_op *sp_op_parent(const sp_op *op) { return op->block ? sp_block_parent_op(op->block) : NULL; }

sp_attr *sp_op_attr(const sp_op *op, const char *name) { return sp_attrs_get(&op->attrs, name); }

bool sp_op_get_int(const sp_op *op, const char *name, int64_t *out) {
  sp_attr *at = sp_op_attr(op, name);
  if (!at || at->kind != SP_ATTR_INT) return false;
  *out = at->u.i;
  return true;
}

bool sp_op_get_ints(const sp_op *op, const char *name, sp_ints *out) {
  sp_attr *at = sp_op_attr(op, name);
  if (!at || at->kind != SP_ATTR_INTS) return false;
  *out = at->u.ints;
  return true;
}

static bool config_int(const char *text, const char *key, int64_t *out) {
  size_t n = strlen(key);
  for (const char *p = text; p && (p = strstr(p, key)); p += n) {
    const char *q = p + n;
    if (*q == '"') q++;
    else if (strncmp(q, "\\22", 3) == 0) q += 3;
    while (*q == ' ' || *q == '\t') q++;
    if (*q != ':' && *q != '=') continue;
    q++;
    while (*q == ' ' || *q == '\t') q++;
    char *end;
    long long v = strtoll(q, &end, 10);
    if (end == q) return false;
    *out = v;
    return true;
  }
  return false;
}

bool sp_op_backend_config_int(const sp_op *op, const char *key, int64_t *out) {
  return config_int(sp_op_get_str(op, "mhlo.backend_config"), key, out) ||
         config_int(sp_op_get_str(op, "backend_config"), key, out);
}

const char *sp_op_get_str(const sp_op *op, const char *name) {
  sp_attr *at = sp_op_attr(op, name);
  if (!at) return NULL;
  switch (at->kind) {
    case SP_ATTR_STR:
    case SP_ATTR_SYMBOL:
    case SP_ATTR_ENUM:
    case SP_ATTR_TEXT:
      return at->u.s;
    default:
      return NULL;
  }
}

sp_rule *sp_op_rule(const sp_op *op) {
  sp_attr *at = sp_op_attr(op, SP_ATTR_SHARDING_RULE);
  return at && at->kind == SP_ATTR_RULE ? at->u.rule : NULL;
}

/* Takes the list attribute `name` onto the results; SP_EINVAL (and *n) on a count mismatch. */
static int absorb_list(sp_op *op, const char *name, int *n) {
  sp_attr *at = sp_attrs_get(&op->attrs, name);
  if (!at || at->kind != SP_ATTR_SHARDINGS) return SP_OK;
  if (at->u.shardings.n != op->nresults) {
    *n = at->u.shardings.n;
    return SP_EINVAL;
  }
  for (int i = 0; i < op->nresults; i++) op->results[i].sharding = at->u.shardings.v[i];
  sp_attrs_remove(&op->attrs, name);
  return SP_OK;
}

int sp_op_absorb_result_shardings(sp_op *op, int *nlisted) {
  if (op->attrs.n == 0) return SP_OK; /* most ops: nothing to look up (every case below does) */
  const char *inline_name = NULL;
  int rc;
  switch (op->kind) {
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_DATA_FLOW_EDGE: inline_name = "sharding"; break;
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_REDUCE_SCATTER:
    case SP_OP_SDY_SHARDED_TO_UNREDUCED:
    case SP_OP_SDY_REPLICATED_TO_UNREDUCED: inline_name = "out_sharding"; break;
    case SP_OP_SDY_MANUAL_COMPUTATION:
    case SP_OP_SDY_NAMED_COMPUTATION:
      if ((rc = absorb_list(op, "out_shardings", nlisted))) return rc;
      break;
    default: break;
  }
  sp_attr *at;
  if (inline_name && (at = sp_attrs_get(&op->attrs, inline_name)) &&
      at->kind == SP_ATTR_SHARDING && op->nresults == 1) {
    op->results[0].sharding = at->u.sharding;
    sp_attrs_remove(&op->attrs, inline_name);
  }
  return op->nresults > 0 ? absorb_list(op, "sdy.sharding", nlisted) : SP_OK;
}

bool sp_op_walk(sp_op *op, sp_walk_fn fn, void *ctx) {
  if (!fn(op, ctx)) return false;
  for (int r = 0; r < op->nregions; r++) {
    sp_region *reg = &op->regions[r];
    for (int b = 0; b < reg->nblocks; b++) {
      sp_op *o = reg->blocks[b]->first;
      while (o) {
        sp_op *next = o->next; /* fn may unlink o */
        if (!sp_op_walk(o, fn, ctx)) return false;
        o = next;
      }
    }
  }
  return true;
}

/* ------------------------------------------------------------------ modules */

sp_module *sp_module_new(const char *filename) {
  sp_arena *a = sp_arena_new(0);
  if (!a) return NULL;
  sp_module *m = sp_arena_calloc(a, 1, sizeof *m);
  if (!m) goto fail;
  m->arena = a;
  m->filename = sp_arena_strdup(a, filename ? filename : "<input>");
  m->op = sp_op_create(a, "builtin.module", 0, NULL, 0, NULL, 1);
  if (!m->filename || !m->op || !sp_region_add_block(a, &m->op->regions[0])) goto fail;
  return m;
fail:
  sp_arena_free(a);
  return NULL;
}

void sp_module_free(sp_module *m) {
  if (!m) return;
  if (m->trace && m->trace_free) m->trace_free(m->trace);
  sp_arena_free(m->arena);
}

sp_block *sp_module_body(const sp_module *m) { return m->op->regions[0].blocks[0]; }

static sp_op *lookup_symbol(const sp_module *m, sp_op_kind kind, const char *name) {
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next) {
    if (op->kind != kind) continue;
    const char *sym = sp_op_get_str(op, "sym_name");
    if (sym && strcmp(sym, name) == 0) return op;
  }
  return NULL;
}

sp_op *sp_module_lookup_mesh_op(const sp_module *m, const char *name) {
  return lookup_symbol(m, SP_OP_SDY_MESH, name);
}

const sp_mesh *sp_module_lookup_mesh(const sp_module *m, const char *name) {
  sp_op *op = sp_module_lookup_mesh_op(m, name);
  sp_attr *at = op ? sp_op_attr(op, "mesh") : NULL;
  return at && at->kind == SP_ATTR_MESH ? at->u.mesh : NULL;
}

const sp_mesh *sp_module_sharding_mesh(const sp_module *m, const sp_sharding *s) {
  if (!s) return NULL;
  if (s->inline_mesh) return s->inline_mesh;
  return s->mesh_name ? sp_module_lookup_mesh(m, s->mesh_name) : NULL;
}

sp_op *sp_module_lookup_func(const sp_module *m, const char *name) {
  return lookup_symbol(m, SP_OP_FUNC, name);
}

static bool count_op(sp_op *op, void *ctx) {
  (void)op;
  (*(int64_t *)ctx)++;
  return true;
}

int64_t sp_module_num_ops(const sp_module *m) {
  int64_t n = 0;
  sp_op_walk(m->op, count_op, &n);
  return n - 1;
}

void sp_all_to_all_params_print(sp_strbuf *sb, const sp_all_to_all_param *v, int n) {
  sp_strbuf_putc(sb, '[');
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_strbuf_putc(sb, '{');
    sp_axis_refs_print(sb, v[i].axes, v[i].naxes);
    sp_strbuf_printf(sb, "}: %lld->%lld", (long long)v[i].src_dim, (long long)v[i].tgt_dim);
  }
  sp_strbuf_putc(sb, ']');
}

sp_op *sp_module_main_func(const sp_module *m) {
  sp_op *only = NULL;
  int n = 0;
  for (sp_op *op = sp_module_body(m)->first; op; op = op->next)
    if (op->kind == SP_OP_FUNC) {
      only = op;
      n++;
    }
  return n == 1 ? only : sp_module_lookup_func(m, "main");
}
