/*
 * err.c - status codes and human-readable errors (see err.h).
 */
#include "ir/err.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void sp_err_clear(sp_err *err) {
  if (!err) return;
  err->code = SP_OK;
  err->msg[0] = '\0';
  err->file[0] = '\0';
  err->line = err->col = 0;
}

static bool digits(const char *s, const char **end, int *out) {
  long v = 0;
  const char *p = s;
  while (*p >= '0' && *p <= '9' && v < 100000000) v = v * 10 + (*p++ - '0');
  *end = p;
  *out = (int)v;
  return p > s;
}

/* Fills file, line and col from the first "FILE:LINE:COL: " in the message. */
static void locate(sp_err *err) {
  err->file[0] = '\0';
  err->line = err->col = 0;
  for (const char *p = strchr(err->msg, ':'); p; p = strchr(p + 1, ':')) {
    const char *q, *r;
    int line, col;
    if (!digits(p + 1, &q, &line) || *q != ':' || !digits(q + 1, &r, &col) || r[0] != ':' ||
        r[1] != ' ')
      continue;
    /* The file starts after the last "prefix: " before it. */
    const char *start = err->msg;
    for (const char *s = err->msg; s + 1 < p; s++)
      if (s[0] == ':' && s[1] == ' ') start = s + 2;
    size_t n = (size_t)(p - start);
    if (n == 0) continue;
    if (n >= sizeof err->file) n = sizeof err->file - 1;
    memcpy(err->file, start, n);
    err->file[n] = '\0';
    err->line = line;
    err->col = col;
    return;
  }
}

int sp_err_setv(sp_err *err, int code, const char *fmt, va_list ap) {
  if (!err) return code;
  err->code = code;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  locate(err);
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
  locate(err);
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
