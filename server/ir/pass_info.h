/*
 * pass_info.h - one row of a pass table: a `-flag[=options]` of shardplan-opt, its help line
 * and the function that runs it. The import stage (propagation/import_passes.h), the export
 * stage (export/export_passes.h) and the plan stage's registry (plan/passes.h) all keep their
 * passes as arrays of this one struct, so that the registry hands their rows out as they are.
 *
 * A pass transforms a module in place; `options` is the text after '=' (NULL when absent),
 * parsed with ir/pass_options.h. A pass that hands something back besides the module takes a
 * struct sp_pass_ctx (defined in plan/passes.h, the only stage with such passes) through
 * run_ctx instead of run.
 *
 * Memory: flags and help are static strings; tables are constant (thread-safe).
 */
#ifndef SP_PASS_INFO_H
#define SP_PASS_INFO_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/pass_options.h"

struct sp_pass_ctx;

typedef int (*sp_pass_fn)(sp_module *m, const char *options, sp_err *err);
typedef int (*sp_pass_ctx_fn)(sp_module *m, const char *options, struct sp_pass_ctx *ctx,
                              sp_err *err);

typedef struct sp_pass_info {
  const char *flag;        /* without the leading dash: "sdy-basic-propagate"; NULL ends a table */
  sp_pass_fn run;          /* the pass; NULL when run_ctx is set */
  const char *help;        /* one line, with the options it takes */
  sp_pass_ctx_fn run_ctx;  /* a pass that hands something back; NULL otherwise */
} sp_pass_info;

/* Defines `static int cname(m, options, err)`, a pass without options: an option text that is
 * not empty is an error naming `flag` (ir/pass_options.h); else it runs fn(m, err). */
#define SP_NO_OPTION_PASS(cname, flag, fn)                                   \
  static int cname(sp_module *m, const char *options, sp_err *err) {        \
    int rc = sp_options_parse_bools(flag, options, NULL, NULL, 0, err);     \
    return rc ? rc : fn(m, err);                                             \
  }

#endif /* SP_PASS_INFO_H */
