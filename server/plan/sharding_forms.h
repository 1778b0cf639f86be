/*
 * sharding_forms.h - a sharding in the notations other tools read:
 *   JAX:   PartitionSpec('data', ('model', 'x'), None)   (open empty dims:
 *          PartitionSpec.UNCONSTRAINED; sub-axes as 'x:(2)4'; unreduced={...} when set)
 *   GSPMD: {devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[2,2]<=[2,2]T(1,0)},
 *          {devices=[2,2]0,2,1,3} (a mesh with device ids), {replicated}, {maximal device=3}
 * as XLA's HloSharding prints its tile assignments. Pure functions; thread-safe.
 */
#ifndef SP_PLAN_SHARDING_FORMS_H
#define SP_PLAN_SHARDING_FORMS_H

#include "ir/err.h"
#include "ir/mesh.h"
#include "ir/sharding.h"
#include "ir/strbuf.h"

#define SP_PLAN_MAX_RANK 64  /* tensor rank the GSPMD form handles */

/* Appends the PartitionSpec of `s` (NULL: "PartitionSpec()"). */
void sp_plan_pspec(sp_strbuf *sb, const sp_sharding *s);
/* Appends the GSPMD form of `s` (NULL: replicated) on `mesh` (the sharding's mesh). SP_EINVAL
 * when `mesh` is NULL or `s` names an axis it lacks (nothing appended), SP_ELIMIT past
 * SP_PLAN_MAX_RANK dims or 64 mesh pieces. */
int sp_plan_gspmd(sp_strbuf *sb, const sp_sharding *s, const sp_mesh *mesh);

#endif /* SP_PLAN_SHARDING_FORMS_H */
