/*
 * reader_int.h - the parser state and the helpers shared by the pieces of the MLIR reader
 * (internal to server/mlir).
 *
 * reader.c owns the structure: the module, operations, regions, blocks, argument lists;
 * reader_tokens.c errors, tokens and literals; reader_names.c interned names, op kinds,
 * aliases, SSA names and their scopes; reader_generic.c building ops and the generic and
 * fallback forms; type_reader.c parses types; attr_*.c attributes (attr_reader.c entries and dictionaries, attr_sdy.c sdy,
 * attr_stablehlo.c stablehlo structured, attr_text.c everything else as normalised verbatim
 * text); format_*.c the custom ("pretty") syntax of each op.
 *
 * Error style: every helper returns SP_OK or a negative sp_status; the first error is recorded
 * in p->err as "file:line:col: message" (later errors never overwrite it) and parsing unwinds.
 *
 * Memory: the IR goes into the module's arena (p->a); temporary vectors into p->tmp, which is
 * freed when parsing ends. Names and token text point into the input text while parsing.
 */
#ifndef SP_MLIR_READER_H
#define SP_MLIR_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "mlir/lexer_int.h"
#include "mlir/mlir.h"

typedef struct sp__mlir_names sp__mlir_names;   /* SSA name scopes (reader_names.c) */
typedef struct sp__mlir_tables sp__mlir_tables; /* aliases, interned names, op kinds (reader_names.c) */

typedef struct sp__mlir_parser {
  sp__mlir_lexer lx;
  sp_module *m;
  sp_arena *a;            /* the module's arena */
  sp_arena *tmp;          /* scratch, freed after parsing */
  sp_err *err;
  const char *filename;
  int first_line;         /* line of text[0] in the file */
  int depth;              /* current nesting (regions, brackets), <= SP_MAX_NESTING */
  int64_t nops;           /* ops created so far, <= SP_MAX_OPS */
  bool failed;
  int trial;              /* > 0 while trying an optional parse: errors are not recorded */
  sp_mlir_dialects dialects; /* which unregistered dialects are accepted (mlir.h) */
  sp__mlir_names *names;
  sp__mlir_tables *tables;
} sp__mlir_parser;

/* Growable arrays in p->tmp. */
typedef struct sp__mlir_values { sp_value **v; int n, cap; } sp__mlir_values;
typedef struct sp__mlir_types { sp_type **v; int n, cap; } sp__mlir_types;
int sp__mlir_values_push(sp__mlir_parser *p, sp__mlir_values *vec, sp_value *v);
int sp__mlir_types_push(sp__mlir_parser *p, sp__mlir_types *vec, sp_type *t);

/* ---- errors and tokens (reader_tokens.c) ---- */

/* Records "file:line:col: message" at token `at` (NULL = the current token); returns
 * SP_EINVAL (or `code` for the _code variant). */
