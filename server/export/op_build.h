/*
 * op_build.h - building the StableHLO ops the export passes emit (constants, slices, pads,
 * concatenates, index arithmetic) at one place in a module.
 *
 * A builder places each new op either before an anchor op (`before`) or at the end of a block
 * (`block`, when set), with the location `loc`. Every builder returns the new op's result, or
 * NULL on out-of-memory (nothing is placed then). Index arrays have one entry per dim of the
 * value; attributes are written in the structured form the printer expects.
 *
 * Memory: ops, types and attributes in the module's arena.
 */
#ifndef SP_EXPORT_OP_BUILD_H
#define SP_EXPORT_OP_BUILD_H

#include <stdint.h>

#include "ir/ir.h"

typedef struct sp_builder {
  sp_module *m;
  sp_op *before;     /* new ops go right before it ... */
  sp_block *block;   /* ... or at the end of this block when set */
  sp_loc loc;
} sp_builder;

/* Places a detached op as the builder says (and gives it the builder's location). */
void sp_build_place(sp_builder *b, sp_op *op);
/* Sets an int-list attribute (copied). SP_OK or SP_ENOMEM. */
int sp_build_set_ints(sp_module *m, sp_op *op, const char *name, const int64_t *v, int n);
/* Sets a verbatim-text attribute (not copied). SP_OK or SP_ENOMEM. */
int sp_build_set_text(sp_module *m, sp_op *op, const char *name, const char *text);
/* `dense<0>` in the spelling of element type `elem` (dense<false>, dense<0.000000e+00>...). */
const char *sp_build_zero_text(const char *elem);
/* `t` with other dims (same rank and element type). */
sp_type *sp_build_type_with_dims(sp_arena *a, const sp_type *t, const int64_t *dims);

/* A one-result op `name` of result type `t` on `operands`, without attributes. */
sp_value *sp_build_op(sp_builder *b, const char *name, int n, sp_value *const *operands, sp_type *t);
/* stablehlo.constant of type `t` holding `dense` (e.g. "dense<[1, 2]>"). */
sp_value *sp_build_constant(sp_builder *b, sp_type *t, const char *dense);
/* stablehlo.constant dense<0> of type `t` (any element type). */
sp_value *sp_build_zeros(sp_builder *b, sp_type *t);
/* stablehlo.constant dense<v> : tensor<i64>. */
sp_value *sp_build_i64(sp_builder *b, int64_t v);
/* A binary elementwise op (stablehlo.add, ...) of x's type. */
sp_value *sp_build_binary(sp_builder *b, const char *name, sp_value *x, sp_value *y);
/* stablehlo.slice [start:limit] with unit strides. */
sp_value *sp_build_slice(sp_builder *b, sp_value *v, const int64_t *start, const int64_t *limit);
/* stablehlo.pad of `v` with `value`. */
sp_value *sp_build_pad(sp_builder *b, sp_value *v, sp_value *value, const int64_t *low,
                       const int64_t *high, const int64_t *interior);
/* stablehlo.concatenate of `n` values along `dim`. */
sp_value *sp_build_concat(sp_builder *b, sp_value *const *vs, int n, int dim);
/* stablehlo.dynamic_slice of `v` at the scalar i64 `starts` (one per dim), of `sizes`. */
sp_value *sp_build_dynamic_slice(sp_builder *b, sp_value *v, sp_value *const *starts, const int64_t *sizes);

#endif /* SP_EXPORT_OP_BUILD_H */
