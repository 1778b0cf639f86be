/*
 * meshes.c - inlining and dropping meshes (see meshes.h).
 */
#include "export/meshes.h"

#include <ctype.h>
#include <string.h>

#include "ir/strbuf.h"
#include "propagation/sharding_walk.h"

static void erase_meshes(sp_module *m) {
  sp_op *next;
  for (sp_op *op = sp_module_body(m)->first; op; op = next) {
    next = op->next;
    if (op->kind == SP_OP_SDY_MESH) sp_op_erase(op);
  }
}

static int inline_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)ctx;
  const sp_sharding *sh = *s->slot;
  if (sh->inline_mesh) return SP_OK;
  const sp_mesh *mesh = sp_module_lookup_mesh(m, sh->mesh_name);
  if (!mesh)
    return sp_err_set(err, SP_EINVAL, "-sdy-inline-meshes: unknown mesh: @%s", sh->mesh_name);
  sp_sharding *c = sp_sharding_copy(m->arena, sh);
  if (!c) return sp_err_set(err, SP_ENOMEM, "out of memory inlining meshes");
  c->mesh_name = NULL;
  c->inline_mesh = (sp_mesh *)mesh; /* the mesh op's mesh outlives the op (arena-owned) */
  *s->slot = c;
  return SP_OK;
}

/* ---- StableHLO replica groups naming a mesh symbol, in an attribute kept as text:
 *   #stablehlo.replica_group_mesh_axes<mesh = @m, ...> gets
 *   mesh = #stablehlo.mesh<axes=[<name = "x", size = 2>], device_ids=dense<[1, 0]> : tensor<2xi64>>
 * (device_ids only when the mesh has them). */

static const char HLO_GROUP_MESH[] = "replica_group_mesh_axes<mesh = @";

static bool symbol_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '-'; }

static void put_hlo_mesh(sp_strbuf *sb, const sp_mesh *mesh) {
  sp_strbuf_puts(sb, "#stablehlo.mesh<axes=[");
  for (int i = 0; i < mesh->naxes; i++)
    sp_strbuf_printf(sb, "%s<name = \"%s\", size = %lld>", i ? ", " : "", mesh->axes[i].name,
                     (long long)mesh->axes[i].size);
  sp_strbuf_putc(sb, ']');
  if (mesh->ndevice_ids) {
    sp_strbuf_puts(sb, ", device_ids=dense<[");
    for (int i = 0; i < mesh->ndevice_ids; i++) {
      if (i) sp_strbuf_puts(sb, ", ");
      sp_strbuf_put_i64(sb, mesh->device_ids[i]);
    }
    sp_strbuf_printf(sb, "]> : tensor<%dxi64>", mesh->ndevice_ids);
  }
  sp_strbuf_putc(sb, '>');
}

typedef struct hlo_inline {
  sp_module *m;
  sp_err *err;
  int rc;
} hlo_inline;

/* Rewrites one text attribute; SP_OK when it names no mesh symbol. */
static int inline_hlo_text(hlo_inline *h, sp_attr *at) {
  const char *s = at->u.s, *hit = strstr(s, HLO_GROUP_MESH);
  if (!hit) return SP_OK;
  sp_strbuf sb = SP_STRBUF_INIT;
  int rc = SP_OK;
  for (; hit; hit = strstr(s, HLO_GROUP_MESH)) {
    const char *name = hit + sizeof HLO_GROUP_MESH - 1, *end = name;
    while (symbol_char(*end)) end++;
    char *sym = sp_arena_strndup(h->m->arena, name, (size_t)(end - name));
    const sp_mesh *mesh = sym ? sp_module_lookup_mesh(h->m, sym) : NULL;
    if (!sym) {
      rc = sp_err_set(h->err, SP_ENOMEM, "out of memory inlining meshes");
      goto fail;
    }
    if (!mesh) {
      rc = sp_err_set(h->err, SP_EINVAL, "-sdy-inline-meshes: unknown mesh: @%s", sym);
      goto fail;
    }
    sp_strbuf_putn(&sb, s, (size_t)(name - 1 - s));
    put_hlo_mesh(&sb, mesh);
    s = end;
  }
  sp_strbuf_puts(&sb, s);
  const char *text = sp_strbuf_ok(&sb) ? sp_arena_strndup(h->m->arena, sb.buf, sb.len) : NULL;
  if (!text) {
    rc = sp_err_set(h->err, SP_ENOMEM, "out of memory inlining meshes");
    goto fail;
  }
  at->u.s = text;
fail:
  sp_strbuf_free(&sb);
  return rc;
}

static bool inline_hlo_meshes(sp_op *op, void *ctx) {
  hlo_inline *h = ctx;
  for (int i = 0; i < op->attrs.n && !h->rc; i++)
    if (op->attrs.v[i].kind == SP_ATTR_TEXT) h->rc = inline_hlo_text(h, &op->attrs.v[i]);
  return h->rc == SP_OK;
}

int sp_export_inline_meshes(sp_module *m, sp_err *err) {
  int rc = sp_sharding_walk(m, inline_slot, NULL, err);
  if (rc) return rc;
  hlo_inline h = {m, err, SP_OK};
  sp_op_walk(m->op, inline_hlo_meshes, &h);
  if (h.rc) return h.rc;
  erase_meshes(m);
  return SP_OK;
}

/* Shardings that are part of the op's own syntax stay. */
static bool sharding_is_operand_of_op(const sp_op *op) {
  switch (op->kind) {
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_DATA_FLOW_EDGE:
    case SP_OP_SDY_MANUAL_COMPUTATION:
    case SP_OP_SDY_NAMED_COMPUTATION:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_REDUCE_SCATTER: return true;
    default: return false;
  }
}

static int drop_slot(sp_module *m, const sp_sharding_slot *s, void *ctx, sp_err *err) {
  (void)m;
  (void)ctx;
  (void)err;
  if (s->op && s->op->kind != SP_OP_FUNC && sharding_is_operand_of_op(s->op)) return SP_OK;
  if (s->op && s->op->kind != SP_OP_FUNC && !s->value) return SP_OK; /* attributes: below */
  *s->slot = NULL;
  return SP_OK;
}

static bool drop_attr(sp_op *op, void *ctx) {
  (void)ctx;
  if (!sharding_is_operand_of_op(op)) sp_attrs_remove(&op->attrs, "sdy.sharding");
  return true;
}

int sp_export_drop_sharding_and_mesh(sp_module *m, sp_err *err) {
  int rc = sp_sharding_walk(m, drop_slot, NULL, err);
  if (rc) return rc;
  sp_op_walk(m->op, drop_attr, NULL);
  erase_meshes(m);
  return SP_OK;
}
