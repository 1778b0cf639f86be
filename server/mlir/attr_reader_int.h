/*
 * attr_reader_int.h - helpers shared by the files of the attribute reader (internal to
 * server/mlir): attr_reader.c (entries, dictionaries), attr_text.c (normalised text),
 * attr_stablehlo.c (structured StableHLO), attr_sdy.c (sdy attributes; uses only reader_int.h).
 *
 * Same error style and memory rules as reader_int.h: SP_OK or a negative sp_status, the first error
 * recorded in p->err, results in the module's arena.
 */
#ifndef SP_MLIR_ATTR_READER_INT_H
#define SP_MLIR_ATTR_READER_INT_H

#include "ir/ir.h"
#include "mlir/attr_schema_int.h"
#include "mlir/reader_int.h"

/* The element type of a typed value: "f32" for tensor<2xf32> or f32 (NULL otherwise). */
const char *sp__mlir_elem_of(const sp_type *t);
/* An attribute-dictionary key: bare identifier or string, interned into *out. */
int sp__mlir_attr_key(sp__mlir_parser *p, const char **out);
/* Decodes `name` of an op per its schema entry `s` into `dst` (attr_stablehlo.c). */
int sp__mlir_decode_structured(sp__mlir_parser *p, const sp__mlir_attr_schema *s, const char *name,
                               sp_attrs *dst);

/* One piece of a dense<...> body in reading order: attr_text.c collects them, dense_check.c
 * checks them against the literal's type. */
typedef struct sp__mlir_dense_item {
  int kind;                 /* 0 leaf, 1 open '[' (tok is the bracket), 2 close ']' */
  bool neg, neg2;
  sp__mlir_token tok, tok2; /* tok2: imaginary part of a complex leaf */
  bool complex;
} sp__mlir_dense_item;
/* Checks the `n` items of a dense literal (keyword token `at`) against `type` (NULL when the
 * literal has none) as MLIR's parser does: shape, splat, hex byte count, element kinds and
 * ranges (dense_check.c). */
int sp__mlir_dense_check(sp__mlir_parser *p, const sp__mlir_token *at, const sp__mlir_dense_item *v,
                         int n, const sp_type *type);
/* Checks one element of an array<elem: ...> literal against its element type, with the
 * messages of a dense literal's elements (dense_check.c). */
int sp__mlir_dense_check_scalar(sp__mlir_parser *p, bool neg, const sp__mlir_token *t,
                                const char *elem);

#endif /* SP_MLIR_ATTR_READER_INT_H */
