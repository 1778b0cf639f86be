/*
 * saved_shardings.h - the sharding of every value a search may write, saved and put back.
 *
 * The search writes a plan into the main function's values (block arguments and top-level op
 * results) and result shardings. Trying a configuration and undoing it (placement.c), or
 * writing the best plan so far into a module only long enough to copy it (plan_snapshot.c),
 * swaps pointers: shardings are never changed in place (ir/sharding.h), so restoring the
 * saved pointers is exact.
 *
 * Memory: the arrays live in the arena given to sp_saved_shardings_init; the shardings are
 * not owned.
 */
#ifndef SP_SEARCH_SAVED_SHARDINGS_H
#define SP_SEARCH_SAVED_SHARDINGS_H

#include "ir/err.h"
#include "ir/ir.h"

typedef struct sp_saved_shardings {
  sp_block *body;        /* the main function's body */
  sp_func_info *fi;      /* its signature (result shardings) */
  int nvals, nres;
  sp_sharding **vals, **res;
} sp_saved_shardings;

/* Room for the shardings of the main function `func` (sp_plan_main_func), in arena `a`.
 * SP_ENOMEM. */
int sp_saved_shardings_init(sp_arena *a, sp_op *func, sp_saved_shardings *s);
/* Saves the shardings as they are now. */
void sp_saved_shardings_take(sp_saved_shardings *s);
/* Puts the saved shardings back. */
void sp_saved_shardings_restore(const sp_saved_shardings *s);

#endif /* SP_SEARCH_SAVED_SHARDINGS_H */
