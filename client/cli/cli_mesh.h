/*
 * cli_mesh.h - the `--mesh` option of `shardplan plan`: a mesh for a module that has none.
 *
 * "data=4,model=2" (every axis with a size) inserts `sdy.mesh @mesh = <["data"=4, "model"=2]>`
 * at the top of the module body (a new malloc'd text in *with_mesh); "data,model" (names only)
 * gives the axis names for the request's mesh_axes option, whose sizes the search chooses
 * (*axes: malloc'd array of malloc'd names). A module that already has an sdy.mesh is refused:
 * its shardings name their mesh, and the option would not say which one to replace.
 * Returns 0, or -1 with the reason in `why`.
 */
#ifndef SP_CLI_MESH_H
#define SP_CLI_MESH_H

#include <stddef.h>

int sp_cli_mesh_apply(const char *spec, const char *text, char **with_mesh, char ***axes,
                      size_t *n_axes, char *why, size_t cap);

#endif /* SP_CLI_MESH_H */
