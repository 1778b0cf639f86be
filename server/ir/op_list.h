/*
 * op_list.h - a growable list of ops, the scratch list passes collect ops into before they
 * change the module (a walk must not run while ops are erased or moved).
 *
 * sp_op_list_collect is an sp_walk_fn that appends every op it sees (only those `keep` accepts
 * when it is set); after an allocation failure the list stops growing and `oom` is set (the
 * walk stops too). A zeroed list is empty and keeps every op. Memory: `v` is malloc'd (grown
 * by sp_grow); sp_op_list_free releases it. The ops are not owned.
 */
#ifndef SP_OP_LIST_H
#define SP_OP_LIST_H

#include <stdbool.h>

#include "ir/ir.h"

typedef struct sp_op_list {
  sp_op **v;
  int n, cap;
  bool oom;
  bool (*keep)(const sp_op *op);   /* sp_op_list_collect's filter; NULL keeps every op */
} sp_op_list;

/* Appends `op`; false (and `oom` set) when memory ran out. */
bool sp_op_list_push(sp_op_list *l, sp_op *op);
/* sp_walk_fn: appends every op walked that `keep` accepts (ctx is the list). */
bool sp_op_list_collect(sp_op *op, void *ctx);
bool sp_op_list_contains(const sp_op_list *l, const sp_op *op);
void sp_op_list_free(sp_op_list *l);

#endif /* SP_OP_LIST_H */
