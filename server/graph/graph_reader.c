/*
 * graph_reader.c - shardplan.v1.Graph -> IR (see graph.h).
 *
 * One pass over the message in order: each op's operands are looked up by id among the values
 * defined so far (a table from id to value and the block that defines it), then its results
 * are defined, then its regions are read recursively. A value is visible to an op when its
 * defining block encloses the op without crossing a func.func (isolated from above), which is
 * MLIR's dominance rule for these single-block regions.
 *
 * Memory: the IR goes into the new module's arena; the id map (ir/ptr_map.h) is malloc'd and
 * freed here.
 */
#include "graph/graph.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/op_attrs.h"
#include "ir/ptr_map.h"
#include "ir/sp_limits.h"
#include "rules/einsum.h"

#define MAX_DIM ((int64_t)1 << 53)   /* larger sizes cannot be exact in JSON / doubles */

typedef struct reader {
  sp_module *m;
  sp_arena *a;
  sp_err *err;
  sp_ptr_map ids;        /* value id + 1 (as a pointer: map keys are non-NULL) -> sp_value * */
  sp_value *last_id;     /* the value of id UINT64_MAX, whose key would be NULL */
  int64_t nops;          /* op number of the next op */
  int depth;
} reader;

/* ------------------------------------------------------------------ errors and ids */

static int fail_at(reader *r, int64_t op, const Shardplan__V1__Op *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(reader *r, int64_t op, const Shardplan__V1__Op *o, const char *fmt, ...) {
  char msg[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (op >= 0)
    return sp_err_set(r->err, SP_EINVAL, "graph: op %lld (%.100s): %s", (long long)op,
                      o && o->name && *o->name ? o->name : "?", msg);
  return sp_err_set(r->err, SP_EINVAL, "graph: %s", msg);
}

_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t), "value ids are kept as pointer keys");

static const void *id_key(uint64_t id) { return (const void *)(uintptr_t)(id + 1); }

/* The value of `id` defined so far, or NULL. */
static sp_value *lookup(const reader *r, uint64_t id) {
  if (id == UINT64_MAX) return r->last_id;
  return (sp_value *)sp_ptr_map_get(&r->ids, id_key(id), 0);
}

/* The block that defines `v` (its op's block, or the block it is an argument of). */
static sp_block *defining_block(const sp_value *v) { return v->def ? v->def->block : v->block; }

static int define(reader *r, int64_t opno, const Shardplan__V1__Op *o, uint64_t id, sp_value *v) {
  if (lookup(r, id))
    return fail_at(r, opno, o, "value id %llu is defined twice", (unsigned long long)id);
  if (id == UINT64_MAX)
    r->last_id = v;
  else if (sp_ptr_map_put(&r->ids, id_key(id), (intptr_t)v))
    return sp_err_set(r->err, SP_ENOMEM, "out of memory reading the graph");
  return SP_OK;
}

/* Is a value defined in block `def` visible from block `at`? */
static bool visible(sp_block *def, sp_block *at) {
  for (sp_block *b = at; b; ) {
    if (b == def) return true;
    sp_op *parent = sp_block_parent_op(b);
    if (!parent || parent->kind == SP_OP_FUNC || parent->kind == SP_OP_MODULE) return false;
    b = parent->block;
  }
  return false;
}

static char *dup(reader *r, const char *s) { return sp_arena_strdup(r->a, s ? s : ""); }

static bool valid_name(const char *s, bool need_dot) {
  if (!s || !*s || strlen(s) > SP_MAX_IDENT) return false;
  bool dot = false;
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '.') dot = true;
    else if (!(c == '_' || c == '$' || c == '-' || (c >= '0' && c <= '9') ||
               (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return false;
  }
  return !need_dot || (dot && s[0] != '.' && s[strlen(s) - 1] != '.');
}

static bool printable(const char *s) {
  if (!s) return true;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 && *p != '\t' && *p != '\n') return false;
  return true;
}

/* ------------------------------------------------------------------ types, meshes, shardings */

