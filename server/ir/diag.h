/*
 * diag.h - diagnostics: the errors, warnings and remarks that passes report, with places.
 *
 * Passes do not print. A pass that has something to tell the user (a warning such as
 * "custom call @foo is unknown to SDY sharding rule registry", a remark) appends a diagnostic
 * to the module's list (sp_module.diags, set by the tool; NULL means nobody listens and the
 * diagnostic is dropped). Failures are still returned as sp_err; a tool turns those into error
 * diagnostics when it verifies them.
 *
 * Tools print a diagnostic as `FILE:LINE:COL: warning: message` (sp_diag_format), or, under
 * mlir-opt's -verify-diagnostics, match them against the `expected-error@+N {{text}}`
 * annotations of the input (sp_diag_verify): every expectation must be met by a diagnostic of
 * that severity on that line whose message contains the text, and every diagnostic must be
 * expected. Supported annotation forms: `expected-{error,warning,remark,note}` with an optional
 * `-re` suffix (the text between {{ }} is then a POSIX extended regex), a location `@+N`,
 * `@-N`, `@N` (absolute line), `@above`, `@below` or none (the annotation's own line), an
 * optional count (`expected-warning 2 {{...}}`), and several `{{...}}` texts are not
 * supported (only the first is used).
 *
 * Memory: a list owns its entries and message copies (malloc); sp_diag_list_free releases them.
 * On allocation failure the list latches `oom` and drops the diagnostic.
 */
#ifndef SP_DIAG_H
#define SP_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "ir/strbuf.h"

typedef enum sp_diag_severity {
  SP_DIAG_ERROR = 0,
  SP_DIAG_WARNING,
  SP_DIAG_REMARK,
  SP_DIAG_NOTE
} sp_diag_severity;

typedef struct sp_diag {
  sp_diag_severity severity;
  sp_loc loc;          /* line 0 = no place (the whole file) */
  char *msg;           /* malloc'd, NUL-terminated */
} sp_diag;

typedef struct sp_diag_list {
  int n, cap;
  sp_diag *v;
  bool oom;            /* a diagnostic was dropped for lack of memory */
} sp_diag_list;

void sp_diag_list_init(sp_diag_list *l);
void sp_diag_list_free(sp_diag_list *l);
/* Drops every entry, keeps the list usable. */
void sp_diag_list_clear(sp_diag_list *l);

/* Appends a diagnostic; `l` may be NULL (dropped). Returns SP_OK or SP_ENOMEM. */
int sp_diag_emit(sp_diag_list *l, sp_diag_severity sev, sp_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Shorthand: a diagnostic to the module's list (m->diags), dropped when it is NULL. */
int sp_module_warn(sp_module *m, sp_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sp_module_remark(sp_module *m, sp_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *sp_diag_severity_name(sp_diag_severity sev);   /* "error", "warning", ... */

/* The one located-error form: sets `err` to `code` and "FILE:LINE:COL: message" at `loc` in
 * module `m` ("FILE: message" when loc has no line), the form sp_err_set reads the place back
 * from (err->file/line/col). FILE is m->filename ("<input>" without one). Returns code. */
int sp_error_at(sp_err *err, int code, const sp_module *m, sp_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The one formatter for op errors: sp_error_at at the op's place with MLIR's
 * "'NAME' op message" (sp_op_message). Returns code. */
int sp_op_error(sp_err *err, int code, const sp_module *m, const sp_op *op, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The one place that spells MLIR's op prefix: writes "'NAME' op " and the formatted message
 * to `buf` (`cap` bytes, truncated, always NUL-terminated) and returns buf. sp_op_error uses
 * it; so do the messages that are placed differently (the verifier's, at a value; the
 * unreduced-axes check's, queued as diagnostics; the MLIR reader's, at a token). */
const char *sp_op_message(char *buf, size_t cap, const char *op_name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *sp_op_messagev(char *buf, size_t cap, const char *op_name, const char *fmt,
                           va_list ap) __attribute__((format(printf, 4, 0)));

/* Appends `FILE:LINE:COL: warning: message\n` (or `FILE: warning: message\n` without a line). */
void sp_diag_format(sp_strbuf *sb, const char *file, const sp_diag *d);

/* Splits "FILE:LINE:COL: message" (the sp_err style) into a place and the message that
 * follows; *loc is {0, 0} and *rest the whole text when there is no such prefix for `file`. */
void sp_diag_split_message(const char *file, const char *msg, sp_loc *loc, const char **rest);

/* Matches the diagnostics in `l` against the expected-* annotations of `text` (`len` bytes
 * whose first line is line `first_line` of `file`). Appends one line per problem to `report`
 * ("FILE:LINE:COL: error: expected warning \"...\" was not produced", "FILE:LINE:COL: error:
 * unexpected warning: ..."). Returns the number of problems (0 = all matched); -1 when out of
 * memory. A malformed annotation is a problem too. */
int sp_diag_verify(const char *text, size_t len, int first_line, const char *file,
                   const sp_diag_list *l, sp_strbuf *report);

#endif /* SP_DIAG_H */
