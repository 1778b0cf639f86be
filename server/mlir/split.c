/*
 * split.c - splitting a file at `// -----` lines, as mlir-opt -split-input-file does
 * (see mlir.h).
 *
 * A separator is a line whose first non-blank characters are `// -----` followed only by more
 * dashes or blanks. The separator line belongs to no chunk; each chunk records the line number
 * (in the whole file) of its first byte so that messages point into the original file.
 */
#include <string.h>

#include "mlir/mlir.h"

/* Is [p, end) a separator line (without its newline)? */
static bool is_separator(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  static const char marker[] = "// -----";
  size_t n = sizeof marker - 1;
  if ((size_t)(end - p) < n || memcmp(p, marker, n) != 0) return false;
  for (p += n; p < end; p++)
    if (*p != '-' && *p != ' ' && *p != '\t' && *p != '\r') return false;
  return true;
}

int sp_mlir_split(const char *text, size_t len, sp_mlir_chunk *chunks, int max) {
  const char *end = text + len, *chunk_start = text, *line = text;
  int count = 0, lineno = 1, chunk_line = 1;
  while (line < end) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    const char *line_end = nl ? nl : end;
    if (is_separator(line, line_end)) {
      if (count < max) {
        chunks[count].begin = chunk_start;
        chunks[count].len = (size_t)(line - chunk_start);
        chunks[count].first_line = chunk_line;
      }
      count++;
      chunk_start = nl ? nl + 1 : end;
      chunk_line = lineno + 1;
    }
    if (!nl) break;
    line = nl + 1;
    lineno++;
  }
  if (count < max) {
    chunks[count].begin = chunk_start;
    chunks[count].len = (size_t)(end - chunk_start);
    chunks[count].first_line = chunk_line;
  }
  return count + 1;
}
