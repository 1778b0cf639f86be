/*
 * attr_schema_int.h - which attributes of which ops the MLIR front-end stores in structured form,
 * and how MLIR spells them (internal to server/mlir).
 *
 * The reader consults the schema to turn generic text such as `dimension = 0 : i64` or
 * `dimension_numbers = #stablehlo.gather<...>` into the structured attributes named in
 * ir/op_attrs.h; the writer consults it to spell them back (`array<i64: 1, 2>`,
 * `#stablehlo<comparison_direction LT>`) and to know which attributes are inherent to an op
 * (printed inside `<{...}>` in MLIR's generic form). Attributes that are not listed stay
 * verbatim text and are printed as discardable attributes.
 *
 * Composite attributes (the dimension-number structs) expand into several structured
 * attributes; their parts are listed with form SUB and `extra` naming the composite.
 */
#ifndef SP_MLIR_ATTR_SCHEMA_H
#define SP_MLIR_ATTR_SCHEMA_H

#include <stdbool.h>

#include "ir/ir.h"

typedef enum sp__mlir_attr_form {
  SP__FORM_TEXT,          /* kept verbatim; listed only to mark it inherent */
  SP__FORM_INT,           /* `N : <extra>` (extra = integer type, "i64" if NULL) */
  SP__FORM_INTS_ARRAY,    /* array<i64: 1, 2> */
  SP__FORM_INTS_PAIRS,    /* dense<[[lo, hi], ...]> : tensor<Nx2xi64> */
  SP__FORM_BOOL,          /* true | false */
  SP__FORM_STR,           /* "string" */
  SP__FORM_SYMBOL,        /* @name */
  SP__FORM_ENUM,          /* <extra> VALUE>, e.g. extra = "#stablehlo<comparison_direction" */
  SP__FORM_GATHER_DIMS,   /* #stablehlo.gather<...>  (composite) */
  SP__FORM_SCATTER_DIMS,  /* #stablehlo.scatter<...> (composite) */
  SP__FORM_DOT_DIMS,      /* #stablehlo.dot<...>     (composite) */
  SP__FORM_CONV_DIMS,     /* #stablehlo.conv<...>    (composite) */
  SP__FORM_SUB            /* a part of the composite named by `extra` */
} sp__mlir_attr_form;

typedef struct sp__mlir_attr_schema {
  sp_op_kind op;
  const char *name;
  sp__mlir_attr_form form;
  bool inherent;
  const char *extra;
} sp__mlir_attr_schema;

/* The entry for attribute `name` of an op of `kind`, or NULL. */
const sp__mlir_attr_schema *sp__mlir_schema_find(sp_op_kind kind, const char *name);

/* The parts of a composite, in MLIR's printing order; `is_int[i]` marks the parts that are single
 * integers (index_vector_dim). Returns the number of parts and fills `names` (up to 8). */
int sp__mlir_schema_parts(sp__mlir_attr_form form, const char **names, bool *is_int);

#endif /* SP_MLIR_ATTR_SCHEMA_H */
