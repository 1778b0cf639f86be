/*
 * plan_report.c - the report of a solved search (see plan_search.h, plan_search_int.h): the
 * cost totals, per-op compute and the collectives of the chosen plan, and the write-back of
 * its layouts into the module (value shardings, main function results, operand reshards), and
 * the recorded operand reshards made explicit (sp_plan_insert_operand_reshards).
 */
#include "search/plan_search_int.h"

/* ------------------------------------------------------------------ results */

/* The bytes one device sends in collective `c` (the bandwidth term of its formula). */
static double collective_bytes_sent(const sp_collective *c) {
  if (c->n <= 1) return 0.0;
  double n = (double)c->n;
  switch (c->kind) {
    case SP_COLL_ALL_GATHER:
    case SP_COLL_REDUCE_SCATTER: return (n - 1) / n * c->bytes;
    case SP_COLL_ALL_REDUCE: return 2 * (n - 1) / n * c->bytes;
    case SP_COLL_ALL_TO_ALL: return (n - 1) / (n * n) * c->bytes;
    case SP_COLL_COLLECTIVE_PERMUTE: return c->bytes;
    case SP_COLL_ALL_SLICE: return 0.0;
  }
  return 0.0;
}

static int push_collective(search *S, sp_plan_summary *out, int *cap, const sp_value *v,
                           const sp_op *at, int operand, const sp_collective *c) {
  if (sp_arena_grow(S->rec, (void **)&out->collectives, cap, out->ncollectives,
                    sizeof *out->collectives))
    return SP_ENOMEM;
  sp_search_collective *pc = &out->collectives[out->ncollectives++];
  pc->value = value_name(S, v);
  pc->op = at->name;
  pc->line = at->loc.line;
  pc->operand = operand;
  pc->c = *c;
  pc->value_ref = v;
  pc->op_ref = at;
  double sent = collective_bytes_sent(c);
  for (int i = 0; i < c->naxes; i++)
    if (c->axes[i].axis >= 0 && c->axes[i].axis < SP_MAX_MESH_AXES_CLUSTER)
      out->axis_traffic[c->axes[i].axis] += sent;
  sp_strbuf sb = SP_STRBUF_INIT;
  for (int i = 0; i < c->naxes; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_ft_axis_print(&sb, S->mesh, c->axes[i], true);
  }
  pc->axes = sp_strbuf_ok(&sb) ? sp_arena_strdup(S->rec, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  return (pc->value && pc->axes) ? SP_OK : SP_ENOMEM;
}

/* Records one op's compute time in the summary's per-op list. */
static int push_op_compute(search *S, sp_plan_summary *out, int *cap, const sp_op *op,
                           double seconds) {
  if (sp_arena_grow(S->rec, (void **)&out->op_compute, cap, out->nop_compute,
                    sizeof *out->op_compute))
    return SP_ENOMEM;
  out->op_compute[out->nop_compute++] = (sp_plan_op_compute){op, seconds};
  return SP_OK;
}

/* The compute of node k's own op and of each of its followers, one entry per op (their sum
 * is node_compute_s). */
static int op_computes(search *S, int k, int s, sp_plan_summary *out, int *cap) {
  const pnode *n = &S->nodes[k];
  if (n->kind != NODE_SOURCE && n->op &&
      push_op_compute(S, out, cap, n->op, sp_search_part_compute_s(S, n, s, -1)))
    return SP_ENOMEM;
  for (int m = 0; m < n->nmem; m++)
    if (n->mem[m].follower &&
        push_op_compute(S, out, cap, n->mem[m].follower, sp_search_part_compute_s(S, n, s, m)))
      return SP_ENOMEM;
  return SP_OK;
}

/* What the export does after fixed node `n`'s op (plan_reconcile.c): each result's all-reduce (or
 * reduce-scatter) at the op, its reshard back to its own layout at its first consumer. */
static int fixed_collectives(search *S, const pnode *n, sp_plan_summary *out, int *cap) {
  const sp_op *op = n->op;
  for (int r = 0; r < op->nresults; r++) {
    sp_reshard rs;
    int rc = sp_search_fixed_result(S, n, r, &rs);
    if (rc) return rc;
    const sp_op *at = op;
    int operand = -1;
    if (n->fres[r].back && !sp_search_first_consumer(S, &op->results[r], &at, &operand)) at = op;
    for (int q = 0; q < rs.nsteps; q++) {
      const sp_collective *c = &rs.steps[q];
      bool own = c->kind == SP_COLL_ALL_REDUCE || c->kind == SP_COLL_REDUCE_SCATTER;
      if (own || operand < 0) out->collective_s += c->seconds;
      else out->reshard_s += c->seconds;
      if (push_collective(S, out, cap, &op->results[r], own ? op : at, own ? -1 : operand, c))
        return SP_ENOMEM;
    }
  }
  return SP_OK;
}

/* The collectives of an edge from `src` (value `v`) to layout `to` read by operand j of `at`:
 * a folded reduction at the op that makes `v` (operand -1), the rest at the consumer. */
static int edge_collectives(search *S, const sp_value *v, const edge_src *src,
                            const sp_layout *to, const sp_op *at, int j, sp_plan_summary *out,
                            int *cap) {
  sp_reshard rs;
  sp_search_edge_reshard(S, v->type, src, to, &rs);
  for (int q = 0; q < rs.nsteps; q++) {
    const sp_collective *c = &rs.steps[q];
    bool own = src->nred && v->def &&
               (c->kind == SP_COLL_ALL_REDUCE || c->kind == SP_COLL_REDUCE_SCATTER);
    if (own) out->collective_s += c->seconds;
    else out->reshard_s += c->seconds;
    if (push_collective(S, out, cap, v, own ? v->def : at, own ? -1 : j, c)) return SP_ENOMEM;
  }
  return SP_OK;
}

/* Totals and the collectives list of the chosen plan, in seconds. */
int sp_search_summarize(search *S, const int *choice, sp_plan_summary *out, sp_err *err) {
  int cap = 0, ccap = 0;
  for (int k = 0; k < S->nnodes; k++) {
    out->compute_s += sp_search_node_compute_s(S, &S->nodes[k], choice[k]);
    if (op_computes(S, k, choice[k], out, &ccap))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  for (int i = 0; i < S->nops; i++) {
    if (S->op_node[i] < 0) continue;
    int cn = S->op_node[i];
    pnode *c = &S->nodes[cn];
    int t = choice[cn];
    if (c->kind == NODE_OP && c->op == S->ops[i] && c->set.v[t].nreduce && !c->set.v[t].partial &&
        !c->folds) {
      sp_collective own[8];
      const sp_op *op = S->ops[i];
      if (op->nresults <= 8) {
        out->collective_s += sp_search_own_collective_s(S, op, &c->set.v[t], own);
        for (int r = 0; r < op->nresults; r++)
          if (push_collective(S, out, &cap, &op->results[r], op, -1, &own[r]))
            return sp_err_set(err, SP_ENOMEM, "out of memory");
      } else {
        out->collective_s += sp_search_own_collective_s(S, op, &c->set.v[t], NULL);
      }
    }
    if (c->kind == NODE_FIXED && c->op == S->ops[i] && c->fres && !c->folds &&
        fixed_collectives(S, c, out, &cap))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    for (int j = 0; j < S->ops[i]->noperands; j++) {
      sp_value *v = S->ops[i]->operands[j].value;
      int slot = v ? (int)sp_ptr_map_get(&S->valmap, v, -1) : -1;
      if (slot < 0) continue;
      int pn = S->slot_node[slot];
      pnode *p = &S->nodes[pn];
      edge_src src = sp_search_edge_src(S, p, &p->mem[S->slot_mem[slot]], choice[pn]);
      if (edge_collectives(S, v, &src, consumer_layout(S, i, j, t), S->ops[i], j, out, &cap))
        return sp_err_set(err, SP_ENOMEM, "out of memory");
    }
  }
  for (int k = 0; k < S->nstates; k++) {
    sp_value *av, *rv;
    if (!sp_search_state_values(S, &S->states[k], &av, &rv)) continue;
    int as = (int)sp_ptr_map_get(&S->valmap, av, -1), rs = (int)sp_ptr_map_get(&S->valmap, rv, -1);
    pnode *p = &S->nodes[S->slot_node[rs]], *c = &S->nodes[S->slot_node[as]];
    edge_src src = sp_search_edge_src(S, p, &p->mem[S->slot_mem[rs]], choice[S->slot_node[rs]]);
    if (edge_collectives(S, rv, &src, member_layout(c, &c->mem[S->slot_mem[as]], choice[S->slot_node[as]]),
                         S->body->last, S->states[k].result, out, &cap))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  out->comm_s = out->collective_s + out->reshard_s;
  out->total_s = out->compute_s + out->comm_s;
  return SP_OK;
}

/* Evaluating: the values the chosen strategies keep partial, with their given sharding (open
 * dims kept open) plus the unreduced axes. */
static int record_partial_values(search *S, const int *choice, sp_plan_summary *out) {
  sp_arena *ma = S->rec;
  int cap = 0;
  for (int k = 0; k < S->nnodes; k++) {
    const pnode *n = &S->nodes[k];
    for (int q = 0; q < n->nmem; q++) {
      const member *mb = &n->mem[q];
      const sp_layout *l = member_layout(n, mb, choice[k]);
      if (!l->unreduced) continue;
      sp_sharding *s = sp_layout_to_sharding(ma, l, S->mesh, S->mesh_name, mb->v->sharding);
      if (!s) return SP_ENOMEM;
      for (int d = 0; mb->v->sharding && mb->v->sharding->rank == s->rank && d < s->rank; d++)
        s->dims[d].closed = mb->v->sharding->dims[d].closed;
      if (sp_arena_grow(ma, (void **)&out->partial_values, &cap, out->npartial_values,
                        sizeof *out->partial_values))
        return SP_ENOMEM;
      out->partial_values[out->npartial_values++] = (sp_plan_value_sharding){mb->v, s};
    }
  }
  return SP_OK;
}

/* Writes the chosen layouts into the values and the main function's result shardings, and
 * records the operands taken in another layout (out->operand_reshards). */
int sp_search_write_back(search *S, const int *choice, sp_plan_summary *out, sp_err *err) {
  sp_arena *ma = S->rec;
  for (int k = 0; !S->fixed && k < S->nnodes; k++) {
    pnode *n = &S->nodes[k];
    for (int q = 0; q < n->nmem; q++) {
      member *mb = &n->mem[q];
      if (mb->v->sharding && sp_search_on_maximal_mesh(S, mb->v->sharding)) continue;
      sp_sharding *s = sp_layout_to_sharding(ma, member_layout(n, mb, choice[k]), S->mesh,
                                             S->mesh_name, mb->v->sharding);
      if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
      mb->v->sharding = s;
    }
  }
  if (S->fixed) {
    int rc = record_partial_values(S, choice, out);
    if (rc) return sp_err_set(err, rc, "out of memory");
  }
  /* Operands whose strategy layout differs from their value's: the plan's resharding edges. */
  int cap = 0;
  for (int i = 0; i < S->nops; i++)
    if (S->op_node[i] >= 0) cap += S->ops[i]->noperands;
  out->operand_reshards = cap ? sp_arena_alloc(ma, (size_t)cap * sizeof *out->operand_reshards)
                              : NULL;
  if (cap && !out->operand_reshards) return sp_err_set(err, SP_ENOMEM, "out of memory");
  out->noperand_reshards = 0;
  for (int i = 0; i < S->nops; i++) {
    int cn = S->op_node[i];
    if (cn < 0) continue;
    for (int j = 0; j < S->ops[i]->noperands; j++) {
      sp_value *v = S->ops[i]->operands[j].value;
      int slot = v ? (int)sp_ptr_map_get(&S->valmap, v, -1) : -1;
      if (slot < 0) continue;
      int pn = S->slot_node[slot];
      const sp_layout *have = member_layout(&S->nodes[pn], &S->nodes[pn].mem[S->slot_mem[slot]],
                                            choice[pn]);
      const sp_layout *want = consumer_layout(S, i, j, choice[cn]);
      if (sp_layout_equal(have, want)) continue;
      sp_sharding *sh = sp_layout_to_sharding(ma, want, S->mesh, S->mesh_name, NULL);
      if (!sh) return sp_err_set(err, SP_ENOMEM, "out of memory");
      out->operand_reshards[out->noperand_reshards++] =
          (sp_plan_operand_reshard){S->ops[i], j, sh};
    }
  }
  sp_func_info *fi = S->func->func;
  sp_op *ret = S->body->last;
  if (!S->fixed && fi && fi->result_shardings && ret && ret->kind == SP_OP_FUNC_RETURN)
    for (int r = 0; r < ret->noperands && r < fi->nresults; r++) {
      sp_value *v = ret->operands[r].value;
      if (v && (int)sp_ptr_map_get(&S->valmap, v, -1) >= 0) fi->result_shardings[r] = v->sharding;
    }
  /* State pairs: the result goes back in its argument's layout (the export reshards the
   * returned value to the function's result sharding, as the search priced it). */
  out->state_results = S->nstates ? sp_arena_alloc(ma, (size_t)S->nstates * sizeof *out->state_results)
                                  : NULL;
  if (S->nstates && !out->state_results) return sp_err_set(err, SP_ENOMEM, "out of memory");
  out->nstate_results = 0;
  for (int k = 0; k < S->nstates; k++) {
    sp_value *av, *rv;
    if (!sp_search_state_values(S, &S->states[k], &av, &rv)) continue;
    int as = (int)sp_ptr_map_get(&S->valmap, av, -1), cn = S->slot_node[as];
    sp_sharding *sh = sp_layout_to_sharding(ma, member_layout(&S->nodes[cn], &S->nodes[cn].mem[S->slot_mem[as]],
                                                              choice[cn]),
                                            S->mesh, S->mesh_name, NULL);
    if (!sh) return sp_err_set(err, SP_ENOMEM, "out of memory");
    out->state_results[out->nstate_results++] = (sp_plan_operand_reshard){ret, S->states[k].result, sh};
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ the module */

int sp_plan_insert_operand_reshards(sp_module *m, const sp_plan_summary *s, sp_err *err) {
  for (int k = 0; k < s->npartial_values; k++)
    s->partial_values[k].value->sharding = s->partial_values[k].sharding;
  for (int k = 0; k < s->nstate_results; k++) {
    const sp_plan_operand_reshard *r = &s->state_results[k];
    sp_op *func = r->op ? sp_op_parent(r->op) : NULL;
    sp_func_info *fi = func ? func->func : NULL;
    if (!fi || r->operand >= fi->nresults) continue;
    if (!fi->result_shardings) {
      fi->result_shardings = sp_arena_calloc(m->arena, (size_t)fi->nresults,
                                             sizeof *fi->result_shardings);
      if (!fi->result_shardings) return sp_err_set(err, SP_ENOMEM, "out of memory");
    }
    fi->result_shardings[r->operand] = r->sharding;
  }
  for (int k = 0; k < s->noperand_reshards; k++) {
    const sp_plan_operand_reshard *r = &s->operand_reshards[k];
    sp_value *v = r->op->operands[r->operand].value;
    sp_op *op = sp_op_create(m->arena, "sdy.reshard", 1, &v, 1, &v->type, 0);
    if (!op) return sp_err_set(err, SP_ENOMEM, "out of memory inserting reshards");
    op->loc = r->op->loc;
    op->results[0].sharding = r->sharding;
    sp_op_insert_before(r->op, op);
    sp_op_set_operand(r->op, r->operand, &op->results[0]);
  }
  return SP_OK;
}
