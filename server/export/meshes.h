/*
 * meshes.h - the mesh passes at the end of export: Shardy's -sdy-inline-meshes and
 * -sdy-drop-sharding-and-mesh.
 *
 *   sp_export_inline_meshes: every sharding that names a mesh symbol (`@mesh`) gets the mesh
 *     written inline instead (`mesh<["x"=2]>`, `mesh<[], device_ids=[3]>`, `mesh<[]>`), and
 *     the sdy.mesh ops are erased. Shardings already inline stay as they are. StableHLO
 *     replica groups naming a mesh symbol (`#stablehlo.replica_group_mesh_axes<mesh = @m`)
 *     get it as `#stablehlo.mesh<axes=[<name = "x", size = 2>]>` (plus
 *     `, device_ids=dense<[...]> : tensor<Nxi64>` when the mesh has device ids).
 *   sp_export_drop_sharding_and_mesh: every `sdy.sharding` (func arguments and results, op
 *     results) is removed and the sdy.mesh ops are erased. Ops whose sharding is part of the
 *     op (sharding_constraint, reshard, collectives, data-flow edges, manual and named
 *     computations) keep theirs.
 *
 * Memory: new shardings in the module's arena. Errors: a sharding naming an unknown mesh
 * (SP_EINVAL, naming it).
 */
#ifndef SP_EXPORT_MESHES_H
#define SP_EXPORT_MESHES_H

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_inline_meshes(sp_module *m, sp_err *err);
int sp_export_drop_sharding_and_mesh(sp_module *m, sp_err *err);

#endif /* SP_EXPORT_MESHES_H */
