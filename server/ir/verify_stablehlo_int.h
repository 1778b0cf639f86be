/*
 * verify_stablehlo_int.h - helpers shared by the files of StableHLO's verifier checks
 * (verify_stablehlo.c: dispatch, element-wise and shape ops; verify_stablehlo_index.c: gather,
 * scatter, dynamic slices; verify_stablehlo_window.c: pad, windows, convolution;
 * verify_stablehlo_region.c: sort, while, if, case; verify_stablehlo_ops.c: bitcast_convert,
 * dot, fft, reverse, linear algebra, batch_norm, rng_bit_generator, top-k, custom calls;
 * verify_stablehlo_collective.c: the collectives; verify_stablehlo_tuple.c: tuples, tokens
 * and the other ops without a rule). Internal to server/ir.
 *
 * Every check returns SP_OK or SP_EINVAL through sp__verify_op_fail ("FILE:L:C: 'OP' op ...").
 * Shapes are compared only where they are static. Nothing is allocated, except the scratch
 * tables of verify_stablehlo_collective.c (freed before it returns).
 */
#ifndef SP_VERIFY_STABLEHLO_INT_H
#define SP_VERIFY_STABLEHLO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "ir/sp_limits.h"
#include "ir/verify.h"

/* A ranked tensor type whose dims are all known. */
bool sp__vs_static(const sp_type *t);
const sp_type *sp__vs_operand(const sp_op *op, int i);
/* The type as MLIR prints it ("tensor<4x8xf32>"), cut to `cap`. */
void sp__vs_text(const sp_type *t, char *buf, size_t cap);
/* Exactly `noperands` operands (< 0: any number) and `nresults` results. */
int sp__vs_counts(const sp_module *m, const sp_op *op, int noperands, int nresults, sp_err *err);
/* The INTS attribute `name`; false (and an empty list) when absent. */
bool sp__vs_ints(const sp_op *op, const char *name, sp_ints *out);
/* Each of `l` in [0, rank) and not yet marked in `seen` (then marked). */
int sp__vs_dims_in_range(const sp_module *m, const sp_op *op, const char *what, const sp_ints *l,
                         int rank, bool *seen, sp_err *err);
/* Result `i`, when static, has the inferred shape `dims` (rank `rank`) with element type
 * `elem` (NULL: any); else MLIR's "inferred type(s) 'T' are incompatible with return type(s)
 * of operation 'R'". */
int sp__vs_result_shape(const sp_module *m, const sp_op *op, int i, const int64_t *dims,
                        int rank, const char *elem, sp_err *err);
/* Two types agree: same kind, rank, element type and every dim known in both. */
bool sp__vs_compatible(const sp_type *a, const sp_type *b);
/* The output size of a window over one dimension (StableHLO's inferWindowOutputShape): the
 * input of `size`, dilated by `base_dil`, padded by lo and hi, under a window of `window`
 * dilated by `win_dil`, moved by `stride`. False when an intermediate value overflows int64
 * or the padded size is negative. */
bool sp__vs_window_out(int64_t size, int64_t base_dil, int64_t lo, int64_t hi, int64_t window,
                       int64_t win_dil, int64_t stride, int64_t *out);

int sp__verify_gather(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_scatter(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_dynamic_slice(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_dynamic_update_slice(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_pad(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_reduce_window(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_select_and_scatter(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_convolution(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_sort(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_while(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_if_case(const sp_module *m, const sp_op *op, sp_err *err);
/* The kinds of verify_stablehlo_ops.c, verify_stablehlo_collective.c and
 * verify_stablehlo_tuple.c (SP_OK for any other kind). */
int sp__verify_stablehlo_ops(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_collective(const sp_module *m, const sp_op *op, sp_err *err);
int sp__verify_tuple_token(const sp_module *m, const sp_op *op, sp_err *err);

#endif /* SP_VERIFY_STABLEHLO_INT_H */
