/*
 * file_read.c - whole files and streams into memory (see file_read.h).
 */
#include "ir/file_read.h"

#include <errno.h>
#include <stdlib.h>

#include "ir/err.h"
#include "ir/grow.h"

#define FIRST_CHUNK ((size_t)1 << 16)

int sp_file_read_from(sp_file_read_fn fn, void *src, size_t max, char **out, size_t *len) {
  char *b = NULL;
  size_t cap = 0, n = 0;
  int rc = SP_OK;
  *out = NULL;
  if (len) *len = 0;
  for (;;) {
    /* room for at least one more byte and the NUL */
    if (sp_grow_z((void **)&b, &cap, n + 1 < FIRST_CHUNK ? FIRST_CHUNK - 1 : n + 1, 1)) {
      rc = SP_ENOMEM;
      errno = ENOMEM;
      goto fail;
    }
    size_t want = cap - n - 1;
    if (max - n < want) want = max - n + 1;   /* one byte past the limit tells it is exceeded */
    long got = fn(src, b + n, want);
    if (got < 0) {
      rc = SP_EIO;
      goto fail;
    }
    if (got == 0) break;
    n += (size_t)got;
    if (n > max) {
      rc = SP_ELIMIT;
      errno = EFBIG;
      goto fail;
    }
  }
  b[n] = '\0';
  *out = b;
  if (len) *len = n;
  return SP_OK;
fail:
  free(b);
  return rc;
}

static long read_stream(void *src, char *buf, size_t n) {
  FILE *f = src;
  size_t got = fread(buf, 1, n, f);
  if (got == 0 && ferror(f)) return -1;
  return (long)got;
}

int sp_file_read_stream(FILE *f, size_t max, char **out, size_t *len) {
  return sp_file_read_from(read_stream, f, max, out, len);
}

int sp_file_read(const char *path, size_t max, char **out, size_t *len) {
  *out = NULL;
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return SP_EIO;
  int rc = sp_file_read_stream(f, max, out, len);
  int saved = errno;
  fclose(f);
  errno = saved;
  return rc;
}
