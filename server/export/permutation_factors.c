/*
 * permutation_factors.c - permutation factors and non-divisible reshapes resolved by
 * replication (see permutation_factors.h).
 *
 * Devices are the mesh's positions (export/mesh_positions.h; device_ids do not matter here,
 * operand and result use the same positions). A dimension on S shards holds ceil(size/S)
 * elements per shard, the last ones padded. The locality
 * checks enumerate devices and the elements of their result shards; past WORK_LIMIT steps an
 * op counts as not local (it is then replicated, which is always correct).
 */
#include "export/permutation_factors.h"

#include <stdlib.h>
#include <string.h>

#include "export/mesh_positions.h"
#include "export/pad_halo.h"
#include "export/reshape_halo.h"
#include "export/reshard_op.h"
#include "export/reverse_halo.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"
#include "rules/registry.h"

#define WORK_LIMIT ((int64_t)1 << 22)

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Number of shards of dim `d` of `s` (1 when unsharded). */
static int64_t shards(const sp_mesh *mesh, const sp_sharding *s, int d) {
  return sp_dim_shard_count(mesh, s, d);
}

static bool divisible(const sp_mesh *mesh, const sp_sharding *s, const sp_type *t, int d) {
  int64_t n = shards(mesh, s, d);
  return n <= 1 || t->dims[d] % n == 0;
}

/* ------------------------------------------------------------------ one-dim index maps */

/* Where result element `o` of dim `d` comes from in the operand: its index, or -1 for padding. */
typedef struct index_map {
  sp_op_kind kind;
  int64_t lo, interior, start, stride;
  bool reversed;
  int64_t in_size;
} index_map;

static bool make_map(const sp_op *op, int d, index_map *m) {
  memset(m, 0, sizeof *m);
  m->kind = op->kind;
  m->in_size = op->operands[0].value->type->dims[d];
  sp_ints a, b;
  switch (op->kind) {
    case SP_OP_PAD:
      if (!sp_op_get_ints(op, "edge_padding_low", &a) || !sp_op_get_ints(op, "interior_padding", &b) ||
          d >= a.n || d >= b.n)
        return false;
      m->lo = a.v[d];
      m->interior = b.v[d];
      return true;
    case SP_OP_SLICE:
      if (!sp_op_get_ints(op, "start_indices", &a) || d >= a.n) return false;
      m->start = a.v[d];
      m->stride = sp_op_get_ints(op, "strides", &b) && d < b.n ? b.v[d] : 1;
      return true;
    case SP_OP_REVERSE:
      if (!sp_op_get_ints(op, "dimensions", &a)) return false;
      for (int i = 0; i < a.n; i++) m->reversed |= a.v[i] == d;
      return true;
    default:
      return false;
  }
}

/* The operand range [*lo, *hi] that result elements [a, b] read; false when they only read
 * padding. Pad maps each end down to the operand element at or before it (a result shard that
 * starts on interior padding still counts the element before it, as Shardy does). */
static bool needed_range(const index_map *m, int64_t a, int64_t b, int64_t *lo, int64_t *hi) {
  int64_t n = m->in_size;
  switch (m->kind) {
    case SP_OP_PAD: {
      int64_t step = m->interior + 1, ta = a - m->lo, tb = b - m->lo;
      if (tb < 0 || ta > (n - 1) * step) return false;
      *lo = ta < 0 ? 0 : ta / step;
      *hi = tb / step < n - 1 ? tb / step : n - 1;
      return true;
    }
    case SP_OP_SLICE:
      *lo = m->start + a * m->stride;
      *hi = m->start + b * m->stride;
      return true;
    default:
      *lo = m->reversed ? n - 1 - b : a;
      *hi = m->reversed ? n - 1 - a : b;
      return true;
  }
}

