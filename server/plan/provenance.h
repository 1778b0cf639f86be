/*
 * provenance.h - where each axis of each value's sharding came from: the user annotation it
 * started at and the path of ops it travelled through, derived from the plan's own data (the
 * op factor tables before and after propagation, and which values each op reads and writes).
 *
 * For every mesh axis a, a breadth-first search starts at once from every tensor that held a
 * before propagation (a user annotation: an argument's, a result's, an op's or a constraint's
 * sharding) and moves through an op from one of its tensors to another when, after
 * propagation, both hold a on the same factor of the op's rule: that is the edge propagation
 * moved a along. Each value holding a is reached from its nearest annotation, so the path
 * given is the shortest chain of ops that explains the axis (propagation may have moved it
 * along another chain of the same effect, since several annotations can agree).
 *
 * Result, per value (an array indexed like p->values), the value's origins: one entry per axis
 * of its sharding, dimension by dimension:
 *   {"dim": D, "axis": "x", "origin": "user annotation on %arg0" | "this value's own
 *    annotation" | "chosen by the cost search" (a searched plan) | "not traced", "source": {"value": I, "name": "%arg0"}, "hops": H,
 *    "prev": {"value": J, "name": "%0", "op": N, "op_name": "stablehlo.add"},
 *    "shardy": "input: 0", "agrees": true}
 * where H is the number of ops crossed from the source and `prev` the step before this value
 * (absent at the source): the value it came from and the op it crossed. "shardy" is the
 * axis's origin as Shardy recorded it while propagating (sp_plan_value.origins; absent when
 * the plan has none for it) and "agrees" whether it names the same annotation as `source`
 * (absent when that cannot be told from the plan: a constraint's or manual computation's
 * origin, or no source). The whole path is read
 * by following `prev` through the origins of the earlier values (each value keeps only one
 * step, so the plan stays linear in size however deep the graph).
 *
 * Memory: the returned cJSON array is the caller's (cJSON_Delete). Cost: linear in the number
 * of op table cells times the number of distinct axes.
 */
#ifndef SP_PLAN_PROVENANCE_H
#define SP_PLAN_PROVENANCE_H

#include "ir/err.h"
#include "plan/plan.h"

int sp_plan_provenance(const sp_plan *p, cJSON **out, sp_err *err);

#endif /* SP_PLAN_PROVENANCE_H */
