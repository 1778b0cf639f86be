/*
 * report.h - the propagation report: what each op's factor table looked like before and after
 * the passes, and every conflict met, as JSON (shardplan-opt -report-json=FILE, the dashboard).
 *
 * sp_prop_report_begin() snapshots, for every op the rule registry gives a rule (the rule
 * already attached, or the registry's, computed without attaching it and without touching the
 * process-wide warning latches), the op's name, place and rule and its factor table built from
 * the operand and result shardings as they are now (on the op's common mesh; null when the
 * op's tensors have no sharding on a common non-maximal mesh). sp_prop_report_end() builds the
 * same tables again from the shardings the passes left and writes
 *
 *   {"file": "...",
 *    "ops": [{"op": 3, "name": "stablehlo.dot_general", "line": 12, "col": 8,
 *             "rule": "#sdy.op_sharding_rule<...>", "erased": false,
 *             "before": <factor table JSON> | null, "after": <factor table JSON> | null}],
 *    "conflicts": [<conflict JSON>...], "dropped": false}
 *
 * where the factor table JSON is sp_factor_table_to_json's (mesh, factors with sizes and kinds,
 * one row per operand and result with cells of axes and the replicated/unreduced axes) and the
 * conflicts are those of the log given to _end (normally the module's m->conflicts, which the
 * propagation passes fill). Ops are numbered in pre-order at _begin; an op the passes erased
 * has "erased": true and "after": null.
 *
 * Memory: a report owns an arena with the snapshot; sp_prop_report_free releases it. The
 * module must outlive the report (ops are referred to by pointer; erased ops stay allocated
 * in the module's arena).
 */
#ifndef SP_PROP_REPORT_H
#define SP_PROP_REPORT_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/module_copy.h"
#include "propagation/conflict.h"

typedef struct cJSON cJSON;
typedef struct sp_prop_report sp_prop_report;

int sp_prop_report_begin(sp_module *m, bool conservative, sp_prop_report **out, sp_err *err);
/* `log` may be NULL (no conflicts). *out is a new cJSON object owned by the caller. */
int sp_prop_report_end(sp_prop_report *r, const sp_conflict_log *log, cJSON **out, sp_err *err);
/* The same, with the "after" tables read from a copy of the module (ir/module_copy.h): each
 * op's counterpart there (an op without one counts as erased). The report stays usable. */
int sp_prop_report_end_on(sp_prop_report *r, const sp_conflict_log *log,
                          const sp_module_copy *copy, cJSON **out, sp_err *err);
void sp_prop_report_free(sp_prop_report *r);

#endif /* SP_PROP_REPORT_H */
