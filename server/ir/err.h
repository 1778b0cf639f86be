/*
 * err.h - status codes and human-readable errors.
 *
 * Every function that can fail returns an int status: SP_OK (0) on success, a negative
 * sp_status on failure, and fills an optional `sp_err *` with a message a person can act on
 * ("input.mlir:3:14: unknown axis name \"c\" in mesh @mesh"). Library code never prints;
 * the boundary (CLI, RPC, HTTP) translates the status exactly once.
 *
 * The error struct is plain data owned by the caller, usually on the stack. A NULL `sp_err *`
 * is accepted everywhere and means "status only".
 */
#ifndef SP_ERR_H
#define SP_ERR_H

#include <stdarg.h>

typedef enum sp_status {
  SP_OK = 0,
  SP_EINVAL = -1,       /* the input is malformed or violates a rule */
  SP_ENOMEM = -2,       /* an allocation failed */
  SP_EIO = -3,          /* a file or socket operation failed */
  SP_EUNSUPPORTED = -4, /* well-formed, but beyond what shardplan handles */
  SP_ELIMIT = -5,       /* a named limit (sp_limits.h) was exceeded */
  SP_ETIMEOUT = -6,     /* a deadline passed before the work was done */
  SP_ENOTFOUND = -7,    /* a looked-up thing does not exist */
  SP_EINTERNAL = -8     /* a bug: an invariant did not hold */
} sp_status;

#define SP_ERR_MSG_MAX 512

#define SP_ERR_FILE_MAX 256

typedef struct sp_err {
  int code;                  /* an sp_status */
  char msg[SP_ERR_MSG_MAX];  /* NUL-terminated; empty when code == SP_OK */
  /* Where the problem is, as data: filled from the message's "FILE:LINE:COL: " part (the
   * form every located error is written in, possibly after a "pass-name: " prefix) by
   * sp_err_set and sp_err_prefix; line 0 and an empty file when the message names no place. */
  char file[SP_ERR_FILE_MAX];
  int line, col;
} sp_err;

/* Resets `err` (may be NULL) to SP_OK with an empty message and no place. */
void sp_err_clear(sp_err *err);

/* Sets `err` (may be NULL) to `code` and a printf-formatted message; returns `code`, so that
 * a failing function can `return sp_err_set(err, SP_EINVAL, "...")`. */
int sp_err_set(sp_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sp_err_setv(sp_err *err, int code, const char *fmt, va_list ap);

/* Prepends "prefix: " to the message already in `err`; returns err->code (SP_OK if NULL). */
int sp_err_prefix(sp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A short name for a status ("invalid input", "out of memory", ...). */
const char *sp_status_name(int code);

#endif /* SP_ERR_H */
