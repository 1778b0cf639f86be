/*
 * clone.h - deep copies of ops and regions, with a map from original to copied values.
 *
 * Passes that inline a function body, split a constant per use or duplicate a callee clone ops
 * the way MLIR's Operation::clone(IRMapping&) does: every result and block argument of the copy
 * is recorded in a value map, and each operand of the copy is looked up in that map (an
 * operand defined outside the cloned ops, and not in the map, is used as it is).
 *
 * What is copied: name and kind, operands (remapped), result types and shardings, attribute
 * dictionaries (the array is new; attribute payloads such as shardings, rules and meshes are
 * shared, which is safe because passes never mutate a sharding in place, see sharding.h),
 * regions with their blocks and block arguments, func.func signatures, locations and name
 * hints. The copy is detached (no block).
 *
 * Memory: the copy lives in the arena passed in; the value map is malloc'd and owned by the
 * caller (sp_value_map_free).
 */
#ifndef SP_CLONE_H
#define SP_CLONE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "ir/ptr_map.h"

/* Original value -> its copy: the engine's pointer map (ptr_map.h) with the types spelled out. */
typedef struct sp_value_map {
  sp_ptr_map map;
} sp_value_map;

static inline void sp_value_map_init(sp_value_map *m) { sp_ptr_map_init(&m->map); }
static inline void sp_value_map_free(sp_value_map *m) { sp_ptr_map_free(&m->map); }
/* Adds or replaces. SP_ENOMEM on allocation failure. */
static inline int sp_value_map_put(sp_value_map *m, const sp_value *from, sp_value *to) {
  return sp_ptr_map_put(&m->map, from, (intptr_t)to);
}
/* The copy of `from`, or NULL. */
static inline sp_value *sp_value_map_get(const sp_value_map *m, const sp_value *from) {
  return m ? (sp_value *)sp_ptr_map_get(&m->map, from, 0) : NULL;
}
/* The copy of `from` if there is one, else `from` itself. */
static inline sp_value *sp_value_map_lookup_or_self(const sp_value_map *m, sp_value *from) {
  sp_value *v = from ? sp_value_map_get(m, from) : NULL;
  return v ? v : from;
}

/* A deep copy of `op` (detached). Its results and nested block arguments are added to `map`.
 * NULL on out-of-memory. */
sp_op *sp_op_clone(sp_arena *a, const sp_op *op, sp_value_map *map);

/* Appends copies of the blocks of `src` to `dst` (block arguments and ops), recording block
 * arguments and results in `map`. SP_OK or SP_ENOMEM. */
int sp_region_clone_into(sp_arena *a, const sp_region *src, sp_region *dst, sp_value_map *map);

#endif /* SP_CLONE_H */
