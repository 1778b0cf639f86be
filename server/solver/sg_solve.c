/*
 * sg_solve.c - the solver driver (see solver.h).
 *
 * Order of work, all against one deadline:
 *   1. build the model and reduce it (exact; may prove infeasibility);
 *   2. greedy plan, local search to a local optimum, a fixed number of Lagrangian rounds
 *      (each labelling repaired and improved by the heuristic), a first round of
 *      perturbation (bounded by work, so the same input gives the same incumbent); when
 *      the Lagrangian bound already reaches the best plan, that plan is optimal and the
 *      solve ends here;
 *   3. per independent component: the root LP with dual simplex, then branch and bound
 *      seeded with the incumbent; proofs and bounds are collected per component;
 *   4. if not proven, perturbation again until the deadline or the work limit;
 *   5. the best plan is expanded to the input graph and evaluated there.
 */
#include "solver/solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "solver/sg_dual_int.h"
#include "solver/sg_heuristic_int.h"
#include "solver/sg_ilp_int.h"
#include "solver/sg_model_int.h"
#include "solver/sg_reduce_int.h"
#include "solver/sg_rows_int.h"

#define DEFAULT_WORK_LIMIT ((int64_t)4000 * 1000 * 1000) /* heuristic work units */
#define DEFAULT_ILP_MAX_NONZEROS ((int64_t)40 * 1000 * 1000)
#define LAGRANGE_ROUNDS 60 /* price updates (each: 3 TRW-S and 3 MPLP passes, one repair) */
#define LAGRANGE_MORE_ROUNDS 540 /* after an unfinished ILP, when there is a time limit */
/* Without a time limit the integer program is bounded by work, so that the same input stops
 * at the same point on any machine (DESIGN.md section 6): simplex iterations per LP solve and
 * branch-and-bound nodes. */
#define DEFAULT_LP_ITER_LIMIT 3000
#define DEFAULT_ILP_NODE_LIMIT 200

const char *sp_sg_status_name(sp_sg_status s) {
  switch (s) {
    case SP_SG_OPTIMAL: return "optimal";
    case SP_SG_FEASIBLE: return "feasible";
    case SP_SG_TIMEOUT: return "timeout";
    case SP_SG_INFEASIBLE: return "infeasible";
    case SP_SG_UNKNOWN: return "unknown";
  }
  return "?";
}

void sp_sg_opts_init(sp_sg_opts *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
}

void sp_sg_result_free(sp_sg_result *res) {
  if (!res) return;
  free(res->choice);
  res->choice = NULL;
  res->has_plan = false;
}

/* sp_sg_solve and sp_sg_write_lp release GLPK's environment when they finish normally; an
 * early exit on an error can leave it, so a thread's owner calls this last. */
void sp_sg_thread_end(void) { sp_sg_ilp_release_env(); }

typedef struct solver {
  const sp_sg *g;
  const sp_sg_opts *o;
  sp_sg_result *res;
  double t_start, deadline;
  sg_model *m;
  sg_prob *p;
  sg_heur *h;
  int64_t best_reported;
  int64_t bound;         /* best proven lower bound (input cost units), INT64_MIN if none */
  sg_excess excess;      /* reduced costs from the Lagrangian dual */
  bool have_excess;
  sg_rows rows;          /* usage rows (times and capacities) priced by the dual */
  bool have_rows;
  sg_dual *dual;
  int64_t size;          /* reduced strategies + pairs + 1: what the work budgets scale with */
  int64_t work_limit;    /* heuristic work for the whole solve */
  int64_t first_round;   /* heuristic work for the first round of perturbation */
  long long snapshot_served; /* the host's last snapshot time served (sp_sg_opts.on_snapshot) */
} solver;

static void poll_snapshot(void *ctx);

/* When the solve must end: the time limit's end and the caller's deadline (which another
 * thread may move, ir/run_ctl.h), whichever comes first; 0: neither. */
static double solve_end(const solver *s) {
  double c = sp_run_ctl_deadline(s->o->ctl);
  if (s->deadline > 0 && (c <= 0 || s->deadline < c)) return s->deadline;
  return c;
}

