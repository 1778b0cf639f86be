/*
 * plan_int.h - shared by the files of the plan stage only (not part of its interface).
 */
#ifndef SP_PLAN_PLAN_INT_H
#define SP_PLAN_PLAN_INT_H

#include "ir/ptr_map.h"
#include "plan/plan.h"
#include "search/plan_search.h"

/* An empty plan with its own arena; NULL on out-of-memory. */
sp_plan *sp__plan_new(void);
/* Gives every op of `m` not yet in `map` the next number (pre-order, module op excluded). */
int sp__plan_number_ops(sp_module *m, sp_ptr_map *map, int *next, sp_err *err);
/* sp_plan_from_module with the op numbers taken before the passes (NULL: numbered now). */
int sp__plan_build(sp_module *m, sp_ptr_map *numbers, cJSON *report,
                   const sp_plan_summary *summary, sp_plan **out, sp_err *err);

#endif /* SP_PLAN_PLAN_INT_H */
