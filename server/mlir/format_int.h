/*
 * format_int.h - the custom ("pretty") syntax of each op: one parser and one printer per op kind
 * (internal to server/mlir).
 *
 * The table maps an op kind to the pair that reads and writes its custom assembly form, so the
 * two directions of one syntax live side by side (format_builtin.c: module, func;
 * format_sdy.c: the sdy dialect; format_sdy_collectives.c: its collectives; format_stablehlo*.c: StableHLO). Kinds without an entry are
 * read with the permissive fallback syntax and printed in MLIR's generic form.
 *
 * A printer returns false, having written nothing, when the op does not have the shape its
 * custom form needs (an sdy.sharding_constraint with two operands, say); the writer then uses
 * the generic form, so the printer never loses information.
 */
#ifndef SP_MLIR_FORMAT_H
#define SP_MLIR_FORMAT_H

#include <stdbool.h>

#include "ir/ir.h"
#include "mlir/reader_int.h"
#include "mlir/writer_int.h"

typedef int (*sp__mlir_parse_fn)(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
typedef bool (*sp__mlir_print_fn)(sp__mlir_writer *w, const sp_op *op);

typedef struct sp__mlir_format {
  sp_op_kind kind;
  sp__mlir_parse_fn parse;
  sp__mlir_print_fn print;
} sp__mlir_format;

/* The format of `kind`, or NULL when it has no custom syntax. */
const sp__mlir_format *sp__mlir_format_for(sp_op_kind kind);

/* `%a, %b : T, T` terminators (func.return, stablehlo.return, sdy.return). */
int sp__mlir_parse_return_like(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_return_like(sp__mlir_writer *w, const sp_op *op);

/* `{attrs} dense<...> : T` (stablehlo.constant, sdy.constant); the value is attribute "value". */
int sp__mlir_parse_constant_like(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_constant_like(sp__mlir_writer *w, const sp_op *op);

/* The per-family tables (terminated by an entry with kind SP_OP_UNKNOWN). */
extern const sp__mlir_format sp__mlir_builtin_formats[];
extern const sp__mlir_format sp__mlir_sdy_formats[];
extern const sp__mlir_format sp__mlir_sdy_collective_formats[];
extern const sp__mlir_format sp__mlir_stablehlo_formats[];

#endif /* SP_MLIR_FORMAT_H */
