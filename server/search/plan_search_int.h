/*
 * plan_search_int.h - the build state of one search and the helpers its parts share
 * (internal to server/search; see plan_search.c).
 *
 * plan_search.c builds the strategy graph (nodes, costs, edges, liveness), solves it and
 * runs the API; plan_layers.c ties repeated layers; plan_report.c writes the plan back and
 * sums it up. Invariants: a member's layout under strategy s is set.v[s].results[member.result];
 * a follower's member uses the result index of the value it follows. Memory: the search's
 * scratch arena S->a holds the build; summaries and shardings live in the module's arena.
 */
#ifndef SP_SEARCH_PLAN_SEARCH_INT_H
#define SP_SEARCH_PLAN_SEARCH_INT_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/ptr_map.h"
#include "rules/registry.h"
#include "search/plan_search.h"
#include "search/strategies.h"
#include "solver/solver.h"

#define UNITS_PER_SECOND 1e9
#define DEFAULT_MAX_STRATEGIES 512
/* Heuristic work units of a search without a time limit (solver/solver.h work_limit). */
#define PLAN_WORK_LIMIT ((int64_t)50 * 1000 * 1000)
#define MIB (1024.0 * 1024.0)

enum { NODE_SOURCE, NODE_OP, NODE_FIXED };

/* ------------------------------------------------------------------ the build state */

typedef struct member {
  sp_value *v;
  int result;           /* its layout is set.v[s].results[result] */
  sp_op *follower;      /* the element-wise op defining it; NULL for the node's own values */
  int followed;         /* the follower's operand index it follows (-1 for own values) */
  bool reduced;         /* its layout is the strategy's reduced result: a follower that does
                           not carry partial sums on (plan_search.c: carries_partial) */
  bool may_partial;     /* some strategy leaves it partial (unreduced axes) */
  bool fold;            /* the node's op's one result, read by one priced consumer: what the
                           export does right after the op (its all-reduce, a reshard back)
                           meets the consumer's reshard, so the edge prices them together
                           (plan_fold.c) */
  int *lid;             /* distinct-layout id per strategy (edges), built on demand */
  int *rep;             /* a strategy per distinct id */
  int nl;
} member;

/* A result of a fixed node whose op explicit reshard insertion reconciles (plan_reconcile.c). */
typedef struct fixed_result {
  const sp_layout *computed;   /* the layout the export computes it in; NULL: untouched */
  int nred;                    /* axes all-reduced right after the op */
  sp_ft_axis red[SP_MAX_MESH_AXES_CLUSTER];
  bool back;                   /* resharded back to its own layout right after the op (priced
                                  with the op, listed at its first consumer) */
} fixed_result;

typedef struct pnode {
  int kind;
  bool whole;           /* fixed: planned whole (every tensor replicated, plan_search.c) */
  fixed_result *fres;   /* [set.nresults] fixed nodes the export reconciles; NULL otherwise */
  bool folds;           /* its member of the op's one result has `fold`: the op's own
                           collective is priced on that edge, not here */
  sp_op *op;            /* op and fixed nodes; the constant of a constant source node */
  sp_rule *rule;        /* op nodes */
  sp_strategy_set set;
  int nmem, capmem;
  member *mem;
  double *self_s;       /* [set.n] resharding between values of this node */
  int64_t live_start, live_end;
  int first_in;         /* first incoming edge (index), -1 */
} pnode;

typedef struct pedge {
  int a, b;             /* producer node, consumer node */
  double *sec;          /* [na * nb] seconds, row-major by a's strategy */
  int next_in;          /* next incoming edge of b */
} pedge;

typedef struct search {
  sp_module *m;
  const sp_plan_search_opts *o;
  bool fixed;
  sp_arena *a;                  /* scratch, freed at the end */
  sp_arena *rec;                /* where the summary's records and the shardings written go:
                                   the module's arena (a snapshot's: its copy's) */
  const sp_mesh *mesh;
  const char *mesh_name;
  sp_sharding *mesh_ref;        /* a sharding naming the mesh (the export's plans need one) */
  int64_t nscatter, nscatter_kept;   /* reduce-scatter variants asked of the export, kept */
  struct scatter_memo *smemo;   /* the export's decisions per op signature (plan_reconcile.c) */
  int nsmemo, capsmemo;
  sp_cost_model cm;
  sp_op *func;
  sp_block *body;
  int nops;
  sp_op **ops;                  /* top-level ops, position = index + 1 */
  sp_ptr_map opmap;                 /* op -> index */
  sp_ptr_map valmap;                /* value -> slot */
  int nslots, capslots;
  int *slot_node, *slot_mem;
  pnode *nodes;
  int nnodes, capnodes;
  int *op_node;                 /* [nops]: node of the op (follower: the node it joined), -1 */
  int *op_follow_result;        /* [nops]: follower's result index in its node, -1 otherwise */
  int *op_member;               /* [nops]: follower's member index in its node */
  pedge *edges;
  int nedges, capedges;
  int nfollowers, nfixed;
  int nstates;
  sp_plan_state_pair *states;
  sp_rules_diag diag;
} search;