static int read_type(reader *r, int64_t opno, const Shardplan__V1__Op *o, const char *what,
                     const Shardplan__V1__Type *t, int depth, sp_type **out) {
  if (!t) return fail_at(r, opno, o, "%s has no type", what);
  if (depth > SP_MAX_NESTING) return fail_at(r, opno, o, "%s: type nested too deeply", what);
  sp_type *ty = sp_arena_calloc(r->a, 1, sizeof *ty);
  if (!ty) return SP_ENOMEM;
  switch (t->kind) {
    case SHARDPLAN__V1__TYPE__KIND__TENSOR: {
      ty->kind = SP_TYPE_TENSOR;
      if (!t->element_type || !valid_name(t->element_type, false)) {
        if (!t->element_type || !*t->element_type || !printable(t->element_type) ||
            strlen(t->element_type) > 256)
          return fail_at(r, opno, o, "%s: tensor type needs an element type (\"f32\", \"bf16\", "
                         "...)", what);
      }
      ty->elem = dup(r, t->element_type);
      if (t->encoding && *t->encoding) ty->encoding = dup(r, t->encoding);
      if (t->unranked) {
        if (t->n_shape) return fail_at(r, opno, o, "%s: an unranked tensor has no shape", what);
        ty->rank = -1;
        break;
      }
      if (t->n_shape > SP_MAX_RANK)
        return fail_at(r, opno, o, "%s: rank %zu is over the limit of %d dimensions", what,
                       t->n_shape, SP_MAX_RANK);
      ty->rank = (int)t->n_shape;
      if (ty->rank) {
        ty->dims = sp_arena_alloc(r->a, t->n_shape * sizeof *ty->dims);
        if (!ty->dims) return SP_ENOMEM;
      }
      for (size_t d = 0; d < t->n_shape; d++) {
        int64_t v = t->shape[d];
        if (v < 0)
          return fail_at(r, opno, o, "%s: dimension %zu has negative size %lld (mark dynamic "
                         "dimensions in dynamic_dims)", what, d, (long long)v);
        if (v > MAX_DIM)
          return fail_at(r, opno, o, "%s: dimension %zu has size %lld, over the limit of 2^53",
                         what, d, (long long)v);
        ty->dims[d] = v;
      }
      for (size_t i = 0; i < t->n_dynamic_dims; i++) {
        if (t->dynamic_dims[i] >= t->n_shape)
          return fail_at(r, opno, o, "%s: dynamic dimension %u is out of range for rank %zu",
                         what, t->dynamic_dims[i], t->n_shape);
        ty->dims[t->dynamic_dims[i]] = SP_DYN_DIM;
      }
      break;
    }
    case SHARDPLAN__V1__TYPE__KIND__TOKEN:
      ty->kind = SP_TYPE_TOKEN;
      ty->text = dup(r, t->text && *t->text ? t->text : "!stablehlo.token");
      break;
    case SHARDPLAN__V1__TYPE__KIND__TUPLE:
      ty->kind = SP_TYPE_TUPLE;
      if (t->n_elements > SP_MAX_OPERANDS)
        return fail_at(r, opno, o, "%s: tuple of %zu elements is over the limit", what,
                       t->n_elements);
      ty->nelems = (int)t->n_elements;
      if (ty->nelems) {
        ty->elems = sp_arena_calloc(r->a, t->n_elements, sizeof *ty->elems);
        if (!ty->elems) return SP_ENOMEM;
      }
      for (size_t i = 0; i < t->n_elements; i++) {
        int rc = read_type(r, opno, o, what, t->elements[i], depth + 1, &ty->elems[i]);
        if (rc) return rc;
      }
      break;
    case SHARDPLAN__V1__TYPE__KIND__OTHER:
      if (!t->text || !*t->text || !printable(t->text))
        return fail_at(r, opno, o, "%s: a type of kind OTHER needs its text", what);
      ty->kind = SP_TYPE_OTHER;
      ty->text = dup(r, t->text);
      break;
    default:
      return fail_at(r, opno, o, "%s: unknown type kind %d", what, (int)t->kind);
  }
  *out = ty;
  return SP_OK;
}

