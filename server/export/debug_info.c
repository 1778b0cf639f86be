/*
 * debug_info.c - removes propagation's debugging attributes (see debug_info.h).
 */
#include "export/debug_info.h"

#include <stddef.h>

static const char *const DEBUG_ATTRS[] = {
    "sdy.propagation_edges",        "sdy.block_arg_propagation_edges",
    "sdy.result_propagation_edges", "sdy.sharding_origins",
    "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins",
    "sdy.sharding_origin_name",     NULL};

static void strip(sp_attrs *d) {
  for (const char *const *n = DEBUG_ATTRS; *n; n++) sp_attrs_remove(d, *n);
}

static bool strip_op(sp_op *op, void *ctx) {
  (void)ctx;
  strip(&op->attrs);
  if (op->kind == SP_OP_FUNC && op->func) {
    sp_func_info *f = op->func;
    for (int i = 0; f->result_attrs && i < f->nresults; i++) strip(&f->result_attrs[i]);
    for (int i = 0; f->decl_arg_attrs && i < f->nargs; i++) strip(&f->decl_arg_attrs[i]);
    sp_block *entry = op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
    for (int i = 0; entry && i < entry->nargs; i++) strip(&entry->args[i]->attrs);
  }
  return true;
}

int sp_export_remove_debug_info(sp_module *m, sp_err *err) {
  (void)err;
  sp_op_walk(m->op, strip_op, NULL);
  return SP_OK;
}
