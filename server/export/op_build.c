/*
 * op_build.c - StableHLO op builders of the export passes (see op_build.h).
 */
#include "export/op_build.h"

#include <string.h>

#include "ir/sp_limits.h"

void sp_build_place(sp_builder *b, sp_op *op) {
  op->loc = b->loc;
  if (b->block) sp_block_append(b->block, op);
  else sp_op_insert_before(b->before, op);
}

int sp_build_set_ints(sp_module *m, sp_op *op, const char *name, const int64_t *v, int n) {
  int64_t *copy = sp_arena_alloc(m->arena, (size_t)(n + 1) * sizeof *copy);
  if (!copy) return SP_ENOMEM;
  if (n) memcpy(copy, v, (size_t)n * sizeof *copy);
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS};
  at.u.ints.n = n;
  at.u.ints.v = copy;
  return sp_attrs_set(m->arena, &op->attrs, &at);
}

int sp_build_set_text(sp_module *m, sp_op *op, const char *name, const char *text) {
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT, .u.s = text};
  return sp_attrs_set(m->arena, &op->attrs, &at);
}

const char *sp_build_zero_text(const char *elem) {
  if (strcmp(elem, "i1") == 0) return "dense<false>";
  if (elem[0] == 'f' || strncmp(elem, "bf", 2) == 0) return "dense<0.000000e+00>";
  if (strncmp(elem, "complex", 7) == 0) return "dense<(0.000000e+00,0.000000e+00)>";
  return "dense<0>";
}

sp_type *sp_build_type_with_dims(sp_arena *a, const sp_type *t, const int64_t *dims) {
  return sp_type_tensor(a, t->rank, dims, t->elem);
}

sp_value *sp_build_op(sp_builder *b, const char *name, int n, sp_value *const *operands, sp_type *t) {
  sp_op *op = t ? sp_op_create(b->m->arena, name, n, operands, 1, &t, 0) : NULL;
  if (!op) return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_build_constant(sp_builder *b, sp_type *t, const char *dense) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_printf(&sb, "%s : ", dense);
  sp_type_print(&sb, t);
  const char *text = sp_strbuf_ok(&sb) ? sp_arena_strdup(b->m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  sp_op *op = text ? sp_op_create(b->m->arena, "stablehlo.constant", 0, NULL, 1, &t, 0) : NULL;
  if (!op || sp_build_set_text(b->m, op, "value", text)) return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_build_zeros(sp_builder *b, sp_type *t) {
  return sp_build_constant(b, t, sp_build_zero_text(t->elem));
}

sp_value *sp_build_i64(sp_builder *b, int64_t v) {
  sp_type *t = sp_type_tensor(b->m->arena, 0, NULL, "i64");
  const char *dense = sp_arena_printf(b->m->arena, "dense<%lld>", (long long)v);
  return t && dense ? sp_build_constant(b, t, dense) : NULL;
}

sp_value *sp_build_binary(sp_builder *b, const char *name, sp_value *x, sp_value *y) {
  sp_value *ops[2] = {x, y};
  return sp_build_op(b, name, 2, ops, x->type);
}

sp_value *sp_build_slice(sp_builder *b, sp_value *v, const int64_t *start, const int64_t *limit) {
  const sp_type *t = v->type;
  int64_t dims[SP_MAX_RANK], stride[SP_MAX_RANK];
  if (t->rank > SP_MAX_RANK) return NULL;
  for (int i = 0; i < t->rank; i++) {
    dims[i] = limit[i] - start[i];
    stride[i] = 1;
  }
  sp_type *rt = sp_build_type_with_dims(b->m->arena, t, dims);
  sp_op *op = rt ? sp_op_create(b->m->arena, "stablehlo.slice", 1, &v, 1, &rt, 0) : NULL;
  if (!op || sp_build_set_ints(b->m, op, "start_indices", start, t->rank) ||
      sp_build_set_ints(b->m, op, "limit_indices", limit, t->rank) ||
      sp_build_set_ints(b->m, op, "strides", stride, t->rank))
    return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_build_pad(sp_builder *b, sp_value *v, sp_value *value, const int64_t *low,
                       const int64_t *high, const int64_t *interior) {
  const sp_type *t = v->type;
  int64_t dims[SP_MAX_RANK];
  if (t->rank > SP_MAX_RANK) return NULL;
  for (int i = 0; i < t->rank; i++)
    dims[i] = low[i] + high[i] + (t->dims[i] ? (t->dims[i] - 1) * (interior[i] + 1) + 1 : 0);
  sp_type *rt = sp_build_type_with_dims(b->m->arena, t, dims);
  sp_value *ops[2] = {v, value};
  sp_op *op = rt ? sp_op_create(b->m->arena, "stablehlo.pad", 2, ops, 1, &rt, 0) : NULL;
  if (!op || sp_build_set_ints(b->m, op, "edge_padding_low", low, t->rank) ||
      sp_build_set_ints(b->m, op, "edge_padding_high", high, t->rank) ||
      sp_build_set_ints(b->m, op, "interior_padding", interior, t->rank))
    return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_build_concat(sp_builder *b, sp_value *const *vs, int n, int dim) {
  const sp_type *t = vs[0]->type;
  int64_t dims[SP_MAX_RANK];
  if (t->rank > SP_MAX_RANK) return NULL;
  for (int i = 0; i < t->rank; i++) dims[i] = t->dims[i];
  for (int k = 1; k < n; k++) dims[dim] += vs[k]->type->dims[dim];
  sp_type *rt = sp_build_type_with_dims(b->m->arena, t, dims);
  sp_op *op = rt ? sp_op_create(b->m->arena, "stablehlo.concatenate", n, vs, 1, &rt, 0) : NULL;
  sp_attr at = {.name = "dimension", .kind = SP_ATTR_INT, .u.i = dim};
  if (!op || sp_attrs_set(b->m->arena, &op->attrs, &at)) return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}

sp_value *sp_build_dynamic_slice(sp_builder *b, sp_value *v, sp_value *const *starts, const int64_t *sizes) {
  const sp_type *t = v->type;
  sp_value *ops[SP_MAX_RANK + 1];
  if (t->rank > SP_MAX_RANK) return NULL;
  ops[0] = v;
  for (int i = 0; i < t->rank; i++) ops[i + 1] = starts[i];
  sp_type *rt = sp_build_type_with_dims(b->m->arena, t, sizes);
  sp_op *op = rt ? sp_op_create(b->m->arena, "stablehlo.dynamic_slice", t->rank + 1, ops, 1, &rt, 0) : NULL;
  if (!op || sp_build_set_ints(b->m, op, "slice_sizes", sizes, t->rank)) return NULL;
  sp_build_place(b, op);
  return &op->results[0];
}
