/*
 * module_copy.c - a module copied with its ops and values paired (see module_copy.h).
 */
#include "ir/module_copy.h"

#include <string.h>

#include "ir/clone.h"

int sp_module_copy_make(const sp_module *m, sp_module *into, sp_module_copy *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  sp_ptr_map_init(&out->index);
  out->module = into ? into : sp_module_new(m->filename);
  sp_value_map map;   /* the clone's own bookkeeping; the pairing below replaces it */
  sp_value_map_init(&map);
  int rc = SP_OK;
  if (!out->module || !(out->module->op = sp_op_clone(out->module->arena, m->op, &map))) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory copying the module");
    goto done;
  }
  if (m->filename) out->module->filename = m->filename;
  sp_op_walk(m->op, sp_op_list_collect, &out->orig);
  sp_op_walk(out->module->op, sp_op_list_collect, &out->ops);
  if (out->orig.oom || out->ops.oom ||
      sp_ptr_map_reserve(&out->index, 2 * (size_t)out->ops.n)) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory pairing the module's copy");
    goto done;
  }
  if (out->orig.n != out->ops.n) {
    rc = sp_err_set(err, SP_EINTERNAL, "the module's copy has %d ops, the module %d",
                    out->ops.n, out->orig.n);
    goto done;
  }
  for (int i = 0; i < out->ops.n; i++) {
    sp_ptr_map_put(&out->index, out->orig.v[i], i);
    sp_ptr_map_put(&out->index, out->ops.v[i], i);
  }
done:
  sp_value_map_free(&map);
  if (rc) sp_module_copy_free(out);
  return rc;
}

void sp_module_copy_free(sp_module_copy *c) {
  sp_op_list_free(&c->orig);
  sp_op_list_free(&c->ops);
  sp_ptr_map_free(&c->index);
  sp_module_free(c->module);
  memset(c, 0, sizeof *c);
}

/* The op paired with `op`, which must be in list `from`; the other list is `to`. */
static sp_op *counterpart(const sp_module_copy *c, const sp_op_list *from, const sp_op_list *to,
                          const sp_op *op) {
  long i = op ? (long)sp_ptr_map_get((sp_ptr_map *)&c->index, op, -1) : -1;
  return i >= 0 && i < from->n && from->v[i] == op ? to->v[i] : NULL;
}

/* The value paired with `v` (a value of the `from` side): a result through its op, a block
 * argument through the op owning its block (same region, block and index). */
static sp_value *counterpart_value(const sp_module_copy *c, const sp_op_list *from,
                                   const sp_op_list *to, const sp_value *v) {
  if (!v) return NULL;
  if (v->def) {
    sp_op *o = counterpart(c, from, to, v->def);
    return o && v->index < o->nresults ? &o->results[v->index] : NULL;
  }
  const sp_op *owner = v->block ? sp_block_parent_op(v->block) : NULL;
  sp_op *o = counterpart(c, from, to, owner);
  if (!o) return NULL;
  for (int r = 0; r < owner->nregions && r < o->nregions; r++)
    for (int b = 0; b < owner->regions[r].nblocks && b < o->regions[r].nblocks; b++)
      if (owner->regions[r].blocks[b] == v->block && v->index < o->regions[r].blocks[b]->nargs)
        return o->regions[r].blocks[b]->args[v->index];
  return NULL;
}

sp_op *sp_module_copy_op(const sp_module_copy *c, const sp_op *orig) {
  return counterpart(c, &c->orig, &c->ops, orig);
}

sp_op *sp_module_copy_original_op(const sp_module_copy *c, const sp_op *copy) {
  return counterpart(c, &c->ops, &c->orig, copy);
}

sp_value *sp_module_copy_value(const sp_module_copy *c, const sp_value *orig) {
  return counterpart_value(c, &c->orig, &c->ops, orig);
}

sp_value *sp_module_copy_original_value(const sp_module_copy *c, const sp_value *copy) {
  return counterpart_value(c, &c->ops, &c->orig, copy);
}