/* The end of a phase that may take `frac` of the time left. With a time limit the phases
 * share it; without one they are bounded by work and the caller's deadline only cuts them
 * (the deadline as it is now; the checks inside a phase read it again). */
static double phase_end(const solver *s, double frac) {
  double end = solve_end(s);
  if (s->deadline <= 0 || end <= 0) return end;
  double now = sp_clock_now();
  return now + (end - now) * frac;
}

static bool out_of_time(const solver *s) {
  double end = solve_end(s);
  return (end > 0 && sp_clock_now() >= end) || sp_run_ctl_cancelled(s->o->ctl);
}

/* The bound has reached the heuristic's best plan (often the Lagrangian bound alone does):
 * the plan is optimal and the rest of the work is moot. */
static bool incumbent_proved(const solver *s) {
  int64_t hc;
  return s->h && sp_sg_heur_best(s->h, &hc) && s->bound != INT64_MIN &&
         hc + s->p->offset <= s->bound;
}

static void report(solver *s, const char *phase, const char *note) {
  if (!s->o->progress) return;
  int64_t cost = 0;
  bool has = s->h && sp_sg_heur_has_plan(s->h);
  if (has) sp_sg_heur_best(s->h, &cost);
  sp_sg_progress pr = {.seconds = sp_clock_now() - s->t_start, .phase = phase, .has_plan = has,
                       .cost = has ? cost + s->p->offset : 0, .bound = s->bound,
                       .note = note ? note : ""};
  s->o->progress(s->o->progress_ctx, &pr);
}

/* The heuristic found a better plan. */
static void on_incumbent(void *ctx, const char *phase, int64_t cost) {
  solver *s = ctx;
  s->res->stats.incumbents++;
  if (cost + s->p->offset < s->best_reported) {
    s->best_reported = cost + s->p->offset;
    report(s, phase, "new incumbent");
  }
}

/* GLPK found a better plan for one component: offer the whole plan to the heuristic, which
 * checks it and reports it if it is better. */
static void on_ilp_plan(void *ctx, const int *plan, int64_t part_cost) {
  solver *s = ctx;
  (void)part_cost;
  sp_sg_heur_offer(s->h, plan);
}

/* The Lagrangian rounds hand each labelling to the heuristic. */
typedef struct primal_ctx {
  solver *s;
  int64_t work;
  double deadline;
} primal_ctx;

static int64_t lagrange_primal(void *ctx, const int *labels) {
  primal_ctx *c = ctx;
  return sp_sg_heur_from_plan(c->s->h, labels, c->work, c->deadline);
}

/* Lagrangian relaxation of the usage rows: prices steer the heuristic, and the relaxation
 * gives a lower bound. */
static int run_lagrange(solver *s, int64_t size, int rounds, double end) {
  if (!s->dual) {
    if (sp_sg_rows_build(s->p, NULL, false, false, &s->rows) != SP_OK) return SP_ENOMEM;
    s->have_rows = true;
    if (sp_sg_dual_new(s->p, &s->rows, &s->dual) != SP_OK) return SP_ENOMEM;
  }
  primal_ctx pc = {s, size * 50 + 10000, end};
  double t0 = sp_clock_now();
  double lb = sp_sg_dual_run(s->dual, rounds, 3, end, lagrange_primal, &pc);
  s->res->stats.t_heuristic += sp_clock_now() - t0;
  if (lb > -HUGE_VAL) {
    int64_t b = (int64_t)ceil(lb) + s->p->offset;
    if (b > s->bound) s->bound = b;
  }
  char note[128];
  snprintf(note, sizeof note, "Lagrangian bound %.0f over %d usage rows", lb + (double)s->p->offset,
           s->rows.n);
  report(s, "lagrange", note);
  if (s->have_excess) sp_sg_excess_free(&s->excess);
  s->have_excess = sp_sg_dual_excess(s->dual, &s->excess) == SP_OK;
  return SP_OK;
}

/* ------------------------------------------------------------------ bounds */

