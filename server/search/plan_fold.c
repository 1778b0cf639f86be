/*
 * plan_fold.c - an op's own collective priced together with its one consumer's reshard (see
 * plan_search_int.h).
 *
 * Right after an op the export's explicit reshards put the all-reduce of its sharded reduction
 * axes, computed in the layout without the axes a reduce-scatter strategy scatters them onto,
 * then a reshard back to the result's own layout (for a reduce-scatter, an all_slice, which
 * the canonicalizer fuses with the all-reduce into the reduce_scatter; for a fixed node, what
 * plan_reconcile.c found). When exactly one priced consumer reads the result and wants another
 * layout, the search's reshard before that consumer meets the reshard back, and the export
 * folds them into one (reshard of a reshard), starting from the all-reduced layout: a
 * reduce-scatter strategy whose result is gathered again runs an all-reduce and the gather,
 * not a reduce_scatter; an all-reduce whose one reader slices the reduced axes becomes a
 * reduce_scatter. So for such a result (a `fold` member; ops of one result only, so that the
 * collectives at the op keep their order) the edge starts from the all-reduced layout with the
 * reduction pending and prices both with the reshard code (sp_cost_reshard_reducing); the node
 * no longer prices the op's own collective. The report lists the reduction at the op (operand
 * -1), the rest at the consumer, as the export list does (plan/exported.h).
 *
 * Memory: nothing is allocated here.
 */
#include <string.h>

#include "search/plan_search_int.h"

bool sp_search_one_priced_consumer(search *S, const sp_value *v) {
  if (sp_value_num_uses(v) != 1) return false;
  const sp_use *u = v->uses;
  int i = sp_search_op_index(S, u->owner);
  if (i < 0) return false;
  if (u->owner->kind != SP_OP_FUNC_RETURN) return S->op_node[i] >= 0;
  for (int k = 0; k < S->nstates; k++) {
    sp_value *av, *rv;
    if (S->states[k].result == u->index && sp_search_state_values(S, &S->states[k], &av, &rv))
      return true;
  }
  return false;
}

void sp_search_mark_folds(search *S) {
  for (int k = 0; k < S->nnodes; k++) {
    pnode *n = &S->nodes[k];
    if ((n->kind != NODE_OP && n->kind != NODE_FIXED) || n->whole || !n->op ||
        n->op->nresults != 1 || n->nmem < 1 || n->mem[0].follower || n->mem[0].result != 0)
      continue;
    member *mb = &n->mem[0];
    if (!sp_search_one_priced_consumer(S, mb->v)) continue;
    mb->fold = true;
    n->folds = true;
  }
}

edge_src sp_search_edge_src(const search *S, const pnode *n, const member *mb, int s) {
  (void)S;
  edge_src src = {member_layout(n, mb, s), 0, NULL};
  if (!mb->fold) return src;
  if (n->kind == NODE_OP) {
    const sp_strategy *st = &n->set.v[s];
    if (!st->nreduce || st->partial) return src;
    if (st->plain) src.from = st->plain;
    src.nred = st->nreduce;
    src.red = st->reduce_axes;
  } else if (n->fres && n->fres[mb->result].computed) {
    const fixed_result *fr = &n->fres[mb->result];
    src.from = fr->computed;
    src.nred = fr->nred;
    src.red = fr->red;
  }
  return src;
}

bool sp_search_edge_src_equal(const edge_src *x, const edge_src *y) {
  if (x->nred != y->nred || !sp_layout_equal(x->from, y->from)) return false;
  for (int i = 0; i < x->nred; i++)
    if (!sp_ft_axis_equal(x->red[i], y->red[i])) return false;
  return true;
}

void sp_search_edge_reshard(const search *S, const sp_type *type, const edge_src *src,
                            const sp_layout *to, sp_reshard *out) {
  if (!src->nred) {
    sp_cost_reshard(&S->cm, type, src->from, to, out);
    return;
  }
  out->nsteps = 0;
  out->seconds = 0;
  if (to->unreduced & ~src->from->unreduced) {   /* never asked: the graph forbids it */
    out->seconds = SP_COST_NEVER;
    return;
  }
  if (sp_cost_reshard_reducing(&S->cm, type, src->red, src->nred, src->from, to, out) != SP_OK)
    out->seconds = SP_COST_NEVER;
}