/* Whether `s` is on a maximal mesh (one device): a sharding the search keeps as it is. */
static inline bool sp_search_on_maximal_mesh(const search *S, const sp_sharding *s) {
  const sp_mesh *m = s->inline_mesh ? s->inline_mesh
                                    : (s->mesh_name ? sp_module_lookup_mesh(S->m, s->mesh_name)
                                                    : NULL);
  return m && sp_mesh_is_maximal(m);
}

static inline bool placeable(const sp_value *v) {
  return v && v->type && sp_type_is_static_tensor(v->type) && v->type->rank >= 1;
}

static inline const sp_layout *member_layout(const pnode *n, const member *mb, int s) {
  assert(s >= 0 && s < n->set.n && mb->result >= 0 && mb->result < n->set.nresults);
  return sp_strategy_result(&n->set.v[s], mb->result, mb->reduced);
}

/* Where an edge from a member starts (plan_fold.c): the layout, and the axes all-reduced in
 * it first (an op's own reduction folded into its one consumer's reshard; none otherwise). */
typedef struct edge_src {
  const sp_layout *from;
  int nred;
  const sp_ft_axis *red;
} edge_src;

/* Whether a follower carrying partial sums reads its operand j partial too: every operand of
 * add and subtract (partial sums add up), only the followed one otherwise (negate, convert,
 * multiply by or divide into a value that is whole). */
static inline bool reads_partial(const sp_op *op, int j, int followed) {
  return op->kind == SP_OP_ADD || op->kind == SP_OP_SUBTRACT || j == followed;
}


/* The layout op `x` (at index i) wants for operand j under strategy t of its node. */
static inline const sp_layout *consumer_layout(search *S, int i, int j, int t) {
  const pnode *c = &S->nodes[S->op_node[i]];
  if (S->op_follow_result[i] >= 0) {
    const member *mb = &c->mem[S->op_member[i]];
    bool partial = !mb->reduced && reads_partial(S->ops[i], j, mb->followed);
    return sp_strategy_result(&c->set.v[t], S->op_follow_result[i], !partial);
  }
  return &c->set.v[t].operands[j];
}

/* The index of top-level op `op` in S->ops, or -1 (NULL, nested or not numbered). */
static inline int sp_search_op_index(search *S, const sp_op *op) {
  return op && op->block == S->body ? (int)sp_ptr_map_get(&S->opmap, op, -1) : -1;
}

/* "%name" of a value, for messages and the collectives list (module arena). */
static inline const char *value_name(search *S, const sp_value *v) {
  if (v->name_hint) {
    if (v->def && v->def->nresults > 1)
      return sp_arena_printf(S->rec, "%%%s#%d", v->name_hint, v->index);
    return sp_arena_printf(S->rec, "%%%s", v->name_hint);
  }
  if (!v->def) return sp_arena_printf(S->rec, "%%arg%d", v->index);
  return sp_arena_printf(S->rec, "result %d of %s (line %d)", v->index, v->def->name,
                         v->def->loc.line);
}

/* plan_search.c: costs of a node under strategy s (see there). */
double sp_search_part_compute_s(search *S, const pnode *n, int s, int m);
double sp_search_node_compute_s(search *S, const pnode *n, int s);
double sp_search_own_collective_s(search *S, const sp_op *op, const sp_strategy *st,
                                  sp_collective *out);
/* plan_search.c: bytes per device of node `n`'s values under strategy s, and its own cost in
 * seconds (compute and the op's collectives; `folded`: without those a fold prices on an
 * edge). */
double sp_search_node_bytes(search *S, const pnode *n, int s);
double sp_search_node_own_s(search *S, const pnode *n, int s, bool folded);
/* Seconds per MiB of memory in a node's cost (the options' mem_weight; 0 when not positive). */
static inline double sp_search_mem_weight(const search *S) {
  return S->o->mem_weight > 0 ? S->o->mem_weight : 0;
}
/* plan_search.c: the argument and the returned value of a state pair, or false when either
 * is not placed. */