/* The trivial bound of a set of nodes: least node costs plus least edge entries. */
static double trivial_bound(const sg_prob *p, const int *comp, int c) {
  double b = 0;
  for (int i = 0; i < p->n; i++) {
    if (comp[i] != c) continue;
    int64_t mn = INT64_MAX;
    for (int k = 0; k < p->k[i]; k++) if (p->cost[i][k] < mn) mn = p->cost[i][k];
    b += (double)mn;
  }
  for (int e = 0; e < p->m; e++) {
    if (comp[p->ea[e]] != c) continue;
    int64_t mn = INT64_MAX, n = (int64_t)p->k[p->ea[e]] * p->k[p->eb[e]];
    for (int64_t v = 0; v < n; v++) if (p->c[e][v] < mn) mn = p->c[e][v];
    b += (double)mn;
  }
  return b;
}

/* The cost of `plan` restricted to component c. */
static int64_t part_cost(const sg_prob *p, const int *comp, int c, const int *plan) {
  int64_t sum = 0;
  for (int i = 0; i < p->n; i++)
    if (comp[i] == c) sum += p->cost[i][plan[i]];
  for (int e = 0; e < p->m; e++)
    if (comp[p->ea[e]] == c) sum += p->c[e][(int64_t)plan[p->ea[e]] * p->k[p->eb[e]] + plan[p->eb[e]]];
  return sum;
}

/* ------------------------------------------------------------------ phases */

