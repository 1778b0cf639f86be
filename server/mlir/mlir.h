/*
 * mlir.h - the MLIR text front-end: StableHLO + sdy reader and printer.
 *
 * The reader accepts the subset used by Shardy's propagation tests (pretty and generic op
 * forms, regions and blocks, multi-result values, inline and symbol meshes, every sdy
 * attribute) and builds the IR of ir/ir.h; the printer writes a module back in the textual
 * form sdy_opt prints. The printer works from the IR only: shardings, types, rules and
 * structured attributes are printed from their structured form; uninterpreted attributes are
 * printed back verbatim.
 *
 * Errors name the place and what was expected: "model.mlir:12:7: expected ']' in sharding".
 * No input crashes or hangs the reader; nesting and sizes are bounded by sp_limits.h.
 *
 * Memory: a parsed module owns its arena (free it with sp_module_free). Printing allocates in
 * the caller's string builder only.
 */
#ifndef SP_MLIR_H
#define SP_MLIR_H

#include <stddef.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/strbuf.h"

/* Parses one module from `text` (`len` bytes, need not be NUL-terminated). `filename` is used
 * in messages; `first_line` is the line number of text[0] in that file (1 for a whole file;
 * larger for a `// -----` chunk) so that positions point into the original file.
 * On success *out is a new module and SP_OK is returned; on failure *out is NULL and `err`
 * holds "file:line:col: message". */
int sp_mlir_parse(const char *text, size_t len, const char *filename, int first_line,
                  sp_module **out, sp_err *err);

/* Which ops, attributes and types of dialects other than the registered ones (builtin, func,
 * sdy, stablehlo, chlo, mhlo, arith: sdy_opt's, the dialects JAX emits) the reader accepts:
 *   SP_MLIR_ANY_DIALECT          all (sp_mlir_parse; the daemon and the engine): an op of an
 *                                unknown dialect, in either form, is an op without a sharding
 *                                rule, planned around with a warning, and unknown attributes
 *                                and types are kept as text;
 *   SP_MLIR_REGISTERED_DIALECTS  as mlir-opt: none. A custom-form op of another dialect is
 *                                "Dialect `foo' not found for custom op 'foo.bar' ", a
 *                                generic-form one "operation being parsed with an unregistered
 *                                dialect. ...", an attribute `#foo.x` or a type `!foo.x` MLIR's
 *                                "... created with unregistered dialect. ...";
 *   SP_MLIR_UNREGISTERED_GENERIC as mlir-opt -allow-unregistered-dialect: their ops in the
 *                                generic form ("foo.bar"(...)), their attributes and types; a
 *                                custom-form op still has no parser, as in MLIR.
 * Ops of a registered dialect that the engine does not model are accepted in every mode. */
typedef enum sp_mlir_dialects {
  SP_MLIR_ANY_DIALECT = 0,
  SP_MLIR_REGISTERED_DIALECTS,
  SP_MLIR_UNREGISTERED_GENERIC
} sp_mlir_dialects;

/* sp_mlir_parse accepting the dialects `d` says. */
int sp_mlir_parse_dialects(const char *text, size_t len, const char *filename, int first_line,
                           sp_mlir_dialects d, sp_module **out, sp_err *err);

/* Appends the module's text, in sdy_opt's form, to `out`. */
int sp_mlir_print(const sp_module *m, sp_strbuf *out, sp_err *err);

/* One `// -----` chunk of a file: [begin, begin+len) of the text, starting at `first_line`. */
typedef struct sp_mlir_chunk {
  const char *begin;
  size_t len;
  int first_line;
} sp_mlir_chunk;

/* Splits `text` at lines that consist of `// -----` (as mlir-opt -split-input-file does).
 * Fills at most `max` chunks and returns how many there are (which may exceed `max`). */
int sp_mlir_split(const char *text, size_t len, sp_mlir_chunk *chunks, int max);

/* The printed names of a module's values ("%arg0", "%3", "%2#1"), as sp_mlir_print names
 * them: built once (sp_mlir_names_new), then looked up per value. The module must not change
 * while the names are in use. Owned by the caller; free with sp_mlir_names_free. */
typedef struct sp_mlir_names sp_mlir_names;
int sp_mlir_names_new(const sp_module *m, sp_mlir_names **out, sp_err *err);
void sp_mlir_names_value(const sp_mlir_names *n, sp_strbuf *sb, const sp_value *v);
void sp_mlir_names_free(sp_mlir_names *n);

#endif /* SP_MLIR_H */