bool sp_search_state_values(search *S, const sp_plan_state_pair *sp, sp_value **arg,
                            sp_value **res);

/* plan_partial.c: whether the reduction of `op` may be kept partial (a keep-partial strategy
 * is offered), and whether follower `op`, following member `mb` through operand j, carries the
 * partial sums on. */
bool sp_search_offers_partial(search *S, const sp_op *op);
bool sp_search_carries_partial(search *S, const sp_op *op, int j, const member *mb);

/* plan_fold.c: marks the members whose edge carries what the export does after their op
 * (member.fold, pnode.folds); call after the nodes and state pairs are known. */
void sp_search_mark_folds(search *S);
/* plan_fold.c: the edge source of member `mb` of `n` under strategy s. */
edge_src sp_search_edge_src(const search *S, const pnode *n, const member *mb, int s);
bool sp_search_edge_src_equal(const edge_src *x, const edge_src *y);
/* plan_fold.c: the collectives from `src` to `to` for a tensor of `type` (the all-reduce
 * first, fused as the canonicalizer fuses it; SP_COST_NEVER when `to` would gain unreduced
 * axes). */
void sp_search_edge_reshard(const search *S, const sp_type *type, const edge_src *src,
                            const sp_layout *to, sp_reshard *out);
/* plan_fold.c: whether `v`'s only reader is priced: an op with a node, or the return sending
 * `v` back as a state pair's result. */
bool sp_search_one_priced_consumer(search *S, const sp_value *v);

/* plan_reconcile.c: the reduce-scatter strategies of op node `n` as the export's explicit
 * reshards run them: kept when the pass keeps the reduction (it all-reduces, then slices),
 * otherwise made the plain strategy the pass makes of them (the result's dim takes the axes,
 * the operands are resharded to match, nothing is reduced). `partial`: the strategies were
 * enumerated with keep-partial variants. */
int sp_search_reconcile_scatter(search *S, pnode *n, bool partial, sp_err *err);
/* plan_reconcile.c: gives every fixed node whose op explicit reshard insertion reconciles the
 * operand layouts the pass reshards to and its results' reconciliation (fixed_result); call
 * after the nodes and state pairs are known, before pricing edges. */
int sp_search_reconcile_fixed(search *S, sp_err *err);
/* plan_reconcile.c: result r of fixed node `n` after its op, as the export makes it: the
 * all-reduce, then (when `back`) the reshard back to its own layout. Nothing for a result the
 * export leaves alone. */
int sp_search_fixed_result(search *S, const pnode *n, int r, sp_reshard *out);
/* plan_reconcile.c: the first op reading `v` in program order (pre-order: a top-level op before
 * the ops nested in it) and its lowest operand reading it; false when nothing reads `v`. */
bool sp_search_first_consumer(search *S, const sp_value *v, const sp_op **op, int *operand);

/* plan_graph.c: each node's live interval (live_start, live_end) in top-level op positions. */
void sp_search_liveness(search *S);
/* plan_graph.c: the strategy graph of the build, with its usage limit; *out is the caller's. */
int sp_search_build_graph(search *S, sp_sg **out, sp_err *err);

/* plan_layers.c: ties the nodes of repeated layers in `g` (layer sharing); counts in `out`. */
int sp_search_tie_layers(search *S, sp_sg *g, sp_plan_summary *out, sp_err *err);

/* One search in progress, as its snapshots see it (sp_search_incumbent.run): the build, the
 * graph, the solver's statistics so far and the summary before the solve (layer ties). */
struct sp_search_run {
  search *S;
  const sp_sg *g;
  const sp_sg_stats *stats;
  const sp_plan_summary *problem;
};

/* plan_search.c: the summary of plan `choice` of graph g (cost and bound in objective units;
 * `st` the solver's statistics as far as it got): totals, collectives, the problem's size, the
 * mesh and placement, the choice, records in S->rec; status and gap are the caller's. */
int sp_search_describe(search *S, const sp_sg *g, const sp_sg_stats *st, const int *choice,
                       int64_t cost, int64_t bound, sp_plan_summary *out, sp_err *err);

/* plan_report.c: totals and the collectives list of the chosen plan, in seconds. */
int sp_search_summarize(search *S, const int *choice, sp_plan_summary *out, sp_err *err);
/* plan_report.c: writes the chosen layouts into the values and the main function's result
 * shardings, and records the operands taken in another layout (out->operand_reshards). */
int sp_search_write_back(search *S, const int *choice, sp_plan_summary *out, sp_err *err);

#endif /* SP_SEARCH_PLAN_SEARCH_INT_H */
