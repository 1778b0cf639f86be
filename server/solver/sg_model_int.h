/*
 * sg_model_int.h - the working form of a strategy graph inside the solver (internal).
 *
 * Two forms:
 *   - sg_model, mutable, used by the reductions (sg_reduce_int.h): nodes keep the index they
 *     have in the input graph and are deleted, never created; each strategy remembers its
 *     index in the input node (orig), so eliminations can be undone whatever happened to
 *     the strategy lists later. Memory is described per node by segments: over compressed
 *     times [t0, t1) the node uses use[k] under strategy k. A node has disjoint segments
 *     (several after it absorbed neighbours); the per-time capacity cap[t] is the limit minus
 *     the usage that no choice can change (the "base").
 *   - sg_prob, compact and read-only, used by the heuristic and the ILP: live nodes and
 *     edges renumbered densely, CSR adjacency, and each edge's cost matrix in both
 *     orientations.
 *
 * Eliminated nodes are recorded on a stack (fixed strategy, best response to one neighbour,
 * best response to two neighbours, the strategy a bijective edge forces given the node it was
 * merged into); sp_sg_model_expand() replays it backwards to turn a plan of the remaining
 * nodes into a plan of the input graph.
 *
 * Costs inside the model saturate at SP_SG_FORBIDDEN: an entry at or above it may not be
 * chosen. Memory: everything lives in the model's arena; sp_sg_model_free() releases it.
 */
#ifndef SP_SOLVER_SG_MODEL_INT_H
#define SP_SOLVER_SG_MODEL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "solver/solver.h"

typedef struct sg_seg {
  int t0, t1;    /* compressed times [t0, t1), t0 < t1 */
  int64_t *use;  /* [k] usage per strategy */
} sg_seg;

typedef struct sg_mnode {
  bool alive;
  int k;             /* strategies left */
  int64_t *cost;     /* [k] */
  int *orig;         /* [k] index of the strategy in the input node */
  int nseg, capseg;
  sg_seg *seg;       /* sorted by t0, disjoint */
  int deg, capadj;
  int *adj;          /* incident live edges */
} sg_mnode;

typedef struct sg_medge {
  bool alive;
  int a, b;
  int64_t *c;        /* [k(a) * k(b)], row-major by a's strategy */
} sg_medge;

/* How to recover an eliminated node's strategy (input indices throughout). LEAF and MERGED
 * read alike (resp[strategy of p]); MERGED says the node did not answer p but was merged into
 * it through an edge that allows exactly one pair per strategy. */
typedef enum sg_elim_kind {
  SG_ELIM_FIXED, SG_ELIM_LEAF, SG_ELIM_SERIES, SG_ELIM_MERGED
} sg_elim_kind;

typedef struct sg_elim {
  sg_elim_kind kind;
  int node;          /* the eliminated node */
  int p, q;          /* the neighbours it answers to (q: SERIES only); MERGED: the survivor */
  int fixed;         /* FIXED: its strategy */
  int nq;            /* SERIES: input strategy count of q */
  int *resp;         /* LEAF, MERGED: [input k(p)]; SERIES: [input k(p) * input k(q)];
                      * -1 = none */
} sg_elim;

typedef struct sg_model {
  sp_arena *arena;
  const sp_sg *g;
  int n, m, capm;
  sg_mnode *node;    /* [n], index = input node */
  sg_medge *edge;    /* [m] */
  int T;             /* compressed time points */
  int64_t *times;    /* [T] the input time each point starts at */
  bool has_limit;
  int64_t *cap;      /* [T] limit minus base usage (INT64_MAX / 4 without limit) */
  int64_t offset;    /* constant cost of eliminated choices */
  bool infeasible;   /* proven by a reduction (a node lost all strategies, cap < 0) */
  char why[160];     /* what proved it */
  int nelim, capelim;
  sg_elim *elim;
} sg_model;

/* Builds the model of `g` (kept by pointer; must outlive the model): one segment per live
 * node with a usage, parallel edges summed. */
int sp_sg_model_build(const sp_sg *g, sg_model **out, sp_err *err);
void sp_sg_model_free(sg_model *m);

/* Saturating addition at SP_SG_FORBIDDEN. */
static inline int64_t sg_add(int64_t x, int64_t y) {
  int64_t s = x + y; /* both in [0, FORBIDDEN], cannot overflow */
  return s >= SP_SG_FORBIDDEN ? SP_SG_FORBIDDEN : s;
}

/* Cost of edge e for strategies ka of e->a and kb of e->b. */
static inline int64_t sg_edge_cost(const sg_model *m, const sg_medge *e, int ka, int kb) {
  return e->c[(int64_t)ka * m->node[e->b].k + kb];
}

/* --- editing (used by sg_reduce.c) --- */

/* Keeps the strategies of node i with keep[k] true (renumbering them in order), updating
 * its segments and the matrices of its edges. Marks the model infeasible if none is kept. */
int sp_sg_model_keep(sg_model *m, int i, const bool *keep);
/* Adds matrix c (row-major by a) to the edge a-b, creating it if absent. */
int sp_sg_model_add_edge(sg_model *m, int a, int b, const int64_t *c);
void sp_sg_model_kill_edge(sg_model *m, int e);
/* Deletes node i (its edges must be gone). */
void sp_sg_model_kill_node(sg_model *m, int i);
/* Adds usage `use[k]` of node i over [t0, t1), splitting segments as needed. */
int sp_sg_model_add_usage(sg_model *m, int i, int t0, int t1, const int64_t *use);
/* Pushes an elimination record; resp (if any) must be arena memory. */
int sp_sg_model_push_elim(sg_model *m, sg_elim rec);
/* The other end of edge e from node i. */
static inline int sg_other(const sg_medge *e, int i) { return e->a == i ? e->b : e->a; }

/* Turns a plan of the live nodes (model strategy indices in plan[i] for live i) into a
 * plan of the input graph (input indices in out[i] for every i). */
void sp_sg_model_expand(const sg_model *m, const int *plan, int *out);
/* Maps an input plan to model strategies of the live nodes (-1 where the input strategy was
 * removed); eliminated nodes are ignored. */
void sp_sg_model_restrict(const sg_model *m, const int *input, int *plan);

/* ------------------------------------------------------------------ compact form */

typedef struct sg_prob {
  int n, m, T;
  int *id;           /* [n] model/input node of compact node i */
  int *k;            /* [n] */
  int64_t **cost;    /* [n][k] */
  int *seg_off;      /* [n + 1] CSR into seg */
  sg_seg *seg;       /* use[] shared with the model */
  int *seg_node;     /* [segments] the node of each segment */
  int *ea, *eb;      /* [m] */
  int64_t **c;       /* [m] row-major by ea's strategy */
  int64_t **ct;      /* [m] transposed: row-major by eb's strategy */
  int *adj_off;      /* [n + 1] CSR */
  int *adj_e;        /* incident edge */
  int *adj_o;        /* the other node */
  bool has_limit;
  int64_t *cap;      /* [T] */
  int64_t offset;
} sg_prob;

/* The compact form of the live part of `m` (arena memory of m; valid while m lives). */
int sp_sg_prob_build(sg_model *m, sg_prob **out, sp_err *err);

#endif /* SP_SOLVER_SG_MODEL_INT_H */
