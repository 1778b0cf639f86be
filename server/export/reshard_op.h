/*
 * reshard_op.h - making the sdy.reshard ops the export passes insert.
 *
 * Memory: the op lives in the module's arena; it is returned detached (the caller inserts it).
 */
#ifndef SP_EXPORT_RESHARD_OP_H
#define SP_EXPORT_RESHARD_OP_H

#include "ir/ir.h"

/* A detached `sdy.reshard` of `v` (NULL: set the operand later) to `s`, of type `type` (v's type
 * when NULL), at `loc`; NULL on out-of-memory. */
sp_op *sp_export_reshard_op(sp_module *m, sp_value *v, sp_type *type, sp_sharding *s, sp_loc loc);

#endif /* SP_EXPORT_RESHARD_OP_H */
