/*
 * factor_dependencies.h - a dimension that holds several factors can shard a minor factor
 * only when every factor before it in that dimension is fully sharded (otherwise the shards
 * would be a strided view of the dimension). Explicit reshard insertion chooses one axes list
 * per factor for the whole op; this step takes back the axes of factors that some tensor could
 * not hold that way, so that every tensor's sharding is the chosen one exactly.
 *
 * Invariant after sp_export_drop_dependent_factor_axes: in every dimension of every tensor of
 * the rule, the factors that keep axes form a prefix in which all but the last are fully
 * sharded (product of their axes == factor size).
 *
 * Memory: only writes the `n` of the given lists; allocates nothing.
 */
#ifndef SP_EXPORT_FACTOR_DEPENDENCIES_H
#define SP_EXPORT_FACTOR_DEPENDENCIES_H

#include <stdbool.h>

#include "propagation/factor_projection.h"

/* Clears common[f] (nfactors lists, one per factor of t->rule) for every factor that follows,
 * in some tensor dimension, a factor that common does not fully shard; repeats until nothing
 * changes. Returns whether any list was cleared. */
bool sp_export_drop_dependent_factor_axes(const sp_factor_table *t, sp_ft_axes *common);

/* Whether factor `f` waits on another: in some tensor dimension, the factor right before it is
 * not (yet) fully sharded by `common`. */
bool sp_export_factor_waits(const sp_factor_table *t, const sp_ft_axes *common, int f);

#endif /* SP_EXPORT_FACTOR_DEPENDENCIES_H */