static int run_ilp(solver *s, double share_end, bool *proved, bool *infeasible, sp_err *err) {
  const sg_prob *p = s->p;
  int *comp = malloc(sizeof(int) * ((size_t)p->n + 1));
  int *nodes = malloc(sizeof(int) * ((size_t)p->n + 1));
  double *cbound = NULL;
  int ncomp = 0, rc = SP_OK;
  *proved = false;
  *infeasible = false;
  if (!comp || !nodes || sp_sg_prob_components(p, comp, &ncomp) != SP_OK) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory splitting components");
    goto out;
  }
  s->res->stats.components = ncomp;
  cbound = malloc(sizeof(double) * ((size_t)ncomp + 1));
  int *plan = malloc(sizeof(int) * ((size_t)p->n + 1));
  if (!cbound || !plan) {
    free(plan);
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto out;
  }
  int64_t weight_total = 0;
  for (int i = 0; i < p->n; i++) weight_total += p->k[i];
  int64_t weight_done = 0;
  bool all_proved = true;
  int64_t max_nz = s->o->ilp_max_entries > 0 ? s->o->ilp_max_entries : DEFAULT_ILP_MAX_NONZEROS;
  for (int c = 0; c < ncomp && rc == SP_OK; c++) {
    int nn = 0;
    int64_t weight = 0;
    for (int i = 0; i < p->n; i++)
      if (comp[i] == c) { nodes[nn++] = i; weight += p->k[i]; }
    cbound[c] = trivial_bound(p, comp, c);
    /* This component's share of the time left, by its share of the node variables. */
    double now = sp_clock_now(), end = share_end;
    bool timed = s->deadline > 0;   /* else work-bounded: the caller's deadline only cuts */
    if (!timed) end = sp_run_ctl_deadline(s->o->ctl);
    if (timed && share_end > 0 && weight_total > weight_done)
      end = now + (share_end - now) * (double)weight / (double)(weight_total - weight_done);
    weight_done += weight;
    int64_t hc;
    const int *start = sp_sg_heur_best(s->h, &hc);
    int64_t ub = start ? part_cost(p, comp, c, start) : INT64_MAX;
    sg_ilp *q = NULL;
    sp_err e2;
    int brc = sp_sg_ilp_build(p, nodes, nn, s->o->no_reduce, max_nz, ub,
                              s->have_excess ? &s->excess : NULL, &q, &e2);
    if (brc == SP_ELIMIT) { all_proved = false; continue; }
    if (brc != SP_OK) { rc = sp_err_set(err, brc, "%s", e2.msg); break; }
    sg_ilp_size sz = sp_sg_ilp_size(q);
    s->res->stats.ilp_cols += sz.cols;
    s->res->stats.ilp_rows += sz.rows;
    s->res->stats.ilp_mem_rows += sz.mem_rows;
    s->res->stats.ilp_nonzeros += sz.nonzeros;
    s->res->stats.ilp_ran = true;
    sg_ilp_run r = {.lp_deadline = timed && end > 0 ? now + (end - now) * 0.6 : end,
                    .deadline = end, .gap = s->o->gap, .start = start,
                    .on_plan = on_ilp_plan, .ctx = s, .ctl = s->o->ctl,
                    .poll = s->o->on_snapshot ? poll_snapshot : NULL, .poll_ctx = s,
                    .lp_iter_limit = timed ? 0 : DEFAULT_LP_ITER_LIMIT,
                    .node_limit = timed ? 0 : DEFAULT_ILP_NODE_LIMIT};
    char note[160];
    snprintf(note, sizeof note, "component %d/%d: %lld columns, %lld rows (%lld usage), "
             "%lld nonzeros", c + 1, ncomp, (long long)sz.cols, (long long)sz.rows,
             (long long)sz.mem_rows, (long long)sz.nonzeros);
    report(s, "ilp", note);
    rc = sp_sg_ilp_solve(q, &r, plan, err);
    sp_sg_ilp_free(q);
    s->res->stats.t_lp += r.t_lp;
    s->res->stats.t_ilp += r.t_ilp;
    if (rc != SP_OK) break;
    if (r.infeasible && !r.has_plan) {
      *infeasible = true;
      report(s, "ilp", "the integer program is infeasible");
      break;
    }
    if (r.has_plan) sp_sg_heur_offer(s->h, plan);
    if (r.bound > cbound[c]) cbound[c] = r.bound;
    all_proved &= r.optimal;
    snprintf(note, sizeof note, "component %d/%d: %s; LP %s in %.2f s, B&B %.2f s", c + 1,
             ncomp, r.optimal ? "proved" : r.timed_out ? "time limit" : "stopped",
             r.lp_solved ? "solved" : r.optimal ? "bound reached the incumbent" : "not solved",
             r.t_lp, r.t_ilp);
    double b = (double)p->offset;
    for (int j = 0; j <= c; j++) b += cbound[j];
    for (int j = c + 1; j < ncomp; j++) b += trivial_bound(p, comp, j);
    int64_t ib = (int64_t)ceil(b - 1e-6 * fmax(1.0, fabs(b)));
    if (ib > s->bound) s->bound = ib;
    report(s, "ilp", note);
  }
  *proved = all_proved && rc == SP_OK && !*infeasible;
  free(plan);
  sp_sg_ilp_release_env(); /* no program is alive: leave no GLPK state on this thread */
out:
  free(comp);
  free(nodes);
  free(cbound);
  return rc;
}

/* Checks the incumbent seed on the input graph; returns whether it is valid. */
static bool seed_valid(const sp_sg *g, const int *seed, int64_t *cost) {
  for (int i = 0; i < g->nnodes; i++)
    if (seed[i] < 0 || seed[i] >= g->nodes[i].nstrat) return false;
  sp_sg_eval ev;
  if (sp_sg_evaluate(g, seed, &ev, NULL) != SP_OK || !ev.valid) return false;
  *cost = ev.cost;
  return true;
}

/* The heuristic's plan `best` (of cost hc on the reduced problem) on the input graph, into
 * choice [nnodes], checked there: *cost is its cost on the input. */
static int expand_plan(const solver *s, const int *best, int64_t hc, int *choice, int64_t *cost,
                       sp_err *err) {
  int *plan = calloc((size_t)s->m->n + 1, sizeof(int));
  if (!plan) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < s->p->n; i++) plan[s->p->id[i]] = best[i];
  sp_sg_model_expand(s->m, plan, choice);
  free(plan);
  sp_sg_eval ev;
  int rc = sp_sg_evaluate(s->g, choice, &ev, err);
  if (rc != SP_OK) return rc;
  if (!ev.valid || ev.cost != hc + s->p->offset)
    return sp_err_set(err, SP_EINTERNAL, "the solver's plan does not check out on the input "
                      "(cost %lld vs %lld, %s)", (long long)ev.cost,
                      (long long)(hc + s->p->offset), ev.valid ? "valid" : "invalid");
  *cost = ev.cost;
  return SP_OK;
}

