/*
 * strbuf.h - a growable string builder (heap-owned).
 *
 * Used by the printers (MLIR text, sharding text, JSON glue) to build output without
 * fixed-size buffers. The buffer is always NUL-terminated. On allocation failure the builder
 * latches `oom` and ignores further appends; callers check sp_strbuf_ok() once at the end.
 * The caller owns `buf` after sp_strbuf_detach(), else frees with sp_strbuf_free().
 */
#ifndef SP_STRBUF_H
#define SP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sp_strbuf {
  char *buf;
  size_t len, cap;
  bool oom;
} sp_strbuf;

#define SP_STRBUF_INIT {NULL, 0, 0, false}

void sp_strbuf_free(sp_strbuf *sb);
void sp_strbuf_reset(sp_strbuf *sb);            /* length 0, keeps capacity */
void sp_strbuf_putc(sp_strbuf *sb, char c);
void sp_strbuf_puts(sp_strbuf *sb, const char *s);
void sp_strbuf_putn(sp_strbuf *sb, const char *s, size_t n);
void sp_strbuf_printf(sp_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sp_strbuf_put_i64(sp_strbuf *sb, int64_t v);
bool sp_strbuf_ok(const sp_strbuf *sb);
/* Returns the malloc'd string (never NULL unless oom) and resets the builder. */
char *sp_strbuf_detach(sp_strbuf *sb);
/* The current contents ("" when empty); valid until the next append. */
const char *sp_strbuf_str(const sp_strbuf *sb);

#endif /* SP_STRBUF_H */
