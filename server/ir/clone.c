/*
 * clone.c - deep copies of ops and regions (see clone.h).
 */
#include "ir/clone.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ cloning */

static int copy_attrs(sp_arena *a, const sp_attrs *src, sp_attrs *dst) {
  memset(dst, 0, sizeof *dst);
  if (!src->n) return SP_OK;
  dst->v = sp_arena_alloc(a, (size_t)src->n * sizeof *dst->v);
  if (!dst->v) return SP_ENOMEM;
  memcpy(dst->v, src->v, (size_t)src->n * sizeof *dst->v);
  dst->n = dst->cap = src->n;
  return SP_OK;
}

static void *dup_array(sp_arena *a, const void *src, size_t n, size_t size, bool *oom) {
  if (!src || !n) return NULL;
  void *p = sp_arena_alloc(a, n * size);
  if (!p) {
    *oom = true;
    return NULL;
  }
  memcpy(p, src, n * size);
  return p;
}

static sp_func_info *clone_func_info(sp_arena *a, const sp_func_info *fi) {
  sp_func_info *c = sp_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  bool oom = false;
  *c = *fi;
  c->arg_types = dup_array(a, fi->arg_types, (size_t)fi->nargs, sizeof *fi->arg_types, &oom);
  c->result_types =
      dup_array(a, fi->result_types, (size_t)fi->nresults, sizeof *fi->result_types, &oom);
  c->result_shardings =
      dup_array(a, fi->result_shardings, (size_t)fi->nresults, sizeof *fi->result_shardings, &oom);
  c->result_attrs = dup_array(a, fi->result_attrs, (size_t)fi->nresults, sizeof *fi->result_attrs,
                              &oom);
  c->decl_arg_attrs =
      dup_array(a, fi->decl_arg_attrs, (size_t)fi->nargs, sizeof *fi->decl_arg_attrs, &oom);
  for (int i = 0; !oom && c->result_attrs && i < fi->nresults; i++)
    oom = copy_attrs(a, &fi->result_attrs[i], &c->result_attrs[i]) != SP_OK;
  for (int i = 0; !oom && c->decl_arg_attrs && i < fi->nargs; i++)
    oom = copy_attrs(a, &fi->decl_arg_attrs[i], &c->decl_arg_attrs[i]) != SP_OK;
  return oom ? NULL : c;
}

int sp_region_clone_into(sp_arena *a, const sp_region *src, sp_region *dst, sp_value_map *map) {
  /* Blocks and arguments first, so that ops may refer to arguments of any block. */
  int first = dst->nblocks;
  for (int b = 0; b < src->nblocks; b++) {
    const sp_block *sb = src->blocks[b];
    sp_block *db = sp_region_add_block(a, dst);
    if (!db) return SP_ENOMEM;
    for (int i = 0; i < sb->nargs; i++) {
      const sp_value *sv = sb->args[i];
      sp_value *dv = sp_block_add_arg(a, db, sv->type);
      if (!dv) return SP_ENOMEM;
      dv->name_hint = sv->name_hint;
      dv->sharding = sv->sharding;
      dv->loc = sv->loc;
      if (copy_attrs(a, &sv->attrs, &dv->attrs) || sp_value_map_put(map, sv, dv)) return SP_ENOMEM;
    }
  }
  for (int b = 0; b < src->nblocks; b++) {
    sp_block *db = dst->blocks[first + b];
    for (const sp_op *o = src->blocks[b]->first; o; o = o->next) {
      sp_op *c = sp_op_clone(a, o, map);
      if (!c) return SP_ENOMEM;
      sp_block_append(db, c);
    }
  }
  return SP_OK;
}

sp_op *sp_op_clone(sp_arena *a, const sp_op *op, sp_value_map *map) {
  sp_type **types = NULL;
  if (op->nresults) {
    types = sp_arena_alloc(a, (size_t)op->nresults * sizeof *types);
    if (!types) return NULL;
    for (int i = 0; i < op->nresults; i++) types[i] = op->results[i].type;
  }
  sp_op *c = sp_op_create(a, op->name, op->noperands, NULL, op->nresults, types, op->nregions);
  if (!c) return NULL;
  c->kind = op->kind;
  c->loc = op->loc;
  for (int i = 0; i < op->noperands; i++)
    sp_op_set_operand(c, i, sp_value_map_lookup_or_self(map, op->operands[i].value));
  for (int i = 0; i < op->nresults; i++) {
    const sp_value *r = &op->results[i];
    sp_value *d = &c->results[i];
    d->name_hint = r->name_hint;
    d->sharding = r->sharding;
    d->loc = r->loc;
    if (copy_attrs(a, &r->attrs, &d->attrs) || sp_value_map_put(map, r, d)) return NULL;
  }
  if (copy_attrs(a, &op->attrs, &c->attrs)) return NULL;
  if (op->func && !(c->func = clone_func_info(a, op->func))) return NULL;
  for (int r = 0; r < op->nregions; r++)
    if (sp_region_clone_into(a, &op->regions[r], &c->regions[r], map)) return NULL;
  return c;
}