static int read_mesh(reader *r, int64_t opno, const Shardplan__V1__Op *o,
                     const Shardplan__V1__Mesh *pm, sp_mesh **out) {
  sp_mesh *m = sp_arena_calloc(r->a, 1, sizeof *m);
  if (!m) return SP_ENOMEM;
  if (pm) {
    if (pm->n_axes > SP_MAX_MESH_AXES)
      return fail_at(r, opno, o, "mesh has %zu axes, over the limit of %d", pm->n_axes,
                     SP_MAX_MESH_AXES);
    if (pm->n_device_ids > SP_MAX_DEVICES)
      return fail_at(r, opno, o, "mesh has %zu device ids, over the limit", pm->n_device_ids);
    m->naxes = (int)pm->n_axes;
    if (m->naxes && !(m->axes = sp_arena_calloc(r->a, pm->n_axes, sizeof *m->axes)))
      return SP_ENOMEM;
    for (size_t i = 0; i < pm->n_axes; i++) {
      const Shardplan__V1__MeshAxis *ax = pm->axes[i];
      if (!ax->name || !*ax->name || !printable(ax->name) || strlen(ax->name) > SP_MAX_IDENT)
        return fail_at(r, opno, o, "mesh axis %zu has no name", i);
      if (ax->size < 1 || ax->size > SP_MAX_DEVICES)
        return fail_at(r, opno, o, "mesh axis \"%.100s\" has size %lld (must be 1 to %d)",
                       ax->name, (long long)ax->size, SP_MAX_DEVICES);
      m->axes[i].name = dup(r, ax->name);
      m->axes[i].size = ax->size;
    }
    m->ndevice_ids = (int)pm->n_device_ids;
    if (m->ndevice_ids) {
      m->device_ids = sp_arena_alloc(r->a, pm->n_device_ids * sizeof *m->device_ids);
      if (!m->device_ids) return SP_ENOMEM;
      memcpy(m->device_ids, pm->device_ids, pm->n_device_ids * sizeof *m->device_ids);
    }
  }
  *out = m;
  return SP_OK;
}

static int read_axes(reader *r, int64_t opno, const Shardplan__V1__Op *o, size_t n,
                     Shardplan__V1__AxisRef **in, int *nout, sp_axis_ref **out) {
  *nout = 0;
  *out = NULL;
  if (n > SP_MAX_MESH_AXES * 8)
    return fail_at(r, opno, o, "%zu axis references in one list, over the limit", n);
  if (!n) return SP_OK;
  sp_axis_ref *v = sp_arena_calloc(r->a, n, sizeof *v);
  if (!v) return SP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!in[i]->name || !*in[i]->name || !printable(in[i]->name))
      return fail_at(r, opno, o, "an axis reference has no name");
    v[i].name = dup(r, in[i]->name);
    if (in[i]->size) {
      /* As the MLIR reader: a size below 1 is refused here; a pre-size below 1 is the
       * verifier's to report, on the shardings it checks (an attribute it does not know may
       * hold any, in either front-end). */
      if (in[i]->size < 1)
        return fail_at(r, opno, o, "sub-axis \"%.100s\":(%lld)%lld: size must be >= 1",
                       in[i]->name, (long long)in[i]->pre_size, (long long)in[i]->size);
      v[i].pre = in[i]->pre_size;
      v[i].size = in[i]->size;
    } else if (in[i]->pre_size) {
      return fail_at(r, opno, o, "axis \"%.100s\" has pre_size but no size", in[i]->name);
    }
  }
  *nout = (int)n;
  *out = v;
  return SP_OK;
}

