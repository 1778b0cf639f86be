/*
 * err.c - status codes and human-readable errors (see err.h).
 */
#include "ir/err.h"

#include <stdio.h>
#include <string.h>

void sp_err_clear(sp_err *err) {
  if (!err) return;
  err->code = SP_OK;
  err->msg[0] = '\0';
}

int sp_err_setv(sp_err *err, int code, const char *fmt, va_list ap) {
  if (!err) return code;
  err->code = code;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  return code;
}

int sp_err_set(sp_err *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sp_err_setv(err, code, fmt, ap);
  va_end(ap);
  return code;
}

int sp_err_prefix(sp_err *err, const char *fmt, ...) {
  if (!err) return SP_OK;
  char prefix[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char old[SP_ERR_MSG_MAX];
  memcpy(old, err->msg, sizeof old);
  /* Truncation is acceptable: the message stays NUL-terminated. */
  size_t n = strlen(prefix);
  if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
  memcpy(err->msg, prefix, n);
  memcpy(err->msg + n, ": ", 2);
  size_t room = sizeof err->msg - n - 2 - 1, m = strlen(old);
  if (m > room) m = room;
  memcpy(err->msg + n + 2, old, m);
  err->msg[n + 2 + m] = '\0';
  return err->code;
}

const char *sp_status_name(int code) {
  switch (code) {
    case SP_OK: return "ok";
    case SP_EINVAL: return "invalid input";
    case SP_ENOMEM: return "out of memory";
    case SP_EIO: return "i/o error";
    case SP_EUNSUPPORTED: return "unsupported";
    case SP_ELIMIT: return "limit exceeded";
    case SP_ETIMEOUT: return "deadline exceeded";
    case SP_ENOTFOUND: return "not found";
    case SP_EINTERNAL: return "internal error";
    default: return "unknown status";
  }
}
