/*
 * names_int.h - the printed names of SSA values and blocks, assigned the way MLIR's printer does
 * (internal to server/mlir).
 *
 * MLIR numbers values per region tree: every value of a region (entry block arguments are
 * "argN", other values %0, %1, ... in order), then the nested regions, each starting from the
 * counters where its parent region ended (so sibling regions reuse numbers). Some ops suggest
 * names (stablehlo.constant: "c" / "cst", stablehlo.while arguments: "iterArg",
 * stablehlo.rng_bit_generator: "output_state", "output"); a suggested name already visible in
 * an enclosing region gets a "_N" suffix from a per-subtree conflict counter.
 *
 * The namer is built once per print and owns its memory (malloc); the IR is not modified.
 */
#ifndef SP_MLIR_NAMES_H
#define SP_MLIR_NAMES_H

#include "ir/ir.h"
#include "ir/strbuf.h"

typedef struct sp__mlir_namer sp__mlir_namer;

/* Names every value and block nested in `top`. Returns SP_OK or SP_ENOMEM. */
int sp__mlir_namer_build(const sp_op *top, sp__mlir_namer **out);
void sp__mlir_namer_free(sp__mlir_namer *n);

/* Appends the use form of `v` ("%arg0", "%3", "%2#1", "%c_0"). */
void sp__mlir_namer_value(const sp__mlir_namer *n, sp_strbuf *sb, const sp_value *v);
/* Appends the left-hand side of an op with results ("%0 = ", "%1:2 = ", "%a, %b = "), or
 * nothing when the op has no results. */
void sp__mlir_namer_results(const sp__mlir_namer *n, sp_strbuf *sb, const sp_op *op);
/* Index of `b` within its region (printed ^bbN). */
int sp__mlir_namer_block(const sp__mlir_namer *n, const sp_block *b);

#endif /* SP_MLIR_NAMES_H */