static int read_sharding(reader *r, int64_t opno, const Shardplan__V1__Op *o,
                         const Shardplan__V1__Sharding *ps, sp_sharding **out) {
  int rc;
  if (!ps) return fail_at(r, opno, o, "a sharding flagged present is missing");
  if (ps->n_dims > SP_MAX_RANK)
    return fail_at(r, opno, o, "sharding of %zu dimensions is over the limit", ps->n_dims);
  sp_sharding *s = sp_arena_calloc(r->a, 1, sizeof *s);
  if (!s) return SP_ENOMEM;
  if (ps->has_inline_mesh) {
    if ((rc = read_mesh(r, opno, o, ps->inline_mesh, &s->inline_mesh))) return rc;
  } else {
    if (!ps->mesh_name || !*ps->mesh_name || !printable(ps->mesh_name))
      return fail_at(r, opno, o, "a sharding names no mesh (set mesh_name or an inline mesh)");
    s->mesh_name = dup(r, ps->mesh_name);
  }
  s->rank = (int)ps->n_dims;
  if (s->rank && !(s->dims = sp_arena_calloc(r->a, ps->n_dims, sizeof *s->dims)))
    return SP_ENOMEM;
  for (size_t d = 0; d < ps->n_dims; d++) {
    const Shardplan__V1__DimSharding *pd = ps->dims[d];
    if ((rc = read_axes(r, opno, o, pd->n_axes, pd->axes, &s->dims[d].naxes, &s->dims[d].axes)))
      return rc;
    s->dims[d].closed = pd->closed;
    if (pd->has_priority && pd->priority < 0)
      return fail_at(r, opno, o, "sharding dimension %zu has negative priority %d", d,
                     pd->priority);
    s->dims[d].priority = pd->has_priority ? pd->priority : SP_NO_PRIORITY;
  }
  if ((rc = read_axes(r, opno, o, ps->n_replicated, ps->replicated, &s->nreplicated,
                      &s->replicated)) ||
      (rc = read_axes(r, opno, o, ps->n_unreduced, ps->unreduced, &s->nunreduced,
                      &s->unreduced)))
    return rc;
  if (ps->unreduced_kind && *ps->unreduced_kind) {
    if (strcmp(ps->unreduced_kind, "max") && strcmp(ps->unreduced_kind, "min") &&
        strcmp(ps->unreduced_kind, "sum"))
      return fail_at(r, opno, o, "unreduced_kind \"%.50s\" is not sum, max or min",
                     ps->unreduced_kind);
    if (strcmp(ps->unreduced_kind, "sum")) s->unreduced_kind = dup(r, ps->unreduced_kind);
  }
  *out = s;
  return SP_OK;
}

static int read_rule(reader *r, int64_t opno, const Shardplan__V1__Op *o,
                     const Shardplan__V1__ShardingRule *pr, sp_rule **out) {
  if (pr->n_factors > SP_MAX_FACTORS)
    return fail_at(r, opno, o, "sharding rule with %zu factors is over the limit of %d",
                   pr->n_factors, SP_MAX_FACTORS);
  if (pr->n_operands > SP_MAX_OPERANDS || pr->n_results > SP_MAX_OPERANDS)
    return fail_at(r, opno, o, "sharding rule with too many tensors");
  sp_rule *ru = sp_arena_calloc(r->a, 1, sizeof *ru);
  if (!ru) return SP_ENOMEM;
  ru->nfactors = (int)pr->n_factors;
  ru->custom = pr->custom;
  if (ru->nfactors && !(ru->factors = sp_arena_calloc(r->a, pr->n_factors, sizeof *ru->factors)))
    return SP_ENOMEM;
  for (size_t i = 0; i < pr->n_factors; i++) {
    if (pr->factors[i]->size < 1 || pr->factors[i]->size > MAX_DIM)
      return fail_at(r, opno, o, "sharding rule factor %zu has size %lld", i,
                     (long long)pr->factors[i]->size);
    if ((int)pr->factors[i]->kind < 0 || (int)pr->factors[i]->kind > 3)
      return fail_at(r, opno, o, "sharding rule factor %zu has unknown kind %d", i,
                     (int)pr->factors[i]->kind);
    ru->factors[i].size = pr->factors[i]->size;
    ru->factors[i].kind = (sp_factor_kind)pr->factors[i]->kind;
    ru->factors[i].blocked = pr->factors[i]->blocked;
  }
  for (int side = 0; side < 2; side++) {
    size_t n = side ? pr->n_results : pr->n_operands;
    Shardplan__V1__RuleTensor **in = side ? pr->results : pr->operands;
    sp_rule_tensor *ts = n ? sp_arena_calloc(r->a, n, sizeof *ts) : NULL;
    if (n && !ts) return SP_ENOMEM;
    for (size_t t = 0; t < n; t++) {
      if (in[t]->n_dims > SP_MAX_RANK)
        return fail_at(r, opno, o, "sharding rule tensor of rank %zu is over the limit",
                       in[t]->n_dims);
      ts[t].rank = (int)in[t]->n_dims;
      if (ts[t].rank && !(ts[t].dims = sp_arena_calloc(r->a, in[t]->n_dims, sizeof *ts[t].dims)))
        return SP_ENOMEM;
      for (size_t d = 0; d < in[t]->n_dims; d++) {
        const Shardplan__V1__RuleDim *pd = in[t]->dims[d];
        if (pd->n_factors > SP_MAX_FACTORS) return fail_at(r, opno, o, "rule dim too long");
        ts[t].dims[d].nfactors = (int)pd->n_factors;
        if (pd->n_factors &&
            !(ts[t].dims[d].factors = sp_arena_alloc(r->a, pd->n_factors * sizeof(int))))
          return SP_ENOMEM;
        for (size_t k = 0; k < pd->n_factors; k++) {
          if (pd->factors[k] >= pr->n_factors)
            return fail_at(r, opno, o, "sharding rule %s %zu dim %zu names factor %u of %zu",
                           side ? "result" : "operand", t, d, pd->factors[k], pr->n_factors);
          ts[t].dims[d].factors[k] = (int)pd->factors[k];
        }
      }
    }
    if (side) {
      ru->nresults = (int)n;
      ru->results = ts;
    } else {
      ru->noperands = (int)n;
      ru->operands = ts;
    }
  }
  *out = ru;
  return SP_OK;
}