/* Whether every device computes its result shard of dim `dr` from its operand shard of `di`. */
static bool dim_local(const sp_mesh *mesh, const sp_op *op, int di, int dr, int64_t *coord) {
  index_map map;
  if (!make_map(op, di, &map)) return false;
  const sp_sharding *in = op->operands[0].value->sharding, *out = op->results[0].sharding;
  int64_t out_size = op->results[0].type->dims[dr];
  int64_t sin = ceil_div(map.in_size, shards(mesh, in, di));
  int64_t sout = ceil_div(out_size, shards(mesh, out, dr));
  int64_t devices = sp_mesh_positions(mesh);
  if (devices > WORK_LIMIT) return false;
  for (int64_t dev = 0; dev < devices; dev++) {
    sp_mesh_position_coords(mesh, dev, coord);
    int64_t kin = sp_dim_shard_index(mesh, in, di, coord), kout = sp_dim_shard_index(mesh, out, dr, coord);
    int64_t a = kout * sout, b = (kout + 1) * sout < out_size ? (kout + 1) * sout - 1 : out_size - 1;
    int64_t lo, hi;
    if (a > b || !needed_range(&map, a, b, &lo, &hi)) continue;
    if (lo < kin * sin || hi >= (kin + 1) * sin) return false;
  }
  return true;
}

/* ------------------------------------------------------------------ reshape groups */


/* Whether every device's result elements of group `g` lie in its operand shard. */
static bool group_local(const sp_mesh *mesh, const sp_op *op, sp_reshape_group g, int64_t *coord) {
  const sp_type *ti = op->operands[0].value->type, *to = op->results[0].type;
  const sp_sharding *in = op->operands[0].value->sharding, *out = op->results[0].sharding;
  int nj = g.j1 - g.j0;
  int64_t *lo = calloc((size_t)nj + 1, sizeof *lo), *hi = calloc((size_t)nj + 1, sizeof *hi);
  int64_t *idx = calloc((size_t)nj + 1, sizeof *idx);
  bool local = lo && hi && idx;
  int64_t devices = sp_mesh_positions(mesh), work = 0;
  for (int64_t dev = 0; local && dev < devices; dev++) {
    sp_mesh_position_coords(mesh, dev, coord);
    bool empty = false;
    for (int j = 0; j < nj; j++) {
      int d = g.j0 + j;
      int64_t s = ceil_div(to->dims[d], shards(mesh, out, d)), k = sp_dim_shard_index(mesh, out, d, coord);
      lo[j] = k * s;
      hi[j] = (k + 1) * s < to->dims[d] ? (k + 1) * s : to->dims[d];
      empty |= lo[j] >= hi[j];
      idx[j] = lo[j];
    }
    while (local && !empty) {
      if (++work > WORK_LIMIT) {
        local = false;
        break;
      }
      int64_t lin = 0;
      for (int j = 0; j < nj; j++) lin = lin * to->dims[g.j0 + j] + idx[j];
      for (int d = g.i1 - 1; d >= g.i0 && local; d--) {
        int64_t c = lin % ti->dims[d];
        lin /= ti->dims[d];
        int64_t s = ceil_div(ti->dims[d], shards(mesh, in, d)), k = sp_dim_shard_index(mesh, in, d, coord);
        local = c >= k * s && c < (k + 1) * s;
      }
      int j = nj - 1;
      for (; j >= 0; j--) {
        if (++idx[j] < hi[j]) break;
        idx[j] = lo[j];
      }
      if (j < 0) break;
    }
  }
  free(lo);
  free(hi);
  free(idx);
  return local;
}

/* Marks the dims of the reshape's groups that hold a non-divisible dim and are not local. */
static void resolve_reshape(const sp_mesh *mesh, const sp_op *op, bool *drop_in, bool *drop_out,
                            int64_t *coord) {
  const sp_type *ti = op->operands[0].value->type, *to = op->results[0].type;
  const sp_sharding *in = op->operands[0].value->sharding, *out = op->results[0].sharding;
  if (sp_type_num_elements(ti) <= 0 || sp_type_num_elements(to) != sp_type_num_elements(ti)) return;
  sp_reshape_group *groups = calloc((size_t)(ti->rank + to->rank + 1), sizeof *groups);
  int ngroups = groups ? sp_reshape_groups(ti, to, groups) : 0;
  for (int k = 0; k < ngroups; k++) {
    sp_reshape_group g = groups[k];
    bool uneven = false;
    for (int d = g.i0; d < g.i1; d++) uneven |= !divisible(mesh, in, ti, d);
    for (int d = g.j0; d < g.j1; d++) uneven |= !divisible(mesh, out, to, d);
    if (!uneven || group_local(mesh, op, g, coord)) continue;
    for (int d = g.i0; d < g.i1; d++) drop_in[d] = true;
    for (int d = g.j0; d < g.j1; d++) drop_out[d] = true;
  }
  free(groups);
}

/* ------------------------------------------------------------------ permutation factors */

