/*
 * factor_projection.h - the factor table: an op's tensor shardings seen per factor.
 *
 * Propagation through one op does not look at dimensions but at the factors of the op's
 * sharding rule. The factor table is that view: one row per tensor of the op (operands first,
 * then results), one column per factor (size and kind come from the rule), and in each cell
 * the axes that shard the tensor along that factor, major first. A cell also says whether
 * its dimension is closed (the axes are final), whether the factor is the minor-most of its
 * dimension (only that one may be sharded non-divisibly), and which "overflow" axes of the
 * dimension could not be split over the factor (they stay on the tensor but never move).
 * A row also holds the tensor's replicated and unreduced axes, which may never shard it.
 * This is the table of Shardy's propagation design doc; the dashboard and the JSON report
 * print it before and after propagation.
 *
 * Projection, dims -> factors (sp_factor_table_build): per dimension, the axes are dealt to
 * its factors major first. A factor that is not minor-most takes only axes that tile it
 * exactly, splitting an axis into "x":(pre)g pieces where needed; when an axis is coprime
 * with what is left of the factor, that axis and all after it become the factor's overflow
 * axes, the next factor of the dim gets a closed empty cell and later ones no cell at all.
 * The minor-most factor takes whatever is left. A missing sharding projects to open, empty
 * cells.
 *
 * Re-projection, factors -> dims (sp_factor_table_to_sharding): per dimension, the factors'
 * axes are concatenated (merging a factor's first axis into the previous one when they are
 * adjacent parts of one axis); after a factor with overflow axes those are appended and the
 * dimension ends; after a factor whose axes do not fill it, the dimension ends too (later
 * axes would need a strided layout). Priorities are not reproduced.
 *
 * Axes in the table name mesh axes by index (sp_ft_axis), so the inner loops of propagation
 * compare integers; relations between parts of one axis are computed by ir/axis_ref.h.
 *
 * Invariants: a cell that is not `present` has no axes; rows and cells are indexed
 * [row][factor]; every sp_ft_axis is valid for the table's mesh.
 *
 * Memory: a table, its rows, cells and axis arrays live in the arena it was built in
 * (t->arena); propagation grows cells from the same arena. Nothing is freed individually.
 * The rule and mesh are borrowed and must outlive the table.
 */
#ifndef SP_FACTOR_PROJECTION_H
#define SP_FACTOR_PROJECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/mesh.h"
#include "ir/rule.h"
#include "ir/sharding.h"
#include "ir/strbuf.h"

typedef struct cJSON cJSON;

/* An axis reference by mesh-axis index: pre 0 and size 0 = the whole axis, as in sp_axis_ref. */
typedef struct sp_ft_axis {
  int32_t axis;
  int64_t pre;
  int64_t size;
} sp_ft_axis;

/* A growable list of axes, major first. */
typedef struct sp_ft_axes {
  int n, cap;
  sp_ft_axis *v;
} sp_ft_axes;

/* One tensor's sharding along one factor. */
typedef struct sp_ft_cell {
  bool present;      /* the factor is mapped in this tensor (and got an entry) */
  bool closed;       /* its dimension is closed: the axes are final */
  bool minor_most;   /* the last factor of its dimension */
  sp_ft_axes axes;
  sp_ft_axes overflow;
} sp_ft_cell;

/* One tensor. */
typedef struct sp_ft_row {
  bool sharded;      /* the tensor came with a sharding (NULL = none) */
  bool updated;      /* propagation changed a cell of this row */
  int64_t size;      /* product of the sizes of the factors its dims map to (saturated) */
  sp_ft_axes replicated;
  sp_ft_axes unreduced;
  sp_ft_cell *cells; /* [nfactors] */
} sp_ft_row;

typedef struct sp_factor_table {
  sp_arena *arena;
  const sp_mesh *mesh;
  const sp_rule *rule;
  int nfactors;
  int noperands, nresults;
  sp_ft_row *rows;   /* [noperands + nresults]: operands, then results */
  bool regrouped;    /* built by sp_factor_table_build_regrouped */
} sp_factor_table;

static inline int sp_factor_table_nrows(const sp_factor_table *t) {
  return t->noperands + t->nresults;
}

/* ---- axes ---- */

/* The axis reference with its name (borrowed from the mesh). */
sp_axis_ref sp_ft_axis_ref(const sp_mesh *m, sp_ft_axis a);
/* Resolves `r` against `m`; SP_ENOTFOUND when the name is not a mesh axis, SP_EINVAL when the
 * sub-axis is not valid for that axis. */
int sp_ft_axis_from_ref(const sp_mesh *m, const sp_axis_ref *r, sp_ft_axis *out);
/* The part "axis":(pre)size, the whole axis when it covers it. */
sp_ft_axis sp_ft_axis_make(const sp_mesh *m, int axis, int64_t pre, int64_t size);
int64_t sp_ft_axis_size(const sp_mesh *m, sp_ft_axis a);
int64_t sp_ft_axis_pre(sp_ft_axis a);
bool sp_ft_axis_equal(sp_ft_axis a, sp_ft_axis b);
bool sp_ft_axis_is_sub(sp_ft_axis a);
bool sp_ft_axis_contains(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b);
bool sp_ft_axis_is_prefix_of(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b);
/* The major part of `a` that does not overlap `b`; false when nothing is left. */
bool sp_ft_axis_prefix_without_overlap(const sp_mesh *m, sp_ft_axis a, sp_ft_axis b,
                                       sp_ft_axis *out);