static int read_attr(reader *r, int64_t opno, const Shardplan__V1__Op *o,
                     const Shardplan__V1__Attribute *pa, sp_attrs *dst) {
  if (!valid_name(pa->name, false) && !(pa->name && *pa->name && printable(pa->name) &&
                                         strlen(pa->name) < 256))
    return fail_at(r, opno, o, "an attribute has no name");
  sp_attr at;
  memset(&at, 0, sizeof at);
  at.name = dup(r, pa->name);
  int rc = SP_OK;
  switch (pa->value_case) {
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_UNIT: at.kind = SP_ATTR_UNIT; break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_BOOL_VALUE:
      at.kind = SP_ATTR_BOOL;
      at.u.b = pa->bool_value;
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_INT_VALUE:
      at.kind = SP_ATTR_INT;
      at.u.i = pa->int_value;
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_INTS:
      at.kind = SP_ATTR_INTS;
      if (pa->ints->n_values > SP_MAX_OPERANDS)
        return fail_at(r, opno, o, "attribute %.100s: list too long", pa->name);
      at.u.ints.n = (int)pa->ints->n_values;
      if (at.u.ints.n) {
        at.u.ints.v = sp_arena_alloc(r->a, pa->ints->n_values * sizeof(int64_t));
        if (!at.u.ints.v) return SP_ENOMEM;
        memcpy(at.u.ints.v, pa->ints->values, pa->ints->n_values * sizeof(int64_t));
      }
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_STR:
      at.kind = SP_ATTR_STR;
      at.u.s = dup(r, pa->str);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_SYMBOL:
      if (!pa->symbol || !*pa->symbol || !printable(pa->symbol))
        return fail_at(r, opno, o, "attribute %.100s: empty symbol", pa->name);
      at.kind = SP_ATTR_SYMBOL;
      at.u.s = dup(r, pa->symbol);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_ENUM_VALUE:
      if (!valid_name(pa->enum_value, false))
        return fail_at(r, opno, o, "attribute %.100s: enum value \"%.50s\" is not a keyword",
                       pa->name, pa->enum_value ? pa->enum_value : "");
      at.kind = SP_ATTR_ENUM;
      at.u.s = dup(r, pa->enum_value);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_TEXT:
      if (!pa->text || !*pa->text || !printable(pa->text))
        return fail_at(r, opno, o, "attribute %.100s: empty text", pa->name);
      at.kind = SP_ATTR_TEXT;
      at.u.s = dup(r, pa->text);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_SHARDING:
      at.kind = SP_ATTR_SHARDING;
      rc = read_sharding(r, opno, o, pa->sharding, &at.u.sharding);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_SHARDINGS: {
      at.kind = SP_ATTR_SHARDINGS;
      size_t n = pa->shardings->n_shardings;
      if (n > SP_MAX_OPERANDS) return fail_at(r, opno, o, "too many shardings");
      at.u.shardings.n = (int)n;
      if (n && !(at.u.shardings.v = sp_arena_calloc(r->a, n, sizeof *at.u.shardings.v)))
        return SP_ENOMEM;
      for (size_t i = 0; i < n && !rc; i++)
        rc = read_sharding(r, opno, o, pa->shardings->shardings[i], &at.u.shardings.v[i]);
      break;
    }
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_AXES:
      at.kind = SP_ATTR_AXES;
      rc = read_axes(r, opno, o, pa->axes->n_axes, pa->axes->axes, &at.u.axes.n, &at.u.axes.v);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_RULE:
      at.kind = SP_ATTR_RULE;
      rc = read_rule(r, opno, o, pa->rule, &at.u.rule);
      break;
    case SHARDPLAN__V1__ATTRIBUTE__VALUE_MESH:
      at.kind = SP_ATTR_MESH;
      rc = read_mesh(r, opno, o, pa->mesh, &at.u.mesh);
      break;
    default:
      return fail_at(r, opno, o, "attribute %.100s has no value", pa->name);
  }
  if (rc) return rc;
  if (sp_attrs_get(dst, at.name))
    return fail_at(r, opno, o, "attribute %.100s is given twice", at.name);
  return sp_attrs_set(r->a, dst, &at) ? SP_ENOMEM : SP_OK;
}

