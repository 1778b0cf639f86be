/*
 * single_device.h - single-device (maximal-mesh) shardings in the full version of explicit
 * reshard insertion: an op whose results are placed on one device runs there alone.
 *
 * Per op with a result on a maximal mesh M (`<[], device_ids=[d]>`):
 *   - every tensor operand not already on M is resharded to `<@M, []>`, first to the
 *     replicated sharding of the module's main mesh (the first sdy.mesh with axes) when it is
 *     on another mesh, or of its own mesh when it is sharded there;
 *   - every result on M is resharded right after the op to the main mesh's replicated
 *     sharding; every sharded result on another mesh to that mesh's replicated sharding and
 *     then back to its own (the op computed it whole on one device); users take the last.
 * Errors (Shardy's messages, at the function or op): a function argument or result with a
 * maximal sharding; an op whose results name two different single devices.
 *
 * Memory: new ops and shardings in the module's arena.
 */
#ifndef SP_EXPORT_SINGLE_DEVICE_H
#define SP_EXPORT_SINGLE_DEVICE_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

int sp_export_single_device_reshards(sp_module *m, sp_err *err);

/* Whether `s` is on a maximal mesh (one device, no axes). */
bool sp_export_is_single_device(const sp_module *m, const sp_sharding *s);
/* The first sdy.mesh of the module with axes (the main mesh), NULL if none. */
const char *sp_export_main_mesh(const sp_module *m);

#endif /* SP_EXPORT_SINGLE_DEVICE_H */