int sp__mlir_error(sp__mlir_parser *p, const sp__mlir_token *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sp__mlir_error_code(sp__mlir_parser *p, int code, const sp__mlir_token *at,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Same, at the lexer cursor (for character-level scanners). */
int sp__mlir_error_here(sp__mlir_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int sp__mlir_oom(sp__mlir_parser *p);
/* After a failure `rc`, adds a line to the error naming what was being parsed around it
 * (MLIR's "failed to parse X parameter 'y'" chain); the lines share the first one's place.
 * Returns rc. */
int sp__mlir_error_context(sp__mlir_parser *p, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A lexer error becomes a parse error at the first use of the bad token: SP_OK unless the
 * current token is SP_TOK_ERROR. */
int sp__mlir_check_token(sp__mlir_parser *p);
static inline sp__mlir_tok_kind sp__mlir_kind(const sp__mlir_parser *p) { return p->lx.tok.kind; }
static inline const sp__mlir_token *sp__mlir_tok(const sp__mlir_parser *p) { return &p->lx.tok; }
void sp__mlir_next(sp__mlir_parser *p);
bool sp__mlir_accept(sp__mlir_parser *p, sp__mlir_tok_kind kind);
/* Accepts a bare identifier spelled `word`. */
bool sp__mlir_accept_word(sp__mlir_parser *p, const char *word);
/* Consumes a token of `kind` or fails with "expected 'X' in <context>". */
int sp__mlir_expect(sp__mlir_parser *p, sp__mlir_tok_kind kind, const char *context);
int sp__mlir_expect_word(sp__mlir_parser *p, const char *word, const char *context);
/* The spelling of a punctuation kind ("']'"). */
const char *sp__mlir_kind_spelling(sp__mlir_tok_kind kind);
/* Nesting guard: every recursive parser calls enter() first and leave() on the way out. */
int sp__mlir_enter(sp__mlir_parser *p);
static inline void sp__mlir_leave(sp__mlir_parser *p) { p->depth--; }

/* One piece of a bracketed text at the lexer cursor (not whitespace): a whole string literal,
 * the arrow "->", or one character. Brackets <([{ deepen *depth (SP_ELIMIT past
 * SP_MAX_NESTING, "`what` nested too deeply") and >)]} return from it ("unbalanced" below
 * zero); *closed tells that a closing bracket brought *depth back to zero. The piece is
 * [*piece, *piece + *len); the cursor moves past it (the current token is left as it was). */
int sp__mlir_scan_bracketed(sp__mlir_parser *p, const char *what, int *depth, const char **piece,
                            size_t *len, bool *closed);

/* Literals. parse_int accepts an optional '-' and checks the int64 range. */
int sp__mlir_parse_int(sp__mlir_parser *p, int64_t *out, const char *context);
/* Decodes the string token under the cursor (escapes resolved) into the module arena. */
int sp__mlir_parse_string(sp__mlir_parser *p, const char **out, size_t *len, const char *context);
/* `@name` or `@"name"` under the cursor: the name without '@' (module arena). */
int sp__mlir_parse_symbol(sp__mlir_parser *p, const char **out);
/* Whether the dialect of `name` (its text up to the first '.', of [name, name+n)) is one the
 * reader treats as registered (mlir.h). */
bool sp__mlir_dialect_registered(const char *name, size_t n);
/* SP_OK when the parser's mode accepts an attribute (`#`) or type (`!`) of the dialect of
 * [s, s+n) (the whole text from the sigil, `#foo.bar<...>`); else MLIR's error at `at`. */
int sp__mlir_check_dialect_symbol(sp__mlir_parser *p, const sp__mlir_token *at, const char *s,
                                  size_t n);
/* Is [s, s+n) a valid op name (`dialect.op`, identifier characters)? */
bool sp__mlir_valid_op_name(const char *s, size_t n);
/* Skips a trailing `loc(...)` if present. */
int sp__mlir_skip_loc(sp__mlir_parser *p);

/* ---- name tables (reader_names.c) ---- */

/* Allocates p->names and p->tables, empty, in p->tmp (SP_ENOMEM when out of memory). */
int sp__mlir_tables_new(sp__mlir_parser *p);
/* A copy of the token text in the module arena (interned for repeated names). */
const char *sp__mlir_intern(sp__mlir_parser *p, const char *s, size_t n);
/* The op kind of a name returned by sp__mlir_intern (SP_OP_UNKNOWN for unregistered names). */
sp_op_kind sp__mlir_op_kind_of(sp__mlir_parser *p, const char *interned);
/* `#name = attr` or `!name = type` at the top level, the alias token under the cursor.
 * Location aliases are skipped; others are remembered by position and re-read where used. */
int sp__mlir_parse_alias_def(sp__mlir_parser *p);
/* The text position of the value of alias `#name` / `!name` (token `t`), or NULL. */
const char *sp__mlir_alias_lookup(sp__mlir_parser *p, const sp__mlir_token *t, bool is_type);
/* SSA scopes: push_isolated/pop_isolated bracket an isolated-from-above region; a region of any
 * other op takes names_mark() on entry and names_truncate() to it on exit. */
int sp__mlir_names_push_isolated(sp__mlir_parser *p);
void sp__mlir_names_pop_isolated(sp__mlir_parser *p);
int sp__mlir_names_mark(const sp__mlir_parser *p);
void sp__mlir_names_truncate(sp__mlir_parser *p, int mark);
/* Binds `%name` (token `t`) to `count` values starting at `first` ("redefinition of SSA value"
 * if the scope has it already). */
int sp__mlir_names_define(sp__mlir_parser *p, const sp__mlir_token *t, sp_value *first,
                          int count);

/* ---- types (type_reader.c) ---- */

int sp__mlir_parse_type(sp__mlir_parser *p, sp_type **out);
/* type (',' type)*  */
int sp__mlir_parse_type_list(sp__mlir_parser *p, sp__mlir_types *out);
/* '(' types ')' '->' (type | '(' types ')') */
int sp__mlir_parse_function_type(sp__mlir_parser *p, sp__mlir_types *ins, sp__mlir_types *outs);
/* Either a functional type (`(T, T) -> R`; `T -> R` for one operand and `T, T -> R` for
 * several, as CHLO prints them) or one type that stands for every operand and the single
 * result (StableHLO's SameOperandsAndResultType); fills `ins` with `nin` types in the last
 * case. */
int sp__mlir_parse_same_or_function_type(sp__mlir_parser *p, int nin, sp__mlir_types *ins,
                                         sp__mlir_types *outs);
/* Does the current token start a type? */
bool sp__mlir_at_type(const sp__mlir_parser *p);

/* ---- attributes (attr_reader.c, attr_sdy.c, attr_text.c, attr_stablehlo.c) ---- */

/* An optional `{name = value, ...}` dictionary; entries are added to `dst` (structured when
 * the schema for `kind` says so, see attr_schema_int.h). `props` marks a `<{...}>` dictionary. */
int sp__mlir_parse_attr_dict(sp__mlir_parser *p, sp_op_kind kind, sp_attrs *dst);
/* The dictionary itself, with the '{' under the cursor. */
int sp__mlir_parse_attr_dict_body(sp__mlir_parser *p, sp_op_kind kind, sp_attrs *dst);
/* One attribute value for entry `name` of an op of `kind` (structured if known). */
int sp__mlir_parse_attr_value(sp__mlir_parser *p, sp_op_kind kind, const char *name,
                              sp_attrs *dst);
/* Any attribute value, normalised to MLIR's printed text. `type_out` (may be NULL) receives the
 * type of a typed value such as `dense<1> : tensor<2xi32>` (NULL if untyped). `elide_i64`
 * drops `: i64` / `: f64` as MLIR does inside arrays. */
int sp__mlir_parse_attr_text(sp__mlir_parser *p, sp_strbuf *sb, bool elide_i64,
                             sp_type **type_out);

/* sdy attributes. The stripped forms are those inside sdy ops (`<@mesh, [...]>`). */
int sp__mlir_parse_mesh_body(sp__mlir_parser *p, sp_mesh **out);            /* <[...]> */
int sp__mlir_parse_sharding_stripped(sp__mlir_parser *p, sp_sharding **out); /* <@m, [...]> */
int sp__mlir_parse_shardings_stripped(sp__mlir_parser *p, int *n, sp_sharding ***out); /* [..] */
int sp__mlir_parse_axis_list(sp__mlir_parser *p, int *n, sp_axis_ref **out); /* {"a", "b"} */
int sp__mlir_parse_rule_body(sp__mlir_parser *p, sp_rule **out);  /* <(...)->(...) ...> */
/* A list of integers in square brackets: [1, -2, 3] (possibly empty). */
int sp__mlir_parse_int_list(sp__mlir_parser *p, sp_ints *out, const char *context);
/* Sets an attribute of the given kind on `dst`. */
int sp__mlir_set_ints(sp__mlir_parser *p, sp_attrs *dst, const char *name, sp_ints v);
int sp__mlir_set_int(sp__mlir_parser *p, sp_attrs *dst, const char *name, int64_t v);
int sp__mlir_set_attr(sp__mlir_parser *p, sp_attrs *dst, const sp_attr *at);
/* Parses `#stablehlo.conv` compact dims `[b, 0, f]x[o, i, 0]->[b, 0, f]` into `dst`. */
int sp__mlir_parse_conv_dims(sp__mlir_parser *p, sp_attrs *dst);

/* ---- values (reader_names.c), ops (reader_generic.c), regions (reader.c) ---- */

/* `%name` or `%name#k`: a use of a defined value. */
int sp__mlir_parse_operand(sp__mlir_parser *p, sp_value **out);
/* Zero or more comma-separated operands (stops at the first token that is not '%'). */
int sp__mlir_parse_operand_list(sp__mlir_parser *p, sp__mlir_values *out);

/* What the generic code knows about the op being parsed when a format parser is called. */
typedef struct sp__mlir_op_header {
  const char *name;         /* full name ("stablehlo.add") */
  sp_op_kind kind;
  sp__mlir_token name_tok;  /* for messages */
  int nbound;               /* number of result values named on the left of '=' */
} sp__mlir_op_header;

/* A block argument declared before its region is parsed: `%name: type`. */
typedef struct sp__mlir_arg {
  sp__mlir_token name;      /* the %name token */
  sp_type *type;
  sp_attrs attrs;           /* func arguments only */
  sp_sharding *sharding;    /* func arguments only */
} sp__mlir_arg;
typedef struct sp__mlir_args { sp__mlir_arg *v; int n, cap; } sp__mlir_args;
int sp__mlir_args_push(sp__mlir_parser *p, sp__mlir_args *vec, const sp__mlir_arg *arg);
/* `(%a: T, %b: T)`: a parenthesised argument list (names and types only). */
int sp__mlir_parse_arg_list(sp__mlir_parser *p, sp__mlir_args *out);

/* Parses `{ ... }` into a new region. `args` (may be NULL) are the entry block's arguments,
 * declared by the op's syntax before the region; when NULL, an entry block header
 * `^bb0(...):` is accepted. */
int sp__mlir_parse_region(sp__mlir_parser *p, const sp__mlir_args *args, sp_region **out);
/* Like parse_region, for an isolated-from-above op (func.func): outer values are invisible. */
int sp__mlir_parse_isolated_region(sp__mlir_parser *p, const sp__mlir_args *args,
                                   sp_region **out);

/* Creates the op and moves parsed pieces into it: `attrs` (may be NULL) are copied, regions
 * are moved (their blocks re-parented). Result shardings found in the attributes
 * (`sdy.sharding`, and the inline shardings of sdy ops) are moved onto the results. */
int sp__mlir_build_op(sp__mlir_parser *p, const sp__mlir_op_header *h, int noperands,
                      sp_value *const *operands, int nresults, sp_type *const *result_types,
                      int nregions, sp_region *const *regions, const sp_attrs *attrs,
                      sp_op **out);

/* The common end of a custom op form, ` {attrs}? : (operand types) -> result types`: checks
 * that the type lists one type per operand in `vals`, then builds the op as
 * sp__mlir_build_op does. */
int sp__mlir_finish_op(sp__mlir_parser *p, const sp__mlir_op_header *h,
                       const sp__mlir_values *vals, int nregions, sp_region *const *regions,
                       sp_attrs *attrs, sp_op **out);

/* The generic form, with the op-name string already consumed:
 *   ( operands ) <{props}>? ( regions )? {attrs}? : (types) -> types */
int sp__mlir_parse_generic_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);
/* A permissive custom form for ops without a registered format:
 *   operands {attrs}? : type-or-function-type */
int sp__mlir_parse_fallback_op(sp__mlir_parser *p, const sp__mlir_op_header *h, sp_op **out);

#endif /* SP_MLIR_READER_H */
