/*
 * solver.h - the strategy-graph solver, a library of its own (server/solver/): its one public
 * header. Callers build a strategy graph (nodes with strategies, edges with pair costs, a
 * usage limit), solve it (a combinatorial heuristic with a Lagrangian bound, then GLPK's
 * integer program), and read or write it in the IOPDDL contest format or as an LP file.
 * The planner's search (server/search) uses it like any other caller; GLPK and zlib are
 * linked here only. Everything else in this folder (sg_*_int.h) is internal.
 *
 * The three parts below: the graph (was strategy_graph.h), solving (sg_solve.h), the IOPDDL
 * reader and writer (iopddl.h).
 *
 * Thread safety: graphs are independent objects; sp_sg_solve may run on many threads at
 * once (GLPK keeps its environment per thread, and a GLPK error becomes SP_EINTERNAL for
 * that call, never an abort). A thread that solved calls sp_sg_thread_end before it exits.
 */
#ifndef SP_SOLVER_SOLVER_H
#define SP_SOLVER_SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/run_ctl.h"
#include "ir/sp_limits.h"

/* ==================================================================
 * The graph: the strategy-selection problem: pick one strategy per node.
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

/* Costs at or above this may not be chosen (1e18, the contest files' "infinity"). */
#define SP_SG_FORBIDDEN ((int64_t)1000000000000000000LL)
/* The usage limit of a graph that has none. */
#define SP_SG_NO_LIMIT INT64_MAX

/* Costs and usages above 2^53 (and below SP_SG_FORBIDDEN) are rejected by readers whose
 * numbers pass through a double (JSON): they would not be exact. */
#define SP_SG_MAX_EXACT       ((int64_t)1 << 53)
/* The usages of all nodes at once (each node's largest, summed) stay at or below this, so
 * that no live-usage sum, with the limit and the slack the solvers add to it, can overflow
 * int64: sp_sg_add_node refuses a node that would pass it (SP_ELIMIT). */
#define SP_SG_MAX_USAGE_SUM   (INT64_MAX / 4)

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
  int64_t usage_sum;    /* the largest usage of every node, summed (<= SP_SG_MAX_USAGE_SUM) */
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

/* ==================================================================
 * Solving: solving a strategy graph: a cheapest valid plan, or the best one found in time.
 *
 * Two engines work together on a reduced model (sg_reduce_int.h):
 *   - a combinatorial heuristic (sg_heuristic_int.h): a greedy plan that respects the usage
 *     limit, improved by local search moving one node, two adjacent nodes or a chain, then
 *     perturbed and improved again while the budget lasts; it is steered by a Lagrangian
 *     relaxation of the usage rows (sg_dual_int.h), whose message-passing labellings it
 *     repairs, and which gives a lower bound and reduced costs;
 *   - the one-hot integer program solved with GLPK (sg_ilp_int.h), seeded with the heuristic's
 *     plan and pruned with the reduced costs, which improves the plan or proves it optimal
 *     when the model is small enough.
 * The plan is mapped back to the input graph and evaluated there, so a returned plan is
 * always checked against the original problem.
 *
 * Determinism: with the same input and options the answer is the same, except where the
 * time limit stops a phase early; internal phases are bounded by work counts, not clocks.
 *
 * Memory: sp_sg_result.choice is malloc'd by sp_sg_solve; release it with
 * sp_sg_result_free(). The graph is not modified.
 */

typedef enum sp_sg_status {
  SP_SG_OPTIMAL = 0,  /* the plan is proven cheapest */
  SP_SG_FEASIBLE,     /* a valid plan; the search stopped at its gap or work limit */
  SP_SG_TIMEOUT,      /* the time limit passed; the best valid plan so far, if any */
  SP_SG_INFEASIBLE,   /* proven: no valid plan exists */
  SP_SG_UNKNOWN       /* no plan found within the work limit, and none proven impossible */
} sp_sg_status;

const char *sp_sg_status_name(sp_sg_status s); /* "optimal", "feasible", ... */

/* A progress report: a new incumbent or bound, or a phase change. */
typedef struct sp_sg_progress {
  double seconds;     /* since the solve started */
  const char *phase;  /* "reduce", "greedy", "local search", "lp", "ilp", "perturb" */
  bool has_plan;
  int64_t cost;       /* best plan so far (if has_plan) */
  int64_t bound;      /* best lower bound so far (INT64_MIN if none) */
  const char *note;   /* a short human-readable detail, may be "" */
} sp_sg_progress;

typedef void (*sp_sg_progress_fn)(void *ctx, const sp_sg_progress *p);

typedef struct sp_sg_opts {
  double time_limit;      /* seconds; <= 0: no limit */
  double gap;             /* stop when (cost - bound) / cost <= gap; 0: prove optimality */
  int64_t work_limit;     /* heuristic work units (cost entries read); 0: the default */
  uint64_t seed;          /* perturbation PRNG seed */
  const int *incumbent;   /* optional plan [nnodes] to start from (used when valid) */
  bool no_reduce;         /* solve the one-hot model as given (for comparisons) */
  bool no_ilp;            /* heuristic only */
  bool no_heuristic;      /* ILP only (the greedy plan is still built as a fallback) */
  int64_t ilp_max_entries;/* skip the ILP above this many constraint nonzeros; 0: default */
  sp_sg_progress_fn progress; /* optional */
  void *progress_ctx;
  const sp_run_ctl *ctl;  /* optional: a set cancel flag stops the solve between phases and
                             inside the ILP (status "timeout", the best plan so far) */
  /* The best plan so far, handed out while the solve goes on (optional; ctl's snapshot_at_us,
   * ir/run_ctl.h): once that time has passed, the next check that has a valid plan calls this
   * on the solving thread with the plan on the input graph (choice [nnodes]), its cost there
   * and the lower bound proven so far (INT64_MIN: none); then the solve goes on, undisturbed
   * (the callback must not touch the graph). Checks: between phases, in the heuristic's
   * clock checks and in the branch-and-bound callback. Each snapshot time is served once. */
  void (*on_snapshot)(void *ctx, const int *choice, int64_t cost, int64_t bound);
  void *snapshot_ctx;
} sp_sg_opts;

