/*
 * resolve_single_device.h - Shardy's -sdy-resolve-single-device-sharding: an op placed on one
 * device (its results on a maximal mesh `<[], device_ids=[d]>`, as explicit reshard insertion
 * leaves it) becomes SPMD code every device runs.
 *
 * Per such op, with M the module's main mesh (its first sdy.mesh with axes):
 *   - an operand defined by an sdy.reshard to a single device reads that reshard's operand
 *     (the reshard goes once unused);
 *   - before the op: partition_id, converted to i64, compared EQ with d; a stablehlo.if on it
 *     runs the op (without its shardings) in the true branch, and returns zeros of each
 *     result type (a fresh token for token results) in the false one;
 *   - each tensor result on a single device becomes an sdy.all_reduce over every axis of M of
 *     the if's result (out sharding: replicated on M); a user that reshards it to that same
 *     sharding is folded away. Other results are read from the if as they are.
 * Nothing changes when the module has no mesh with axes or a result type is neither a tensor
 * nor a token.
 *
 * Memory: new ops and shardings in the module's arena.
 */
#ifndef SP_EXPORT_RESOLVE_SINGLE_DEVICE_H
#define SP_EXPORT_RESOLVE_SINGLE_DEVICE_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_resolve_single_device(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_RESOLVE_SINGLE_DEVICE_H */
