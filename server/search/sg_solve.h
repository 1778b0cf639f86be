/*
 * sg_solve.h - solving a strategy graph: a cheapest valid plan, or the best one found in time.
 *
 * Two engines work together on a reduced model (sg_reduce.h):
 *   - a combinatorial heuristic (sg_heuristic.h): a greedy plan that respects the usage
 *     limit, improved by local search moving one node, two adjacent nodes or a chain, then
 *     perturbed and improved again while the budget lasts; it is steered by a Lagrangian
 *     relaxation of the usage rows (sg_dual.h), whose message-passing labellings it
 *     repairs, and which gives a lower bound and reduced costs;
 *   - the one-hot integer program solved with GLPK (sg_ilp.h), seeded with the heuristic's
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
#ifndef SP_SEARCH_SG_SOLVE_H
#define SP_SEARCH_SG_SOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/run_ctl.h"
#include "search/strategy_graph.h"

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

/* Writes the one-hot integer program of `g` in CPLEX LP format: the reduced model (what
 * sp_sg_solve hands to GLPK) or the unreduced one (every strategy and pair, a usage row at
 * every interval start). Costs of SP_SG_FORBIDDEN or more are left out (the variable does
 * not exist) in both. The constant cost of eliminated choices is the cost of a column
 * "offset" fixed at 1, so the file's optimum is the problem's optimum. */
int sp_sg_write_lp(const sp_sg *g, bool reduced, const char *path, sp_err *err);

#endif /* SP_SEARCH_SG_SOLVE_H */