static int read_attrs(reader *r, int64_t opno, const Shardplan__V1__Op *o, size_t n,
                      Shardplan__V1__Attribute **in, sp_attrs *dst) {
  for (size_t i = 0; i < n; i++) {
    int rc = read_attr(r, opno, o, in[i], dst);
    if (rc) return rc;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ ops and regions */

static int read_block_into(reader *r, const Shardplan__V1__Block *pb, sp_block *b, int64_t opno,
                           const Shardplan__V1__Op *owner);

/* Value fields shared by results and block arguments. */
static int read_value_extras(reader *r, int64_t opno, const Shardplan__V1__Op *o,
                             const Shardplan__V1__Value *pv, sp_value *v) {
  int rc;
  if (pv->name && *pv->name) v->name_hint = dup(r, pv->name);
  if (pv->has_sharding && (rc = read_sharding(r, opno, o, pv->sharding, &v->sharding))) return rc;
  return read_attrs(r, opno, o, pv->n_attributes, pv->attributes, &v->attrs);
}

/* Moves shardings given as attributes onto the results, as the MLIR reader does (ir.h). */
static int absorb_shardings(reader *r, int64_t opno, const Shardplan__V1__Op *o, sp_op *op) {
  int n = 0;
  if (sp_op_absorb_result_shardings(op, &n))
    return fail_at(r, opno, o, "result shardings don't match the results: %d shardings for %d "
                   "results", n, op->nresults);
  return SP_OK;
}

static int read_func(reader *r, int64_t opno, const Shardplan__V1__Op *o, sp_op *op) {
  const Shardplan__V1__FunctionSignature *fs = o->has_function ? o->function : NULL;
  sp_func_info *fi = sp_arena_calloc(r->a, 1, sizeof *fi);
  if (!fi) return SP_ENOMEM;
  int rc;
  sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
  if (entry) {
    if (fs && fs->n_arg_types)
      return fail_at(r, opno, o, "a function with a body takes its argument types from its "
                     "entry block (leave function.arg_types empty)");
    fi->nargs = entry->nargs;
    if (fi->nargs) {
      fi->arg_types = sp_arena_alloc(r->a, (size_t)fi->nargs * sizeof *fi->arg_types);
      if (!fi->arg_types) return SP_ENOMEM;
      for (int i = 0; i < fi->nargs; i++) fi->arg_types[i] = entry->args[i]->type;
    }
  } else if (fs && fs->n_arg_types) {
    if (fs->n_arg_types > SP_MAX_OPERANDS) return fail_at(r, opno, o, "too many arguments");
    if (fs->n_arg_attributes && fs->n_arg_attributes != fs->n_arg_types)
      return fail_at(r, opno, o, "function has %zu argument types but %zu argument attribute "
                     "lists", fs->n_arg_types, fs->n_arg_attributes);
    fi->nargs = (int)fs->n_arg_types;
    fi->arg_types = sp_arena_alloc(r->a, fs->n_arg_types * sizeof *fi->arg_types);
    fi->decl_arg_attrs = sp_arena_calloc(r->a, fs->n_arg_types, sizeof *fi->decl_arg_attrs);
    if (!fi->arg_types || !fi->decl_arg_attrs) return SP_ENOMEM;
    for (size_t i = 0; i < fs->n_arg_types; i++) {
      if ((rc = read_type(r, opno, o, "function argument", fs->arg_types[i], 0, &fi->arg_types[i])))
        return rc;
      if (fs->n_arg_attributes &&
          (rc = read_attrs(r, opno, o, fs->arg_attributes[i]->n_attributes,
                           fs->arg_attributes[i]->attributes, &fi->decl_arg_attrs[i])))
        return rc;
    }
  }
  size_t nres = fs ? fs->n_results : 0;
  if (nres > SP_MAX_OPERANDS) return fail_at(r, opno, o, "too many function results");
  fi->nresults = (int)nres;
  if (nres) {
    fi->result_types = sp_arena_alloc(r->a, nres * sizeof *fi->result_types);
    fi->result_shardings = sp_arena_calloc(r->a, nres, sizeof *fi->result_shardings);
    fi->result_attrs = sp_arena_calloc(r->a, nres, sizeof *fi->result_attrs);
    if (!fi->result_types || !fi->result_shardings || !fi->result_attrs) return SP_ENOMEM;
    for (size_t i = 0; i < nres; i++) {
      const Shardplan__V1__FunctionResult *fr = fs->results[i];
      if ((rc = read_type(r, opno, o, "function result", fr->type, 0, &fi->result_types[i])))
        return rc;
      if (fr->has_sharding &&
          (rc = read_sharding(r, opno, o, fr->sharding, &fi->result_shardings[i])))
        return rc;
      if ((rc = read_attrs(r, opno, o, fr->n_attributes, fr->attributes, &fi->result_attrs[i])))
        return rc;
    }
  }
  op->func = fi;
  return SP_OK;
}

static int read_op(reader *r, const Shardplan__V1__Op *o, sp_block *b) {
  int64_t opno = r->nops++;
  int rc;
  if (r->nops > SP_MAX_OPS)
    return fail_at(r, -1, NULL, "more than %d ops (the limit)", SP_MAX_OPS);
  if (!valid_name(o->name, true))
    return fail_at(r, opno, o, "op name \"%.100s\" is not a dialect.op name",
                   o->name ? o->name : "");
  if (strcmp(o->name, "builtin.module") == 0)
    return fail_at(r, opno, o, "nested modules are not supported");
  if (o->n_operands > SP_MAX_OPERANDS || o->n_results > SP_MAX_OPERANDS ||
      o->n_regions > SP_MAX_OPERANDS)
    return fail_at(r, opno, o, "too many operands, results or regions");
  if (o->has_function != (strcmp(o->name, "func.func") == 0))
    return fail_at(r, opno, o, o->has_function ? "only func.func has a function signature"
                                               : "func.func needs its function signature");
  sp_value **operands = NULL;
  sp_type **rtypes = NULL;
  if (o->n_operands && !(operands = sp_arena_alloc(r->a, o->n_operands * sizeof *operands)))
    return SP_ENOMEM;
  for (size_t i = 0; i < o->n_operands; i++) {
    sp_value *s = lookup(r, o->operands[i]);
    if (!s)
      return fail_at(r, opno, o, "operand %zu: value %llu is not defined before this op (a "
                     "dangling id, or a cycle)", i, (unsigned long long)o->operands[i]);
    if (!visible(defining_block(s), b))
      return fail_at(r, opno, o, "operand %zu: value %llu is defined in a region that does not "
                     "enclose this op", i, (unsigned long long)o->operands[i]);
    operands[i] = s;
  }
  if (o->n_results && !(rtypes = sp_arena_alloc(r->a, o->n_results * sizeof *rtypes)))
    return SP_ENOMEM;
  for (size_t i = 0; i < o->n_results; i++) {
    char what[48];
    snprintf(what, sizeof what, "result %zu", i);
    if ((rc = read_type(r, opno, o, what, o->results[i]->type, 0, &rtypes[i]))) return rc;
  }
  sp_op *op = sp_op_create(r->a, dup(r, o->name), (int)o->n_operands, operands,
                           (int)o->n_results, rtypes, (int)o->n_regions);
  if (!op) return SP_ENOMEM;
  sp_block_append(b, op);
  for (size_t i = 0; i < o->n_results; i++) {
    if ((rc = read_value_extras(r, opno, o, o->results[i], &op->results[i])) ||
        (rc = define(r, opno, o, o->results[i]->id, &op->results[i])))
      return rc;
  }
  if ((rc = read_attrs(r, opno, o, o->n_attributes, o->attributes, &op->attrs))) return rc;
  if ((rc = absorb_shardings(r, opno, o, op))) return rc;
  if (++r->depth > SP_MAX_NESTING)
    return fail_at(r, opno, o, "regions nested more than %d deep", SP_MAX_NESTING);
  for (size_t i = 0; i < o->n_regions; i++) {
    const Shardplan__V1__Region *pr = o->regions[i];
    for (size_t k = 0; k < pr->n_blocks; k++) {
      sp_block *nb = sp_region_add_block(r->a, &op->regions[i]);
      if (!nb) return SP_ENOMEM;
      if ((rc = read_block_into(r, pr->blocks[k], nb, opno, o))) return rc;
    }
  }
  r->depth--;
  if (op->kind == SP_OP_FUNC && (rc = read_func(r, opno, o, op))) return rc;
  if (o->einsum_rule && *o->einsum_rule) {
    if (sp_op_attr(op, SP_ATTR_SHARDING_RULE))
      return fail_at(r, opno, o, "both einsum_rule and an sdy.sharding_rule attribute");
    sp_rule *rule;
    sp_err e;
    if (sp_einsum_rule_for_op(r->a, o->einsum_rule, NULL, op, &rule, &e))
      return fail_at(r, opno, o, "einsum_rule \"%.100s\": %s", o->einsum_rule, e.msg);
    sp_attr at = {.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = rule};
    if (sp_attrs_set(r->a, &op->attrs, &at)) return SP_ENOMEM;
  }
  return SP_OK;
}

static int read_block_into(reader *r, const Shardplan__V1__Block *pb, sp_block *b, int64_t opno,
                           const Shardplan__V1__Op *owner) {
  int rc;
  if (pb->n_arguments > SP_MAX_OPERANDS) return fail_at(r, opno, owner, "too many arguments");
  for (size_t i = 0; i < pb->n_arguments; i++) {
    const Shardplan__V1__Value *pv = pb->arguments[i];
    char what[48];
    snprintf(what, sizeof what, "block argument %zu", i);
    sp_type *t;
    if ((rc = read_type(r, opno, owner, what, pv->type, 0, &t))) return rc;
    sp_value *v = sp_block_add_arg(r->a, b, t);
    if (!v) return SP_ENOMEM;
    if ((rc = read_value_extras(r, opno, owner, pv, v)) ||
        (rc = define(r, opno, owner, pv->id, v)))
      return rc;
  }
  for (size_t i = 0; i < pb->n_ops; i++)
    if ((rc = read_op(r, pb->ops[i], b))) return rc;
  return SP_OK;
}

int sp_graph_to_module(const Shardplan__V1__Graph *g, const char *filename, sp_module **out,
                       sp_err *err) {
  *out = NULL;
  sp_err_clear(err);
  reader r;
  memset(&r, 0, sizeof r);
  r.err = err;
  r.m = sp_module_new(filename ? filename : "<graph>");
  if (!r.m) return sp_err_set(err, SP_ENOMEM, "out of memory");
  r.a = r.m->arena;
  int rc = SP_OK;
  if (!g) {
    rc = fail_at(&r, -1, NULL, "no graph");
    goto fail;
  }
  if (g->name && *g->name) {
    if (!printable(g->name)) {
      rc = fail_at(&r, -1, NULL, "module name is not printable");
      goto fail;
    }
    sp_attr at = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = dup(&r, g->name)};
    if (sp_attrs_set(r.a, &r.m->op->attrs, &at)) {
      rc = SP_ENOMEM;
      goto fail;
    }
  }
  if ((rc = read_attrs(&r, -1, NULL, g->n_attributes, g->attributes, &r.m->op->attrs))) goto fail;
  sp_block *body = sp_module_body(r.m);
  for (size_t i = 0; i < g->n_ops; i++)
    if ((rc = read_op(&r, g->ops[i], body))) goto fail;
  sp_ptr_map_free(&r.ids);
  *out = r.m;
  return SP_OK;
fail:
  if (rc == SP_ENOMEM && err && err->code == SP_OK)
    sp_err_set(err, SP_ENOMEM, "out of memory reading the graph");
  sp_ptr_map_free(&r.ids);
  sp_module_free(r.m);
  return rc;
}
