/*
 * verify.h - the IR verifier: meshes, shardings, sharding rules and manual computations.
 *
 * The verifier decides whether a module is something the later stages may trust: every mesh is
 * well formed, every sharding refers to a mesh that exists, matches its value's rank and uses
 * each mesh axis (or part of one) at most once, every sharding rule fits its op, and manual
 * computations keep manual axes out of their bodies. It follows the rules of Shardy's verifiers
 * (see shared/notes/shardy_semantics.md §1.1, §1.5, §2.1, §6.2) and keeps their wording, with
 * MLIR's habit of naming the op and the value first:
 *
 *   t.mlir:3:45: 'func.func' op arg 0 - unknown axis name: "c"
 *   t.mlir:7:10: 'stablehlo.add' op result 0 - sharding doesn't match tensor rank: 1 != 2
 *
 * The position is the value's location when it has one, else its op's; "FILE: message" when
 * neither is known (an op created by a pass). Verification stops at the first problem.
 *
 * Cost: linear in the size of the module (each op, value, sharding and rule is looked at a
 * bounded number of times; meshes are looked up through a table built once). Sub-axis
 * relations come from ir/axis_ref.h.
 *
 * Memory: nothing is allocated from the module's arena; scratch memory is malloc'd and freed
 * before returning. The module is not modified.
 */
#ifndef SP_VERIFY_H
#define SP_VERIFY_H

#include "ir/diag.h"
#include "ir/err.h"
#include "ir/ir.h"

/* Verifies the whole module. SP_OK, or SP_EINVAL (SP_ELIMIT for sizes beyond sp_limits.h,
 * SP_ENOMEM) with "FILE:LINE:COL: message" in `err`. */
int sp_verify_module(const sp_module *m, sp_err *err);

/* Verifies one mesh: axis sizes >= 1, unique axis names, device ids non-negative and a
 * permutation of 0..N-1 where N is the product of the axis sizes, no more than one id without
 * axes. `m` (may be NULL) only supplies the file name for the message. */
int sp_verify_mesh(const sp_module *m, const sp_mesh *mesh, sp_loc loc, sp_err *err);

/* Verifies one sharding attached to a value of type `type` (NULL: rank not checked) in module
 * `m`, whose meshes it may name. Messages carry no op/value prefix. Each call indexes the
 * module's meshes afresh (a scan of the top-level ops): meant for one-off checks, such as a pass
 * validating a sharding it was handed; sp_verify_module checks every sharding of a module. */
int sp_verify_sharding(const sp_module *m, const sp_sharding *s, const sp_type *type, sp_loc loc,
                       sp_err *err);

/* Verifies a sharding rule against the op that carries it (counts, ranks, factor indices and
 * kinds). */
int sp_verify_rule(const sp_module *m, const sp_op *op, const sp_rule *rule, sp_err *err);

/* Verifies what relates an sdy collective's out_sharding to its operand's sharding
 * (verify_collectives.c); the out_sharding itself is checked like any sharding. */
int sp_verify_collective(const sp_module *m, const sp_op *op, sp_err *err);

/* Verifies propagation's debugging attributes on an op (verify_edges.c): the text of
 * `sdy.propagation_edges` and of the `sdy.result_propagation_edges` /
 * `sdy.block_arg_propagation_edges` lists (step indices, axes, sources, targets). */
int sp_verify_edge_attrs(const sp_module *m, const sp_op *op, sp_err *err);

/* Verifies what StableHLO's verifier checks of an op the engine reads (verify_stablehlo.c):
 * no undefined operand, element and byte counts that fit in int64, operand/result counts,
 * shapes and attributes per op kind. */
int sp_verify_stablehlo_op(const sp_module *m, const sp_op *op, sp_err *err);
/* A func.func with a single-block body ends in a func.return of its result types, or in an op
 * of an unknown dialect taken as its terminator (checked after the body, so that errors inside
 * it are reported first). */
int sp_verify_func_return(const sp_module *m, const sp_op *op, sp_err *err);

/* Internal to the verifier's files: SP_EINVAL with "FILE:LINE:COL: 'OP' op MESSAGE" (or
 * "FILE: 'OP' op MESSAGE" when the op has no location): ir/diag.h's sp_op_error. */
#define sp__verify_op_fail(m, op, err, ...) sp_op_error(err, SP_EINVAL, m, op, __VA_ARGS__)

#endif /* SP_VERIFY_H */
