/*
 * strbuf.c - growable string builder (see strbuf.h).
 */
#include "ir/strbuf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"

void sp_strbuf_free(sp_strbuf *sb) {
  free(sb->buf);
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  sb->oom = false;
}

void sp_strbuf_reset(sp_strbuf *sb) {
  sb->len = 0;
  if (sb->buf) sb->buf[0] = '\0';
}

static bool reserve(sp_strbuf *sb, size_t extra) {
  if (sb->oom) return false;
  if (extra < sb->cap - sb->len) return true;   /* room for the text and its NUL */
  if (extra > SIZE_MAX - 1 - sb->len) { sb->oom = true; return false; }
  /* A first buffer of 256 bytes: most strings are built in one or two steps, and growing
   * through 8, 16, 32, ... costs more reallocs than the bytes it saves. */
  size_t want = sb->len + extra < 255 ? 255 : sb->len + extra;
  if (sp_grow_z((void **)&sb->buf, &sb->cap, want, 1)) { sb->oom = true; return false; }
  return true;
}

void sp_strbuf_putn(sp_strbuf *sb, const char *s, size_t n) {
  if (!reserve(sb, n)) return;
  memcpy(sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = '\0';
}

void sp_strbuf_putc(sp_strbuf *sb, char c) { sp_strbuf_putn(sb, &c, 1); }

void sp_strbuf_puts(sp_strbuf *sb, const char *s) { sp_strbuf_putn(sb, s, strlen(s)); }

void sp_strbuf_printf(sp_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(sb, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

void sp_strbuf_put_i64(sp_strbuf *sb, int64_t v) { sp_strbuf_printf(sb, "%" PRId64, v); }

bool sp_strbuf_ok(const sp_strbuf *sb) { return !sb->oom; }

char *sp_strbuf_detach(sp_strbuf *sb) {
  if (sb->oom) { sp_strbuf_free(sb); return NULL; }
  if (!sb->buf && !reserve(sb, 0)) return NULL;
  char *p = sb->buf;
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  return p;
}

const char *sp_strbuf_str(const sp_strbuf *sb) { return sb->buf ? sb->buf : ""; }
