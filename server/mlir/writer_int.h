/*
 * writer_int.h - the printer state and the helpers shared by the op formats (internal to
 * server/mlir).
 *
 * writer.c prints modules, regions, the generic op form and attribute dictionaries; the custom
 * forms live in format_*.c and use the helpers below. Everything is appended to one string
 * builder; indentation is two spaces per region level, as in MLIR.
 */
#ifndef SP_MLIR_WRITER_H
#define SP_MLIR_WRITER_H

#include <stdbool.h>

#include "ir/ir.h"
#include "ir/strbuf.h"
#include "mlir/names_int.h"

typedef struct sp__mlir_writer {
  sp_strbuf *out;
  const sp_module *m;
  sp__mlir_namer *names;
  int indent;                  /* current region depth */
  const char *default_dialect; /* "func" inside a func.func body: `return`, `call` */
} sp__mlir_writer;

static inline void sp__mlir_w_puts(sp__mlir_writer *w, const char *s) { sp_strbuf_puts(w->out, s); }
static inline void sp__mlir_w_putc(sp__mlir_writer *w, char c) { sp_strbuf_putc(w->out, c); }
/* Newline plus the current indentation. */
void sp__mlir_w_newline(sp__mlir_writer *w);

/* The op name, without the default dialect prefix ("return" for func.return in a func). */
void sp__mlir_w_op_name(sp__mlir_writer *w, const sp_op *op);
/* %name of a value. */
void sp__mlir_w_value(sp__mlir_writer *w, const sp_value *v);
/* Operands [from, to) joined by ", ". */
void sp__mlir_w_operands(sp__mlir_writer *w, const sp_op *op, int from, int to);
/* " %a, %b" when the op has operands, nothing otherwise. */
void sp__mlir_w_operands_lead(sp__mlir_writer *w, const sp_op *op);
void sp__mlir_w_type(sp__mlir_writer *w, const sp_type *t);
/* Types of operands [from, to) / of all results, joined by ", ". */
void sp__mlir_w_operand_types(sp__mlir_writer *w, const sp_op *op, int from, int to);
void sp__mlir_w_result_types(sp__mlir_writer *w, const sp_op *op);
/* (T, T) -> R  or  (T) -> (R1, R2) */
void sp__mlir_w_function_type(sp__mlir_writer *w, const sp_op *op);
/* One type when every operand and the single result share it, else the function type. */
void sp__mlir_w_same_or_function_type(sp__mlir_writer *w, const sp_op *op);
/* name @symbol(%a, %b) {attrs} : (T, T) -> R, the symbol taken from the op's attribute
 * `symbol_attr`, which the dictionary leaves out (func.call, stablehlo.custom_call). */
void sp__mlir_w_symbol_call(sp__mlir_writer *w, const sp_op *op, const char *symbol_attr,
                            const char *symbol);
/* %arg0: tensor<...> (with the value's attributes, sharding first-class) */
void sp__mlir_w_arg_decl(sp__mlir_writer *w, const sp_value *v);

/* " {a = 1 : i64, sdy.sharding = ...}" : the op's attributes minus `elided` (NULL-terminated
 * list), plus the results' shardings as `sdy.sharding` unless that name is elided; sorted by
 * name; nothing when empty. `keyword` prints " attributes {...}". */
void sp__mlir_w_attr_dict(sp__mlir_writer *w, const sp_op *op, const char *const *elided,
                          bool keyword);
/* A value's own dictionary (function arguments and results): sharding + other attributes. */
void sp__mlir_w_value_attrs(sp__mlir_writer *w, const sp_sharding *sharding,
                            const sp_attrs *attrs);
/* An attribute value as MLIR spells it generically (structured kinds per the schema). */
void sp__mlir_w_attr_value(sp__mlir_writer *w, sp_op_kind kind, const sp_attr *a);
/* [{"x"}, {}] (per-dim axis lists) and [{"x"}: 0->1, ...] (sdy.all_to_all params). */
void sp__mlir_w_dim_axes(sp__mlir_writer *w, const sp_dim_sharding *v, int n);
void sp__mlir_w_all_to_all_params(sp__mlir_writer *w, const sp_all_to_all_param *v, int n);
/* <@mesh, [...]> and [<...>, <...>] */
void sp__mlir_w_sharding(sp__mlir_writer *w, const sp_sharding *s);
void sp__mlir_w_shardings(sp__mlir_writer *w, sp_sharding *const *v, int n);
/* The sharding of each result, with fully open placeholders for results without one; false
 * when no result has a sharding. */
bool sp__mlir_w_result_shardings(sp__mlir_writer *w, const sp_op *op);

/* [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] from the convolution's dimension attributes. */
void sp__mlir_w_conv_dims(sp__mlir_writer *w, const sp_op *op);

/* "{" newline ops "}" ; entry block arguments as ^bb0(...): when asked. */
void sp__mlir_w_region(sp__mlir_writer *w, const sp_region *r, bool entry_args);
/* One op on the current line, with its results: the custom form if it has one and applies,
 * else the generic form. */
void sp__mlir_w_op(sp__mlir_writer *w, const sp_op *op);
/* "dialect.op"(operands) <{props}> (regions) {attrs} : type */
void sp__mlir_w_generic_op(sp__mlir_writer *w, const sp_op *op);

#endif /* SP_MLIR_WRITER_H */
