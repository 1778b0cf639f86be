/*
 * gather_scatter_batching.c - explicit batching dims for gather and scatter (see
 * gather_scatter_batching.h).
 */
#include "propagation/gather_scatter_batching.h"

#include <stdbool.h>
#include <string.h>

#include "ir/sp_limits.h"

/* The dim along which `v` counts 0, 1, 2, ... (an iota, possibly reshaped or broadcast), or
 * -1. */
static int iota_dim(const sp_value *v) {
  const sp_op *op = v ? v->def : NULL;
  if (!op || !sp_type_is_static_tensor(v->type)) return -1;
  int64_t d;
  if (op->kind == SP_OP_IOTA) return sp_op_get_int(op, "iota_dimension", &d) ? (int)d : -1;
  if (op->noperands != 1 || !op->operands[0].value) return -1;
  const sp_type *in = op->operands[0].value->type, *out = v->type;
  int k = iota_dim(op->operands[0].value);
  if (k < 0 || !sp_type_is_static_tensor(in)) return -1;
  if (op->kind == SP_OP_BROADCAST_IN_DIM) {
    sp_ints bd;
    if (!sp_op_get_ints(op, "broadcast_dimensions", &bd) || k >= bd.n) return -1;
    int j = (int)bd.v[k];
    return j >= 0 && j < out->rank && out->dims[j] == in->dims[k] ? j : -1;
  }
  if (op->kind == SP_OP_RESHAPE) {
    /* The output dim of the same size that starts at the same element stride. */
    int64_t before = 1;
    for (int i = 0; i < k; i++) before *= in->dims[i];
    int64_t acc = 1;
    for (int j = 0; j < out->rank; j++) {
      if (acc == before && out->dims[j] == in->dims[k]) return j;
      acc *= out->dims[j];
    }
  }
  return -1;
}

static bool has(const sp_ints *l, int64_t x) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == x) return true;
  return false;
}

static int set_ints(sp_arena *a, sp_op *op, const char *name, const int64_t *v, int n) {
  sp_attr at = {.name = name, .kind = SP_ATTR_INTS};
  at.u.ints.n = n;
  at.u.ints.v = n ? sp_arena_alloc(a, (size_t)n * sizeof *v) : NULL;
  if (n && !at.u.ints.v) return SP_ENOMEM;
  if (n) memcpy(at.u.ints.v, v, (size_t)n * sizeof *v);
  return sp_attrs_set(a, &op->attrs, &at);
}

/* The names of the dimension numbers of a gather or a scatter. */
typedef struct dims_names {
  const char *collapsed, *operand_batching, *indices_batching, *index_map;
} dims_names;

static const dims_names GATHER = {"collapsed_slice_dims", "operand_batching_dims",
                                  "start_indices_batching_dims", "start_index_map"};
static const dims_names SCATTER = {"inserted_window_dims", "input_batching_dims",
                                   "scatter_indices_batching_dims",
                                   "scatter_dims_to_operand_dims"};

