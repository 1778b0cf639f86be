/*
 * pad_halo.h - a sharded stablehlo.pad or unit-stride stablehlo.slice made local by a halo
 * exchange: the enable-halo-exchange=true form of -sdy-resolve-permutation-factors for them.
 *
 * A slice [start:limit] is the pad low = -start, high = limit - size. Per dim d of operand size
 * I and result size O on S shards (operand and result sharded alike), shards hold
 * s_in = ceil(I/S) and s_out = ceil(O/S) elements, and L, H, P are the low, high and interior
 * padding. Result shard i covers result [i*s_out, (i+1)*s_out), the interior-padded operand
 * positions g = o - L, so the operand elements from floor(g/(P+1)) (one more at the high end
 * when P > 0). Its left halo (elements before i*s_in) and right halo (past (i+1)*s_in - 1) in
 * shards are the hops; nl and nr are their maxima over i.
 *
 * A sharded dim is exchanged unless P = L = 0 and s_in = s_out (then every shard is its own
 * result shard). The rewrite, when every exchanged dim has at most S/2 hops each way:
 *   1. a slice gets a zero scalar for padding (a pad uses its own padding value, which must
 *      be a zero constant: devices without a neighbour receive zeros); the operand is padded
 *      at the high end to S*s_in on each sharded dim where S does not divide I;
 *   2. an sdy.manual_computation over every axis of the operand's sharding takes the operand
 *      and the padding value, and per exchanged dim (in order): collective-permutes the whole
 *      shard from nl..1 shards before and 1..nr shards after, concatenates them around the
 *      local shard, pads both ends by X = s_out*(P+1) with interior P, and dynamic-slices
 *      s_out elements at max(i*(s_out - s_in*(P+1)) + X - L + nl*s_in*(P+1), 0), i computed
 *      from partition_id; then pads (or slices) the unsharded dims as the op did;
 *   3. its result, of S*s_out on each sharded dim, is sliced back to the op's type when S does
 *      not divide O. Ops inside the manual computation are replicated.
 * Otherwise nothing changes (the caller resolves the dims by replication).
 *
 * Memory: new ops in the module's arena.
 */
#ifndef SP_EXPORT_PAD_HALO_H
#define SP_EXPORT_PAD_HALO_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

/* Rewrites `op` (a stablehlo.pad or stablehlo.slice) as above; *done is false, and nothing
 * changes, when the op is not of that form. */
int sp_export_pad_halo(sp_module *m, sp_op *op, bool *done, sp_err *err);

#endif /* SP_EXPORT_PAD_HALO_H */
