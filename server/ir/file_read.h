/*
 * file_read.h - the one reader of whole files and streams into memory (MLIR text, cluster
 * JSON, IOPDDL problems, TLS keys, requests read by the tools, benchmarks and tests).
 *
 * The text comes back in a malloc'd buffer with a NUL after the last byte (binary data may hold
 * NULs of its own: use *len). At most `max` bytes are read: a longer input is SP_ELIMIT (pass
 * SIZE_MAX for no limit). Errors are statuses, not messages, so that each caller words them as
 * before: SP_EIO (errno as the failing call left it), SP_ELIMIT (errno EFBIG), SP_ENOMEM
 * (errno ENOMEM). On any error *out is NULL and nothing is left allocated. Thread-safe.
 */
#ifndef SP_FILE_READ_H
#define SP_FILE_READ_H

#include <stddef.h>
#include <stdio.h>

/* A source of bytes: fills up to n bytes of buf; the count, 0 at the end, negative on error. */
typedef long (*sp_file_read_fn)(void *src, char *buf, size_t n);

/* Reads `src` through `fn` to its end. */
int sp_file_read_from(sp_file_read_fn fn, void *src, size_t max, char **out, size_t *len);
/* Reads an open stream to its end (the caller opens and closes it). */
int sp_file_read_stream(FILE *f, size_t max, char **out, size_t *len);
/* Opens, reads and closes `path`; a failure to open is SP_EIO with fopen's errno. */
int sp_file_read(const char *path, size_t max, char **out, size_t *len);

#endif /* SP_FILE_READ_H */
