/*
 * reshard_op.c - the sdy.reshard ops the export passes insert (see reshard_op.h).
 */
#include "export/reshard_op.h"

sp_op *sp_export_reshard_op(sp_module *m, sp_value *v, sp_type *type, sp_sharding *s, sp_loc loc) {
  if (!type) type = v->type;
  sp_op *r = sp_op_create(m->arena, "sdy.reshard", 1, v ? &v : NULL, 1, &type, 0);
  if (!r) return NULL;
  r->loc = loc;
  r->results[0].sharding = s;
  return r;
}
