/*
 * sg_ilp_int.h - the one-hot integer program of a compact model, solved with GLPK (internal).
 *
 * Variables: x[i][k] (binary) for each node strategy; y[e][a][b] (continuous in [0, 1])
 * for each allowed pair of each edge; pairs with a forbidden cost have no variable.
 * Rows: one strategy per node (sum_k x[i][k] = 1); linking (sum_b y[e][a][b] = x[i][a]
 * and sum_a y[e][a][b] = x[j][b]), which makes y integral once x is; usage rows
 * sum x[i][k] * use <= cap(t).
 * Usage rows: the "plain" model has one at every time some segment starts (the textbook
 * model); the reduced one keeps only times that can bind and are not implied by a
 * neighbouring time (same or more segments, no more capacity), and no duplicates.
 *
 * Solving: GLPK's MIP presolver would solve the root LP with primal simplex and no time
 * limit, so the root relaxation is solved here with dual simplex (long-step ratio test) and
 * a time limit (and the incumbent's cost as objective limit: reaching it proves the
 * incumbent optimal), then glp_intopt runs without presolve from that basis, with the
 * incumbent offered through the heuristic callback, a gap and a time limit.
 *
 * Memory: sg_ilp owns its glp_prob and index arrays (malloc); the model must outlive it.
 */
#ifndef SP_SOLVER_SG_ILP_INT_H
#define SP_SOLVER_SG_ILP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/clock.h"
#include "ir/run_ctl.h"
#include "solver/sg_dual_int.h"
#include "solver/sg_model_int.h"

typedef struct sg_ilp sg_ilp;

typedef struct sg_ilp_size {
  int64_t cols, rows, mem_rows, nonzeros;
} sg_ilp_size;

/* Builds the program for the nodes `nodes[0..nn)` of `p` (all when nodes is NULL) and the
 * edges between them. With `ub` the cost of a known plan of these nodes (INT64_MAX: none),
 * variables that cannot be part of a plan as cheap are left out: by the trivial bound, and
 * by the reduced costs `ex` of a Lagrangian dual when given. Returns SP_ELIMIT (nothing
 * built) when it would have more than `max_nonzeros` constraint entries (0: no limit). */
int sp_sg_ilp_build(const sg_prob *p, const int *nodes, int nn, bool plain,
                    int64_t max_nonzeros, int64_t ub, const sg_excess *ex, sg_ilp **out,
                    sp_err *err);
void sp_sg_ilp_free(sg_ilp *q);
/* Frees the calling thread's GLPK environment; call only when no sg_ilp of this thread is
 * alive. (A GLPK error inside any entry point frees it too and returns SP_EINTERNAL.) */
void sp_sg_ilp_release_env(void);
sg_ilp_size sp_sg_ilp_size(const sg_ilp *q);

/* Writes the program in CPLEX LP format; `offset` (a constant cost) goes in as a column
 * "offset" with cost `offset`, forced to 1 by the row "fix_offset", so that the file's
 * optimum is the full cost. */
int sp_sg_ilp_write_lp(sg_ilp *q, int64_t offset, const char *path, sp_err *err);

typedef void (*sg_ilp_plan_fn)(void *ctx, const int *plan, int64_t cost);

typedef struct sg_ilp_run {
  /* in */
  double lp_deadline, deadline; /* absolute (sp_clock_now); 0: none */
  double gap;                   /* relative MIP gap */
  const int *start;             /* a valid plan of the whole compact model, or NULL */
  sg_ilp_plan_fn on_plan;       /* called with each better plan (whole compact model) */
  void *ctx;
  const sp_run_ctl *ctl;        /* a set cancel flag or its (moving) deadline stops the
                                   search like the deadline */
  void (*poll)(void *ctx);      /* called in the branch-and-bound callback (may be NULL) */
  void *poll_ctx;
  int lp_iter_limit;            /* simplex iterations per LP solve; 0: none */
  int64_t node_limit;           /* branch-and-bound nodes; 0: none (work limits: the same
                                   input stops at the same point whatever the machine) */
  /* out */
  bool lp_solved;               /* the root relaxation reached optimality */
  bool infeasible;              /* proven */
  bool optimal;                 /* the best plan is proven optimal (within gap) */
  bool timed_out;
  double bound;                 /* lower bound on this part's cost (-inf if none) */
  bool has_plan;
  int64_t cost;                 /* of this part's best plan */
  double t_lp, t_ilp;
} sg_ilp_run;

/* Solves; `plan` [p->n] receives the best plan for this part's nodes (others untouched,
 * but `start` is copied first when given). */
int sp_sg_ilp_solve(sg_ilp *q, sg_ilp_run *r, int *plan, sp_err *err);

#endif /* SP_SOLVER_SG_ILP_INT_H */
