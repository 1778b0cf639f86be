/*
 * format_stablehlo_int.h - what the files of StableHLO's custom syntax share (internal to
 * server/mlir): format_stablehlo.c (pieces, their interpreter, the format table) exports its
 * literal / precision / int-list helpers; format_stablehlo_dot_conv.c (dot_general,
 * convolution) and format_stablehlo_region.c (custom_call, reduce, while) export their parser
 * and printer pairs to the table.
 *
 * Same conventions as format_int.h: parsers return SP_OK or a negative sp_status with the error in
 * p->err; printers return false, having written nothing, when the op lacks its custom shape.
 */
#ifndef SP_MLIR_FORMAT_STABLEHLO_INT_H
#define SP_MLIR_FORMAT_STABLEHLO_INT_H

#include <stdbool.h>

#include "ir/ir.h"
#include "mlir/reader_int.h"
#include "mlir/writer_int.h"

/* Consumes the tokens of literal text `s` (",", "=", "[", "]", ":", words). */
int sp__mlir_parse_literal(sp__mlir_parser *p, const char *s, const char *op);
/* Does literal `s` start at the current token? (`, lower` : a comma then the word) */
bool sp__mlir_literal_ahead(sp__mlir_parser *p, const char *s);
/* Sets TEXT attribute `name` to `s` (not copied: `s` must live in the module's arena). */
int sp__mlir_set_text(sp__mlir_parser *p, sp_attrs *dst, const char *name, const char *s);
/* `, precision = [DEFAULT, HIGH]` -> precision_config = [#stablehlo<precision DEFAULT>, ...] */
int sp__mlir_parse_precision(sp__mlir_parser *p, sp_attrs *attrs);
/* Precision names of a precision_config text, as "DEFAULT, HIGH"; false if not that shape. */
bool sp__mlir_precision_names(const char *s, sp_strbuf *out);
/* `[1, 2]` */
void sp__mlir_print_int_list(sp__mlir_writer *w, const sp_ints *v);

/* format_stablehlo_dot_conv.c */
int sp__mlir_parse_dot_general(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_dot_general(sp__mlir_writer *w, const sp_op *op);
int sp__mlir_parse_convolution(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_convolution(sp__mlir_writer *w, const sp_op *op);

/* format_stablehlo_region.c */
int sp__mlir_parse_custom_call(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_custom_call(sp__mlir_writer *w, const sp_op *op);
int sp__mlir_parse_reduce(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_reduce(sp__mlir_writer *w, const sp_op *op);
int sp__mlir_parse_while(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
bool sp__mlir_print_while(sp__mlir_writer *w, const sp_op *op);

#endif /* SP_MLIR_FORMAT_STABLEHLO_INT_H */
