/*
 * factor_table.h - draws an op's factor table the way Shardy's propagation design draws it:
 * one row per operand and result (T0, T1, ...), one column per factor (F0, F1, ... with its
 * size and kind), cells holding the axes the tensor's dimension has along that factor, and the
 * explicitly-replicated column. Input is the factor-table JSON of the propagation report
 * (propagation/report.h: mesh, factors, tensors with cells, replicated, unreduced).
 *
 * Cells named in `marks` are highlighted as conflicts (class "conflict", with a tooltip of
 * how each was resolved).
 */
#ifndef SP_WEB_FACTOR_TABLE_H
#define SP_WEB_FACTOR_TABLE_H

#include "ir/strbuf.h"

typedef struct cJSON cJSON;

/* A conflicting cell: the tensor's row label as the report names it ("operand 0",
 * "result 0") and the factor's index. */
typedef struct sp_web_mark {
  const char *tensor;
  int factor;
  const char *note;   /* e.g. "aggressive: chose [\"x\"]" */
} sp_web_mark;

/* `table` may be null (JSON null or NULL): "no sharding on a common mesh" is drawn. */
void sp_web_factor_table(sp_strbuf *sb, const cJSON *table, const char *caption,
                         const sp_web_mark *marks, int nmarks);

/* A JSON array of strings as `"a", "b"` text (escaped), or `-` when empty. */
void sp_web_axes(sp_strbuf *sb, const cJSON *arr);

#endif /* SP_WEB_FACTOR_TABLE_H */