/* List helpers; allocation failures return SP_ENOMEM. */
int sp_ft_axes_push(sp_arena *a, sp_ft_axes *l, sp_ft_axis x);
/* Pushes `x`, merging it into the last axis when they are adjacent parts of one axis. */
int sp_ft_axes_push_merging(sp_arena *a, const sp_mesh *m, sp_ft_axes *l, sp_ft_axis x);
int sp_ft_axes_assign(sp_arena *a, sp_ft_axes *dst, const sp_ft_axes *src);
bool sp_ft_axes_equal(const sp_ft_axes *x, const sp_ft_axes *y);
/* x is a strict prefix of y: x's axes start y's, the last one possibly a sub-axis prefix of
 * y's axis at that place, and x != y. [] is a strict prefix of any non-empty list. */
bool sp_ft_axes_is_strict_prefix(const sp_mesh *m, const sp_ft_axes *x, const sp_ft_axes *y);
/* x is a strict prefix of y, or equal to it. */
bool sp_ft_axes_is_prefix(const sp_mesh *m, const sp_ft_axes *x, const sp_ft_axes *y);
/* Product of the axes' sizes (saturated at INT64_MAX). */
int64_t sp_ft_axes_product(const sp_mesh *m, const sp_ft_axes *l);

/* ---- the table ---- */

/* Projects the shardings of an op's tensors onto the factors of `rule`. `operands` and
 * `results` have rule->noperands / rule->nresults entries (the arrays may be NULL when the
 * count is 0); a NULL entry means "no sharding". Every axis named must exist in `mesh`.
 * Errors (SP_EINVAL) name the tensor and dimension: a rank that differs from the rule, an
 * unknown axis, an invalid sub-axis, a malformed rule (factor out of range, mapped twice in
 * one tensor, a dimension without factors). */
int sp_factor_table_build(sp_arena *a, const sp_rule *rule, const sp_mesh *mesh,
                          sp_sharding *const *operands, sp_sharding *const *results,
                          sp_factor_table **out, sp_err *err);

/* The same, but in a dimension of several factors each factor takes, from every axis part
 * still to deal in order, the major part that divides what is left of the factor (skipping
 * parts coprime with it) instead of stopping at the first coprime one: no overflow axes, and
 * the factors after it deal the parts left, in order. Parts that no factor of such a
 * dimension takes go to the tensor's last factor (the minor-most of its last dimension); a
 * dimension of one factor gives it all its axes, as the plain projection does. This is how
 * explicit reshard insertion sees a dimension whose axes do not split along its factors
 * (e.g. [x=6, y=4096] over factors 4 and 6144: ["x":(1)2, "y":(1)2] and ["x":(2)3,
 * "y":(2)2048]); the rows' cells then rebuild a sharding other than the tensor's own
 * (another device order). */
int sp_factor_table_build_regrouped(sp_arena *a, const sp_rule *rule, const sp_mesh *mesh,
                                    sp_sharding *const *operands, sp_sharding *const *results,
                                    sp_factor_table **out, sp_err *err);

/* A deep copy in arena `a` (which becomes the copy's arena); NULL on out-of-memory. */
sp_factor_table *sp_factor_table_copy(sp_arena *a, const sp_factor_table *t);

/* Same cells (presence, closedness, axes, overflow) and same replicated/unreduced axes. */
bool sp_factor_table_equal(const sp_factor_table *x, const sp_factor_table *y);

/* The sharding of row `row` rebuilt from its cells (see the top comment). Replicated and
 * unreduced axes and the unreduced kind come from `old` (may be NULL); the mesh reference
 * (symbol or inline mesh) from `mesh_ref`, which must not be NULL. */
int sp_factor_table_to_sharding(sp_arena *a, const sp_factor_table *t, int row,
                                const sp_sharding *old, const sp_sharding *mesh_ref,
                                sp_sharding **out, sp_err *err);

/* "operand 1" / "result 0" into buf (>= 32 bytes). */
void sp_factor_table_row_name(const sp_factor_table *t, int row, char *buf);

/* Text form, one line per row, columns aligned:
 *              i=8         j=16        k=32 reduction   replicated  unreduced
 *   operand 0  {"a", ?}    -           {?}              {"f"}       {}
 * "-" marks a factor the tensor does not have; a closed cell prints without "?"; overflow
 * axes follow the cell as ` +{"b"}`. */
void sp_factor_table_print(sp_strbuf *sb, const sp_factor_table *t);

/* JSON form: {"mesh": [{"name", "size"}], "factors": [{"name", "size", "kind", "blocked"}],
 * "tensors": [{"tensor": "operand 0", "sharded", "updated", "replicated": [..],
 * "unreduced": [..], "cells": [null | {"axes": [..], "closed", "minor_most",
 * "overflow": [..]}]}]}. Axes are strings "a" or "a:(2)2". NULL on out-of-memory. */
cJSON *sp_factor_table_to_json(const sp_factor_table *t);

/* Appends an axis as `"a":(2)2` (quoted, as in shardings) or `a:(2)2` (unquoted, as in JSON). */
void sp_ft_axis_print(sp_strbuf *sb, const sp_mesh *m, sp_ft_axis a, bool quoted);

#endif /* SP_FACTOR_PROJECTION_H */
