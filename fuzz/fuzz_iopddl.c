/*
 * fuzz_iopddl.c - libFuzzer target: the IOPDDL contest problem reader (solver/solver.h), and
 * on small problems it accepts, the solver checked against the exhaustive search.
 *
 * Invariants beyond "no crash": a rejected file has an error message; on an accepted graph of
 * at most 4096 plans the solver's plan is valid and evaluates to its reported cost, it claims
 * "optimal" only at the exhaustive optimum, "infeasible" only when no valid plan exists, and
 * finds a plan whenever one exists (the graphs are tiny: its heuristic and ILP both run
 * to completion within the work limits; there is no time limit, so a seed replays the same
 * run on any machine).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "solver/solver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PLANS 4096

static void check_solver(const sp_sg *g) {
  int64_t plans = 1;
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i].nstrat < 1) return;
    plans *= g->nodes[i].nstrat;
    if (plans > MAX_PLANS) return;
  }
  int *best = malloc(((size_t)g->nnodes + 1) * sizeof *best);
  sp_fuzz_check(best != NULL, "malloc", NULL);
  int64_t best_cost = 0;
  sp_err err;
  int ex = sp_sg_solve_exhaustive(g, MAX_PLANS, best, &best_cost, &err);
  sp_fuzz_check(ex == SP_OK || ex == SP_ENOTFOUND, "exhaustive search", &err);
  sp_sg_opts o;
  sp_sg_opts_init(&o);
  o.work_limit = 1000000; /* no time limit: the same graph takes the same path anywhere */
  sp_sg_result res;
  int rc = sp_sg_solve(g, &o, &res, &err);
  sp_fuzz_check(rc == SP_OK, "the solver failed on a graph the reader accepted", &err);
  if (res.has_plan) {
    sp_sg_eval ev;
    sp_fuzz_check(sp_sg_evaluate(g, res.choice, &ev, &err) == SP_OK, "plan in range", &err);
    sp_fuzz_check(ev.valid, "the solver returned an invalid plan", NULL);
    sp_fuzz_check(ev.cost == res.cost, "the plan's cost differs from the reported cost", NULL);
    sp_fuzz_check(ex == SP_OK && res.cost >= best_cost, "plan cheaper than the optimum", NULL);
    if (res.status == SP_SG_OPTIMAL)
      sp_fuzz_check(res.cost == best_cost, "'optimal' plan above the exhaustive optimum", NULL);
  } else {
    sp_fuzz_check(ex == SP_ENOTFOUND, "no plan although one exists", NULL);
  }
  if (res.status == SP_SG_INFEASIBLE)
    sp_fuzz_check(ex == SP_ENOTFOUND, "'infeasible' although a valid plan exists", NULL);
  sp_sg_result_free(&res);
  free(best);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_sg *g = NULL;
  sp_err err;
  int rc = sp_iopddl_parse((const char *)data, size, &g, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "IOPDDL reader failed without an error");
    sp_fuzz_check(g == NULL, "IOPDDL reader failed but returned a graph", &err);
    return 0;
  }
  check_solver(g);
  sp_sg_free(g);
  return 0;
}
