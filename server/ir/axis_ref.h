/*
 * axis_ref.h - the algebra of axis references and sub-axes.
 *
 * An axis reference is a whole mesh axis "x" or a sub-axis "x":(pre)size (see mesh.h). For an
 * axis of size n, view it as [pre, size, n/(pre*size)] and take the middle part; a full axis
 * is pre 1, size n. next(r) = pre*size. These relations decide what propagation may move and
 * what the verifier accepts. All functions take `n`, the size of the mesh axis the reference
 * names, and treat references to different axis names as unrelated (nothing contains,
 * overlaps or prefixes anything of another name; everything coexists).
 *
 * Results that are axis references are normalised: a part that covers the whole axis is
 * returned as the full axis (pre 0, size 0 in the struct).
 *
 * Pure functions; no allocation.
 */
#ifndef SP_AXIS_REF_H
#define SP_AXIS_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/mesh.h"

/* The reference "name":(pre)size, normalised to the full axis when it covers all of it. */
sp_axis_ref sp_axis_make(const char *name, int64_t pre, int64_t size, int64_t n);
/* A sub-axis is valid if pre >= 1, size > 1, n % (pre*size) == 0 and size != n. Full axes are
 * always valid. */
bool sp_axis_is_valid(const sp_axis_ref *r, int64_t n);

bool sp_axis_same_name(const sp_axis_ref *a, const sp_axis_ref *b);
/* a contains b: a is full, or pre(a) <= pre(b) and next(a) >= next(b). */
bool sp_axis_contains(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
/* a is a prefix of b: b contains a and pre(a) == pre(b). */
bool sp_axis_is_prefix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
/* a is a strict prefix of b: a prefix of b and a != b. */
bool sp_axis_is_strict_prefix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
/* a is a suffix of b: b contains a and next(a) == next(b). */
bool sp_axis_is_suffix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
bool sp_axis_overlaps(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
/* Whether a and b can be used in one sharding (their boundaries nest). */
bool sp_axis_can_coexist(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);
/* The common part of two overlapping, coexisting references; false if there is none. */
bool sp_axis_overlap_part(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                          sp_axis_ref *out);
/* The major part of a that does not overlap b. Returns false when nothing remains (or a and
 * b cannot coexist); returns a itself when they do not overlap. */
bool sp_axis_prefix_without_overlap(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out);
/* The minor part of a that does not overlap b (mirror of the above). */
bool sp_axis_suffix_without_overlap(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out);
/* a if a is a prefix of b, b if b is a prefix of a, else false. */
bool sp_axis_greatest_common_prefix(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out);
/* Two sub-axes of one axis with next(a) == pre(b): a then b form one part. */
bool sp_axis_can_merge(const sp_axis_ref *a, const sp_axis_ref *b);
/* The merged part (full axis when it covers the whole axis). Requires can_merge. */
sp_axis_ref sp_axis_merge(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n);

/* Mesh order: by the axis' index in `mesh`; for one name the full axis sorts before a
 * sub-axis with pre > 1 and after one with pre == 1; sub-axes by (pre, size). Returns <0, 0,
 * >0. Names missing from the mesh sort last, by name. */
int sp_axis_compare(const sp_axis_ref *a, const sp_axis_ref *b, const sp_mesh *mesh);

#endif /* SP_AXIS_REF_H */
