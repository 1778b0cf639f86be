/*
 * reshard_memo.h - the collectives of a change of layout, exactly as the export lowers it
 * (export/reshard_to_collectives.h, then the canonicalizer's all_to_all fusion), computed
 * once per distinct (from, to) pair of layouts and kept for the rest of a search.
 *
 * A layout change does not depend on the tensor's size: each step is kept as its kind, its
 * axes and the number of shards the tensor has before and after it (sp_reshard_shape), and
 * the cost model (cost_model.h) prices it for a given tensor. The steps of a pair are the
 * ones sp_reshard_to_collectives_steps records for the two layouts written as shardings,
 * consecutive all_to_alls with no dimension in common merged into one (params by source
 * dimension), as sp_canonicalize merges them.
 *
 * Invariant: a pair is looked up by its two layouts compared axis by axis (the hash only
 * finds the bucket), so two pairs never share an entry by accident.
 *
 * Memory: the memo owns its table, its layouts and steps (one arena); lowering a pair uses a
 * scratch arena renewed after each miss. Not thread-safe: one memo per search.
 */
#ifndef SP_SEARCH_RESHARD_MEMO_H
#define SP_SEARCH_RESHARD_MEMO_H

#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/mesh.h"
#include "search/cost_model.h"

typedef struct sp_reshard_memo sp_reshard_memo;

/* A memo for layouts of `mesh` (not owned; it must outlive the memo). NULL on out-of-memory. */
sp_reshard_memo *sp_reshard_memo_new(const sp_mesh *mesh);
void sp_reshard_memo_free(sp_reshard_memo *memo);

/* The steps of `from` -> `to` (same rank) for a tensor of dims `shape` (NULL: unknown, room
 * for any slice): *steps points into the memo (valid until it is freed), *n of them (0:
 * nothing moves). The planner reads a dim only through its divisibility by products of mesh
 * axis parts, so pairs are kept per gcd(dim, devices of the mesh): tensors of different sizes
 * share their entries. SP_EUNSUPPORTED when the export would keep the reshard as it is (more
 * pieces than it cuts), SP_ENOMEM. */
int sp_reshard_memo_get(sp_reshard_memo *memo, const sp_layout *from, const sp_layout *to,
                        const int64_t *shape, const sp_reshard_shape **steps, int *n);

/* Lookups and misses so far (for benchmarks). */
void sp_reshard_memo_stats(const sp_reshard_memo *memo, int64_t *lookups, int64_t *misses);

#endif /* SP_SEARCH_RESHARD_MEMO_H */