void sp_sg_opts_init(sp_sg_opts *o);

typedef struct sp_sg_stats {
  int nodes, edges;              /* input */
  int red_nodes, red_edges;      /* after reduction */
  int64_t red_strategies;        /* node variables after reduction */
  int64_t red_pairs;             /* edge variables after reduction */
  int components;                /* independent parts of the reduced model */
  int merged;                    /* reduction: nodes merged through bijective edges */
  int64_t dominated;             /* reduction: dominated strategies removed */
  int64_t ilp_cols, ilp_rows, ilp_mem_rows, ilp_nonzeros; /* last ILP built (0 if none) */
  int incumbents;                /* improvements reported */
  int64_t heuristic_work;        /* work units spent by the heuristic */
  double t_reduce, t_heuristic, t_lp, t_ilp, seconds; /* wall seconds per phase, total */
  bool ilp_ran, ilp_proved;
} sp_sg_stats;

typedef struct sp_sg_result {
  sp_sg_status status;
  bool has_plan;
  int *choice;         /* [nnodes] when has_plan, else NULL; owned, see sp_sg_result_free */
  int64_t cost;        /* of the plan, evaluated on the input graph */
  int64_t bound;       /* lower bound on the optimum (INT64_MIN if none) */
  double gap;          /* (cost - bound) / max(cost, 1); 0 when optimal, 1 if no bound */
  sp_sg_stats stats;
} sp_sg_result;

/* Solves `g`. Returns SP_OK whenever it could run (the outcome, including "infeasible" and
 * "timeout", is in `res`); a negative status on bad options or resource failure. */
int sp_sg_solve(const sp_sg *g, const sp_sg_opts *opts, sp_sg_result *res /* OUT */,
                sp_err *err);
void sp_sg_result_free(sp_sg_result *res);
/* Releases what the solver keeps per thread (GLPK's environment, made by the thread's first
 * solve; a GLPK error inside a solve frees it too). A thread that ran sp_sg_solve (or
 * sp_sg_write_lp) calls it before it exits, outside any solve; harmless on a thread that did
 * not. */
void sp_sg_thread_end(void);

/* Writes the one-hot integer program of `g` in CPLEX LP format: the reduced model (what
 * sp_sg_solve hands to GLPK) or the unreduced one (every strategy and pair, a usage row at
 * every interval start). Costs of SP_SG_FORBIDDEN or more are left out (the variable does
 * not exist) in both. The constant cost of eliminated choices is the cost of a column
 * "offset" fixed at 1, so the file's optimum is the problem's optimum. */
int sp_sg_write_lp(const sp_sg *g, bool reduced, const char *path, sp_err *err);

/* ==================================================================
 * IOPDDL: reader for the IOPDDL contest problem format (ASPLOS 2025).
 *
 * A problem file is JSON, plain or gzip-compressed:
 *   {"problem": {"name": ...,
 *                "nodes": {"intervals": [[start, end], ...], "costs": [[c, ...], ...],
 *                          "usages": [[u, ...], ...]},
 *                "edges": {"nodes": [[a, b], ...], "costs": [[c, ...], ...]},
 *                "usage_limit": L}}       (usage_limit optional)
 * with edge costs row-major by the first node's strategy. The reader checks every count and
 * number and names what is wrong and where ("problem.edges.costs[12] has 6 entries, expected
 * 2x4=8"). Numbers must be non-negative integers; a cost of 1e18 or more becomes
 * SP_SG_FORBIDDEN; other values above 2^53 are rejected because JSON numbers pass through a
 * double and would not be exact.
 *
 * The returned graph is owned by the caller (sp_sg_free).
 *
 * The writer produces the same format (so a planner's graph can be solved or compared
 * outside the planner): forbidden costs are written as 1e18, "usage_limit" only when the
 * graph has one; the file is gzip-compressed when its name ends in ".gz". Reading it back
 * gives an equal graph when its numbers are within what the reader accepts (2^53).
 */

/* Reads a problem from `path` (.json or .json.gz; gzip is detected from the content).
 * Errors are prefixed with the path. */
int sp_iopddl_read_file(const char *path, sp_sg **out /* OUT, owned */, sp_err *err);

/* Parses a problem from `len` bytes of JSON text (need not be NUL-terminated). */
int sp_iopddl_parse(const char *text, size_t len, sp_sg **out /* OUT, owned */, sp_err *err);

/* Writes `g` to `path` in the contest format; reading it back gives an equal graph. */
int sp_iopddl_write_file(const sp_sg *g, const char *path, sp_err *err);

#endif /* SP_SOLVER_SOLVER_H */
