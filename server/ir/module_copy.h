/*
 * module_copy.h - a whole module copied, its ops and values paired with the original's.
 *
 * Work that must not change a module works on a copy and carries names and records between
 * the two: the plan stage prices the collectives the export would insert (plan/exported.c),
 * and the search hands out its best plan so far as a planned copy while it goes on planning
 * the original (search/plan_snapshot.c). The copy is made with sp_op_clone (ir/clone.h); a
 * pre-order walk of both modules right after pairs every op with its counterpart (same
 * structure, same order). A value pairs through its op: a result by its op and number, a
 * block argument by the op owning the block, the region, block and argument numbers.
 *
 * Invariants: the copy shares attribute payloads (shardings, meshes, rules) with the original,
 * which must therefore outlive it; ops added to either side after the copy was made have no
 * counterpart (the lookups return NULL for them).
 *
 * Memory: the pairing is malloc'd; the copy is a module with its own arena, owned by the pair
 * until the caller takes it (sets `module` to NULL). sp_module_copy_free releases both.
 * Thread safety: none; the original must not change while the copy is made.
 */
#ifndef SP_MODULE_COPY_H
#define SP_MODULE_COPY_H

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/op_list.h"
#include "ir/ptr_map.h"

typedef struct sp_module_copy {
  sp_module *module;   /* the copy: the original's filename; no diags, ctl or warned lists */
  sp_op_list orig, ops;/* every op of both in pre-order (the module ops first), paired by index */
  sp_ptr_map index;    /* an op of either list -> its index */
} sp_module_copy;

/* Copies `m` into `into` (an empty module from sp_module_new, whose arena then holds the copy;
 * NULL: a new one) and pairs the two. `into` belongs to *out from the call on, also when it
 * fails (SP_ENOMEM, or SP_EINTERNAL when the walks disagree); *out is then empty. */
int sp_module_copy_make(const sp_module *m, sp_module *into, sp_module_copy *out, sp_err *err);
void sp_module_copy_free(sp_module_copy *c);

/* The counterpart of an op or value of the original in the copy, or NULL. */
sp_op *sp_module_copy_op(const sp_module_copy *c, const sp_op *orig);
sp_value *sp_module_copy_value(const sp_module_copy *c, const sp_value *orig);
/* The counterpart of an op or value of the copy in the original, or NULL. */
sp_op *sp_module_copy_original_op(const sp_module_copy *c, const sp_op *copy);
sp_value *sp_module_copy_original_value(const sp_module_copy *c, const sp_value *copy);

#endif /* SP_MODULE_COPY_H */