static bool dim_has_factor(const sp_rule_dim *rd, const bool *factors) {
  for (int k = 0; k < rd->nfactors; k++)
    if (factors[rd->factors[k]]) return true;
  return false;
}

/* The dim of tensor `t` that holds factor `f`, -1 if none. */
static int dim_of(const sp_rule_tensor *t, int f) {
  for (int d = 0; d < t->rank; d++)
    for (int k = 0; k < t->dims[d].nfactors; k++)
      if (t->dims[d].factors[k] == f) return d;
  return -1;
}

/* Marks per tensor the dims of the permutation factors that move data (rows: operands then
 * results, `drop[row]` of the tensor's rank). */
static int resolve_factors(sp_arena *a, const sp_mesh *mesh, const sp_op *op, const sp_rule *rule,
                           bool **drop, int64_t *coord) {
  bool *bad = sp_arena_calloc(a, (size_t)rule->nfactors + 1, sizeof *bad);
  if (!bad) return SP_ENOMEM;
  bool any = false;
  bool checkable = op->kind == SP_OP_PAD || op->kind == SP_OP_SLICE || op->kind == SP_OP_REVERSE;
  for (int f = 0; f < rule->nfactors; f++) {
    if (rule->factors[f].kind != SP_FACTOR_PERMUTATION) continue;
    int di = dim_of(&rule->operands[0], f), dr = dim_of(&rule->results[0], f);
    bool sharded = (di >= 0 && shards(mesh, op->operands[0].value->sharding, di) > 1) ||
                   (dr >= 0 && shards(mesh, op->results[0].sharding, dr) > 1);
    for (int i = 1; i < rule->noperands; i++) {
      int d = dim_of(&rule->operands[i], f);
      sharded |= d >= 0 && shards(mesh, op->operands[i].value->sharding, d) > 1;
    }
    if (!sharded) continue;
    bad[f] = !(checkable && di >= 0 && dr >= 0 && dim_local(mesh, op, di, dr, coord));
    any |= bad[f];
  }
  for (int r = 0; any && r < rule->noperands + rule->nresults; r++) {
    const sp_rule_tensor *t = r < rule->noperands ? &rule->operands[r] : &rule->results[r - rule->noperands];
    for (int d = 0; d < t->rank; d++) drop[r][d] = dim_has_factor(&t->dims[d], bad);
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ rewriting */

/* `s` without the axes of the dims `drop` marks; NULL when nothing changes. */
static sp_sharding *without_dims(sp_arena *a, const sp_sharding *s, const bool *drop, bool *oom) {
  if (!s) return NULL;
  bool change = false;
  for (int d = 0; d < s->rank; d++) change |= drop[d] && s->dims[d].naxes;
  if (!change) return NULL;
  sp_sharding *c = sp_sharding_copy(a, s);
  if (!c) {
    *oom = true;
    return NULL;
  }
  for (int d = 0; d < c->rank; d++)
    if (drop[d]) c->dims[d].naxes = 0;
  return c;
}

static int apply(sp_module *m, sp_op *op, bool **drop) {
  bool oom = false;
  for (int i = 0; i < op->noperands; i++) {
    sp_value *v = op->operands[i].value;
    sp_sharding *s = drop[i] ? without_dims(m->arena, v->sharding, drop[i], &oom) : NULL;
    if (oom) return SP_ENOMEM;
    if (!s) continue;
    sp_op *r = sp_export_reshard_op(m, v, NULL, s, op->loc);
    if (!r) return SP_ENOMEM;
    sp_op_insert_before(op, r);
    sp_op_set_operand(op, i, &r->results[0]);
  }
  sp_op *anchor = op;
  for (int j = 0; j < op->nresults; j++) {
    sp_value *res = &op->results[j];
    sp_sharding *old = res->sharding;
    bool *dj = drop[op->noperands + j];
    sp_sharding *s = dj ? without_dims(m->arena, old, dj, &oom) : NULL;
    if (oom) return SP_ENOMEM;
    if (!s) continue;
    res->sharding = s;
    sp_op *r = sp_export_reshard_op(m, res, NULL, old, op->loc);
    if (!r) return SP_ENOMEM;
    sp_value_replace_all_uses(res, &r->results[0]);
    sp_op_set_operand(r, 0, res);
    sp_op_insert_after(anchor, r);
    anchor = r;
  }
  return SP_OK;
}

/* The op's mesh when every sharded tensor of it is on one mesh with axes; NULL otherwise. */
static const sp_mesh *op_mesh(const sp_module *m, const sp_op *op) {
  if (op->nresults < 1 || !op->results[0].sharding || strncmp(op->name, "sdy.", 4) == 0) return NULL;
  const sp_sharding *ref = op->results[0].sharding;
  for (int i = 0; i < op->noperands; i++) {
    const sp_sharding *s = op->operands[i].value->sharding;
    if (s && !sp_sharding_same_mesh(m, s, ref)) return NULL;
  }
  for (int j = 0; j < op->nresults; j++) {
    const sp_sharding *s = op->results[j].sharding;
    if (s && !sp_sharding_same_mesh(m, s, ref)) return NULL;
  }
  const sp_mesh *mesh = sp_sharding_mesh(m, ref);
  return mesh && mesh->naxes ? mesh : NULL;
}

static bool static_tensors(const sp_op *op) {
  for (int i = 0; i < op->noperands; i++)
    if (!sp_type_is_static_tensor(op->operands[i].value->type)) return false;
  for (int j = 0; j < op->nresults; j++)
    if (!sp_type_is_static_tensor(op->results[j].type)) return false;
  return true;
}

static int resolve_op(sp_module *m, sp_arena *scratch, sp_op *op, bool halo, sp_err *err) {
  const sp_mesh *mesh = op_mesh(m, op);
  if (!mesh || !static_tensors(op) || op->noperands < 1) return SP_OK;
  int rows = op->noperands + op->nresults;
  bool **drop = sp_arena_calloc(scratch, (size_t)rows, sizeof *drop);
  int64_t *coord = sp_arena_calloc(scratch, (size_t)mesh->naxes + 1, sizeof *coord);
  if (!drop || !coord) return sp_err_set(err, SP_ENOMEM, "out of memory resolving permutation factors");
  for (int r = 0; r < rows; r++) {
    const sp_type *t = r < op->noperands ? op->operands[r].value->type : op->results[r - op->noperands].type;
    if (!(drop[r] = sp_arena_calloc(scratch, (size_t)t->rank + 1, sizeof **drop)))
      return sp_err_set(err, SP_ENOMEM, "out of memory resolving permutation factors");
  }
  if (op->kind == SP_OP_RESHAPE) {
    if (op->noperands != 1 || op->nresults != 1) return SP_OK;
    resolve_reshape(mesh, op, drop[0], drop[1], coord);
    bool moves = false;
    for (int d = 0; d < op->operands[0].value->type->rank; d++) moves |= drop[0][d];
    if (halo && moves) {
      bool done;
      int rc = sp_export_reshape_halo(m, op, drop[0], &done, err);
      if (rc || done) return rc;
    }
  } else {
    sp_rule *rule = NULL;
    int rc = sp_rules_for_op(scratch, op, NULL, &rule, NULL, err);
    if (rc) return rc;
    if (!rule || rule->noperands != op->noperands || rule->nresults != op->nresults ||
        rule->nresults < 1)
      return SP_OK;
    if ((rc = resolve_factors(scratch, mesh, op, rule, drop, coord)))
      return sp_err_set(err, rc, "out of memory resolving permutation factors");
    bool moves = false;
    for (int d = 0; d < op->results[0].type->rank; d++) moves |= drop[op->noperands][d];
    if (halo && moves) {
      bool done = false;
      if (op->kind == SP_OP_REVERSE) rc = sp_export_reverse_halo(m, op, &done, err);
      else if (op->kind == SP_OP_PAD || op->kind == SP_OP_SLICE) rc = sp_export_pad_halo(m, op, &done, err);
      if (rc || done) return rc;
    }
  }
  int rc = apply(m, op, drop);
  return rc ? sp_err_set(err, rc, "out of memory resolving permutation factors") : SP_OK;
}

int sp_export_resolve_permutation_factors(sp_module *m, bool halo_exchange, sp_err *err) {
  sp_op_list l = {0};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  sp_arena *scratch = sp_arena_new(0);
  int rc = l.oom || !scratch ? sp_err_set(err, SP_ENOMEM, "out of memory resolving permutation factors")
                             : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = resolve_op(m, scratch, l.v[i], halo_exchange, err);
  sp_arena_free(scratch);
  sp_op_list_free(&l);
  return rc;
}
