/*
 * spelling_int.h - how MLIR spells literals: strings, symbols, names, floats, integer lists
 * (internal to server/mlir; shared by the reader, which normalises uninterpreted attributes to
 * MLIR's printed form, and the writer).
 */
#ifndef SP_MLIR_SPELLING_H
#define SP_MLIR_SPELLING_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "ir/strbuf.h"

/* "text" with MLIR's escapes: printable ASCII as is except '"' and '\\', others as \XX. */
void sp__mlir_put_string(sp_strbuf *sb, const char *s, size_t n);
/* @name, or @"name" when name is not a bare identifier. */
void sp__mlir_put_symbol(sp_strbuf *sb, const char *name);
/* An attribute name in a dictionary: bare if possible, else quoted. */
void sp__mlir_put_attr_name(sp_strbuf *sb, const char *name);
/* MLIR bare identifier: [a-zA-Z_][a-zA-Z0-9_$.]* */
bool sp__mlir_is_bare_id(const char *s);
/* A float as MLIR prints it for a type of `bits` width: 1.000000e+00 when that reads back
 * exactly, the shortest exact decimal otherwise, hex bit patterns for inf and NaN. */
void sp__mlir_put_float(sp_strbuf *sb, double v, int bits);
/* 1, 2, 3 */
void sp__mlir_put_ints(sp_strbuf *sb, const int64_t *v, int n);
/* Width of a float element type name (f16, bf16, f32, f64, f8E4M3FN, ...); 0 if not a float. */
int sp__mlir_float_bits(const char *elem);
/* Is this an integer element type name (i1, i32, ui8, si16, index)? */
bool sp__mlir_is_int_elem(const char *elem);

#endif /* SP_MLIR_SPELLING_H */