/* The host's snapshot check (sp_sg_opts.on_snapshot): once its time has passed, the best plan
 * so far goes to the host, and the solve goes on. A plan that does not check out (it always
 * does; or memory ran out) is not handed out: the host hears from the final result. */
static void poll_snapshot(void *ctx) {
  solver *s = ctx;
  long long at = s->o->on_snapshot ? sp_run_ctl_snapshot_due(s->o->ctl) : 0;
  if (!at || at == s->snapshot_served || !s->h) return;
  int64_t hc, cost;
  const int *best = sp_sg_heur_best(s->h, &hc);
  if (!best) return;   /* no plan yet: the first check that has one serves it */
  s->snapshot_served = at;
  int *choice = malloc(sizeof(int) * ((size_t)s->g->nnodes + 1));
  if (choice && expand_plan(s, best, hc, choice, &cost, NULL) == SP_OK)
    s->o->on_snapshot(s->o->snapshot_ctx, choice, cost, s->bound);
  free(choice);
}

static int finish(solver *s, bool proved, bool infeasible, sp_err *err) {
  sp_sg_result *res = s->res;
  const sp_sg *g = s->g;
  res->bound = s->bound;
  int64_t seed_cost = 0;
  bool seed_ok = s->o->incumbent && seed_valid(g, s->o->incumbent, &seed_cost);
  int64_t hc = 0;
  const int *best = s->h ? sp_sg_heur_best(s->h, &hc) : NULL;
  if (best || seed_ok) {
    res->choice = malloc(sizeof(int) * ((size_t)g->nnodes + 1));
    if (!res->choice) return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  if (best) {
    int rc = expand_plan(s, best, hc, res->choice, &res->cost, err);
    if (rc != SP_OK) return rc;
    res->has_plan = true;
  }
  if (seed_ok && (!res->has_plan || seed_cost < res->cost)) {
    memcpy(res->choice, s->o->incumbent, sizeof(int) * (size_t)g->nnodes);
    res->has_plan = true;
    res->cost = seed_cost;
  }
  if (!res->has_plan && g->nnodes > 0) {
    free(res->choice);
    res->choice = NULL;
  }
  if (infeasible && !res->has_plan) {
    res->status = SP_SG_INFEASIBLE;
  } else if (res->has_plan) {
    if (proved || res->cost <= res->bound) {
      res->status = SP_SG_OPTIMAL;
      if (res->bound > res->cost || proved) res->bound = res->cost;
    } else {
      res->status = out_of_time(s) ? SP_SG_TIMEOUT : SP_SG_FEASIBLE;
    }
  } else {
    res->status = out_of_time(s) ? SP_SG_TIMEOUT : SP_SG_UNKNOWN;
  }
  if (res->has_plan && res->bound != INT64_MIN)
    res->gap = (double)(res->cost - res->bound) / (double)(res->cost > 1 ? res->cost : 1);
  else
    res->gap = res->has_plan ? 1.0 : 0.0;
  if (res->status == SP_SG_OPTIMAL) res->gap = 0;
  return SP_OK;
}

/* The costs of any plan (the most expensive allowed entry of every node and edge, summed in
 * 128 bits) stay below SP_SG_FORBIDDEN: else a plan's total could not be told apart from one
 * using a forbidden entry, and a valid plan would be reported infeasible. SP_ELIMIT names the
 * sum. */
static int check_cost_sum(const sp_sg *g, sp_err *err) {
  __int128 sum = 0;
  for (int i = 0; i < g->nnodes; i++) {
    int64_t mx = 0;
    for (int k = 0; k < g->nodes[i].nstrat; k++)
      if (g->nodes[i].costs[k] < SP_SG_FORBIDDEN && g->nodes[i].costs[k] > mx)
        mx = g->nodes[i].costs[k];
    sum += mx;
  }
  for (int e = 0; e < g->nedges; e++) {
    const sp_sg_edge *ed = &g->edges[e];
    int64_t n = (int64_t)g->nodes[ed->a].nstrat * g->nodes[ed->b].nstrat, mx = 0;
    for (int64_t q = 0; q < n; q++)
      if (ed->costs[q] < SP_SG_FORBIDDEN && ed->costs[q] > mx) mx = ed->costs[q];
    sum += mx;
  }
  if (sum < SP_SG_FORBIDDEN) return SP_OK;
  return sp_err_set(err, SP_ELIMIT, "strategy graph: the costs of one plan can add up to %.4g, "
                    "not below the %.4g that marks a forbidden choice (scale the costs down)",
                    (double)sum, (double)SP_SG_FORBIDDEN);
}

/* The options a solve cannot start with: a gap outside [0, 1), a time limit that is NaN. */
static int check_opts(const sp_sg_opts *opts, sp_err *err) {
  if (opts->gap < 0 || opts->gap >= 1 || isnan(opts->gap))
    return sp_err_set(err, SP_EINVAL, "gap %g is outside [0, 1)", opts->gap);
  if (isnan(opts->time_limit))
    return sp_err_set(err, SP_EINVAL, "the time limit is not a number");
  return SP_OK;
}

/* Step 1 when the reduction proved the model infeasible: the result says so, and the
 * progress callback hears why. */
static int finish_infeasible(solver *s, sp_err *err) {
  s->res->stats.t_reduce = sp_clock_now() - s->t_start;
  int rc = finish(s, false, true, err);
  if (s->o->progress) {
    sp_sg_progress pr = {.seconds = sp_clock_now() - s->t_start, .phase = "reduce",
                         .bound = INT64_MIN, .note = s->m->why};
    s->o->progress(s->o->progress_ctx, &pr);
  }
  return rc;
}

/* Step 1 on a feasible model: the reduced problem, its size in the statistics, and the
 * trivial lower bound as the first bound. */
static int build_problem(solver *s, sp_err *err) {
  sp_sg_result *res = s->res;
  int rc = sp_sg_prob_build(s->m, &s->p, err);
  if (rc != SP_OK) return rc;
  res->stats.red_nodes = s->p->n;
  res->stats.red_edges = s->p->m;
  for (int i = 0; i < s->p->n; i++) res->stats.red_strategies += s->p->k[i];
  for (int e = 0; e < s->p->m; e++)
    res->stats.red_pairs += (int64_t)s->p->k[s->p->ea[e]] * s->p->k[s->p->eb[e]];
  res->stats.t_reduce = sp_clock_now() - s->t_start;
  int *all = calloc((size_t)s->p->n + 1, sizeof(int)); /* one component: everything */
  if (!all) return sp_err_set(err, SP_ENOMEM, "out of memory");
  s->bound = (int64_t)ceil(trivial_bound(s->p, all, 0)) + s->p->offset;
  free(all);
  return SP_OK;
}

/* Work budgets scale with the model: the first round of perturbation is short and
 * deterministic; the last one runs to the deadline when there is one. */
static void set_budgets(solver *s) {
  const sp_sg_opts *opts = s->o;
  int64_t size = s->res->stats.red_strategies + s->res->stats.red_pairs + 1;
  s->size = size;
  s->work_limit = opts->work_limit > 0 ? opts->work_limit
                  : opts->time_limit > 0 ? INT64_MAX / 4
                  : size * 20000 < 1000000 ? 1000000
                  : size * 20000 > DEFAULT_WORK_LIMIT ? DEFAULT_WORK_LIMIT : size * 20000;
  s->first_round = size * 500 + 100000;
  if (s->first_round > s->work_limit / 8) s->first_round = s->work_limit / 8;
}

static void report_reduction(solver *s, const sg_reduce_stats *rs) {
  char note[160];
  snprintf(note, sizeof note, "%d nodes, %d edges left of %d, %d (offset %lld; %d merged, "
           "%lld dominated strategies)", s->p->n, s->p->m, s->g->nnodes, s->g->nedges,
           (long long)s->p->offset, rs->merged, (long long)rs->dominated);
  report(s, "reduce", note);
}

/* The heuristic, seeded with the caller's plan when there is one (a warm start: the first
 * incumbent is no worse than it). */
static int start_heuristic(solver *s, sp_err *err) {
  const sp_sg_opts *opts = s->o;
  if (sp_sg_heur_new(s->p, opts->seed, &s->h) != SP_OK)
    return sp_err_set(err, SP_ENOMEM, "out of memory in the heuristic");
  sp_sg_heur_set_callback(s->h, on_incumbent, s);
  sp_sg_heur_set_ctl(s->h, opts->ctl);
  if (opts->on_snapshot) sp_sg_heur_set_poll(s->h, poll_snapshot, s);
  if (opts->incumbent) {
    int *mplan = malloc(sizeof(int) * ((size_t)s->g->nnodes + 1));
    int *cplan = malloc(sizeof(int) * ((size_t)s->p->n + 1));
    if (mplan && cplan) {
      sp_sg_model_restrict(s->m, opts->incumbent, mplan);
      for (int i = 0; i < s->p->n; i++) cplan[i] = mplan[s->p->id[i]];
      sp_sg_heur_seed(s->h, cplan);
    }
    free(mplan);
    free(cplan);
  }
  return SP_OK;
}

/* Step 2: the greedy plan, then (unless the heuristic is off) local search, the Lagrangian
 * rounds and the first, work-bounded round of perturbation. */
static int first_incumbent(solver *s, sp_err *err) {
  const sp_sg_opts *opts = s->o;
  double t_h = sp_clock_now();
  double h_deadline = s->deadline > 0 ? s->t_start + opts->time_limit * 0.15 : phase_end(s, 1);
  sp_sg_heur_greedy(s->h, h_deadline);
  if (!opts->no_heuristic) {
    sp_sg_heur_descend(s->h, s->work_limit / 4, h_deadline);
    double lg_end = phase_end(s, 0.4);
    int rc;
    if (s->p->n > 0 && (rc = run_lagrange(s, s->size, LAGRANGE_ROUNDS, lg_end)) != SP_OK)
      return sp_err_set(err, rc, "out of memory in the Lagrangian relaxation");
    double ils_end = phase_end(s, 0.2);
    if (!incumbent_proved(s)) sp_sg_heur_improve(s->h, s->first_round, ils_end);
  }
  s->res->stats.t_heuristic = sp_clock_now() - t_h;
  return SP_OK;
}

/* Step 4: with a deadline, more Lagrangian rounds first (a better bound, and new starts);
 * then perturbation to the end, and when the caller's deadline moved later meanwhile, on to
 * the new one. */
static int keep_improving(solver *s, sp_err *err) {
  if (s->deadline > 0 && s->dual) {
    double lg_end = phase_end(s, 0.3);
    int rc = run_lagrange(s, s->size, LAGRANGE_MORE_ROUNDS, lg_end);
    if (rc != SP_OK) return sp_err_set(err, rc, "out of memory in the Lagrangian relaxation");
  }
  double t2 = sp_clock_now();
  for (;;) {
    double end = solve_end(s);
    int64_t left = s->work_limit - sp_sg_heur_work(s->h);
    if (left <= 0 || sp_run_ctl_cancelled(s->o->ctl)) break;
    sp_sg_heur_improve(s->h, left, end);
    poll_snapshot(s);
    double later = solve_end(s);
    if (!(end > 0 && later > end && sp_clock_now() < later) || incumbent_proved(s)) break;
  }
  s->res->stats.t_heuristic += sp_clock_now() - t2;
  return SP_OK;
}

/* Steps 2 to 4 on the reduced problem; then step 5, the result. */
static int search(solver *s, const sg_reduce_stats *rs, sp_err *err) {
  const sp_sg_opts *opts = s->o;
  bool proved = false, infeasible = false;
  int rc;
  set_budgets(s);
  report_reduction(s, rs);
  if ((rc = start_heuristic(s, err)) != SP_OK || (rc = first_incumbent(s, err)) != SP_OK)
    return rc;
  poll_snapshot(s);
  /* 3. integer program */
  if (incumbent_proved(s)) proved = true;
  if (!proved && !opts->no_ilp && s->p->n > 0 && !out_of_time(s)) {
    double ilp_end = s->deadline > 0 ? solve_end(s) - 0.05 * opts->time_limit : 0;
    if ((rc = run_ilp(s, ilp_end, &proved, &infeasible, err)) != SP_OK) return rc;
  }
  if (s->p->n == 0) proved = true;
  poll_snapshot(s);
  int64_t hc;
  if (!proved && !infeasible && !opts->no_heuristic && sp_sg_heur_best(s->h, &hc) &&
      hc + s->p->offset > s->bound && !out_of_time(s) && (rc = keep_improving(s, err)) != SP_OK)
    return rc;
  s->res->stats.heuristic_work = sp_sg_heur_work(s->h);
  return finish(s, proved, infeasible, err);
}

int sp_sg_solve(const sp_sg *g, const sp_sg_opts *opts, sp_sg_result *res, sp_err *err) {
  sp_sg_opts defaults;
  if (!opts) {
    sp_sg_opts_init(&defaults);
    opts = &defaults;
  }
  memset(res, 0, sizeof *res);
  res->bound = INT64_MIN;
  int rc = check_opts(opts, err);
  if (rc == SP_OK) rc = check_cost_sum(g, err);
  if (rc != SP_OK) return rc;
  solver s = {.g = g, .o = opts, .res = res, .t_start = sp_clock_now(), .bound = INT64_MIN,
              .best_reported = INT64_MAX};
  s.deadline = opts->time_limit > 0 ? s.t_start + opts->time_limit : 0;
  res->stats.nodes = g->nnodes;
  res->stats.edges = g->nedges;
  rc = sp_sg_model_build(g, &s.m, err);
  if (rc != SP_OK) return rc;
  /* 1. reduce (exact; may prove infeasibility) */
  sg_reduce_stats rs;
  memset(&rs, 0, sizeof rs);
  if (!opts->no_reduce && (rc = sp_sg_reduce(s.m, &rs, err)) != SP_OK) goto done;
  res->stats.merged = rs.merged;
  res->stats.dominated = rs.dominated;
  if (s.m->infeasible)
    rc = finish_infeasible(&s, err);
  else if ((rc = build_problem(&s, err)) == SP_OK)
    rc = search(&s, &rs, err);
done:
  res->stats.seconds = sp_clock_now() - s.t_start;
  sp_sg_heur_free(s.h);
  sp_sg_model_free(s.m);
  if (s.have_excess) sp_sg_excess_free(&s.excess);
  sp_sg_dual_free(s.dual);
  if (s.have_rows) sp_sg_rows_free(&s.rows);
  if (rc != SP_OK) sp_sg_result_free(res);
  return rc;
}

int sp_sg_write_lp(const sp_sg *g, bool reduced, const char *path, sp_err *err) {
  sg_model *m = NULL;
  sg_prob *p = NULL;
  sg_ilp *q = NULL;
  int rc = sp_sg_model_build(g, &m, err);
  if (rc != SP_OK) return rc;
  if (reduced && (rc = sp_sg_reduce(m, NULL, err)) != SP_OK) goto done;
  if (m->infeasible) {
    rc = sp_err_set(err, SP_EINVAL, "no LP written: the problem is infeasible (%s)", m->why);
    goto done;
  }
  if ((rc = sp_sg_prob_build(m, &p, err)) != SP_OK) goto done;
  if ((rc = sp_sg_ilp_build(p, NULL, 0, !reduced, 0, INT64_MAX, NULL, &q, err)) != SP_OK)
    goto done;
  rc = sp_sg_ilp_write_lp(q, p->offset, path, err);
done:
  sp_sg_ilp_free(q);
  sp_sg_ilp_release_env();
  sp_sg_model_free(m);
  return rc;
}
