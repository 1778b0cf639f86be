/*
 * manual_reshards.h - the boundary of an sdy.manual_computation in the full version of
 * explicit reshard insertion. Outside, an operand whose sharding differs from the
 * computation's in_sharding is resharded to it right before the computation; inside, a
 * block argument is seen with its in_sharding less the manual axes (the local sharding the
 * body works on), and a value `sdy.return` gives back whose sharding differs from the
 * out_sharding less the manual axes is resharded to that right before the return.
 *
 * Memory: new ops and shardings in the module's arena.
 */
#ifndef SP_EXPORT_MANUAL_RESHARDS_H
#define SP_EXPORT_MANUAL_RESHARDS_H

#include "ir/err.h"
#include "ir/ir.h"

/* Inserts the operand and return reshards of manual computation `mc`. */
int sp_export_manual_computation_reshards(sp_module *m, sp_op *mc, sp_err *err);

/* The sharding `v` has for the ops that use it: its own, or for a block argument of a manual
 * computation without one, the in_sharding less the manual axes (NULL on allocation failure
 * or when there is none). */
sp_sharding *sp_export_local_sharding(sp_module *m, sp_value *v);

#endif /* SP_EXPORT_MANUAL_RESHARDS_H */
