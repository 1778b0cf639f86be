/*
 * iopddl.h - reader for the IOPDDL contest problem format (ASPLOS 2025).
 *
 * A problem file is JSON, plain or gzip-compressed:
 *   {"problem": {"name": ...,
 *                "nodes": {"intervals": [[start, end], ...], "costs": [[c, ...], ...],
 *                          "usages": [[u, ...], ...]},
 *                "edges": {"nodes": [[a, b], ...], "costs": [[c, ...], ...]},
 *                "usage_limit": L}}       (usage_limit optional)
 * with edge costs row-major by the first node's strategy. The reader checks every count and
 * number and names what is wrong and where ("problem.edges.costs[12] has 6 entries, expected
 * 2x4=8"). Numbers must be non-negative integers; a cost of 1e18 or more becomes
 * SP_SG_FORBIDDEN; other values above 2^53 are rejected because JSON numbers pass through a
 * double and would not be exact.
 *
 * The returned graph is owned by the caller (sp_sg_free).
 *
 * The writer produces the same format (so a planner's graph can be solved or compared
 * outside the planner): forbidden costs are written as 1e18, "usage_limit" only when the
 * graph has one; the file is gzip-compressed when its name ends in ".gz". Reading it back
 * gives an equal graph when its numbers are within what the reader accepts (2^53).
 */
#ifndef SP_SEARCH_IOPDDL_H
#define SP_SEARCH_IOPDDL_H

#include <stddef.h>

#include "ir/err.h"
#include "search/strategy_graph.h"

/* Reads a problem from `path` (.json or .json.gz; gzip is detected from the content).
 * Errors are prefixed with the path. */
int sp_iopddl_read_file(const char *path, sp_sg **out /* OUT, owned */, sp_err *err);

/* Parses a problem from `len` bytes of JSON text (need not be NUL-terminated). */
int sp_iopddl_parse(const char *text, size_t len, sp_sg **out /* OUT, owned */, sp_err *err);

/* Writes `g` to `path` in the contest format; reading it back gives an equal graph. */
int sp_iopddl_write_file(const sp_sg *g, const char *path, sp_err *err);

#endif /* SP_SEARCH_IOPDDL_H */
