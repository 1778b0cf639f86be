/*
 * rules_gather_scatter.c - rules of gather and scatter.
 *
 * Both walk the dims of the "slices" tensor (gather's result, scatter's updates) in order:
 *   - an offset / update-window dim pairs with the next input dim that is neither
 *     collapsed/inserted nor a batching dim. Equal sizes: one shared pass-through factor.
 *     Different sizes: scatter gets an input-only and a slice-only need_replication factor;
 *     gather with a slice of size 1 gets an input-only reduction and a slice-only
 *     need_replication factor; otherwise one shared need_replication factor of the input
 *     size, blocked.
 *   - any other slice dim is a batch dim and maps to the next indices dim (skipping
 *     index_vector_dim). An explicit batching dim also maps the input batching dim it pairs
 *     with (pass-through). An implicit one is pass-through for gather; for scatter it is a
 *     reduction if the update computation is a supported reduction, else need_replication.
 * Then each collapsed (gather: reduction, need_replication if size 1) or inserted (scatter:
 * pass-through) input dim gets an input-only factor, and index_vector_dim, when it is a dim
 * of the indices, a need_replication factor. Scatter's inputs and results share mappings.
 */
#include "rules/op_rules.h"

typedef struct gs_dims {
  sp_ints window;      /* gather offset_dims / scatter update_window_dims */
  sp_ints dropped;     /* collapsed_slice_dims / inserted_window_dims */
  sp_ints in_batch;    /* operand_batching_dims / input_batching_dims */
  sp_ints idx_batch;   /* start_indices_batching_dims / scatter_indices_batching_dims */
  int64_t index_vector_dim;
} gs_dims;

static int read_dims(const sp_op *op, const char *const names[4], int in_rank, int idx_rank,
                     int slice_rank, gs_dims *g, sp_err *err) {
  int rc = sp_rules_need_ints(op, names[0], &g->window, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, names[1], &g->dropped, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, names[2], &g->in_batch, err);
  if (rc == SP_OK) rc = sp_rules_opt_ints(op, names[3], &g->idx_batch, err);
  if (rc == SP_OK) rc = sp_rules_need_int(op, "index_vector_dim", &g->index_vector_dim, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, names[0], &g->window, slice_rank, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, names[1], &g->dropped, in_rank, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, names[2], &g->in_batch, in_rank, err);
  if (rc == SP_OK) rc = sp_rules_check_dims(op, names[3], &g->idx_batch, idx_rank, err);
  if (rc != SP_OK) return rc;
  if (g->index_vector_dim < 0 || g->index_vector_dim > idx_rank)
    return sp_rules_op_err(err, op, SP_EINVAL, "index_vector_dim %lld is out of range",
                           (long long)g->index_vector_dim);
  if (g->in_batch.n != g->idx_batch.n)
    return sp_rules_op_err(err, op, SP_EINVAL, "%s and %s differ in length", names[2], names[3]);
  for (int i = 0; i < g->in_batch.n; i++)
    if (sp_rules_ints_has(&g->dropped, g->in_batch.v[i]) ||
        g->idx_batch.v[i] == g->index_vector_dim)
      return sp_rules_op_err(err, op, SP_EINVAL, "batching dim %lld is also used otherwise",
                             (long long)g->in_batch.v[i]);
  int idx_batch_dims = idx_rank - (g->index_vector_dim < idx_rank ? 1 : 0);
  if (slice_rank - g->window.n != idx_batch_dims)
    return sp_rules_op_err(err, op, SP_EINVAL,
                           "%d non-window slice dims but %d batch dims in the indices",
                           slice_rank - g->window.n, idx_batch_dims);
  if (in_rank - g->dropped.n - g->in_batch.n != g->window.n)
    return sp_rules_op_err(err, op, SP_EINVAL, "%d window dims but %d input dims to pair with",
                           g->window.n, in_rank - g->dropped.n - g->in_batch.n);
  return SP_OK;
}

/* The next input dim a window dim pairs with, from `*in_d` on. */
static int next_window_input_dim(const gs_dims *g, int *in_d) {
  while (sp_rules_ints_has(&g->dropped, *in_d) || sp_rules_ints_has(&g->in_batch, *in_d))
    (*in_d)++;
  return (*in_d)++;
}

