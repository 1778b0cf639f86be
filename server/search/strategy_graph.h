/*
 * strategy_graph.h - the strategy-selection problem: pick one strategy per node.
 *
 * A strategy graph has nodes, each with a list of strategies; strategy k of node i has a cost
 * costs[k] and a memory usage usages[k], charged while the node is live, i.e. at every time
 * t with start <= t < end (an interval with start == end is never live). An edge (a, b) has a
 * cost for every pair of strategies, row-major by a's strategy:
 * costs[ka * nstrat(b) + kb]. A plan chooses one strategy per node; its cost is the sum of
 * the chosen node costs and edge costs, and it is valid when no cost it uses is forbidden
 * and, at every time, the usages of the live nodes sum to at most the usage limit.
 *
 * This is the problem of the ASPLOS 2025 IOPDDL contest (iopddl.h reads its files) and the
 * one the planner builds from a propagated graph (node = op cluster, strategy = an
 * assignment of mesh axes, edge = resharding cost). sg_solve.h solves it.
 *
 * Invariants (checked by the add functions): every node has at least one strategy; costs
 * and usages are >= 0; start <= end; an edge joins two distinct existing nodes. A cost of
 * SP_SG_FORBIDDEN or more means "may not be chosen" (the contest files write 1e18 for
 * that). Parallel edges are allowed; their costs add up.
 *
 * Memory: the graph owns an arena holding every array; sp_sg_free() releases it all.
 * The add functions copy their inputs. Not thread-safe; read-only use from several threads
 * is fine.
 */
#ifndef SP_SEARCH_STRATEGY_GRAPH_H
#define SP_SEARCH_STRATEGY_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/sp_limits.h"

/* Costs at or above this may not be chosen (1e18, the contest files' "infinity"). */
#define SP_SG_FORBIDDEN ((int64_t)1000000000000000000LL)
/* The usage limit of a graph that has none. */
#define SP_SG_NO_LIMIT INT64_MAX

/* Costs and usages above 2^53 (and below SP_SG_FORBIDDEN) are rejected by readers whose
 * numbers pass through a double (JSON): they would not be exact. */
#define SP_SG_MAX_EXACT       ((int64_t)1 << 53)

typedef struct sp_sg_interval {
  int64_t start, end; /* live at start <= t < end */
} sp_sg_interval;

typedef struct sp_sg_node {
  int nstrat;
  int64_t *costs;  /* [nstrat] */
  int64_t *usages; /* [nstrat] */
  sp_sg_interval live;
} sp_sg_node;

typedef struct sp_sg_edge {
  int a, b;
  int64_t *costs; /* [nstrat(a) * nstrat(b)], row-major by a's strategy */
} sp_sg_edge;

typedef struct sp_sg {
  sp_arena *arena;
  const char *name;     /* may be "" */
  int nnodes, nedges;
  sp_sg_node *nodes;    /* [nnodes] */
  sp_sg_edge *edges;    /* [nedges] */
  int64_t usage_limit;  /* SP_SG_NO_LIMIT when there is none */
  int cap_nodes, cap_edges;
} sp_sg;

/* What a plan costs and whether it is valid. */
typedef struct sp_sg_eval {
  int64_t cost;        /* sum of chosen costs; saturates at INT64_MAX */
  bool forbidden;      /* some chosen node or pair cost is >= SP_SG_FORBIDDEN */
  bool over_limit;     /* the live usage exceeds the limit at some time */
  bool valid;          /* !forbidden && !over_limit */
  int64_t peak_usage;  /* the highest live usage over time (0 if nothing is ever live) */
  int64_t peak_time;   /* the first time that peak is reached */
} sp_sg_eval;

/* ------------------------------------------------------------------ API */

/* A new empty graph without usage limit; NULL if out of memory. `name` may be NULL. */
sp_sg *sp_sg_new(const char *name);
void sp_sg_free(sp_sg *g);

/* Adds a node with `nstrat` strategies (costs and usages copied; usages may be NULL for all
 * zero) live over `live`. Returns the new node's index (>= 0) or a negative sp_status. */
int sp_sg_add_node(sp_sg *g, int nstrat, const int64_t *costs /* IN */,
                   const int64_t *usages /* IN, may be NULL */, sp_sg_interval live,
                   sp_err *err);

/* Adds an edge between nodes a and b with nstrat(a) * nstrat(b) costs (copied). Returns the
 * new edge's index (>= 0) or a negative sp_status. */
int sp_sg_add_edge(sp_sg *g, int a, int b, const int64_t *costs /* IN */, sp_err *err);

/* Sets the usage limit (>= 0, or SP_SG_NO_LIMIT). */
int sp_sg_set_usage_limit(sp_sg *g, int64_t limit, sp_err *err);

/* Evaluates the plan `choice` (one strategy per node). Fails (SP_EINVAL) only when a choice
 * is out of range; an invalid plan is reported in `out`, not as an error. */
int sp_sg_evaluate(const sp_sg *g, const int *choice /* IN [nnodes] */,
                   sp_sg_eval *out /* OUT */, sp_err *err);

/* The reference solver: a depth-first search over every plan with exact pruning, for
 * small graphs and tests. Fills `choice` with a cheapest valid plan and *cost with its cost.
 * Returns SP_OK, SP_ENOTFOUND when no valid plan exists, SP_ELIMIT when the product of the
 * strategy counts exceeds `max_plans`. */
int sp_sg_solve_exhaustive(const sp_sg *g, int64_t max_plans, int *choice /* OUT [nnodes] */,
                           int64_t *cost /* OUT */, sp_err *err);

/* Sum of strategy counts and of edge entries: the size of the one-hot model. */
int64_t sp_sg_num_node_vars(const sp_sg *g);
int64_t sp_sg_num_edge_vars(const sp_sg *g);

/* Formats a plan as "[k0, k1, ...]" (malloc'd; the caller frees). NULL if out of memory. */
char *sp_sg_format_plan(const sp_sg *g, const int *choice);

#endif /* SP_SEARCH_STRATEGY_GRAPH_H */