static int rewrite(sp_module *m, sp_op *op, const dims_names *nm, int operand_idx,
                   int indices_idx) {
  sp_value *operand = op->operands[operand_idx].value, *indices = op->operands[indices_idx].value;
  int64_t ivd;
  sp_ints collapsed = {0, NULL}, obatch = {0, NULL}, map = {0, NULL};
  if (!operand || !indices || !sp_type_is_static_tensor(operand->type) ||
      !sp_type_is_static_tensor(indices->type) || !sp_op_get_int(op, "index_vector_dim", &ivd) ||
      !sp_op_get_ints(op, nm->index_map, &map))
    return SP_OK;
  sp_op_get_ints(op, nm->collapsed, &collapsed);
  sp_op_get_ints(op, nm->operand_batching, &obatch);
  sp_op *cat = indices->def;
  int64_t cat_dim;
  if (obatch.n || !cat || cat->kind != SP_OP_CONCATENATE || ivd >= indices->type->rank ||
      !sp_op_get_int(cat, "dimension", &cat_dim) || cat_dim != ivd || cat->noperands < 2 ||
      cat->noperands > SP_MAX_RANK || map.n > SP_MAX_RANK)
    return SP_OK;
  /* Which pieces of the index vector are a batch iota. */
  bool drop[SP_MAX_RANK] = {false};
  int64_t new_ob[SP_MAX_RANK], new_ib[SP_MAX_RANK];
  int nb = 0, kept = 0, pos = 0;
  for (int i = 0; i < cat->noperands; i++) {
    const sp_value *piece = cat->operands[i].value;
    int64_t size = piece && sp_type_is_static_tensor(piece->type) ? piece->type->dims[ivd] : -1;
    int t = size == 1 ? iota_dim(piece) : -1;
    int64_t o = pos < map.n ? map.v[pos] : -1;
    if (t >= 0 && t != ivd && o >= 0 && o < operand->type->rank && has(&collapsed, o) &&
        operand->type->dims[o] == indices->type->dims[t]) {
      drop[i] = true;
      new_ob[nb] = o;
      new_ib[nb++] = t;
    } else {
      kept++;
    }
    pos += size > 0 ? (int)size : 0;
  }
  if (nb == 0 || kept == 0 || pos != map.n) return SP_OK;
  /* The indices without the dropped pieces. */
  sp_arena *a = m->arena;
  sp_value *vals[SP_MAX_RANK];
  int nv = 0;
  int64_t width = 0;
  for (int i = 0; i < cat->noperands; i++)
    if (!drop[i]) {
      vals[nv++] = cat->operands[i].value;
      width += cat->operands[i].value->type->dims[ivd];
    }
  sp_value *new_indices = vals[0];
  if (nv > 1) {
    sp_type *t = sp_type_tensor(a, indices->type->rank, indices->type->dims, indices->type->elem);
    if (!t) return SP_ENOMEM;
    t->dims[ivd] = width;
    sp_op *c = sp_op_create(a, "stablehlo.concatenate", nv, vals, 1, &t, 0);
    sp_attr dim = {.name = "dimension", .kind = SP_ATTR_INT, .u.i = ivd};
    if (!c || sp_attrs_set(a, &c->attrs, &dim)) return SP_ENOMEM;
    c->loc = cat->loc;
    sp_op_insert_before(op, c);
    new_indices = &c->results[0];
  }
  sp_op_set_operand(op, indices_idx, new_indices);
  /* Dimension numbers: the dropped operand dims become batching dims. */
  int64_t new_map[SP_MAX_RANK], new_collapsed[SP_MAX_RANK];
  int nm_ = 0, nc = 0;
  pos = 0;
  for (int i = 0; i < cat->noperands; i++) {
    int64_t size = cat->operands[i].value->type->dims[ivd];
    for (int64_t k = 0; k < size; k++, pos++)
      if (!drop[i]) new_map[nm_++] = map.v[pos];
  }
  for (int i = 0; i < collapsed.n; i++) {
    bool batch = false;
    for (int k = 0; k < nb; k++) batch |= new_ob[k] == collapsed.v[i];
    if (!batch) new_collapsed[nc++] = collapsed.v[i];
  }
  /* Batching pairs in operand-dim order. */
  for (int i = 1; i < nb; i++)
    for (int j = i; j > 0 && new_ob[j - 1] > new_ob[j]; j--) {
      int64_t t = new_ob[j]; new_ob[j] = new_ob[j - 1]; new_ob[j - 1] = t;
      t = new_ib[j]; new_ib[j] = new_ib[j - 1]; new_ib[j - 1] = t;
    }
  if (set_ints(a, op, nm->index_map, new_map, nm_) ||
      set_ints(a, op, nm->collapsed, new_collapsed, nc) ||
      set_ints(a, op, nm->operand_batching, new_ob, nb) ||
      set_ints(a, op, nm->indices_batching, new_ib, nb))
    return SP_ENOMEM;
  return SP_OK;
}

typedef struct walk_ctx {
  sp_module *m;
  int rc;
} walk_ctx;

static bool visit(sp_op *op, void *ctx) {
  walk_ctx *w = ctx;
  if (op->kind == SP_OP_GATHER && op->noperands == 2) {
    w->rc = rewrite(w->m, op, &GATHER, 0, 1);
  } else if (op->kind == SP_OP_SCATTER && op->noperands >= 3 && op->noperands % 2 == 1) {
    int n = (op->noperands - 1) / 2; /* inputs, indices, updates */
    w->rc = rewrite(w->m, op, &SCATTER, 0, n);
  }
  return w->rc == SP_OK;
}

int sp_gather_scatter_explicit_batching(sp_module *m, sp_err *err) {
  walk_ctx w = {m, SP_OK};
  sp_op_walk(m->op, visit, &w);
  return w.rc ? sp_err_set(err, w.rc, "out of memory making gather/scatter batching explicit")
              : SP_OK;
}