/* The next indices dim a batch dim maps to, from `*idx_d` on. */
static int next_batch_index_dim(const gs_dims *g, int *idx_d) {
  if (*idx_d == g->index_vector_dim) (*idx_d)++;
  return (*idx_d)++;
}

/* ------------------------------------------------------------------ gather */

int sp_rules_build_gather(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                          sp_err *err) {
  static const char *const names[4] = {"offset_dims", "collapsed_slice_dims",
                                       "operand_batching_dims", "start_indices_batching_dims"};
  int rc = sp_rules_check_arity(op, 2, 2, 1, 1, err);
  if (rc != SP_OK) return rc;
  int in_rank = sp_rules_operand_rank(op, 0), idx_rank = sp_rules_operand_rank(op, 1);
  int out_rank = sp_rules_result_rank(op, 0);
  const int64_t *in = sp_rules_operand_shape(op, 0), *idx = sp_rules_operand_shape(op, 1);
  const int64_t *out = sp_rules_result_shape(op, 0);
  gs_dims g;
  rc = read_dims(op, names, in_rank, idx_rank, out_rank, &g, err);
  if (rc != SP_OK) return rc;
  const int IN = 0, IDX = 1, OUT = sp_rules_res(b, 0);
  int in_d = 0, idx_d = 0, f;
  for (int r = 0; r < out_rank; r++) {
    if (sp_rules_ints_has(&g.window, r)) {
      int d = next_window_input_dim(&g, &in_d);
      if (in[d] == out[r]) {
        f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
        sp_rule_builder_map(b, IN, d, f);
        sp_rule_builder_map(b, OUT, r, f);
      } else if (out[r] == 1) {
        f = sp_rule_builder_factor(b, in[d], SP_FACTOR_REDUCTION, false);
        sp_rule_builder_map(b, IN, d, f);
        f = sp_rule_builder_factor(b, 1, SP_FACTOR_NEED_REPLICATION, false);
        sp_rule_builder_map(b, OUT, r, f);
      } else {
        f = sp_rule_builder_factor(b, in[d], SP_FACTOR_NEED_REPLICATION, true);
        sp_rule_builder_map(b, IN, d, f);
        sp_rule_builder_map(b, OUT, r, f);
      }
      continue;
    }
    int x = next_batch_index_dim(&g, &idx_d);
    int p = sp_rules_ints_find(&g.idx_batch, x);
    if (p >= 0 && in[g.in_batch.v[p]] != idx[x])
      return sp_rules_op_err(err, op, SP_EINVAL, "batching dims %lld and %d differ in size",
                             (long long)g.in_batch.v[p], x);
    f = sp_rule_builder_factor(b, idx[x], SP_FACTOR_PASS_THROUGH, false);
    if (p >= 0) sp_rule_builder_map(b, IN, (int)g.in_batch.v[p], f);
    sp_rule_builder_map(b, IDX, x, f);
    sp_rule_builder_map(b, OUT, r, f);
  }
  for (int d = 0; d < in_rank; d++) {
    if (!sp_rules_ints_has(&g.dropped, d)) continue;
    f = sp_rule_builder_factor(b, in[d],
                               in[d] == 1 ? SP_FACTOR_NEED_REPLICATION : SP_FACTOR_REDUCTION,
                               false);
    sp_rule_builder_map(b, IN, d, f);
  }
  if (g.index_vector_dim < idx_rank) {
    int x = (int)g.index_vector_dim;
    sp_rule_builder_map(b, IDX, x,
                        sp_rule_builder_factor(b, idx[x], SP_FACTOR_NEED_REPLICATION, false));
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ scatter */

static bool is_reducer_kind(sp_op_kind k) {
  return k == SP_OP_ADD || k == SP_OP_MULTIPLY || k == SP_OP_MAXIMUM || k == SP_OP_MINIMUM ||
         k == SP_OP_AND || k == SP_OP_OR;
}

/* The update computation combines old and new values with one reduction kind (every body op
 * is the same add / multiply / max / min / and / or). A body that just returns the update, or
 * mixes kinds, is not a supported reduction. */
static bool update_is_reduction(const sp_op *op) {
  if (op->nregions < 1 || op->regions[0].nblocks != 1) return false;
  const sp_block *blk = op->regions[0].blocks[0];
  sp_op_kind kind = SP_OP_UNKNOWN;
  int n = 0;
  for (const sp_op *o = blk->first; o; o = o->next) {
    if (o->kind == SP_OP_RETURN) continue;
    if (!is_reducer_kind(o->kind) || (n > 0 && o->kind != kind)) return false;
    kind = o->kind;
    n++;
  }
  return n > 0;
}

/* Scatter's N inputs and N results share a mapping. */
static void map_inputs(sp_rule_builder *b, int n, int dim, int f) {
  for (int i = 0; i < n; i++) {
    sp_rule_builder_map(b, i, dim, f);
    sp_rule_builder_map(b, sp_rules_res(b, i), dim, f);
  }
}

/* Scatter's N updates follow the inputs and the indices. */
static void map_updates(sp_rule_builder *b, int n, int dim, int f) {
  for (int i = 0; i < n; i++) sp_rule_builder_map(b, n + 1 + i, dim, f);
}

/* Operands: N inputs, the indices, N updates; N results shaped like the inputs. */
int sp_rules_build_scatter(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                           sp_err *err) {
  static const char *const names[4] = {"update_window_dims", "inserted_window_dims",
                                       "input_batching_dims", "scatter_indices_batching_dims"};
  int n = op->nresults;
  if (op->noperands != 2 * n + 1)
    return sp_rules_op_err(err, op, SP_EINVAL,
                           "%d operands for %d results (want inputs, indices, updates)",
                           op->noperands, n);
  int in_rank = sp_rules_operand_rank(op, 0), idx_rank = sp_rules_operand_rank(op, n);
  int up_rank = sp_rules_operand_rank(op, n + 1);
  const int64_t *in = sp_rules_operand_shape(op, 0), *idx = sp_rules_operand_shape(op, n);
  const int64_t *up = sp_rules_operand_shape(op, n + 1);
  for (int i = 0; i < n; i++)
    if (sp_rules_operand_rank(op, i) != in_rank || sp_rules_result_rank(op, i) != in_rank ||
        sp_rules_operand_rank(op, n + 1 + i) != up_rank)
      return sp_rules_op_err(err, op, SP_EINVAL, "inputs, results or updates differ in rank");
  gs_dims g;
  int rc = read_dims(op, names, in_rank, idx_rank, up_rank, &g, err);
  if (rc != SP_OK) return rc;
  sp_factor_kind implicit_kind =
      update_is_reduction(op) ? SP_FACTOR_REDUCTION : SP_FACTOR_NEED_REPLICATION;
  int in_d = 0, idx_d = 0, f;
  for (int u = 0; u < up_rank; u++) {
    if (sp_rules_ints_has(&g.window, u)) {
      int d = next_window_input_dim(&g, &in_d);
      if (in[d] == up[u]) {
        f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
        map_inputs(b, n, d, f);
        map_updates(b, n, u, f);
      } else {
        f = sp_rule_builder_factor(b, in[d], SP_FACTOR_NEED_REPLICATION, false);
        map_inputs(b, n, d, f);
        f = sp_rule_builder_factor(b, up[u], SP_FACTOR_NEED_REPLICATION, false);
        map_updates(b, n, u, f);
      }
      continue;
    }
    int x = next_batch_index_dim(&g, &idx_d);
    int p = sp_rules_ints_find(&g.idx_batch, x);
    if (p >= 0 && in[g.in_batch.v[p]] != idx[x])
      return sp_rules_op_err(err, op, SP_EINVAL, "batching dims %lld and %d differ in size",
                             (long long)g.in_batch.v[p], x);
    f = sp_rule_builder_factor(b, idx[x], p >= 0 ? SP_FACTOR_PASS_THROUGH : implicit_kind, false);
    if (p >= 0) map_inputs(b, n, (int)g.in_batch.v[p], f);
    sp_rule_builder_map(b, n, x, f);
    map_updates(b, n, u, f);
  }
  for (int d = 0; d < in_rank; d++) {
    if (!sp_rules_ints_has(&g.dropped, d)) continue;
    f = sp_rule_builder_factor(b, in[d], SP_FACTOR_PASS_THROUGH, false);
    map_inputs(b, n, d, f);
  }
  if (g.index_vector_dim < idx_rank) {
    int x = (int)g.index_vector_dim;
    sp_rule_builder_map(b, n, x,
                        sp_rule_builder_factor(b, idx[x], SP_FACTOR_NEED_REPLICATION, false));
  }
  return SP_OK;
}
