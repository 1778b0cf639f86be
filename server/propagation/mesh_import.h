/*
 * mesh_import.h - the module clean-ups at the start of Shardy's propagation pipeline:
 * symbol DCE, lifting inline meshes, removing size-one axes and manual-axes cleanup.
 *
 *   sp_symbol_dce: erases private func.func symbols that no live op refers to (a public func,
 *     a mesh or any other top-level op is live; a private func is live once a live func refers
 *     to it through a symbol attribute such as a call's callee). Meshes are never erased.
 *   sp_mesh_lift_inlined: keeps the first of several identical sdy.mesh ops (references to
 *     the others are renamed to it) and replaces every inline mesh `mesh<[...]>` in a sharding
 *     by a symbol: an existing sdy.mesh with the same axes and ids if there is one, else a new
 *     sdy.mesh named `mesh` (`maximal_mesh_<id>` for a maximal mesh, `empty_mesh` for the empty
 *     one), made unique with `_0`, `_1`, ... and inserted after the last mesh of the module.
 *     StableHLO meshes written inline in replica groups (`#stablehlo.replica_group_mesh_axes<
 *     mesh = #stablehlo.mesh<axes = [...]>, ...>`) are lifted the same way, after the
 *     shardings, and referred to as `mesh = @name`.
 *     Not done: shardy-import/lift_inlined_meshes.mlir chunk 11 expects every sdy.mesh after
 *     lifting, the module's own and the lifted one alike, to carry a discardable attribute
 *     `stablehlo.mesh = {axes = [{name = "a", size = 4 : i64}]}`. Nothing in that chunk's input
 *     differs from the other chunks' (no StableHLO mesh, no tag, no module attribute), and
 *     their CHECK lines match a mesh line by prefix, so "every mesh, always" and "every mesh of
 *     a module with any StableHLO op" fit the files equally, and the files give the
 *     attribute's form only for axes: not for device_ids, maximal or empty meshes, nor for a
 *     mesh tagged already. Without a rule that holds for any module it is left out (it would
 *     also change every propagated module's text).
 *   sp_mesh_remove_size_one_axes: drops every axis of size 1 from every sharding (dims,
 *     replicated, unreduced), from manual_axes and from all-reduce axes; a priority left on a
 *     closed dim that became empty is dropped too. Meshes keep their size-one axes.
 *   sp_mesh_manual_axes_cleanup: sorts each manual computation's manual_axes in mesh order,
 *     makes every in/out sharding refer to the computation's mesh as its first sharding on a
 *     non-empty mesh does (by name or inline; empty-mesh placeholders included), and adds to
 *     each in/out sharding's replicated list the parts of the manual axes it does not use
 *     (a whole axis, or the sub-axes around the parts it uses), neighbouring parts merged.
 *
 * Memory: new ops and shardings come from the module's arena; scratch tables are malloc'd and
 * freed before returning. Errors: SP_ENOMEM, or SP_EINVAL naming the sharding whose mesh is
 * unknown.
 */
#ifndef SP_MESH_IMPORT_H
#define SP_MESH_IMPORT_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_symbol_dce(sp_module *m, sp_err *err);
int sp_mesh_lift_inlined(sp_module *m, sp_err *err);
int sp_mesh_remove_size_one_axes(sp_module *m, sp_err *err);
int sp_mesh_manual_axes_cleanup(sp_module *m, sp_err *err);

/* A symbol name not used by any top-level op: `base` itself, else base_0, base_1, ...
 * (allocated in the module's arena; NULL on out-of-memory). */
const char *sp_module_unique_symbol(sp_module *m, const char *base);
/* The same with MLIR's SymbolTable counting: the suffixes tried start at *counter, which
 * every renaming advances, so one counter shared by a pass run numbers its clashes
 * module-wide (bar, bar_0, then foo, foo_1). */
const char *sp_module_unique_symbol_counted(sp_module *m, const char *base, unsigned *counter);

/* The top-level op named `name` (any kind with a sym_name), or NULL. */
sp_op *sp_module_lookup_symbol(const sp_module *m, const char *name);

#endif /* SP_MESH_IMPORT_H */
